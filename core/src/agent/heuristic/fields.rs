//! One control per schema field: which component a field kind gets, with the props its rules
//! imply.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::{clip, literal, words, Planned, RADIO_LIMIT};
use crate::forms::{answerable, humanize, FieldKind, FormField, StringFormat};

/// Words in a field's name that mean a person writes more than one line.
const LONG_TEXT_NAMES: &[&str] = &[
    "note",
    "notes",
    "comment",
    "comments",
    "reason",
    "description",
    "message",
    "body",
    "details",
    "detail",
    "feedback",
    "explanation",
    "summary",
    "bio",
    "content",
    "justification",
    "remarks",
    "instructions",
    "story",
    "text",
    "why",
];

/// Phrases in a field's description that mean the same.
const LONG_TEXT_DESCRIPTIONS: &[&str] = &[
    "long",
    "paragraph",
    "explain",
    "multi-line",
    "multiline",
    "several lines",
    "free text",
    "in detail",
    "comment",
    "note",
];
/// The label of an enum option: snake-case values are humanized, anything else kept as written.
fn option_label(value: &str) -> String {
    let plain = value.chars().all(|character| {
        character.is_ascii_lowercase() || character.is_ascii_digit() || character == '_'
    });
    if plain
        && value
            .chars()
            .any(|character| character.is_ascii_lowercase())
    {
        literal(&humanize(value))
    } else {
        literal(value)
    }
}

pub(super) fn options(values: &[String]) -> Value {
    Value::Array(
        values
            .iter()
            .map(|value| json!({"value": value, "label": option_label(value)}))
            .collect(),
    )
}

fn is_long_text(field: &FormField) -> bool {
    let name_words = words(&field.name);
    if name_words
        .iter()
        .any(|word| LONG_TEXT_NAMES.contains(&word.as_str()))
    {
        return true;
    }
    let description = field
        .description
        .as_deref()
        .unwrap_or_default()
        .to_lowercase();
    LONG_TEXT_DESCRIPTIONS
        .iter()
        .any(|phrase| description.contains(phrase))
}

/// Whether `field` takes prose (several lines): an unformatted string named or described as
/// such, or allowed more than 200 characters, and not capped at 80.
pub(crate) fn is_prose(field: &FormField) -> bool {
    let FieldKind::String {
        format: None,
        max_length,
        ..
    } = &field.kind
    else {
        return false;
    };
    (is_long_text(field) || max_length.is_some_and(|longest| longest > 200))
        && !max_length.is_some_and(|longest| longest <= 80)
}

/// The field component for `field`, choosing among the offered tools.
pub(super) fn field_component(field: &FormField, offered: &BTreeSet<&str>) -> Option<Planned> {
    let has = |name: &str| offered.contains(name);
    let component = match &field.kind {
        FieldKind::Enum { options: values } => {
            let radio_first = values.len() <= RADIO_LIMIT;
            match (radio_first, has("RadioGroup"), has("Select")) {
                (true, true, _) | (false, true, false) => "RadioGroup",
                (_, _, true) => "Select",
                _ => return None,
            }
        }
        FieldKind::Boolean if has("Checkbox") => "Checkbox",
        FieldKind::EnumArray { .. } if has("CheckboxGroup") => "CheckboxGroup",
        FieldKind::EnumArray { .. } if has("Select") => "Select",
        FieldKind::StringArray { .. } if has("MultiTextInput") => "MultiTextInput",
        FieldKind::Number { .. } | FieldKind::Integer { .. } if has("Input") => "Input",
        FieldKind::String { format, .. } => {
            if is_prose(field) && has("TextArea") {
                "TextArea"
            } else if has("Input") {
                "Input"
            } else if has("TextArea") && format.is_none() {
                "TextArea"
            } else {
                return None;
            }
        }
        _ => return None,
    };
    // Everything the schema says (type, step, bounds, required, help, placeholder, default)
    // comes from one place, so the heuristic's page and a model's completed one agree.
    let mut props = answerable::schema_props(component, field);
    props.insert("name".into(), json!(field.name));
    if let Some(help) = field.description.as_deref().map(str::trim) {
        if !help.is_empty() {
            props.insert("help".into(), json!(literal(&clip(help, 200))));
        }
    }
    match (&field.kind, component) {
        (
            FieldKind::Enum { options: values }
            | FieldKind::EnumArray {
                options: values, ..
            },
            _,
        ) => {
            props.insert("options".into(), options(values));
            if component == "Select" && field.kind.is_array() {
                props.insert("multiple".into(), json!(true));
            }
        }
        (
            FieldKind::StringArray {
                min_items,
                max_items,
                ..
            },
            _,
        ) => {
            let minimum = min_items.unwrap_or(0);
            let most = max_items.map(|most| most.min(50));
            if let Some(most) = most.filter(|most| *most >= 1) {
                props.insert("maxRows".into(), json!(most.max(minimum.min(50))));
            }
            // Without JavaScript no row can be added: show every row a short list may need.
            let rows = match most.filter(|most| *most >= 1) {
                Some(most) => most.min(10).max(minimum.min(most)),
                None => minimum.max(3),
            };
            if rows != 3 {
                props.insert("rows".into(), json!(rows.clamp(1, 20)));
            }
        }
        (FieldKind::String { .. }, "TextArea") => {
            props.insert("rows".into(), json!(4));
        }
        (FieldKind::String { format, .. }, "Input") => {
            let placeholder = match format {
                Some(StringFormat::Email) => Some("name@example.com"),
                Some(StringFormat::Url | StringFormat::Uri) => Some("https://example.com"),
                Some(StringFormat::DateTime) => Some("2026-01-31T12:00:00Z"),
                _ => None,
            };
            if let Some(placeholder) = placeholder {
                props
                    .entry("placeholder")
                    .or_insert_with(|| json!(placeholder));
            }
            if format.is_none() && words(&field.name).iter().any(|word| word == "password") {
                props.insert("type".into(), json!("password"));
            }
        }
        _ => {}
    }
    Some(Planned::new(component, Value::Object(props)))
}
