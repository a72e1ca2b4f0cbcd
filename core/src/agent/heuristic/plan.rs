//! The page plan: the display sections (stats, facts, records, arrays, progress, downloads) and
//! the Form with one control per field, in the order they are placed.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

use super::{
    cues, field_component, literal, records, row_pick_component, row_picks, split_prompt,
    submit_button, word_forms, words, Plan, Planned, FORM_SLOT, MAX_COLUMNS, MAX_FACTS,
    MAX_SECTIONS, MAX_STATS, PAGE_ABOVE, PAGE_SIZE, STATS_SLOT,
};
use crate::agent::{
    prompt::ParsedPrompt,
    summary::{DataEntry, JsonKind},
};
use crate::forms::{humanize, FieldKind};

/// The page for a parsed prompt, using only the offered tools.
pub(super) fn plan_page(parsed: &ParsedPrompt, offered: &BTreeSet<&str>) -> Plan {
    let has = |name: &str| offered.contains(name);
    let mut plan = Plan::default();
    let (heading, rest) = split_prompt(&parsed.prompt);
    let heading = if heading.is_empty() {
        if parsed.schema.is_some() {
            "Your answer is needed".to_owned()
        } else {
            "Overview".to_owned()
        }
    } else {
        heading
    };
    let cued = cues::CuedPage::plan(parsed, offered);
    if has("Heading") {
        plan.top.push(Planned::new(
            "Heading",
            json!({"text": literal(&heading), "level": 1}),
        ));
    }
    plan.top.extend(cued.summary.clone());
    if !rest.is_empty() && has("Text") {
        plan.top
            .push(Planned::new("Text", json!({ "text": literal(&rest) })));
    }
    cued.place(&mut plan, offered);

    let selectable = row_picks(parsed, offered);
    let bound = if has("RecordList") {
        records::bound_lists(parsed)
    } else {
        BTreeMap::new()
    };
    // A bound list whose rows hold nothing but the record's fields is shown by the list itself.
    let mut shown_elsewhere = selectable.clone();
    if let Some(schema) = &parsed.schema {
        for (name, entry) in &bound {
            let members: Vec<String> = schema
                .field(name)
                .map(|field| {
                    crate::agent::structure::record_columns(field)
                        .into_iter()
                        .map(|(path, _, _)| path)
                        .collect()
                })
                .unwrap_or_default();
            if entry.keys.iter().all(|key| members.contains(key)) {
                shown_elsewhere.insert(format!(" bound {name}"), *entry);
            }
        }
    }

    plan_data(parsed, offered, &shown_elsewhere, &mut plan);

    if let Some(schema) = &parsed.schema {
        if has("Form") {
            plan.top.push(Planned {
                component: "Form",
                props: json!({}),
                slot_id: Some(FORM_SLOT),
                children: Vec::new(),
            });
            let mut inside = Vec::new();
            for field in &schema.fields {
                let node = match (&field.kind, selectable.get(&field.name)) {
                    (FieldKind::Object { .. }, _) => {
                        records::fieldset_plan(field, &field.name, offered)
                    }
                    (FieldKind::RecordList { .. }, _) => records::record_list_plan(
                        field,
                        parsed,
                        bound.get(&field.name).copied(),
                        offered,
                    ),
                    (_, Some(entry)) => {
                        row_pick_component(field, entry, schema, &selectable, offered)
                    }
                    (_, None) => field_component(field, offered),
                };
                inside.extend(node);
            }
            if has("Button") {
                let (label, variant) = cues::destructive_action(&heading)
                    .map_or_else(|| submit_button(&heading), |verb| (verb, "danger"));
                inside.push(Planned::new(
                    "Button",
                    json!({"label": label, "variant": variant, "kind": "submit"}),
                ));
                // Named people each decline for themselves; nobody cancels for all of them.
                let other = if parsed.for_assignees {
                    json!({"label": "Decline", "variant": "secondary", "kind": "decline"})
                } else {
                    json!({"label": "Cancel", "variant": "secondary", "kind": "cancel"})
                };
                inside.push(Planned::new("Button", other));
            }
            plan.inside.insert(FORM_SLOT, inside);
        }
    }
    cued.polish(parsed, &mut plan);
    plan
}

/// The display part of the page: stats, facts, records and arrays.
fn plan_data(
    parsed: &ParsedPrompt,
    offered: &BTreeSet<&str>,
    selectable: &BTreeMap<String, &DataEntry>,
    plan: &mut Plan,
) {
    let has = |name: &str| offered.contains(name);
    let entries = &parsed.summary.pointers;
    let Some(root) = entries.first() else {
        return;
    };
    let is_selected = |entry: &DataEntry| {
        selectable
            .values()
            .any(|used| used.pointer == entry.pointer)
    };
    let children_of = |pointer: &str| -> Vec<&DataEntry> {
        entries
            .iter()
            .filter(|entry| entry.parent() == Some(pointer))
            .collect()
    };
    match root.kind {
        JsonKind::Array => {
            if !is_selected(root) {
                plan.top.extend(array_component(root, "Items", offered));
            }
            return;
        }
        JsonKind::Object => {}
        JsonKind::Null => return,
        _ => {
            if has("KeyValue") {
                plan.top.push(Planned::new(
                    "KeyValue",
                    json!({"items": [{"label": "Value", "value": {"$data": ""}}]}),
                ));
            }
            return;
        }
    }
    let top = children_of("");
    let all_numbers: Vec<&DataEntry> = top
        .iter()
        .copied()
        .filter(|entry| matches!(entry.kind, JsonKind::Integer | JsonKind::Number))
        .collect();
    let (bars, paired) = progress_bars(&all_numbers, offered);
    plan.top.extend(bars);
    let numbers: Vec<&DataEntry> = all_numbers
        .iter()
        .copied()
        .filter(|entry| !paired.contains(&entry.pointer))
        .take(MAX_STATS)
        .collect();
    let stats: Vec<Planned> = numbers
        .iter()
        .map(|entry| {
            Planned::new(
                "Stat",
                json!({"label": literal(&humanize(&entry.key())), "value": {"$data": entry.pointer}}),
            )
        })
        .collect();
    let mut facts: Vec<&DataEntry> = top
        .iter()
        .copied()
        .filter(|entry| entry.kind.is_scalar() && !numbers.contains(entry))
        .collect();
    if has("Stat") {
        if stats.len() >= 2 && has("Container") {
            plan.top.push(Planned {
                component: "Container",
                props: json!({"direction": "row", "gap": "md"}),
                slot_id: Some(STATS_SLOT),
                children: Vec::new(),
            });
            plan.inside.insert(STATS_SLOT, stats);
        } else {
            plan.top.extend(stats);
        }
    } else {
        facts.extend(numbers.iter().copied());
    }
    if !facts.is_empty() && has("KeyValue") {
        plan.top.push(key_value(&facts));
    }
    let mut sections = 0;
    for entry in entries.iter().filter(|entry| entry.depth() >= 1) {
        if sections >= MAX_SECTIONS {
            break;
        }
        match entry.kind {
            JsonKind::Array if !is_selected(entry) => {
                let caption = humanize(&entry.key());
                if let Some(node) = array_component(entry, &caption, offered) {
                    sections += 1;
                    plan.top.push(node);
                }
            }
            JsonKind::Object => {
                let scalars: Vec<&DataEntry> = children_of(&entry.pointer)
                    .into_iter()
                    .filter(|child| child.kind.is_scalar())
                    .collect();
                if scalars.is_empty() || !has("KeyValue") {
                    continue;
                }
                sections += 1;
                if has("Heading") {
                    plan.top.push(Planned::new(
                        "Heading",
                        json!({"text": literal(&humanize(&entry.key())), "level": 2}),
                    ));
                }
                plan.top.push(key_value(&scalars));
            }
            _ => {}
        }
    }
    plan.top.extend(download_links(parsed, offered));
}

/// A `ProgressBar` per pair of top-level numbers named `<what>_done` and `<what>_total`, and the
/// pointers it used (they are not repeated as Stats).
fn progress_bars(numbers: &[&DataEntry], offered: &BTreeSet<&str>) -> (Vec<Planned>, Vec<String>) {
    let mut bars = Vec::new();
    let mut paired = Vec::new();
    if !offered.contains("ProgressBar") {
        return (bars, paired);
    }
    for done in numbers {
        let key = done.key();
        let Some(what) = key.strip_suffix("_done") else {
            continue;
        };
        let total_key = format!("{what}_total");
        let Some(total) = numbers.iter().find(|entry| entry.key() == total_key) else {
            continue;
        };
        bars.push(Planned::new(
            "ProgressBar",
            json!({"label": literal(&humanize(what)), "value": {"$data": done.pointer}, "max": {"$data": total.pointer}}),
        ));
        paired.push(done.pointer.clone());
        paired.push(total.pointer.clone());
    }
    (bars, paired)
}

/// CSV and JSON `DownloadLink`s when the request asks for downloads: for the top-level array of
/// records the request names (else the first one).
fn download_links(parsed: &ParsedPrompt, offered: &BTreeSet<&str>) -> Vec<Planned> {
    let request = words(&parsed.prompt);
    if !offered.contains("DownloadLink")
        || !request
            .iter()
            .any(|word| word == "download" || word == "downloads")
    {
        return Vec::new();
    }
    let arrays: Vec<&DataEntry> = parsed
        .summary
        .pointers
        .iter()
        .filter(|entry| entry.depth() == 1 && entry.kind == JsonKind::Array)
        .filter(|entry| matches!(entry.items, Some(JsonKind::Object) | None))
        .collect();
    let named = arrays.iter().find(|entry| {
        words(&entry.key())
            .iter()
            .all(|word| word_forms(word).iter().any(|form| request.contains(form)))
    });
    let Some(entry) = named.or_else(|| arrays.first()) else {
        return Vec::new();
    };
    let name = humanize(&entry.key()).to_lowercase();
    ["csv", "json"]
        .into_iter()
        .map(|format| {
            Planned::new(
                "DownloadLink",
                json!({
                    "label": literal(&format!("Download the {name} as {}", format.to_uppercase())),
                    "format": format,
                    "data": {"$data": entry.pointer},
                    "filename": entry.key(),
                }),
            )
        })
        .collect()
}

fn key_value(entries: &[&DataEntry]) -> Planned {
    let items: Vec<Value> = entries
        .iter()
        .take(MAX_FACTS)
        .map(|entry| json!({"label": literal(&humanize(&entry.key())), "value": {"$data": entry.pointer}}))
        .collect();
    Planned::new("KeyValue", json!({ "items": items }))
}

pub(super) fn columns(entry: &DataEntry) -> Vec<Value> {
    let id_key = entry.id_key.as_deref();
    entry
        .keys
        .iter()
        .filter(|key| entry.keys.len() <= MAX_COLUMNS || Some(key.as_str()) != id_key)
        .take(MAX_COLUMNS)
        .map(|key| json!({"key": key, "label": literal(&humanize(key))}))
        .collect()
}

/// A Table for rows of objects (or an empty array), a List for single values.
fn array_component(entry: &DataEntry, caption: &str, offered: &BTreeSet<&str>) -> Option<Planned> {
    let binding = json!({"$data": entry.pointer});
    let caption = literal(if caption.is_empty() { "Items" } else { caption });
    let rows_are_records = matches!(entry.items, Some(JsonKind::Object) | None);
    if rows_are_records && offered.contains("Table") {
        let mut props = Map::new();
        props.insert("rows".into(), binding);
        props.insert("caption".into(), Value::String(caption));
        let columns = columns(entry);
        if !columns.is_empty() {
            props.insert("columns".into(), Value::Array(columns));
        }
        if entry.length.unwrap_or(0) > PAGE_ABOVE {
            props.insert("pageSize".into(), json!(PAGE_SIZE));
        }
        if entry.items.is_none() {
            props.insert("emptyText".into(), json!("Nothing here yet."));
        }
        return Some(Planned::new("Table", Value::Object(props)));
    }
    offered.contains("List").then(|| {
        Planned::new(
            "List",
            json!({"items": binding, "emptyText": "Nothing here yet."}),
        )
    })
}
