//! The policy table: what code demands before an operation runs, derived from its tags alone.
//!
//! The model proposes a call; [`evaluate`] decides, from the manifest and the session's state and
//! never from the prompt, whether it may run now, needs a preview first, or needs a person's
//! confirmation. The rules (each has a row in this file's table test):
//!
//! | rule | demand |
//! |---|---|
//! | tagged `delete` | confirmation |
//! | `mutating` + `batch` (or a declared / `preview-recommended` preview) | a preview by the declared or discovered readonly filterable operation of the same entity, showing every item the call touches; then confirmation |
//! | touches more than [`CONFIRM_ABOVE_ITEMS`] items | confirmation |
//! | tagged `confirmation-required` | confirmation, every time, whatever grants exist |
//! | one call with more ids than `max_batch_size` | chunks of at most `max_batch_size` |
//! | a turn's calls of one operation touch more than [`CONFIRM_ABOVE_ITEMS`] items together | one confirmation for all of those calls (a group), before any of them runs |
//! | a turn's calls of one operation (more than one) add up beyond `max_batch_size` | refused, nothing sent |
//!
//! A grant ("always for this operation", "for this session") waives confirmation except for
//! `confirmation-required`; it never waives a preview. Readonly calls always run.
//!
//! **Counted per turn, not per call.** [`evaluate`] judges one call; [`turn_demand`] judges what
//! the calls of one operation add up to in a turn (the person's message and the model loop it
//! starts, or the loop an approval resumes), counting the calls that already ran in it
//! ([`TurnTotals`]) and those the model proposes together. So 200 single-item updates ask once,
//! like one 200-item update, and nothing runs before the answer. One call above `max_batch_size`
//! is still chunked: it is one request, shown whole in one confirmation with its chunk plan,
//! progress and stop between chunks. Several calls adding up beyond it would pass the maximum
//! without any of that, so they are refused and the model is told to send one call.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::manifest::{Manifest, Operation, Tag};

pub use tessera_store::records::chat::policy::*;

/// A preview that must happen before the call may run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreviewDemand {
    /// The operation to preview with.
    pub operation: String,
    /// The ids the call touches that no preview in this thread has shown.
    pub unshown_ids: Vec<String>,
}

/// How a call's items are split into requests.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkPlan {
    /// The size of each request, in order; one entry for an unchunked call.
    pub sizes: Vec<usize>,
}

impl ChunkPlan {
    /// Whether the call is split at all.
    #[must_use]
    pub fn is_chunked(&self) -> bool {
        self.sizes.len() > 1
    }
}

/// What the call is, for the header and the audit trail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallRole {
    /// Reads.
    Read,
    /// Changes state.
    Mutation,
}

/// The policy's answer for one proposed call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Run it now.
    Allow {
        /// Read or mutation.
        role: CallRole,
        /// The requests to send.
        chunks: ChunkPlan,
        /// A grant waived these confirmation reasons (empty when none applied).
        waived_by_grant: Vec<ConfirmReason>,
    },
    /// Refuse it until a preview has shown the items.
    NeedsPreview(PreviewDemand),
    /// Ask the person first.
    NeedsConfirmation {
        /// Why.
        reasons: Vec<ConfirmReason>,
        /// The requests it will send once approved.
        chunks: ChunkPlan,
    },
}

/// The session state the policy reads.
#[derive(Clone, Copy, Debug)]
pub struct PolicyContext<'a> {
    /// Ids shown by readonly calls of this entity in the current thread.
    pub shown_ids: &'a BTreeSet<String>,
    /// The person's grants.
    pub grants: &'a Grants,
    /// Whether an approved, unused confirmation for this exact call exists.
    pub confirmed: bool,
}

/// What one operation's calls touched so far in a turn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OperationTotal {
    /// Calls that ran.
    pub calls: usize,
    /// Items they touched.
    pub items: usize,
    /// Items touched by calls no approval (confirmation or grant) stood behind.
    pub unapproved_items: usize,
}

/// The items each mutating operation's calls touched in one turn.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TurnTotals(BTreeMap<String, OperationTotal>);

impl TurnTotals {
    /// Counts a call of `operation` touching `items` that began to run; `approved` when a
    /// confirmation or a grant stood behind it.
    pub fn record(&mut self, operation: &str, items: usize, approved: bool) {
        let total = self.0.entry(operation.to_owned()).or_default();
        total.calls += 1;
        total.items += items;
        if !approved {
            total.unapproved_items += items;
        }
    }

    /// What `operation`'s calls touched so far.
    #[must_use]
    pub fn of(&self, operation: &str) -> OperationTotal {
        self.0.get(operation).copied().unwrap_or_default()
    }
}

/// What code demands of the calls of one operation a model reply proposes together, when it
/// answers them together rather than each through the gate on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupDemand {
    /// Refused, every one: together with this turn's earlier calls they exceed `max_batch_size`.
    OverMaximum {
        /// Calls in the turn, counting these.
        calls: usize,
        /// Items they touch together.
        items: usize,
        /// The operation's `max_batch_size`.
        max: usize,
    },
    /// One confirmation for all of them before any runs.
    Confirm {
        /// Items touched together by these calls and this turn's unapproved earlier ones.
        count: usize,
    },
}

/// Judges the calls of `operation` a model reply proposes together (`proposed`: each call's
/// arguments), after `earlier` in the same turn; see the module doc. `None`: each call goes
/// through the gate on its own.
#[must_use]
pub fn turn_demand(
    operation: &Operation,
    earlier: OperationTotal,
    proposed: &[&Value],
    grants: &Grants,
) -> Option<GroupDemand> {
    if !operation.is_mutating() || proposed.is_empty() {
        return None;
    }
    let proposed_items: usize = proposed
        .iter()
        .map(|arguments| operation.item_ids(arguments).len())
        .sum();
    let calls = earlier.calls + proposed.len();
    let items = earlier.items + proposed_items;
    if let Some(max) = operation.max_batch_size {
        if calls > 1 && items > max {
            return Some(GroupDemand::OverMaximum { calls, items, max });
        }
    }
    // A lone call with nothing unapproved before it is [`evaluate`]'s to judge.
    let several = proposed.len() > 1 || earlier.unapproved_items > 0;
    let count = earlier.unapproved_items + proposed_items;
    let granted = grants.covers(&operation.name) && !operation.has(Tag::ConfirmationRequired);
    if several && count > CONFIRM_ABOVE_ITEMS && !granted {
        Some(GroupDemand::Confirm { count })
    } else {
        None
    }
}

/// The confirmation reasons that apply to `operation` called with `arguments`.
#[must_use]
pub fn confirmation_reasons(operation: &Operation, arguments: &Value) -> Vec<ConfirmReason> {
    let mut reasons = Vec::new();
    if operation.has(Tag::Delete) {
        reasons.push(ConfirmReason::Delete);
    }
    if operation.is_mutating() && operation.has(Tag::Batch) {
        reasons.push(ConfirmReason::MutatingBatch);
    }
    let count = operation.item_ids(arguments).len();
    if operation.is_mutating() && count > CONFIRM_ABOVE_ITEMS {
        reasons.push(ConfirmReason::ManyItems { count });
    }
    if operation.has(Tag::ConfirmationRequired) {
        reasons.push(ConfirmReason::ConfirmationRequired);
    }
    reasons
}

/// How the call's items are split: chunks of at most `max_batch_size` for a batch operation.
#[must_use]
pub fn chunk_plan(operation: &Operation, arguments: &Value) -> ChunkPlan {
    let count = operation.item_ids(arguments).len();
    match operation.max_batch_size {
        Some(max) if operation.has(Tag::Batch) && max > 0 && count > max => {
            let mut sizes = vec![max; count / max];
            if !count.is_multiple_of(max) {
                sizes.push(count % max);
            }
            ChunkPlan { sizes }
        }
        _ => ChunkPlan {
            sizes: vec![count.max(1)],
        },
    }
}

/// Decides what must happen before `operation` runs with `arguments` (arguments already checked
/// against its schema, the operation already inside the session's scope).
#[must_use]
pub fn evaluate(
    manifest: &Manifest,
    operation: &Operation,
    arguments: &Value,
    context: PolicyContext<'_>,
) -> Verdict {
    let chunks = chunk_plan(operation, arguments);
    let role = if operation.is_mutating() {
        CallRole::Mutation
    } else {
        CallRole::Read
    };
    if manifest.needs_preview(operation) {
        let unshown_ids: Vec<String> = operation
            .item_ids(arguments)
            .into_iter()
            .filter(|id| !context.shown_ids.contains(id))
            .collect();
        if !unshown_ids.is_empty() {
            let preview = manifest
                .preview_operation_for(operation)
                .map_or_else(String::new, |preview| preview.name.clone());
            return Verdict::NeedsPreview(PreviewDemand {
                operation: preview,
                unshown_ids,
            });
        }
    }
    let reasons = confirmation_reasons(operation, arguments);
    if reasons.is_empty() || context.confirmed {
        return Verdict::Allow {
            role,
            chunks,
            waived_by_grant: Vec::new(),
        };
    }
    let always = reasons.contains(&ConfirmReason::ConfirmationRequired);
    if !always && context.grants.covers(&operation.name) {
        return Verdict::Allow {
            role,
            chunks,
            waived_by_grant: reasons,
        };
    }
    Verdict::NeedsConfirmation { reasons, chunks }
}

/// What code demands before `operation` runs, in sentences for its tool description and `/tools`.
#[must_use]
pub fn describe(manifest: &Manifest, operation: &Operation) -> Vec<String> {
    let mut rules = Vec::new();
    if manifest.needs_preview(operation) {
        if let Some(preview) = manifest.preview_operation_for(operation) {
            rules.push(format!(
                "Code refuses it until `{}` has shown every item it touches.",
                preview.name
            ));
        }
    }
    if operation.has(Tag::ConfirmationRequired) {
        rules.push("A person must confirm every call.".to_owned());
    } else if operation.has(Tag::Delete) || (operation.is_mutating() && operation.has(Tag::Batch)) {
        rules.push("A person must confirm it.".to_owned());
    } else if operation.is_mutating() {
        rules.push(format!(
            "A person must confirm it when its calls in one turn touch more than {CONFIRM_ABOVE_ITEMS} items together."
        ));
    }
    if let (true, Some(max)) = (operation.has(Tag::Batch), operation.max_batch_size) {
        rules.push(format!(
            "Send all ids in one call; code splits batches over {max} into chunks, and refuses several calls that add up to more than {max} in one turn."
        ));
    }
    rules
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn manifest() -> Result<Manifest, super::super::manifest::ManifestError> {
        let text = json!({
            "site": "t", "base_url": "/api",
            "operations": [
                {"name": "search", "description": "", "entity": "items", "tags": ["readonly", "filterable", "search"],
                 "http": {"method": "GET", "path": "/items"}, "parameters": {"type": "object", "properties": {}}},
                {"name": "getOne", "description": "", "entity": "items", "tags": ["readonly", "read"],
                 "http": {"method": "GET", "path": "/items/{id}"}, "parameters": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}},
                {"name": "deleteOne", "description": "", "entity": "items", "tags": ["mutating", "delete"],
                 "http": {"method": "DELETE", "path": "/items/{id}"}, "parameters": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}},
                {"name": "updateOne", "description": "", "entity": "items", "tags": ["mutating", "update"],
                 "http": {"method": "PATCH", "path": "/items/{id}"}, "parameters": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}},
                {"name": "bulkUpdate", "description": "", "entity": "items", "tags": ["mutating", "batch", "update", "rate-limited"], "max_batch_size": 100,
                 "http": {"method": "POST", "path": "/bulk-update"}, "parameters": {"type": "object", "properties": {"ids": {"type": "array"}}}},
                {"name": "bulkDelete", "description": "", "entity": "items", "tags": ["mutating", "batch", "delete", "rate-limited"], "max_batch_size": 100,
                 "http": {"method": "POST", "path": "/bulk-delete"}, "parameters": {"type": "object", "properties": {"ids": {"type": "array"}}}},
                {"name": "tagMany", "description": "", "entity": "items", "tags": ["mutating", "update"],
                 "http": {"method": "POST", "path": "/tag"}, "parameters": {"type": "object", "properties": {"ids": {"type": "array"}}}},
                {"name": "wipe", "description": "", "entity": "items", "tags": ["mutating", "update", "confirmation-required"],
                 "http": {"method": "POST", "path": "/wipe"}, "parameters": {"type": "object", "properties": {}}},
                {"name": "exportAll", "description": "", "entity": "items", "tags": ["readonly", "list", "confirmation-required"],
                 "http": {"method": "GET", "path": "/export"}, "parameters": {"type": "object", "properties": {}}}
            ]
        })
        .to_string();
        Manifest::from_json(&text)
    }

    fn ids(count: usize) -> Vec<String> {
        (0..count).map(|index| format!("i{index}")).collect()
    }

    struct Case {
        rule: &'static str,
        operation: &'static str,
        arguments: Value,
        shown: usize,
        grants: Grants,
        confirmed: bool,
        expect: Expect,
    }

    #[derive(Debug, PartialEq)]
    enum Expect {
        Allow(Vec<usize>),
        AllowByGrant,
        Preview(&'static str, usize),
        Confirm(Vec<ConfirmReason>, Vec<usize>),
    }

    fn case(
        rule: &'static str,
        operation: &'static str,
        arguments: Value,
        shown: usize,
        expect: Expect,
    ) -> Case {
        Case {
            rule,
            operation,
            arguments,
            shown,
            grants: Grants::default(),
            confirmed: false,
            expect,
        }
    }

    /// One row per policy rule.
    #[test]
    fn the_policy_table_derives_every_demand_from_tags() -> Result<(), Box<dyn std::error::Error>> {
        let manifest = manifest()?;
        let operation_grant = Grants {
            operations: BTreeSet::from(["bulkDelete".to_owned(), "wipe".to_owned()]),
            session: false,
        };
        let session_grant = Grants {
            operations: BTreeSet::new(),
            session: true,
        };
        let mut cases = vec![
            case(
                "readonly runs at once",
                "search",
                json!({}),
                0,
                Expect::Allow(vec![1]),
            ),
            case(
                "delete of one item needs confirmation",
                "deleteOne",
                json!({"id": "i0"}),
                0,
                Expect::Confirm(vec![ConfirmReason::Delete], vec![1]),
            ),
            case(
                "an update of one item runs at once",
                "updateOne",
                json!({"id": "i0"}),
                0,
                Expect::Allow(vec![1]),
            ),
            case(
                "a mutating batch without a preview is refused",
                "bulkUpdate",
                json!({"ids": ids(5)}),
                0,
                Expect::Preview("search", 5),
            ),
            case(
                "a mutating batch preview must show every id",
                "bulkUpdate",
                json!({"ids": ids(5)}),
                3,
                Expect::Preview("search", 2),
            ),
            case(
                "a previewed mutating batch needs confirmation",
                "bulkUpdate",
                json!({"ids": ids(5)}),
                5,
                Expect::Confirm(vec![ConfirmReason::MutatingBatch], vec![5]),
            ),
            case(
                "a previewed bulk delete of many needs confirmation for three reasons",
                "bulkDelete",
                json!({"ids": ids(23)}),
                23,
                Expect::Confirm(
                    vec![
                        ConfirmReason::Delete,
                        ConfirmReason::MutatingBatch,
                        ConfirmReason::ManyItems { count: 23 },
                    ],
                    vec![23],
                ),
            ),
            case(
                "more than ten items needs confirmation",
                "tagMany",
                json!({"ids": ids(11)}),
                0,
                Expect::Confirm(vec![ConfirmReason::ManyItems { count: 11 }], vec![11]),
            ),
            case(
                "ten items or fewer need none",
                "tagMany",
                json!({"ids": ids(10)}),
                0,
                Expect::Allow(vec![10]),
            ),
            case(
                "confirmation-required on a readonly operation still confirms",
                "exportAll",
                json!({}),
                0,
                Expect::Confirm(vec![ConfirmReason::ConfirmationRequired], vec![1]),
            ),
            case(
                "rate-limited above max_batch_size is chunked",
                "bulkUpdate",
                json!({"ids": ids(247)}),
                247,
                Expect::Confirm(
                    vec![
                        ConfirmReason::MutatingBatch,
                        ConfirmReason::ManyItems { count: 247 },
                    ],
                    vec![100, 100, 47],
                ),
            ),
            case(
                "exactly max_batch_size is one request",
                "bulkUpdate",
                json!({"ids": ids(100)}),
                100,
                Expect::Confirm(
                    vec![
                        ConfirmReason::MutatingBatch,
                        ConfirmReason::ManyItems { count: 100 },
                    ],
                    vec![100],
                ),
            ),
        ];
        cases.push(Case {
            grants: operation_grant.clone(),
            ..case(
                "an operation grant waives its confirmation",
                "bulkDelete",
                json!({"ids": ids(3)}),
                3,
                Expect::AllowByGrant,
            )
        });
        cases.push(Case {
            grants: operation_grant.clone(),
            ..case(
                "an operation grant covers only that operation",
                "bulkUpdate",
                json!({"ids": ids(3)}),
                3,
                Expect::Confirm(vec![ConfirmReason::MutatingBatch], vec![3]),
            )
        });
        cases.push(Case {
            grants: session_grant.clone(),
            ..case(
                "a session grant waives every confirmation",
                "deleteOne",
                json!({"id": "i0"}),
                0,
                Expect::AllowByGrant,
            )
        });
        cases.push(Case {
            grants: session_grant,
            ..case(
                "a grant never waives the preview",
                "bulkDelete",
                json!({"ids": ids(3)}),
                0,
                Expect::Preview("search", 3),
            )
        });
        cases.push(Case {
            grants: operation_grant,
            ..case(
                "confirmation-required ignores grants",
                "wipe",
                json!({}),
                0,
                Expect::Confirm(vec![ConfirmReason::ConfirmationRequired], vec![1]),
            )
        });
        cases.push(Case {
            confirmed: true,
            ..case(
                "an approved confirmation for the exact call lets it run",
                "bulkDelete",
                json!({"ids": ids(23)}),
                23,
                Expect::Allow(vec![23]),
            )
        });
        for case in cases {
            let operation = manifest.operation(case.operation).ok_or(case.operation)?;
            let shown: BTreeSet<String> = ids(case.shown).into_iter().collect();
            let verdict = evaluate(
                &manifest,
                operation,
                &case.arguments,
                PolicyContext {
                    shown_ids: &shown,
                    grants: &case.grants,
                    confirmed: case.confirmed,
                },
            );
            let got = match verdict {
                Verdict::Allow {
                    waived_by_grant, ..
                } if !waived_by_grant.is_empty() => Expect::AllowByGrant,
                Verdict::Allow { chunks, .. } => Expect::Allow(chunks.sizes),
                Verdict::NeedsPreview(demand) => Expect::Preview(
                    if demand.operation == "search" {
                        "search"
                    } else {
                        "other"
                    },
                    demand.unshown_ids.len(),
                ),
                Verdict::NeedsConfirmation { reasons, chunks } => {
                    Expect::Confirm(reasons, chunks.sizes)
                }
            };
            assert_eq!(got, case.expect, "{}", case.rule);
        }
        Ok(())
    }

    /// One row per way a turn's calls of one operation add up.
    #[test]
    fn a_turn_s_calls_of_one_operation_add_up() -> Result<(), Box<dyn std::error::Error>> {
        let manifest = manifest()?;
        let one = |index: usize| json!({"id": format!("i{index}")});
        let singles = |count: usize| (0..count).map(one).collect::<Vec<Value>>();
        let batch = |count: usize| json!({"ids": ids(count)});
        let nothing_before = OperationTotal::default();
        let ten_unapproved = OperationTotal {
            calls: 10,
            items: 10,
            unapproved_items: 10,
        };
        let two_hundred_approved = OperationTotal {
            calls: 1,
            items: 200,
            unapproved_items: 0,
        };
        let none = Grants::default();
        let granted = Grants {
            operations: BTreeSet::from(["updateOne".to_owned()]),
            session: false,
        };
        // (rule, operation, earlier in the turn, the reply's calls, grants, demand)
        type Case<'a> = (
            &'static str,
            &'static str,
            OperationTotal,
            Vec<Value>,
            &'a Grants,
            Option<GroupDemand>,
        );
        let cases: Vec<Case<'_>> = vec![
            (
                "200 single-item updates in one reply ask once",
                "updateOne",
                nothing_before,
                singles(200),
                &none,
                Some(GroupDemand::Confirm { count: 200 }),
            ),
            (
                "eleven single-item updates ask",
                "updateOne",
                nothing_before,
                singles(11),
                &none,
                Some(GroupDemand::Confirm { count: 11 }),
            ),
            (
                "ten single-item updates need no one",
                "updateOne",
                nothing_before,
                singles(10),
                &none,
                None,
            ),
            (
                "the eleventh item of the turn asks, in a later reply too",
                "updateOne",
                ten_unapproved,
                singles(1),
                &none,
                Some(GroupDemand::Confirm { count: 11 }),
            ),
            (
                "items a person approved are not counted again",
                "updateOne",
                two_hundred_approved,
                singles(1),
                &none,
                None,
            ),
            (
                "an operation grant waives the turn's confirmation",
                "updateOne",
                nothing_before,
                singles(200),
                &granted,
                None,
            ),
            (
                "a lone call is the per-call policy's to judge",
                "tagMany",
                nothing_before,
                vec![batch(50)],
                &none,
                None,
            ),
            (
                "one call above max_batch_size is chunked, not refused",
                "bulkUpdate",
                nothing_before,
                vec![batch(247)],
                &none,
                None,
            ),
            (
                "two calls adding up above max_batch_size are refused",
                "bulkUpdate",
                nothing_before,
                vec![batch(60), batch(60)],
                &none,
                Some(GroupDemand::OverMaximum {
                    calls: 2,
                    items: 120,
                    max: 100,
                }),
            ),
            (
                "a call taking the turn above max_batch_size is refused",
                "bulkUpdate",
                two_hundred_approved,
                vec![batch(1)],
                &none,
                Some(GroupDemand::OverMaximum {
                    calls: 2,
                    items: 201,
                    max: 100,
                }),
            ),
            (
                "reads are never counted",
                "getOne",
                nothing_before,
                singles(200),
                &none,
                None,
            ),
        ];
        for (rule, name, earlier, proposed, grants, expected) in cases {
            let operation = manifest.operation(name).ok_or(name)?;
            let proposed: Vec<&Value> = proposed.iter().collect();
            assert_eq!(
                turn_demand(operation, earlier, &proposed, grants),
                expected,
                "{rule}"
            );
        }
        Ok(())
    }

    #[test]
    fn turn_totals_keep_unapproved_items_apart() {
        let mut totals = TurnTotals::default();
        totals.record("updateOne", 1, false);
        totals.record("updateOne", 5, true);
        totals.record("deleteOne", 1, true);
        assert_eq!(
            totals.of("updateOne"),
            OperationTotal {
                calls: 2,
                items: 6,
                unapproved_items: 1
            }
        );
        assert_eq!(totals.of("bulkUpdate"), OperationTotal::default());
    }

    #[test]
    fn chunk_plans_split_at_max_batch_size() -> Result<(), Box<dyn std::error::Error>> {
        let manifest = manifest()?;
        let operation = manifest.operation("bulkDelete").ok_or("bulkDelete")?;
        for (count, sizes) in [
            (1, vec![1]),
            (100, vec![100]),
            (101, vec![100, 1]),
            (247, vec![100, 100, 47]),
            (300, vec![100, 100, 100]),
        ] {
            assert_eq!(
                chunk_plan(operation, &json!({"ids": ids(count)})).sizes,
                sizes,
                "{count}"
            );
        }
        Ok(())
    }
}
