//! The read view: what a readonly call returned, as a page a person can see — a table that pages
//! and sorts on the server for a list, key-values for one record, stats and a chart when the
//! request asks for them (the heuristic's cues, with computed bindings), and CSV and JSON
//! downloads of the rows.
//!
//! The rows come from the result stored with the turn ([`bounded_result`] caps what is stored),
//! never from the site again: paging is a `GET /chat?page=…` that re-reads the store. Code, not
//! the model, sets what matters after generation ([`enforce_read`]): the tables page and sort,
//! the downloads are offered, a cut list says so, and every node id is unique to the view, so one
//! view's page links never page another's table on the same chat page.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};
use tessera_app::{
    components::{download_body, DownloadFile, DownloadFormat},
    tree::PageTree,
};

use crate::chat::{
    audit::{Execution, ExecutionId},
    manifest::Operation,
};
use crate::{agent::generate::GenerationInput, forms::humanize, llm::ChatModel, store::Store};

use super::{
    changes::value_words,
    confirm::{node, offer_downloads, unused_id},
    counts::check_counts,
    generate, noun_forms, ChatView, ViewError, ViewKind,
};

/// Rows of a read's result kept with the turn and shown; the rest are dropped and the page says so.
pub const MAX_READ_ROWS: usize = 500;

/// Columns a read view's table of the rows shows (the downloads hold every column).
const READ_COLUMNS: usize = 6;

/// Rows a read view's table shows per page.
pub const READ_PAGE_SIZE: u32 = 25;

/// The key a cut result records how many rows the site returned under.
pub const CUT_KEY: &str = "_tessera_rows_returned";

/// Columns tried first, in this order, after the id and the title-like fields: the ones a person
/// scans a list by.
const STATUS_FIELDS: [&str; 12] = [
    "state",
    "status",
    "priority",
    "labels",
    "assignee",
    "assignees",
    "due_date",
    "due",
    "amount",
    "total",
    "updated_at",
    "created_at",
];

/// Title-like fields, the first present names the row.
const TITLE_FIELDS: [&str; 5] = ["title", "name", "summary", "subject", "login"];

/// The longest text a list cell keeps in the view's rows (the table cuts it further, whole in the
/// JSON download).
const CELL_TEXT_CHARS: usize = 200;

/// A read's result as it is stored with the turn: a list longer than [`MAX_READ_ROWS`] keeps its
/// first rows and records how many the site returned under [`CUT_KEY`]; anything else as it is.
#[must_use]
pub fn bounded_result(result: &Value) -> Value {
    match result {
        Value::Array(rows) if rows.len() > MAX_READ_ROWS => json!({
            "items": rows[..MAX_READ_ROWS].to_vec(),
            CUT_KEY: rows.len(),
        }),
        Value::Object(object) => {
            let Some((key, rows)) = list_in(object) else {
                return result.clone();
            };
            if rows.len() <= MAX_READ_ROWS {
                return result.clone();
            }
            let mut kept = object.clone();
            kept.insert(key.to_owned(), Value::Array(rows[..MAX_READ_ROWS].to_vec()));
            kept.insert(CUT_KEY.to_owned(), json!(rows.len()));
            Value::Object(kept)
        }
        _ => result.clone(),
    }
}

/// The list in a result object: its `items`, else its one array of records.
fn list_in(object: &Map<String, Value>) -> Option<(&str, &Vec<Value>)> {
    if let Some(Value::Array(rows)) = object.get("items") {
        return Some(("items", rows));
    }
    let mut arrays = object.iter().filter_map(|(key, value)| match value {
        Value::Array(rows) if rows.iter().all(Value::is_object) && !rows.is_empty() => {
            Some((key.as_str(), rows))
        }
        _ => None,
    });
    let first = arrays.next()?;
    arrays.next().is_none().then_some(first)
}

/// The rows of a stored read result, when it is a list.
#[must_use]
pub fn result_rows(result: &Value) -> Option<&Vec<Value>> {
    match result {
        Value::Array(rows) => Some(rows),
        Value::Object(object) => list_in(object).map(|(_, rows)| rows),
        _ => None,
    }
}

/// What a read view shows.
#[derive(Clone, Debug, PartialEq)]
pub enum ReadShape {
    /// A list: its rows as a person reads them, the raw rows, and how many the site returned
    /// when more than were kept.
    List {
        /// One flat row per record (text cells), columns in a person's order.
        rows: Vec<Value>,
        /// The records as the site returned them (the JSON download).
        raw: Vec<Value>,
        /// How many rows the site returned, when the stored result was cut.
        returned: Option<usize>,
        /// How many matched at the site, when it said (`total`) and more than it returned.
        matching: Option<usize>,
    },
    /// One record.
    Record(Value),
}

/// The shape of a stored read result; `None` for nothing worth a view (an empty body, a bare
/// value).
#[must_use]
pub fn read_shape(operation: &Operation, result: &Value) -> Option<ReadShape> {
    if let Some(raw) = result_rows(result) {
        let returned = result
            .get(CUT_KEY)
            .and_then(Value::as_u64)
            .and_then(|count| usize::try_from(count).ok());
        let matching = result
            .get("total")
            .and_then(Value::as_u64)
            .and_then(|count| usize::try_from(count).ok())
            .filter(|total| *total > raw.len());
        let columns = column_order(operation, raw);
        let rows = raw.iter().map(|row| flat_row(row, &columns)).collect();
        return Some(ReadShape::List {
            rows,
            raw: raw.clone(),
            returned,
            matching,
        });
    }
    match result {
        Value::Object(object) if !object.is_empty() => {
            let columns = column_order(operation, std::slice::from_ref(result));
            Some(ReadShape::Record(flat_row(result, &columns)))
        }
        _ => None,
    }
}

/// The columns of a list, in the order a person reads them: the id, the title-like field, the
/// status-like fields, then the rest as the site sent them. Links to other API resources
/// (`…_url`, `url`) and records without a name are left out; they mean nothing in a cell.
fn column_order(operation: &Operation, rows: &[Value]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for row in rows.iter().take(50) {
        if let Value::Object(object) = row {
            for (key, value) in object {
                if !seen.contains(key) && shows(key, value) {
                    seen.push(key.clone());
                }
            }
        }
    }
    let mut order: Vec<String> = Vec::new();
    let take = |key: &str, order: &mut Vec<String>| {
        if seen.iter().any(|seen| seen == key) && !order.iter().any(|taken| taken == key) {
            order.push(key.to_owned());
        }
    };
    take(operation.row_id_field(), &mut order);
    for field in &operation.identifying_fields {
        take(field, &mut order);
    }
    if let Some(title) = TITLE_FIELDS
        .iter()
        .find(|field| seen.iter().any(|key| key == *field))
    {
        take(title, &mut order);
    }
    for field in STATUS_FIELDS {
        take(field, &mut order);
    }
    for key in seen.clone() {
        take(&key, &mut order);
    }
    order
}

/// Whether a field means something in a cell.
fn shows(key: &str, value: &Value) -> bool {
    if key == "url" || key.ends_with("_url") || key == CUT_KEY {
        return false;
    }
    match value {
        Value::Object(object) => TITLE_FIELDS
            .iter()
            .any(|field| object.get(*field).is_some_and(Value::is_string)),
        Value::String(text) => !text.starts_with("http://") && !text.starts_with("https://"),
        _ => true,
    }
}

/// A record as a flat row of cells over `columns`: numbers and booleans as they are, text cut,
/// lists and records as their names.
fn flat_row(row: &Value, columns: &[String]) -> Value {
    let mut flat = Map::new();
    for column in columns {
        let Some(value) = row.get(column) else {
            continue;
        };
        let cell = match value {
            Value::Number(_) | Value::Bool(_) => value.clone(),
            Value::Null => Value::String(String::new()),
            Value::String(text) => Value::String(cut(text)),
            other => Value::String(value_words(other)),
        };
        flat.insert(column.clone(), cell);
    }
    Value::Object(flat)
}

fn cut(text: &str) -> String {
    if text.chars().count() <= CELL_TEXT_CHARS {
        return text.to_owned();
    }
    let short: String = text.chars().take(CELL_TEXT_CHARS).collect();
    format!("{}…", short.trim_end())
}

/// The read view's facts: `rows` for a list, `record` for one record.
#[must_use]
pub fn read_data(shape: &ReadShape) -> Value {
    match shape {
        ReadShape::List { rows, .. } => json!({ "rows": rows }),
        ReadShape::Record(record) => json!({ "record": record }),
    }
}

/// The prompt of a read view: the person's request (its first sentence becomes the heading), then
/// what to show. Slash commands are not a heading a person wrote, so they give way to the entity.
fn read_prompt(request: &str, entity: &str, list: bool) -> String {
    let (singular, plural) = noun_forms(entity);
    let asked = request.trim();
    let heading = if asked.is_empty() || asked.starts_with('/') {
        if list {
            format!("The {plural} found")
        } else {
            format!("The {singular}")
        }
    } else {
        let mut characters = asked.trim_end_matches(['.', '?', '!']).chars();
        characters
            .next()
            .map(|first| first.to_uppercase().chain(characters).collect())
            .unwrap_or_default()
    };
    let instruction = if list {
        list_instruction(entity)
    } else {
        record_instruction(entity)
    };
    format!("{heading}. {instruction}")
}

/// What the prompt asks of a list's view, after the heading.
fn list_instruction(entity: &str) -> String {
    let (singular, plural) = noun_forms(entity);
    format!("Every {singular} the site returned, one row each in a table that pages and sorts, and the {plural} as CSV and JSON downloads.")
}

/// What the prompt asks of one record's view, after the heading.
fn record_instruction(entity: &str) -> String {
    format!("This {}'s fields as labelled values.", noun_forms(entity).0)
}

/// The read view of a readonly call's stored result, for the request that asked for it; `None`
/// when the result holds nothing to show.
///
/// # Errors
/// As [`super::confirm_view`].
pub async fn read_view(
    store: &Store,
    model: &dyn ChatModel,
    operation: &Operation,
    execution: &Execution,
    request: &str,
) -> Result<Option<ChatView>, ViewError> {
    let Some(result) = &execution.result else {
        return Ok(None);
    };
    let Some(shape) = read_shape(operation, result) else {
        return Ok(None);
    };
    let list = matches!(shape, ReadShape::List { .. });
    let data = read_data(&shape);
    let input =
        GenerationInput::new(read_prompt(request, &operation.entity, list)).with_data(data.clone());
    let count = match &shape {
        ReadShape::List { rows, .. } => rows.len(),
        ReadShape::Record(_) => 1,
    };
    let nouns = [operation.entity.clone()];
    let check = move |tree: &PageTree| {
        check_counts(tree, count, &nouns)?;
        if list && !super::result::binds(tree, "/rows") {
            return Err("the rows are not listed".to_owned());
        }
        Ok(())
    };
    let (mut tree, model_name) = generate(input, model, store, &check).await?;
    enforce_read(&mut tree, &shape, &operation.entity, request);
    let prefix = format!("v{}_", short_id(execution.id));
    let tree = with_prefix(&tree, &prefix);
    Ok(Some(ChatView {
        kind: ViewKind::Read,
        tree,
        data,
        action: None,
        values: BTreeMap::new(),
        download_base: Some(format!("/chat/reads/{}", execution.id)),
        model: model_name,
        summary: None,
    }))
}

fn short_id(id: ExecutionId) -> String {
    id.to_string()
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(8)
        .collect()
}

/// Code's corrections to a read tree: the list's tables page ([`READ_PAGE_SIZE`] rows) and sort
/// on the server; CSV and JSON downloads of the rows are offered; a list cut to
/// [`MAX_READ_ROWS`], or a site that matched more than it returned, is said in words.
pub fn enforce_read(tree: &mut PageTree, shape: &ReadShape, entity: &str, request: &str) {
    // The prompt's instruction and the heuristic's "nothing to answer" are for a page that
    // stands alone; in the chat they are noise under the request's heading.
    let instructions = [list_instruction(entity), record_instruction(entity)];
    let mut dropped = Vec::new();
    for (id, node) in &mut tree.nodes {
        if node.component != "Text" {
            continue;
        }
        let text = node
            .props
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if instructions.iter().any(|instruction| instruction == text)
            || text == "Nothing to answer: this page only shows information."
        {
            dropped.push(id.clone());
        } else if let Some(rest) = text.strip_prefix("Nothing to answer: this page shows ") {
            node.props["text"] = json!(format!("Shown: {rest}"));
        }
    }
    for id in &dropped {
        tree.nodes.remove(id);
        tree.order.retain(|kept| kept != id);
        for node in tree.nodes.values_mut() {
            node.children.retain(|child| child != id);
        }
    }
    let ReadShape::List {
        rows,
        returned,
        matching,
        ..
    } = shape
    else {
        return;
    };
    let (_, plural) = noun_forms(entity);
    // Code picks the columns (the id, the name, the status-like fields first), so what the
    // table shows is what the CSV download holds first, whatever placed the table.
    let columns: Vec<Value> = rows
        .first()
        .and_then(Value::as_object)
        .map(|row| {
            row.keys()
                .take(READ_COLUMNS)
                .map(|key| json!({"key": key, "label": humanize(key)}))
                .collect()
        })
        .unwrap_or_default();
    for node in tree.nodes.values_mut() {
        let bound_to_rows =
            node.props.get("rows").and_then(|rows| rows.get("$data")) == Some(&json!("/rows"));
        if node.component == "Table" && node.props.get("selectable").is_none() {
            node.props["sortable"] = json!(true);
            node.props["pageSize"] = json!(READ_PAGE_SIZE);
            let grouped = node
                .props
                .get("rows")
                .is_some_and(|binding| binding.get("$groupBy").is_some());
            if bound_to_rows && !grouped {
                node.props["caption"] = json!(super::confirm::capitalized(&plural));
                if !columns.is_empty() {
                    node.props["columns"] = Value::Array(columns.clone());
                }
            }
        }
    }
    let mut notes = Vec::new();
    if let Some(returned) = returned {
        notes.push(format!(
            "The site returned {returned} {plural}; only the first {MAX_READ_ROWS} are kept, shown and in the downloads."
        ));
    }
    if let Some(matching) = matching {
        notes.push(format!(
            "The site says {matching} {plural} match; it returned fewer in this answer. Ask for a narrower search or the next ones to see the rest."
        ));
    }
    if let Some(chart) = asked_chart(tree, rows, request, &plural) {
        let id = unused_id(tree, "code_chart");
        tree.nodes.insert(id.clone(), chart);
        let before_table = tree
            .order
            .iter()
            .position(|top| {
                tree.nodes
                    .get(top)
                    .is_some_and(|node| node.component == "Table")
            })
            .unwrap_or(tree.order.len());
        tree.order.insert(before_table, id);
    }
    for note in notes {
        let id = unused_id(tree, "code_note");
        tree.nodes.insert(
            id.clone(),
            node("Alert", json!({"tone": "info", "text": note})),
        );
        tree.order.insert(1.min(tree.order.len()), id);
    }
    offer_downloads(tree, &plural, "/rows", &plural);
}

/// Words that ask for a chart.
const CHART_WORDS: [&str; 5] = ["chart", "graph", "plot", "bars", "histogram"];

/// The chart a request asks for when the placed tree has none: the rows counted per the field
/// named after "by" (else the first status-like field), a computed binding, so the bars are code's
/// counts of the stored rows.
fn asked_chart(
    tree: &PageTree,
    rows: &[Value],
    request: &str,
    plural: &str,
) -> Option<tessera_app::tree::Node> {
    let words: Vec<String> = request
        .split(|character: char| !character.is_alphanumeric() && character != '_')
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect();
    let asks = words.iter().any(|word| {
        CHART_WORDS
            .iter()
            .any(|chart| word == chart || word.strip_suffix('s') == Some(chart))
    });
    if !asks || tree.nodes.values().any(|node| node.component == "Chart") {
        return None;
    }
    let columns: Vec<&String> = rows.first()?.as_object()?.keys().collect();
    let named = words
        .iter()
        .position(|word| word == "by" || word == "per")
        .and_then(|at| words.get(at + 1))
        .and_then(|field| {
            columns
                .iter()
                .find(|column| column.as_str() == field.as_str())
        });
    let field = named
        .or_else(|| {
            STATUS_FIELDS
                .iter()
                .find_map(|status| columns.iter().find(|column| column.as_str() == *status))
        })?
        .as_str();
    let label = humanize(field);
    Some(node(
        "Chart",
        json!({
            "kind": "bar",
            "title": format!("{} per {}", super::confirm::capitalized(plural), label.to_lowercase()),
            "data": {"$data": "/rows", "$groupBy": field},
            "labelKey": field,
            "valueKey": "count",
            "xLabel": label,
            "yLabel": super::confirm::capitalized(plural),
        }),
    ))
}

/// The tree with every node id prefixed, so its table links and element ids are its own on a
/// page that shows several views.
#[must_use]
pub fn with_prefix(tree: &PageTree, prefix: &str) -> PageTree {
    let rename = |id: &String| format!("{prefix}{id}");
    let mut renamed = tree.clone();
    renamed.nodes = tree
        .nodes
        .iter()
        .map(|(id, node)| {
            let mut node = node.clone();
            node.children = node.children.iter().map(rename).collect();
            (rename(id), node)
        })
        .collect();
    renamed.order = tree.order.iter().map(rename).collect();
    renamed
}

/// The file of a finished read (see [`super::call_file`]): every kept row, from the stored
/// result (never from the site again): the rows as the table shows them in CSV (cells guarded
/// against formulas), as the site returned them in JSON. `None` when the stored result is not
/// one the read's operation describes.
pub(super) fn read_file(
    execution: &Execution,
    operation: &Operation,
    format: DownloadFormat,
) -> Option<DownloadFile> {
    let shape = execution
        .result
        .as_ref()
        .and_then(|result| read_shape(operation, result))?;
    let (rows, raw) = match shape {
        ReadShape::List { rows, raw, .. } => (Value::Array(rows), Value::Array(raw)),
        ReadShape::Record(record) => (
            Value::Array(vec![record]),
            execution.result.clone().unwrap_or(Value::Null),
        ),
    };
    let data = match format {
        DownloadFormat::Csv => rows,
        DownloadFormat::Json => raw,
    };
    let (content_type, body) = download_body(&json!({ "data": data }), format);
    Some(DownloadFile {
        content_type,
        filename: format!(
            "{}-{}.{}",
            execution.operation,
            short_id(execution.id),
            format.extension()
        ),
        body,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::chat::manifest::Manifest;

    fn search() -> anyhow::Result<Operation> {
        let manifest = Manifest::from_json(crate::demo::items::MANIFEST_JSON)?;
        manifest
            .operation("searchItems")
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("no searchItems"))
    }

    #[test]
    fn a_long_list_is_stored_cut_and_says_how_many_the_site_returned() {
        let rows: Vec<Value> = (0..MAX_READ_ROWS + 5).map(|n| json!({"id": n})).collect();
        let bounded = bounded_result(&Value::Array(rows.clone()));
        assert_eq!(result_rows(&bounded).map(Vec::len), Some(MAX_READ_ROWS));
        assert_eq!(bounded[CUT_KEY], json!(MAX_READ_ROWS + 5));
        let object = bounded_result(&json!({"items": rows, "total": 2000}));
        assert_eq!(result_rows(&object).map(Vec::len), Some(MAX_READ_ROWS));
        assert_eq!(object["total"], json!(2000));
        let short = json!({"items": [{"id": 1}], "total": 1});
        assert_eq!(bounded_result(&short), short);
    }

    #[test]
    fn list_cells_put_the_id_title_and_status_first_and_leave_out_api_links() -> anyhow::Result<()>
    {
        let operation = search()?;
        let result = json!([{"url": "https://api/x/1", "html_url": "https://x/1", "body": "long",
            "status": "open", "user": {"login": "ana", "id": 3}, "title": "Crash", "id": "item-1",
            "labels": [{"name": "bug"}, {"name": "ui"}], "raw": {"a": 1}}]);
        let Some(ReadShape::List { rows, .. }) = read_shape(&operation, &result) else {
            anyhow::bail!("not a list");
        };
        let keys: Vec<&String> = rows[0]
            .as_object()
            .map(|row| row.keys().collect())
            .unwrap_or_default();
        assert_eq!(keys, ["id", "title", "status", "labels", "body", "user"]);
        assert_eq!(rows[0]["labels"], json!("bug, ui"));
        assert_eq!(rows[0]["user"], json!("ana"));
        Ok(())
    }

    #[test]
    fn one_record_is_a_record_and_nothing_is_no_view() -> anyhow::Result<()> {
        let operation = search()?;
        assert!(matches!(
            read_shape(&operation, &json!({"id": "item-1", "title": "A"})),
            Some(ReadShape::Record(_))
        ));
        assert_eq!(read_shape(&operation, &Value::Null), None);
        Ok(())
    }

    #[test]
    fn the_prompt_heads_with_the_request_but_never_a_slash_command() {
        assert!(read_prompt("show me the open items", "items", true)
            .starts_with("Show me the open items. Every item"));
        assert!(
            read_prompt("/tool searchItems --status open", "items", true)
                .starts_with("The items found.")
        );
    }
}
