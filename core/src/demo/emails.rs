//! Forty realistic, made-up emails for the email-digest demo: deterministic, no network.

use serde::{Deserialize, Serialize};

/// One email of the demo inbox.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Email {
    /// Stable id, used as the value of the archive selection.
    pub id: String,
    /// Sender address.
    pub from: String,
    /// Subject line.
    pub subject: String,
    /// Newsletter, receipt, notification, personal or work.
    pub category: String,
    /// Received date, `YYYY-MM-DD`.
    pub received: String,
    /// First words of the body.
    pub snippet: String,
}

const SENDERS: [(&str, &str, &[&str]); 5] = [
    (
        "newsletter",
        "news@",
        &[
            "Weekly digest: {} new posts",
            "The {} edition is here",
            "What changed in {} this month",
        ],
    ),
    (
        "receipt",
        "billing@",
        &[
            "Your receipt #{} ",
            "Invoice {} is paid",
            "Order {} has shipped",
        ],
    ),
    (
        "notification",
        "noreply@",
        &[
            "{} new sign-ins to your account",
            "Reminder: {} tasks due",
            "Your report {} is ready",
        ],
    ),
    (
        "personal",
        "friend@",
        &["Dinner on the {}th?", "Photos from {}", "Re: plans for {}"],
    ),
    (
        "work",
        "team@",
        &[
            "Standup notes {}",
            "Review requested on #{}",
            "Q{} planning doc",
        ],
    ),
];

const DOMAINS: [&str; 8] = [
    "example.com",
    "mail.example.org",
    "shop.example.net",
    "updates.example.io",
    "acme.test",
    "globex.test",
    "initech.test",
    "hooli.test",
];

const SNIPPETS: [&str; 6] = [
    "Here is a quick summary of what happened since we last wrote.",
    "Thanks for your order. The details are below for your records.",
    "We noticed some activity and wanted to let you know.",
    "Let me know if that works for you, or suggest another time.",
    "Please take a look before Thursday; comments inline.",
    "No action is needed; this message is for your information.",
];

/// The demo inbox, newest first.
#[must_use]
pub fn inbox() -> Vec<Email> {
    (0..40_usize)
        .map(|index| {
            let (category, local, subjects) = SENDERS[index % SENDERS.len()];
            let subject = subjects[(index / SENDERS.len()) % subjects.len()]
                .replace("{}", &(index * 7 % 90 + 10).to_string());
            let day = 28 - (index % 28);
            let month = if index < 28 { 10 } else { 9 };
            Email {
                id: format!("m{:02}", index + 1),
                from: format!("{local}{}", DOMAINS[index % DOMAINS.len()]),
                subject: subject.trim().to_owned(),
                category: category.to_owned(),
                received: format!("2026-{month:02}-{day:02}"),
                snippet: SNIPPETS[index % SNIPPETS.len()].to_owned(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inbox_has_forty_distinct_emails_in_every_category() {
        let inbox = inbox();
        assert_eq!(inbox.len(), 40);
        let mut ids: Vec<&str> = inbox.iter().map(|email| email.id.as_str()).collect();
        ids.dedup();
        assert_eq!(ids.len(), 40);
        for category in ["newsletter", "receipt", "notification", "personal", "work"] {
            assert_eq!(
                inbox
                    .iter()
                    .filter(|email| email.category == category)
                    .count(),
                8
            );
        }
    }
}
