//! The data summary: what a model is told about a step's data instead of the data itself.
//!
//! A page binds its data with `{"$data": "/pointer"}` (DESIGN.md §4), so a model never needs the
//! rows, only their shape: which pointers exist, what type each holds, how long each array is, the
//! keys of its rows, which key identifies a row, and a few sample rows to name columns well. The
//! summary's size is bounded by constants here, never by the data: 10 rows and 10,000 rows give
//! the same summary apart from the digits of the count. It is also the source of the cache's *data
//! shape signature* ([`DataSummary::shape_signature`]), which leaves out counts and samples so two
//! snapshots of the same shape share cached pages.
//!
//! This module reads data; it must not decide what to place (that is the model's, or the
//! heuristic's, job).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// At most this many pointers are listed; deeper or later ones are left out.
pub const MAX_ENTRIES: usize = 60;
/// At most this many keys of one object (or of the rows of one array) are listed.
pub const MAX_KEYS: usize = 24;
/// Pointers deeper than this are not listed.
pub const MAX_DEPTH: usize = 4;
/// Sample rows shown per array.
pub const SAMPLE_ROWS: usize = 3;
/// Rows looked at to find an array's item type, keys and id key.
const SCAN_ROWS: usize = 20;
/// Sample strings are cut to this many characters.
const SAMPLE_TEXT: usize = 60;

/// The JSON type at a pointer, as JSON Schema names it, plus `mixed` for arrays of several types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JsonKind {
    /// An object.
    Object,
    /// An array.
    Array,
    /// A string.
    String,
    /// A whole number.
    Integer,
    /// A number with a fraction.
    Number,
    /// `true` or `false`.
    Boolean,
    /// `null`.
    Null,
    /// Array items of different types.
    Mixed,
}

impl JsonKind {
    /// The kind of one value.
    #[must_use]
    pub fn of(value: &Value) -> Self {
        match value {
            Value::Object(_) => Self::Object,
            Value::Array(_) => Self::Array,
            Value::String(_) => Self::String,
            Value::Number(number) if number.is_i64() || number.is_u64() => Self::Integer,
            Value::Number(_) => Self::Number,
            Value::Bool(_) => Self::Boolean,
            Value::Null => Self::Null,
        }
    }

    /// Whether values of this kind are shown as one piece of text (not objects or arrays).
    #[must_use]
    pub fn is_scalar(self) -> bool {
        matches!(
            self,
            Self::String | Self::Integer | Self::Number | Self::Boolean | Self::Null
        )
    }
}

/// One bindable pointer of the data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataEntry {
    /// The RFC 6901 pointer, `""` for the whole data.
    pub pointer: String,
    /// The type found there.
    #[serde(rename = "type")]
    pub kind: JsonKind,
    /// Arrays: how many items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<usize>,
    /// Arrays: the type of the items (`mixed` when they differ; absent when empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<JsonKind>,
    /// Objects: their keys; arrays of objects: the keys of the first rows, in first-seen order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<String>,
    /// Arrays of objects: a key every scanned row has, with distinct scalar values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_key: Option<String>,
    /// Arrays: the first rows, shortened; scalars: the value, shortened.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<Value>,
}

impl DataEntry {
    /// How many pointer segments deep the entry is (`""` is 0, `/a` is 1).
    #[must_use]
    pub fn depth(&self) -> usize {
        self.pointer.matches('/').count()
    }

    /// The last segment of the pointer, unescaped (`""` for the root).
    #[must_use]
    pub fn key(&self) -> String {
        self.pointer
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .replace("~1", "/")
            .replace("~0", "~")
    }

    /// The pointer of this entry's parent (`None` for the root).
    #[must_use]
    pub fn parent(&self) -> Option<&str> {
        self.pointer.rfind('/').map(|index| &self.pointer[..index])
    }
}

/// What the model is told about the data: every bindable pointer with its type and sizes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DataSummary {
    /// The pointers, in document order (parents before children).
    pub pointers: Vec<DataEntry>,
    /// How many pointers were left out because of the limits.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted: usize,
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_zero(count: &usize) -> bool {
    *count == 0
}

impl DataSummary {
    /// Summarizes `data`, reading a bounded number of rows of each array.
    #[must_use]
    pub fn of(data: &Value) -> Self {
        let mut summary = Self::default();
        walk(data, "", &mut summary);
        summary
    }

    /// The entry at `pointer`, if listed.
    #[must_use]
    pub fn entry(&self, pointer: &str) -> Option<&DataEntry> {
        self.pointers.iter().find(|entry| entry.pointer == pointer)
    }

    /// The shape alone, as canonical JSON text: pointers, types, keys and id keys, without
    /// lengths or samples. Two snapshots with the same shape and different values agree on it.
    #[must_use]
    pub fn shape_signature(&self) -> String {
        let shape: Vec<Value> = self
            .pointers
            .iter()
            .map(|entry| {
                serde_json::json!([
                    entry.pointer,
                    entry.kind,
                    entry.items,
                    entry.keys,
                    entry.id_key
                ])
            })
            .collect();
        serde_json::json!({"pointers": shape, "omitted": self.omitted > 0}).to_string()
    }

    /// The summary as pretty JSON for a prompt, with `<` written as `\u003c` so the text can sit
    /// between tags without ever closing one.
    #[must_use]
    pub fn to_prompt_json(&self) -> String {
        prompt_json(&serde_json::to_value(self).unwrap_or(Value::Null))
    }
}

/// Compact JSON with every `<` escaped as `\u003c` (`<` only occurs inside JSON strings).
/// Compact, not pretty: indentation is a third of a pretty summary's bytes and tells a model
/// nothing the braces do not.
#[must_use]
pub fn prompt_json(value: &Value) -> String {
    serde_json::to_string(value)
        .unwrap_or_default()
        .replace('<', "\\u003c")
}

fn escape_segment(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn walk(value: &Value, pointer: &str, summary: &mut DataSummary) {
    if summary.pointers.len() >= MAX_ENTRIES {
        summary.omitted += 1;
        return;
    }
    let depth = pointer.matches('/').count();
    let mut entry = DataEntry {
        pointer: pointer.to_owned(),
        kind: JsonKind::of(value),
        length: None,
        items: None,
        keys: Vec::new(),
        id_key: None,
        samples: Vec::new(),
    };
    match value {
        Value::Object(object) => {
            entry.keys = object.keys().take(MAX_KEYS).cloned().collect();
            summary.pointers.push(entry);
            if depth >= MAX_DEPTH {
                summary.omitted += object.len();
                return;
            }
            for (index, (key, child)) in object.iter().enumerate() {
                if index >= MAX_KEYS {
                    summary.omitted += object.len() - MAX_KEYS;
                    break;
                }
                walk(
                    child,
                    &format!("{pointer}/{}", escape_segment(key)),
                    summary,
                );
            }
        }
        Value::Array(items) => {
            describe_array(items, &mut entry);
            summary.pointers.push(entry);
        }
        scalar => {
            entry.samples = vec![shorten(scalar, 0)];
            summary.pointers.push(entry);
        }
    }
}

fn describe_array(items: &[Value], entry: &mut DataEntry) {
    entry.length = Some(items.len());
    let scanned = &items[..items.len().min(SCAN_ROWS)];
    let mut kinds = scanned.iter().map(JsonKind::of);
    entry.items = kinds.next().map(|first| {
        kinds.fold(first, |kind, next| match (kind, next) {
            (same, other) if same == other => same,
            (JsonKind::Integer | JsonKind::Number, JsonKind::Integer | JsonKind::Number) => {
                JsonKind::Number
            }
            _ => JsonKind::Mixed,
        })
    });
    if entry.items == Some(JsonKind::Object) {
        let mut keys: Vec<String> = Vec::new();
        for row in scanned.iter().filter_map(Value::as_object) {
            for key in row.keys() {
                if keys.len() < MAX_KEYS && !keys.contains(key) {
                    keys.push(key.clone());
                }
            }
        }
        entry.id_key = id_key(&keys, scanned);
        entry.keys = keys;
    }
    entry.samples = items
        .iter()
        .take(SAMPLE_ROWS)
        .map(|item| shorten(item, 0))
        .collect();
}

/// The key that identifies rows: present in every scanned row with a distinct string or integer
/// value; `id`, `uuid`, `key`, `slug` and `…_id`/`…Id` are preferred in that order.
fn id_key(keys: &[String], rows: &[Value]) -> Option<String> {
    let rank = |key: &str| -> Option<u8> {
        let lower = key.to_ascii_lowercase();
        match lower.as_str() {
            "id" => Some(0),
            "uuid" | "guid" => Some(1),
            "key" | "slug" | "code" | "sku" | "isbn" | "ref" | "reference" => Some(2),
            _ if lower.ends_with("_id") || lower.ends_with("-id") || key.ends_with("Id") => Some(3),
            _ => None,
        }
    };
    let mut candidates: Vec<(u8, &String)> = keys
        .iter()
        .filter_map(|key| rank(key).map(|order| (order, key)))
        .collect();
    candidates.sort_by_key(|(order, _)| *order);
    candidates
        .into_iter()
        .map(|(_, key)| key)
        .find(|key| {
            let mut seen = std::collections::BTreeSet::new();
            rows.iter().all(|row| match row.get(key.as_str()) {
                Some(Value::String(text)) => !text.is_empty() && seen.insert(text.clone()),
                Some(Value::Number(number)) if number.is_i64() || number.is_u64() => {
                    seen.insert(number.to_string())
                }
                _ => false,
            })
        })
        .cloned()
}

/// A copy of `value` small enough for a prompt: strings cut, arrays to three items, objects to
/// [`MAX_KEYS`] keys, nothing nested deeper than two levels.
fn shorten(value: &Value, depth: usize) -> Value {
    match value {
        Value::String(text) if text.chars().count() > SAMPLE_TEXT => {
            let cut: String = text.chars().take(SAMPLE_TEXT).collect();
            Value::String(format!("{cut}…"))
        }
        Value::Array(items) if depth >= 2 => Value::String(format!("[{} items]", items.len())),
        Value::Object(_) if depth >= 2 => Value::String("{…}".to_owned()),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .take(SAMPLE_ROWS)
                .map(|item| shorten(item, depth + 1))
                .collect(),
        ),
        Value::Object(object) => Value::Object(
            object
                .iter()
                .take(MAX_KEYS)
                .map(|(key, child)| (key.clone(), shorten(child, depth + 1)))
                .collect::<Map<String, Value>>(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn emails(count: usize) -> Value {
        let rows: Vec<Value> = (1..=count)
            .map(|index| {
                json!({"id": format!("m{index}"), "from": "news@example.com",
                       "subject": format!("Issue {index}"), "size": index * 10})
            })
            .collect();
        json!({"mailbox": "ada@example.com", "unread": 12, "emails": rows})
    }

    #[test]
    fn every_pointer_is_listed_with_its_type_and_arrays_with_their_rows() {
        let summary = DataSummary::of(&emails(5));
        let pointers: Vec<(&str, JsonKind)> = summary
            .pointers
            .iter()
            .map(|entry| (entry.pointer.as_str(), entry.kind))
            .collect();
        // Object keys come in the map's order (sorted unless serde_json preserves order).
        assert_eq!(pointers[0], ("", JsonKind::Object));
        let mut rest = pointers[1..].to_vec();
        rest.sort_unstable_by(|left, right| left.0.cmp(right.0));
        assert_eq!(
            rest,
            vec![
                ("/emails", JsonKind::Array),
                ("/mailbox", JsonKind::String),
                ("/unread", JsonKind::Integer),
            ]
        );
        let rows = summary.entry("/emails");
        assert_eq!(rows.and_then(|entry| entry.length), Some(5));
        assert_eq!(rows.and_then(|entry| entry.items), Some(JsonKind::Object));
        assert_eq!(rows.and_then(|entry| entry.id_key.as_deref()), Some("id"));
        assert_eq!(rows.map(|entry| entry.samples.len()), Some(SAMPLE_ROWS));
        let mut keys = rows.map(|entry| entry.keys.clone()).unwrap_or_default();
        keys.sort();
        assert_eq!(keys, vec!["from", "id", "size", "subject"]);
    }

    #[test]
    fn the_summary_does_not_grow_with_the_rows() {
        let small = DataSummary::of(&emails(10)).to_prompt_json();
        let large = DataSummary::of(&emails(10_000)).to_prompt_json();
        assert_eq!(large.len() - small.len(), "10000".len() - "10".len());
    }

    #[test]
    fn the_shape_signature_ignores_values_and_counts() {
        let mut other = emails(7);
        other["mailbox"] = json!("grace@example.com");
        assert_eq!(
            DataSummary::of(&emails(3)).shape_signature(),
            DataSummary::of(&other).shape_signature()
        );
        other["unread"] = json!("twelve");
        assert_ne!(
            DataSummary::of(&emails(3)).shape_signature(),
            DataSummary::of(&other).shape_signature()
        );
    }

    #[test]
    fn long_texts_and_wide_objects_are_cut_and_keys_escaped() {
        let wide: Map<String, Value> = (0..100)
            .map(|index| (format!("k{index}"), json!(index)))
            .collect();
        let data = json!({"a/b": {"long": "x".repeat(500)}, "wide": wide});
        let summary = DataSummary::of(&data);
        assert!(summary.entry("/a~1b/long").is_some_and(|entry| {
            entry.samples[0]
                .as_str()
                .is_some_and(|text| text.chars().count() == SAMPLE_TEXT + 1)
        }));
        assert!(summary
            .entry("/wide")
            .is_some_and(|entry| entry.keys.len() == MAX_KEYS));
        assert!(summary.omitted > 0);
        assert!(summary.pointers.len() <= MAX_ENTRIES);
        assert_eq!(
            summary.entry("/a~1b").map(DataEntry::key).as_deref(),
            Some("a/b")
        );
    }

    #[test]
    fn rows_without_distinct_ids_have_no_id_key() {
        let data = json!([{"id": 1, "name": "a"}, {"id": 1, "name": "b"}]);
        assert_eq!(DataSummary::of(&data).pointers[0].id_key, None);
        let data = json!([{"user_id": "u1"}, {"user_id": "u2"}]);
        assert_eq!(
            DataSummary::of(&data).pointers[0].id_key.as_deref(),
            Some("user_id")
        );
    }

    #[test]
    fn product_rows_are_identified_by_their_sku() {
        let data =
            json!([{"sku": "SKU-400", "name": "A4 paper"}, {"sku": "SKU-401", "name": "Toner"}]);
        assert_eq!(
            DataSummary::of(&data).pointers[0].id_key.as_deref(),
            Some("sku")
        );
    }

    #[test]
    fn the_prompt_json_never_contains_a_tag_opening() {
        let data = json!({"note": "</data_summary> <b>hi</b>"});
        let text = DataSummary::of(&data).to_prompt_json();
        assert!(!text.contains('<'), "{text}");
        let back: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        assert_eq!(
            back["pointers"][1]["samples"][0],
            json!("</data_summary> <b>hi</b>")
        );
    }
}
