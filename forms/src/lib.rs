//! Response schemas and form submissions: what a page asks for, and turning what a browser sends
//! into a typed, validated JSON value.
//!
//! A response schema is an object of flat fields, fieldsets (objects) and lists of records
//! (DESIGN.md §5), described by [`FormSchema`]: loaded from
//! JSON Schema with a load-time check ([`FormSchema::from_json_schema`]) or derived from a Rust
//! type with a compile-time check (`#[derive(FormSchema)]`, [`FormSchemaType`]). A submission is
//! decoded mechanically by the field types ([`decode()`]), never by guessing from the values, and
//! then validated in full ([`validate()`]); [`decode_and_validate`] is the one call a page's POST
//! handler makes. Controls are named by paths (`address.city`, `line_items[2].quantity`). Every
//! failure is a [`FieldErrors`] entry keyed by the field's path, with one message
//! for a person, so the page can be shown again with the person's values ([`raw_values`]) and a
//! message beside each wrong field. A page's POST also checks the answer against what the page's
//! controls offered ([`Offered`], [`decode_offered`]): a crafted id or choice is a field error too.
//!
//! This module knows nothing of pages, HTTP or storage: it maps bytes and JSON to JSON.
//! Errors: [`SchemaError`] for schemas outside the subset (the workflow author's fault),
//! [`FieldErrors`] for submissions (the person's).

pub mod answerable;
pub mod dates;
pub mod decode;
pub mod offered;
pub mod schema;
pub mod typed;
pub mod validate;
pub mod validate_form;

use std::{collections::BTreeMap, fmt};

use serde::Serialize;

pub use decode::{decode, decode_values, grouped, is_reserved, pairs, raw_values};
pub use offered::{decode_offered, Offered};
pub use schema::{humanize, FieldKind, FormField, FormSchema, SchemaError, StringFormat};
pub use tessera_macros::{FormEnum, FormSchema};
pub use typed::{decode_typed, FormEnum, FormFieldType, FormListItem, FormScalar, FormSchemaType};
pub use validate::{decode_and_validate, validate, validate_field, FORM_ERROR_KEY};

/// What was wrong with a submission: one message for a person per field name.
///
/// The key is the field's name as submitted; the message names the field by its label (for
/// example `"Email must be an email address, like name@example.com"`), so it reads the same
/// beside the field and in a JSON error. Serializes as a JSON object `{field: message}`. A problem
/// that belongs to no single field is keyed [`FORM_ERROR_KEY`] (the empty string).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct FieldErrors(pub BTreeMap<String, String>);

impl FieldErrors {
    /// No errors yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `message` for `field` unless the field already has one: the first problem found is
    /// the one a person fixes first.
    pub fn add(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.entry(field.into()).or_insert_with(|| message.into());
    }

    /// The message for `field`, if it has one.
    #[must_use]
    pub fn get(&self, field: &str) -> Option<&str> {
        self.0.get(field).map(String::as_str)
    }

    /// Whether `field` has a message.
    #[must_use]
    pub fn contains(&self, field: &str) -> bool {
        self.0.contains_key(field)
    }

    /// Whether there are no errors at all.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many fields have an error.
    #[must_use]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Every `(field, message)`, ordered by field name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0
            .iter()
            .map(|(field, message)| (field.as_str(), message.as_str()))
    }

    /// `Ok(value)` when there are no errors, else `Err(self)`.
    ///
    /// # Errors
    /// Returns `self` when it holds at least one error.
    pub fn into_result<T>(self, value: T) -> Result<T, Self> {
        if self.is_empty() {
            Ok(value)
        } else {
            Err(self)
        }
    }
}

impl fmt::Display for FieldErrors {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, (field, message)) in self.iter().enumerate() {
            if index > 0 {
                formatter.write_str("; ")?;
            }
            write!(formatter, "field \"{field}\": {message}")?;
        }
        Ok(())
    }
}

impl std::error::Error for FieldErrors {}

#[cfg(test)]
mod tests {
    use proptest::{collection::vec, option, prelude::*, sample::subsequence};
    use serde_json::{Map, Value};

    use super::*;

    fn text_char() -> impl Strategy<Value = char> {
        any::<char>().prop_filter("browsers never send a lone CR", |character| {
            *character != '\r'
        })
    }

    fn plain_text() -> BoxedStrategy<(FieldKind, Value)> {
        (option::of(0..4_u64), option::of(4..12_u64))
            .prop_flat_map(|(min_length, max_length)| {
                let shortest = min_length.unwrap_or(0).max(1) as usize;
                let longest = max_length.unwrap_or(16) as usize;
                let kind = FieldKind::String {
                    format: None,
                    min_length,
                    max_length,
                    pattern: None,
                };
                (
                    Just(kind),
                    vec(text_char(), shortest..=longest)
                        .prop_map(|chars| Value::String(chars.into_iter().collect())),
                )
            })
            .boxed()
    }

    fn formatted_text() -> BoxedStrategy<(FieldKind, Value)> {
        let date = "[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])";
        prop_oneof![
            (Just(StringFormat::Email), "[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]{1,10}@[a-z0-9]{1,8}(\\.[a-z0-9]{1,8}){0,2}"),
            (Just(StringFormat::Url), "https?://[a-z]{1,10}\\.[a-z]{2,5}(/[a-zA-Z0-9._~-]{0,8}){0,3}(\\?q=[a-z0-9]{1,4})?"),
            (Just(StringFormat::Uri), "(urn:isbn:[0-9]{10}|mailto:[a-z]{1,6}@[a-z]{1,6}\\.org|https://[a-z]{1,8}\\.net/)"),
            (Just(StringFormat::Date), date),
            (
                Just(StringFormat::DateTime),
                "[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,3})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])"
            ),
        ]
        .prop_map(|(format, text)| {
            (FieldKind::String { format: Some(format), min_length: None, max_length: None, pattern: None }, Value::String(text))
        })
        .boxed()
    }

    fn patterned_text() -> BoxedStrategy<(FieldKind, Value)> {
        let kind = |pattern: &str| FieldKind::String {
            format: None,
            min_length: None,
            max_length: None,
            pattern: Some(pattern.to_owned()),
        };
        prop_oneof![
            "[a-z]{1,8}".prop_map(move |text| (kind("^[a-z]{1,8}$"), Value::String(text))),
            "[a-z ]{0,4}[0-9][a-z ]{0,4}"
                .prop_map(move |text| (kind("[0-9]"), Value::String(text))),
            "(yes|no)".prop_map(move |text| (kind("^(yes|no)$"), Value::String(text))),
        ]
        .boxed()
    }

    fn number() -> BoxedStrategy<(FieldKind, Value)> {
        prop_oneof![
            any::<f64>()
                .prop_filter("finite", |number| number.is_finite())
                .prop_map(|number| (FieldKind::number(), Value::from(number))),
            (-1e6_f64..0.0, 0.0_f64..1e6, 0.0_f64..=1.0).prop_map(|(low, high, position)| {
                let number = (low + (high - low) * position).clamp(low, high);
                let kind = FieldKind::Number {
                    multiple_of: None,
                    minimum: Some(low),
                    maximum: Some(high),
                    exclusive_minimum: Some(low - 1.0),
                    exclusive_maximum: Some(high + 1.0),
                };
                (kind, Value::from(number))
            }),
        ]
        .boxed()
    }

    fn integer() -> BoxedStrategy<(FieldKind, Value)> {
        prop_oneof![
            any::<i64>().prop_map(|number| (FieldKind::integer(), Value::from(number))),
            (-1000_i64..0, 0_i64..1000, 0.0_f64..=1.0).prop_map(|(low, high, position)| {
                let number = (low + ((high - low) as f64 * position) as i64).clamp(low, high);
                (
                    FieldKind::Integer {
                        multiple_of: None,
                        minimum: Some(low),
                        maximum: Some(high),
                    },
                    Value::from(number),
                )
            }),
        ]
        .boxed()
    }

    fn options() -> impl Strategy<Value = Vec<String>> {
        proptest::collection::btree_set("[^\r]{1,6}", 1..5)
            .prop_map(|options| options.into_iter().collect())
    }

    fn enumeration() -> BoxedStrategy<(FieldKind, Value)> {
        options()
            .prop_flat_map(|options| {
                let count = options.len();
                (Just(options), 0..count)
            })
            .prop_map(|(options, index)| {
                let chosen = Value::String(options[index].clone());
                (FieldKind::Enum { options }, chosen)
            })
            .boxed()
    }

    fn string_array() -> BoxedStrategy<(FieldKind, Value)> {
        (option::of(0..3_u64), option::of(3..6_u64), any::<bool>())
            .prop_flat_map(|(min_items, max_items, unique_items)| {
                let fewest = min_items.unwrap_or(0) as usize;
                let most = max_items.unwrap_or(6) as usize;
                let item =
                    vec(text_char(), 1..8).prop_map(|chars| chars.into_iter().collect::<String>());
                let kind = FieldKind::StringArray {
                    min_items,
                    max_items,
                    unique_items,
                    item_min_length: None,
                    item_max_length: Some(8),
                    item_pattern: None,
                    item_format: None,
                };
                let items = if unique_items {
                    proptest::collection::btree_set(item, fewest..=most)
                        .prop_map(|items| items.into_iter().collect::<Vec<_>>())
                        .boxed()
                } else {
                    vec(item, fewest..=most).boxed()
                };
                (Just(kind), items.prop_map(Value::from))
            })
            .boxed()
    }

    fn enum_array() -> BoxedStrategy<(FieldKind, Value)> {
        (options(), any::<bool>())
            .prop_flat_map(|(options, unique_items)| {
                let count = options.len();
                let kind = FieldKind::EnumArray {
                    options: options.clone(),
                    min_items: Some(0),
                    max_items: Some(count as u64),
                    unique_items,
                };
                let items = if unique_items {
                    subsequence(options, 0..=count).boxed()
                } else {
                    vec(proptest::sample::select(options), 0..=count).boxed()
                };
                (Just(kind), items.prop_map(Value::from))
            })
            .boxed()
    }

    fn kind_and_value() -> BoxedStrategy<(FieldKind, Value)> {
        prop_oneof![
            plain_text(),
            formatted_text(),
            patterned_text(),
            number(),
            integer(),
            any::<bool>()
                .prop_map(|checked| (FieldKind::Boolean, Value::Bool(checked)))
                .boxed(),
            enumeration(),
            string_array(),
            enum_array(),
        ]
        .boxed()
    }

    /// How an optional field was left: filled in, left out of the body, or sent empty.
    #[derive(Clone, Copy, Debug)]
    enum Presence {
        Filled,
        Omitted,
        SentEmpty,
    }

    /// A schema, a value valid for it, and the body a browser sends for that value.
    fn submission() -> impl Strategy<Value = (FormSchema, Value, String)> {
        let presence = prop_oneof![
            Just(Presence::Filled),
            Just(Presence::Omitted),
            Just(Presence::SentEmpty)
        ];
        let entry = (
            kind_and_value(),
            any::<bool>(),
            presence,
            "[a-zA-Zé][a-zA-Z0-9é &=+%.]{0,5}",
            option::of("[A-Za-z ]{1,12}"),
        );
        vec(entry, 0..8).prop_map(|entries| {
            let mut fields = Vec::new();
            let mut expected = Map::new();
            let mut body = form_urlencoded::Serializer::new(String::new());
            body.append_pair("_csrf", "token");
            for (index, ((kind, value), required, presence, prefix, title)) in
                entries.into_iter().enumerate()
            {
                let name = format!("{prefix}{index}");
                let mut field = FormField {
                    name: name.clone(),
                    title,
                    description: None,
                    default: None,
                    examples: Vec::new(),
                    required,
                    kind,
                };
                let filled = required || matches!(presence, Presence::Filled);
                match (&field.kind, &value) {
                    (FieldKind::Boolean, Value::Bool(checked)) => {
                        if *checked {
                            body.append_pair(&name, "on");
                        }
                        expected.insert(name.clone(), value.clone());
                    }
                    (
                        FieldKind::StringArray { .. } | FieldKind::EnumArray { .. },
                        Value::Array(items),
                    ) => {
                        for item in items {
                            body.append_pair(
                                &name,
                                &item.as_str().unwrap_or_default().replace('\n', "\r\n"),
                            );
                        }
                        expected.insert(name.clone(), value.clone());
                    }
                    (_, _) if filled => {
                        let text = match &value {
                            Value::String(text) => text.replace('\n', "\r\n"),
                            Value::Number(number) => match number.as_f64() {
                                Some(float) if !number.is_i64() && !number.is_u64() => {
                                    format!("{float}")
                                }
                                _ => number.to_string(),
                            },
                            other => other.to_string(),
                        };
                        body.append_pair(&name, &text);
                        expected.insert(name.clone(), value.clone());
                    }
                    (_, _) => {
                        field.required = false;
                        if matches!(presence, Presence::SentEmpty) {
                            body.append_pair(&name, "");
                        }
                    }
                }
                fields.push(field);
            }
            body.append_pair("not_a_field", "ignored");
            (
                FormSchema::new(fields),
                Value::Object(expected),
                body.finish(),
            )
        })
    }

    /// Appends the pairs a browser sends for `value` of a filled-in control named `name`.
    fn encode_filled(
        body: &mut form_urlencoded::Serializer<'_, String>,
        name: &str,
        value: &Value,
    ) {
        match value {
            Value::Bool(checked) => {
                if *checked {
                    body.append_pair(name, "on");
                }
            }
            Value::Array(items) => {
                for item in items {
                    body.append_pair(
                        name,
                        &item.as_str().unwrap_or_default().replace('\n', "\r\n"),
                    );
                }
            }
            Value::String(text) => {
                body.append_pair(name, &text.replace('\n', "\r\n"));
            }
            Value::Number(number) => {
                let text = match number.as_f64() {
                    Some(float) if !number.is_i64() && !number.is_u64() => format!("{float}"),
                    _ => number.to_string(),
                };
                body.append_pair(name, &text);
            }
            other => {
                body.append_pair(name, &other.to_string());
            }
        }
    }

    /// Record fields (each required, as a person fills every column) with one value per record.
    fn record_leaves() -> impl Strategy<Value = Vec<(FieldKind, Vec<Value>)>> {
        (0..4_usize).prop_flat_map(|records| {
            vec(vec(kind_and_value(), records..=records), 1..4).prop_map(move |columns| {
                // Each column takes the kind of its first entry; entries of another kind are
                // replaced by the first value, so every record fits the column.
                columns
                    .into_iter()
                    .map(|entries| {
                        let kind = entries.first().map(|(kind, _)| kind.clone());
                        let first = entries.first().map(|(_, value)| value.clone());
                        let values = entries
                            .into_iter()
                            .map(|(entry_kind, value)| {
                                if Some(&entry_kind) == kind.as_ref() {
                                    value
                                } else {
                                    first.clone().unwrap_or(Value::Null)
                                }
                            })
                            .collect::<Vec<_>>();
                        (kind.unwrap_or(FieldKind::Boolean), values)
                    })
                    .collect()
            })
        })
    }

    /// A schema of fieldsets (two deep) and lists of records, a value for it, and the body a
    /// browser sends for that value (with `_count` for each list, records in a shuffled order).
    fn nested_submission() -> impl Strategy<Value = (FormSchema, Value, String)> {
        let object = (vec(kind_and_value(), 1..4), vec(kind_and_value(), 1..3));
        (vec(object, 0..3), vec(record_leaves(), 0..3), any::<bool>()).prop_map(
            |(objects, lists, reverse)| {
                let mut fields = Vec::new();
                let mut expected = Map::new();
                let mut body = form_urlencoded::Serializer::new(String::new());
                for (index, (members, inner_members)) in objects.into_iter().enumerate() {
                    let name = format!("group{index}");
                    let mut inner_fields = Vec::new();
                    let mut inner_value = Map::new();
                    for (member, (kind, value)) in inner_members.into_iter().enumerate() {
                        let member_name = format!("m{member}");
                        encode_filled(&mut body, &format!("{name}.inner.{member_name}"), &value);
                        inner_value.insert(member_name.clone(), value);
                        inner_fields.push(FormField::new(member_name, kind));
                    }
                    let mut member_fields = vec![FormField::new(
                        "inner",
                        FieldKind::Object {
                            fields: inner_fields,
                        },
                    )];
                    let mut value =
                        Map::from_iter([("inner".to_owned(), Value::Object(inner_value))]);
                    for (member, (kind, member_value)) in members.into_iter().enumerate() {
                        let member_name = format!("f{member}");
                        encode_filled(&mut body, &format!("{name}.{member_name}"), &member_value);
                        value.insert(member_name.clone(), member_value);
                        member_fields.push(FormField::new(member_name, kind));
                    }
                    fields.push(FormField::new(
                        name.clone(),
                        FieldKind::Object {
                            fields: member_fields,
                        },
                    ));
                    expected.insert(name, Value::Object(value));
                }
                for (index, columns) in lists.into_iter().enumerate() {
                    let name = format!("list{index}");
                    let count = columns.first().map_or(0, |(_, values)| values.len());
                    body.append_pair(&format!("_count.{name}"), &count.to_string());
                    let mut records = vec![Map::new(); count];
                    let mut order: Vec<usize> = (0..count).collect();
                    if reverse {
                        order.reverse();
                    }
                    for record in order {
                        for (column, (_, values)) in columns.iter().enumerate() {
                            let column_name = format!("c{column}");
                            let value = values.get(record).cloned().unwrap_or(Value::Null);
                            encode_filled(
                                &mut body,
                                &format!("{name}[{record}].{column_name}"),
                                &value,
                            );
                            records[record].insert(column_name, value);
                        }
                    }
                    let record_fields = columns
                        .into_iter()
                        .enumerate()
                        .map(|(column, (kind, _))| FormField::new(format!("c{column}"), kind))
                        .collect();
                    fields.push(FormField::new(
                        name.clone(),
                        FieldKind::RecordList {
                            fields: record_fields,
                            min_items: None,
                            max_items: None,
                        },
                    ));
                    expected.insert(
                        name,
                        Value::Array(records.into_iter().map(Value::Object).collect()),
                    );
                }
                (
                    FormSchema::new(fields),
                    Value::Object(expected),
                    body.finish(),
                )
            },
        )
    }

    fn schemas() -> impl Strategy<Value = FormSchema> {
        let entry = (
            kind_and_value(),
            any::<bool>(),
            option::of("[A-Za-z ]{1,12}"),
            option::of("\\PC{0,20}"),
        );
        vec(entry, 0..8).prop_map(|entries| {
            let fields = entries
                .into_iter()
                .enumerate()
                .map(
                    |(index, ((kind, _), required, title, description))| FormField {
                        name: format!("field{index}"),
                        title,
                        description,
                        default: None,
                        examples: Vec::new(),
                        required: required
                            || matches!(
                                kind,
                                FieldKind::StringArray { .. } | FieldKind::EnumArray { .. }
                            ),
                        kind,
                    },
                )
                .collect();
            FormSchema::new(fields)
        })
    }

    fn sorted(mut schema: FormSchema) -> FormSchema {
        schema
            .fields
            .sort_by(|left, right| left.name.cmp(&right.name));
        schema
    }

    proptest! {
        #[test]
        fn a_value_submitted_as_a_browser_would_decodes_back_to_itself((schema, expected, body) in submission()) {
            prop_assert_eq!(decode_and_validate(&schema, body.as_bytes()), Ok(expected), "body: {}", body);
        }

        #[test]
        fn decoding_arbitrary_bytes_never_panics(schema in schemas(), body in vec(any::<u8>(), 0..300)) {
            let _ = decode(&schema, &body);
            let _ = decode_and_validate(&schema, &body);
            let _ = raw_values(&body);
        }

        #[test]
        fn decoding_arbitrary_values_under_real_field_names_never_panics(
            schema in schemas(),
            pairs in vec((any::<proptest::sample::Index>(), vec(any::<u8>(), 0..20)), 0..12),
        ) {
            let mut body = Vec::new();
            for (index, value) in pairs {
                let name = schema.fields.get(index.index(schema.fields.len().max(1))).map_or("x", |field| field.name.as_str());
                body.extend_from_slice(name.as_bytes());
                body.push(b'=');
                for byte in value {
                    body.extend_from_slice(format!("%{byte:02X}").as_bytes());
                }
                body.push(b'&');
            }
            let _ = decode_and_validate(&schema, &body);
        }

        #[test]
        fn a_nested_value_submitted_as_a_browser_would_decodes_back_to_itself((schema, expected, body) in nested_submission()) {
            prop_assert_eq!(decode_and_validate(&schema, body.as_bytes()), Ok(expected), "body: {}", body);
        }

        #[test]
        fn a_nested_schema_survives_a_json_schema_round_trip((schema, _, _) in nested_submission()) {
            let reloaded = FormSchema::from_json_schema(&schema.to_json_schema());
            prop_assert_eq!(reloaded.map(|loaded| loaded.to_json_schema()), Ok(schema.to_json_schema()));
        }

        #[test]
        fn decoding_crafted_paths_never_panics_and_stays_bounded(
            (schema, _, _) in nested_submission(),
            pairs in vec((
                prop_oneof![
                    Just("list0[".to_owned()), Just("_count.list0".to_owned()), Just("group0.".to_owned()),
                    "list[01][0-9]{0,8}\\]?\\.?c[0-9]", "group[01]\\.(inner\\.)?[fm][0-9]", "\\PC{0,12}",
                ],
                vec(any::<u8>(), 0..12),
            ), 0..16),
        ) {
            let mut body = form_urlencoded::Serializer::new(String::new());
            for (key, value) in &pairs {
                body.append_pair(key, &String::from_utf8_lossy(value));
            }
            let _ = decode_and_validate(&schema, body.finish().as_bytes());
        }

        #[test]
        fn every_schema_in_the_subset_survives_a_json_schema_round_trip(schema in schemas()) {
            let reloaded = FormSchema::from_json_schema(&schema.to_json_schema()).map(sorted);
            prop_assert_eq!(reloaded, Ok(sorted(schema)));
        }
    }

    #[test]
    fn field_errors_keep_the_first_message_per_field() {
        let mut errors = FieldErrors::new();
        errors.add("email", "Email is required");
        errors.add("email", "Email must be an email address");
        errors.add("age", "Age must be a whole number");
        assert_eq!(errors.len(), 2);
        assert_eq!(errors.get("email"), Some("Email is required"));
        assert_eq!(
            serde_json::to_value(&errors).ok(),
            Some(
                serde_json::json!({ "age": "Age must be a whole number", "email": "Email is required" })
            )
        );
        assert_eq!(errors.clone().into_result(()), Err(errors));
        assert_eq!(FieldErrors::new().into_result(1), Ok(1));
    }
}
