//! The result view of a finished call, item by item, and its downloads (CSV and JSON).
//!
//! Code decides which failures are listed ([`enforce_result`]) and what a download contains
//! ([`result_download`]); cells are guarded against spreadsheet formulas.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use serde_json::{json, Value};
use tessera_app::{
    components::{download_body, DownloadFile, DownloadFormat},
    tree::PageTree,
};

use crate::chat::{
    audit::{Approval, Execution, ExecutionStatus},
    confirm::ConfirmationPreview,
    manifest::{id_text, Operation, Tag},
    session::SessionId,
};
use crate::{
    agent::generate::GenerationInput,
    llm::ChatModel,
    store::{Store, StoreError},
};

use super::{
    confirm::offer_downloads, counts::check_counts, generate, prompt, ChatView, ViewError, ViewKind,
};

/// The columns of a result download, in order.
pub const RESULT_COLUMNS: [&str; 4] = ["id", "title", "status", "error"];

/// What happened to one item of a finished call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ItemOutcome {
    /// The item's id.
    pub id: String,
    /// Its title, when the preview showed one.
    pub title: String,
    /// `succeeded`, `failed`, `not_sent` or `cancelled`.
    pub status: String,
    /// Why it failed or was not sent.
    pub error: String,
}

/// The per-item account of a finished execution, in call order: items of a failed request
/// carry its error, items the site reported `missing` failed as "not found", items of requests
/// never sent are `not_sent` (or `cancelled` after a stop). Never summarised: one row per item.
#[must_use]
pub fn item_outcomes(
    operation: &Operation,
    execution: &Execution,
    preview: Option<&ConfirmationPreview>,
) -> Vec<ItemOutcome> {
    let ids = operation.item_ids(&execution.arguments);
    let titles: HashMap<String, String> = preview
        .map(|preview| {
            preview
                .items
                .iter()
                .filter_map(|item| {
                    let id = id_text(item.get("id")?);
                    let title = item
                        .get("title")
                        .or_else(|| item.get("name"))
                        .and_then(Value::as_str)?;
                    Some((id, title.to_owned()))
                })
                .collect()
        })
        .unwrap_or_default();
    let result = execution.result.clone().unwrap_or(Value::Null);
    // One entry per request: (size, status, error, response).
    let requests: Vec<(usize, String, String, Value)> =
        match result.get("chunks").and_then(Value::as_array) {
            Some(chunks) => chunks
                .iter()
                .map(|chunk| {
                    (
                        chunk
                            .get("size")
                            .and_then(Value::as_u64)
                            .and_then(|size| usize::try_from(size).ok())
                            .unwrap_or(0),
                        chunk
                            .get("status")
                            .and_then(Value::as_str)
                            .unwrap_or("not_sent")
                            .to_owned(),
                        chunk
                            .get("error")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned(),
                        chunk.get("response").cloned().unwrap_or(Value::Null),
                    )
                })
                .collect(),
            None => {
                let status = match execution.status {
                    ExecutionStatus::Succeeded => "succeeded",
                    ExecutionStatus::Cancelled => "cancelled",
                    ExecutionStatus::Running => "not_sent",
                    ExecutionStatus::Interrupted => "unknown",
                    ExecutionStatus::Failed | ExecutionStatus::Refused => "failed",
                };
                vec![(
                    ids.len(),
                    status.to_owned(),
                    execution.error.clone().unwrap_or_default(),
                    result.clone(),
                )]
            }
        };
    let mut outcomes = Vec::with_capacity(ids.len());
    let mut remaining = ids.iter();
    for (size, status, error, response) in requests {
        let missing: Vec<String> = response
            .get("missing")
            .and_then(Value::as_array)
            .map(|missing| missing.iter().map(id_text).collect())
            .unwrap_or_default();
        for id in remaining.by_ref().take(size) {
            let (status, error) = if status == "succeeded" && missing.contains(id) {
                ("failed".to_owned(), "not found".to_owned())
            } else {
                let error = match status.as_str() {
                    "not_sent" if error.is_empty() => {
                        "not sent: an earlier request failed".to_owned()
                    }
                    "cancelled" if error.is_empty() => "not sent: stopped by the person".to_owned(),
                    _ => error.clone(),
                };
                (status.clone(), error)
            };
            outcomes.push(ItemOutcome {
                id: id.clone(),
                title: titles.get(id).cloned().unwrap_or_default(),
                status,
                error,
            });
        }
    }
    for id in remaining {
        outcomes.push(ItemOutcome {
            id: id.clone(),
            title: titles.get(id).cloned().unwrap_or_default(),
            status: "not_sent".to_owned(),
            error: "not sent".to_owned(),
        });
    }
    outcomes
}

/// The result view's facts: counts per outcome, the failures and every item.
#[must_use]
pub fn result_data(execution: &Execution, outcomes: &[ItemOutcome]) -> Value {
    let count = |status: &str| outcomes.iter().filter(|item| item.status == status).count();
    let failures: Vec<&ItemOutcome> = outcomes
        .iter()
        .filter(|item| item.status != "succeeded")
        .collect();
    let mut data = json!({
        // In words: the view shows it to a person; the tool name is the header's Details.
        "operation": super::changes::field_words(&execution.operation),
        "status": execution.status.as_str(),
        "succeeded": count("succeeded"),
        "failed": count("failed"),
        "not_sent": count("not_sent") + count("cancelled"),
        "unknown": count("unknown"),
        "failures": failures,
        "items": outcomes,
    });
    if execution.chunks_total > 1 {
        data["chunks_done"] = json!(execution.chunks_done);
        data["chunks_total"] = json!(execution.chunks_total);
    }
    data
}

/// The result view of a finished mutation, with CSV and JSON downloads under
/// `/chat/results/{execution}`.
///
/// # Errors
/// As [`super::confirm_view`].
pub async fn result_view(
    store: &Store,
    model: &dyn ChatModel,
    operation: &Operation,
    execution: &Execution,
    preview: Option<&ConfirmationPreview>,
) -> Result<ChatView, ViewError> {
    let outcomes = item_outcomes(operation, execution, preview);
    let data = result_data(execution, &outcomes);
    let input = GenerationInput::new(prompt(
        ViewKind::Result,
        &execution.operation,
        &operation.entity,
        operation.has(Tag::Delete),
        true,
    )?)
    .with_data(data.clone());
    let has_failures = data["failures"]
        .as_array()
        .is_some_and(|rows| !rows.is_empty());
    let total = outcomes.len();
    let check = move |tree: &PageTree| {
        check_counts(tree, total, &[])?;
        if has_failures && !binds(tree, "/failures") && !binds(tree, "/items") {
            return Err("the failures are not listed".to_owned());
        }
        Ok(())
    };
    let (mut tree, model_name) = generate(input, model, store, &check).await?;
    enforce_result(&mut tree);
    Ok(ChatView {
        kind: ViewKind::Result,
        tree,
        data,
        action: None,
        values: BTreeMap::new(),
        download_base: Some(format!("/chat/results/{}", execution.id)),
        model: model_name,
        summary: None,
    })
}

pub(super) fn binds(tree: &PageTree, pointer: &str) -> bool {
    tree.nodes.values().any(|node| {
        let mut bound = Vec::new();
        collect_pointers(&node.props, &mut bound);
        matches!(node.component.as_str(), "Table" | "List")
            && bound.iter().any(|used| used == pointer)
    })
}

pub(super) fn collect_pointers(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(pointer)) = map.get("$data") {
                out.push(pointer.clone());
            }
            map.values().for_each(|item| collect_pointers(item, out));
        }
        Value::Array(items) => items.iter().for_each(|item| collect_pointers(item, out)),
        _ => {}
    }
}

/// Code's corrections to a result tree: a CSV and a JSON download of every item are always
/// offered (their contents are code's, see [`result_download`]).
pub fn enforce_result(tree: &mut PageTree) {
    offer_downloads(tree, "result", "/items", "result");
}

/// The file behind `/chat/results/{execution}/download.{csv,json}`: one row per item with its
/// outcome, built from the execution (never from the tree), CSV cells guarded against formula
/// injection.
#[must_use]
pub fn result_download(
    operation: &Operation,
    execution: &Execution,
    preview: Option<&ConfirmationPreview>,
    format: DownloadFormat,
) -> DownloadFile {
    let outcomes = item_outcomes(operation, execution, preview);
    let rows = serde_json::to_value(&outcomes).unwrap_or(Value::Null);
    let (content_type, body) =
        download_body(&json!({"data": rows, "columns": RESULT_COLUMNS}), format);
    let short: String = execution.id.to_string().chars().take(8).collect();
    DownloadFile {
        content_type,
        filename: format!("{}-{short}.{}", execution.operation, format.extension()),
        body,
    }
}

/// The preview a mutation's confirmation showed (for item titles), when it had one.
pub(super) async fn preview_of(
    store: &Store,
    session: SessionId,
    execution: &Execution,
) -> Result<Option<ConfirmationPreview>, ViewError> {
    let Approval::Confirmation { id } = &execution.approval else {
        return Ok(None);
    };
    match store.confirmation(session, *id).await {
        Ok(confirmation) => Ok(Some(confirmation.preview)),
        Err(StoreError::NotFound) => Ok(None),
        Err(error) => Err(error.into()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::chat::{audit::ExecutionId, header::StepRole, manifest::Manifest};
    use crate::chat::{session::SessionId, ThreadId};

    #[test]
    fn result_downloads_guard_cells_against_formulas() -> anyhow::Result<()> {
        let manifest = Manifest::from_json(crate::demo::items::MANIFEST_JSON)?;
        let operation = manifest
            .operation("bulkDeleteItems")
            .ok_or_else(|| anyhow::anyhow!("no bulkDeleteItems"))?;
        let arguments = json!({"ids": ["a"]});
        let execution = Execution {
            id: ExecutionId::new(),
            session_id: SessionId(uuid::Uuid::new_v4()),
            thread_id: ThreadId(uuid::Uuid::new_v4()),
            operation: "bulkDeleteItems".to_owned(),
            hash: crate::chat::confirm::operation_hash("bulkDeleteItems", &arguments),
            arguments,
            role: StepRole::Mutation,
            approval: Approval::NotNeeded,
            status: ExecutionStatus::Succeeded,
            items_total: 1,
            items_done: 1,
            chunks_total: 1,
            chunks_done: 1,
            item_ids: None,
            result: Some(json!({"deleted": 1, "ids": ["a"], "missing": []})),
            error: None,
            created_at_ms: 0,
            finished_at_ms: Some(1),
        };
        let preview = ConfirmationPreview {
            count: 1,
            items: vec![json!({"id": "a", "title": "=HYPERLINK(\"http://evil\")"})],
            chunks: vec![1],
            preview_operation: None,
        };
        let file = result_download(operation, &execution, Some(&preview), DownloadFormat::Csv);
        assert_eq!(file.content_type, "text/csv; charset=utf-8");
        assert!(
            file.filename.starts_with("bulkDeleteItems-"),
            "{}",
            file.filename
        );
        assert!(
            file.body
                .contains("a,\"'=HYPERLINK(\"\"http://evil\"\")\",succeeded,"),
            "{}",
            file.body
        );
        Ok(())
    }
}
