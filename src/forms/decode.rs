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

use std::{borrow::Cow, collections::BTreeMap};

use serde_json::{Map, Value};

use super::{FieldErrors, FieldKind, FormField, FormSchema};

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
    let mut values: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (key, value) in pairs(body) {
        values.entry(key).or_default().push(value);
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
    let mut decoded = Map::new();
    let mut errors = FieldErrors::new();
    for field in &schema.fields {
        let field_values = values
            .get(&field.name)
            .map(Vec::as_slice)
            .unwrap_or_default();
        match decode_field(field, field_values) {
            Ok(Some(value)) => {
                decoded.insert(field.name.clone(), value);
            }
            Ok(None) => {}
            Err(message) => errors.add(field.name.clone(), message),
        }
    }
    (decoded, errors)
}

/// Decodes one field from all the values sent under its name: `Ok(None)` is "absent".
///
/// # Errors
/// Returns the message for a person when the values cannot be this field's type.
pub fn decode_field(field: &FormField, values: &[String]) -> Result<Option<Value>, String> {
    let last = values.last().map(String::as_str);
    match &field.kind {
        FieldKind::String { .. } => {
            Ok(non_empty(field, last)?.map(|text| Value::String(text.to_owned())))
        }
        FieldKind::Enum { options } => match non_empty(field, last)? {
            None => Ok(None),
            Some(choice) if options.iter().any(|option| option == choice) => {
                Ok(Some(Value::String(choice.to_owned())))
            }
            Some(_) => Err(format!(
                "Choose one of the listed options for {}",
                field.label()
            )),
        },
        FieldKind::Number { .. } => match non_empty(field, last.map(str::trim))? {
            None => Ok(None),
            Some(text) => parse_number(text)
                .map(|number| Some(Value::from(number)))
                .ok_or_else(|| format!("{} must be a number, like 42 or 2.5", field.label())),
        },
        FieldKind::Integer { .. } => match non_empty(field, last.map(str::trim))? {
            None => Ok(None),
            Some(text) => parse_integer(text).map(Some).ok_or_else(|| {
                if parse_number(text).is_some() {
                    format!("{} must be a whole number", field.label())
                } else {
                    format!("{} must be a whole number, like 42", field.label())
                }
            }),
        },
        FieldKind::Boolean => match last.map(|text| text.trim().to_ascii_lowercase()).as_deref() {
            None | Some("" | "off" | "false" | "0" | "no") => Ok(Some(Value::Bool(false))),
            Some("on" | "true" | "1" | "yes") => Ok(Some(Value::Bool(true))),
            Some(_) => Err(format!(
                "{} must be either checked or unchecked",
                field.label()
            )),
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
                    return Err(format!(
                        "Choose only from the listed options for {}",
                        field.label()
                    ));
                }
                chosen.push(Value::String(value.clone()));
            }
            Ok(Some(Value::Array(chosen)))
        }
    }
}

/// The value if it is non-empty; `None` for an optional field left empty; the "required" message
/// for a required one.
fn non_empty<'v>(field: &FormField, value: Option<&'v str>) -> Result<Option<&'v str>, String> {
    match value {
        Some(text) if !text.is_empty() => Ok(Some(text)),
        _ if field.required => Err(format!("{} is required", field.label())),
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
