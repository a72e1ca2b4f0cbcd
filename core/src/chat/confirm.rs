//! Confirmations: a person's approval bound to the SHA-256 of one exact operation and its
//! canonical arguments, usable once.
//!
//! Binding the approval to a hash (not to "the pending thing", not to the model's word) is what
//! makes "changed arguments need a new confirmation" hold: the executor recomputes the hash of the
//! call it is about to send, and the store consumes an approved confirmation with that hash in the
//! same transaction that records the execution (`Store::begin_execution`), so a confirmation
//! cannot be used twice even by two racing requests. Canonical JSON sorts object keys and drops
//! whitespace, so `{"b":1,"a":2}` and `{"a":2,"b":1}` hash the same; array order is kept, so the
//! same ids in another order are another call.
//!
//! A *group* confirmation covers several calls of one operation that one turn proposed and that
//! together touch more items than a call may without a person (`policy::turn_demand`): its
//! `arguments` are a JSON array of [`GroupedCall`]s (an operation's own arguments are always an
//! object, so the shape cannot be mistaken), its hash binds every call's id and arguments, and it
//! is consumed once, before the first of its calls runs (`Store::consume_confirmation`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::manifest::Operation;

pub use tessera_store::canonical_json::canonical_json;
pub use tessera_store::records::chat::confirm::*;

/// One call of a group confirmation: the tool-call id its result goes to, and its arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupedCall {
    /// The model's tool-call id.
    pub call_id: String,
    /// The call's exact arguments.
    pub arguments: Value,
}

impl GroupedCall {
    /// The call as the model proposed it: this id and arguments, of `operation`.
    #[must_use]
    pub fn tool_call(&self, operation: &str) -> crate::llm::ToolCall {
        crate::llm::ToolCall::new(self.call_id.clone(), operation, self.arguments.clone())
    }
}

/// The arguments a group confirmation stores for `calls`: the calls, in the model's order.
#[must_use]
pub fn group_arguments(calls: &[GroupedCall]) -> Value {
    Value::Array(
        calls
            .iter()
            .map(|call| serde_json::json!({"call_id": call.call_id, "arguments": call.arguments}))
            .collect(),
    )
}

/// The calls of a group confirmation's `arguments`; `None` for a confirmation of one call.
#[must_use]
pub fn grouped_calls(arguments: &Value) -> Option<Vec<GroupedCall>> {
    let calls = arguments.as_array()?;
    calls
        .iter()
        .map(|call| serde_json::from_value(call.clone()).ok())
        .collect()
}

/// The ids of the items a confirmation's call (or every call of a group) touches, in call order.
#[must_use]
pub fn touched_ids(operation: &Operation, arguments: &Value) -> Vec<String> {
    match grouped_calls(arguments) {
        Some(calls) => calls
            .iter()
            .flat_map(|call| operation.item_ids(&call.arguments))
            .collect(),
        None => operation.item_ids(arguments),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use sha2::{Digest as _, Sha256};

    use super::*;

    #[test]
    fn key_order_does_not_change_the_hash_but_values_and_array_order_do() {
        let base = operation_hash(
            "bulkDeleteItems",
            &json!({"ids": ["a", "b"], "why": {"y": 1, "x": 2}}),
        );
        assert_eq!(
            base,
            operation_hash(
                "bulkDeleteItems",
                &json!({"why": {"x": 2, "y": 1}, "ids": ["a", "b"]})
            )
        );
        assert_ne!(
            base,
            operation_hash(
                "bulkDeleteItems",
                &json!({"ids": ["b", "a"], "why": {"y": 1, "x": 2}})
            )
        );
        assert_ne!(
            base,
            operation_hash(
                "bulkDeleteItems",
                &json!({"ids": ["a", "b", "c"], "why": {"y": 1, "x": 2}})
            )
        );
        assert_ne!(
            base,
            operation_hash(
                "bulkUpdateItems",
                &json!({"ids": ["a", "b"], "why": {"y": 1, "x": 2}})
            )
        );
        assert_eq!(base.0.len(), 64);
    }

    #[test]
    fn the_hash_is_stable_across_releases() {
        // Changing the hash input format would strand every pending confirmation: bump the
        // version line instead, and update this value on purpose.
        assert_eq!(
            operation_hash("bulkDeleteItems", &json!({"ids": ["item-0001"]})).short(),
            operation_hash("bulkDeleteItems", &json!({"ids": ["item-0001"]})).short()
        );
        let expected = {
            let mut hasher = Sha256::new();
            hasher.update(b"tessera.chat.operation.v1\nbulkDeleteItems\n{\"ids\":[\"item-0001\"]}");
            hex::encode(hasher.finalize())
        };
        assert_eq!(
            operation_hash("bulkDeleteItems", &json!({"ids": ["item-0001"]})).0,
            expected
        );
    }
}
