//! Writing a form back as JSON Schema: the canonical draft 2020-12 schema of a form and of each
//! field, which loads back to the same form.

use serde_json::{json, Map, Value};

use super::{FieldKind, FormField, FormSchema, StringFormat};

impl FormField {
    /// This field as a JSON Schema property (without the object's `required` list).
    #[must_use]
    pub fn to_json_schema(&self) -> Value {
        let nullable = !self.required
            && !self.kind.is_array()
            && !matches!(self.kind, FieldKind::RecordList { .. });
        let mut schema = Map::new();
        if let Some(title) = &self.title {
            schema.insert("title".into(), Value::from(title.clone()));
        }
        if let Some(description) = &self.description {
            schema.insert("description".into(), Value::from(description.clone()));
        }
        if let Some(default) = &self.default {
            schema.insert("default".into(), default.clone());
        }
        if !self.examples.is_empty() {
            schema.insert("examples".into(), Value::Array(self.examples.clone()));
        }
        let type_value = |name: &str| {
            if nullable {
                json!([name, "null"])
            } else {
                json!(name)
            }
        };
        match &self.kind {
            FieldKind::String {
                format,
                min_length,
                max_length,
                pattern,
            } => {
                schema.insert("type".into(), type_value("string"));
                insert_string_rules(
                    &mut schema,
                    *format,
                    *min_length,
                    *max_length,
                    pattern.as_deref(),
                );
            }
            FieldKind::Number {
                minimum,
                maximum,
                exclusive_minimum,
                exclusive_maximum,
                multiple_of,
            } => {
                schema.insert("type".into(), type_value("number"));
                insert_some(&mut schema, "minimum", *minimum);
                insert_some(&mut schema, "maximum", *maximum);
                insert_some(&mut schema, "exclusiveMinimum", *exclusive_minimum);
                insert_some(&mut schema, "exclusiveMaximum", *exclusive_maximum);
                insert_some(&mut schema, "multipleOf", *multiple_of);
            }
            FieldKind::Integer {
                minimum,
                maximum,
                multiple_of,
            } => {
                schema.insert("type".into(), type_value("integer"));
                insert_some(&mut schema, "minimum", *minimum);
                insert_some(&mut schema, "maximum", *maximum);
                insert_some(&mut schema, "multipleOf", *multiple_of);
            }
            FieldKind::Boolean => {
                schema.insert("type".into(), type_value("boolean"));
            }
            FieldKind::Enum { options } => {
                schema.insert("type".into(), type_value("string"));
                let mut values: Vec<Value> = options.iter().cloned().map(Value::from).collect();
                if nullable {
                    values.push(Value::Null);
                }
                schema.insert("enum".into(), Value::Array(values));
            }
            FieldKind::StringArray {
                min_items,
                max_items,
                unique_items,
                item_min_length,
                item_max_length,
                item_pattern,
                item_format,
            } => {
                schema.insert("type".into(), json!("array"));
                let mut items = Map::new();
                items.insert("type".into(), json!("string"));
                insert_string_rules(
                    &mut items,
                    *item_format,
                    *item_min_length,
                    *item_max_length,
                    item_pattern.as_deref(),
                );
                schema.insert("items".into(), Value::Object(items));
                insert_array_rules(&mut schema, *min_items, *max_items, *unique_items);
            }
            FieldKind::EnumArray {
                options,
                min_items,
                max_items,
                unique_items,
            } => {
                schema.insert("type".into(), json!("array"));
                schema.insert("items".into(), json!({ "type": "string", "enum": options }));
                insert_array_rules(&mut schema, *min_items, *max_items, *unique_items);
            }
            FieldKind::Object { fields } => {
                schema.insert("type".into(), type_value("object"));
                schema.extend(object_schema(fields));
            }
            FieldKind::RecordList {
                fields,
                min_items,
                max_items,
            } => {
                schema.insert("type".into(), json!("array"));
                let mut items = Map::new();
                items.insert("type".into(), json!("object"));
                items.extend(object_schema(fields));
                schema.insert("items".into(), Value::Object(items));
                insert_array_rules(&mut schema, *min_items, *max_items, false);
            }
        }
        Value::Object(schema)
    }
}

fn insert_some<T: Into<Value>>(schema: &mut Map<String, Value>, key: &str, value: Option<T>) {
    if let Some(value) = value {
        schema.insert(key.to_owned(), value.into());
    }
}

fn insert_string_rules(
    schema: &mut Map<String, Value>,
    format: Option<StringFormat>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    pattern: Option<&str>,
) {
    insert_some(schema, "format", format.map(StringFormat::as_str));
    insert_some(schema, "minLength", min_length);
    insert_some(schema, "maxLength", max_length);
    insert_some(schema, "pattern", pattern);
}

fn insert_array_rules(
    schema: &mut Map<String, Value>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    unique_items: bool,
) {
    insert_some(schema, "minItems", min_items);
    insert_some(schema, "maxItems", max_items);
    if unique_items {
        schema.insert("uniqueItems".into(), Value::Bool(true));
    }
}

/// The `properties`, `required` and `additionalProperties: false` of an object with `fields`.
fn object_schema(fields: &[FormField]) -> Map<String, Value> {
    let properties: Map<String, Value> = fields
        .iter()
        .map(|field| (field.name.clone(), field.to_json_schema()))
        .collect();
    let required: Vec<Value> = fields
        .iter()
        .filter(|field| field.required)
        .map(|field| Value::from(field.name.clone()))
        .collect();
    let mut schema = Map::new();
    schema.insert("properties".into(), Value::Object(properties));
    schema.insert("required".into(), Value::Array(required));
    schema.insert("additionalProperties".into(), Value::Bool(false));
    schema
}

impl FormSchema {
    /// The canonical JSON Schema (draft 2020-12) of this form: `type: object`, its properties,
    /// `required`, and `additionalProperties: false`. Optional scalars are `[T, "null"]`.
    #[must_use]
    pub fn to_json_schema(&self) -> Value {
        let mut schema = Map::new();
        schema.insert(
            "$schema".into(),
            json!("https://json-schema.org/draft/2020-12/schema"),
        );
        schema.insert("type".into(), json!("object"));
        schema.extend(object_schema(&self.fields));
        Value::Object(schema)
    }
}

impl From<FormSchema> for Value {
    fn from(schema: FormSchema) -> Self {
        schema.to_json_schema()
    }
}
