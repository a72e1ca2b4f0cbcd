//! The read-only receipt a submitted link shows: what was submitted, labelled by the schema.
//!
//! Built as a page tree of catalog components so it looks like every other page and is escaped by
//! the same renderer.

use serde_json::{json, Value};
use tessera_app::tree::PageTree;

use super::{
    lifecycle::Link,
    page::{Page, PageStatus},
    people::{AnswerRecord, Assignee, Outcome},
};
use crate::{
    forms::FormSchema,
    store::records::unanswered::{declined_by, Unanswered},
};

pub use crate::{
    store::records::unanswered::{cancelled_response, is_cancelled_response as is_cancelled},
    util::dates::format_utc,
};

/// The receipt `link` shows, headed by `heading`: an assignee's view of the request and who
/// decided it, or the page's one answer.
#[must_use]
pub fn link_receipt_tree(link: &Link, heading: &str) -> PageTree {
    let page = &link.page;
    let schema = page
        .schema
        .as_ref()
        .and_then(|schema| FormSchema::from_json_schema(schema).ok());
    match &link.holder {
        Some(holder) => assignee_receipt_tree(
            heading,
            schema.as_ref(),
            page,
            holder,
            &link.people,
            &link.answers(),
        ),
        None => {
            let response = page.response.clone().unwrap_or_default();
            receipt_tree(heading, schema.as_ref(), &response, page.submitted_at_ms)
        }
    }
}

/// A short notice in place of a page that cannot be answered: `heading` and what it means.
#[must_use]
pub fn notice_tree(heading: &str, message: &str) -> PageTree {
    let tree = json!({"nodes": {
        "heading": {"component": "Heading", "props": {"text": heading, "level": 1}},
        "message": {"component": "Text", "props": {"text": message}},
    }, "order": ["heading", "message"]});
    serde_json::from_value(tree).unwrap_or_default()
}

/// A receipt for `response` (labels from `schema` when there is one), headed by `heading`.
#[must_use]
pub fn receipt_tree(
    heading: &str,
    schema: Option<&FormSchema>,
    response: &Value,
    submitted_at_ms: Option<i64>,
) -> PageTree {
    let items: Vec<Value> = if Unanswered::of(response) == Some(Unanswered::Declined) {
        declined_items(response)
    } else if is_cancelled(response) {
        vec![json!({"label": "Answer", "value": "Cancelled"})]
    } else {
        receipt_items(schema, response)
    };
    let when = submitted_at_ms
        .map(|ms| format!("Submitted {}.", format_utc(ms)))
        .unwrap_or_default();
    let nodes = json!({
        "heading": {"component": "Heading", "props": {"text": heading, "level": 1}},
        "status": {"component": "Alert", "props": {"tone": "success", "text": format!("This request has been answered. {when} It cannot be answered again.")}},
        "answers": {"component": "KeyValue", "props": {"items": items}}
    });
    serde_json::from_value(json!({"nodes": nodes, "order": ["heading", "status", "answers"]}))
        .unwrap_or_default()
}

/// What a declined page's receipt lists: that it was declined, and why when the person said.
fn declined_items(response: &Value) -> Vec<Value> {
    let decline = declined_by(response);
    let mut items = vec![json!({"label": "Answer", "value": "Declined"})];
    if let Some(reason) = decline.reason {
        items.push(json!({"label": "Reason", "value": reason}));
    }
    items
}

/// The receipt an assignee's link shows once they answered or the page was settled: their own
/// answer (when they gave one), whether the request is decided and by whom, and every answer so
/// far.
#[must_use]
pub fn assignee_receipt_tree(
    heading: &str,
    schema: Option<&FormSchema>,
    page: &Page,
    holder: &Assignee,
    people: &[Assignee],
    answers: &[AnswerRecord],
) -> PageTree {
    let mut nodes = serde_json::Map::new();
    let mut order = Vec::new();
    let mut add = |id: &str, node: Value| {
        nodes.insert(id.to_owned(), node);
        order.push(id.to_owned());
    };
    add(
        "heading",
        json!({"component": "Heading", "props": {"text": heading, "level": 1}}),
    );
    add(
        "for",
        json!({"component": "Text", "props": {"text": match &holder.group {
            Some(group) => format!("This link is for {}, answering for {group}.", holder.email),
            None => format!("This link is for {}.", holder.email),
        }}}),
    );
    let (tone, status) = decision(page, people, answers);
    add(
        "status",
        json!({"component": "Alert", "props": {"tone": tone, "text": status}}),
    );
    if let Some(own) = &holder.answer {
        let items = match own.outcome {
            Outcome::Submitted => {
                let response = own.response.clone().unwrap_or_default();
                let mut items = receipt_items(schema, &response);
                items.push(json!({"label": "Submitted", "value": format_utc(own.at_ms)}));
                items
            }
            Outcome::Declined => {
                let mut items = vec![json!({"label": "Your answer", "value": "Declined"})];
                if let Some(reason) = &own.reason {
                    items.push(json!({"label": "Reason", "value": reason}));
                }
                items.push(json!({"label": "Declined", "value": format_utc(own.at_ms)}));
                items
            }
        };
        // A group's one answer may be another member's.
        let title = match (&holder.group, own.answered_by.as_deref()) {
            (Some(group), Some(by)) if by != holder.email => {
                format!("{group} has answered (by {by})")
            }
            _ => "Your answer".to_owned(),
        };
        add(
            "own",
            json!({"component": "Card", "props": {"title": title}, "children": ["own-items"]}),
        );
        add(
            "own-items",
            json!({"component": "KeyValue", "props": {"items": items}}),
        );
    }
    let everyone: Vec<Value> = people
        .iter()
        .map(|person| {
            let value = match &person.answer {
                None => "Not answered".to_owned(),
                Some(answer) => answer_line(answer),
            };
            json!({"label": person.email, "value": value})
        })
        .collect();
    add(
        "answers",
        json!({"component": "Card", "props": {"title": "Everyone asked"}, "children": ["answers-items"]}),
    );
    add(
        "answers-items",
        json!({"component": "KeyValue", "props": {"items": everyone}}),
    );
    serde_json::from_value(json!({"nodes": nodes, "order": order})).unwrap_or_default()
}

/// One person's answer in a few words: the outcome, when, and a decline's reason.
fn answer_line(answer: &AnswerRecord) -> String {
    let when = format_utc(answer.at_ms);
    match (answer.outcome, &answer.reason) {
        (Outcome::Submitted, _) => format!("Approved, {when}"),
        (Outcome::Declined, Some(reason)) => format!("Declined, {when}: {reason}"),
        (Outcome::Declined, None) => format!("Declined, {when}"),
    }
}

/// The tone and sentence saying whether a page with assignees is decided, and by whom.
fn decision(page: &Page, people: &[Assignee], answers: &[AnswerRecord]) -> (&'static str, String) {
    let who = |outcome: Outcome| {
        answers
            .iter()
            .filter(|answer| answer.outcome == outcome)
            .filter_map(|answer| answer.answered_by.clone())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let response = page.response.as_ref();
    match (page.status, response.and_then(Unanswered::of)) {
        (PageStatus::Submitted, None) => (
            "success",
            format!(
                "This request was decided: approved by {}.",
                who(Outcome::Submitted)
            ),
        ),
        (PageStatus::Submitted, Some(Unanswered::Declined)) => (
            "warning",
            format!(
                "This request was decided: declined by {}.",
                who(Outcome::Declined)
            ),
        ),
        (PageStatus::Submitted, Some(_)) => (
            "warning",
            "This request was cancelled before it was decided.".to_owned(),
        ),
        _ => {
            let required = page.approvals_required.unwrap_or(1);
            let approved = answers
                .iter()
                .filter(|answer| answer.outcome == Outcome::Submitted)
                .count();
            (
                "info",
                format!(
                    "Not decided yet: {approved} of the {required} approvals needed so far, from {} people asked.",
                    people.len()
                ),
            )
        }
    }
}

/// A response's fields as receipt items, labelled by the schema when there is one.
fn receipt_items(schema: Option<&FormSchema>, response: &Value) -> Vec<Value> {
    let object = response.as_object().cloned().unwrap_or_default();
    let labelled: Vec<(String, Value)> = match schema {
        Some(schema) => schema
            .fields
            .iter()
            .map(|field| {
                (
                    field.label(),
                    object.get(&field.name).cloned().unwrap_or(Value::Null),
                )
            })
            .collect(),
        None => object.into_iter().collect(),
    };
    labelled
        .into_iter()
        .map(|(label, value)| json!({"label": label, "value": display_value(&value)}))
        .collect()
}

fn display_value(value: &Value) -> String {
    match value {
        Value::Null => "—".to_owned(),
        Value::Bool(true) => "Yes".to_owned(),
        Value::Bool(false) => "No".to_owned(),
        Value::String(text) if text.is_empty() => "—".to_owned(),
        Value::String(text) => text.clone(),
        Value::Array(items) if items.is_empty() => "None".to_owned(),
        Value::Array(items) => items
            .iter()
            .map(display_value)
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forms::{FieldKind, FormField};
    use tessera_app::catalog::Catalog;

    #[test]
    fn a_receipt_lists_every_field_by_label_and_is_a_valid_tree() {
        let schema = FormSchema::new(vec![
            FormField::new("archive_ids", FieldKind::string_array()),
            FormField::new("note", FieldKind::string()).optional(),
            FormField::new("urgent", FieldKind::Boolean),
        ]);
        let tree = receipt_tree(
            "Thanks",
            Some(&schema),
            &json!({"archive_ids": ["m1", "m2"], "urgent": false}),
            Some(0),
        );
        assert!(tree.validate(&Catalog::defaults(), &json!({})).is_empty());
        let items = &tree.nodes["answers"].props["items"];
        assert_eq!(items[0], json!({"label": "Archive ids", "value": "m1, m2"}));
        assert_eq!(items[1], json!({"label": "Note", "value": "—"}));
        assert_eq!(items[2], json!({"label": "Urgent", "value": "No"}));
    }

    #[test]
    fn a_declined_response_reads_as_declined_with_its_reason() {
        let declined = crate::store::records::unanswered::declined_response(
            &crate::store::records::unanswered::Decline {
                reason: Some("Over budget".into()),
                by: None,
            },
        );
        let tree = receipt_tree("Thanks", None, &declined, None);
        let items = &tree.nodes["answers"].props["items"];
        assert_eq!(items[0]["value"], "Declined");
        assert_eq!(items[1], json!({"label": "Reason", "value": "Over budget"}));
    }

    #[test]
    fn a_cancelled_response_reads_as_cancelled() {
        let tree = receipt_tree("Thanks", None, &cancelled_response(), None);
        assert_eq!(
            tree.nodes["answers"].props["items"][0]["value"],
            "Cancelled"
        );
    }
}
