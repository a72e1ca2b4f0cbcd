//! What an approval will change, in a person's words: per item, each field the call sets as
//! `old → new` (the old value read from the preview's row for that item), the fields that tell
//! which item it is, and a one-line summary ("Set priority to medium on 38 items (now low)").
//!
//! Everything here is computed by code from the exact call the approval is bound to and the rows
//! the preview read returned; nothing comes from a model's text. Where no row gives an item's
//! current values (no preview read declared or found), only the new value is shown. This module
//! does no I/O and knows no site: field names and values are whatever the manifest's operation
//! and the site's rows hold.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::chat::{
    confirm::grouped_calls,
    manifest::{id_text, Operation, Tag},
    orchestrator::plural,
};

use super::noun_forms;

/// Fields tried, in order, as an item's name when the manifest names no identifying fields.
const TITLE_FIELDS: [&str; 8] = [
    "title",
    "name",
    "summary",
    "subject",
    "label",
    "login",
    "email",
    "description",
];

/// The most characters a value shows in a cell or the summary.
const VALUE_CHARS: usize = 60;

/// How many values of one field the summary lists before "and N more".
const SUMMARY_VALUES: usize = 3;

/// One field an approval sets on one item.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldChange {
    /// The field (the call's argument name).
    pub field: String,
    /// Its current value, when the preview showed the item.
    pub old: Option<Value>,
    /// The value the call sets.
    pub new: Value,
}

impl FieldChange {
    /// The cell a person reads: `low → medium`, `medium (no change)`, or `→ medium` when the
    /// current value is not known.
    #[must_use]
    pub fn cell(&self) -> String {
        let new = value_words(&self.new);
        match &self.old {
            Some(old) if same_value(old, &self.new) => format!("{new} (no change)"),
            Some(old) => format!("{} → {new}", value_words(old)),
            None => format!("→ {new}"),
        }
    }
}

/// One item an approval touches: its id, what identifies it to a person, and what changes.
#[derive(Clone, Debug, PartialEq)]
pub struct ItemChange {
    /// The id the call carries.
    pub id: String,
    /// Identifying fields and their text (a title, a name), from the preview's row.
    pub identity: Vec<(String, String)>,
    /// The fields the call sets on it (empty for a delete).
    pub changes: Vec<FieldChange>,
}

/// The per-item changes of a call (or of every call of a group confirmation), in call order.
/// `rows` are the preview's rows, matched to the call's ids by `id_field`.
#[must_use]
pub fn item_changes(
    operation: &Operation,
    arguments: &Value,
    rows: &[Value],
    id_field: &str,
) -> Vec<ItemChange> {
    let by_id: HashMap<String, &Value> = rows
        .iter()
        .filter_map(|row| row.get(id_field).map(|id| (id_text(id), row)))
        .collect();
    let identifying = identifying_fields(operation, rows, id_field);
    let calls: Vec<Value> = match grouped_calls(arguments) {
        Some(calls) => calls.into_iter().map(|call| call.arguments).collect(),
        None => vec![arguments.clone()],
    };
    let deletes = operation.has(Tag::Delete);
    let mut items = Vec::new();
    for call in &calls {
        let set = if deletes {
            Vec::new()
        } else {
            set_fields(operation, call)
        };
        for id in operation.item_ids(call) {
            let row = by_id.get(&id).copied();
            let identity = identifying
                .iter()
                .filter_map(|field| {
                    let value = row?.get(field)?;
                    let text = value_words(value);
                    (!text.is_empty()).then(|| (field.clone(), text))
                })
                .collect();
            let changes = set
                .iter()
                .map(|(field, new)| FieldChange {
                    field: field.clone(),
                    old: row.and_then(|row| row.get(field)).cloned(),
                    new: new.clone(),
                })
                .collect();
            items.push(ItemChange {
                id,
                identity,
                changes,
            });
        }
    }
    items
}

/// The fields a call sets: its arguments, except those that carry the ids of the items and the
/// path placeholders that only say where the items live (`owner`, `repo`).
#[must_use]
pub fn set_fields(operation: &Operation, arguments: &Value) -> Vec<(String, Value)> {
    let ids = operation.id_arguments();
    let placeholders = operation.http.placeholders();
    arguments
        .as_object()
        .map(|object| {
            object
                .iter()
                .filter(|(key, _)| !ids.contains(&key.as_str()) && !placeholders.contains(*key))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// The row fields that identify an item: the manifest's, else the first title-like field the
/// rows have. The id itself is shown in a column of its own, so it is never listed here.
#[must_use]
pub fn identifying_fields(operation: &Operation, rows: &[Value], id_field: &str) -> Vec<String> {
    if !operation.identifying_fields.is_empty() {
        return operation
            .identifying_fields
            .iter()
            .filter(|field| field.as_str() != id_field)
            .cloned()
            .collect();
    }
    TITLE_FIELDS
        .iter()
        .find(|field| rows.iter().any(|row| row.get(**field).is_some()))
        .map(|field| vec![(*field).to_owned()])
        .unwrap_or_default()
}

/// The confirm view's rows: the id, the identifying fields, then one `old → new` cell per changed
/// field (keyed by the field, so the table's column says which).
#[must_use]
pub fn change_rows(items: &[ItemChange]) -> Vec<Value> {
    items
        .iter()
        .map(|item| {
            let mut row = Map::new();
            row.insert("id".to_owned(), Value::String(item.id.clone()));
            for (field, text) in &item.identity {
                row.insert(field.clone(), Value::String(text.clone()));
            }
            for change in &item.changes {
                row.insert(change.field.clone(), Value::String(change.cell()));
            }
            Value::Object(row)
        })
        .collect()
}

/// The one line that says what an approval does, in plain words: "Set priority to medium on 38
/// items (now low)", "Delete 3 items", "Create an item with title Buy milk".
#[must_use]
pub fn change_summary(operation: &Operation, items: &[ItemChange], count: usize) -> String {
    let (singular, plural_noun) = noun_forms(&operation.entity);
    let noun = |count: usize| {
        if count == 1 {
            format!("1 {singular}")
        } else {
            format!("{count} {plural_noun}")
        }
    };
    let count = count.max(items.len());
    if operation.has(Tag::Delete) {
        let named: Vec<String> = items
            .iter()
            .filter_map(|item| item.identity.first().map(|(_, text)| text.clone()))
            .collect();
        return match (count, named.as_slice()) {
            (1, [name]) => format!("Delete 1 {singular} ({name})"),
            _ => format!("Delete {}", noun(count)),
        };
    }
    let fields = field_order(items);
    if fields.is_empty() {
        let verb = if operation.has(Tag::Create) {
            "Create"
        } else {
            "Change"
        };
        return format!("{verb} {}", noun(count.max(1)));
    }
    let setting: Vec<String> = fields
        .iter()
        .map(|field| {
            let news = distinct(items, field, |change| Some(&change.new));
            format!("{} to {}", field_words(field), either(&news))
        })
        .collect();
    let mut line = if operation.has(Tag::Create) {
        format!("Create {} with {}", noun(count.max(1)), and_list(&setting))
    } else {
        format!("Set {} on {}", and_list(&setting), noun(count.max(1)))
    };
    let now: Vec<(String, Vec<String>)> = fields
        .iter()
        .map(|field| {
            let olds = distinct(items, field, |change| change.old.as_ref());
            (field_words(field), olds)
        })
        .filter(|(_, olds)| !olds.is_empty())
        .collect();
    match now.as_slice() {
        [] => {}
        [(_, olds)] if fields.len() == 1 => line.push_str(&format!(" (now {})", either(olds))),
        several => {
            let parts: Vec<String> = several
                .iter()
                .map(|(field, olds)| format!("{field} {}", either(olds)))
                .collect();
            line.push_str(&format!(" (now {})", parts.join(", ")));
        }
    }
    line
}

/// The changed fields in the order they first appear.
fn field_order(items: &[ItemChange]) -> Vec<String> {
    let mut fields: Vec<String> = Vec::new();
    for change in items.iter().flat_map(|item| &item.changes) {
        if !fields.contains(&change.field) {
            fields.push(change.field.clone());
        }
    }
    fields
}

/// The distinct texts of one field's `pick`ed values over every item, in first-seen order.
fn distinct(
    items: &[ItemChange],
    field: &str,
    pick: impl Fn(&FieldChange) -> Option<&Value>,
) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for change in items
        .iter()
        .flat_map(|item| &item.changes)
        .filter(|change| change.field == field)
    {
        if let Some(value) = pick(change) {
            let text = value_words(value);
            if !seen.contains(&text) {
                seen.push(text);
            }
        }
    }
    seen
}

/// "low", "low or high", "low, high or medium", "low, high, medium or 2 more".
fn either(values: &[String]) -> String {
    match values {
        [] => String::new(),
        [one] => one.clone(),
        _ if values.len() > SUMMARY_VALUES => format!(
            "{} or {}",
            values[..SUMMARY_VALUES].join(", "),
            plural(values.len() - SUMMARY_VALUES, "other value")
        ),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// "a", "a and b", "a, b and c".
fn and_list(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// A field name as words: `due_date` → "due date", `dueDate` → "due date".
#[must_use]
pub fn field_words(field: &str) -> String {
    let mut words = String::new();
    let mut previous_lower = false;
    for character in field.chars() {
        if matches!(character, '_' | '-' | '.' | '/' | ' ') {
            if !words.ends_with(' ') && !words.is_empty() {
                words.push(' ');
            }
            previous_lower = false;
            continue;
        }
        if character.is_uppercase() && previous_lower {
            words.push(' ');
        }
        previous_lower = character.is_lowercase() || character.is_ascii_digit();
        words.extend(character.to_lowercase());
    }
    words.trim().to_owned()
}

/// A value as a person reads it: text as it is, lists joined, records by their name, nothing as
/// "nothing"; cut to [`VALUE_CHARS`] characters.
#[must_use]
pub fn value_words(value: &Value) -> String {
    let text = match value {
        Value::Null => "nothing".to_owned(),
        Value::Bool(true) => "yes".to_owned(),
        Value::Bool(false) => "no".to_owned(),
        Value::Number(number) => number.to_string(),
        Value::String(text) => text.clone(),
        Value::Array(values) if values.is_empty() => "nothing".to_owned(),
        Value::Array(values) => values
            .iter()
            .map(value_words)
            .collect::<Vec<_>>()
            .join(", "),
        Value::Object(object) => TITLE_FIELDS
            .iter()
            .find_map(|field| object.get(*field).and_then(Value::as_str))
            .map_or_else(|| value.to_string(), str::to_owned),
    };
    if text.chars().count() > VALUE_CHARS {
        let cut: String = text.chars().take(VALUE_CHARS).collect();
        format!("{}…", cut.trim_end())
    } else {
        text
    }
}

/// Whether a current value already is the new one (`5` and `"5"` alike, lists by their words).
fn same_value(old: &Value, new: &Value) -> bool {
    old == new || value_words(old) == value_words(new)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::chat::manifest::Manifest;

    fn demo() -> anyhow::Result<Manifest> {
        Ok(Manifest::from_json(crate::demo::items::MANIFEST_JSON)?)
    }

    fn rows() -> Vec<Value> {
        vec![
            json!({"id": "item-0001", "title": "Buy milk", "status": "open", "priority": "low"}),
            json!({"id": "item-0002", "title": "Call Bo", "status": "open", "priority": "high"}),
            json!({"id": "item-0003", "title": "File taxes", "status": "in_progress", "priority": "low"}),
        ]
    }

    fn summary_of(
        manifest: &Manifest,
        operation: &str,
        arguments: &Value,
        rows: &[Value],
    ) -> anyhow::Result<(String, Vec<ItemChange>)> {
        let operation = manifest
            .operation(operation)
            .ok_or_else(|| anyhow::anyhow!("no {operation}"))?;
        let items = item_changes(operation, arguments, rows, "id");
        let count = operation.item_ids(arguments).len();
        Ok((change_summary(operation, &items, count), items))
    }

    #[test]
    fn one_field_with_one_current_value_reads_as_a_sentence() -> anyhow::Result<()> {
        let manifest = demo()?;
        let arguments = json!({"ids": ["item-0001", "item-0003"], "priority": "medium"});
        let (summary, items) = summary_of(&manifest, "bulkUpdateItems", &arguments, &rows())?;
        assert_eq!(summary, "Set priority to medium on 2 items (now low)");
        assert_eq!(items[0].changes[0].cell(), "low → medium");
        assert_eq!(
            items[0].identity,
            vec![("title".to_owned(), "Buy milk".to_owned())]
        );
        Ok(())
    }

    #[test]
    fn mixed_current_values_are_all_named() -> anyhow::Result<()> {
        let manifest = demo()?;
        let arguments =
            json!({"ids": ["item-0001", "item-0002", "item-0003"], "priority": "medium"});
        let (summary, _) = summary_of(&manifest, "bulkUpdateItems", &arguments, &rows())?;
        assert_eq!(
            summary,
            "Set priority to medium on 3 items (now low or high)"
        );
        Ok(())
    }

    #[test]
    fn several_fields_are_listed_with_each_current_value() -> anyhow::Result<()> {
        let manifest = demo()?;
        let arguments =
            json!({"ids": ["item-0001", "item-0003"], "priority": "high", "status": "completed"});
        let (summary, items) = summary_of(&manifest, "bulkUpdateItems", &arguments, &rows())?;
        assert_eq!(
            summary,
            "Set priority to high and status to completed on 2 items (now priority low, status open or in_progress)"
        );
        let rows = change_rows(&items);
        assert_eq!(
            rows[1],
            json!({"id": "item-0003", "title": "File taxes", "priority": "low → high", "status": "in_progress → completed"})
        );
        Ok(())
    }

    #[test]
    fn without_a_preview_row_only_the_new_value_is_shown() -> anyhow::Result<()> {
        let manifest = demo()?;
        let arguments = json!({"id": "item-0042", "status": "completed"});
        let (summary, items) = summary_of(&manifest, "updateItem", &arguments, &[])?;
        assert_eq!(summary, "Set status to completed on 1 item");
        assert_eq!(items[0].changes[0].cell(), "→ completed");
        assert!(items[0].identity.is_empty());
        Ok(())
    }

    #[test]
    fn a_value_already_set_says_no_change() -> anyhow::Result<()> {
        let manifest = demo()?;
        let arguments = json!({"ids": ["item-0002"], "priority": "high"});
        let (summary, items) = summary_of(&manifest, "bulkUpdateItems", &arguments, &rows())?;
        assert_eq!(summary, "Set priority to high on 1 item (now high)");
        assert_eq!(items[0].changes[0].cell(), "high (no change)");
        Ok(())
    }

    #[test]
    fn a_delete_names_what_goes_and_sets_nothing() -> anyhow::Result<()> {
        let manifest = demo()?;
        let (one, items) = summary_of(
            &manifest,
            "deleteItem",
            &json!({"id": "item-0002"}),
            &rows(),
        )?;
        assert_eq!(one, "Delete 1 item (Call Bo)");
        assert!(items[0].changes.is_empty());
        let (many, _) = summary_of(
            &manifest,
            "bulkDeleteItems",
            &json!({"ids": ["item-0001", "item-0002"]}),
            &rows(),
        )?;
        assert_eq!(many, "Delete 2 items");
        Ok(())
    }

    #[test]
    fn a_group_of_single_item_calls_adds_up_to_one_sentence() -> anyhow::Result<()> {
        let manifest = demo()?;
        let arguments = json!([
            {"call_id": "a", "arguments": {"id": "item-0001", "priority": "medium"}},
            {"call_id": "b", "arguments": {"id": "item-0002", "priority": "medium"}}
        ]);
        let operation = manifest
            .operation("updateItem")
            .ok_or_else(|| anyhow::anyhow!("no updateItem"))?;
        let items = item_changes(operation, &arguments, &rows(), "id");
        assert_eq!(
            change_summary(operation, &items, 2),
            "Set priority to medium on 2 items (now low or high)"
        );
        Ok(())
    }

    #[test]
    fn another_sites_fields_and_ids_work_the_same() -> anyhow::Result<()> {
        let manifest = Manifest::from_json(
            &json!({"site": "gh", "base_url": "https://api.example.com", "operations": [
                {"name": "listIssues", "description": "", "entity": "issues", "tags": ["readonly", "list", "filterable"],
                 "id_field": "number",
                 "http": {"method": "GET", "path": "/repos/{owner}/{repo}/issues"},
                 "parameters": {"type": "object", "properties": {"owner": {"type": "string"}, "repo": {"type": "string"}}, "required": ["owner", "repo"]}},
                {"name": "updateIssue", "description": "", "entity": "issues", "tags": ["mutating", "update"],
                 "id_argument": "issue_number", "requires_preview": "listIssues",
                 "http": {"method": "PATCH", "path": "/repos/{owner}/{repo}/issues/{issue_number}"},
                 "parameters": {"type": "object", "properties": {"owner": {"type": "string"}, "repo": {"type": "string"},
                   "issue_number": {"type": "integer"}, "state": {"type": "string"}}, "required": ["owner", "repo", "issue_number"]}}
            ]})
            .to_string(),
        )?;
        let operation = manifest
            .operation("updateIssue")
            .ok_or_else(|| anyhow::anyhow!("no updateIssue"))?;
        let rows = vec![
            json!({"number": 7, "title": "Crash on start", "state": "open", "labels": [{"name": "bug"}]}),
        ];
        let arguments = json!({"owner": "o", "repo": "r", "issue_number": 7, "state": "closed"});
        let items = item_changes(
            operation,
            &arguments,
            &rows,
            manifest.row_id_field(Some("listIssues")),
        );
        assert_eq!(
            change_summary(operation, &items, 1),
            "Set state to closed on 1 issue (now open)"
        );
        assert_eq!(
            change_rows(&items),
            vec![json!({"id": "7", "title": "Crash on start", "state": "open → closed"})]
        );
        assert_eq!(value_words(&rows[0]["labels"]), "bug");
        assert_eq!(field_words("dueDate"), "due date");
        assert_eq!(field_words("issue_number"), "issue number");
        Ok(())
    }
}
