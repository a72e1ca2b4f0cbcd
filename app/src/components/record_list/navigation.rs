//! Adding and removing records without JavaScript: a submit button's `_action` asks for one more
//! blank record or one fewer, and the page handler shows the page again with the person's values
//! rewritten to match — nothing validated, nothing recorded, like a table's paging.
//!
//! `add:<list>` raises the list's count by one (the new record has no keys, so it shows the
//! columns' defaults); `remove:<list>[i]` drops every key of record `i` and renumbers the
//! records after it, so `line_items[3].quantity` becomes `line_items[2].quantity`. The bounds
//! (`min_items`, `max_items`) are the renderer's: it never shows more or fewer records than the
//! list allows, whatever a crafted count says.

use std::collections::BTreeMap;

use super::{count_name, ADD_PREFIX, REMOVE_PREFIX};
use crate::render::ACTION_FIELD;

/// The form key that tells the renderer which list just gained a record, so a paged list shows
/// its last page, where the new record is.
pub const ADDED_FIELD: &str = "_added";

/// What a record button asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordAction {
    /// One more blank record at the end of the list at this path.
    Add(String),
    /// Remove the record at this index of the list at this path.
    Remove(String, usize),
}

impl RecordAction {
    /// Reads an `_action` value; `None` for every other action (submit, cancel, decline).
    #[must_use]
    pub fn parse(action: &str) -> Option<Self> {
        if let Some(list) = action.strip_prefix(ADD_PREFIX) {
            return (!list.is_empty()).then(|| Self::Add(list.to_owned()));
        }
        let record = action.strip_prefix(REMOVE_PREFIX)?;
        let (list, index) = record.strip_suffix(']')?.rsplit_once('[')?;
        let index = index.parse::<usize>().ok()?;
        (!list.is_empty()).then(|| Self::Remove(list.to_owned(), index))
    }
}

/// The record button pressed in a submission, if one was: the last `_action` value.
#[must_use]
pub fn record_action(pairs: &[(String, String)]) -> Option<RecordAction> {
    pairs
        .iter()
        .rev()
        .find(|(key, _)| key == ACTION_FIELD)
        .and_then(|(_, value)| RecordAction::parse(value))
}

/// The person's values after `action`: the page shown again holds them (see the module docs).
#[must_use]
pub fn apply_record_action(
    action: &RecordAction,
    mut values: BTreeMap<String, Vec<String>>,
) -> BTreeMap<String, Vec<String>> {
    values.remove(ACTION_FIELD);
    values.remove(ADDED_FIELD);
    match action {
        RecordAction::Add(list) => {
            let count = sent_count(list, &values).saturating_add(1);
            values.insert(count_name(list), vec![count.to_string()]);
            values.insert(ADDED_FIELD.to_owned(), vec![list.clone()]);
            values
        }
        RecordAction::Remove(list, removed) => {
            let count = sent_count(list, &values);
            if *removed >= count {
                return values;
            }
            let mut kept = BTreeMap::new();
            for (key, entry) in values {
                match record_index(list, &key) {
                    Some((index, _)) if index == *removed => {}
                    Some((index, rest)) if index > *removed => {
                        kept.insert(format!("{list}[{}]{rest}", index - 1), entry);
                    }
                    _ => {
                        kept.insert(key, entry);
                    }
                }
            }
            kept.insert(count_name(list), vec![(count - 1).to_string()]);
            kept
        }
    }
}

/// The record count a submission states for `list`, or one past the highest index it sends.
fn sent_count(list: &str, values: &BTreeMap<String, Vec<String>>) -> usize {
    values
        .get(&count_name(list))
        .and_then(|count| count.last())
        .and_then(|count| count.trim().parse::<usize>().ok())
        .unwrap_or_else(|| {
            values
                .keys()
                .filter_map(|key| record_index(list, key))
                .map(|(index, _)| index + 1)
                .max()
                .unwrap_or(0)
        })
}

/// `(i, ".field")` when `key` names a member of record `i` of `list` (`list[i].field`).
fn record_index<'k>(list: &str, key: &'k str) -> Option<(usize, &'k str)> {
    let rest = key.strip_prefix(list)?.strip_prefix('[')?;
    let (index, rest) = rest.split_once(']')?;
    if !rest.starts_with('.') || index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((index.parse().ok()?, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::components::submitted_values as values;

    #[test]
    fn record_buttons_are_read_and_other_actions_are_not() {
        assert_eq!(
            RecordAction::parse("add:line_items"),
            Some(RecordAction::Add("line_items".to_owned()))
        );
        assert_eq!(
            RecordAction::parse("remove:order.parcels[12]"),
            Some(RecordAction::Remove("order.parcels".to_owned(), 12))
        );
        for other in [
            "submit",
            "cancel",
            "remove:x[a]",
            "remove:x",
            "add:",
            "remove:[1]",
        ] {
            assert_eq!(RecordAction::parse(other), None, "{other}");
        }
    }

    #[test]
    fn removing_a_record_drops_its_keys_and_renumbers_the_rest() {
        let before = values(&[
            ("_count.items", "3"),
            ("items[0].sku", "A"),
            ("items[1].sku", "B"),
            ("items[1].tags", "x"),
            ("items[1].tags", "y"),
            ("items[2].sku", "C"),
            ("items[2].tags", "z"),
            ("items_extra[2].sku", "keep"),
            ("note", "kept"),
            ("_action", "remove:items[1]"),
        ]);
        let after = apply_record_action(&RecordAction::Remove("items".to_owned(), 1), before);
        assert_eq!(
            after,
            values(&[
                ("_count.items", "2"),
                ("items[0].sku", "A"),
                ("items[1].sku", "C"),
                ("items[1].tags", "z"),
                ("items_extra[2].sku", "keep"),
                ("note", "kept"),
            ])
        );
    }

    #[test]
    fn adding_a_record_raises_the_count_and_keeps_every_value() {
        let before = values(&[("_count.items", "1"), ("items[0].sku", "A")]);
        let after = apply_record_action(&RecordAction::Add("items".to_owned()), before);
        assert_eq!(
            after,
            values(&[
                ("_added", "items"),
                ("_count.items", "2"),
                ("items[0].sku", "A"),
            ])
        );
    }
}
