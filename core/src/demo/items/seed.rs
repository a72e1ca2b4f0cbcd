//! The ~250 realistic demo items seeded on first start, spread over the last four months.
//!
//! The set is generated from a fixed random seed relative to "now", so every fresh database has
//! the same shape (about 40 % completed, a few dozen completed last month, 250 in all) and "delete
//! all completed items from last month" always has something to find.

use rand::{rngs::StdRng, Rng as _, SeedableRng as _};

use super::model::{Item, ItemId, ItemStatus, Priority};
use crate::util::dates::CivilDate;

/// How many items a fresh demo site has.
pub const SEED_COUNT: usize = 250;

const DAY_MS: i64 = 86_400_000;

const VERBS: [&str; 20] = [
    "Review",
    "Update",
    "Fix",
    "Draft",
    "Renew",
    "Migrate",
    "Archive",
    "Test",
    "Document",
    "Plan",
    "Schedule",
    "Audit",
    "Refactor",
    "Prepare",
    "Clean up",
    "Investigate",
    "Approve",
    "Publish",
    "Benchmark",
    "Triage",
];

const OBJECTS: [&str; 24] = [
    "the onboarding checklist",
    "the Q3 budget",
    "login timeout on mobile",
    "the TLS certificate for api.example.com",
    "the customer newsletter",
    "the billing export",
    "the staging database",
    "the accessibility report",
    "the vendor contract with Acme",
    "the incident runbook",
    "the search index rebuild",
    "the quarterly roadmap",
    "the password reset emails",
    "the invoice PDF layout",
    "the CSV import for leads",
    "the status page copy",
    "the backup retention policy",
    "the pricing page",
    "the support macros",
    "the GDPR data request",
    "the release notes for 2.4",
    "the flaky checkout test",
    "the office move plan",
    "the team offsite agenda",
];

const ASSIGNEES: [&str; 6] = ["ana", "ben", "chloe", "dev", "emma", "farid"];

/// The seed items for a database created at `now_ms`.
#[must_use]
pub fn seed_items(now_ms: i64) -> Vec<Item> {
    let mut rng = StdRng::seed_from_u64(0x7e55_e7a5);
    (1..=SEED_COUNT)
        .map(|index| {
            let verb = VERBS[rng.gen_range(0..VERBS.len())];
            let object = OBJECTS[rng.gen_range(0..OBJECTS.len())];
            let status = match rng.gen_range(0..100) {
                0..=39 => ItemStatus::Completed,
                40..=74 => ItemStatus::Open,
                _ => ItemStatus::InProgress,
            };
            let priority = match rng.gen_range(0..10) {
                0..=3 => Priority::Low,
                4..=7 => Priority::Medium,
                _ => Priority::High,
            };
            let updated_at_ms = now_ms - rng.gen_range(DAY_MS / 2..120 * DAY_MS);
            let created_at_ms = updated_at_ms - rng.gen_range(0..30 * DAY_MS);
            let due_date = rng
                .gen_bool(0.6)
                .then(|| CivilDate::from_unix_ms(created_at_ms).add_days(rng.gen_range(3..60)));
            let assignee = rng
                .gen_bool(0.7)
                .then(|| ASSIGNEES[rng.gen_range(0..ASSIGNEES.len())].to_owned());
            Item {
                id: ItemId(format!("item-{index:04}")),
                title: format!("{verb} {object}"),
                description: format!("{verb} {object} and note anything that needs a follow-up."),
                status,
                priority,
                assignee,
                due_date,
                created_at_ms,
                updated_at_ms,
                completed_at_ms: (status == ItemStatus::Completed).then_some(updated_at_ms),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_has_completed_items_last_month_and_is_deterministic() {
        let now = CivilDate {
            year: 2026,
            month: 11,
            day: 23,
        }
        .start_unix_ms();
        let items = seed_items(now);
        assert_eq!(items.len(), SEED_COUNT);
        assert_eq!(items, seed_items(now));
        let today = CivilDate::from_unix_ms(now);
        let last_month =
            today.first_of_previous_month().start_unix_ms()..today.first_of_month().start_unix_ms();
        let completed_last_month = items
            .iter()
            .filter(|item| {
                item.status == ItemStatus::Completed && last_month.contains(&item.updated_at_ms)
            })
            .count();
        assert!(
            (10..=60).contains(&completed_last_month),
            "{completed_last_month} completed last month"
        );
    }
}
