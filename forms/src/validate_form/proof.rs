//! The proof: sample submissions built from the placed fields the way a browser sends them
//! (every option of every closed field, optional fields left empty), run through the real
//! decoder, each decoded value's shape checked against the schema.

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use tessera_app::{catalog::FieldYield, tree::PlacedField};

use super::{
    issue, placement::control_field, records::record_paths, wording::describe_kind, FormIssue,
};
use crate::{decode_values, validate::is_multiple_of, FieldKind, FormField, FormSchema};

/// Builds sample submissions the way a browser would send them and runs the real decoder on them.
pub(super) fn prove_by_decoding(
    schema: &FormSchema,
    fields: &[PlacedField],
    errors: &mut Vec<FormIssue>,
) {
    for sample in sample_submissions(schema, fields) {
        match decode_values(schema, &sample) {
            Ok(decoded) => {
                if let Some(problem) = shape_problem(schema, &decoded) {
                    errors.push(issue(
                        None,
                        Some(&problem.0),
                        "decoded_shape",
                        problem.1,
                        "check the field's component and options against the schema".into(),
                    ));
                    return;
                }
            }
            Err(field_errors) => {
                if let Some((name, message)) = field_errors.0.into_iter().next() {
                    let node = fields
                        .iter()
                        .find(|placed| placed.name == name)
                        .map(|placed| placed.node.as_str());
                    errors.push(issue(
                        node,
                        Some(&name),
                        "sample_does_not_decode",
                        format!("a submission this form allows does not decode: {message}"),
                        "make the component's values match the schema (options, required, number step)".into(),
                    ));
                    return;
                }
            }
        }
    }
}

fn sample_submissions(
    schema: &FormSchema,
    fields: &[PlacedField],
) -> Vec<BTreeMap<String, Vec<String>>> {
    // One sample per option of the widest single-choice field. Multi-choice fields send all their
    // options in the first sample and one option in each later one, so every option is decoded
    // while the work stays linear in the options (a selectable table may have 10,000 rows).
    let widest = fields
        .iter()
        .filter(|placed| placed.yields != FieldYield::StringArray)
        .filter_map(|placed| placed.options.as_ref().map(|options| options.len()))
        .max()
        .unwrap_or(1)
        .max(1);
    let mut samples = Vec::new();
    for variant in 0..widest {
        let mut body = BTreeMap::new();
        for placed in fields {
            let Some(field) = control_field(schema, &placed.name) else {
                continue;
            };
            if let FieldKind::RecordList {
                fields: members,
                min_items,
                max_items,
            } = &field.kind
            {
                sample_records(
                    &mut body,
                    &placed.name,
                    members,
                    *min_items,
                    *max_items,
                    variant,
                );
                continue;
            }
            let values = match &placed.options {
                Some(options) if options.is_empty() => Vec::new(),
                Some(options) if placed.yields == FieldYield::StringArray && variant == 0 => {
                    options.to_vec()
                }
                Some(options) if placed.yields == FieldYield::StringArray => {
                    vec![options[variant % options.len()].clone()]
                }
                Some(options) => vec![options[variant % options.len()].clone()],
                None => vec![field
                    .default
                    .as_ref()
                    .and_then(default_text)
                    .unwrap_or_else(|| free_sample(placed.yields, &field.kind))],
            };
            body.insert(placed.name.clone(), values);
        }
        samples.push(body);
    }
    // Everything a person may leave empty, left empty; records are sent as in the first sample.
    let mut sparse = BTreeMap::new();
    for placed in fields {
        let Some(first) = samples.first() else {
            break;
        };
        if placed.yields == FieldYield::Records {
            let record_prefix = format!("{}[", placed.name);
            let count_key = format!("_count.{}", placed.name);
            for (key, values) in first {
                if key.starts_with(&record_prefix) || *key == count_key {
                    sparse.insert(key.clone(), values.clone());
                }
            }
        } else if placed.required {
            if let Some(values) = first.get(&placed.name) {
                sparse.insert(placed.name.clone(), values.clone());
            }
        }
    }
    samples.push(sparse);
    samples
}

/// The fewest records the list allows (at least one) with every record field filled in, as a
/// `RecordList` sends them: `_count.<list>` and `<list>[i].<field>`.
fn sample_records(
    body: &mut BTreeMap<String, Vec<String>>,
    list: &str,
    members: &[FormField],
    min_items: Option<u64>,
    max_items: Option<u64>,
    variant: usize,
) {
    let count = min_items
        .unwrap_or(1)
        .max(1)
        .min(max_items.unwrap_or(u64::MAX));
    body.insert(format!("_count.{list}"), vec![count.to_string()]);
    for index in 0..count {
        for (path, member) in record_paths(members) {
            let yields = match &member.kind {
                FieldKind::Boolean => FieldYield::Boolean,
                FieldKind::Integer { .. } => FieldYield::Integer,
                FieldKind::Number { .. } => FieldYield::Number,
                _ => FieldYield::String,
            };
            let values = match (&member.kind, member.kind.options()) {
                (_, Some(options)) if !options.is_empty() => {
                    vec![options[variant % options.len()].clone()]
                }
                (FieldKind::StringArray { min_items, .. }, _) => (0..min_items.unwrap_or(1).max(1))
                    .map(|item| format!("sample {item}"))
                    .collect(),
                _ => vec![member
                    .default
                    .as_ref()
                    .and_then(default_text)
                    .unwrap_or_else(|| free_sample(yields, &member.kind))],
            };
            body.insert(format!("{list}[{index}].{path}"), values);
        }
    }
}

fn default_text(default: &Value) -> Option<String> {
    match default {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

fn free_sample(yields: FieldYield, kind: &FieldKind) -> String {
    match (yields, kind) {
        (FieldYield::Boolean, _) => "on".into(),
        (
            _,
            FieldKind::Integer {
                minimum,
                multiple_of,
                ..
            },
        ) => {
            let step = multiple_of
                .and_then(|step| i64::try_from(step).ok())
                .unwrap_or(1);
            let low = minimum.unwrap_or(step);
            (low.div_euclid(step) * step + if low.rem_euclid(step) == 0 { 0 } else { step })
                .to_string()
        }
        (
            _,
            FieldKind::Number {
                minimum,
                exclusive_minimum,
                multiple_of,
                ..
            },
        ) => {
            let step = multiple_of.unwrap_or(1.0);
            let low = minimum
                .or(exclusive_minimum.map(|bound| bound + step))
                .unwrap_or(step);
            let mut sample = (low / step).ceil() * step;
            if !is_multiple_of(sample, step) || sample < low {
                sample += step;
            }
            sample.to_string()
        }
        (
            _,
            FieldKind::String {
                format: Some(format),
                ..
            },
        ) => match format.as_str() {
            "email" => "person@example.com".into(),
            "url" | "uri" => "https://example.com/".into(),
            "date" => "2026-01-31".into(),
            _ => "2026-01-31T12:00:00Z".into(),
        },
        (FieldYield::Number | FieldYield::Integer, _) => "1".into(),
        _ => "sample text".into(),
    }
}

fn shape_problem(schema: &FormSchema, decoded: &Map<String, Value>) -> Option<(String, String)> {
    for field in &schema.fields {
        let Some(value) = decoded.get(&field.name) else {
            if field.required
                && !matches!(
                    field.kind,
                    FieldKind::Boolean
                        | FieldKind::StringArray { .. }
                        | FieldKind::EnumArray { .. }
                )
            {
                return Some((
                    field.name.clone(),
                    format!("required field `{}` decoded to nothing", field.name),
                ));
            }
            continue;
        };
        let fits = match &field.kind {
            FieldKind::String { .. } => value.is_string(),
            FieldKind::Enum { options } => value
                .as_str()
                .is_some_and(|text| options.iter().any(|option| option == text)),
            FieldKind::Number { .. } => value.is_number(),
            FieldKind::Integer { .. } => value.is_i64() || value.is_u64(),
            FieldKind::Boolean => value.is_boolean(),
            FieldKind::StringArray { .. } => value
                .as_array()
                .is_some_and(|items| items.iter().all(Value::is_string)),
            FieldKind::EnumArray { options, .. } => value.as_array().is_some_and(|items| {
                items.iter().all(|item| {
                    item.as_str()
                        .is_some_and(|text| options.iter().any(|option| option == text))
                })
            }),
            FieldKind::Object { .. } => value.is_object(),
            FieldKind::RecordList { .. } => value.is_array(),
        };
        if !fits {
            return Some((
                field.name.clone(),
                format!(
                    "`{}` decoded to {value}, which is not {}",
                    field.name,
                    describe_kind(&field.kind)
                ),
            ));
        }
    }
    None
}
