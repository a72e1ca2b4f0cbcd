//! A list of records against its `RecordList`: a column for every record field (by its path
//! inside the record), no column for anything else, and values for read-only required columns.

use serde_json::Value;
use tessera_app::tree::{PageTree, PlacedField};

use super::{issue, wording::describe_kind, FormIssue};
use crate::{FieldKind, FormField};

/// Every field of a record, by its path inside the record (`quantity`, `dimensions.width`).
pub(super) fn record_paths(members: &[FormField]) -> Vec<(String, &FormField)> {
    let mut found = Vec::new();
    for member in members {
        match &member.kind {
            FieldKind::Object { fields } => {
                for (path, inner) in record_paths(fields) {
                    found.push((format!("{}.{path}", member.name), inner));
                }
            }
            _ => found.push((member.name.clone(), member)),
        }
    }
    found
}

/// A `RecordList`'s columns against the record's fields: each field has a column (a read-only
/// one covers it too, its value travelling hidden), no column names something else, and a
/// read-only column of a required field has bound rows to take its value from.
pub(super) fn check_record_columns(
    tree: &PageTree,
    placed: &PlacedField,
    members: &[FormField],
    errors: &mut Vec<FormIssue>,
) {
    let Some(node) = tree.nodes.get(&placed.node) else {
        return;
    };
    let columns: Vec<(String, bool)> = node
        .props
        .get("columns")
        .and_then(Value::as_array)
        .map(|columns| {
            columns
                .iter()
                .filter_map(|column| {
                    let field = column.get("field")?.as_str()?.to_owned();
                    let read_only = column
                        .get("read_only")
                        .or_else(|| column.get("readOnly"))
                        .and_then(Value::as_bool)
                        .unwrap_or(false);
                    Some((field, read_only))
                })
                .collect()
        })
        .unwrap_or_default();
    let has_rows = node.props.get("rows").is_some_and(|rows| !rows.is_null());
    let paths = record_paths(members);
    let list = &placed.name;
    for (column, read_only) in &columns {
        let Some((_, member)) = paths.iter().find(|(path, _)| path == column) else {
            errors.push(issue(
                Some(&placed.node),
                Some(list),
                "unknown_record_field",
                format!("RecordList `{}` has a column `{column}`, which records of `{list}` do not have", placed.node),
                format!(
                    "name columns after the record's fields: {}",
                    paths.iter().map(|(path, _)| format!("`{path}`")).collect::<Vec<_>>().join(", ")
                ),
            ));
            continue;
        };
        if *read_only && !has_rows && member.required {
            errors.push(issue(
                Some(&placed.node),
                Some(&format!("{list}[].{column}")),
                "read_only_without_rows",
                format!("column `{column}` of RecordList `{}` is read-only, but no rows give its value and `{list}[].{column}` is required", placed.node),
                "bind `rows` to the data rows the records correct, or make the column editable".into(),
            ));
        }
    }
    for (path, member) in &paths {
        if !columns.iter().any(|(column, _)| column == path) {
            errors.push(issue(
                Some(&placed.node),
                Some(&format!("{list}[].{path}")),
                "missing_record_field",
                format!(
                    "records of `{list}` have `{path}` ({}), but RecordList `{}` has no column for it",
                    describe_kind(&member.kind),
                    placed.node
                ),
                format!("add {{\"field\": \"{path}\"}} to the columns (with \"read_only\": true to show it unchanged)"),
            ));
        }
    }
}
