//! The `heuristic` model: a deterministic, offline [`ChatModel`] that builds a good page through
//! the same tools as any other model.
//!
//! It is the default when no provider is configured and the fallback when a model fails
//! (DESIGN.md §6), so it must always produce a page that passes `ValidateForm` for every schema
//! in the form subset (the property test at the bottom checks exactly that). It reads what a
//! model reads: the user prompt, in the layout `prompt.rs` renders and
//! [`crate::agent::prompt::parse_user_prompt`] reads back (the request, the response schema, the
//! data summary), and the tool results of its own earlier calls. It answers with tool calls the
//! loop executes and checks like anyone else's:
//!
//! one turn: a level-1 Heading from the request's first sentence, the rest of the request as
//! Text, headline numbers as Stats (in a row Container), other top-level values as KeyValue, one
//! KeyValue section per nested record, a Table (or List, for arrays of single values) per array
//! bound with `{"$data": …}`, and the Form placed whole in one call with its `children`: one field
//! per schema field (enum → `RadioGroup` up to 5 options, else Select; boolean → Checkbox; array of
//! enum → `CheckboxGroup`; array of string → a selectable Table when the field names the rows' ids
//! (one `DecisionTable` for several such fields over the same rows), else `MultiTextInput`;
//! numbers → Input type number; strings → Input of the format's type, or `TextArea` when the name
//! or description hints at long text), then the submit and cancel Buttons; then `Finish`, in the
//! same turn.
//!
//! Display-only pages (no schema) get no Form. It never improvises beyond that: a page that a
//! later check finds wrong is answered with `Finish` again, and the loop's limits apply.
//!
//! What the request's words ask to see (totals, a chart, top N, groups, a destructive action)
//! and the summary line under the heading come from [`cues`]; their numbers are computed
//! bindings, evaluated from the data at render time.

mod cues;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

use super::{
    prompt::{parse_user_prompt, ParsedPrompt},
    summary::{DataEntry, JsonKind},
    tools::FINISH,
};
use crate::{
    forms::{answerable, humanize, FieldKind, FormField, FormSchema, StringFormat},
    llm::{ChatModel, ChatRequest, ChatResponse, Message, ModelName, StopReason, ToolCall, Usage},
};

/// The provider and model name the heuristic reports.
pub const HEURISTIC: &str = "heuristic";

/// Enums with at most this many options get a `RadioGroup`, longer ones a Select.
pub const RADIO_LIMIT: usize = 5;
/// Columns shown per table.
const MAX_COLUMNS: usize = 6;
/// Display tables longer than this are paged.
const PAGE_ABOVE: usize = 50;
/// Rows per page of a paged display table.
const PAGE_SIZE: u64 = 25;
/// Arrays and nested records shown, at most.
const MAX_SECTIONS: usize = 8;
/// Labelled values per `KeyValue`.
const MAX_FACTS: usize = 12;
/// Stats side by side, at most.
const MAX_STATS: usize = 6;

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

/// The offline model. Cheap to create; holds nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct HeuristicModel;

impl HeuristicModel {
    /// The heuristic model.
    #[must_use]
    pub fn new() -> Self {
        Self
    }

    /// The next turn for `request`: the whole logic, synchronous and pure.
    #[must_use]
    pub fn respond(&self, request: &ChatRequest) -> ChatResponse {
        let parsed = request.messages.iter().find_map(|message| match message {
            Message::User(text) => parse_user_prompt(text),
            _ => None,
        });
        let Some(parsed) = parsed else {
            return ChatResponse::text(
                "The heuristic model only builds pages from the application's page prompt.",
            );
        };
        let offered: BTreeSet<&str> = request
            .tools
            .iter()
            .map(|tool| tool.name.as_str())
            .collect();
        let plan = plan_page(&parsed, &offered);
        let turn = request
            .messages
            .iter()
            .filter(|message| matches!(message, Message::Assistant { .. }))
            .count();
        let mut calls = Vec::new();
        if turn == 0 {
            for (index, node) in plan.top.iter().enumerate() {
                let children = node
                    .slot_id
                    .and_then(|slot| plan.inside.get(slot))
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                calls.push(component_call(
                    format!("heuristic_0_{index}"),
                    node,
                    children,
                ));
            }
        }
        calls.push(finish_call(turn));
        ChatResponse {
            text: None,
            tool_calls: calls,
            stop_reason: StopReason::ToolUse,
            usage: Usage::default(),
        }
    }
}

#[async_trait::async_trait]
impl ChatModel for HeuristicModel {
    fn name(&self) -> ModelName {
        ModelName::new(HEURISTIC, HEURISTIC)
    }

    async fn chat(&self, request: ChatRequest) -> crate::llm::model::Result<ChatResponse> {
        Ok(self.respond(&request))
    }
}

/// The call placing `node` with `children` inside it, in one call, in the flat shape the tools
/// offer: the props are the arguments, a child is `{"component", …its props}`.
fn component_call(id: String, node: &Planned, children: &[Planned]) -> ToolCall {
    let mut arguments = node.props.clone();
    if !children.is_empty() {
        arguments["children"] = children
            .iter()
            .map(|child| {
                let mut flat = child.props.clone();
                flat["component"] = json!(child.component);
                flat
            })
            .collect();
    }
    ToolCall::new(id, node.component, arguments)
}

fn finish_call(turn: usize) -> ToolCall {
    ToolCall::new(format!("heuristic_{turn}_finish"), FINISH, json!({}))
}

/// One component to place.
#[derive(Clone, Debug, PartialEq)]
struct Planned {
    component: &'static str,
    props: Value,
    /// For layouts placed with children: the slot (key of [`Plan::inside`]) that holds them.
    slot_id: Option<&'static str>,
}

impl Planned {
    fn new(component: &'static str, props: Value) -> Self {
        Self {
            component,
            props,
            slot_id: None,
        }
    }
}

/// The whole page: top-level nodes in order, and the children of each slot (`form`, `stats`).
#[derive(Debug, Default)]
struct Plan {
    top: Vec<Planned>,
    inside: BTreeMap<&'static str, Vec<Planned>>,
}

const FORM_SLOT: &str = "form";
const STATS_SLOT: &str = "stats";

/// Text placed literally: a `{{/` would start a data placeholder, so it is broken up.
fn literal(text: &str) -> String {
    text.replace("{{/", "{ {/")
}

/// Cuts `text` to at most `limit` characters at a word boundary, adding an ellipsis.
fn clip(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_owned();
    }
    let cut: String = text.chars().take(limit).collect();
    let cut = match cut.rfind(char::is_whitespace) {
        Some(space) if space > limit / 2 => cut[..space].to_owned(),
        _ => cut,
    };
    format!("{}…", cut.trim_end_matches([',', ';', ':', ' ']))
}

/// The heading (first sentence, without its full stop) and the rest of the request.
fn split_prompt(prompt: &str) -> (String, String) {
    let text = prompt.trim();
    let mut end = text.len();
    for (index, character) in text.char_indices() {
        if character == '\n' {
            end = index;
            break;
        }
        if matches!(character, '.' | '!' | '?') {
            let next = text[index + character.len_utf8()..].chars().next();
            if next.is_none_or(char::is_whitespace) {
                end = index
                    + if character == '.' {
                        0
                    } else {
                        character.len_utf8()
                    };
                break;
            }
        }
    }
    let first = text[..end].trim();
    let rest = text[end..]
        .trim_start_matches(['.', '!', '?'])
        .trim()
        .to_owned();
    let mut heading = first.to_owned();
    for polite in ["please ", "Please ", "kindly ", "Kindly "] {
        if let Some(stripped) = heading.strip_prefix(polite) {
            heading = stripped.to_owned();
        }
    }
    let mut characters = heading.chars();
    let heading = match characters.next() {
        Some(initial) => initial.to_uppercase().chain(characters).collect(),
        None => String::new(),
    };
    (clip(&heading, 80), clip(&rest, 400))
}

/// The submit button's label and variant, from the request's first word.
fn submit_button(heading: &str) -> (String, &'static str) {
    let verb = heading
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .trim_matches(|character: char| !character.is_alphanumeric())
        .to_lowercase();
    let capitalized = {
        let mut characters = verb.chars();
        characters
            .next()
            .map(|initial| initial.to_uppercase().chain(characters).collect::<String>())
            .unwrap_or_default()
    };
    match verb.as_str() {
        "delete" | "remove" | "discard" | "purge" | "erase" | "destroy" | "wipe" => {
            (capitalized, "danger")
        }
        "choose" | "select" | "pick" | "confirm" => ("Confirm".to_owned(), "primary"),
        "approve" | "archive" | "accept" | "reject" | "decline" | "book" | "send" | "save"
        | "update" | "create" | "register" | "sign" | "schedule" | "request" | "order" | "pay"
        | "apply" | "assign" | "tag" | "label" | "rename" | "move" | "merge" | "publish"
        | "share" | "invite" | "vote" | "rate" | "report" | "subscribe" | "unsubscribe"
        | "continue" | "start" | "run" | "import" | "export" | "upload" | "restore" | "reset"
        | "block" | "allow" | "grant" | "revoke" | "deploy" | "submit" | "add" | "plan"
        | "reply" | "forward" | "mark" | "flag" | "close" | "reopen" | "transfer" | "refund" => {
            (capitalized, "primary")
        }
        _ => ("Submit".to_owned(), "primary"),
    }
}

/// Lower-case words of a name or text (`archive_ids` → `archive`, `ids`).
fn words(text: &str) -> Vec<String> {
    humanize(text)
        .to_lowercase()
        .split(|character: char| !character.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A word and its plural/singular partner (`email` ↔ `emails`).
fn word_forms(word: &str) -> [String; 2] {
    match word.strip_suffix('s') {
        Some(singular) if !singular.is_empty() => [word.to_owned(), singular.to_owned()],
        _ => [word.to_owned(), format!("{word}s")],
    }
}

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
fn row_picks<'a>(
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
fn row_pick_component(
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

/// The page for a parsed prompt, using only the offered tools.
fn plan_page(parsed: &ParsedPrompt, offered: &BTreeSet<&str>) -> Plan {
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

    plan_data(parsed, offered, &selectable, &mut plan);

    if let Some(schema) = &parsed.schema {
        if has("Form") {
            plan.top.push(Planned {
                component: "Form",
                props: json!({}),
                slot_id: Some(FORM_SLOT),
            });
            let mut inside = Vec::new();
            for field in &schema.fields {
                let node = match selectable.get(&field.name) {
                    Some(entry) => row_pick_component(field, entry, schema, &selectable, offered),
                    None => field_component(field, offered),
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
                inside.push(Planned::new(
                    "Button",
                    json!({"label": "Cancel", "variant": "secondary", "kind": "cancel"}),
                ));
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

fn columns(entry: &DataEntry) -> Vec<Value> {
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

fn options(values: &[String]) -> Value {
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

/// The field component for `field`, choosing among the offered tools.
fn field_component(field: &FormField, offered: &BTreeSet<&str>) -> Option<Planned> {
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
        FieldKind::String {
            format, max_length, ..
        } => {
            let long = format.is_none()
                && (is_long_text(field) || max_length.is_some_and(|longest| longest > 200))
                && !max_length.is_some_and(|longest| longest <= 80);
            if long && has("TextArea") {
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;
    use tessera_app::{catalog::Catalog, tree::PageTree};

    use super::*;
    use crate::{
        agent::{
            prompt::{system_prompt, user_prompt},
            summary::DataSummary,
            tools::{tool_definitions, Workspace},
        },
        forms::{validate_form::FormReport, FormSchema},
    };

    /// Drives the heuristic through the real tools without a store: the loop's core, synchronously.
    pub(super) fn build(
        prompt: &str,
        schema: Option<&FormSchema>,
        data: &Value,
    ) -> anyhow::Result<(PageTree, FormReport, usize)> {
        let catalog = Catalog::defaults();
        let summary = DataSummary::of(data);
        let mut request = ChatRequest {
            messages: vec![
                Message::system(system_prompt(schema.is_some())?),
                Message::user(user_prompt(prompt, schema, &summary)?),
            ],
            tools: tool_definitions(&catalog),
            ..ChatRequest::default()
        };
        let mut workspace = Workspace::new(&catalog, schema, data);
        for turn in 1..=4 {
            let response = HeuristicModel.respond(&request);
            request.messages.push(Message::assistant(&response));
            let mut finished = response.tool_calls.is_empty();
            for call in &response.tool_calls {
                let reply = workspace.execute(call);
                anyhow::ensure!(
                    !reply.is_error,
                    "{} was refused: {}",
                    call.name,
                    reply.content
                );
                finished |= call.name == FINISH;
                request.messages.push(if reply.is_error {
                    Message::tool_error(call, reply.content)
                } else {
                    Message::tool_result(call, reply.content)
                });
            }
            if finished {
                let report = workspace.check();
                return Ok((workspace.tree, report, turn));
            }
        }
        anyhow::bail!("the heuristic did not finish in 4 turns")
    }

    #[expect(clippy::needless_pass_by_value, reason = "used with Option::map")]
    fn parse_schema(value: Value) -> anyhow::Result<FormSchema> {
        Ok(FormSchema::from_json_schema(&value)?)
    }

    fn component_of<'a>(tree: &'a PageTree, field: &str) -> Option<&'a str> {
        tree.nodes.values().find_map(|node| {
            let name = node.props.get("name").or_else(|| {
                node.props
                    .get("selectable")
                    .and_then(|select| select.get("name"))
            });
            let a_choice = node.props["choices"]
                .as_array()
                .is_some_and(|choices| choices.iter().any(|choice| choice["name"] == field));
            (name.and_then(Value::as_str) == Some(field) || a_choice)
                .then_some(node.component.as_str())
        })
    }

    fn components(tree: &PageTree) -> Vec<&str> {
        tree.document_order()
            .into_iter()
            .filter_map(|id| tree.nodes.get(id).map(|node| node.component.as_str()))
            .collect()
    }

    fn emails(count: usize) -> Value {
        let rows: Vec<Value> = (1..=count)
            .map(|index| json!({"id": format!("m{index}"), "from": "news@example.com", "subject": format!("Issue {index}"), "date": "2023-01-04"}))
            .collect();
        json!({ "emails": rows })
    }

    /// Twenty-two hand-written requests: (prompt, schema, data).
    fn cases() -> Vec<(&'static str, Option<Value>, Value)> {
        vec![
            (
                "Archive old emails. Tick the ones to archive.",
                Some(json!({"type": "object", "properties": {
                "archive_ids": {"type": "array", "items": {"type": "string"}, "description": "ids of the emails to archive"},
                "note": {"type": ["string", "null"]},
                "priority": {"type": "string", "enum": ["low", "normal", "high"]}}, "required": ["archive_ids", "priority"]})),
                emails(5),
            ),
            (
                "Choose a country",
                Some(json!({"type": "object", "properties": {
                "country": {"type": "string", "enum": ["fr", "de", "it", "es", "pt", "nl", "be"]}}, "required": ["country"]})),
                json!({}),
            ),
            (
                "Register for the event",
                Some(json!({"type": "object", "properties": {
                "email": {"type": "string", "format": "email"}, "website": {"type": ["string", "null"], "format": "uri"},
                "birthday": {"type": "string", "format": "date"}, "arrival": {"type": ["string", "null"], "format": "date-time"},
                "guests": {"type": "integer", "minimum": 0, "maximum": 4}, "newsletter": {"type": "boolean"}},
                "required": ["email", "birthday", "guests"]})),
                json!({"event": {"name": "RustConf", "city": "Montreal", "seats": 120}}),
            ),
            (
                "Rate the support you got.",
                Some(json!({"type": "object", "properties": {
                "score": {"type": "number", "minimum": 0.5, "maximum": 5}, "comment": {"type": "string", "maxLength": 2000}},
                "required": ["score"]})),
                json!({"ticket": "T-42"}),
            ),
            (
                "Tag these photos",
                Some(json!({"type": "object", "properties": {
                "tags": {"type": "array", "items": {"type": "string", "enum": ["family", "work", "travel"]}, "minItems": 1}},
                "required": ["tags"]})),
                json!({"photos": ["a.jpg", "b.jpg"]}),
            ),
            (
                "List the people to invite",
                Some(json!({"type": "object", "properties": {
                "invitees": {"type": "array", "items": {"type": "string", "format": "email"}, "minItems": 2, "maxItems": 10}}})),
                json!({}),
            ),
            (
                "Show this month's numbers",
                None,
                json!({"revenue": 1204.5, "orders": 87, "refunds": 3, "currency": "EUR"}),
            ),
            (
                "Deployment status",
                None,
                json!({"service": {"name": "api", "version": "1.4.2", "healthy": true}, "events": [{"at": "10:00", "what": "deployed"}, {"at": "10:05", "what": "healthy"}]}),
            ),
            (
                "Delete stale branches.",
                Some(json!({"type": "object", "properties": {
                "branch_ids": {"type": "array", "items": {"type": "string"}}, "confirm": {"type": "boolean"}}})),
                json!({"branches": [{"id": "b1", "name": "old-feature", "age_days": 300}, {"id": "b2", "name": "spike", "age_days": 200}]}),
            ),
            (
                "Approve the expense report",
                Some(json!({"type": "object", "properties": {
                "decision": {"type": "string", "enum": ["approve", "reject"]}, "reason": {"type": ["string", "null"]}}, "required": ["decision"]})),
                json!({"report": {"employee": "Ada", "total": 412.3, "lines": 7}, "lines": [{"what": "Hotel", "amount": 300}, {"what": "Train", "amount": 112.3}]}),
            ),
            (
                "Which languages do you speak?",
                Some(json!({"type": "object", "properties": {
                "languages": {"type": "array", "items": {"type": "string", "enum": ["en", "fr", "de", "es", "it", "nl", "pl", "pt", "sv", "fi", "da", "no"]}}}})),
                json!([]),
            ),
            (
                "Pick a time slot",
                Some(json!({"type": "object", "properties": {
                "slot": {"type": ["string", "null"], "enum": ["9:00", "10:00", "11:00", null]}}})),
                json!({"slots": ["9:00", "10:00", "11:00"]}),
            ),
            (
                "Enter your password",
                Some(json!({"type": "object", "properties": {
                "password": {"type": "string", "minLength": 12}}, "required": ["password"]})),
                json!(null),
            ),
            (
                "Describe the bug",
                Some(json!({"type": "object", "properties": {
                "title": {"type": "string", "maxLength": 80}, "details": {"type": "string", "description": "What happened, in detail"},
                "severity": {"type": "string", "enum": ["S1", "S2", "S3", "S4", "S5", "S6"]}}, "required": ["title", "details", "severity"]})),
                json!({}),
            ),
            (
                "Assign reviewers",
                Some(json!({"type": "object", "properties": {
                "reviewer_ids": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "the user ids of the reviewers"}}})),
                json!({"users": [{"user_id": "u1", "name": "Ada"}, {"user_id": "u2", "name": "Grace"}], "pull_request": {"title": "Fix it", "number": 12}}),
            ),
            (
                "Confirm the order.",
                Some(json!({"type": "object", "properties": {}})),
                json!({"order": {"id": "o-1", "total": 99.5}, "items": [{"sku": "A", "qty": 1}]}),
            ),
            (
                "A page with {{/not_there}} placeholders in its text",
                Some(json!({"type": "object", "properties": {
                "answer": {"type": "string", "title": "Answer for {{/x}}"}}, "required": ["answer"]})),
                json!({"x": 1}),
            ),
            (
                "",
                Some(json!({"type": "object", "properties": {"ok": {"type": "boolean"}}})),
                json!({}),
            ),
            (
                "Nested data",
                None,
                json!({"a": {"b": {"c": {"d": {"e": 1}}}}, "matrix": [[1, 2], [3, 4]], "empty": [], "mixed": [1, "two", null]}),
            ),
            (
                "Book a room",
                Some(json!({"type": "object", "properties": {
                "room": {"type": "string", "enum": ["small"]}, "people": {"type": "integer", "minimum": 1},
                "budget": {"type": ["number", "null"], "exclusiveMinimum": 0}, "notes": {"type": ["string", "null"]}},
                "required": ["room", "people"]})),
                json!({"rooms": [{"code": "R1", "size": 4}, {"code": "R2", "size": 10}]}),
            ),
            (
                "Review the large table",
                Some(json!({"type": "object", "properties": {
                "ids": {"type": "array", "items": {"type": "string"}}}})),
                emails(120),
            ),
            (
                "Label every email. Use the labels you need.",
                Some(json!({"type": "object", "properties": {
                "labels": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
                "urgent_ids": {"type": "array", "items": {"type": "string"}, "description": "emails that are urgent"},
                "weekday": {"type": "string", "enum": ["mon", "tue", "wed", "thu", "fri"]}},
                "required": ["weekday"]})),
                emails(3),
            ),
        ]
    }

    #[test]
    fn the_heuristic_builds_a_valid_page_for_every_hand_written_case() -> anyhow::Result<()> {
        let cases = cases();
        assert!(cases.len() >= 20);
        for (prompt, schema_json, data) in cases {
            let schema = schema_json.map(parse_schema).transpose()?;
            let (tree, report, turns) = build(prompt, schema.as_ref(), &data)?;
            assert!(report.ok, "{prompt}: {:#?}\n{tree:#?}", report.errors);
            assert_eq!(
                turns, 1,
                "{prompt}: the whole page, Form included, in one turn"
            );
            assert_eq!(components(&tree).first(), Some(&"Heading"), "{prompt}");
            assert!(
                !report
                    .warnings
                    .iter()
                    .any(|issue| issue.rule == "heading_order"),
                "{prompt}: {:?}",
                report.warnings
            );
            assert_eq!(
                components(&tree).contains(&"Form"),
                schema.is_some(),
                "{prompt}"
            );
        }
        Ok(())
    }

    #[test]
    fn short_enums_get_radios_long_ones_a_select_and_notes_a_textarea() -> anyhow::Result<()> {
        let cases = cases();
        let (prompt, schema_json, data) = &cases[0];
        let schema = schema_json.clone().map(parse_schema).transpose()?;
        let (tree, _, _) = build(prompt, schema.as_ref(), data)?;
        assert_eq!(component_of(&tree, "priority"), Some("RadioGroup"));
        assert_eq!(component_of(&tree, "note"), Some("TextArea"));
        assert_eq!(component_of(&tree, "archive_ids"), Some("Table"));
        let selectable = tree
            .nodes
            .values()
            .find(|node| node.props.get("selectable").is_some())
            .map(|node| node.props.clone())
            .unwrap_or_default();
        assert_eq!(selectable["rows"], json!({"$data": "/emails"}));
        assert_eq!(selectable["selectable"]["idKey"], "id");
        let (prompt, schema_json, data) = &cases[1];
        let (tree, _, _) = build(
            prompt,
            schema_json.clone().map(parse_schema).transpose()?.as_ref(),
            data,
        )?;
        assert_eq!(component_of(&tree, "country"), Some("Select"));
        Ok(())
    }

    #[test]
    fn each_field_type_gets_its_component_with_the_schema_rules() -> anyhow::Result<()> {
        let cases = cases();
        let (prompt, schema_json, data) = &cases[2];
        let (tree, _, _) = build(
            prompt,
            schema_json.clone().map(parse_schema).transpose()?.as_ref(),
            data,
        )?;
        let props = |field: &str| {
            tree.nodes
                .values()
                .find(|node| node.props.get("name").and_then(Value::as_str) == Some(field))
                .map(|node| node.props.clone())
                .unwrap_or_default()
        };
        assert_eq!(props("email")["type"], "email");
        assert_eq!(props("email")["required"], true);
        assert_eq!(props("website")["type"], "url");
        assert_eq!(props("website")["required"], false);
        assert_eq!(props("birthday")["type"], "date");
        assert_eq!(props("guests")["type"], "number");
        assert_eq!(
            (
                props("guests")["min"].clone(),
                props("guests")["max"].clone(),
                props("guests")["step"].clone()
            ),
            (json!(0), json!(4), json!(1))
        );
        assert_eq!(component_of(&tree, "newsletter"), Some("Checkbox"));
        assert_eq!(props("guests")["label"], "Guests");
        let (prompt, schema_json, data) = &cases[4];
        let (tree, _, _) = build(
            prompt,
            schema_json.clone().map(parse_schema).transpose()?.as_ref(),
            data,
        )?;
        assert_eq!(component_of(&tree, "tags"), Some("CheckboxGroup"));
        assert!(
            components(&tree).contains(&"List"),
            "photos are a list of strings"
        );
        let (prompt, schema_json, data) = &cases[5];
        let (tree, _, _) = build(
            prompt,
            schema_json.clone().map(parse_schema).transpose()?.as_ref(),
            data,
        )?;
        assert_eq!(component_of(&tree, "invitees"), Some("MultiTextInput"));
        Ok(())
    }

    #[test]
    fn display_pages_show_stats_facts_records_and_tables_without_a_form() -> anyhow::Result<()> {
        let cases = cases();
        let (prompt, _, data) = &cases[6];
        let (tree, report, turns) = build(prompt, None, data)?;
        assert!(report.ok);
        assert_eq!(turns, 1, "the stats row is placed with its Stats inside");
        assert_eq!(
            components(&tree),
            vec![
                "Heading",
                "Text",
                "Container",
                "Stat",
                "Stat",
                "Stat",
                "KeyValue"
            ]
        );
        let (prompt, _, data) = &cases[7];
        let (tree, _, turns) = build(prompt, None, data)?;
        assert_eq!(turns, 1);
        let mut placed = components(&tree);
        assert_eq!(placed.first(), Some(&"Heading"));
        placed.sort_unstable();
        assert_eq!(
            placed,
            vec!["Heading", "Heading", "KeyValue", "Table", "Text"]
        );
        Ok(())
    }

    #[test]
    fn the_submit_button_takes_the_requests_verb_and_destruction_is_danger() -> anyhow::Result<()> {
        assert_eq!(
            submit_button("Archive old emails"),
            ("Archive".to_owned(), "primary")
        );
        assert_eq!(
            submit_button("Delete stale branches"),
            ("Delete".to_owned(), "danger")
        );
        assert_eq!(
            submit_button("Choose a country"),
            ("Confirm".to_owned(), "primary")
        );
        assert_eq!(
            submit_button("Which languages?"),
            ("Submit".to_owned(), "primary")
        );
        let cases = cases();
        let (prompt, schema_json, data) = &cases[8];
        let (tree, report, _) = build(
            prompt,
            schema_json.clone().map(parse_schema).transpose()?.as_ref(),
            data,
        )?;
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
        let buttons: Vec<Value> = tree
            .nodes
            .values()
            .filter(|node| node.component == "Button")
            .map(|node| node.props.clone())
            .collect();
        assert!(
            buttons.contains(&json!({"label": "Delete", "variant": "danger", "kind": "submit"}))
        );
        assert!(
            buttons.contains(&json!({"label": "Cancel", "variant": "secondary", "kind": "cancel"}))
        );
        Ok(())
    }

    #[test]
    fn ten_thousand_selectable_rows_are_placed_and_checked_quickly() -> anyhow::Result<()> {
        let schema = parse_schema(json!({"type": "object", "properties": {
            "archive_ids": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
            "required": ["archive_ids"]}))?;
        let started = std::time::Instant::now();
        let (tree, report, _) = build("Archive emails", Some(&schema), &emails(10_000))?;
        assert!(report.ok, "{:?}", report.errors);
        assert_eq!(component_of(&tree, "archive_ids"), Some("Table"));
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
        Ok(())
    }

    #[test]
    fn two_id_arrays_over_the_same_rows_become_one_decision_table() -> anyhow::Result<()> {
        let schema = parse_schema(json!({"type": "object", "properties": {
            "approved_ids": {"type": "array", "items": {"type": "string"}, "description": "ids from /claims"},
            "rejected_ids": {"type": "array", "items": {"type": "string"}, "description": "ids from /claims"}
        }}))?;
        let data = json!({"claims": [
            {"id": "CLM-1", "amount": 120, "reason": "Taxi"},
            {"id": "CLM-2", "amount": 40, "reason": "Lunch"}
        ]});
        let (tree, report, _) = build("Review these claims.", Some(&schema), &data)?;
        assert!(report.ok, "{:?}", report.errors);
        assert_eq!(component_of(&tree, "approved_ids"), Some("DecisionTable"));
        assert_eq!(component_of(&tree, "rejected_ids"), Some("DecisionTable"));
        let placed = components(&tree);
        assert_eq!(
            placed
                .iter()
                .filter(|name| **name == "DecisionTable")
                .count(),
            1
        );
        assert!(!placed.contains(&"MultiTextInput"), "{placed:?}");
        let decision = tree
            .nodes
            .values()
            .find(|node| node.component == "DecisionTable");
        let labels: Vec<&str> = decision
            .and_then(|node| node.props["choices"].as_array())
            .map(|choices| choices.iter().filter_map(|c| c["label"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(labels, ["Approved", "Rejected"]);
        Ok(())
    }

    #[test]
    fn a_selection_with_max_items_says_its_limit() -> anyhow::Result<()> {
        let schema = parse_schema(json!({"type": "object", "properties": {
            "deactivate_ids": {"type": "array", "items": {"type": "string"}, "maxItems": 500}
        }}))?;
        let users: Vec<Value> = (1..=60)
            .map(|n| json!({"id": format!("u{n}"), "name": format!("User {n}")}))
            .collect();
        let (tree, report, _) =
            build("Deactivate users.", Some(&schema), &json!({"users": users}))?;
        assert!(report.ok, "{:?}", report.errors);
        let table = tree.nodes.values().find(|node| node.component == "Table");
        assert_eq!(
            table.map(|node| node.props["selectable"]["maxItems"].clone()),
            Some(json!(500))
        );
        Ok(())
    }

    #[test]
    fn headings_come_from_the_first_sentence() {
        assert_eq!(
            split_prompt("Please archive old emails. They are older than a year."),
            (
                "Archive old emails".to_owned(),
                "They are older than a year.".to_owned()
            )
        );
        assert_eq!(
            split_prompt("Ready? Go"),
            ("Ready?".to_owned(), "Go".to_owned())
        );
        assert_eq!(
            split_prompt("Version 1.4 is out"),
            ("Version 1.4 is out".to_owned(), String::new())
        );
        let (long, _) = split_prompt(&"word ".repeat(40));
        assert!(long.chars().count() <= 81 && long.ends_with('…'), "{long}");
    }

    #[test]
    fn a_selectable_table_needs_a_field_that_names_the_row_ids() -> anyhow::Result<()> {
        let cases = cases();
        let (prompt, schema_json, data) = &cases[21];
        let (tree, report, _) = build(
            prompt,
            schema_json.clone().map(parse_schema).transpose()?.as_ref(),
            data,
        )?;
        assert!(report.ok);
        assert_eq!(component_of(&tree, "labels"), Some("MultiTextInput"));
        assert_eq!(component_of(&tree, "urgent_ids"), Some("Table"));
        let (prompt, schema_json, data) = &cases[14];
        let (tree, _, _) = build(
            prompt,
            schema_json.clone().map(parse_schema).transpose()?.as_ref(),
            data,
        )?;
        assert_eq!(component_of(&tree, "reviewer_ids"), Some("Table"));
        Ok(())
    }

    fn field_kind() -> impl Strategy<Value = FieldKind> {
        let option = "[a-z][a-z0-9_]{0,8}|[A-Z]{1,4}|[a-z]{1,3} [0-9]{1,2}";
        let options = proptest::collection::btree_set(option, 1..=10)
            .prop_map(|set| set.into_iter().collect::<Vec<String>>());
        let items = (
            proptest::option::of(0_u64..4),
            proptest::option::of(0_u64..60),
        )
            .prop_map(|(low, high)| match (low, high) {
                (Some(low), Some(high)) if high < low => (Some(high), Some(low)),
                other => other,
            });
        let format = proptest::option::of(proptest::sample::select(StringFormat::ALL.to_vec()));
        prop_oneof![
            (
                format,
                proptest::option::of(0_u64..10),
                proptest::option::of(10_u64..400)
            )
                .prop_map(|(format, min_length, max_length)| FieldKind::String {
                    format,
                    min_length,
                    max_length,
                    pattern: None
                }),
            (
                proptest::option::of(-1e6_f64..0.0),
                proptest::option::of(0.0_f64..1e6)
            )
                .prop_map(|(minimum, maximum)| FieldKind::Number {
                    multiple_of: None,
                    minimum,
                    maximum,
                    exclusive_minimum: None,
                    exclusive_maximum: None
                }),
            (
                proptest::option::of(-100_i64..0),
                proptest::option::of(0_i64..1000)
            )
                .prop_map(|(minimum, maximum)| FieldKind::Integer {
                    multiple_of: None,
                    minimum,
                    maximum
                }),
            Just(FieldKind::Boolean),
            options
                .clone()
                .prop_map(|options| FieldKind::Enum { options }),
            (items.clone(), any::<bool>()).prop_map(|((min_items, max_items), unique_items)| {
                FieldKind::StringArray {
                    min_items,
                    max_items,
                    unique_items,
                    item_min_length: None,
                    item_max_length: None,
                    item_pattern: None,
                    item_format: None,
                }
            }),
            (options, items, any::<bool>()).prop_map(
                // Loading refuses more minItems than options (a form sends each option once).
                |(options, (min_items, max_items), unique_items)| FieldKind::EnumArray {
                    min_items: min_items.map(|fewest| fewest.min(options.len() as u64)),
                    options,
                    max_items,
                    unique_items,
                }
            ),
        ]
    }

    fn field() -> impl Strategy<Value = FormField> {
        let name = "[a-z][a-z0-9]{0,6}(_(ids|id|note|reason|email|count|tags)){0,1}";
        (
            name,
            field_kind(),
            any::<bool>(),
            proptest::option::of("[A-Za-z ]{1,20}"),
            proptest::option::of("[a-z ]{0,30}"),
        )
            .prop_map(|(name, kind, required, title, description)| FormField {
                name,
                title,
                description,
                default: None,
                examples: Vec::new(),
                required,
                kind,
            })
    }

    fn form_schema() -> impl Strategy<Value = FormSchema> {
        proptest::collection::vec(field(), 0..12).prop_map(|fields| {
            let mut seen = BTreeSet::new();
            FormSchema::new(
                fields
                    .into_iter()
                    .filter(|field| seen.insert(field.name.clone()))
                    .collect(),
            )
        })
    }

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i32>().prop_map(|number| json!(number)),
            (-1e9_f64..1e9).prop_map(|number| json!(number)),
            "[a-zA-Z0-9 {}/<>]{0,12}".prop_map(Value::String),
        ]
    }

    fn data() -> impl Strategy<Value = Value> {
        let row = proptest::collection::btree_map("(id|name|[a-z]{1,6})", leaf(), 0..6)
            .prop_map(|map| Value::Object(map.into_iter().collect()));
        let rows = proptest::collection::vec(row, 0..8).prop_map(Value::Array);
        let scalars = proptest::collection::vec(leaf(), 0..6).prop_map(Value::Array);
        let node = prop_oneof![leaf(), rows, scalars];
        let record = proptest::collection::btree_map("[a-z_]{1,8}", node.clone(), 0..5)
            .prop_map(|map| Value::Object(map.into_iter().collect()));
        prop_oneof![
            leaf(),
            proptest::collection::btree_map("[a-z_/~]{1,10}", prop_oneof![node, record], 0..8)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
            proptest::collection::vec(leaf(), 0..4).prop_map(Value::Array),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn the_heuristic_page_passes_validate_form_for_any_schema_and_data(
            schema in form_schema(),
            data in data(),
            prompt in "[A-Za-z ]{0,30}(\\. [A-Za-z ]{0,30})?",
            has_schema in any::<bool>(),
        ) {
            let schema = has_schema.then_some(schema);
            let outcome = build(&prompt, schema.as_ref(), &data);
            prop_assert!(outcome.is_ok(), "{:?}", outcome.err());
            if let Ok((tree, report, _)) = outcome {
                prop_assert!(report.ok, "{:#?}\n{:#?}", report.errors, tree);
            }
        }
    }
}
