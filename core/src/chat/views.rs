//! Generated chat views: the confirm, progress and result pages of the chat, built by the agent
//! loop from the component catalog and rendered by the same renderer as every page (DESIGN.md §8).
//!
//! Each view is the facts code holds (the previewed items and their count, the chunk progress,
//! the per-item outcome of an execution) plus a prompt from `prompts/views/*.j2`, sent through
//! [`generate_page`]: a model (offline, the heuristic) places vetted components, bound to the
//! facts with `$data`, and the tree is validated like any page's. The prompts do not contain the
//! facts' values, so the page cache answers the next view of the same operation and shape.
//!
//! Code, not the model, decides what matters, after generation ([`enforce_confirm`],
//! [`enforce_result`]): the confirm view's buttons (a danger confirm naming code's count and a
//! Deny), the scope options, where the form posts, which rows start ticked, which failures are
//! listed and what the downloads contain ([`result_download`]). A tree that states a count other
//! than code's, or shows a literal number where a bound one belongs, is refused and the heuristic
//! builds the view instead. Building a view while serving `GET /chat` records a generation (and
//! fills the page cache) like any generation: an audit record, not a change to the conversation,
//! its confirmations or the site. This module must not decide policy: what a selection may approve is
//! the orchestrator's ([`super::Orchestrator::approve_selection`]).

use std::collections::{BTreeMap, HashMap};

use minijinja::{context, Environment};
use serde::Serialize;
use serde_json::{json, Value};
use tessera_app::{
    components::{DownloadFile, DownloadFormat},
    tree::PageTree,
};

use super::{
    audit::{Execution, ExecutionId, ExecutionStatus},
    confirm::ConfirmationId,
    header::{CallStatus, StepRole},
    manifest::{Manifest, Operation},
    orchestrator::SessionView,
    session::Speaker,
};
use crate::{
    agent::{
        generate::{generate_page, AgentError, GenerationInput},
        generation::GenerationRecord,
        heuristic::HeuristicModel,
        CachePolicy,
    },
    forms::SchemaError,
    llm::ChatModel,
    store::{Store, StoreError},
};

mod changes;
mod confirm;
mod counts;
mod progress;
mod read;
mod result;

pub use changes::{
    change_rows, change_summary, field_words, item_changes, value_words, FieldChange, ItemChange,
};
pub use confirm::{
    confirm_data, confirm_label, confirm_summary, confirm_view, enforce_confirm, IDS_FIELD,
    SCOPE_FIELD,
};
pub use counts::check_counts;
pub use progress::{progress_data, progress_view};
use read::read_file;
pub use read::{
    bounded_result, enforce_read, read_data, read_shape, read_view, result_rows, ReadShape,
    CUT_KEY, MAX_READ_ROWS, READ_PAGE_SIZE,
};
use result::preview_of;
pub use result::{
    enforce_result, item_outcomes, result_data, result_download, result_view, ItemOutcome,
    RESULT_COLUMNS,
};

const CONFIRM_TEMPLATE: &str = include_str!("prompts/views/confirm.j2");

const PROGRESS_TEMPLATE: &str = include_str!("prompts/views/progress.j2");

const RESULT_TEMPLATE: &str = include_str!("prompts/views/result.j2");

/// What went wrong building a view. A model that fails or places a wrong page is not an error:
/// the heuristic builds the view instead.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// The agent loop failed (storage, or not even the heuristic page validated).
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// A view prompt template is broken (a build problem).
    #[error("view prompt template: {0}")]
    Template(#[from] minijinja::Error),
    /// Code built a response schema outside the form subset (a build problem).
    #[error(transparent)]
    Schema(#[from] SchemaError),
    /// Storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Which file of a chat session's call a download asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallFile {
    /// A finished change's per-item outcome (`/chat/results/{execution}/download.{csv,json}`).
    Result,
    /// The rows a read returned (`/chat/reads/{execution}/{node}.{csv,json}`).
    Read,
}

/// The `which` file of execution `execution_id` of `session`, built from the stored execution.
/// `None` when the session has no such finished call of that kind (another session's id, a
/// refused change, a read that failed) or the manifest no longer has its operation, so a
/// stranger's id and a stale one look alike.
///
/// # Errors
/// Storage failures.
pub async fn call_file(
    store: &Store,
    manifest: &Manifest,
    (session, execution_id): (super::session::SessionId, ExecutionId),
    which: CallFile,
    format: DownloadFormat,
) -> Result<Option<DownloadFile>, ViewError> {
    let offered = |execution: &Execution| match which {
        CallFile::Result => {
            execution.role == StepRole::Mutation && execution.status != ExecutionStatus::Refused
        }
        CallFile::Read => {
            execution.role != StepRole::Mutation && execution.status == ExecutionStatus::Succeeded
        }
    };
    let executions = store.chat_executions(session).await?;
    let Some(execution) = executions
        .into_iter()
        .find(|execution| execution.id == execution_id && offered(execution))
    else {
        return Ok(None);
    };
    let Some(operation) = manifest.operation(&execution.operation) else {
        return Ok(None);
    };
    Ok(match which {
        CallFile::Result => {
            let preview = preview_of(store, session, &execution).await?;
            Some(result_download(
                operation,
                &execution,
                preview.as_ref(),
                format,
            ))
        }
        CallFile::Read => read_file(&execution, operation, format),
    })
}

/// Which view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ViewKind {
    /// What a readonly call returned.
    Read,
    /// Approve (some of) the previewed items, or deny.
    Confirm,
    /// A chunked call still running.
    Progress,
    /// What a finished call did, item by item.
    Result,
}

impl ViewKind {
    /// The name used in test ids and logs.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Confirm => "confirm",
            Self::Progress => "progress",
            Self::Result => "result",
        }
    }
}

/// A generated view, ready for the renderer.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatView {
    /// Which view.
    pub kind: ViewKind,
    /// The validated tree, after code's corrections.
    pub tree: PageTree,
    /// The facts the tree binds to.
    pub data: Value,
    /// Where its form posts (confirm views).
    pub action: Option<String>,
    /// The form's starting values (every previewed id ticked, scope `once`).
    pub values: BTreeMap<String, Vec<String>>,
    /// The URL prefix of its download links (result views).
    pub download_base: Option<String>,
    /// The model that placed it (`provider:model`), for the record.
    pub model: String,
    /// What it asks a person to approve, in one line computed by code (confirm views).
    pub summary: Option<String>,
}

fn templates() -> Result<Environment<'static>, minijinja::Error> {
    let mut environment = Environment::new();
    environment.set_trim_blocks(true);
    environment.add_template("confirm", CONFIRM_TEMPLATE)?;
    environment.add_template("progress", PROGRESS_TEMPLATE)?;
    environment.add_template("result", RESULT_TEMPLATE)?;
    Ok(environment)
}

fn prompt(
    kind: ViewKind,
    operation: &str,
    entity: &str,
    destructive: bool,
    batch: bool,
) -> Result<String, ViewError> {
    let environment = templates()?;
    let (singular, plural) = noun_forms(entity);
    let text = environment.get_template(kind.as_str())?.render(context! {
        // The heading a person reads names the operation in words, never as a tool name.
        operation => changes::field_words(operation),
        entity => singular,
        entities => plural,
        batch => batch,
        verb => if destructive { "Delete" } else { "Approve" },
    })?;
    Ok(text.trim().to_owned())
}

/// An entity's singular and plural, however the manifest names it ("item" or "items").
fn noun_forms(entity: &str) -> (String, String) {
    match entity.strip_suffix('s') {
        Some(singular) if !singular.is_empty() => (singular.to_owned(), entity.to_owned()),
        _ => (entity.to_owned(), format!("{entity}s")),
    }
}

/// Runs the agent loop for one view, refusing (and rebuilding with the heuristic) a tree that
/// `acceptable` rejects.
/// Rows a chat view's table shows at once: the most a Table's `pageSize` allows.
const VIEW_PAGE_SIZE: u32 = 500;

async fn generate(
    input: GenerationInput,
    model: &dyn ChatModel,
    store: &Store,
    acceptable: &(dyn Fn(&PageTree) -> Result<(), String> + Sync),
) -> Result<(PageTree, String), ViewError> {
    let generated = generate_page(input.clone(), model, store, None).await?;
    let (mut tree, model_name) = match acceptable(&generated.tree) {
        Ok(()) => (generated.tree, model_of(&generated.record)),
        Err(reason) => {
            tracing::warn!(model = %generated.record.model, reason, "a generated chat view was refused; the heuristic builds it");
            let mut again = input.with_cache(CachePolicy::Bypass);
            again.id = uuid::Uuid::new_v4();
            let heuristic = HeuristicModel::new();
            let rebuilt = generate_page(again, &heuristic, store, None).await?;
            (rebuilt.tree, model_of(&rebuilt.record))
        }
    };
    // A view is a section of the chat page, whose only level-1 heading is "Chat".
    for node in tree.nodes.values_mut() {
        if node.component == "Heading" && node.props.get("level").and_then(Value::as_u64) == Some(1)
        {
            node.props["level"] = json!(2);
        }
        // A confirm, progress or result table pages by nothing (its form posts to the
        // approval): it shows as many rows as a Table may on one page (the render budget still
        // bounds the page, and every item is in the downloads). A read view pages by link; its
        // own correction sets a smaller page (`read::enforce_read`).
        if node.component == "Table" && node.props.get("pageSize").is_none() {
            node.props["pageSize"] = json!(VIEW_PAGE_SIZE);
        }
    }
    Ok((tree, model_name))
}

fn model_of(record: &GenerationRecord) -> String {
    format!("{}:{}", record.provider, record.model)
}

// ---------------------------------------------------------------------------------------------
// Confirm

/// Every generated view a session's page shows.
#[derive(Clone, Debug, Default)]
pub struct SessionViews {
    /// The read view of each readonly call the transcript reports (not the previews a change's
    /// confirm view shows again).
    pub reads: HashMap<ExecutionId, ChatView>,
    /// The confirm view of each pending approval.
    pub confirms: HashMap<ConfirmationId, ChatView>,
    /// The result view of each finished mutation the transcript reports.
    pub results: HashMap<ExecutionId, ChatView>,
    /// The progress views of running chunked calls, oldest first.
    pub progress: Vec<ChatView>,
}

/// The execution `id` among `executions` and the operation it called, when the manifest still
/// has it (a site reconfigured since may not).
fn called<'e, 'm>(
    executions: &'e [Execution],
    manifest: &'m Manifest,
    id: ExecutionId,
) -> Option<(&'e Execution, &'m Operation)> {
    let execution = executions.iter().find(|execution| execution.id == id)?;
    Some((execution, manifest.operation(&execution.operation)?))
}

/// Builds the views of `view` (a session as its page shows it) with `model`; identical views come
/// from the page cache.
///
/// # Errors
/// [`ViewError`] from any view.
pub async fn session_views(
    store: &Store,
    model: &dyn ChatModel,
    manifest: &Manifest,
    view: &SessionView,
) -> Result<SessionViews, ViewError> {
    let mut views = SessionViews::default();
    for approval in &view.pending_approvals {
        let confirm = confirm_view(store, model, manifest, approval).await?;
        views.confirms.insert(approval.confirmation_id, confirm);
    }
    let session = view.session.id;
    let executions = store.chat_executions(session).await?;
    let mut request = "";
    for entry in &view.transcript {
        if entry.speaker == Speaker::User {
            request = entry.text.as_str();
            continue;
        }
        let reads = entry
            .header
            .iter()
            .flat_map(|header| header.steps.iter())
            .filter(|step| step.role == StepRole::Read && step.status == CallStatus::Succeeded)
            .filter_map(|step| step.execution_id);
        for execution_id in reads {
            let Some((execution, operation)) = called(&executions, manifest, execution_id) else {
                continue;
            };
            if let Some(read) = read_view(store, model, operation, execution, request).await? {
                views.reads.insert(execution_id, read);
            }
        }
    }
    let reported = view
        .transcript
        .iter()
        .filter_map(|entry| entry.header.as_ref())
        .flat_map(|header| header.steps.iter())
        .filter(|step| {
            step.role == StepRole::Mutation
                && matches!(
                    step.status,
                    CallStatus::Succeeded
                        | CallStatus::Failed
                        | CallStatus::Cancelled
                        | CallStatus::Interrupted
                )
        })
        .filter_map(|step| step.execution_id);
    for execution_id in reported {
        if views.results.contains_key(&execution_id) {
            continue;
        }
        let Some((execution, operation)) = called(&executions, manifest, execution_id) else {
            continue;
        };
        let preview = preview_of(store, session, execution).await?;
        let result = result_view(store, model, operation, execution, preview.as_ref()).await?;
        views.results.insert(execution_id, result);
    }
    for execution in executions.iter().filter(|execution| {
        execution.status == ExecutionStatus::Running && execution.chunks_total > 1
    }) {
        views
            .progress
            .push(progress_view(store, model, manifest, execution).await?);
    }
    Ok(views)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_name_the_entity_in_good_english_whichever_way_the_manifest_spells_it(
    ) -> anyhow::Result<()> {
        for entity in ["item", "items"] {
            let one = prompt(ViewKind::Confirm, "deleteItem", entity, true, false)?;
            assert!(one.starts_with("Delete this item. Review it"), "{one}");
            assert!(
                !one.contains("untick"),
                "nothing to untick on one item: {one}"
            );
            let many = prompt(ViewKind::Confirm, "bulkDeleteItems", entity, true, true)?;
            assert!(
                many.starts_with("Delete the selected items. Review every item"),
                "{many}"
            );
            assert!(
                !many.contains("itemss") && !many.contains("every items"),
                "{many}"
            );
            assert!(
                !many.contains("bulkDeleteItems"),
                "a heading a person reads names no tool: {many}"
            );
        }
        Ok(())
    }
}
