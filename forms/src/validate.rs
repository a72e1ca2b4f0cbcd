//! Full validation of a response value against its [`FormSchema`], with one message per field.
//!
//! After decoding, every rule of the subset is checked here in code, so each message names the
//! field by its label and says what to do: required, the type, enum options, minimum/maximum,
//! minLength/maxLength (counted in characters), pattern (JSON Schema search semantics: anchor with
//! `^…$` to match the whole text), minItems/maxItems/uniqueItems, and the formats email (as a
//! browser's `type=email` accepts it), url (`http`/`https` only), uri, date (a real calendar date)
//! and date-time (RFC 3339). Then, as a backstop, the value is checked with the `jsonschema` crate
//! against [`FormSchema::to_json_schema`]; a disagreement (for example a pattern that ECMA-262 reads
//! differently from the `regex` crate) still becomes a message on the field, never a pass.
//!
//! [`decode_and_validate`] is what a page's POST handler calls: decode, then validate every field
//! that decoded, then the backstop. Compiled patterns and JSON Schema validators are cached (a few
//! hundred of each), since compiling them costs more than checking a submission. A message the
//! backstop cannot place on one field is kept under [`FORM_ERROR_KEY`].

use std::{
    collections::HashMap,
    sync::{Arc, LazyLock, Mutex, PoisonError},
};

use regex::Regex;
use serde_json::{Map, Value};

use super::{
    decode::{decode_partial, raw_values},
    FieldErrors, FieldKind, FormField, FormSchema, StringFormat,
};
use crate::dates::CivilDate;

/// The key used in [`FieldErrors`] for problems the backstop cannot place on one field.
pub const FORM_ERROR_KEY: &str = "";

/// Decodes a form body and validates it in full: the call a page's POST handler makes.
///
/// # Errors
/// Returns one message per field that failed to decode or to validate (a field that did not decode
/// is not validated again).
pub fn decode_and_validate(schema: &FormSchema, body: &[u8]) -> Result<Value, FieldErrors> {
    let (decoded, mut errors) = decode_partial(schema, &raw_values(body));
    // A path that did not decode keeps its decoding message: `add` keeps the first one.
    validate_members(&schema.fields, &decoded, "", "", &mut errors);
    let value = Value::Object(decoded);
    if errors.is_empty() {
        backstop(schema, &value, &mut errors);
    }
    errors.into_result(value)
}

/// Validates a response object (decoded from a form, or JSON from an API caller) in full.
///
/// # Errors
/// Returns one message per wrong field; a key that is not a field of the schema gets "is not a
/// field of this form".
pub fn validate(schema: &FormSchema, value: &Map<String, Value>) -> Result<(), FieldErrors> {
    let mut errors = FieldErrors::new();
    validate_members(&schema.fields, value, "", "", &mut errors);
    if errors.is_empty() {
        backstop(schema, &Value::Object(value.clone()), &mut errors);
    }
    errors.into_result(())
}

/// Checks one field's value (`None` when the key is absent) against its kind and rules.
///
/// # Errors
/// Returns the first problem, as a message for a person that names the field by its label.
pub fn validate_field(field: &FormField, value: Option<&Value>) -> Result<(), String> {
    if field.kind.is_structured() {
        let mut errors = FieldErrors::new();
        validate_at(field, &field.name, "", value, &mut errors);
        return match errors.iter().next() {
            Some((_, message)) => Err(message.to_owned()),
            None => Ok(()),
        };
    }
    validate_leaf(field, &field.label(), value)
}

/// Checks the value of `field` at `path`, recording every problem under its full path (a
/// member's path for a member's problem). `position` is `" on line 3"` inside a record, so
/// messages name the record a person must fix.
pub(crate) fn validate_at(
    field: &FormField,
    path: &str,
    position: &str,
    value: Option<&Value>,
    errors: &mut FieldErrors,
) {
    let label = format!("{}{position}", field.label());
    let value = match (&field.kind, value) {
        (FieldKind::Object { .. } | FieldKind::RecordList { .. }, None | Some(Value::Null)) => {
            if field.required {
                errors.add(path, format!("{label} is required"));
            }
            return;
        }
        (FieldKind::Object { .. } | FieldKind::RecordList { .. }, Some(value)) => value,
        (_, value) => {
            if let Err(message) = validate_leaf(field, &label, value) {
                errors.add(path, message);
            }
            return;
        }
    };
    match &field.kind {
        FieldKind::Object { fields } => {
            let Some(members) = value.as_object() else {
                errors.add(path, format!("{label} must be a group of fields"));
                return;
            };
            validate_members(fields, members, &format!("{path}."), position, errors);
        }
        FieldKind::RecordList {
            fields,
            min_items,
            max_items,
        } => {
            let Some(records) = value.as_array() else {
                errors.add(path, format!("{label} must be a list of records"));
                return;
            };
            if let Err(message) = check_count(
                &label,
                records.len(),
                *min_items,
                *max_items,
                "line",
                "lines",
            ) {
                errors.add(path, message);
            }
            for (index, record) in records.iter().enumerate() {
                let record_path = format!("{path}[{index}]");
                let Some(members) = record.as_object() else {
                    errors.add(
                        record_path,
                        format!("Line {} of {label} must be a record", index + 1),
                    );
                    continue;
                };
                let position = format!(" on line {}", index + 1);
                validate_members(
                    fields,
                    members,
                    &format!("{record_path}."),
                    &position,
                    errors,
                );
            }
        }
        _ => {}
    }
}

/// Checks each of `fields` in `members` (paths start with `prefix`) and refuses keys that are
/// not among them.
fn validate_members(
    fields: &[FormField],
    members: &Map<String, Value>,
    prefix: &str,
    position: &str,
    errors: &mut FieldErrors,
) {
    for field in fields {
        let path = format!("{prefix}{}", field.name);
        validate_at(field, &path, position, members.get(&field.name), errors);
    }
    for key in members.keys() {
        if !fields.iter().any(|field| &field.name == key) {
            errors.add(
                format!("{prefix}{key}"),
                format!("\"{key}\" is not a field of this form"),
            );
        }
    }
}

/// Checks a flat field's value against its kind and rules, naming it `label`.
fn validate_leaf(field: &FormField, label: &str, value: Option<&Value>) -> Result<(), String> {
    let label = label.to_owned();
    let value = match value {
        None | Some(Value::Null) if field.required => return Err(format!("{label} is required")),
        None | Some(Value::Null) => return Ok(()),
        Some(value) => value,
    };
    match &field.kind {
        FieldKind::String {
            format,
            min_length,
            max_length,
            pattern,
        } => {
            let text = value
                .as_str()
                .ok_or_else(|| format!("{label} must be text"))?;
            check_text(
                &label,
                text,
                *format,
                *min_length,
                *max_length,
                pattern.as_deref(),
            )
        }
        FieldKind::Number {
            minimum,
            maximum,
            exclusive_minimum,
            exclusive_maximum,
            multiple_of,
        } => {
            let number = value
                .as_f64()
                .filter(|number| number.is_finite() && value.is_number());
            let number = number.ok_or_else(|| format!("{label} must be a number"))?;
            if let Some(minimum) = minimum.filter(|minimum| number < *minimum) {
                return Err(format!("{label} must be at least {minimum}"));
            }
            if let Some(maximum) = maximum.filter(|maximum| number > *maximum) {
                return Err(format!("{label} must be at most {maximum}"));
            }
            if let Some(bound) = exclusive_minimum.filter(|bound| number <= *bound) {
                return Err(format!("{label} must be greater than {bound}"));
            }
            if let Some(bound) = exclusive_maximum.filter(|bound| number >= *bound) {
                return Err(format!("{label} must be less than {bound}"));
            }
            if let Some(step) = multiple_of.filter(|step| !is_multiple_of(number, *step)) {
                return Err(format!("{label} must be a multiple of {step}"));
            }
            Ok(())
        }
        FieldKind::Integer {
            minimum,
            maximum,
            multiple_of,
        } => {
            let integer =
                integer_value(value).ok_or_else(|| format!("{label} must be a whole number"))?;
            if let Some(minimum) = minimum.filter(|minimum| integer < i128::from(*minimum)) {
                return Err(format!("{label} must be at least {minimum}"));
            }
            if let Some(maximum) = maximum.filter(|maximum| integer > i128::from(*maximum)) {
                return Err(format!("{label} must be at most {maximum}"));
            }
            if let Some(step) = multiple_of.filter(|step| integer % i128::from(*step) != 0) {
                return Err(format!("{label} must be a multiple of {step}"));
            }
            Ok(())
        }
        FieldKind::Boolean => match value {
            Value::Bool(_) => Ok(()),
            _ => Err(format!("{label} must be true or false")),
        },
        FieldKind::Enum { options } => match value.as_str() {
            Some(choice) if options.iter().any(|option| option == choice) => Ok(()),
            _ => Err(format!("Choose one of the listed options for {label}")),
        },
        FieldKind::StringArray {
            min_items,
            max_items,
            unique_items,
            item_min_length,
            item_max_length,
            item_pattern,
            item_format,
        } => {
            let items = string_items(&label, value)?;
            check_count(
                &label,
                items.len(),
                *min_items,
                *max_items,
                "entry",
                "entries",
            )?;
            check_unique(&label, &items, *unique_items)?;
            let item_label = format!("Each entry of {label}");
            for item in items {
                check_text(
                    &item_label,
                    item,
                    *item_format,
                    *item_min_length,
                    *item_max_length,
                    item_pattern.as_deref(),
                )?;
            }
            Ok(())
        }
        FieldKind::EnumArray {
            options,
            min_items,
            max_items,
            unique_items,
        } => {
            let items = string_items(&label, value)?;
            if items
                .iter()
                .any(|item| !options.iter().any(|option| option == item))
            {
                return Err(format!("Choose only from the listed options for {label}"));
            }
            check_count(
                &label,
                items.len(),
                *min_items,
                *max_items,
                "option",
                "options",
            )?;
            check_unique(&label, &items, *unique_items)
        }
        // Structure is checked member by member in `validate_at`.
        FieldKind::Object { .. } | FieldKind::RecordList { .. } => Ok(()),
    }
}

fn integer_value(value: &Value) -> Option<i128> {
    let Value::Number(number) = value else {
        return None;
    };
    if let Some(integer) = number.as_i64() {
        return Some(i128::from(integer));
    }
    if let Some(integer) = number.as_u64() {
        return Some(i128::from(integer));
    }
    // JSON Schema counts 3.0 as an integer.
    number
        .as_f64()
        .filter(|float| float.is_finite() && float.fract() == 0.0 && float.abs() < 1e38)
        .map(|float| float as i128)
}

fn string_items<'v>(label: &str, value: &'v Value) -> Result<Vec<&'v str>, String> {
    let items = value
        .as_array()
        .ok_or_else(|| format!("{label} must be a list"))?;
    items
        .iter()
        .map(|item| {
            item.as_str()
                .ok_or_else(|| format!("{label} must be a list of texts"))
        })
        .collect()
}

fn check_count(
    label: &str,
    count: usize,
    min_items: Option<u64>,
    max_items: Option<u64>,
    singular: &str,
    plural: &str,
) -> Result<(), String> {
    let count = count as u64;
    let noun = |number: u64| if number == 1 { singular } else { plural };
    if let Some(minimum) = min_items.filter(|minimum| count < *minimum) {
        return Err(match singular {
            "option" => format!("Choose at least {minimum} {} for {label}", noun(minimum)),
            _ => format!("{label} needs at least {minimum} {}", noun(minimum)),
        });
    }
    if let Some(maximum) = max_items.filter(|maximum| count > *maximum) {
        return Err(match singular {
            "option" => format!("Choose at most {maximum} {} for {label}", noun(maximum)),
            _ => format!("{label} allows at most {maximum} {}", noun(maximum)),
        });
    }
    Ok(())
}

fn check_unique(label: &str, items: &[&str], unique: bool) -> Result<(), String> {
    if !unique {
        return Ok(());
    }
    for (index, item) in items.iter().enumerate() {
        if items[..index].contains(item) {
            return Err(format!(
                "{label} lists \"{}\" more than once",
                shorten(item)
            ));
        }
    }
    Ok(())
}

fn check_text(
    label: &str,
    text: &str,
    format: Option<StringFormat>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    pattern: Option<&str>,
) -> Result<(), String> {
    let length = text.chars().count() as u64;
    let characters = |number: u64| {
        if number == 1 {
            "character"
        } else {
            "characters"
        }
    };
    if let Some(minimum) = min_length.filter(|minimum| length < *minimum) {
        return Err(format!(
            "{label} must be at least {minimum} {}",
            characters(minimum)
        ));
    }
    if let Some(maximum) = max_length.filter(|maximum| length > *maximum) {
        return Err(format!(
            "{label} must be at most {maximum} {} (it has {length})",
            characters(maximum)
        ));
    }
    if let Some(format) = format {
        if !matches_format(format, text) {
            return Err(match format {
                StringFormat::Email => {
                    format!("{label} must be an email address, like name@example.com")
                }
                StringFormat::Url => {
                    format!("{label} must be a web address starting with https:// or http://")
                }
                StringFormat::Uri => format!(
                    "{label} must be an absolute address with a scheme, like https://example.com/"
                ),
                StringFormat::Date => {
                    format!("{label} must be a date written YYYY-MM-DD, like 2024-05-31")
                }
                StringFormat::DateTime => {
                    format!("{label} must be a date and time like 2024-05-31T14:30:00Z")
                }
            });
        }
    }
    if let Some(pattern) = pattern {
        match compiled_pattern(pattern) {
            Ok(regex) if regex.is_match(text) => {}
            Ok(_) => return Err(format!("{label} is not in the expected form")),
            Err(_) => {
                return Err(format!(
                    "{label} cannot be checked: the form's pattern is invalid"
                ))
            }
        }
    }
    Ok(())
}

/// Whether `text` has `format`.
#[must_use]
pub fn matches_format(format: StringFormat, text: &str) -> bool {
    match format {
        StringFormat::Email => is_email(text),
        StringFormat::Url => url::Url::parse(text).is_ok_and(|url| {
            matches!(url.scheme(), "http" | "https") && url.host().is_some() && text.trim() == text
        }),
        StringFormat::Uri => {
            url::Url::parse(text).is_ok()
                && text.trim() == text
                && !text.contains(char::is_whitespace)
        }
        StringFormat::Date => is_date(text),
        StringFormat::DateTime => is_date_time(text),
    }
}

/// An email address as the HTML standard's `type=email` defines a valid one.
fn is_email(text: &str) -> bool {
    let Some((local, domain)) = text.split_once('@') else {
        return false;
    };
    let local_ok = !local.is_empty()
        && local
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b".!#$%&'*+/=?^_`{|}~-".contains(&byte));
    let label_ok = |label: &str| {
        let bytes = label.as_bytes();
        !bytes.is_empty()
            && bytes.len() <= 63
            && bytes
                .iter()
                .all(|byte| byte.is_ascii_alphanumeric() || *byte == b'-')
            && bytes.first() != Some(&b'-')
            && bytes.last() != Some(&b'-')
    };
    local_ok && domain.split('.').all(label_ok)
}

fn digits(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// A real calendar date written `YYYY-MM-DD`.
fn is_date(text: &str) -> bool {
    CivilDate::parse_exact(text).is_some()
}

/// An RFC 3339 date-time: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`.
fn is_date_time(text: &str) -> bool {
    if !text.is_ascii() || text.len() < 20 {
        return false;
    }
    let (date, rest) = text.split_at(10);
    if !is_date(date) || !matches!(rest.as_bytes().first(), Some(b'T' | b't')) {
        return false;
    }
    let time = &rest[1..];
    let (clock, zone) = match time.find(['Z', 'z', '+', '-']) {
        Some(index) => time.split_at(index),
        None => return false,
    };
    let (seconds_part, fraction) = match clock.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (clock, None),
    };
    if fraction.is_some_and(|fraction| {
        fraction.is_empty() || !fraction.bytes().all(|byte| byte.is_ascii_digit())
    }) {
        return false;
    }
    let hms: Vec<&str> = seconds_part.split(':').collect();
    let [hours, minutes, seconds] = hms.as_slice() else {
        return false;
    };
    let in_range = |part: &str, limit: u32| {
        part.len() == 2 && digits(part).is_some_and(|value| value <= limit)
    };
    if !(in_range(hours, 23) && in_range(minutes, 59) && in_range(seconds, 60)) {
        return false;
    }
    match zone {
        "Z" | "z" => true,
        _ => {
            let offset = &zone[1..];
            match offset.split_once(':') {
                Some((zone_hours, zone_minutes)) => {
                    in_range(zone_hours, 23) && in_range(zone_minutes, 59)
                }
                None => false,
            }
        }
    }
}

fn shorten(text: &str) -> String {
    const LIMIT: usize = 40;
    if text.chars().count() <= LIMIT {
        text.to_owned()
    } else {
        let mut short: String = text.chars().take(LIMIT).collect();
        short.push('…');
        short
    }
}

/// Whether `number` is a whole multiple of `step`, read as the decimals a person typed: `0.3` is a
/// multiple of `0.1` (as a browser's `step` sees it) although the nearest binary fractions are not.
#[must_use]
pub fn is_multiple_of(number: f64, step: f64) -> bool {
    let quotient = number / step;
    let nearest = quotient.round();
    (quotient - nearest).abs() <= 1e-9 * nearest.abs().max(1.0)
}

/// Checks `instance` with the `jsonschema` crate against the canonical schema and turns anything
/// it finds into field messages (the first per field).
fn backstop(schema: &FormSchema, instance: &Value, errors: &mut FieldErrors) {
    let validator = match compiled_validator(schema) {
        Ok(validator) => validator,
        Err(error) => {
            // Loading rejects patterns that ECMA-262 cannot compile, so only a schema built by hand
            // gets here; refusing is safer than accepting unchecked values.
            errors.add(
                FORM_ERROR_KEY,
                format!("This form cannot be checked: its schema is invalid ({error})"),
            );
            return;
        }
    };
    for error in validator.iter_errors(instance) {
        let segments: Vec<String> = error
            .instance_path()
            .segments()
            .map(|segment| segment.to_string())
            .collect();
        match segments.first().and_then(|name| schema.field(name)) {
            Some(field) => errors.add(
                form_path(&segments),
                format!("{} is not valid: {error}", field.label()),
            ),
            None => errors.add(
                segments.first().cloned().unwrap_or_default(),
                format!("The form is not valid: {error}"),
            ),
        }
    }
}

/// A JSON Pointer's segments as a form path: `["line_items", "2", "sku"]` → `line_items[2].sku`.
fn form_path(segments: &[String]) -> String {
    let mut path = String::new();
    for segment in segments {
        if !path.is_empty() && segment.bytes().all(|byte| byte.is_ascii_digit()) {
            path.push('[');
            path.push_str(segment);
            path.push(']');
        } else {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(segment);
        }
    }
    path
}

/// How many compiled validators or patterns are kept before the cache starts over. Schemas come
/// from workflows and API callers, so the set is open-ended; a few hundred covers the live ones.
const CACHE_LIMIT: usize = 256;

type Cache<T> = LazyLock<Mutex<HashMap<String, T>>>;

/// Compiled JSON Schema validators by canonical schema text: compiling one costs far more than
/// validating a submission with it.
static VALIDATORS: Cache<Arc<jsonschema::Validator>> = LazyLock::new(Mutex::default);

/// Compiled `pattern`s by their source.
static PATTERNS: Cache<Regex> = LazyLock::new(Mutex::default);

fn cached<T: Clone, E>(
    cache: &Cache<T>,
    key: String,
    build: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    if let Some(found) = cache
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&key)
    {
        return Ok(found.clone());
    }
    let built = build()?;
    let mut entries = cache.lock().unwrap_or_else(PoisonError::into_inner);
    if entries.len() >= CACHE_LIMIT {
        entries.clear();
    }
    entries.insert(key, built.clone());
    Ok(built)
}

fn compiled_validator(schema: &FormSchema) -> Result<Arc<jsonschema::Validator>, String> {
    let mut json_schema = schema.to_json_schema();
    // `multipleOf` is checked above in decimals; the crate divides binary fractions exactly and
    // would refuse `0.3` as a multiple of `0.1`, which a browser's `step` allows.
    drop_multiple_of(&mut json_schema);
    cached(&VALIDATORS, json_schema.to_string(), || {
        jsonschema::validator_for(&json_schema)
            .map(Arc::new)
            .map_err(|error| error.to_string())
    })
}

/// Removes `multipleOf` from every property, inside objects and records too.
fn drop_multiple_of(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    object.remove("multipleOf");
    if let Some(items) = object.get_mut("items") {
        drop_multiple_of(items);
    }
    if let Some(properties) = object.get_mut("properties").and_then(Value::as_object_mut) {
        for property in properties.values_mut() {
            drop_multiple_of(property);
        }
    }
}

fn compiled_pattern(pattern: &str) -> Result<Regex, regex::Error> {
    cached(&PATTERNS, pattern.to_owned(), || Regex::new(pattern))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::FormField;

    fn text(
        format: Option<StringFormat>,
        min_length: Option<u64>,
        max_length: Option<u64>,
        pattern: Option<&str>,
    ) -> FieldKind {
        FieldKind::String {
            format,
            min_length,
            max_length,
            pattern: pattern.map(str::to_owned),
        }
    }

    fn check(kind: FieldKind, value: Value) -> Result<(), String> {
        validate_field(&FormField::new("field", kind), Some(value).as_ref())
    }

    fn submit(schema: &FormSchema, body: &str) -> Result<Value, FieldErrors> {
        decode_and_validate(schema, body.as_bytes())
    }

    fn invoice() -> Result<FormSchema, crate::SchemaError> {
        FormSchema::from_json_schema(&json!({
            "type": "object",
            "properties": {
                "line_items": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "properties": {
                            "sku": { "type": "string", "pattern": "^[A-Z]+-[0-9]+$" },
                            "quantity": { "type": "integer", "minimum": 1 },
                            "unit_price": { "type": "number", "multipleOf": 0.01 },
                            "unit": { "type": "string", "enum": ["piece", "box"] },
                            "shipped_on": { "type": "string", "format": "date" },
                            "note": { "type": "string", "maxLength": 5, "nullable": true }
                        },
                        "required": ["sku", "quantity", "unit_price"]
                    }
                }
            },
            "required": ["line_items"]
        }))
    }

    #[test]
    fn every_flat_keyword_is_checked_inside_records_and_names_the_line(
    ) -> Result<(), crate::SchemaError> {
        let form = invoice()?;
        let body = "_count.line_items=2\
            &line_items[0].sku=AB-1&line_items[0].quantity=2&line_items[0].unit_price=0.30&line_items[0].unit=box\
            &line_items[1].sku=ab&line_items[1].quantity=0&line_items[1].unit_price=1.005\
            &line_items[1].unit=crate&line_items[1].shipped_on=2024-02-30&line_items[1].note=too+long";
        let errors = submit(&form, body).err().unwrap_or_default();
        let expected = [
            (
                "line_items[1].note",
                "Note on line 2 must be at most 5 characters (it has 8)",
            ),
            (
                "line_items[1].quantity",
                "Quantity on line 2 must be at least 1",
            ),
            (
                "line_items[1].shipped_on",
                "Shipped on on line 2 must be a date written YYYY-MM-DD, like 2024-05-31",
            ),
            (
                "line_items[1].sku",
                "Sku on line 2 is not in the expected form",
            ),
            (
                "line_items[1].unit",
                "Choose one of the listed options for Unit on line 2",
            ),
            (
                "line_items[1].unit_price",
                "Unit price on line 2 must be a multiple of 0.01",
            ),
        ];
        assert_eq!(errors.iter().collect::<Vec<_>>(), expected);
        let fixed = "_count.line_items=1&line_items[0].sku=AB-1&line_items[0].quantity=2&line_items[0].unit_price=0.30";
        assert_eq!(
            submit(&form, fixed),
            Ok(json!({ "line_items": [{ "sku": "AB-1", "quantity": 2, "unit_price": 0.3 }] }))
        );
        assert_eq!(
            submit(&form, "_count.line_items=0")
                .err()
                .unwrap_or_default()
                .get("line_items"),
            Some("Line items needs at least 1 line")
        );
        Ok(())
    }

    #[test]
    fn a_json_answer_is_checked_inside_records_and_objects_by_path(
    ) -> Result<(), crate::SchemaError> {
        let form = invoice()?;
        let answer = json!({ "line_items": [
            { "sku": "AB-1", "quantity": 1, "unit_price": 2 },
            { "sku": "AB-2", "quantity": "3", "unit_price": 2, "colour": "red" },
            "not a record"
        ] });
        let errors = validate(&form, answer.as_object().unwrap_or(&Map::new()))
            .err()
            .unwrap_or_default();
        let expected = [
            (
                "line_items[1].colour",
                "\"colour\" is not a field of this form",
            ),
            (
                "line_items[1].quantity",
                "Quantity on line 2 must be a whole number",
            ),
            ("line_items[2]", "Line 3 of Line items must be a record"),
        ];
        assert_eq!(errors.iter().collect::<Vec<_>>(), expected);
        Ok(())
    }

    #[test]
    fn a_missing_required_value_is_reported_and_a_missing_optional_one_is_fine() {
        let required = FormField::new("email", FieldKind::string());
        assert_eq!(
            validate_field(&required, None),
            Err("Email is required".to_owned())
        );
        assert_eq!(
            validate_field(&required, Some(&Value::Null)),
            Err("Email is required".to_owned())
        );
        let optional = required.clone().optional();
        assert_eq!(validate_field(&optional, None), Ok(()));
        assert_eq!(validate_field(&optional, Some(&Value::Null)), Ok(()));
    }

    #[test]
    fn lengths_count_characters_not_bytes() {
        let kind = text(None, Some(2), Some(3), None);
        assert_eq!(
            check(kind.clone(), json!("é")),
            Err("Field must be at least 2 characters".to_owned())
        );
        assert_eq!(check(kind.clone(), json!("日本語")), Ok(()));
        assert_eq!(check(kind.clone(), json!("👍🏽👍")), Ok(()));
        assert_eq!(
            check(kind, json!("abcd")),
            Err("Field must be at most 3 characters (it has 4)".to_owned())
        );
        assert_eq!(
            check(text(None, Some(1), None, None), json!("")),
            Err("Field must be at least 1 character".to_owned())
        );
    }

    #[test]
    fn a_pattern_searches_unless_anchored() {
        assert_eq!(
            check(text(None, None, None, Some("[0-9]")), json!("room 101")),
            Ok(())
        );
        assert_eq!(
            check(text(None, None, None, Some("^[0-9]+$")), json!("room 101")),
            Err("Field is not in the expected form".to_owned())
        );
        assert_eq!(
            check(
                text(None, None, None, Some("^[A-Z]{2}-[0-9]{3}$")),
                json!("AB-123")
            ),
            Ok(())
        );
        assert_eq!(
            check(text(None, None, None, Some("(")), json!("x")),
            Err("Field cannot be checked: the form's pattern is invalid".to_owned())
        );
    }

    #[test]
    fn email_follows_what_a_browser_accepts() {
        let email = text(Some(StringFormat::Email), None, None, None);
        for good in [
            "ada@example.com",
            "a.b+c@sub.example.co.uk",
            "x@localhost",
            "o'brien@example.ie",
        ] {
            assert_eq!(check(email.clone(), json!(good)), Ok(()), "{good}");
        }
        for bad in [
            "ada",
            "@example.com",
            "ada@",
            "ada@exa mple.com",
            "ada@-example.com",
            "ada@example..com",
            "a@b@c",
            "café@example.com",
        ] {
            assert_eq!(
                check(email.clone(), json!(bad)),
                Err("Field must be an email address, like name@example.com".to_owned()),
                "{bad}"
            );
        }
    }

    #[test]
    fn url_needs_http_or_https_and_uri_any_scheme() {
        let url = text(Some(StringFormat::Url), None, None, None);
        assert_eq!(
            check(url.clone(), json!("https://example.com/a?b=c#d")),
            Ok(())
        );
        assert_eq!(check(url.clone(), json!("http://localhost:3000")), Ok(()));
        for bad in [
            "javascript:alert(1)",
            "example.com",
            "ftp://example.com",
            "https://",
            " https://example.com",
        ] {
            assert_eq!(
                check(url.clone(), json!(bad)),
                Err("Field must be a web address starting with https:// or http://".to_owned()),
                "{bad}"
            );
        }
        let uri = text(Some(StringFormat::Uri), None, None, None);
        assert_eq!(check(uri.clone(), json!("urn:isbn:0451450523")), Ok(()));
        assert_eq!(check(uri.clone(), json!("mailto:ada@example.com")), Ok(()));
        assert_eq!(
            check(uri, json!("relative/path")),
            Err(
                "Field must be an absolute address with a scheme, like https://example.com/"
                    .to_owned()
            )
        );
    }

    #[test]
    fn date_must_be_a_real_calendar_date() {
        let date = text(Some(StringFormat::Date), None, None, None);
        for good in ["2024-02-29", "2000-02-29", "1999-12-31", "0001-01-01"] {
            assert_eq!(check(date.clone(), json!(good)), Ok(()), "{good}");
        }
        for bad in [
            "2023-02-29",
            "1900-02-29",
            "2024-13-01",
            "2024-04-31",
            "2024-00-10",
            "2024-1-5",
            "24-01-05",
            "2024/01/05",
            "2024-01-05T00:00:00Z",
            "２０２４-01-05",
        ] {
            assert_eq!(
                check(date.clone(), json!(bad)),
                Err("Field must be a date written YYYY-MM-DD, like 2024-05-31".to_owned()),
                "{bad}"
            );
        }
    }

    #[test]
    fn date_time_is_rfc_3339() {
        let date_time = text(Some(StringFormat::DateTime), None, None, None);
        for good in [
            "2024-05-31T14:30:00Z",
            "2024-05-31t14:30:00.123+02:00",
            "2024-12-31T23:59:60-05:30",
        ] {
            assert_eq!(check(date_time.clone(), json!(good)), Ok(()), "{good}");
        }
        for bad in [
            "2024-05-31",
            "2024-05-31T14:30",
            "2024-05-31T14:30:00",
            "2024-05-31 14:30:00Z",
            "2024-05-31T24:00:00Z",
            "2024-05-31T14:30:00.Z",
            "2024-05-31T14:30:00+0200",
        ] {
            assert!(check(date_time.clone(), json!(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn numbers_respect_inclusive_and_exclusive_bounds() {
        let kind = FieldKind::Number {
            multiple_of: None,
            minimum: Some(0.0),
            maximum: Some(10.0),
            exclusive_minimum: None,
            exclusive_maximum: None,
        };
        assert_eq!(check(kind.clone(), json!(0)), Ok(()));
        assert_eq!(check(kind.clone(), json!(10.0)), Ok(()));
        assert_eq!(
            check(kind.clone(), json!(-0.5)),
            Err("Field must be at least 0".to_owned())
        );
        assert_eq!(
            check(kind, json!(10.5)),
            Err("Field must be at most 10".to_owned())
        );
        let exclusive = FieldKind::Number {
            multiple_of: None,
            minimum: None,
            maximum: None,
            exclusive_minimum: Some(0.0),
            exclusive_maximum: Some(1.5),
        };
        assert_eq!(
            check(exclusive.clone(), json!(0)),
            Err("Field must be greater than 0".to_owned())
        );
        assert_eq!(
            check(exclusive.clone(), json!(1.5)),
            Err("Field must be less than 1.5".to_owned())
        );
        assert_eq!(
            check(exclusive, json!("1")),
            Err("Field must be a number".to_owned())
        );
    }

    #[test]
    fn integers_respect_bounds_and_accept_integral_floats() {
        let kind = FieldKind::Integer {
            multiple_of: None,
            minimum: Some(1),
            maximum: Some(5),
        };
        assert_eq!(check(kind.clone(), json!(3)), Ok(()));
        assert_eq!(check(kind.clone(), json!(3.0)), Ok(()));
        assert_eq!(
            check(kind.clone(), json!(0)),
            Err("Field must be at least 1".to_owned())
        );
        assert_eq!(
            check(kind.clone(), json!(u64::MAX)),
            Err("Field must be at most 5".to_owned())
        );
        assert_eq!(
            check(kind, json!(2.5)),
            Err("Field must be a whole number".to_owned())
        );
    }

    #[test]
    fn item_counts_uniqueness_and_item_rules_are_checked() {
        let tags = FieldKind::StringArray {
            min_items: Some(1),
            max_items: Some(2),
            unique_items: true,
            item_min_length: None,
            item_max_length: Some(5),
            item_pattern: None,
            item_format: Some(StringFormat::Email),
        };
        assert_eq!(
            check(tags.clone(), json!([])),
            Err("Field needs at least 1 entry".to_owned())
        );
        assert_eq!(
            check(tags.clone(), json!(["a@b", "c@d", "e@f"])),
            Err("Field allows at most 2 entries".to_owned())
        );
        assert_eq!(
            check(tags.clone(), json!(["a@b", "a@b"])),
            Err("Field lists \"a@b\" more than once".to_owned())
        );
        assert_eq!(
            check(tags.clone(), json!(["a@bcde"])),
            Err("Each entry of Field must be at most 5 characters (it has 6)".to_owned())
        );
        assert_eq!(
            check(tags.clone(), json!(["abc"])),
            Err("Each entry of Field must be an email address, like name@example.com".to_owned())
        );
        assert_eq!(check(tags, json!(["a@b"])), Ok(()));
        let days = FieldKind::EnumArray {
            options: vec!["mon".into(), "tue".into()],
            min_items: Some(1),
            max_items: Some(1),
            unique_items: false,
        };
        assert_eq!(
            check(days.clone(), json!([])),
            Err("Choose at least 1 option for Field".to_owned())
        );
        assert_eq!(
            check(days.clone(), json!(["mon", "tue"])),
            Err("Choose at most 1 option for Field".to_owned())
        );
        assert_eq!(
            check(days.clone(), json!(["sun"])),
            Err("Choose only from the listed options for Field".to_owned())
        );
        assert_eq!(
            check(days, json!("mon")),
            Err("Field must be a list".to_owned())
        );
    }

    #[test]
    fn enums_and_booleans_check_their_types() {
        assert_eq!(
            check(FieldKind::enumeration(["a"]), json!("b")),
            Err("Choose one of the listed options for Field".to_owned())
        );
        assert_eq!(
            check(FieldKind::Boolean, json!("on")),
            Err("Field must be true or false".to_owned())
        );
        assert_eq!(
            check(FieldKind::string(), json!(5)),
            Err("Field must be text".to_owned())
        );
    }

    #[test]
    fn validate_rejects_keys_that_are_not_fields() {
        let schema = FormSchema::new(vec![FormField::new("name", FieldKind::string())]);
        let value = json!({ "name": "Ada", "admin": true });
        let errors = value.as_object().map(|object| validate(&schema, object));
        assert_eq!(
            errors
                .and_then(Result::err)
                .map(|errors| errors.to_string()),
            Some("field \"admin\": \"admin\" is not a field of this form".to_owned())
        );
    }

    #[test]
    fn decode_and_validate_gives_the_typed_value_or_one_message_per_field() {
        let schema = FormSchema::new(vec![
            FormField::new(
                "email",
                text(Some(StringFormat::Email), None, Some(100), None),
            )
            .with_title("Your email"),
            FormField::new(
                "age",
                FieldKind::Integer {
                    multiple_of: None,
                    minimum: Some(18),
                    maximum: None,
                },
            )
            .optional(),
            FormField::new(
                "topics",
                FieldKind::EnumArray {
                    options: vec!["rust".into(), "web".into()],
                    min_items: Some(1),
                    max_items: None,
                    unique_items: true,
                },
            ),
            FormField::new("agree", FieldKind::Boolean),
            FormField::new("comment", text(None, None, Some(10), None)).optional(),
        ]);
        assert_eq!(
            submit(&schema, "_csrf=t&email=ada%40example.com&age=&topics=rust&topics=web&agree=on&comment=hi%0D%0Athere"),
            Ok(json!({ "email": "ada@example.com", "topics": ["rust", "web"], "agree": true, "comment": "hi\nthere" }))
        );
        let errors = submit(
            &schema,
            "email=ada&age=12&topics=go&comment=far+too+long+a+comment",
        )
        .err()
        .unwrap_or_default();
        assert_eq!(
            errors.get("email"),
            Some("Your email must be an email address, like name@example.com")
        );
        assert_eq!(errors.get("age"), Some("Age must be at least 18"));
        assert_eq!(
            errors.get("topics"),
            Some("Choose only from the listed options for Topics")
        );
        assert_eq!(
            errors.get("comment"),
            Some("Comment must be at most 10 characters (it has 22)")
        );
        assert_eq!(errors.len(), 4);
    }

    #[test]
    fn a_decoding_error_is_not_followed_by_a_validation_error_on_the_same_field() {
        let schema = FormSchema::new(vec![FormField::new(
            "age",
            FieldKind::Integer {
                multiple_of: None,
                minimum: Some(18),
                maximum: None,
            },
        )]);
        let errors = submit(&schema, "age=abc").err().unwrap_or_default();
        assert_eq!(
            errors.0.into_iter().collect::<Vec<_>>(),
            vec![(
                "age".to_owned(),
                "Age must be a whole number, like 42".to_owned()
            )]
        );
    }

    #[test]
    fn the_jsonschema_backstop_catches_what_ecma_regex_reads_differently() {
        // `\d` is any Unicode digit for the `regex` crate but only 0-9 in ECMA-262, which the
        // JSON Schema validator follows: the backstop turns the disagreement into a field error.
        let schema = FormSchema::new(vec![FormField::new(
            "code",
            text(None, None, None, Some(r"^\d+$")),
        )]);
        assert_eq!(submit(&schema, "code=123"), Ok(json!({ "code": "123" })));
        let errors = submit(&schema, "code=%D9%A1%D9%A2")
            .err()
            .unwrap_or_default();
        assert!(
            errors
                .get("code")
                .is_some_and(|message| message.starts_with("Code is not valid: ")),
            "{errors}"
        );
    }
}
