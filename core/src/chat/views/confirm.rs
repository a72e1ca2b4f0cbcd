//! The confirm view: approve some or all of the previewed items, or deny.
//!
//! Code fixes what matters after generation ([`enforce_confirm`]): the danger button naming
//! code's count, Deny, the scope options, where the form posts and which rows start ticked.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};
use tessera_app::{
    components::DownloadFormat,
    tree::{Node, PageTree},
};

use crate::chat::{
    confirm::ApprovalScope,
    manifest::{id_text, Manifest, Operation, DEFAULT_BATCH_ARGUMENT},
    PendingApproval,
};
use crate::{
    agent::generate::GenerationInput,
    forms::{FormSchema, SchemaError},
    llm::ChatModel,
    store::Store,
};

use crate::chat::orchestrator::plural;

use super::{
    changes::{change_rows, change_summary, field_words, item_changes},
    counts::check_counts,
    generate, noun_forms, prompt, ChatView, ViewError, ViewKind,
};

/// The confirm form's field with the ticked item ids.
pub const IDS_FIELD: &str = "ids";

/// The confirm form's field with the approval scope.
pub const SCOPE_FIELD: &str = "scope";

/// The confirm view's facts: one row per item the call touches — its id, the
/// fields that identify it and, for a change, each field it sets as `old → new` (the old value
/// from the preview's row; only the new one when no preview showed the item). The tool's name
/// and the chunk plan are the approval card's Details, the summary (with the count) its line
/// above the view, the count again on the confirm button: the view binds only the rows.
#[must_use]
pub fn confirm_data(
    approval: &PendingApproval,
    manifest: &Manifest,
    operation: Option<&Operation>,
) -> Value {
    let rows = operation.map_or_else(Vec::new, |operation| {
        change_rows(&approval_changes(approval, manifest, operation))
    });
    json!({ "items": rows })
}

/// The one line that says what an approval does ("Set priority to medium on 38 items (now
/// low)"), computed from the exact call and the preview's rows.
#[must_use]
pub fn confirm_summary(approval: &PendingApproval, manifest: &Manifest) -> String {
    match manifest.operation(&approval.operation) {
        Some(operation) => change_summary(
            operation,
            &approval_changes(approval, manifest, operation),
            approval.preview.count,
        ),
        None => field_words(&approval.operation),
    }
}

fn approval_changes(
    approval: &PendingApproval,
    manifest: &Manifest,
    operation: &Operation,
) -> Vec<super::changes::ItemChange> {
    let id_field = manifest.row_id_field(approval.preview.preview_operation.as_deref());
    item_changes(
        operation,
        &approval.arguments,
        &approval.preview.items,
        id_field,
    )
}

pub(super) fn scope_label(scope: ApprovalScope, operation: &str) -> String {
    match scope {
        ApprovalScope::Once => "Only this once".to_owned(),
        ApprovalScope::Operation => {
            format!("Always allow “{}” in this chat", field_words(operation))
        }
        ApprovalScope::Session => "Every operation for the rest of this chat session".to_owned(),
    }
}

pub(super) fn confirm_schema(
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

pub(super) fn capitalized(text: &str) -> String {
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
    let data = confirm_data(approval, manifest, operation);
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
        summary: Some(confirm_summary(approval, manifest)),
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
pub(super) const CONFIRM_PAGE_SIZE: u32 = 500;

/// Puts the confirm and Deny buttons in one row before the item table, so the count and the
/// buttons are in view without scrolling past every item, and keeps the table on one page.
pub(super) fn actions_before_items(tree: &mut PageTree) {
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
pub(super) fn form_after_heading(tree: &mut PageTree, form: &str) {
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

pub(super) fn node(component: &str, props: Value) -> Node {
    Node {
        component: component.to_owned(),
        props,
        children: Vec::new(),
    }
}

/// Code's guarantee on a view with a download: a CSV and a JSON link over `data` (a pointer into
/// the view's data) are always offered, whatever the model placed; the files' contents are code's.
pub(super) fn offer_downloads(tree: &mut PageTree, what: &str, data: &str, filename: &str) {
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
            let label = format!(
                "Download the {what} as {}",
                format.extension().to_uppercase()
            );
            tree.nodes.insert(
                id.clone(),
                node(
                    "DownloadLink",
                    json!({"label": label, "format": format.extension(),
                           "data": {"$data": data}, "filename": filename}),
                ),
            );
            tree.order.push(id);
        }
    }
}

pub(super) fn unused_id(tree: &PageTree, stem: &str) -> String {
    let mut id = stem.to_owned();
    let mut n = 1;
    while tree.nodes.contains_key(&id) {
        n += 1;
        id = format!("{stem}_{n}");
    }
    id
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::chat::{
        confirm::{operation_hash, ConfirmationId, ConfirmationPreview},
        threads::ThreadId,
    };

    fn approval(destructive: bool, count: usize) -> PendingApproval {
        let arguments = json!({"ids": ["a", "b", "c"]});
        PendingApproval {
            confirmation_id: ConfirmationId::new(),
            thread_id: ThreadId(uuid::Uuid::new_v4()),
            operation: "bulkDeleteItems".to_owned(),
            hash: operation_hash("bulkDeleteItems", &arguments),
            arguments,
            reasons: Vec::new(),
            reasons_text: Vec::new(),
            preview: ConfirmationPreview {
                count,
                items: Vec::new(),
                chunks: vec![count],
                preview_operation: None,
            },
            destructive,
            allowed_scopes: vec![ApprovalScope::Once],
            question: String::new(),
        }
    }

    #[test]
    fn the_confirm_button_names_code_s_count_and_says_delete_only_for_deletes() {
        assert_eq!(confirm_label(&approval(true, 3)), "Delete 3 items");
        assert_eq!(confirm_label(&approval(false, 1)), "Approve 1 item");
        assert_eq!(
            scope_label(ApprovalScope::Operation, "bulkDeleteItems"),
            "Always allow “bulk delete items” in this chat"
        );
    }
}
