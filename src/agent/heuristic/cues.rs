//! What the request asks to see: cues in the prompt's words, turned into page sections.
//!
//! A person who writes "this week's sales dashboard: totals, a chart per day and top products"
//! expects totals, a chart and a ranked table, not the raw rows. The heuristic cannot read the
//! data (it sees the summary a model sees), and a page must stay right when it is re-rendered
//! with newer data or served from the cache for another snapshot of the same shape, so every
//! number here is a computed binding (`tessera_app::binding::computed`): the tree says "sum the
//! `amount` column", code sums it at render time. Nothing here invents a value.
//!
//! The cues, each decided from the words alone and deterministic:
//! - chart / graph / plot / trend / per day / daily / over time → a Chart of the main numeric
//!   column totalled per label (a day, date, month … column, or the one named after "per");
//! - total / sum / count / how many / dashboard → Stat cards: row counts and column totals;
//! - top N (largest, biggest, highest) → a table sorted by the numeric column, cut to N rows
//!   (ranking groups when the thing named is a column, as in "top products" over sales rows);
//! - group(ed) by X / broken down by X → the totals per X, and the rows kept together by X;
//! - delete / deactivate / reject / revoke … as the request's first action → a danger button;
//! - always: a one-line summary of what is asked (the fields) or shown (the sections).
//!
//! It also labels what it places from the response schema's `title`s where a data key has a
//! field of the same name, and humanizes keys otherwise. It must not place form fields: that is
//! the heuristic's field planning.

use serde_json::{json, Map, Value};

use super::{literal, Plan, Planned};
use crate::{
    agent::{
        prompt::ParsedPrompt,
        summary::{DataEntry, JsonKind},
    },
    forms::{humanize, FieldKind, FormField, FormSchema},
};

/// The slot of the row of computed Stats.
pub(super) const TOTALS_SLOT: &str = "totals";

/// Rows a "top" table keeps when the request names no number.
const DEFAULT_TOP: usize = 5;
/// The most rows a "top N" table keeps, whatever the request says.
const MAX_TOP: usize = 50;
/// Computed Stats, at most.
const MAX_TOTALS: usize = 4;
/// Column totals among the computed Stats, at most.
const MAX_COLUMN_TOTALS: usize = 2;
/// Raw tables of summarised arrays longer than this are paged.
const RAW_PAGE_ABOVE: usize = 15;
/// Rows per page of such a raw table.
const RAW_PAGE_SIZE: u64 = 10;
/// Field labels listed in the summary line before "and N more".
const SUMMARY_FIELDS: usize = 4;

/// Words that ask for a chart.
const CHART_WORDS: &[&str] = &[
    "chart",
    "charts",
    "graph",
    "graphs",
    "plot",
    "trend",
    "trends",
    "histogram",
    "daily",
    "hourly",
    "visualise",
    "visualize",
];
/// Words that ask for a line rather than bars.
const LINE_WORDS: &[&str] = &["trend", "trends", "line", "timeline"];
/// Time units that, after "per" or "by", ask for a chart over that unit.
const TIME_UNITS: &[&str] = &[
    "day", "days", "date", "week", "weeks", "month", "months", "hour", "hours", "year", "years",
    "quarter", "weekday",
];
/// Words that ask for totals.
const TOTAL_WORDS: &[&str] = &[
    "total",
    "totals",
    "sum",
    "sums",
    "count",
    "counts",
    "tally",
    "dashboard",
    "kpi",
    "kpis",
];
/// Words that rank rows.
const TOP_WORDS: &[&str] = &["top", "largest", "biggest", "highest", "best"];
/// Column names that hold the number a person cares about, best first.
const VALUE_WORDS: &[&str] = &[
    "amount", "total", "revenue", "sales", "value", "price", "cost", "spend", "spent", "quantity",
    "qty", "units", "count", "hours", "score", "minutes", "duration", "points",
];
/// Column names that label a point in time.
const TIME_WORDS: &[&str] = &[
    "day", "date", "week", "month", "year", "hour", "period", "time", "weekday", "when",
];
/// Verbs whose action cannot be taken back, or takes something away from someone.
const DESTRUCTIVE_VERBS: &[&str] = &[
    "delete",
    "remove",
    "discard",
    "purge",
    "erase",
    "destroy",
    "wipe",
    "deactivate",
    "disable",
    "suspend",
    "reject",
    "decline",
    "revoke",
    "ban",
    "block",
    "terminate",
    "deny",
    "cancel",
    "drop",
    "close",
    "unpublish",
    "offboard",
];
/// Verbs that name a constructive action; the first action verb of the request decides.
const CONSTRUCTIVE_VERBS: &[&str] = &[
    "approve", "accept", "archive", "book", "send", "save", "update", "create", "register", "sign",
    "schedule", "request", "order", "pay", "apply", "assign", "publish", "share", "invite", "vote",
    "rate", "submit", "add", "confirm", "choose", "select", "pick", "grant", "allow", "restore",
    "onboard", "plan", "refund", "merge", "deploy", "triage", "fill", "enter",
];

/// Number words a request may use after "top".
const NUMBER_WORDS: &[(&str, usize)] = &[
    ("one", 1),
    ("two", 2),
    ("three", 3),
    ("four", 4),
    ("five", 5),
    ("six", 6),
    ("seven", 7),
    ("eight", 8),
    ("nine", 9),
    ("ten", 10),
    ("twelve", 12),
    ("fifteen", 15),
    ("twenty", 20),
];

/// A chart the request asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct ChartCue {
    /// A trend: a line rather than bars.
    pub line: bool,
    /// The word after "per"/"by", when the request names what each point is.
    pub per: Option<String>,
}

/// A ranking the request asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct TopCue {
    /// How many rows.
    pub count: usize,
    /// The words after the number: what is ranked ("products").
    pub subject: Vec<String>,
}

/// Everything the request's words ask to see.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Cues {
    /// A chart of a numeric series.
    pub chart: Option<ChartCue>,
    /// Stat cards with counts and totals.
    pub totals: bool,
    /// A sorted, limited table.
    pub top: Option<TopCue>,
    /// The column word rows are grouped by.
    pub group_by: Option<String>,
}

/// The lower-case words of free text, keeping digits; apostrophes end a word ("week's" → "week").
pub(super) fn prompt_words(text: &str) -> Vec<String> {
    text.split(|character: char| !character.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Singular and plural forms of `word`, for matching request words against keys.
fn forms(word: &str) -> Vec<String> {
    let mut all = vec![word.to_owned()];
    if let Some(stem) = word.strip_suffix("ies") {
        all.push(format!("{stem}y"));
    } else if let Some(stem) = word.strip_suffix('s') {
        if !stem.is_empty() {
            all.push(stem.to_owned());
        }
    }
    if let Some(stem) = word.strip_suffix('y') {
        all.push(format!("{stem}ies"));
    }
    all.push(format!("{word}s"));
    all
}

fn same_word(left: &str, right: &str) -> bool {
    forms(left).iter().any(|form| form == right)
}

/// Reads the cues of `prompt`.
pub(super) fn read(prompt: &str) -> Cues {
    let words = prompt_words(prompt);
    let has = |list: &[&str]| words.iter().any(|word| list.contains(&word.as_str()));
    let after = |index: usize| words.get(index + 1).map(String::as_str);
    let mut cues = Cues {
        totals: has(TOTAL_WORDS)
            || words
                .windows(2)
                .any(|pair| pair[0] == "how" && matches!(pair[1].as_str(), "many" | "much")),
        ..Cues::default()
    };

    let per_time = words.iter().enumerate().find_map(|(index, word)| {
        let next = after(index)?;
        (matches!(word.as_str(), "per" | "each" | "by") && TIME_UNITS.contains(&next))
            .then(|| next.to_owned())
    });
    let over_time = words
        .windows(2)
        .any(|pair| pair[0] == "over" && pair[1] == "time");
    if has(CHART_WORDS) || per_time.is_some() || over_time {
        let per = per_time.or_else(|| {
            words.iter().enumerate().find_map(|(index, word)| {
                (word == "per").then(|| after(index).map(str::to_owned))?
            })
        });
        cues.chart = Some(ChartCue {
            line: has(LINE_WORDS) || over_time,
            per,
        });
    }

    cues.top = words.iter().enumerate().find_map(|(index, word)| {
        if !TOP_WORDS.contains(&word.as_str()) {
            return None;
        }
        let number = |candidate: &String| {
            candidate.parse::<usize>().ok().or_else(|| {
                NUMBER_WORDS
                    .iter()
                    .find(|(name, _)| name == candidate)
                    .map(|(_, value)| *value)
            })
        };
        let mut next = index + 1;
        let after_word = words.get(next).and_then(number);
        if after_word.is_some() {
            next += 1;
        }
        // "the ten largest invoices" names the number first.
        let count = after_word.or_else(|| {
            index
                .checked_sub(1)
                .and_then(|before| words.get(before))
                .and_then(number)
        });
        let subject: Vec<String> = words.iter().skip(next).take(3).cloned().collect();
        // "best" alone is too common ("best regards") to rank anything without a number.
        (count.is_some() || word != "best").then(|| TopCue {
            count: count.unwrap_or(DEFAULT_TOP).clamp(1, MAX_TOP),
            subject,
        })
    });

    cues.group_by = words.iter().enumerate().find_map(|(index, word)| {
        let grouping = matches!(
            word.as_str(),
            "group" | "grouped" | "groups" | "breakdown" | "broken" | "break" | "split"
        );
        if !grouping {
            return None;
        }
        let by = words
            .iter()
            .skip(index + 1)
            .take(4)
            .position(|candidate| candidate == "by" || candidate == "per")?;
        words.get(index + 2 + by).cloned()
    });
    cues
}

/// The label and danger variant of the submit button when the request's first action verb is
/// destructive ("Deactivate", "Reject"); `None` when it is not, or names no action.
pub(super) fn destructive_action(heading: &str) -> Option<String> {
    let first_action = prompt_words(heading).into_iter().find(|word| {
        DESTRUCTIVE_VERBS.contains(&word.as_str()) || CONSTRUCTIVE_VERBS.contains(&word.as_str())
    })?;
    if !DESTRUCTIVE_VERBS.contains(&first_action.as_str()) {
        return None;
    }
    let mut characters = first_action.chars();
    characters
        .next()
        .map(|initial| initial.to_uppercase().chain(characters).collect())
}

/// A column of an array of records, read from the summary's sample rows.
fn numeric_columns(entry: &DataEntry) -> Vec<&str> {
    let id_key = entry.id_key.as_deref();
    entry
        .keys
        .iter()
        .map(String::as_str)
        .filter(|key| Some(*key) != id_key && !is_id_like(key))
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

fn is_id_like(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    lower == "id" || lower.ends_with("_id") || (lower.ends_with("id") && key.ends_with("Id"))
}

fn text_columns(entry: &DataEntry) -> Vec<&str> {
    let id_key = entry.id_key.as_deref();
    entry
        .keys
        .iter()
        .map(String::as_str)
        .filter(|key| Some(*key) != id_key && !is_id_like(key))
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
fn value_column(entry: &DataEntry) -> Option<&str> {
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
fn key_names(key: &str, word: &str) -> bool {
    prompt_words(&humanize(key))
        .iter()
        .any(|part| same_word(word, part))
}

/// The arrays of records a cue can work on (the root array or top-level ones), in order.
fn record_arrays(parsed: &ParsedPrompt) -> Vec<&DataEntry> {
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
fn main_array<'a>(arrays: &[&'a DataEntry], words: &[String]) -> Option<&'a DataEntry> {
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

fn lower_first(text: &str) -> String {
    let mut characters = text.chars();
    match characters.next() {
        // Keep acronyms ("EUR", "MRR") as written.
        Some(_) if characters.clone().next().is_some_and(char::is_uppercase) => text.to_owned(),
        Some(initial) => initial.to_lowercase().chain(characters).collect(),
        None => String::new(),
    }
}

/// The sections the cues add, placed after the request's text and before the data.
#[derive(Debug, Default)]
pub(super) struct CuedPage {
    /// The one-line summary of what is asked or shown.
    pub summary: Option<Planned>,
    /// The computed Stats (children of the totals row).
    totals: Vec<Planned>,
    /// Chart, ranking and grouping sections, in order.
    sections: Vec<Planned>,
    /// Arrays whose rows are kept together by a column: (pointer, column).
    grouped: Vec<(String, String)>,
    /// Arrays the cued sections summarise, with their lengths: their raw rows come after, paged.
    summarised: Vec<(String, usize)>,
    /// Whether the request's words are all said again by the summary line (a display page whose
    /// first sentence lists what to show), so the heading may stop at the colon.
    restated: bool,
}

impl CuedPage {
    /// Plans the cued sections of `parsed`, using only the offered components.
    pub(super) fn plan(parsed: &ParsedPrompt, offered: &std::collections::BTreeSet<&str>) -> Self {
        let has = |name: &str| offered.contains(name);
        let cues = read(&parsed.prompt);
        let words = prompt_words(&parsed.prompt);
        let labels = Labels::new(parsed.schema.as_ref());
        let arrays = record_arrays(parsed);
        let main = main_array(&arrays, &words);
        let mut page = Self::default();
        let mut shown: Vec<String> = Vec::new();

        if cues.totals && has("Stat") {
            page.totals = totals(&arrays, main, &labels);
            if !page.totals.is_empty() {
                shown.push("the totals".to_owned());
            }
        }
        if let (Some(chart), Some(main), true) = (&cues.chart, main, has("Chart")) {
            if let Some((node, described)) = chart_node(chart, main, &labels) {
                page.sections.push(node);
                shown.push(described);
            }
        }
        if let (Some(top), true) = (&cues.top, has("Table")) {
            if let Some((node, described)) = top_node(top, &arrays, main, &labels) {
                page.sections.push(node);
                shown.push(described);
            }
        }
        if let (Some(group), true) = (&cues.group_by, has("Table")) {
            if let Some((nodes, grouped, described)) = group_nodes(group, &arrays, &labels) {
                page.sections.extend(nodes);
                page.grouped.push(grouped);
                shown.push(described);
            }
        }
        if !page.totals.is_empty() || !page.sections.is_empty() {
            page.summarised = arrays
                .iter()
                .filter(|entry| {
                    let pointer = &entry.pointer;
                    let mentions = |node: &Planned| {
                        node.props
                            .to_string()
                            .contains(&format!("\"$data\":\"{pointer}\""))
                    };
                    page.totals.iter().chain(&page.sections).any(mentions)
                })
                .map(|entry| (entry.pointer.clone(), entry.length.unwrap_or(0)))
                .collect();
        }
        page.restated = parsed.schema.is_none() && !shown.is_empty() && has("Text");
        if has("Text") {
            let line = summary_line(parsed, &shown);
            page.summary = Some(Planned::new(
                "Text",
                json!({"text": literal(&line), "muted": true}),
            ));
        }
        page
    }

    /// Adds the totals row and the cued sections to `plan`.
    pub(super) fn place(&self, plan: &mut Plan, offered: &std::collections::BTreeSet<&str>) {
        match self.totals.len() {
            0 => {}
            1 => plan.top.extend(self.totals.iter().cloned()),
            _ if offered.contains("Container") => {
                plan.top.push(Planned {
                    component: "Container",
                    props: json!({"direction": "row", "gap": "md"}),
                    slot_id: Some(TOTALS_SLOT),
                });
                plan.inside.insert(TOTALS_SLOT, self.totals.clone());
            }
            _ => plan.top.extend(self.totals.iter().cloned()),
        }
        plan.top.extend(self.sections.iter().cloned());
    }

    /// Final touches on the whole plan: rows of grouped arrays sorted by their group, and labels
    /// of data keys that the response schema titles.
    pub(super) fn polish(&self, parsed: &ParsedPrompt, plan: &mut Plan) {
        let labels = Labels::new(parsed.schema.as_ref());
        let nodes = plan
            .top
            .iter_mut()
            .chain(plan.inside.values_mut().flatten());
        for node in nodes {
            if node.component == "Table" && node.props.get("selectable").is_none() {
                for (pointer, length) in &self.summarised {
                    let bound = node.props.get("rows") == Some(&json!({"$data": pointer}));
                    if bound && *length > RAW_PAGE_ABOVE && node.props.get("pageSize").is_none() {
                        node.props["pageSize"] = json!(RAW_PAGE_SIZE);
                    }
                }
                for (pointer, column) in &self.grouped {
                    let bound = node.props.get("rows") == Some(&json!({"$data": pointer}));
                    if bound {
                        node.props["rows"] = json!({"$data": pointer, "$sortBy": column});
                    }
                }
            }
            if self.restated && node.component == "Heading" && node.props["level"] == 1 {
                if let Some(text) = node.props["text"].as_str() {
                    node.props["text"] = Value::String(short_heading(text));
                }
            }
            retitle_props(&mut node.props, &labels);
        }
    }
}

/// The heading of a display request whose first sentence lists what to show: the part before
/// the colon, without a leading "Show (me)" ("Show this week's sales dashboard: totals, …" →
/// "This week's sales dashboard"). The summary line says the rest.
fn short_heading(text: &str) -> String {
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
fn retitle_props(props: &mut Value, labels: &Labels<'_>) {
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

/// Row counts of the arrays (the main one first) and totals of the main array's value columns.
fn totals(arrays: &[&DataEntry], main: Option<&DataEntry>, labels: &Labels<'_>) -> Vec<Planned> {
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

/// The label column of a chart: the one named after "per", else a time column, else the first
/// text column.
fn label_column<'a>(entry: &'a DataEntry, per: Option<&str>) -> Option<&'a str> {
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

/// A Chart of the main array's value column, totalled per label (one point per label whether the
/// rows are already one per label or not).
fn chart_node(cue: &ChartCue, main: &DataEntry, labels: &Labels<'_>) -> Option<(Planned, String)> {
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
fn top_node(
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
fn group_nodes(
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
pub(super) fn picked_rows_label(field: &FormField, rows_key: &str, id_key: &str) -> String {
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
fn summary_line(parsed: &ParsedPrompt, shown: &[String]) -> String {
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
    use serde_json::json;
    use tessera_app::{binding::resolve_props, tree::PageTree};

    use super::super::tests::build;
    use super::*;

    fn sales() -> Value {
        let days = ["2026-11-16", "2026-11-17", "2026-11-18"];
        let products = ["Tea", "Cake", "Soup", "Bread", "Jam", "Milk"];
        let rows: Vec<Value> = (0..18_usize)
            .map(|index| {
                json!({
                    "id": format!("s{index}"),
                    "day": days[index % 3],
                    "product": products[index % 6],
                    "amount": (index * 7 % 23) as f64 + 0.5,
                })
            })
            .collect();
        json!({ "sales": rows })
    }

    fn props_of<'a>(tree: &'a PageTree, component: &str) -> Vec<&'a Value> {
        tree.nodes
            .values()
            .filter(|node| node.component == component)
            .map(|node| &node.props)
            .collect()
    }

    const DASHBOARD: &str =
        "Show this week's sales dashboard: totals, a chart per day, and top products";

    #[test]
    fn a_dashboard_request_gets_computed_totals_a_chart_per_day_and_the_top_products(
    ) -> anyhow::Result<()> {
        let data = sales();
        let (tree, report, _) = build(DASHBOARD, None, &data)?;
        assert!(report.ok, "{report:?}");
        let rows = data["sales"].as_array().cloned().unwrap_or_default();
        let expected_total: f64 = rows.iter().filter_map(|row| row["amount"].as_f64()).sum();

        let stats: Vec<Value> = props_of(&tree, "Stat")
            .into_iter()
            .map(|props| resolve_props(props, &data))
            .collect();
        let total = stats
            .iter()
            .find(|stat| stat["label"] == "Total amount")
            .map(|stat| stat["value"].as_f64());
        assert_eq!(total, Some(Some(expected_total)));
        assert!(stats
            .iter()
            .any(|stat| stat["label"] == "Number of sales" && stat["value"] == json!(18)));

        assert_eq!(
            props_of(&tree, "Heading")[0]["text"],
            "This week's sales dashboard",
            "the summary line says what the colon listed"
        );
        let raw = props_of(&tree, "Table")
            .into_iter()
            .find(|table| table["caption"] == "Sales")
            .ok_or_else(|| anyhow::anyhow!("no raw sales table"))?;
        assert_eq!(
            raw["pageSize"],
            json!(RAW_PAGE_SIZE),
            "the raw rows come after, paged"
        );

        let charts = props_of(&tree, "Chart");
        assert_eq!(charts.len(), 1);
        let chart = resolve_props(charts[0], &data);
        assert_eq!(chart["title"], "Amount per day");
        assert_eq!(chart["labelKey"], "day");
        let points = chart["data"].as_array().cloned().unwrap_or_default();
        assert_eq!(points.len(), 3, "one point per day: {points:?}");
        let monday: f64 = rows
            .iter()
            .filter(|row| row["day"] == "2026-11-16")
            .filter_map(|row| row["amount"].as_f64())
            .sum();
        assert_eq!(points[0]["amount"].as_f64(), Some(monday));

        let top = props_of(&tree, "Table")
            .into_iter()
            .map(|props| resolve_props(props, &data))
            .find(|table| table["caption"] == "Top 5 products by amount")
            .ok_or_else(|| anyhow::anyhow!("no top products table"))?;
        let ranked = top["rows"].as_array().cloned().unwrap_or_default();
        assert_eq!(ranked.len(), 5);
        let totals: Vec<f64> = ranked
            .iter()
            .filter_map(|row| row["amount"].as_f64())
            .collect();
        assert!(
            totals.windows(2).all(|pair| pair[0] >= pair[1]),
            "{totals:?}"
        );
        Ok(())
    }

    #[test]
    fn the_summary_line_lists_what_is_asked_or_what_is_shown() -> anyhow::Result<()> {
        let data = sales();
        let (tree, _, _) = build(DASHBOARD, None, &data)?;
        let texts: Vec<&Value> = props_of(&tree, "Text");
        assert_eq!(
            texts[0]["text"],
            "Nothing to answer: this page shows the totals, a chart of amount per day and the top 5 products."
        );
        let schema = crate::forms::FormSchema::from_json_schema(&json!({
            "type": "object",
            "properties": {
                "decision": {"type": "string", "enum": ["approve", "reject"]},
                "reason": {"type": "string", "title": "Why"}
            },
            "required": ["decision"]
        }))?;
        let (tree, _, _) = build("Approve the refund", Some(&schema), &json!({"amount": 12}))?;
        assert_eq!(
            props_of(&tree, "Text")[0]["text"],
            "Please answer: decision and why (optional)."
        );
        Ok(())
    }

    #[test]
    fn a_destructive_request_gets_a_danger_submit_button() -> anyhow::Result<()> {
        let schema = crate::forms::FormSchema::from_json_schema(&json!({
            "type": "object",
            "properties": {"account_ids": {"type": "array", "items": {"type": "string"}, "minItems": 1}}
        }))?;
        let data = json!({"accounts": [{"id": "a1", "email": "x@example.com"}, {"id": "a2", "email": "y@example.com"}]});
        let (tree, report, _) = build("Deactivate dormant accounts", Some(&schema), &data)?;
        assert!(report.ok, "{report:?}");
        assert!(props_of(&tree, "Button")
            .contains(&&json!({"label": "Deactivate", "variant": "danger", "kind": "submit"})));
        assert_eq!(
            props_of(&tree, "Text")[0]["text"],
            "Please answer: which accounts."
        );
        Ok(())
    }

    #[test]
    fn grouping_totals_each_group_and_keeps_the_rows_together() -> anyhow::Result<()> {
        let data = json!({"expenses": [
            {"id": "e1", "category": "Travel", "amount": 120},
            {"id": "e2", "category": "Meals", "amount": 30},
            {"id": "e3", "category": "Travel", "amount": 80},
        ]});
        let (tree, report, _) = build("Expenses for March grouped by category", None, &data)?;
        assert!(report.ok, "{report:?}");
        let tables: Vec<Value> = props_of(&tree, "Table")
            .into_iter()
            .map(|props| resolve_props(props, &data))
            .collect();
        let per_group = tables
            .iter()
            .find(|table| table["caption"] == "Expenses by category")
            .ok_or_else(|| anyhow::anyhow!("no per-category table"))?;
        assert_eq!(
            per_group["rows"],
            json!([{"category": "Travel", "amount": 200}, {"category": "Meals", "amount": 30}])
        );
        let rows = tables
            .iter()
            .find(|table| table["caption"] == "Expenses")
            .ok_or_else(|| anyhow::anyhow!("no rows table"))?;
        let categories: Vec<&str> = rows["rows"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|row| row["category"].as_str())
            .collect();
        assert_eq!(categories, ["Meals", "Travel", "Travel"]);
        assert!(tables
            .iter()
            .any(|table| table["caption"] == "Expenses by category"));
        Ok(())
    }

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

    #[test]
    fn data_labels_take_the_schema_titles_and_are_humanized_otherwise() -> anyhow::Result<()> {
        let schema = crate::forms::FormSchema::from_json_schema(&json!({
            "type": "object",
            "properties": {
                "amount": {"type": "number", "title": "Refund (EUR)"},
                "approve": {"type": "boolean"}
            }
        }))?;
        let data = json!({"orders": [{"id": "o1", "order_date": "2026-11-02", "amount": 40}]});
        let (tree, report, _) = build("Approve the refund; total shown", Some(&schema), &data)?;
        assert!(report.ok, "{report:?}");
        let orders = props_of(&tree, "Table")
            .into_iter()
            .find(|table| table["caption"] == "Orders")
            .ok_or_else(|| anyhow::anyhow!("no orders table"))?;
        let labels: Vec<&str> = orders["columns"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|column| column["label"].as_str())
            .collect();
        assert!(labels.contains(&"Order date"), "{labels:?}");
        assert!(labels.contains(&"Refund (EUR)"), "{labels:?}");
        assert!(props_of(&tree, "Stat")
            .iter()
            .any(|stat| stat["label"] == "Total refund (EUR)"));
        Ok(())
    }

    #[test]
    fn chart_words_and_per_day_ask_for_a_chart_and_trend_for_a_line() {
        let cues =
            read("Show this week's sales dashboard: totals, a chart per day, and top products");
        assert_eq!(
            cues.chart,
            Some(ChartCue {
                line: false,
                per: Some("day".to_owned())
            })
        );
        assert!(read("Revenue per month, please").chart.is_some());
        assert!(read("How did signups trend over time?")
            .chart
            .is_some_and(|chart| chart.line));
        assert_eq!(read("Review the expense report").chart, None);
    }

    #[test]
    fn total_sum_count_and_dashboard_ask_for_totals() {
        assert!(read("What is the total spend?").totals);
        assert!(read("How many tickets are open").totals);
        assert!(read("The support dashboard").totals);
        assert!(!read("Approve the refund").totals);
    }

    #[test]
    fn top_n_reads_the_number_and_the_subject() {
        let cues = read("List the top 3 customers by revenue");
        assert_eq!(
            cues.top,
            Some(TopCue {
                count: 3,
                subject: vec!["customers".into(), "by".into(), "revenue".into()]
            })
        );
        assert_eq!(
            read("top products").top.map(|top| top.count),
            Some(DEFAULT_TOP)
        );
        assert_eq!(
            read("the ten largest invoices").top.map(|top| top.count),
            Some(10)
        );
        assert_eq!(
            read("largest ten invoices").top.map(|top| top.count),
            Some(10)
        );
        assert_eq!(read("top 900 rows").top.map(|top| top.count), Some(MAX_TOP));
        assert_eq!(read("Best regards, Ana").top, None);
    }

    #[test]
    fn group_by_names_the_column_word() {
        assert_eq!(
            read("Expenses grouped by category").group_by.as_deref(),
            Some("category")
        );
        assert_eq!(
            read("break the hours down by project").group_by.as_deref(),
            Some("project")
        );
        assert_eq!(read("Sort by date").group_by, None);
    }

    #[test]
    fn the_first_action_verb_decides_whether_the_button_is_dangerous() {
        assert_eq!(
            destructive_action("Deactivate dormant accounts").as_deref(),
            Some("Deactivate")
        );
        assert_eq!(
            destructive_action("Review and reject the flagged applications").as_deref(),
            Some("Reject")
        );
        assert_eq!(destructive_action("Approve or reject these refunds"), None);
        assert_eq!(destructive_action("Schedule a meeting"), None);
        assert_eq!(destructive_action("Weekly digest"), None);
    }

    #[test]
    fn words_keep_digits_and_drop_apostrophes() {
        assert_eq!(
            prompt_words("This week's top-5, €12"),
            ["this", "week", "s", "top", "5", "12"]
        );
    }
}
