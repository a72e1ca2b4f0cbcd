//! The one-line summary under the heading, and the labels of fields answered by picking rows.

use super::{lower_first, prompt_words, CONSTRUCTIVE_VERBS, DESTRUCTIVE_VERBS, SUMMARY_FIELDS};
use crate::{
    agent::{
        prompt::ParsedPrompt,
        summary::{DataEntry, JsonKind},
    },
    forms::{humanize, FieldKind, FormField},
};

/// Joins phrases as "a, b and c".
fn join_phrases(phrases: &[String]) -> String {
    match phrases {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// How the summary line names a field: its label, or for a field of ids without a title, the
/// choice it stands for ("ids of the accounts to deactivate" → "which accounts to deactivate",
/// `refund_ids` → "which refunds").
fn summary_label(field: &FormField, rows: Option<&DataEntry>) -> String {
    let words = prompt_words(&field.name);
    let is_ids = words.last().is_some_and(|word| word == "ids") && field.title.is_none();
    if !is_ids {
        return lower_first(&field.label());
    }
    match described_rows(field) {
        Some(rest) if !rest.is_empty() => format!("which {rest}"),
        _ => match rows {
            Some(entry) => format!(
                "which {}",
                lower_first(&picked_rows_label(
                    field,
                    &entry.key(),
                    entry.id_key.as_deref().unwrap_or("id")
                ))
            ),
            None => {
                let stem = words[..words.len() - 1].join(" ");
                if stem.is_empty() {
                    "which rows".to_owned()
                } else {
                    format!("which {stem}s")
                }
            }
        },
    }
}

/// The rows a field's description says it holds the ids of ("Ids of the accounts to
/// deactivate" → "accounts to deactivate").
fn described_rows(field: &FormField) -> Option<String> {
    let lower = field
        .description
        .as_deref()?
        .trim()
        .trim_end_matches('.')
        .to_lowercase();
    ["the ids of the ", "ids of the ", "ids of "]
        .iter()
        .find_map(|prefix| lower.strip_prefix(prefix).map(str::to_owned))
        .filter(|rest| !rest.is_empty())
}

/// How a person reads a field answered by picking rows of `rows` (an array named `rows_key`,
/// identified by `id_key`) when the schema gives no title: `deactivate_ids` over users →
/// "Users to deactivate", `approved_ids` → "Approved users", `user_ids` → "Users" — never the
/// field name with its id word ("Deactivate ids").
pub(in crate::agent::heuristic) fn picked_rows_label(
    field: &FormField,
    rows_key: &str,
    id_key: &str,
) -> String {
    if let Some(title) = field
        .title
        .as_deref()
        .filter(|title| !title.trim().is_empty())
    {
        return title.to_owned();
    }
    let capitalised = |text: &str| {
        let mut characters = text.chars();
        characters
            .next()
            .map(|first| first.to_uppercase().chain(characters).collect::<String>())
            .unwrap_or_default()
    };
    if let Some(rows) = described_rows(field) {
        return capitalised(&rows);
    }
    let noun = humanize(rows_key).to_lowercase();
    let noun_forms: Vec<String> = prompt_words(&noun)
        .iter()
        .flat_map(|word| {
            [
                word.clone(),
                format!("{word}s"),
                word.trim_end_matches('s').to_owned(),
            ]
        })
        .collect();
    let id_forms: Vec<String> = prompt_words(id_key)
        .iter()
        .flat_map(|word| [word.clone(), format!("{word}s")])
        .chain(["id".to_owned(), "ids".to_owned()])
        .collect();
    let stem: Vec<String> = prompt_words(&field.name)
        .into_iter()
        .filter(|word| !id_forms.contains(word) && !noun_forms.contains(word))
        .collect();
    match stem.as_slice() {
        [] => capitalised(&noun),
        [verb] if is_action_verb(verb) => format!("{} to {verb}", capitalised(&noun)),
        words => format!("{} {noun}", capitalised(&words.join(" "))),
    }
}

fn is_action_verb(word: &str) -> bool {
    DESTRUCTIVE_VERBS.contains(&word) || CONSTRUCTIVE_VERBS.contains(&word)
}

/// The array of records whose rows an id field picks, for its summary label: the one named by
/// the field or its description, else the only one there is.
fn picked_rows<'a>(parsed: &'a ParsedPrompt, field: &FormField) -> Option<&'a DataEntry> {
    let candidates: Vec<&DataEntry> = parsed
        .summary
        .pointers
        .iter()
        .filter(|entry| {
            entry.kind == JsonKind::Array
                && entry.items == Some(JsonKind::Object)
                && entry.id_key.is_some()
        })
        .collect();
    let mentioned: Vec<String> = prompt_words(&field.name)
        .into_iter()
        .chain(
            field
                .description
                .as_deref()
                .map(prompt_words)
                .unwrap_or_default(),
        )
        .collect();
    candidates
        .iter()
        .find(|entry| {
            prompt_words(&entry.key())
                .iter()
                .any(|word| mentioned.contains(word) || mentioned.contains(&format!("{word}s")))
        })
        .or_else(|| (candidates.len() == 1).then(|| &candidates[0]))
        .copied()
}

/// One line saying what the person is asked for, or, on a page with nothing to answer, what it
/// shows.
pub(super) fn summary_line(parsed: &ParsedPrompt, shown: &[String]) -> String {
    match &parsed.schema {
        Some(schema) if !schema.fields.is_empty() => {
            let mut listed: Vec<String> = schema
                .fields
                .iter()
                .take(SUMMARY_FIELDS)
                .map(|field| {
                    let label = summary_label(field, picked_rows(parsed, field));
                    // A tick box always answers (unticked is "no"), so it is never optional.
                    let needed = field.required
                        || matches!(field.kind, FieldKind::Boolean)
                        || matches!(
                            field.kind,
                            FieldKind::StringArray {
                                min_items: Some(1..),
                                ..
                            } | FieldKind::EnumArray {
                                min_items: Some(1..),
                                ..
                            }
                        );
                    if needed {
                        label
                    } else {
                        format!("{label} (optional)")
                    }
                })
                .collect();
            let more = schema.fields.len().saturating_sub(SUMMARY_FIELDS);
            if more > 0 {
                listed.push(format!("{more} more"));
            }
            // No count here: a chat view's text is refused when a number stands near its noun
            // ("2 answers: which items") and differs from code's count.
            format!("Please answer: {}.", join_phrases(&listed))
        }
        Some(_) => "Nothing to fill in: confirm or cancel below.".to_owned(),
        None if shown.is_empty() => {
            "Nothing to answer: this page only shows information.".to_owned()
        }
        None => format!(
            "Nothing to answer: this page shows {}.",
            join_phrases(shown)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_of_picked_rows_is_labelled_by_the_rows_and_what_happens_to_them() {
        let label = |name: &str| {
            picked_rows_label(
                &FormField::new(name, FieldKind::string_array()),
                "users",
                "id",
            )
        };
        assert_eq!(label("deactivate_ids"), "Users to deactivate");
        assert_eq!(label("approved_ids"), "Approved users");
        assert_eq!(label("user_ids"), "Users");
        assert_eq!(label("ids"), "Users");
        let mut described = FormField::new("account_ids", FieldKind::string_array());
        described.description = Some("Ids of the accounts to deactivate.".to_owned());
        assert_eq!(
            picked_rows_label(&described, "accounts", "id"),
            "Accounts to deactivate"
        );
        let mut titled = FormField::new("x_ids", FieldKind::string_array());
        titled.title = Some("Accounts to close".to_owned());
        assert_eq!(
            picked_rows_label(&titled, "users", "id"),
            "Accounts to close"
        );
    }
}
