//! Which columns of an array of records a cue uses: numeric, text, label and time columns, and
//! the main array of the page.

use serde_json::Value;

use super::{prompt_words, same_word, TIME_UNITS, TIME_WORDS, VALUE_WORDS};
use crate::{
    agent::{
        prompt::ParsedPrompt,
        summary::{DataEntry, JsonKind},
    },
    forms::humanize,
};

/// A column of an array of records, read from the summary's sample rows.
pub(super) fn numeric_columns(entry: &DataEntry) -> Vec<&str> {
    non_id_columns(entry)
        .filter(|key| {
            let cells: Vec<&Value> = entry
                .samples
                .iter()
                .filter_map(|row| row.get(*key))
                .filter(|cell| !cell.is_null())
                .collect();
            !cells.is_empty() && cells.iter().all(|cell| cell.is_number())
        })
        .collect()
}

/// The keys of the records that are neither their id key nor named like an id.
fn non_id_columns(entry: &DataEntry) -> impl Iterator<Item = &str> {
    let id_key = entry.id_key.as_deref();
    entry
        .keys
        .iter()
        .map(String::as_str)
        .filter(move |key| Some(*key) != id_key && !is_id_like(key))
}

fn is_id_like(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    lower == "id" || lower.ends_with("_id") || (lower.ends_with("id") && key.ends_with("Id"))
}

pub(super) fn text_columns(entry: &DataEntry) -> Vec<&str> {
    non_id_columns(entry)
        .filter(|key| {
            entry
                .samples
                .iter()
                .filter_map(|row| row.get(*key))
                .all(Value::is_string)
        })
        .collect()
}

/// The numeric column a person cares about most: named like an amount, else the first.
pub(super) fn value_column(entry: &DataEntry) -> Option<&str> {
    let numeric = numeric_columns(entry);
    VALUE_WORDS
        .iter()
        .find_map(|wanted| {
            numeric.iter().copied().find(|key| {
                prompt_words(&humanize(key))
                    .iter()
                    .any(|word| same_word(wanted, word))
            })
        })
        .or_else(|| numeric.first().copied())
}

/// Whether `key` (a column or array name) is the thing `word` names.
pub(super) fn key_names(key: &str, word: &str) -> bool {
    prompt_words(&humanize(key))
        .iter()
        .any(|part| same_word(word, part))
}

/// The arrays of records a cue can work on (the root array or top-level ones), in order.
pub(super) fn record_arrays(parsed: &ParsedPrompt) -> Vec<&DataEntry> {
    parsed
        .summary
        .pointers
        .iter()
        .filter(|entry| entry.depth() <= 1 && entry.kind == JsonKind::Array)
        .filter(|entry| entry.items == Some(JsonKind::Object))
        .collect()
}

/// The array the request is about: one it names that has a numeric column, else the first that
/// has one.
pub(super) fn main_array<'a>(arrays: &[&'a DataEntry], words: &[String]) -> Option<&'a DataEntry> {
    let with_numbers: Vec<&DataEntry> = arrays
        .iter()
        .copied()
        .filter(|entry| value_column(entry).is_some())
        .collect();
    with_numbers
        .iter()
        .copied()
        .find(|entry| words.iter().any(|word| key_names(&entry.key(), word)))
        .or_else(|| with_numbers.first().copied())
}

/// The label column of a chart: the one named after "per", else a time column, else the first
/// text column.
pub(super) fn label_column<'a>(entry: &'a DataEntry, per: Option<&str>) -> Option<&'a str> {
    let keys: Vec<&str> = entry
        .keys
        .iter()
        .map(String::as_str)
        .filter(|key| Some(*key) != entry.id_key.as_deref() && !is_id_like(key))
        .collect();
    let numeric = numeric_columns(entry);
    let candidates: Vec<&str> = keys
        .iter()
        .copied()
        .filter(|key| !numeric.contains(key))
        .collect();
    per.and_then(|per| {
        candidates
            .iter()
            .copied()
            .find(|key| key_names(key, per))
            // "per day" over a `date` column: any time column stands for the unit.
            .or_else(|| {
                TIME_UNITS
                    .contains(&per)
                    .then(|| time_column(&candidates))
                    .flatten()
            })
    })
    .or_else(|| time_column(&candidates))
    .or_else(|| text_columns(entry).first().copied())
}

fn time_column<'a>(candidates: &[&'a str]) -> Option<&'a str> {
    candidates.iter().copied().find(|key| {
        TIME_WORDS
            .iter()
            .any(|time| prompt_words(&humanize(key)).iter().any(|word| word == time))
    })
}
