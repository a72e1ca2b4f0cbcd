//! The sections a cue adds: computed totals, a chart per label, a top-N table and per-group
//! totals, each a computed binding evaluated at render time.

use serde_json::{json, Map, Value};

use super::{
    key_names, label_column, lower_first, numeric_columns, text_columns, value_column, ChartCue,
    Labels, TopCue, MAX_COLUMN_TOTALS, MAX_TOTALS, VALUE_WORDS,
};
use crate::agent::heuristic::{literal, Planned};
use crate::agent::summary::DataEntry;

/// Row counts of the arrays (the main one first) and totals of the main array's value columns.
pub(super) fn totals(
    arrays: &[&DataEntry],
    main: Option<&DataEntry>,
    labels: &Labels<'_>,
) -> Vec<Planned> {
    let mut ordered: Vec<&DataEntry> = main.into_iter().collect();
    ordered.extend(
        arrays
            .iter()
            .copied()
            .filter(|entry| Some(entry.pointer.as_str()) != main.map(|main| main.pointer.as_str())),
    );
    let mut stats = Vec::new();
    if let Some(main) = main {
        let numeric = numeric_columns(main);
        let preferred = value_column(main);
        let mut columns: Vec<&str> = preferred.into_iter().collect();
        columns.extend(
            numeric
                .iter()
                .copied()
                .filter(|key| Some(*key) != preferred)
                .filter(|key| VALUE_WORDS.iter().any(|wanted| key_names(key, wanted))),
        );
        for column in columns.into_iter().take(MAX_COLUMN_TOTALS) {
            stats.push(Planned::new(
                "Stat",
                json!({
                    "label": literal(&format!("Total {}", lower_first(&labels.of(column)))),
                    "value": {"$data": main.pointer, "$sum": column},
                }),
            ));
        }
    }
    for entry in ordered {
        if stats.len() >= MAX_TOTALS {
            break;
        }
        let name = if entry.pointer.is_empty() {
            "Rows".to_owned()
        } else {
            labels.of(&entry.key())
        };
        stats.push(Planned::new(
            "Stat",
            json!({
                "label": literal(&format!("Number of {}", lower_first(&name))),
                "value": {"$data": entry.pointer, "$count": true},
            }),
        ));
    }
    stats.truncate(MAX_TOTALS);
    stats
}

/// A Chart of the main array's value column, totalled per label (one point per label whether the
/// rows are already one per label or not).
pub(super) fn chart_node(
    cue: &ChartCue,
    main: &DataEntry,
    labels: &Labels<'_>,
) -> Option<(Planned, String)> {
    let value = value_column(main)?;
    let label = label_column(main, cue.per.as_deref())?;
    let value_label = labels.of(value);
    let label_label = labels.of(label);
    let title = format!("{value_label} per {}", lower_first(&label_label));
    let node = Planned::new(
        "Chart",
        json!({
            "kind": if cue.line { "line" } else { "bar" },
            "title": literal(&title),
            "data": {"$data": main.pointer, "$groupBy": label, "$sum": value},
            "labelKey": label,
            "valueKey": value,
            "xLabel": literal(&label_label),
            "yLabel": literal(&value_label),
        }),
    );
    Some((node, format!("a chart of {}", lower_first(&title))))
}

fn table_column(key: &str, labels: &Labels<'_>) -> Value {
    json!({"key": key, "label": literal(&labels.of(key))})
}

/// The "top N" table: the named array sorted by its value column, or, when the thing named is a
/// column of the main array ("top products" over sales rows), that column's groups ranked by
/// their totals.
pub(super) fn top_node(
    cue: &TopCue,
    arrays: &[&DataEntry],
    main: Option<&DataEntry>,
    labels: &Labels<'_>,
) -> Option<(Planned, String)> {
    let named_array = arrays.iter().copied().find(|entry| {
        value_column(entry).is_some()
            && cue.subject.iter().any(|word| key_names(&entry.key(), word))
    });
    let count = cue.count;
    if let Some(entry) = named_array.or_else(|| {
        // Nothing named: rank the main array unless the subject is one of its columns.
        let main = main?;
        let names_column = main.keys.iter().any(|key| {
            !numeric_columns(main).contains(&key.as_str())
                && cue.subject.iter().any(|word| key_names(key, word))
        });
        (!names_column).then_some(main)
    }) {
        let value = value_column(entry)?;
        let name = if entry.pointer.is_empty() {
            "rows".to_owned()
        } else {
            lower_first(&labels.of(&entry.key()))
        };
        let caption = format!("Top {count} {name} by {}", lower_first(&labels.of(value)));
        let mut props = Map::new();
        props.insert(
            "rows".into(),
            json!({"$data": entry.pointer, "$sortBy": value, "$order": "desc", "$limit": count}),
        );
        props.insert("caption".into(), Value::String(literal(&caption)));
        let mut keys: Vec<&str> = text_columns(entry).into_iter().take(3).collect();
        keys.push(value);
        let columns: Vec<Value> = keys.iter().map(|key| table_column(key, labels)).collect();
        props.insert("columns".into(), Value::Array(columns));
        props.insert("sortable".into(), json!(false));
        return Some((
            Planned::new("Table", Value::Object(props)),
            format!("the top {count} {name}"),
        ));
    }
    let main = main?;
    let value = value_column(main)?;
    let column = main.keys.iter().find(|key| {
        !numeric_columns(main).contains(&key.as_str())
            && cue.subject.iter().any(|word| key_names(key, word))
    })?;
    let group_label = labels.of(column);
    let plural = cue
        .subject
        .iter()
        .find(|word| key_names(column, word))
        .cloned()
        .unwrap_or_else(|| lower_first(&group_label));
    let caption = format!("Top {count} {plural} by {}", lower_first(&labels.of(value)));
    let props = json!({
        "rows": {"$data": main.pointer, "$groupBy": column, "$sum": value,
                 "$sortBy": value, "$order": "desc", "$limit": count},
        "caption": literal(&caption),
        "columns": [table_column(column, labels), table_column(value, labels)],
        "sortable": false,
    });
    Some((
        Planned::new("Table", props),
        format!("the top {count} {plural}"),
    ))
}

/// "Grouped by X": a table of the totals (or counts) per X, and the array's rows kept together
/// by X.
pub(super) fn group_nodes(
    group: &str,
    arrays: &[&DataEntry],
    labels: &Labels<'_>,
) -> Option<(Vec<Planned>, (String, String), String)> {
    let (entry, column) = arrays.iter().find_map(|entry| {
        entry
            .keys
            .iter()
            .find(|key| key_names(key, group))
            .map(|key| (*entry, key.as_str()))
    })?;
    let group_label = labels.of(column);
    let array_label = if entry.pointer.is_empty() {
        "Rows".to_owned()
    } else {
        labels.of(&entry.key())
    };
    let title = format!("{array_label} by {}", lower_first(&group_label));
    let value = value_column(entry);
    let rows = match value {
        Some(value) => json!({"$data": entry.pointer, "$groupBy": column, "$sum": value,
                               "$sortBy": value, "$order": "desc"}),
        None => json!({"$data": entry.pointer, "$groupBy": column, "$sortBy": "count",
                        "$order": "desc"}),
    };
    let value_column = match value {
        Some(value) => table_column(value, labels),
        None => json!({"key": "count", "label": "Count"}),
    };
    let nodes = vec![Planned::new(
        "Table",
        json!({
            "rows": rows,
            "caption": literal(&title),
            "columns": [table_column(column, labels), value_column],
            "sortable": false,
        }),
    )];
    Some((
        nodes,
        (entry.pointer.clone(), column.to_owned()),
        lower_first(&title),
    ))
}
