//! The read-only receipt a submitted link shows: what was submitted, labelled by the schema.
//!
//! Built as a page tree of catalog components so it looks like every other page and is escaped by
//! the same renderer.

use serde_json::{json, Value};
use tessera_app::tree::PageTree;

use crate::forms::FormSchema;

pub use crate::workflow::step::{cancelled_response, is_cancelled_response as is_cancelled};

/// A receipt for `response` (labels from `schema` when there is one), headed by `heading`.
#[must_use]
pub fn receipt_tree(
    heading: &str,
    schema: Option<&FormSchema>,
    response: &Value,
    submitted_at_ms: Option<i64>,
) -> PageTree {
    let items: Vec<Value> = if is_cancelled(response) {
        vec![json!({"label": "Answer", "value": "Cancelled"})]
    } else {
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
    };
    let when = submitted_at_ms
        .map(|ms| format!("Submitted {}.", format_utc(ms)))
        .unwrap_or_default();
    let nodes = json!({
        "heading": {"component": "Heading", "props": {"text": heading, "level": 1}},
        "status": {"component": "Alert", "props": {"tone": "success", "text": format!("This link has been used. {when} It cannot be submitted again.")}},
        "answers": {"component": "KeyValue", "props": {"items": items}}
    });
    serde_json::from_value(json!({"nodes": nodes, "order": ["heading", "status", "answers"]}))
        .unwrap_or_default()
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

/// `YYYY-MM-DD HH:MM UTC` from unix milliseconds, without a date library.
#[must_use]
pub fn format_utc(ms: i64) -> String {
    let seconds = ms.div_euclid(1000);
    let days = seconds.div_euclid(86_400);
    let of_day = seconds.rem_euclid(86_400);
    // Civil-from-days (Howard Hinnant's algorithm).
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        of_day / 3600,
        (of_day % 3600) / 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forms::{FieldKind, FormField};
    use tessera_app::catalog::Catalog;

    #[test]
    fn timestamps_format_as_utc_dates() {
        assert_eq!(format_utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(format_utc(1_795_000_000_000), "2026-11-18 11:06 UTC");
        assert_eq!(format_utc(951_782_400_000), "2000-02-29 00:00 UTC");
    }

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
    fn a_cancelled_response_reads_as_cancelled() {
        let tree = receipt_tree("Thanks", None, &cancelled_response(), None);
        assert_eq!(
            tree.nodes["answers"].props["items"][0]["value"],
            "Cancelled"
        );
    }
}
