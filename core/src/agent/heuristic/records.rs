//! Structure: a `Fieldset` per object field (its members' controls named by path, objects inside
//! it nested), and a `RecordList` per list of records — bound to the data's rows when the step's
//! data holds a list of the same records, so the person corrects rather than retypes.
//!
//! A list binds to an array of objects whose rows carry the record's key (the data's id key, a
//! record member): one record per row, such as a decision and a reason per claim. Bound columns the request does not
//! ask to change are read-only; the members the request names (`correct any quantity or unit
//! price`) stay editable, and when it names none every member but the key is. Members the rows
//! lack are always editable.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

use super::{field_component, word_forms, words, Planned};
use crate::agent::{
    prompt::ParsedPrompt,
    structure::record_columns,
    summary::{DataEntry, JsonKind},
};
use crate::forms::{FieldKind, FormField};

/// The `Fieldset` for the object `field` at `path`, with one control per member (named by its
/// path) and a nested `Fieldset` per member object.
pub(super) fn fieldset_plan(
    field: &FormField,
    path: &str,
    offered: &BTreeSet<&str>,
) -> Option<Planned> {
    if !offered.contains("Fieldset") {
        return None;
    }
    let children = field
        .kind
        .members()
        .iter()
        .filter_map(|member| {
            let member_path = format!("{path}.{}", member.name);
            match &member.kind {
                FieldKind::Object { .. } => fieldset_plan(member, &member_path, offered),
                _ => {
                    let mut node = field_component(member, offered)?;
                    node.props["name"] = json!(member_path);
                    Some(node)
                }
            }
        })
        .collect();
    let mut node = Planned::new("Fieldset", json!({ "name": path }));
    node.children = children;
    Some(node)
}

/// The data rows the list `field` can start from: an array of objects whose id key is a record
/// member, the best match first (naming the list, then sharing most members).
pub(super) fn bound_rows<'a>(field: &FormField, parsed: &'a ParsedPrompt) -> Option<&'a DataEntry> {
    let members: Vec<String> = record_columns(field)
        .into_iter()
        .map(|(path, _, _)| path)
        .collect();
    let list_words: Vec<String> = words(&field.name)
        .iter()
        .flat_map(|word| word_forms(word))
        .collect();
    parsed
        .summary
        .pointers
        .iter()
        .filter(|entry| entry.kind == JsonKind::Array && entry.items == Some(JsonKind::Object))
        .filter(|entry| {
            entry
                .id_key
                .as_ref()
                .is_some_and(|key| members.contains(key))
        })
        .map(|entry| {
            let shared = members
                .iter()
                .filter(|member| entry.keys.contains(member))
                .count();
            let named = words(&entry.key()).iter().any(|word| {
                word_forms(word)
                    .iter()
                    .any(|form| list_words.contains(form))
            });
            ((named, shared), entry)
        })
        .max_by_key(|(fit, _)| *fit)
        .map(|(_, entry)| entry)
}

/// The `RecordList` for the list of records `field`: bound to `rows` when given, with the
/// request's words deciding what stays editable (see the module docs).
pub(super) fn record_list_plan(
    field: &FormField,
    parsed: &ParsedPrompt,
    rows: Option<&DataEntry>,
    offered: &BTreeSet<&str>,
) -> Option<Planned> {
    if !offered.contains("RecordList") {
        return None;
    }
    let members = record_columns(field);
    let request: BTreeSet<String> = words(&parsed.prompt).into_iter().collect();
    let mentioned = |path: &str, member: &FormField| {
        let mut named = words(path.rsplit('.').next().unwrap_or(path));
        if let Some(title) = &member.title {
            named.extend(words(title));
        }
        // Every word of a member's name must be asked for: "unit price" is not "price".
        !named.is_empty()
            && named
                .iter()
                .all(|word| word_forms(word).iter().any(|form| request.contains(form)))
    };
    let mut props = Map::new();
    props.insert("name".into(), json!(field.name));
    let columns: Vec<Value> = match rows {
        Some(entry) => {
            let key = entry.id_key.clone().unwrap_or_default();
            let asked: Vec<bool> = members
                .iter()
                .map(|(path, member, _)| mentioned(path, member))
                .collect();
            let any_asked = asked
                .iter()
                .zip(&members)
                .any(|(asked, (path, _, _))| *asked && *path != key);
            props.insert("rows".into(), json!({"$data": entry.pointer}));
            props.insert("key".into(), json!(key));
            members
                .iter()
                .zip(asked)
                .map(|((path, _, _), asked)| {
                    let in_rows = entry.keys.contains(path);
                    let read_only = in_rows && (*path == key || (any_asked && !asked));
                    if read_only {
                        json!({"field": path, "read_only": true})
                    } else {
                        json!({ "field": path })
                    }
                })
                .collect()
        }
        None => members
            .iter()
            .map(|(path, _, _)| json!({ "field": path }))
            .collect(),
    };
    props.insert("columns".into(), Value::Array(columns));
    Some(Planned::new("RecordList", Value::Object(props)))
}

/// The lists of records of `parsed`'s schema bound to data rows, by field name.
pub(super) fn bound_lists(parsed: &ParsedPrompt) -> BTreeMap<String, &DataEntry> {
    let mut lists = BTreeMap::new();
    if let Some(schema) = &parsed.schema {
        for field in &schema.fields {
            if matches!(field.kind, FieldKind::RecordList { .. }) {
                if let Some(entry) = bound_rows(field, parsed) {
                    lists.insert(field.name.clone(), entry);
                }
            }
        }
    }
    lists
}
