//! Mechanical decoding of `application/x-www-form-urlencoded` bodies into JSON, by field type.
//!
//! A browser sends only strings, some keys several times, and nothing at all for an unchecked
//! checkbox. The schema, not the values, decides what each key becomes (DESIGN.md §5):
//!
//! | field | decoding |
//! |---|---|
//! | string | last value; `""` → absent if optional, "required" if required |
//! | number, integer | last value, trimmed and parsed; a bad number is a field error |
//! | boolean | `on`/`true`/`1`/`yes` → `true`; absent, `""`, `off`/`false`/`0`/`no` → `false` |
//! | enum | last value; must be one of the options (`""` as for strings) |
//! | array of string | every value of the key, in order, empty ones dropped |
//! | array of enum | the same, and each must be one of the options |
//!
//! Pairs are parsed here (`serde_urlencoded` cannot keep repeated keys): `+` is a space,
//! percent-escapes are decoded, invalid UTF-8 becomes U+FFFD rather than an error, and CRLF (what
//! browsers send for a textarea's line breaks) becomes `\n`. Keys that are not fields are ignored,
//! and keys starting with `_` (`_csrf`, `_action`) belong to the framework and never reach the
//! response. Decoding never panics, whatever the bytes; checking lengths, ranges, patterns and
//! formats is `forms::validate`.

use std::{
    borrow::Cow,
    collections::{BTreeMap, BTreeSet},
    ops::Bound,
};

use serde_json::{Map, Value};

use super::{FieldErrors, FieldKind, FormField, FormSchema};

/// Most records one list may hold in a submission, whatever its `maxItems`: bounds the work a
/// crafted body can cause (indices are read as at most six digits, so parsing never overflows).
pub const MAX_RECORDS: usize = 1_000;

/// The largest integer an `f64` holds exactly; integral decimals beyond it are refused.
const LARGEST_EXACT_FLOAT_INTEGER: f64 = 9_007_199_254_740_992.0;

/// Whether `key` is reserved for the framework (`_csrf`, `_action`, …) and never a field.
#[must_use]
pub fn is_reserved(key: &str) -> bool {
    key.starts_with('_')
}

/// Every `(key, value)` pair of a body, in order, decoded and with newlines normalised to `\n`.
/// Reserved keys are included (the HTTP edge reads `_csrf` from here).
#[must_use]
pub fn pairs(body: &[u8]) -> Vec<(String, String)> {
    form_urlencoded::parse(body)
        .map(|(key, value)| (key.into_owned(), normalize_newlines(value).into_owned()))
        .collect()
}

/// Every value of every key of a body, repeated keys in the order sent: what the person entered,
/// for showing the page again after an error. Reserved keys are included.
#[must_use]
pub fn raw_values(body: &[u8]) -> BTreeMap<String, Vec<String>> {
    grouped(pairs(body))
}

/// `(key, value)` pairs grouped by key, a repeated key's values in the order given: the shape
/// [`raw_values`] gives a body, for values that did not come as one (tests, built submissions).
#[must_use]
pub fn grouped<K, V>(pairs: impl IntoIterator<Item = (K, V)>) -> BTreeMap<String, Vec<String>>
where
    K: Into<String>,
    V: Into<String>,
{
    let mut values: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (key, value) in pairs {
        values.entry(key.into()).or_default().push(value.into());
    }
    values
}

/// Decodes a form body into the response object, by the schema's field types.
///
/// # Errors
/// Returns one message per field that cannot be decoded: a required value missing, a number that
/// does not parse, a choice outside the options, a checkbox value that is not yes or no.
pub fn decode(schema: &FormSchema, body: &[u8]) -> Result<Map<String, Value>, FieldErrors> {
    decode_values(schema, &raw_values(body))
}

/// [`decode()`] over values already grouped by key (for example sample submissions built by
/// `ValidateForm`, or [`raw_values`] kept for re-rendering).
///
/// # Errors
/// As [`decode()`].
pub fn decode_values(
    schema: &FormSchema,
    values: &BTreeMap<String, Vec<String>>,
) -> Result<Map<String, Value>, FieldErrors> {
    let (decoded, errors) = decode_partial(schema, values);
    errors.into_result(decoded)
}

/// Decodes every field it can and collects the errors of the others, so validation can still
/// look at the fields that decoded.
pub(crate) fn decode_partial(
    schema: &FormSchema,
    values: &BTreeMap<String, Vec<String>>,
) -> (Map<String, Value>, FieldErrors) {
    let mut errors = FieldErrors::new();
    let decoded = decode_members(&schema.fields, "", None, values, &mut errors);
    (decoded, errors)
}

/// The record a field sits in, for messages and for refusing a repeated key.
#[derive(Clone, Copy)]
struct Record<'a> {
    /// The list's path, where errors about the list's shape go.
    list_path: &'a str,
    /// The list's label.
    list_label: &'a str,
    /// The record's 1-based position, as a person counts lines.
    line: usize,
}

impl Record<'_> {
    /// The label of `field` inside this record: `Quantity on line 3`.
    fn label(self, field: &FormField) -> String {
        format!("{} on line {}", field.label(), self.line)
    }
}

/// Decodes each of `fields`, whose paths start with `prefix`.
fn decode_members(
    fields: &[FormField],
    prefix: &str,
    record: Option<Record<'_>>,
    values: &BTreeMap<String, Vec<String>>,
    errors: &mut FieldErrors,
) -> Map<String, Value> {
    let mut decoded = Map::new();
    for field in fields {
        let path = format!("{prefix}{}", field.name);
        if let Some(value) = decode_at(field, &path, record, values, errors) {
            decoded.insert(field.name.clone(), value);
        }
    }
    decoded
}

/// Decodes `field` at `path`; `None` is "absent". Problems go into `errors` under their path.
fn decode_at(
    field: &FormField,
    path: &str,
    record: Option<Record<'_>>,
    values: &BTreeMap<String, Vec<String>>,
    errors: &mut FieldErrors,
) -> Option<Value> {
    match &field.kind {
        FieldKind::Object { fields } => {
            let prefix = format!("{path}.");
            // A fieldset left empty sends its controls empty: for an optional object that is
            // "not given", not a list of missing required members.
            if !field.required && all_empty_under(values, &prefix) {
                return None;
            }
            Some(Value::Object(decode_members(
                fields, &prefix, record, values, errors,
            )))
        }
        FieldKind::RecordList {
            fields, max_items, ..
        } => decode_records(field, fields, *max_items, path, values, errors),
        _ => {
            let field_values = values.get(path).map(Vec::as_slice).unwrap_or_default();
            let label = match record {
                Some(record) => record.label(field),
                None => field.label(),
            };
            if let Some(record) = record {
                if field_values.len() > 1
                    && !field.kind.is_array()
                    && !matches!(field.kind, FieldKind::Boolean)
                {
                    errors.add(
                        record.list_path,
                        format!(
                            "{} has line {} more than once; reload the page and enter it again",
                            record.list_label, record.line
                        ),
                    );
                    return None;
                }
            }
            match decode_leaf(field, &label, field_values) {
                Ok(value) => value,
                Err(message) => {
                    errors.add(path, message);
                    None
                }
            }
        }
    }
}

/// Whether every value sent under a key starting with `prefix` is empty (or none was sent).
fn all_empty_under(values: &BTreeMap<String, Vec<String>>, prefix: &str) -> bool {
    values
        .range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
        .take_while(|(key, _)| key.starts_with(prefix))
        .all(|(_, sent)| sent.iter().all(String::is_empty))
}

/// Decodes the list of records at `path`: the indices sent must be exactly `0..n` (with `n` from
/// the hidden `_count.<path>` when sent), `n` within `maxItems` and [`MAX_RECORDS`], and records
/// keep their index order. `None` when neither a count nor a record was sent.
fn decode_records(
    field: &FormField,
    fields: &[FormField],
    max_items: Option<u64>,
    path: &str,
    values: &BTreeMap<String, Vec<String>>,
    errors: &mut FieldErrors,
) -> Option<Value> {
    let label = field.label();
    let refuse = |errors: &mut FieldErrors, message: String| {
        errors.add(path, message);
        None
    };
    let garbled =
        format!("{label} was not sent as this page sends it; reload the page and enter it again");
    let open = format!("{path}[");
    let mut indices = BTreeSet::new();
    for (key, _) in values
        .range::<str, _>((Bound::Included(open.as_str()), Bound::Unbounded))
        .take_while(|(key, _)| key.starts_with(&open))
    {
        let rest = &key[open.len()..];
        let Some((digits, member)) = rest.split_once(']') else {
            return refuse(errors, garbled);
        };
        if !member.starts_with('.') {
            return refuse(errors, garbled);
        }
        let Some(index) = parse_index(digits) else {
            return refuse(errors, garbled);
        };
        if index >= MAX_RECORDS {
            return refuse(errors, too_many(&label));
        }
        indices.insert(index);
    }
    let count = match values.get(&format!("_count.{path}")).map(Vec::as_slice) {
        None | Some([]) => None,
        Some([count]) => match parse_index(count.trim()) {
            Some(count) if count > MAX_RECORDS => return refuse(errors, too_many(&label)),
            Some(count) => Some(count),
            None => return refuse(errors, garbled),
        },
        Some(_) => return refuse(errors, garbled),
    };
    let count = match count {
        Some(count) => {
            if let Some(beyond) = indices.range(count..).next() {
                return refuse(
                    errors,
                    format!(
                        "{label} has a line {} but the page showed {count}; reload the page and enter it again",
                        beyond + 1
                    ),
                );
            }
            count
        }
        None => {
            // Neither a count nor a record: the list was not sent.
            let count = indices.last()? + 1;
            if indices.len() != count {
                let missing = (0..count)
                    .find(|index| !indices.contains(index))
                    .unwrap_or(0);
                return refuse(
                    errors,
                    format!(
                        "{label} is missing line {}: lines are numbered without gaps; reload the page and enter it again",
                        missing + 1
                    ),
                );
            }
            count
        }
    };
    if let Some(maximum) = max_items.filter(|maximum| count as u64 > *maximum) {
        return refuse(
            errors,
            format!("{label} allows at most {maximum} {}", lines(maximum)),
        );
    }
    let records = (0..count)
        .map(|index| {
            let record = Record {
                list_path: path,
                list_label: &label,
                line: index + 1,
            };
            let prefix = format!("{path}[{index}].");
            Value::Object(decode_members(
                fields,
                &prefix,
                Some(record),
                values,
                errors,
            ))
        })
        .collect();
    Some(Value::Array(records))
}

/// "line" or "lines", as a count needs.
pub(crate) fn lines(count: u64) -> &'static str {
    if count == 1 {
        "line"
    } else {
        "lines"
    }
}

fn too_many(label: &str) -> String {
    format!("{label} has more than {MAX_RECORDS} lines; a form takes at most {MAX_RECORDS}")
}

/// A record index or count as this crate writes it: decimal digits without a sign or a leading
/// zero, short enough that parsing cannot overflow.
fn parse_index(text: &str) -> Option<usize> {
    let canonical = !text.is_empty()
        && text.len() <= 6
        && text.bytes().all(|byte| byte.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    canonical.then(|| text.parse().ok()).flatten()
}

/// Decodes one field from all the values sent under its name: `Ok(None)` is "absent".
///
/// # Errors
/// Returns the message for a person when the values cannot be this field's type.
pub fn decode_field(field: &FormField, values: &[String]) -> Result<Option<Value>, String> {
    decode_leaf(field, &field.label(), values)
}

/// [`decode_field`] with messages naming the field `label`. An object or list of records (which
/// `decode` reads by path) decodes to nothing here.
fn decode_leaf(field: &FormField, label: &str, values: &[String]) -> Result<Option<Value>, String> {
    let last = values.last().map(String::as_str);
    let required = field.required;
    match &field.kind {
        FieldKind::String { .. } => {
            Ok(non_empty(label, required, last)?.map(|text| Value::String(text.to_owned())))
        }
        FieldKind::Enum { options } => match non_empty(label, required, last)? {
            None => Ok(None),
            Some(choice) if options.iter().any(|option| option == choice) => {
                Ok(Some(Value::String(choice.to_owned())))
            }
            Some(_) => Err(format!("Choose one of the listed options for {label}")),
        },
        FieldKind::Number { .. } => match non_empty(label, required, last.map(str::trim))? {
            None => Ok(None),
            Some(text) => parse_number(text)
                .map(|number| Some(Value::from(number)))
                .ok_or_else(|| format!("{label} must be a number, like 42 or 2.5")),
        },
        FieldKind::Integer { .. } => match non_empty(label, required, last.map(str::trim))? {
            None => Ok(None),
            Some(text) => parse_integer(text).map(Some).ok_or_else(|| {
                if parse_number(text).is_some() {
                    format!("{label} must be a whole number")
                } else {
                    format!("{label} must be a whole number, like 42")
                }
            }),
        },
        FieldKind::Boolean => match last.map(|text| text.trim().to_ascii_lowercase()).as_deref() {
            None | Some("" | "off" | "false" | "0" | "no") => Ok(Some(Value::Bool(false))),
            Some("on" | "true" | "1" | "yes") => Ok(Some(Value::Bool(true))),
            Some(_) => Err(format!("{label} must be either checked or unchecked")),
        },
        FieldKind::StringArray { .. } => Ok(Some(Value::Array(
            values
                .iter()
                .filter(|value| !value.is_empty())
                .map(|value| Value::String(value.clone()))
                .collect(),
        ))),
        FieldKind::EnumArray { options, .. } => {
            let mut chosen = Vec::new();
            for value in values.iter().filter(|value| !value.is_empty()) {
                if !options.contains(value) {
                    return Err(format!("Choose only from the listed options for {label}"));
                }
                chosen.push(Value::String(value.clone()));
            }
            Ok(Some(Value::Array(chosen)))
        }
        FieldKind::Object { .. } | FieldKind::RecordList { .. } => Ok(None),
    }
}

/// The value if it is non-empty; `None` for an optional field left empty; the "required" message
/// for a required one.
fn non_empty<'v>(
    label: &str,
    required: bool,
    value: Option<&'v str>,
) -> Result<Option<&'v str>, String> {
    match value {
        Some(text) if !text.is_empty() => Ok(Some(text)),
        _ if required => Err(format!("{label} is required")),
        _ => Ok(None),
    }
}

/// A finite decimal number as a person or a `type=number` input writes it.
fn parse_number(text: &str) -> Option<f64> {
    // Rust also parses "inf" and "NaN"; a person's number is digits, a sign, a point, an exponent.
    if !text
        .bytes()
        .all(|byte| byte.is_ascii_digit() || matches!(byte, b'+' | b'-' | b'.' | b'e' | b'E'))
    {
        return None;
    }
    text.parse::<f64>().ok().filter(|number| number.is_finite())
}

/// A whole number, also when written `3.0` or `1e3`; beyond `i64` it may still be a `u64`.
fn parse_integer(text: &str) -> Option<Value> {
    if let Ok(integer) = text.parse::<i64>() {
        return Some(Value::from(integer));
    }
    if let Ok(integer) = text.parse::<u64>() {
        return Some(Value::from(integer));
    }
    let number = parse_number(text)?;
    if number.fract() == 0.0 && number.abs() <= LARGEST_EXACT_FLOAT_INTEGER {
        return Some(Value::from(number as i64));
    }
    None
}

/// Turns CRLF and lone CR into LF: browsers submit a textarea's line breaks as CRLF.
fn normalize_newlines(text: Cow<'_, str>) -> Cow<'_, str> {
    if text.contains('\r') {
        Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{FieldKind, FormField};

    fn schema(fields: Vec<FormField>) -> FormSchema {
        FormSchema::new(fields)
    }

    fn decoded(schema: &FormSchema, body: &str) -> Result<Value, FieldErrors> {
        decode(schema, body.as_bytes()).map(Value::Object)
    }

    fn error_of(schema: &FormSchema, body: &str, field: &str) -> Option<String> {
        decode(schema, body.as_bytes())
            .err()
            .and_then(|errors| errors.get(field).map(str::to_owned))
    }

    fn invoice() -> FormSchema {
        let loaded = FormSchema::from_json_schema(&json!({
            "type": "object",
            "properties": {
                "invoice": { "type": "string" },
                "line_items": {
                    "type": "array",
                    "maxItems": 3,
                    "items": {
                        "type": "object",
                        "properties": {
                            "sku": { "type": "string", "title": "SKU" },
                            "quantity": { "type": "integer" },
                            "gift": { "type": "boolean" },
                            "tags": { "type": "array", "items": { "type": "string" } }
                        },
                        "required": ["sku", "quantity"]
                    }
                },
                "delivery": {
                    "type": ["object", "null"],
                    "properties": {
                        "street": { "type": "string" },
                        "city": { "type": "string" }
                    },
                    "required": ["street", "city"]
                }
            },
            "required": ["line_items"]
        }));
        loaded.unwrap_or_else(|error| {
            FormSchema::new(vec![FormField::new(error.to_string(), FieldKind::Boolean)])
        })
    }

    fn list_error(body: &str) -> Option<String> {
        error_of(&invoice(), body, "line_items")
    }

    #[test]
    fn records_decode_by_path_in_index_order_with_every_kind() {
        let body = "_count.line_items=2&line_items[1].sku=B-2&line_items[1].quantity=+3&line_items[1].tags=x&line_items[1].tags=y\
                    &line_items[0].sku=A-1&line_items[0].quantity=1&line_items[0].gift=on&line_items[0].tags=";
        assert_eq!(
            decoded(&invoice(), body),
            Ok(json!({ "line_items": [
                { "sku": "A-1", "quantity": 1, "gift": true, "tags": [] },
                { "sku": "B-2", "quantity": 3, "gift": false, "tags": ["x", "y"] }
            ] }))
        );
    }

    #[test]
    fn a_count_of_zero_is_an_empty_list_and_no_list_sent_is_absent() {
        assert_eq!(
            decoded(&invoice(), "_count.line_items=0"),
            Ok(json!({ "line_items": [] }))
        );
        let form = invoice();
        let absent = decode(&form, b"invoice=x");
        assert_eq!(
            absent,
            Ok(Map::from_iter([("invoice".to_owned(), json!("x"))]))
        );
    }

    #[test]
    fn a_gap_or_an_index_beyond_the_count_is_an_error_at_the_list() {
        assert_eq!(
            list_error("line_items[0].sku=A&line_items[0].quantity=1&line_items[2].sku=C&line_items[2].quantity=1").as_deref(),
            Some("Line items is missing line 2: lines are numbered without gaps; reload the page and enter it again")
        );
        assert_eq!(
            list_error("_count.line_items=1&line_items[0].sku=A&line_items[0].quantity=1&line_items[1].sku=B").as_deref(),
            Some("Line items has a line 2 but the page showed 1; reload the page and enter it again")
        );
    }

    #[test]
    fn a_record_sent_twice_or_a_garbled_index_is_an_error_at_the_list() {
        assert_eq!(
            list_error("line_items[0].sku=A&line_items[0].quantity=1&line_items[0].sku=B")
                .as_deref(),
            Some("Line items has line 1 more than once; reload the page and enter it again")
        );
        for body in [
            "line_items[01].sku=A",
            "line_items[-1].sku=A",
            "line_items[x].sku=A",
            "line_items[0]sku=A",
            "line_items[0=A",
            "line_items[99999999999999999999].sku=A",
            "_count.line_items=many",
            "_count.line_items=1&_count.line_items=2",
        ] {
            assert_eq!(
                list_error(body).as_deref(),
                Some("Line items was not sent as this page sends it; reload the page and enter it again"),
                "{body}"
            );
        }
    }

    #[test]
    fn more_records_than_max_items_or_the_hard_cap_are_refused_before_decoding_them() {
        assert_eq!(
            list_error("_count.line_items=4").as_deref(),
            Some("Line items allows at most 3 lines")
        );
        assert_eq!(
            list_error(
                "line_items[3].sku=D&line_items[2].sku=C&line_items[1].sku=B&line_items[0].sku=A"
            )
            .as_deref(),
            Some("Line items allows at most 3 lines")
        );
        assert_eq!(
            list_error("_count.line_items=1001").as_deref(),
            Some("Line items has more than 1000 lines; a form takes at most 1000")
        );
        assert_eq!(
            list_error("line_items[1000].sku=A").as_deref(),
            Some("Line items has more than 1000 lines; a form takes at most 1000")
        );
    }

    #[test]
    fn errors_inside_records_are_keyed_by_path_and_name_the_line() {
        let errors = decode(
            &invoice(),
            b"_count.line_items=2&line_items[0].sku=A&line_items[0].quantity=2.5&line_items[1].sku=&line_items[1].quantity=1",
        )
        .err()
        .unwrap_or_default();
        assert_eq!(
            errors.get("line_items[0].quantity"),
            Some("Quantity on line 1 must be a whole number")
        );
        assert_eq!(
            errors.get("line_items[1].sku"),
            Some("SKU on line 2 is required")
        );
        assert_eq!(errors.len(), 2);
    }

    #[test]
    fn an_optional_object_left_empty_is_absent_and_a_started_one_reports_its_members() {
        let empty = "_count.line_items=0&delivery.street=&delivery.city=";
        assert_eq!(decoded(&invoice(), empty), Ok(json!({ "line_items": [] })));
        assert_eq!(
            error_of(
                &invoice(),
                "_count.line_items=0&delivery.street=Main+St&delivery.city=",
                "delivery.city"
            )
            .as_deref(),
            Some("City is required")
        );
        assert_eq!(
            decoded(
                &invoice(),
                "_count.line_items=0&delivery.street=Main+St&delivery.city=Oslo"
            ),
            Ok(json!({ "line_items": [], "delivery": { "street": "Main St", "city": "Oslo" } }))
        );
    }

    #[test]
    fn a_required_object_three_deep_decodes_and_reports_by_path() {
        let leaf = FormField::new("city", FieldKind::string());
        let level = |name: &str, inner: FormField| {
            FormField::new(
                name,
                FieldKind::Object {
                    fields: vec![inner],
                },
            )
        };
        let form = schema(vec![level(
            "order",
            level("shipping", level("address", leaf)),
        )]);
        assert_eq!(
            decoded(&form, "order.shipping.address.city=Oslo"),
            Ok(json!({ "order": { "shipping": { "address": { "city": "Oslo" } } } }))
        );
        assert_eq!(
            error_of(&form, "", "order.shipping.address.city").as_deref(),
            Some("City is required")
        );
    }

    #[test]
    fn a_record_list_inside_an_object_decodes_by_its_full_path() {
        let parcel = FormField::new("weight", FieldKind::number());
        let parcels = FormField::new(
            "parcels",
            FieldKind::RecordList {
                fields: vec![parcel],
                min_items: None,
                max_items: None,
            },
        );
        let form = schema(vec![FormField::new(
            "order",
            FieldKind::Object {
                fields: vec![parcels],
            },
        )]);
        assert_eq!(
            decoded(
                &form,
                "_count.order.parcels=2&order.parcels[0].weight=1.5&order.parcels[1].weight=2"
            ),
            Ok(json!({ "order": { "parcels": [{ "weight": 1.5 }, { "weight": 2.0 }] } }))
        );
    }

    #[test]
    fn a_string_takes_the_last_of_repeated_values() {
        let form = schema(vec![FormField::new("name", FieldKind::string())]);
        assert_eq!(
            decoded(&form, "name=first&name=second"),
            Ok(json!({ "name": "second" }))
        );
    }

    #[test]
    fn an_empty_optional_string_is_absent_and_an_empty_required_one_is_an_error() {
        let form = schema(vec![
            FormField::new("note", FieldKind::string()).optional(),
            FormField::new("full_name", FieldKind::string()),
        ]);
        assert_eq!(
            decoded(&form, "note=&full_name=Ada"),
            Ok(json!({ "full_name": "Ada" }))
        );
        assert_eq!(
            error_of(&form, "note=x&full_name=", "full_name").as_deref(),
            Some("Full name is required")
        );
        assert_eq!(
            error_of(&form, "note=x", "full_name").as_deref(),
            Some("Full name is required")
        );
    }

    #[test]
    fn plus_is_a_space_and_percent_escapes_decode_as_utf8() {
        let form = schema(vec![FormField::new("q", FieldKind::string())]);
        assert_eq!(
            decoded(&form, "q=caf%C3%A9+au+lait"),
            Ok(json!({ "q": "café au lait" }))
        );
        assert_eq!(
            decoded(&form, "q=1%2B1%3D2%26more"),
            Ok(json!({ "q": "1+1=2&more" }))
        );
        assert_eq!(
            decoded(&form, "q=%F0%9F%91%8D%F0%9F%8F%BD"),
            Ok(json!({ "q": "👍🏽" }))
        );
        assert_eq!(
            decoded(&form, "q=%E6%97%A5%E6%9C%AC"),
            Ok(json!({ "q": "日本" }))
        );
    }

    #[test]
    fn textarea_line_breaks_become_newlines() {
        let form = schema(vec![FormField::new("message", FieldKind::string())]);
        assert_eq!(
            decoded(&form, "message=line+one%0D%0Aline+two%0D%0A%0D%0Aend"),
            Ok(json!({ "message": "line one\nline two\n\nend" }))
        );
        assert_eq!(
            decoded(&form, "message=old%0Dmac"),
            Ok(json!({ "message": "old\nmac" }))
        );
    }

    #[test]
    fn invalid_utf8_is_replaced_instead_of_panicking() {
        let form = schema(vec![FormField::new("q", FieldKind::string())]);
        assert_eq!(
            decoded(&form, "q=%FF%FEok"),
            Ok(json!({ "q": "\u{FFFD}\u{FFFD}ok" }))
        );
        assert_eq!(
            decode(&form, b"q=\xff\xfe"),
            Ok(json!({ "q": "\u{FFFD}\u{FFFD}" })
                .as_object()
                .cloned()
                .unwrap_or_default())
        );
        assert_eq!(decoded(&form, "q=%E2%82"), Ok(json!({ "q": "\u{FFFD}" })));
        assert_eq!(decoded(&form, "q=%zz%"), Ok(json!({ "q": "%zz%" })));
    }

    #[test]
    fn a_checkbox_is_true_when_sent_and_false_when_absent() {
        let form = schema(vec![FormField::new("agree", FieldKind::Boolean)]);
        assert_eq!(decoded(&form, "agree=on"), Ok(json!({ "agree": true })));
        assert_eq!(decoded(&form, "agree=true"), Ok(json!({ "agree": true })));
        assert_eq!(decoded(&form, "agree=1"), Ok(json!({ "agree": true })));
        assert_eq!(decoded(&form, ""), Ok(json!({ "agree": false })));
        assert_eq!(decoded(&form, "other=on"), Ok(json!({ "agree": false })));
        assert_eq!(decoded(&form, "agree=false"), Ok(json!({ "agree": false })));
        assert_eq!(decoded(&form, "agree=off"), Ok(json!({ "agree": false })));
        assert_eq!(decoded(&form, "agree="), Ok(json!({ "agree": false })));
        // A hidden "false" before the checkbox, as some form helpers render it.
        assert_eq!(
            decoded(&form, "agree=false&agree=on"),
            Ok(json!({ "agree": true }))
        );
        assert_eq!(
            error_of(&form, "agree=perhaps", "agree").as_deref(),
            Some("Agree must be either checked or unchecked")
        );
    }

    #[test]
    fn an_optional_checkbox_still_decodes_to_false() {
        let form = schema(vec![
            FormField::new("newsletter", FieldKind::Boolean).optional()
        ]);
        assert_eq!(decoded(&form, ""), Ok(json!({ "newsletter": false })));
    }

    #[test]
    fn numbers_are_trimmed_and_parsed() {
        let form = schema(vec![
            FormField::new("price", FieldKind::number()),
            FormField::new("count", FieldKind::integer()).optional(),
        ]);
        assert_eq!(
            decoded(&form, "price=+2.50+&count=+7"),
            Ok(json!({ "price": 2.5, "count": 7 }))
        );
        assert_eq!(
            decoded(&form, "price=-1e3&count="),
            Ok(json!({ "price": -1000.0 }))
        );
        assert_eq!(
            decoded(&form, "price=3&count=3.0"),
            Ok(json!({ "price": 3.0, "count": 3 }))
        );
        assert_eq!(
            decoded(&form, "price=.5&count=18446744073709551615"),
            Ok(json!({ "price": 0.5, "count": 18_446_744_073_709_551_615_u64 }))
        );
    }

    #[test]
    fn a_bad_number_is_a_field_error() {
        let form = schema(vec![
            FormField::new("price", FieldKind::number()),
            FormField::new("count", FieldKind::integer()),
        ]);
        let errors = decode(&form, b"price=two&count=2.5")
            .err()
            .unwrap_or_default();
        assert_eq!(
            errors.get("price"),
            Some("Price must be a number, like 42 or 2.5")
        );
        assert_eq!(errors.get("count"), Some("Count must be a whole number"));
        for bad in ["inf", "NaN", "infinity", "1e999", "0x10", "1,5", "--1"] {
            assert_eq!(
                error_of(&form, &format!("price={bad}&count=1"), "price").as_deref(),
                Some("Price must be a number, like 42 or 2.5"),
                "{bad}"
            );
        }
        assert_eq!(
            error_of(&form, "price=1&count=lots", "count").as_deref(),
            Some("Count must be a whole number, like 42")
        );
        assert_eq!(
            error_of(&form, "price=1&count=99999999999999999999999", "count").as_deref(),
            Some("Count must be a whole number")
        );
        assert_eq!(
            error_of(&form, "price=+&count=1", "price").as_deref(),
            Some("Price is required")
        );
    }

    #[test]
    fn an_enum_must_be_one_of_its_options() {
        let form = schema(vec![FormField::new(
            "size",
            FieldKind::enumeration(["small", "large"]),
        )
        .with_title("Size")]);
        assert_eq!(decoded(&form, "size=large"), Ok(json!({ "size": "large" })));
        assert_eq!(
            error_of(&form, "size=huge", "size").as_deref(),
            Some("Choose one of the listed options for Size")
        );
        assert_eq!(
            error_of(&form, "size=", "size").as_deref(),
            Some("Size is required")
        );
        assert_eq!(
            error_of(&form, "size=Large", "size").as_deref(),
            Some("Choose one of the listed options for Size")
        );
        let optional = schema(vec![FormField::new(
            "size",
            FieldKind::enumeration(["small"]),
        )
        .optional()]);
        assert_eq!(decoded(&optional, "size="), Ok(json!({})));
    }

    #[test]
    fn an_array_takes_every_value_in_order_and_drops_empty_ones() {
        let form = schema(vec![FormField::new("ids", FieldKind::string_array())]);
        assert_eq!(
            decoded(&form, "ids=3&ids=1&ids=&ids=2&ids=1"),
            Ok(json!({ "ids": ["3", "1", "2", "1"] }))
        );
        assert_eq!(decoded(&form, ""), Ok(json!({ "ids": [] })));
        assert_eq!(decoded(&form, "ids=&ids="), Ok(json!({ "ids": [] })));
        assert_eq!(
            decoded(&form, "ids=a%0D%0Ab"),
            Ok(json!({ "ids": ["a\nb"] }))
        );
    }

    #[test]
    fn an_enum_array_accepts_only_its_options() {
        let form = schema(vec![FormField::new(
            "days",
            FieldKind::enum_array(["mon", "tue", "wed"]),
        )]);
        assert_eq!(
            decoded(&form, "days=wed&days=mon"),
            Ok(json!({ "days": ["wed", "mon"] }))
        );
        assert_eq!(decoded(&form, "days="), Ok(json!({ "days": [] })));
        assert_eq!(
            error_of(&form, "days=mon&days=sun", "days").as_deref(),
            Some("Choose only from the listed options for Days")
        );
    }

    #[test]
    fn unknown_and_reserved_keys_never_reach_the_response() {
        let form = schema(vec![FormField::new("name", FieldKind::string())]);
        assert_eq!(
            decoded(
                &form,
                "_csrf=abc&_action=submit&name=Ada&extra=1&__proto__=x"
            ),
            Ok(json!({ "name": "Ada" }))
        );
    }

    #[test]
    fn a_key_without_an_equals_sign_has_an_empty_value() {
        let form = schema(vec![
            FormField::new("agree", FieldKind::Boolean),
            FormField::new("note", FieldKind::string()).optional(),
        ]);
        assert_eq!(decoded(&form, "agree&note"), Ok(json!({ "agree": false })));
        assert_eq!(
            decoded(&form, "&&=&agree=on&"),
            Ok(json!({ "agree": true }))
        );
    }

    #[test]
    fn keys_are_percent_decoded_too() {
        let form = schema(vec![FormField::new("first name", FieldKind::string())]);
        assert_eq!(
            decoded(&form, "first+name=Ada"),
            Ok(json!({ "first name": "Ada" }))
        );
        assert_eq!(
            decoded(&form, "first%20name=Ada"),
            Ok(json!({ "first name": "Ada" }))
        );
    }

    #[test]
    fn every_field_with_a_problem_gets_exactly_one_message() {
        let form = schema(vec![
            FormField::new("a", FieldKind::string()),
            FormField::new("b", FieldKind::integer()),
            FormField::new("c", FieldKind::enum_array(["x"])),
            FormField::new("d", FieldKind::string()),
        ]);
        let errors = decode(&form, b"b=x&c=y&c=z&d=fine")
            .err()
            .unwrap_or_default();
        assert_eq!(errors.len(), 3);
        assert_eq!(
            errors.to_string(),
            "field \"a\": A is required; field \"b\": B must be a whole number, like 42; field \"c\": Choose only from the listed options for C"
        );
    }

    #[test]
    fn raw_values_keep_every_key_and_repeated_values_for_re_rendering() {
        let values = raw_values(b"tags=a&_csrf=t&tags=b&note=x%0D%0Ay&tags=");
        assert_eq!(
            values.get("tags"),
            Some(&vec!["a".to_owned(), "b".to_owned(), String::new()])
        );
        assert_eq!(values.get("note"), Some(&vec!["x\ny".to_owned()]));
        assert_eq!(values.get("_csrf"), Some(&vec!["t".to_owned()]));
        assert_eq!(
            pairs(b"b=2&a=1&b=3"),
            vec![
                ("b".into(), "2".into()),
                ("a".into(), "1".into()),
                ("b".into(), "3".into())
            ]
        );
    }

    #[test]
    fn reserved_keys_start_with_an_underscore() {
        assert!(is_reserved("_csrf"));
        assert!(is_reserved("_action"));
        assert!(!is_reserved("csrf_"));
    }
}
