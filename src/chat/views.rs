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
use serde_json::{json, Map, Value};
use tessera_app::{
    components::{download_body, DownloadFile, DownloadFormat},
    tree::{Node, PageTree},
};

use super::{
    confirm::{ApprovalScope, ConfirmationId, ConfirmationPreview},
    execution::{Approval, Execution, ExecutionId, ExecutionStatus},
    header::{StepRole, StepStatus},
    manifest::{id_text, Manifest, Operation, Tag, DEFAULT_BATCH_ARGUMENT},
    orchestrator::SessionView,
    session::SessionId,
    PendingApproval,
};
use crate::{
    agent::{
        generate::{generate_page, AgentError, GenerationInput},
        generation::GenerationRecord,
        heuristic::HeuristicModel,
        CachePolicy,
    },
    forms::{FormSchema, SchemaError},
    llm::ChatModel,
    store::{Store, StoreError},
};

/// The confirm form's field with the ticked item ids.
pub const IDS_FIELD: &str = "ids";
/// The confirm form's field with the approval scope.
pub const SCOPE_FIELD: &str = "scope";
/// The columns of a result download, in order.
pub const RESULT_COLUMNS: [&str; 4] = ["id", "title", "status", "error"];

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

/// Which view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ViewKind {
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
        operation => operation,
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

fn plural(count: usize, word: &str) -> String {
    if count == 1 {
        format!("1 {word}")
    } else {
        format!("{count} {word}s")
    }
}

/// Runs the agent loop for one view, refusing (and rebuilding with the heuristic) a tree that
/// `acceptable` rejects.
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
    }
    Ok((tree, model_name))
}

fn model_of(record: &GenerationRecord) -> String {
    format!("{}:{}", record.provider, record.model)
}

// ---------------------------------------------------------------------------------------------
// Confirm

/// The confirm view's facts: the operation, the count, the chunk plan and one row per item the
/// call touches (the preview's row, or just its id when the preview had none).
#[must_use]
pub fn confirm_data(approval: &PendingApproval, operation: Option<&Operation>) -> Value {
    let ids = operation.map_or_else(Vec::new, |operation| {
        operation.item_ids(&approval.arguments)
    });
    let rows = preview_rows(&ids, &approval.preview);
    json!({
        "operation": approval.operation,
        "count": approval.preview.count,
        "requests": approval.preview.chunks.len().max(1),
        "items": rows,
    })
}

fn preview_rows(ids: &[String], preview: &ConfirmationPreview) -> Vec<Value> {
    let by_id: HashMap<String, &Value> = preview
        .items
        .iter()
        .filter_map(|item| item.get("id").map(|id| (id_text(id), item)))
        .collect();
    ids.iter()
        .map(|id| {
            by_id
                .get(id)
                .map_or_else(|| json!({ "id": id }), |row| (*row).clone())
        })
        .collect()
}

fn scope_label(scope: ApprovalScope, operation: &str) -> String {
    match scope {
        ApprovalScope::Once => "Only this once".to_owned(),
        ApprovalScope::Operation => format!("Always for {operation} in this chat"),
        ApprovalScope::Session => "Every operation for the rest of this chat session".to_owned(),
    }
}

fn confirm_schema(
    approval: &PendingApproval,
    entity: &str,
    with_ids: bool,
) -> Result<FormSchema, SchemaError> {
    let scopes: Vec<&str> = approval
        .allowed_scopes
        .iter()
        .map(|scope| scope.as_str())
        .collect();
    let mut properties = Map::new();
    let mut required = vec![SCOPE_FIELD];
    if with_ids {
        let verb = if approval.destructive {
            "delete"
        } else {
            "change"
        };
        properties.insert(
            IDS_FIELD.to_owned(),
            json!({"type": "array", "items": {"type": "string"}, "minItems": 1,
                   "title": format!("{} to {verb}", capitalized(&noun_forms(entity).1)),
                   "description": format!("The ids of the {} this approval covers; untick any to leave it out.", noun_forms(entity).1)}),
        );
        required.insert(0, IDS_FIELD);
    }
    properties.insert(
        SCOPE_FIELD.to_owned(),
        json!({"type": "string", "enum": scopes, "title": "How long this approval lasts"}),
    );
    FormSchema::from_json_schema(
        &json!({"type": "object", "properties": properties, "required": required}),
    )
}

fn capitalized(text: &str) -> String {
    let mut characters = text.chars();
    characters
        .next()
        .map(|first| first.to_uppercase().chain(characters).collect())
        .unwrap_or_default()
}

/// The confirm button's label: the verb and code's count.
#[must_use]
pub fn confirm_label(approval: &PendingApproval) -> String {
    let verb = if approval.destructive {
        "Delete"
    } else {
        "Approve"
    };
    format!("{verb} {}", plural(approval.preview.count, "item"))
}

/// The confirm view of a pending approval, posting to `/chat/approvals/{id}`.
///
/// # Errors
/// [`ViewError`] when the loop cannot record or not even the heuristic page validates.
pub async fn confirm_view(
    store: &Store,
    model: &dyn ChatModel,
    manifest: &Manifest,
    approval: &PendingApproval,
) -> Result<ChatView, ViewError> {
    let operation = manifest.operation(&approval.operation);
    let entity = operation.map_or("item", |operation| operation.entity.as_str());
    let data = confirm_data(approval, operation);
    let ids: Vec<String> = data["items"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .filter_map(|row| row.get("id"))
                .map(id_text)
                .collect()
        })
        .unwrap_or_default();
    let batch = operation.is_some_and(|operation| {
        approval
            .arguments
            .get(
                operation
                    .batch_argument
                    .as_deref()
                    .unwrap_or(DEFAULT_BATCH_ARGUMENT),
            )
            .is_some_and(Value::is_array)
    });
    let with_ids = batch && !ids.is_empty();
    let schema = confirm_schema(approval, entity, with_ids)?;
    let input = GenerationInput::new(prompt(
        ViewKind::Confirm,
        &approval.operation,
        entity,
        approval.destructive,
        with_ids,
    )?)
    .with_schema(schema)
    .with_data(data.clone());
    let count = approval.preview.count;
    let nouns = [entity.to_owned(), "item".to_owned()];
    let check = move |tree: &PageTree| check_counts(tree, count, &nouns);
    let (mut tree, model_name) = generate(input, model, store, &check).await?;
    enforce_confirm(&mut tree, approval);
    let mut values = BTreeMap::new();
    if with_ids {
        values.insert(IDS_FIELD.to_owned(), ids);
    }
    values.insert(
        SCOPE_FIELD.to_owned(),
        vec![ApprovalScope::Once.as_str().to_owned()],
    );
    Ok(ChatView {
        kind: ViewKind::Confirm,
        tree,
        data,
        action: Some(format!("/chat/approvals/{}", approval.confirmation_id)),
        values,
        download_base: None,
        model: model_name,
    })
}

/// Code's corrections to a confirm tree: the submit buttons name code's count (danger when the
/// call deletes), there is a Deny, and the scope options are code's, with their labels.
pub fn enforce_confirm(tree: &mut PageTree, approval: &PendingApproval) {
    let label = confirm_label(approval);
    let variant = if approval.destructive {
        "danger"
    } else {
        "primary"
    };
    let mut has_cancel = false;
    for node in tree.nodes.values_mut() {
        match node.component.as_str() {
            "Button" => {
                let cancel = node.props.get("kind").and_then(Value::as_str) == Some("cancel");
                if cancel {
                    has_cancel = true;
                    node.props["label"] = json!("Deny");
                    node.props["variant"] = json!("secondary");
                } else {
                    node.props["label"] = json!(label);
                    node.props["variant"] = json!(variant);
                }
            }
            "RadioGroup" | "Select"
                if node.props.get("name").and_then(Value::as_str) == Some(SCOPE_FIELD) =>
            {
                node.props["options"] = Value::Array(
                    approval
                        .allowed_scopes
                        .iter()
                        .map(|scope| {
                            json!({"value": scope.as_str(), "label": scope_label(*scope, &approval.operation)})
                        })
                        .collect(),
                );
            }
            _ => {}
        }
    }
    if !has_cancel {
        let form = tree
            .nodes
            .iter()
            .find(|(_, node)| node.component == "Form")
            .map(|(id, _)| id.clone());
        if let Some(form) = form {
            let id = unused_id(tree, "code_deny");
            tree.nodes.insert(
                id.clone(),
                node(
                    "Button",
                    json!({"label": "Deny", "variant": "secondary", "kind": "cancel"}),
                ),
            );
            if let Some(form) = tree.nodes.get_mut(&form) {
                form.children.push(id);
            }
        }
    }
    actions_before_items(tree);
}

/// Rows the confirm table shows on one page: all of a preview up to the Table's limit, because
/// its form posts to the approval, which takes no paging.
const CONFIRM_PAGE_SIZE: u32 = 500;

/// Puts the confirm and Deny buttons in one row before the item table, so the count and the
/// buttons are in view without scrolling past every item, and keeps the table on one page.
fn actions_before_items(tree: &mut PageTree) {
    let Some(form) = tree
        .nodes
        .iter()
        .find(|(_, node)| node.component == "Form")
        .map(|(id, _)| id.clone())
    else {
        return;
    };
    for node in tree.nodes.values_mut() {
        if node.component == "Table" && node.props.get("selectable").is_some() {
            node.props["pageSize"] = json!(CONFIRM_PAGE_SIZE);
        }
    }
    let mut buttons: Vec<String> = tree
        .nodes
        .iter()
        .filter(|(_, node)| node.component == "Button")
        .map(|(id, _)| id.clone())
        .collect();
    // The confirm first, then Deny.
    buttons.sort_by_key(|id| {
        tree.nodes
            .get(id)
            .and_then(|node| node.props.get("kind"))
            .and_then(Value::as_str)
            == Some("cancel")
    });
    if buttons.is_empty() {
        return;
    }
    for node in tree.nodes.values_mut() {
        node.children.retain(|child| !buttons.contains(child));
    }
    tree.order.retain(|id| !buttons.contains(id));
    let bar = unused_id(tree, "code_actions");
    tree.nodes.insert(
        bar.clone(),
        Node {
            component: "Container".to_owned(),
            props: json!({"direction": "row", "gap": "md"}),
            children: buttons,
        },
    );
    if let Some(form_node) = tree.nodes.get_mut(&form) {
        form_node.children.insert(0, bar);
    }
    form_after_heading(tree, &form);
}

/// Moves the Form up to right after the view's heading, with the request's text as the form's
/// description, so the buttons come before the facts the heuristic shows (the count is on the
/// confirm button).
fn form_after_heading(tree: &mut PageTree, form: &str) {
    let top: Vec<String> = tree.top_level().into_iter().map(str::to_owned).collect();
    let heading = top.iter().find(|id| {
        tree.nodes
            .get(*id)
            .is_some_and(|node| node.component == "Heading")
    });
    let text = top.iter().find(|id| {
        tree.nodes
            .get(*id)
            .is_some_and(|node| node.component == "Text")
    });
    let mut order: Vec<String> = heading.into_iter().cloned().collect();
    order.push(form.to_owned());
    let described = tree
        .nodes
        .get(form)
        .is_some_and(|node| node.props.get("description").is_some());
    let moved_text = match (text, described) {
        (Some(text), false) => tree
            .nodes
            .get(text)
            .and_then(|node| node.props.get("text").cloned())
            .map(|words| (text.clone(), words)),
        _ => None,
    };
    if let Some((text, words)) = &moved_text {
        if let Some(form_node) = tree.nodes.get_mut(form) {
            form_node.props["description"] = words.clone();
        }
        tree.nodes.remove(text);
    }
    let rest: Vec<String> = top
        .into_iter()
        .filter(|id| !order.contains(id) && moved_text.as_ref().is_none_or(|(text, _)| text != id))
        .collect();
    order.extend(rest);
    tree.order = order;
}

fn node(component: &str, props: Value) -> Node {
    Node {
        component: component.to_owned(),
        props,
        children: Vec::new(),
    }
}

fn unused_id(tree: &PageTree, stem: &str) -> String {
    let mut id = stem.to_owned();
    let mut n = 1;
    while tree.nodes.contains_key(&id) {
        n += 1;
        id = format!("{stem}_{n}");
    }
    id
}

/// Refuses a tree that states a count of `nouns` other than `count` in its literal text, or shows
/// a literal number in a `Stat` or `ProgressBar` (those must be bound to code's facts).
///
/// # Errors
/// The reason, naming the node.
pub fn check_counts(tree: &PageTree, count: usize, nouns: &[String]) -> Result<(), String> {
    for (id, node) in &tree.nodes {
        if matches!(node.component.as_str(), "Stat" | "ProgressBar") {
            for key in ["value", "max"] {
                if node.props.get(key).is_some_and(Value::is_number) {
                    return Err(format!(
                        "`{id}` shows a literal number; numbers must be bound to the data"
                    ));
                }
            }
        }
        if node.component == "Button" {
            // Code writes every button label itself.
            continue;
        }
        let mut texts = Vec::new();
        collect_strings(&node.props, &mut texts);
        for text in texts {
            if let Some(stated) = stated_counts(&text, nouns)
                .into_iter()
                .find(|stated| *stated != count)
            {
                return Err(format!("`{id}` says {stated} where code counts {count}"));
            }
        }
    }
    Ok(())
}

fn collect_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(text) => out.push(text.clone()),
        Value::Array(items) => items.iter().for_each(|item| collect_strings(item, out)),
        Value::Object(map) => map
            .iter()
            .filter(|(key, _)| key.as_str() != "$data")
            .for_each(|(_, item)| collect_strings(item, out)),
        _ => {}
    }
}

/// Words that may stand between a count and its noun ("12 completed items", "all 3 open
/// items") without changing what is counted; any other word breaks the link.
const COUNT_GAP_WORDS: usize = 2;

/// Every count of `nouns` (singular or plural) that `text` states: a number (in digits, or a
/// word from one to twenty) followed by the noun within [`COUNT_GAP_WORDS`] words, or the noun
/// followed by a colon-style number ("Items: 4").
fn stated_counts(text: &str, nouns: &[String]) -> Vec<usize> {
    let words: Vec<String> = text
        .split(|character: char| !character.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect();
    let is_noun = |word: &str| {
        let singular = word.strip_suffix('s').unwrap_or(word);
        nouns.iter().any(|candidate| {
            candidate.to_lowercase() == singular || candidate.to_lowercase() == word
        })
    };
    let mut counts = Vec::new();
    for (position, word) in words.iter().enumerate() {
        let Some(number) = number_word(word) else {
            continue;
        };
        let after = words.iter().skip(position + 1).take(COUNT_GAP_WORDS + 1);
        let before = position.checked_sub(1).and_then(|index| words.get(index));
        let counts_a_noun = after
            .take_while(|next| number_word(next).is_none())
            .any(|next| is_noun(next))
            || before.is_some_and(|previous| is_noun(previous));
        if counts_a_noun {
            counts.push(number);
        }
    }
    counts
}

/// A count written in digits, or as a word from one to twenty.
fn number_word(word: &str) -> Option<usize> {
    const WORDS: [&str; 20] = [
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
    ];
    word.parse::<usize>().ok().or_else(|| {
        WORDS
            .iter()
            .position(|candidate| *candidate == word)
            .map(|index| index + 1)
    })
}

// ---------------------------------------------------------------------------------------------
// Progress

/// The progress view's facts for a running chunked execution.
#[must_use]
pub fn progress_data(execution: &Execution) -> Value {
    json!({
        "operation": execution.operation,
        "chunks_done": execution.chunks_done,
        "chunks_total": execution.chunks_total.max(1),
        "items_done": execution.items_done,
        "items_total": execution.items_total.max(1),
    })
}

/// The progress view of a running execution (chunk k of n, items done).
///
/// # Errors
/// As [`confirm_view`].
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
    })
}

fn require_component(tree: &PageTree, component: &str) -> Result<(), String> {
    tree.nodes
        .values()
        .any(|node| node.component == component)
        .then_some(())
        .ok_or_else(|| format!("the view has no {component}"))
}

// ---------------------------------------------------------------------------------------------
// Result

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
        "operation": execution.operation,
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
/// As [`confirm_view`].
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
    })
}

fn binds(tree: &PageTree, pointer: &str) -> bool {
    tree.nodes.values().any(|node| {
        let mut bound = Vec::new();
        collect_pointers(&node.props, &mut bound);
        matches!(node.component.as_str(), "Table" | "List")
            && bound.iter().any(|used| used == pointer)
    })
}

fn collect_pointers(value: &Value, out: &mut Vec<String>) {
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
    for format in [DownloadFormat::Csv, DownloadFormat::Json] {
        let offered = tree.nodes.values().any(|node| {
            node.component == "DownloadLink"
                && node
                    .props
                    .get("format")
                    .and_then(Value::as_str)
                    .unwrap_or("csv")
                    == format.extension()
        });
        if !offered {
            let id = unused_id(tree, &format!("code_download_{}", format.extension()));
            tree.nodes.insert(
                id.clone(),
                node(
                    "DownloadLink",
                    json!({"label": format!("Download the result as {}", format.extension().to_uppercase()),
                           "format": format.extension(), "data": {"$data": "/items"}, "filename": "result"}),
                ),
            );
            tree.order.push(id);
        }
    }
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
async fn preview_of(
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

/// The file behind `/chat/results/{execution}/download.{csv,json}` for an execution of
/// `session`; `None` when the session has no such finished mutation.
///
/// # Errors
/// Storage failures.
pub async fn result_file(
    store: &Store,
    manifest: &Manifest,
    session: SessionId,
    execution_id: ExecutionId,
    format: DownloadFormat,
) -> Result<Option<DownloadFile>, ViewError> {
    let executions = store.chat_executions(session).await?;
    let Some(execution) = executions.iter().find(|execution| {
        execution.id == execution_id
            && execution.role == StepRole::Mutation
            && execution.status != ExecutionStatus::Refused
    }) else {
        return Ok(None);
    };
    let Some(operation) = manifest.operation(&execution.operation) else {
        return Ok(None);
    };
    let preview = preview_of(store, session, execution).await?;
    Ok(Some(result_download(
        operation,
        execution,
        preview.as_ref(),
        format,
    )))
}

/// Every generated view a session's page shows.
#[derive(Clone, Debug, Default)]
pub struct SessionViews {
    /// The confirm view of each pending approval.
    pub confirms: HashMap<ConfirmationId, ChatView>,
    /// The result view of each finished mutation the transcript reports.
    pub results: HashMap<ExecutionId, ChatView>,
    /// The progress views of running chunked calls, oldest first.
    pub progress: Vec<ChatView>,
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
    let reported = view
        .transcript
        .iter()
        .filter_map(|entry| entry.header.as_ref())
        .flat_map(|header| header.steps.iter())
        .filter(|step| {
            step.role == StepRole::Mutation
                && matches!(
                    step.status,
                    StepStatus::Succeeded
                        | StepStatus::Failed
                        | StepStatus::Cancelled
                        | StepStatus::Interrupted
                )
        })
        .filter_map(|step| step.execution_id);
    for execution_id in reported {
        if views.results.contains_key(&execution_id) {
            continue;
        }
        let Some(execution) = executions
            .iter()
            .find(|execution| execution.id == execution_id)
        else {
            continue;
        };
        let Some(operation) = manifest.operation(&execution.operation) else {
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
    fn a_count_is_read_where_it_counts_the_noun() {
        let nouns = ["item".to_owned()];
        let counts = |text: &str| stated_counts(text, &nouns);
        assert_eq!(counts("You are deleting 12 items."), [12]);
        assert_eq!(counts("1 item will go"), [1]);
        assert_eq!(counts("You are about to delete 999 completed items"), [999]);
        assert_eq!(counts("all 7 old completed items"), [7]);
        assert_eq!(counts("Items: 4"), [4]);
        assert_eq!(counts("Delete twelve items"), [12]);
        assert_eq!(counts("3 items now, 5 items later"), [3, 5]);
        assert!(counts("Sent in 3 requests").is_empty());
        assert!(counts("Review the 3 rows, then the items").is_empty());
        assert!(
            counts("Items from 12 March").is_empty(),
            "a date is not a count"
        );
    }

    #[test]
    fn a_confirm_tree_stating_another_count_anywhere_is_refused() -> anyhow::Result<()> {
        let nouns = ["item".to_owned()];
        let tree: PageTree = serde_json::from_value(json!({
            "nodes": {"t": {"component": "Text", "props": {"text": "This removes 40 completed items for good."}}},
            "order": ["t"]
        }))?;
        let refused = check_counts(&tree, 3, &nouns);
        assert_eq!(refused, Err("`t` says 40 where code counts 3".to_owned()));
        assert_eq!(check_counts(&tree, 40, &nouns), Ok(()));
        Ok(())
    }

    #[test]
    fn prompts_name_the_entity_in_good_english_whichever_way_the_manifest_spells_it(
    ) -> anyhow::Result<()> {
        for entity in ["item", "items"] {
            let one = prompt(ViewKind::Confirm, "deleteItem", entity, true, false)?;
            assert!(
                one.starts_with("Delete this item with deleteItem."),
                "{one}"
            );
            assert!(
                !one.contains("untick"),
                "nothing to untick on one item: {one}"
            );
            let many = prompt(ViewKind::Confirm, "bulkDeleteItems", entity, true, true)?;
            assert!(
                many.starts_with("Delete the selected items with bulkDeleteItems."),
                "{many}"
            );
            assert!(
                !many.contains("itemss") && !many.contains("every items"),
                "{many}"
            );
        }
        Ok(())
    }

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
            thread_id: super::super::ThreadId(uuid::Uuid::new_v4()),
            operation: "bulkDeleteItems".to_owned(),
            hash: super::super::confirm::operation_hash("bulkDeleteItems", &arguments),
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
