//! Reading single keywords of a field schema: its type, string constants and options, string,
//! number and integer rules, each checked and refused with the field's name.

use serde_json::{json, Map, Value};

use super::{FieldKind, SchemaError, StringFormat, NUMERIC_FORMATS};

pub(super) fn is_null_schema(schema: &Map<String, Value>) -> bool {
    match (schema.get("type"), schema.get("const"), schema.get("enum")) {
        (Some(Value::String(kind)), _, _) => kind == "null",
        (None, Some(Value::Null), _) => true,
        (None, None, Some(Value::Array(values))) => {
            values.iter().all(Value::is_null) && !values.is_empty()
        }
        _ => false,
    }
}

/// The string values a `oneOf` branch allows, when it is `{"const": "x"}` or `{"enum": ["x", …]}`
/// (optionally with `"type": "string"` and annotations).
pub(super) fn string_constants(schema: &Map<String, Value>) -> Option<Vec<String>> {
    match schema.get("type") {
        None => {}
        Some(Value::String(kind)) if kind == "string" => {}
        Some(_) => return None,
    }
    if let Some(Value::String(constant)) = schema.get("const") {
        return Some(vec![constant.clone()]);
    }
    let values = schema.get("enum")?.as_array()?;
    values
        .iter()
        .map(|value| value.as_str().map(str::to_owned))
        .collect()
}

/// The one non-null type of a schema, and whether `"null"` was also allowed.
pub(super) fn single_type(
    name: &str,
    schema: &Map<String, Value>,
) -> Result<(Option<String>, bool), SchemaError> {
    match schema.get("type") {
        None => Ok((None, false)),
        Some(Value::String(kind)) if kind == "null" => Err(SchemaError::field(
            name,
            "a field cannot only be null; give it a type",
        )),
        Some(Value::String(kind)) => Ok((Some(kind.clone()), false)),
        Some(Value::Array(kinds)) => {
            let mut nullable = false;
            let mut others = Vec::new();
            for kind in kinds {
                match kind.as_str() {
                    Some("null") => nullable = true,
                    Some(other) => others.push(other.to_owned()),
                    None => return Err(SchemaError::field(name, "\"type\" must name JSON types")),
                }
            }
            match others.as_slice() {
                [single] => Ok((Some(single.clone()), nullable)),
                [] => Err(SchemaError::field(
                    name,
                    "a field cannot only be null; give it a type",
                )),
                several => Err(SchemaError::field(
                    name,
                    format!(
                        "a field has one type, not several ({}); split it into separate fields",
                        several.join(", ")
                    ),
                )),
            }
        }
        Some(_) => Err(SchemaError::field(name, "\"type\" must be a string")),
    }
}

pub(super) fn string_options(
    name: &str,
    values: &[Value],
) -> Result<(Vec<String>, bool), SchemaError> {
    let mut nullable = false;
    let mut options = Vec::new();
    for value in values {
        match value {
            Value::String(option) => options.push(option.clone()),
            Value::Null => nullable = true,
            other => {
                return Err(SchemaError::field(
                    name,
                    format!("enum values must all be strings; found {other}"),
                ))
            }
        }
    }
    Ok((options, nullable))
}

pub(super) fn check_options(name: &str, options: &[String]) -> Result<(), SchemaError> {
    if options.is_empty() {
        return Err(SchemaError::field(
            name,
            "an enum needs at least one option",
        ));
    }
    if options.iter().any(String::is_empty) {
        return Err(SchemaError::field(
            name,
            "an enum option cannot be the empty string: a form sends \"\" for \"nothing chosen\"",
        ));
    }
    for (index, option) in options.iter().enumerate() {
        if options[..index].contains(option) {
            return Err(SchemaError::field(
                name,
                format!("enum option \"{option}\" is listed twice"),
            ));
        }
    }
    Ok(())
}

pub(super) fn string_keyword(
    name: &str,
    schema: &Map<String, Value>,
    keyword: &str,
) -> Result<Option<String>, SchemaError> {
    match schema.get(keyword) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(SchemaError::field(
            name,
            format!("\"{keyword}\" must be a string"),
        )),
    }
}

fn non_negative(
    name: &str,
    schema: &Map<String, Value>,
    keyword: &str,
) -> Result<Option<u64>, SchemaError> {
    match schema.get(keyword) {
        None => Ok(None),
        Some(value) => value
            .as_u64()
            .or_else(|| {
                value
                    .as_f64()
                    .filter(|number| number.fract() == 0.0 && *number >= 0.0)
                    .map(|number| number as u64)
            })
            .map(Some)
            .ok_or_else(|| {
                SchemaError::field(
                    name,
                    format!("\"{keyword}\" must be a non-negative integer"),
                )
            }),
    }
}

pub(super) fn bounds(
    name: &str,
    schema: &Map<String, Value>,
    low_keyword: &str,
    high_keyword: &str,
) -> Result<(Option<u64>, Option<u64>), SchemaError> {
    let low = non_negative(name, schema, low_keyword)?;
    let high = non_negative(name, schema, high_keyword)?;
    if let (Some(low), Some(high)) = (low, high) {
        if low > high {
            return Err(SchemaError::field(
                name,
                format!("{low_keyword} ({low}) is greater than {high_keyword} ({high}); no value could pass"),
            ));
        }
    }
    Ok((low, high))
}

pub(super) fn string_kind(
    name: &str,
    schema: &Map<String, Value>,
) -> Result<FieldKind, SchemaError> {
    let format = match schema.get("format") {
        None => None,
        Some(Value::String(text)) => Some(StringFormat::parse(text).ok_or_else(|| {
            SchemaError::field(
                name,
                format!("format \"{text}\" is not supported; use email, url, uri, date or date-time, or a pattern"),
            )
        })?),
        Some(_) => return Err(SchemaError::field(name, "\"format\" must be a string")),
    };
    let (min_length, max_length) = bounds(name, schema, "minLength", "maxLength")?;
    let pattern = match schema.get("pattern") {
        None => None,
        Some(Value::String(pattern)) => {
            if let Err(error) = regex::Regex::new(pattern) {
                return Err(SchemaError::field(
                    name,
                    format!(
                        "pattern \"{pattern}\" is not a supported regular expression: {}",
                        first_line(&error.to_string())
                    ),
                ));
            }
            // The `jsonschema` backstop reads patterns as ECMA-262, which some `regex` syntax is not
            // (inline flags such as `(?i)`): refuse those here rather than at the first submission.
            if let Err(error) = jsonschema::validator_for(&json!({ "pattern": pattern })) {
                return Err(SchemaError::field(
                    name,
                    format!(
                        "pattern \"{pattern}\" is not a valid ECMA-262 regular expression: {}",
                        first_line(&error.to_string())
                    ),
                ));
            }
            Some(pattern.clone())
        }
        Some(_) => return Err(SchemaError::field(name, "\"pattern\" must be a string")),
    };
    Ok(FieldKind::String {
        format,
        min_length,
        max_length,
        pattern,
    })
}

fn first_line(text: &str) -> String {
    text.lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .unwrap_or(text)
        .trim()
        .to_owned()
}

fn number_keyword(
    name: &str,
    schema: &Map<String, Value>,
    keyword: &str,
) -> Result<Option<f64>, SchemaError> {
    match schema.get(keyword) {
        None => Ok(None),
        Some(Value::Number(number)) => number
            .as_f64()
            .filter(|value| value.is_finite())
            .map(Some)
            .ok_or_else(|| {
                SchemaError::field(name, format!("\"{keyword}\" must be a finite number"))
            }),
        Some(Value::Bool(_)) => Err(SchemaError::field(
            name,
            format!("\"{keyword}\" must be a number (draft 2020-12), not true/false"),
        )),
        Some(_) => Err(SchemaError::field(
            name,
            format!("\"{keyword}\" must be a number"),
        )),
    }
}

fn check_numeric_format(name: &str, schema: &Map<String, Value>) -> Result<(), SchemaError> {
    match schema.get("format") {
        None => Ok(()),
        Some(Value::String(format)) if NUMERIC_FORMATS.contains(&format.as_str()) => Ok(()),
        Some(other) => Err(SchemaError::field(
            name,
            format!("format {other} is not supported on a number"),
        )),
    }
}

pub(super) fn number_kind(
    name: &str,
    schema: &Map<String, Value>,
) -> Result<FieldKind, SchemaError> {
    check_numeric_format(name, schema)?;
    let minimum = number_keyword(name, schema, "minimum")?;
    let maximum = number_keyword(name, schema, "maximum")?;
    let exclusive_minimum = number_keyword(name, schema, "exclusiveMinimum")?;
    let exclusive_maximum = number_keyword(name, schema, "exclusiveMaximum")?;
    let low = minimum
        .into_iter()
        .chain(exclusive_minimum)
        .fold(f64::NEG_INFINITY, f64::max);
    let high = maximum
        .into_iter()
        .chain(exclusive_maximum)
        .fold(f64::INFINITY, f64::min);
    let empty = low > high
        || (low == high && (exclusive_minimum == Some(low) || exclusive_maximum == Some(high)));
    if empty {
        return Err(SchemaError::field(
            name,
            "its minimum is above its maximum; no number could pass",
        ));
    }
    let multiple_of = number_keyword(name, schema, "multipleOf")?;
    if multiple_of.is_some_and(|step| step <= 0.0) {
        return Err(SchemaError::field(
            name,
            "\"multipleOf\" must be greater than 0",
        ));
    }
    Ok(FieldKind::Number {
        minimum,
        maximum,
        exclusive_minimum,
        exclusive_maximum,
        multiple_of,
    })
}

pub(super) fn integer_kind(
    name: &str,
    schema: &Map<String, Value>,
) -> Result<FieldKind, SchemaError> {
    check_numeric_format(name, schema)?;
    let to_integer = |value: f64| -> Result<i64, SchemaError> {
        if !(-9.2e18..=9.2e18).contains(&value) {
            return Err(SchemaError::field(
                name,
                "integer bounds must fit in a 64-bit signed integer",
            ));
        }
        Ok(value as i64)
    };
    let integer_keyword = |keyword: &str| -> Result<Option<i64>, SchemaError> {
        match schema.get(keyword).and_then(Value::as_i64) {
            Some(exact) => Ok(Some(exact)),
            None => Ok(None),
        }
    };
    let mut minimum = match integer_keyword("minimum")? {
        Some(exact) => Some(exact),
        None => number_keyword(name, schema, "minimum")?
            .map(|value| to_integer(value.ceil()))
            .transpose()?,
    };
    let mut maximum = match integer_keyword("maximum")? {
        Some(exact) => Some(exact),
        None => number_keyword(name, schema, "maximum")?
            .map(|value| to_integer(value.floor()))
            .transpose()?,
    };
    if let Some(exclusive) = number_keyword(name, schema, "exclusiveMinimum")? {
        let bound = to_integer(exclusive.floor())?.saturating_add(1);
        minimum = Some(minimum.map_or(bound, |current| current.max(bound)));
    }
    if let Some(exclusive) = number_keyword(name, schema, "exclusiveMaximum")? {
        let bound = to_integer(exclusive.ceil())?.saturating_sub(1);
        maximum = Some(maximum.map_or(bound, |current| current.min(bound)));
    }
    if let (Some(low), Some(high)) = (minimum, maximum) {
        if low > high {
            return Err(SchemaError::field(
                name,
                format!(
                    "its minimum ({low}) is above its maximum ({high}); no whole number could pass"
                ),
            ));
        }
    }
    let multiple_of = match number_keyword(name, schema, "multipleOf")? {
        None => None,
        Some(step) if step >= 1.0 && step.fract() == 0.0 && step < 9.2e18 => Some(step as u64),
        Some(_) => {
            return Err(SchemaError::field(
                name,
                "\"multipleOf\" of an integer must be a whole number of at least 1",
            ))
        }
    };
    Ok(FieldKind::Integer {
        minimum,
        maximum,
        multiple_of,
    })
}
