//! Expense claims for the bulk-approval demo.

use serde::{Deserialize, Serialize};

/// One expense claim awaiting a decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// Stable id.
    pub id: String,
    /// Who claims it.
    pub employee: String,
    /// What for.
    pub description: String,
    /// Amount in euros.
    pub amount: f64,
    /// Travel, meals, equipment or training.
    pub category: String,
}

/// Eight claims: a mix a reviewer would approve and reject.
#[must_use]
pub fn claims() -> Vec<Claim> {
    let rows = [
        (
            "Ada Lovelace",
            "Train to Berlin for the customer workshop",
            189.40,
            "travel",
        ),
        (
            "Grace Hopper",
            "Team lunch after the release",
            212.00,
            "meals",
        ),
        (
            "Alan Turing",
            "Noise-cancelling headphones",
            349.99,
            "equipment",
        ),
        (
            "Katherine Johnson",
            "Conference ticket: RustConf",
            720.00,
            "training",
        ),
        (
            "Edsger Dijkstra",
            "Taxi from the airport at 2 am",
            64.20,
            "travel",
        ),
        ("Barbara Liskov", "Second monitor", 229.00, "equipment"),
        (
            "Donald Knuth",
            "Books for the reading group",
            118.35,
            "training",
        ),
        (
            "Margaret Hamilton",
            "Hotel, two nights, Munich",
            402.00,
            "travel",
        ),
    ];
    rows.iter()
        .enumerate()
        .map(|(index, (employee, description, amount, category))| Claim {
            id: format!("exp-{}", index + 101),
            employee: (*employee).to_owned(),
            description: (*description).to_owned(),
            amount: *amount,
            category: (*category).to_owned(),
        })
        .collect()
}
