//! What placed things are called: data keys take the response schema's titles, and a display
//! request's heading is cut to what it shows.

use serde_json::{Map, Value};

use crate::agent::heuristic::literal;
use crate::forms::{humanize, FormSchema};

/// Labels from the response schema: a data key with a field of the same name takes its title.
pub(super) struct Labels<'a> {
    schema: Option<&'a FormSchema>,
}

impl<'a> Labels<'a> {
    pub(super) fn new(schema: Option<&'a FormSchema>) -> Self {
        Self { schema }
    }

    /// The title of the field named `key`, else `key` humanized.
    pub(super) fn of(&self, key: &str) -> String {
        self.schema
            .and_then(|schema| schema.fields.iter().find(|field| field.name == key))
            .and_then(|field| field.title.as_deref())
            .map(str::trim)
            .filter(|title| !title.is_empty())
            .map_or_else(|| humanize(key), str::to_owned)
    }

    /// Replaces a humanized key in a label placed elsewhere by that key's title.
    fn retitle(&self, label: &str) -> Option<String> {
        let schema = self.schema?;
        schema.fields.iter().find_map(|field| {
            let title = field.title.as_deref()?.trim();
            (!title.is_empty() && label == humanize(&field.name)).then(|| title.to_owned())
        })
    }
}

pub(super) fn lower_first(text: &str) -> String {
    let mut characters = text.chars();
    match characters.next() {
        // Keep acronyms ("EUR", "MRR") as written.
        Some(_) if characters.clone().next().is_some_and(char::is_uppercase) => text.to_owned(),
        Some(initial) => initial.to_lowercase().chain(characters).collect(),
        None => String::new(),
    }
}

/// The heading of a display request whose first sentence lists what to show: the part before
/// the colon, without a leading "Show (me)" ("Show this week's sales dashboard: totals, …" →
/// "This week's sales dashboard"). The summary line says the rest.
pub(super) fn short_heading(text: &str) -> String {
    let before = text.split_once(": ").map_or(text, |(before, _)| before);
    let mut heading = before.trim();
    for prefix in ["Show me ", "Show ", "show me ", "show "] {
        if let Some(stripped) = heading.strip_prefix(prefix) {
            heading = stripped;
            break;
        }
    }
    if heading.split_whitespace().count() < 2 {
        return text.to_owned();
    }
    let mut characters = heading.chars();
    characters
        .next()
        .map(|initial| initial.to_uppercase().chain(characters).collect())
        .unwrap_or_else(|| text.to_owned())
}

/// Applies schema titles to the display labels of one node's props (not to form fields, whose
/// labels the field planning takes from the schema already).
pub(super) fn retitle_props(props: &mut Value, labels: &Labels<'_>) {
    let Value::Object(map) = props else {
        return;
    };
    if map.contains_key("name") {
        return;
    }
    for key in ["label", "caption", "xLabel", "yLabel"] {
        retitle_at(map, key, labels);
    }
    for list in ["columns", "items"] {
        if let Some(Value::Array(entries)) = map.get_mut(list) {
            for entry in entries {
                if let Value::Object(entry) = entry {
                    retitle_at(entry, "label", labels);
                }
            }
        }
    }
}

fn retitle_at(map: &mut Map<String, Value>, key: &str, labels: &Labels<'_>) {
    let title = map
        .get(key)
        .and_then(Value::as_str)
        .and_then(|label| labels.retitle(label));
    if let Some(title) = title {
        map.insert(key.to_owned(), Value::String(literal(&title)));
    }
}
