//! Fields answered by picking rows: which string-array fields name the ids of which array, and
//! the selectable Table or `DecisionTable` that offers those rows.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

use super::{columns, cues, literal, word_forms, words, Planned};
use crate::agent::{
    prompt::ParsedPrompt,
    summary::{DataEntry, JsonKind},
};
use crate::forms::{humanize, FieldKind, FormField, FormSchema};

/// How well array `entry` fits the selectable string-array `field`, when it fits at all: the
/// field must name the rows' id key (`archive_ids` ↔ `id`) in its name or description; naming
/// the array itself (`emails`) makes the fit better.
fn selectable_fit(field: &FormField, entry: &DataEntry) -> Option<u8> {
    let id_key = entry.id_key.as_deref()?;
    // A table with fewer rows than the answer needs cannot be answered (`too_few_options`).
    if let FieldKind::StringArray {
        min_items: Some(fewest),
        ..
    } = &field.kind
    {
        let rows = entry
            .length
            .and_then(|rows| u64::try_from(rows).ok())
            .unwrap_or(0);
        if rows < *fewest {
            return None;
        }
    }
    let field_words: Vec<String> = words(&field.name)
        .into_iter()
        .chain(field.title.as_deref().map(words).unwrap_or_default())
        .collect();
    let description_words = field.description.as_deref().map(words).unwrap_or_default();
    let id_words = words(id_key);
    let id_word = id_words.last()?;
    let names_id = word_forms(id_word)
        .iter()
        .any(|form| field_words.contains(form) || description_words.contains(form));
    if !names_id {
        return None;
    }
    let array_words = words(&entry.key());
    let names_array = array_words.iter().any(|word| {
        word_forms(word)
            .iter()
            .any(|form| field_words.contains(form) || description_words.contains(form))
    });
    Some(if names_array { 2 } else { 1 })
}

/// Which string-array fields are answered by picking rows, and over which array: every field that
/// names the ids of an array of records. Several fields over the same rows share one
/// `DecisionTable` ([`row_pick_component`]); a person never types ids that are rows of the data.
pub(super) fn row_picks<'a>(
    parsed: &'a ParsedPrompt,
    offered: &BTreeSet<&str>,
) -> BTreeMap<String, &'a DataEntry> {
    let mut picks = BTreeMap::new();
    let Some(schema) = &parsed.schema else {
        return picks;
    };
    if !offered.contains("Form")
        || !(offered.contains("Table") || offered.contains("DecisionTable"))
    {
        return picks;
    }
    let arrays: Vec<&DataEntry> = parsed
        .summary
        .pointers
        .iter()
        .filter(|entry| entry.kind == JsonKind::Array && entry.items == Some(JsonKind::Object))
        .collect();
    for field in &schema.fields {
        if !matches!(field.kind, FieldKind::StringArray { .. }) {
            continue;
        }
        let used = |entry: &DataEntry| {
            picks
                .values()
                .any(|taken: &&DataEntry| taken.pointer == entry.pointer)
        };
        // On a tie, rows no other field picks from yet, then the first array (read top down).
        let best = arrays
            .iter()
            .filter_map(|entry| selectable_fit(field, entry).map(|fit| (fit, *entry)))
            .rev()
            .max_by_key(|(fit, entry)| (*fit, !used(entry)));
        if let Some((_, entry)) = best {
            picks.insert(field.name.clone(), entry);
        }
    }
    picks
}

/// The control for a field answered by picking rows of `entry`: a selectable Table, or, when
/// other fields pick over the same rows, one `DecisionTable` for all of them (placed at the first
/// of them; `None` for the others).
pub(super) fn row_pick_component(
    field: &FormField,
    entry: &DataEntry,
    schema: &FormSchema,
    picks: &BTreeMap<String, &DataEntry>,
    offered: &BTreeSet<&str>,
) -> Option<Planned> {
    let siblings: Vec<&FormField> = schema
        .fields
        .iter()
        .filter(|other| {
            picks
                .get(&other.name)
                .is_some_and(|rows| rows.pointer == entry.pointer)
        })
        .collect();
    // A DecisionTable's choices can all be left empty, so a field that needs at least one row
    // gets a selectable Table of its own, which can demand one.
    let one_needs_a_row = siblings.iter().any(|sibling| {
        matches!(
            sibling.kind,
            FieldKind::StringArray {
                min_items: Some(fewest),
                ..
            } if fewest > 0
        )
    });
    if siblings.len() < 2 || !offered.contains("DecisionTable") || one_needs_a_row {
        return offered
            .contains("Table")
            .then(|| selectable_table(field, entry));
    }
    if siblings
        .first()
        .is_some_and(|first| first.name != field.name)
    {
        return None;
    }
    Some(decision_table(&siblings, entry))
}

/// A choice's column header: the field's title, else its name without the id word
/// (`approved_ids` → "Approved").
fn choice_label(field: &FormField, id_key: &str) -> String {
    if let Some(title) = field
        .title
        .as_deref()
        .filter(|title| !title.trim().is_empty())
    {
        return literal(title);
    }
    let id_words = words(id_key);
    let kept: Vec<String> = words(&field.name)
        .into_iter()
        .filter(|word| !id_words.iter().any(|id| word_forms(id).contains(word)))
        .collect();
    let text = if kept.is_empty() {
        humanize(&field.name)
    } else {
        kept.join(" ")
    };
    let mut characters = text.chars();
    literal(
        &characters
            .next()
            .map(|first| first.to_uppercase().chain(characters).collect::<String>())
            .unwrap_or_default(),
    )
}

fn decision_table(fields: &[&FormField], entry: &DataEntry) -> Planned {
    let id_key = entry.id_key.clone().unwrap_or_default();
    let noun = humanize(&entry.key()).to_lowercase();
    let singular = word_forms(&noun)
        .into_iter()
        .min_by_key(String::len)
        .unwrap_or(noun);
    let mut props = Map::new();
    props.insert(
        "label".into(),
        Value::String(literal(&format!("Decide on each {singular}"))),
    );
    props.insert("rows".into(), json!({"$data": entry.pointer}));
    props.insert("idKey".into(), json!(id_key));
    let columns = columns(entry);
    if !columns.is_empty() {
        props.insert("columns".into(), Value::Array(columns));
    }
    props.insert(
        "choices".into(),
        Value::Array(
            fields
                .iter()
                .map(|field| json!({"name": field.name, "label": choice_label(field, &id_key)}))
                .collect(),
        ),
    );
    Planned::new("DecisionTable", Value::Object(props))
}

fn selectable_table(field: &FormField, entry: &DataEntry) -> Planned {
    let mut props = Map::new();
    props.insert("rows".into(), json!({"$data": entry.pointer}));
    props.insert(
        "caption".into(),
        Value::String(literal(&humanize(&entry.key()))),
    );
    let columns = columns(entry);
    if !columns.is_empty() {
        props.insert("columns".into(), Value::Array(columns));
    }
    let (min_items, max_items) = match &field.kind {
        FieldKind::StringArray {
            min_items,
            max_items,
            ..
        } => (min_items.unwrap_or(0), *max_items),
        _ => (0, None),
    };
    let mut select = json!({
        "name": field.name,
        "idKey": entry.id_key,
        "label": literal(&cues::picked_rows_label(
            field,
            &entry.key(),
            entry.id_key.as_deref().unwrap_or("id"),
        )),
        "required": min_items > 0,
    });
    if let Some(most) = max_items {
        select["maxItems"] = json!(u32::try_from(most).unwrap_or(u32::MAX));
    }
    props.insert("selectable".into(), select);
    Planned::new("Table", Value::Object(props))
}
