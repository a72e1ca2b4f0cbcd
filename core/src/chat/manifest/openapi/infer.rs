//! What the method, the path and the parameters imply about an operation (its tags, its batch
//! argument), and what the operations settle together once all are imported (which batches can
//! be previewed, which field of a read's rows is the id).

use std::collections::BTreeSet;

use serde_json::Value;

use super::names::placeholders;
use crate::chat::manifest::{load::RawOperation, operation::HttpMethod};

/// The tags the method and the parameters imply, and the ids argument when it is a batch.
pub(super) fn infer_tags(
    method: HttpMethod,
    path: &str,
    parameters: &Value,
) -> (Option<String>, Vec<String>) {
    let properties = parameters.get("properties").and_then(Value::as_object);
    let has_query = properties.is_some_and(|properties| {
        properties
            .keys()
            .any(|key| !placeholders(path).contains(key))
    });
    let mut tags: Vec<&str> = match method {
        HttpMethod::Get => {
            let mut tags = vec!["readonly", "idempotent"];
            tags.push(if path.ends_with('}') { "read" } else { "list" });
            if has_query {
                tags.push("filterable");
            }
            tags
        }
        HttpMethod::Post => vec!["mutating", "create"],
        HttpMethod::Put => vec!["mutating", "update", "idempotent"],
        HttpMethod::Patch => vec!["mutating", "update", "patch"],
        HttpMethod::Delete => vec!["mutating", "delete", "confirmation-required", "idempotent"],
    };
    let ids = (method != HttpMethod::Get)
        .then(|| {
            properties.and_then(|properties| {
                properties
                    .iter()
                    .find(|(key, schema)| {
                        (key.as_str() == "ids" || key.ends_with("_ids") || key.ends_with("Ids"))
                            && schema.get("type").and_then(Value::as_str) == Some("array")
                            && schema
                                .pointer("/items/type")
                                .and_then(Value::as_str)
                                .is_some_and(|kind| matches!(kind, "string" | "integer"))
                    })
                    .map(|(key, _)| key.clone())
            })
        })
        .flatten();
    if ids.is_some() {
        tags.push("batch");
    }
    (ids, tags.into_iter().map(str::to_owned).collect())
}

/// An inferred batch needs a readonly filterable operation of its entity to preview it; without
/// one it is imported as an ordinary call rather than failing the whole document.
pub(super) fn settle_batches(operations: &mut [RawOperation]) {
    let previewable: BTreeSet<String> = operations
        .iter()
        .filter(|operation| {
            operation.tags.iter().any(|tag| tag == "readonly")
                && operation.tags.iter().any(|tag| tag == "filterable")
        })
        .map(|operation| operation.entity.clone())
        .collect();
    for operation in operations.iter_mut() {
        let batch = operation.tags.iter().any(|tag| tag == "batch");
        if batch
            && operation.tags.iter().any(|tag| tag == "mutating")
            && !previewable.contains(&operation.entity)
        {
            operation.tags.retain(|tag| tag != "batch");
            operation.max_batch_size = None;
            operation.batch_argument = None;
        }
    }
}

/// A read's rows are matched to the items a change touches by an id field. The change names its
/// item by a path argument (`issue_number`, `noteId`); the read's rows carry it as that name or
/// with the entity's prefix dropped (`number`, `id`). Where neither is a field of the rows (or
/// the document does not describe them), `id` stays the default.
pub(super) fn settle_id_fields(operations: &mut [RawOperation], row_fields: &[Vec<String>]) {
    let arguments: Vec<(String, String)> = operations
        .iter()
        .filter_map(|operation| {
            operation
                .id_argument
                .clone()
                .map(|argument| (operation.entity.clone(), argument))
        })
        .collect();
    for (operation, fields) in operations.iter_mut().zip(row_fields) {
        if operation.id_field.is_some() || !operation.tags.iter().any(|tag| tag == "readonly") {
            continue;
        }
        let found = arguments
            .iter()
            .filter(|(entity, _)| entity == &operation.entity)
            .flat_map(|(_, argument)| id_spellings(argument))
            .find(|candidate| fields.contains(candidate));
        if found.as_deref().is_some_and(|field| field != "id") {
            operation.id_field = found;
        }
    }
}

/// `issue_number` → `issue_number`, `number`; `noteId` → `noteId`, `id`.
fn id_spellings(argument: &str) -> Vec<String> {
    let mut spellings = vec![argument.to_owned()];
    if let Some((_, rest)) = argument.split_once('_') {
        spellings.push(rest.to_owned());
    }
    if let Some(position) = argument.rfind(|character: char| character.is_ascii_uppercase()) {
        if position > 0 {
            spellings.push(argument[position..].to_ascii_lowercase());
        }
    }
    spellings
}
