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
//! that decoded, then the backstop.

use serde_json::{Map, Value};

use super::{
    decode::{decode_partial, raw_values},
    FieldErrors, FieldKind, FormField, FormSchema, StringFormat,
};

/// The key used in [`FieldErrors`] for problems the backstop cannot place on one field.
pub const FORM_ERROR_KEY: &str = "";

/// Decodes a form body and validates it in full: the call a page's POST handler makes.
///
/// # Errors
/// Returns one message per field that failed to decode or to validate (a field that did not decode
/// is not validated again).
pub fn decode_and_validate(schema: &FormSchema, body: &[u8]) -> Result<Value, FieldErrors> {
    let (decoded, mut errors) = decode_partial(schema, &raw_values(body));
    for field in &schema.fields {
        if errors.contains(&field.name) {
            continue;
        }
        if let Err(message) = validate_field(field, decoded.get(&field.name)) {
            errors.add(field.name.clone(), message);
        }
    }
    if errors.is_empty() {
        backstop(schema, &decoded, &mut errors);
    }
    errors.into_result(Value::Object(decoded))
}

/// Validates a response object (decoded from a form, or JSON from an API caller) in full.
///
/// # Errors
/// Returns one message per wrong field; a key that is not a field of the schema gets "is not a
/// field of this form".
pub fn validate(schema: &FormSchema, value: &Map<String, Value>) -> Result<(), FieldErrors> {
    let mut errors = FieldErrors::new();
    for field in &schema.fields {
        if let Err(message) = validate_field(field, value.get(&field.name)) {
            errors.add(field.name.clone(), message);
        }
    }
    for key in value.keys() {
        if schema.field(key).is_none() {
            errors.add(
                key.clone(),
                format!("\"{key}\" is not a field of this form"),
            );
        }
    }
    if errors.is_empty() {
        backstop(schema, value, &mut errors);
    }
    errors.into_result(())
}

/// Checks one field's value (`None` when the key is absent) against its kind and rules.
///
/// # Errors
/// Returns the first problem, as a message for a person that names the field by its label.
pub fn validate_field(field: &FormField, value: Option<&Value>) -> Result<(), String> {
    let label = field.label();
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
            Ok(())
        }
        FieldKind::Integer { minimum, maximum } => {
            let integer =
                integer_value(value).ok_or_else(|| format!("{label} must be a whole number"))?;
            if let Some(minimum) = minimum.filter(|minimum| integer < i128::from(*minimum)) {
                return Err(format!("{label} must be at least {minimum}"));
            }
            if let Some(maximum) = maximum.filter(|maximum| integer > i128::from(*maximum)) {
                return Err(format!("{label} must be at most {maximum}"));
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
        match regex::Regex::new(pattern) {
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
    let bytes = text.as_bytes();
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return false;
    }
    let (Some(year), Some(month), Some(day)) = (
        digits(&text[0..4]),
        digits(&text[5..7]),
        digits(&text[8..10]),
    ) else {
        return false;
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days_in_month).contains(&day)
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

/// Checks `value` with the `jsonschema` crate against the canonical schema and turns anything it
/// finds into field messages (the first per field).
fn backstop(schema: &FormSchema, value: &Map<String, Value>, errors: &mut FieldErrors) {
    let json_schema = schema.to_json_schema();
    let validator = match jsonschema::validator_for(&json_schema) {
        Ok(validator) => validator,
        Err(error) => {
            // A canonical schema always builds unless a pattern is valid for `regex` but not for
            // ECMA-262; loading rejects those, so this is a schema built by hand.
            errors.add(
                FORM_ERROR_KEY,
                format!("This form cannot be checked: its schema is invalid ({error})"),
            );
            return;
        }
    };
    let instance = Value::Object(value.clone());
    for error in validator.iter_errors(&instance) {
        let field_name = error
            .instance_path()
            .segments()
            .next()
            .map(|segment| segment.to_string());
        match field_name.as_deref().and_then(|name| schema.field(name)) {
            Some(field) => errors.add(
                field.name.clone(),
                format!("{} is not valid: {error}", field.label()),
            ),
            None => errors.add(
                field_name.unwrap_or_default(),
                format!("The form is not valid: {error}"),
            ),
        }
    }
}
