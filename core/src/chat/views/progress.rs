//! The progress view of a chunked call still running.

use std::collections::BTreeMap;

use serde_json::{json, Value};
use tessera_app::tree::PageTree;

use crate::chat::{audit::Execution, manifest::Manifest};
use crate::{agent::generate::GenerationInput, llm::ChatModel, store::Store};

use super::{counts::check_counts, generate, prompt, ChatView, ViewError, ViewKind};

/// The progress view's facts for a running chunked execution.
#[must_use]
pub fn progress_data(execution: &Execution) -> Value {
    json!({
        // In words: the view shows it to a person; the tool name is the header's Details.
        "operation": super::changes::field_words(&execution.operation),
        "chunks_done": execution.chunks_done,
        "chunks_total": execution.chunks_total.max(1),
        "items_done": execution.items_done,
        "items_total": execution.items_total.max(1),
    })
}

/// The progress view of a running execution (chunk k of n, items done).
///
/// # Errors
/// As [`super::confirm_view`].
pub async fn progress_view(
    store: &Store,
    model: &dyn ChatModel,
    manifest: &Manifest,
    execution: &Execution,
) -> Result<ChatView, ViewError> {
    let entity = manifest
        .operation(&execution.operation)
        .map_or("item", |operation| operation.entity.as_str());
    let data = progress_data(execution);
    let input = GenerationInput::new(prompt(
        ViewKind::Progress,
        &execution.operation,
        entity,
        false,
        true,
    )?)
    .with_data(data.clone());
    let check = |tree: &PageTree| {
        check_counts(tree, execution.items_total, &[])?;
        require_component(tree, "ProgressBar")
    };
    let (tree, model_name) = generate(input, model, store, &check).await?;
    Ok(ChatView {
        kind: ViewKind::Progress,
        tree,
        data,
        action: None,
        values: BTreeMap::new(),
        download_base: None,
        model: model_name,
        summary: None,
    })
}

pub(super) fn require_component(tree: &PageTree, component: &str) -> Result<(), String> {
    tree.nodes
        .values()
        .any(|node| node.component == component)
        .then_some(())
        .ok_or_else(|| format!("the view has no {component}"))
}

// ---------------------------------------------------------------------------------------------
// Result

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::chat::{
        audit::{Approval, ExecutionId, ExecutionStatus},
        confirm::operation_hash,
        header::StepRole,
        session::SessionId,
        threads::ThreadId,
    };

    #[test]
    fn progress_facts_never_divide_by_zero() {
        let arguments = json!({"ids": []});
        let execution = Execution {
            id: ExecutionId::new(),
            session_id: SessionId(uuid::Uuid::new_v4()),
            thread_id: ThreadId(uuid::Uuid::new_v4()),
            operation: "bulkUpdateItems".to_owned(),
            hash: operation_hash("bulkUpdateItems", &arguments),
            arguments,
            role: StepRole::Mutation,
            approval: Approval::NotNeeded,
            status: ExecutionStatus::Running,
            items_total: 0,
            items_done: 0,
            chunks_total: 0,
            chunks_done: 0,
            item_ids: None,
            result: None,
            error: None,
            created_at_ms: 0,
            finished_at_ms: None,
        };
        assert_eq!(
            progress_data(&execution),
            json!({"operation": "bulk update items", "chunks_done": 0, "chunks_total": 1, "items_done": 0, "items_total": 1})
        );
    }
}
