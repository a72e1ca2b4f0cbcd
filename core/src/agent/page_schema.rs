//! The JSON Schema of a whole page as one answer: a flat list of nodes, each a component of the
//! catalog with its props and its parent, generated from the catalog, the response schema and the
//! data summary.
//!
//! A model constrained to it cannot name a component the catalog lacks, a prop a component does
//! not have, a field name the response schema does not have, a data pointer the summary does not
//! list, or a field on a component that cannot submit that field's type; what the schema cannot
//! say (one Form, every field placed, bounds) code checks afterwards (`whole_page.rs`).
//!
//! The schema follows OpenAI's strict structured-output rules, the strictest of the providers',
//! so the same schema serves every provider: every object closes (`additionalProperties: false`)
//! and requires all its properties, an optional prop is nullable instead (`null` means "left
//! out"), only `type`, `properties`, `required`, `additionalProperties`, `items`, `enum`,
//! `anyOf`, `$defs` and `$ref` appear, and it stays within the limits on nesting, properties and
//! enum values ([`strict_problems`] checks all of that). Numeric bounds, lengths and formats are
//! left to code, which checks every prop against the component's full props type anyway.

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};
use tessera_app::catalog::{Catalog, ComponentSpec, Role, BINDABLE, FROM_SCHEMA};

use super::{
    heuristic::is_prose,
    summary::{DataSummary, JsonKind},
};
use crate::forms::{answerable::allowed_input_types, FieldKind, FormField, FormSchema};

/// The name the schema is sent under (OpenAI requires one).
pub const PAGE_SCHEMA_NAME: &str = "tessera_page";

/// OpenAI's limits on a strict schema: object nesting, properties in all, enum values in all.
const MAX_NESTING: usize = 10;
const MAX_PROPERTIES: usize = 5000;
const MAX_ENUM_VALUES: usize = 1000;
/// Pointers offered as binding targets; a summary lists at most this many anyway.
const MAX_POINTERS: usize = 200;

/// What a page schema is generated for.
#[derive(Clone, Copy, Debug)]
pub struct PageRequest<'a> {
    /// The components that may be placed.
    pub catalog: &'a Catalog,
    /// The response schema: its field names become the only names a field may take.
    pub schema: Option<&'a FormSchema>,
    /// The data summary: its pointers become the only targets a binding may name.
    pub summary: &'a DataSummary,
    /// Whether fields, buttons and the Form may be placed; a page without a response schema
    /// only shows data, so it offers none of them.
    pub forms: bool,
}

impl<'a> PageRequest<'a> {
    /// The request a generation makes: forms offered exactly when there is a response schema.
    #[must_use]
    pub fn new(
        catalog: &'a Catalog,
        schema: Option<&'a FormSchema>,
        summary: &'a DataSummary,
    ) -> Self {
        Self {
            catalog,
            schema,
            summary,
            forms: schema.is_some(),
        }
    }

    /// The components a page may use, in catalog order.
    pub fn components(&self) -> impl Iterator<Item = &'a ComponentSpec> + '_ {
        self.catalog
            .specs()
            .iter()
            .filter(|spec| {
                self.forms
                    || !(matches!(spec.role, Role::Field | Role::Action) || spec.name == "Form")
            })
            .filter(|spec| {
                self.field_names(&spec.name)
                    .is_none_or(|names| !names.is_empty())
            })
            .filter(|spec| spec.name != "DecisionTable" || self.decision_table_fits())
    }

    /// Whether a `DecisionTable` could answer anything: it answers two or more id-array fields
    /// over the same rows, so a form with fewer is better off without it.
    fn decision_table_fits(&self) -> bool {
        self.schema.is_none_or(|schema| {
            schema
                .fields
                .iter()
                .filter(|field| field.kind.is_array())
                .count()
                >= 2
        })
    }

    /// The field names `component` may submit under: `None` when any name goes (no response
    /// schema, or a component that names no field).
    fn field_names(&self, component: &str) -> Option<Vec<String>> {
        let schema = self.schema?;
        let fits: fn(&FormField) -> bool = match component {
            "Input" => |field| {
                matches!(
                    field.kind,
                    FieldKind::String { .. } | FieldKind::Number { .. } | FieldKind::Integer { .. }
                )
            },
            // Prose only, as code judges it from the field (measured: a 1.5B model given the
            // choice put first names and postcodes in TextAreas); a formatted string (email,
            // date, url) needs the Input of that type.
            "TextArea" => is_prose,
            "Checkbox" => |field| matches!(field.kind, FieldKind::Boolean),
            "Select" | "RadioGroup" => |field| {
                matches!(
                    field.kind,
                    FieldKind::Enum { .. } | FieldKind::EnumArray { .. } | FieldKind::String { .. }
                )
            },
            "CheckboxGroup" => |field| {
                matches!(
                    field.kind,
                    FieldKind::EnumArray { .. } | FieldKind::StringArray { .. }
                )
            },
            "MultiTextInput" => |field| matches!(field.kind, FieldKind::StringArray { .. }),
            "Fieldset" => |field| matches!(field.kind, FieldKind::Object { .. }),
            "RecordList" => |field| matches!(field.kind, FieldKind::RecordList { .. }),
            "Table" => |field| {
                matches!(
                    field.kind,
                    FieldKind::StringArray { .. }
                        | FieldKind::EnumArray { .. }
                        | FieldKind::String { .. }
                        | FieldKind::Enum { .. }
                )
            },
            _ => return None,
        };
        let mut names = Vec::new();
        collect_names(&schema.fields, "", fits, &mut names);
        Some(names)
    }
}

/// Every field path (`address.city`) whose field `fits`, objects' members included; a record
/// list's members are its columns, not fields of their own.
fn collect_names(
    fields: &[FormField],
    prefix: &str,
    fits: fn(&FormField) -> bool,
    names: &mut Vec<String>,
) {
    for field in fields {
        let path = format!("{prefix}{}", field.name);
        if fits(field) {
            names.push(path.clone());
        }
        if let FieldKind::Object { fields } = &field.kind {
            collect_names(fields, &format!("{path}."), fits, names);
        }
    }
}

/// Which bindings the page's data allows.
#[derive(Clone, Copy, Debug)]
struct Bindings {
    /// A value may be bound to any pointer (`$defs.binding`).
    values: bool,
    /// Rows may be bound to an array (`$defs.rows`).
    rows: bool,
}

/// The page schema for `request`.
#[must_use]
pub fn page_schema(request: &PageRequest<'_>) -> Value {
    let entries: Vec<_> = request
        .summary
        .pointers
        .iter()
        .filter(|entry| !entry.pointer.is_empty())
        .take(MAX_POINTERS)
        .collect();
    let pointers: Vec<Value> = entries.iter().map(|entry| json!(entry.pointer)).collect();
    let arrays: Vec<Value> = entries
        .iter()
        .filter(|entry| entry.kind == JsonKind::Array)
        .map(|entry| json!(entry.pointer))
        .collect();
    let bindings = Bindings {
        values: !pointers.is_empty(),
        rows: !arrays.is_empty(),
    };
    let binding = bindings.values;
    // With a response schema, a field's component is written under `fields` only, never as a
    // node too (a table stays a node: it mostly shows rows; `fields` holds it when it picks).
    let keyed = request.schema.is_some() && request.forms;
    let variants: Vec<Value> = request
        .components()
        .filter(|spec| {
            !(keyed && spec.name != "Table" && request.field_names(&spec.name).is_some())
        })
        .map(|spec| node_schema(spec, request, bindings))
        .collect();
    // The page's title: code makes it the first Heading, so every page says what it is for.
    let mut properties = json!({
        "title": {"type": "string"},
        "nodes": {"type": "array", "items": {"anyOf": variants}},
    });
    if let (Some(schema), true) = (request.schema, request.forms) {
        properties["fields"] = fields_schema(request, schema, bindings);
    }
    let mut schema = closed(properties);
    if binding {
        // Two shapes: the plain binding, and one asking code to compute from the bound rows
        // (a total, a count, groups, a sorted top n); a strict object must write every key, so
        // the plain one spares a model six nulls on every binding.
        let pointer = json!({"type": "string", "enum": pointers});
        let computed = closed(json!({
            "$data": pointer,
            "$sum": {"type": ["string", "null"]},
            "$count": {"type": ["boolean", "null"]},
            "$groupBy": {"type": ["string", "null"]},
            "$sortBy": {"type": ["string", "null"]},
            "$order": {"type": ["string", "null"], "enum": ["asc", "desc", null]},
            "$limit": {"type": ["integer", "null"]},
        }));
        schema["$defs"] = json!({
            "binding": {"anyOf": [closed(json!({"$data": pointer})), computed]},
        });
        if bindings.rows {
            // Rows come from an array, and stay rows: groups, a sort and a top n, never a total
            // or a count (measured: a 1.5B model bound a table's rows to an object with every
            // operation set, and the table showed nothing).
            let array = json!({"type": "string", "enum": arrays});
            let computed = closed(json!({
                "$data": array,
                "$groupBy": {"type": ["string", "null"]},
                "$sum": {"type": ["string", "null"]},
                "$sortBy": {"type": ["string", "null"]},
                "$order": {"type": ["string", "null"], "enum": ["asc", "desc", null]},
                "$limit": {"type": ["integer", "null"]},
            }));
            // A selection offers every row, in their own columns: sorted at most, never grouped
            // or cut to a top n (measured: a selection grouped by id showed only the ids).
            let sorted = closed(json!({
                "$data": array,
                "$sortBy": {"type": ["string", "null"]},
                "$order": {"type": ["string", "null"], "enum": ["asc", "desc", null]},
            }));
            schema["$defs"]["selection"] =
                json!({"anyOf": [closed(json!({"$data": array})), sorted]});
            schema["$defs"]["rows"] = json!({"anyOf": [closed(json!({"$data": array})), computed]});
        }
    }
    schema
}

/// `fields`: one required entry per field of the response schema (an object's members
/// included, by path), so a model constrained to the schema writes every field. An entry is the
/// field's component, its parent and its props without `name` (the key is the name), or `null`
/// when a node of `nodes` already submits the field (a `DecisionTable` covering several).
fn fields_schema(request: &PageRequest<'_>, schema: &FormSchema, bindings: Bindings) -> Value {
    let mut entries = Map::new();
    for path in field_paths(&schema.fields, "") {
        let mut variants: Vec<Value> = request
            .components()
            .filter(|spec| {
                request
                    .field_names(&spec.name)
                    .is_some_and(|names| names.contains(&path))
            })
            .map(|spec| {
                let mut props = props_schema(&spec.props_schema, None, bindings);
                field_props(&mut props);
                if let (true, Some(field)) = (spec.name == "Input", schema.field_at(&path)) {
                    input_types(&mut props, field);
                }
                if spec.name == "Table" {
                    every_row(&mut props["properties"]["rows"]);
                }
                if let Some(FieldKind::Enum { options } | FieldKind::EnumArray { options, .. }) =
                    schema.field_at(&path).map(|field| &field.kind)
                {
                    if let Some(choices) = props["properties"].get_mut("options") {
                        enum_choices(choices, options);
                    }
                }
                closed(json!({
                    "component": {"type": "string", "enum": [spec.name]},
                    "parent": {"type": ["string", "null"]},
                    "props": props,
                }))
            })
            .collect();
        // Only an id-array field may be left to a node of `nodes` (a DecisionTable); every
        // other field must be written here, which is what makes a constrained model place it.
        let by_a_node = request.decision_table_fits()
            && schema
                .field_at(&path)
                .is_some_and(|field| field.kind.is_array());
        if by_a_node || variants.is_empty() {
            variants.push(json!({"type": "null"}));
        }
        entries.insert(path, any_of(variants));
    }
    closed(Value::Object(entries))
}

/// A field component's props without the `name` its key gives it; a table's `selectable`
/// becomes required, since that is what makes the table answer the field. There is no prefilled
/// answer: the schema's default is filled in by code, and a small model given the choice fills
/// every field with whatever the data has (measured: a justification as a date).
fn field_props(props: &mut Value) {
    let Some(properties) = props["properties"].as_object_mut() else {
        return;
    };
    properties.remove("name");
    for prefill in ["value", "values", "checked"] {
        properties.remove(prefill);
    }
    if let Some(selectable) = properties.get_mut("selectable") {
        let mut choices = selectable["anyOf"].as_array().cloned().unwrap_or_default();
        if selectable.get("properties").is_some() {
            choices.push(selectable.clone());
        }
        let object = choices
            .into_iter()
            .find(|choice| choice.get("properties").is_some());
        if let Some(mut object) = object {
            object["type"] = json!("object");
            if let Some(inner) = object["properties"].as_object_mut() {
                inner.remove("name");
            }
            object["required"] = json!(object["properties"]
                .as_object()
                .map(|inner| inner.keys().cloned().collect::<Vec<_>>())
                .unwrap_or_default());
            *selectable = object;
        }
    }
    let required: Vec<Value> = properties.keys().map(|key| json!(key)).collect();
    props["required"] = Value::Array(required);
}

/// An enum field's `options`: written out, each value one of the enum's (measured: a 1.5B
/// model invented job titles for a Select whose field lists five).
fn enum_choices(options: &mut Value, values: &[String]) {
    let array = match options.get("anyOf").and_then(Value::as_array) {
        Some(choices) => choices
            .iter()
            .find(|choice| choice["type"] == "array")
            .cloned(),
        None => (options["type"] == "array").then(|| options.clone()),
    };
    let Some(mut array) = array else {
        return;
    };
    let value = json!({"type": "string", "enum": values});
    let items = &mut array["items"];
    let choices: Vec<&mut Value> = match items.get_mut("anyOf").and_then(Value::as_array_mut) {
        Some(choices) => choices.iter_mut().collect(),
        None => vec![items],
    };
    for choice in choices {
        match choice["type"].as_str() {
            Some("string") => *choice = value.clone(),
            Some("object") if choice["properties"].get("value").is_some() => {
                choice["properties"]["value"] = value.clone();
            }
            _ => {}
        }
    }
    *options = array;
}

/// A selecting table's `rows`: bound rows only as `$defs.selection` allows (every row).
fn every_row(rows: &mut Value) {
    if let Some(choices) = rows.get_mut("anyOf").and_then(Value::as_array_mut) {
        for choice in choices {
            if choice.get("$ref") == Some(&json!("#/$defs/rows")) {
                *choice = json!({"$ref": "#/$defs/selection"});
            }
        }
    }
}

/// An Input's `type` limited to the types that can answer `field` (`null` is a text box), so
/// an email field cannot get a text box (measured: a 1.5B model chose `text` for an email).
fn input_types(props: &mut Value, field: &FormField) {
    let allowed: Vec<&str> = allowed_input_types(field)
        .iter()
        .copied()
        .filter(|kind| *kind != "textarea")
        .collect();
    let Some(slot) = props["properties"].get_mut("type") else {
        return;
    };
    *slot = if allowed.contains(&"text") {
        json!({"type": ["string", "null"], "enum": allowed.iter().map(|kind| json!(kind)).chain([Value::Null]).collect::<Vec<_>>()})
    } else {
        json!({"type": "string", "enum": allowed})
    };
}

/// Every field a component may answer, by path: top-level fields and an object's members.
pub fn field_paths(fields: &[FormField], prefix: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for field in fields {
        let path = format!("{prefix}{}", field.name);
        paths.push(path.clone());
        if let FieldKind::Object { fields } = &field.kind {
            paths.extend(field_paths(fields, &format!("{path}.")));
        }
    }
    paths
}

/// One node of `spec`: `{id, component, parent, props}`. With a response schema a table's
/// selection is written under `fields` only: a node that also selects would answer the field
/// twice (measured: a 1.5B model wrote the selectable table both ways).
fn node_schema(spec: &ComponentSpec, request: &PageRequest<'_>, bindings: Bindings) -> Value {
    let names = request.field_names(&spec.name);
    let mut props = props_schema(&spec.props_schema, names.as_deref(), bindings);
    if request.schema.is_some() && request.forms && spec.name == "Table" {
        if let Some(properties) = props["properties"].as_object_mut() {
            properties.remove("selectable");
        }
        props = closed(props["properties"].take());
    }
    closed(json!({
        "id": {"type": "string"},
        "component": {"type": "string", "enum": [spec.name]},
        "parent": {"type": ["string", "null"]},
        "props": props,
    }))
}

/// A component's props as a strict object: props code fills from the response schema left out,
/// optional props nullable, bindable props also a binding (an array prop only to an array),
/// `name` (and a selectable table's `name`) limited to `names`.
fn props_schema(schema: &Value, names: Option<&[String]>, bindings: Bindings) -> Value {
    let binding = bindings.values;
    let required: BTreeSet<&str> = schema["required"]
        .as_array()
        .map(|required| required.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut properties = Map::new();
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        if property.get(FROM_SCHEMA) == Some(&Value::Bool(true)) {
            continue;
        }
        let mut strict = match (name.as_str(), names) {
            ("name", Some(names)) => json!({"type": "string", "enum": names}),
            ("selectable", Some(names)) => {
                let mut selectable = strict_schema(property, binding);
                if selectable["properties"].get("name").is_some() {
                    selectable["properties"]["name"] =
                        json!({"type": ["string", "null"], "enum": nullable_enum(names)});
                }
                selectable
            }
            _ => strict_schema(property, binding),
        };
        if binding && property.get(BINDABLE) == Some(&Value::Bool(true)) {
            strict = if !only_arrays(property) {
                any_of(vec![strict, json!({"$ref": "#/$defs/binding"})])
            } else if bindings.rows {
                any_of(vec![strict, json!({"$ref": "#/$defs/rows"})])
            } else {
                strict
            };
        }
        if !required.contains(name.as_str()) {
            strict = nullable(strict);
        }
        properties.insert(name.clone(), strict);
    }
    closed(Value::Object(properties))
}

/// `values` and `null`, for a nullable enum.
fn nullable_enum(values: &[String]) -> Vec<Value> {
    values
        .iter()
        .map(|value| json!(value))
        .chain([Value::Null])
        .collect()
}

/// An object schema with exactly `properties`, all required, nothing else allowed.
fn closed(properties: Value) -> Value {
    let required: Vec<Value> = properties
        .as_object()
        .map(|properties| properties.keys().map(|key| json!(key)).collect())
        .unwrap_or_default();
    let mut object = Map::new();
    object.insert("type".to_owned(), json!("object"));
    object.insert("properties".to_owned(), properties);
    object.insert("required".to_owned(), Value::Array(required));
    object.insert("additionalProperties".to_owned(), Value::Bool(false));
    Value::Object(object)
}

/// `schema` or `null`.
fn nullable(schema: Value) -> Value {
    match schema.get("type") {
        Some(Value::String(kind))
            if schema.get("enum").is_none() && schema.get("anyOf").is_none() =>
        {
            let mut schema = schema.clone();
            schema["type"] = json!([kind, "null"]);
            schema
        }
        _ => any_of(vec![schema, json!({"type": "null"})]),
    }
}

/// The alternatives, flattened and without repeats.
fn any_of(choices: Vec<Value>) -> Value {
    let mut flat: Vec<Value> = Vec::new();
    for choice in choices {
        let inner = match choice.get("anyOf").and_then(Value::as_array) {
            Some(inner) if choice.as_object().is_some_and(|object| object.len() == 1) => {
                inner.clone()
            }
            _ => vec![choice],
        };
        for choice in inner {
            if !flat.contains(&choice) {
                flat.push(choice);
            }
        }
    }
    if flat.len() == 1 {
        flat.remove(0)
    } else {
        json!({ "anyOf": flat })
    }
}

/// Any JSON Schema of a prop rewritten into the strict subset.
fn strict_schema(schema: &Value, binding: bool) -> Value {
    let Some(object) = schema.as_object() else {
        return scalar_any(binding);
    };
    if let Some(constant) = object.get("const") {
        return json!({"type": json_type(constant), "enum": [constant]});
    }
    if let Some(Value::Array(values)) = object.get("enum") {
        let kinds: BTreeSet<&str> = values.iter().map(json_type).collect();
        let mut strict = json!({ "enum": values });
        if kinds.len() == 1 {
            strict["type"] = json!(kinds.into_iter().next());
        }
        return strict;
    }
    if let Some(Value::Array(choices)) = object.get("anyOf").or_else(|| object.get("oneOf")) {
        return any_of(
            choices
                .iter()
                .map(|choice| strict_schema(choice, binding))
                .collect(),
        );
    }
    match object.get("type") {
        Some(Value::Array(kinds)) => any_of(
            kinds
                .iter()
                .map(|kind| {
                    let mut single = object.clone();
                    single.insert("type".to_owned(), kind.clone());
                    strict_schema(&Value::Object(single), binding)
                })
                .collect(),
        ),
        Some(Value::String(kind)) => match kind.as_str() {
            "object" => match object.get("properties").and_then(Value::as_object) {
                Some(properties) if !properties.is_empty() => {
                    let required: BTreeSet<&str> = object
                        .get("required")
                        .and_then(Value::as_array)
                        .map(|required| required.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    let properties: Map<String, Value> = properties
                        .iter()
                        .map(|(name, property)| {
                            let strict = strict_schema(property, binding);
                            let strict = if required.contains(name.as_str()) {
                                strict
                            } else {
                                nullable(strict)
                            };
                            (name.clone(), strict)
                        })
                        .collect();
                    closed(Value::Object(properties))
                }
                // A free-form object cannot be written strictly: it is only ever a binding here.
                _ if binding => json!({"$ref": "#/$defs/binding"}),
                _ => json!({"type": "string"}),
            },
            "array" => {
                let items = object
                    .get("items")
                    .map_or_else(|| scalar_any(false), |items| strict_schema(items, binding));
                json!({"type": "array", "items": items})
            }
            "integer" | "number" | "string" | "boolean" | "null" => json!({ "type": kind }),
            _ => scalar_any(binding),
        },
        _ => scalar_any(binding),
    }
}

/// Whether every value `schema` allows, `null` aside, is an array.
fn only_arrays(schema: &Value) -> bool {
    let kinds: Vec<&str> = match &schema["type"] {
        Value::String(kind) => vec![kind.as_str()],
        Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => return false,
    };
    kinds.contains(&"array") && kinds.iter().all(|kind| matches!(*kind, "array" | "null"))
}

/// A value of any scalar type (the strict form of `{}`), or a binding.
fn scalar_any(binding: bool) -> Value {
    let mut choices = vec![
        json!({"type": "string"}),
        json!({"type": "number"}),
        json!({"type": "boolean"}),
    ];
    if binding {
        choices.push(json!({"$ref": "#/$defs/binding"}));
    }
    json!({ "anyOf": choices })
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(number) if number.is_i64() || number.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Where `schema` breaks OpenAI's strict structured-output rules, one line per problem; empty
/// when it follows them all.
#[must_use]
pub fn strict_problems(schema: &Value) -> Vec<String> {
    let mut walk = StrictWalk::default();
    if schema.get("type") != Some(&json!("object")) || schema.get("anyOf").is_some() {
        walk.problems
            .push("the root must be an object, not anyOf".to_owned());
    }
    walk.visit(schema, "#", 0);
    for (name, definition) in schema
        .get("$defs")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        walk.visit(definition, &format!("#/$defs/{name}"), 1);
    }
    if walk.properties > MAX_PROPERTIES {
        walk.problems.push(format!(
            "{} properties in all (at most {MAX_PROPERTIES})",
            walk.properties
        ));
    }
    if walk.enum_values > MAX_ENUM_VALUES {
        walk.problems.push(format!(
            "{} enum values in all (at most {MAX_ENUM_VALUES})",
            walk.enum_values
        ));
    }
    walk.problems
}

#[derive(Default)]
struct StrictWalk {
    problems: Vec<String>,
    properties: usize,
    enum_values: usize,
}

impl StrictWalk {
    const KEYWORDS: [&'static str; 9] = [
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "anyOf",
        "$ref",
        "$defs",
    ];

    fn visit(&mut self, schema: &Value, at: &str, depth: usize) {
        let Some(object) = schema.as_object() else {
            self.problems.push(format!("{at}: not a schema object"));
            return;
        };
        for key in object.keys() {
            if !Self::KEYWORDS.contains(&key.as_str()) {
                self.problems
                    .push(format!("{at}: keyword `{key}` is not allowed"));
            }
        }
        if let Some(values) = object.get("enum").and_then(Value::as_array) {
            self.enum_values += values.len();
        }
        let is_object = match object.get("type") {
            Some(Value::String(kind)) => kind == "object",
            Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "object"),
            _ => false,
        };
        if is_object {
            if depth >= MAX_NESTING {
                self.problems
                    .push(format!("{at}: nested deeper than {MAX_NESTING} objects"));
            }
            if object.get("additionalProperties") != Some(&Value::Bool(false)) {
                self.problems
                    .push(format!("{at}: additionalProperties must be false"));
            }
            let properties = object.get("properties").and_then(Value::as_object);
            let Some(properties) = properties else {
                self.problems
                    .push(format!("{at}: an object needs properties"));
                return;
            };
            let required: BTreeSet<&str> = object
                .get("required")
                .and_then(Value::as_array)
                .map(|required| required.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for (name, property) in properties {
                self.properties += 1;
                if !required.contains(name.as_str()) {
                    self.problems
                        .push(format!("{at}: property `{name}` is not required"));
                }
                self.visit(property, &format!("{at}/properties/{name}"), depth + 1);
            }
        }
        if let Some(items) = object.get("items") {
            self.visit(items, &format!("{at}/items"), depth);
        } else if object.get("type") == Some(&json!("array")) {
            self.problems.push(format!("{at}: an array needs items"));
        }
        for (index, choice) in object
            .get("anyOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            self.visit(choice, &format!("{at}/anyOf/{index}"), depth);
        }
    }
}

/// The constrained answer the providers' tests ask for: [`example_page_schema`] under
/// [`PAGE_SCHEMA_NAME`].
#[cfg(test)]
#[must_use]
pub fn example_response_format() -> crate::llm::ResponseFormat {
    crate::llm::ResponseFormat {
        name: PAGE_SCHEMA_NAME.to_owned(),
        schema: example_page_schema(),
    }
}

/// A page schema for the providers' tests: the default catalog, a three-field form, and data
/// to bind.
#[cfg(test)]
#[must_use]
pub fn example_page_schema() -> Value {
    let schema = FormSchema::new(vec![
        FormField::new("note", FieldKind::string()),
        FormField::new("urgent", FieldKind::Boolean),
        FormField::new("priority", FieldKind::enumeration(["low", "high"])),
    ]);
    let summary = DataSummary::of(&json!({"ticket": {"title": "Printer on fire"}}));
    page_schema(&PageRequest::new(
        &Catalog::defaults(),
        Some(&schema),
        &summary,
    ))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use tessera_app::tree::PageTree;

    use super::*;
    use crate::agent::heuristic::page_for;
    use crate::forms::StringFormat;

    /// A tree as a model constrained to the schema would answer it: its nodes in document order
    /// under their code ids, props that code fills from the response schema left out, and every
    /// prop the schema lists but the node lacks written as `null`.
    fn answer_of(tree: &PageTree, catalog: &Catalog, schema: &Value) -> Value {
        let field_entries = schema["properties"]["fields"]["properties"].as_object();
        let mut fields: Map<String, Value> = field_entries
            .map(|entries| {
                entries
                    .keys()
                    .map(|key| (key.clone(), Value::Null))
                    .collect()
            })
            .unwrap_or_default();
        let nodes: Vec<Value> = tree
            .document_order()
            .into_iter()
            .filter_map(|id| {
                let node = tree.nodes.get(id)?;
                let spec = catalog.get(&node.component)?;
                let mut props = node.props.clone();
                if let Some(props) = props.as_object_mut() {
                    props.retain(|name, _| {
                        spec.props_schema["properties"][name].get(FROM_SCHEMA) != Some(&json!(true))
                    });
                }
                // A field component answering a field goes under `fields`, named by its key.
                let name = props["name"]
                    .as_str()
                    .or_else(|| props["selectable"]["name"].as_str())
                    .map(str::to_owned);
                let entry = name.as_deref().and_then(|name| {
                    let entry = field_entries?.get(name)?;
                    // One variant stands alone; several are an `anyOf`.
                    let variants = entry["anyOf"]
                        .as_array()
                        .map_or_else(|| std::slice::from_ref(entry), Vec::as_slice);
                    variants.iter().find(|variant| {
                        variant["properties"]["component"]["enum"][0] == json!(node.component)
                    })
                });
                if let (Some(name), Some(entry)) = (name, entry) {
                    let mut props = props.clone();
                    if let Some(props) = props.as_object_mut() {
                        props.remove("name");
                        if let Some(Value::Object(selectable)) = props.get_mut("selectable") {
                            selectable.remove("name");
                        }
                    }
                    let props = with_nulls(props, &entry["properties"]["props"], schema);
                    fields.insert(
                        name,
                        json!({"component": node.component, "parent": tree.parent_of(id),
                               "props": props}),
                    );
                    return None;
                }
                let variant = schema["properties"]["nodes"]["items"]["anyOf"]
                    .as_array()?
                    .iter()
                    .find(|variant| {
                        variant["properties"]["component"]["enum"][0] == json!(node.component)
                    })?;
                let props = with_nulls(props, &variant["properties"]["props"], schema);
                Some(json!({"id": id, "component": node.component,
                            "parent": tree.parent_of(id), "props": props}))
            })
            .collect();
        let title = tree
            .document_order()
            .first()
            .and_then(|id| tree.nodes.get(*id))
            .filter(|node| node.component == "Heading")
            .and_then(|node| node.props["text"].as_str())
            .unwrap_or("A page")
            .to_owned();
        if field_entries.is_some() {
            json!({ "title": title, "nodes": nodes, "fields": fields })
        } else {
            json!({ "title": title, "nodes": nodes })
        }
    }

    /// `value` with `null` for every property `schema` has and `value` lacks, at every level.
    fn with_nulls(value: Value, schema: &Value, root: &Value) -> Value {
        if let Some(reference) = schema["$ref"].as_str() {
            let target = reference
                .strip_prefix('#')
                .and_then(|pointer| root.pointer(pointer));
            return target.map_or(value.clone(), |target| with_nulls(value, target, root));
        }
        if let Some(choices) = schema["anyOf"].as_array() {
            return match choices.iter().find(|choice| fits(&value, choice, root)) {
                Some(choice) => with_nulls(value, choice, root),
                None => value,
            };
        }
        match value {
            Value::Object(mut object) => {
                if let Some(properties) = schema["properties"].as_object() {
                    for (name, property) in properties {
                        let filled =
                            with_nulls(object.remove(name).unwrap_or(Value::Null), property, root);
                        object.insert(name.clone(), filled);
                    }
                }
                Value::Object(object)
            }
            Value::Array(items) => Value::Array(
                items
                    .into_iter()
                    .map(|item| with_nulls(item, &schema["items"], root))
                    .collect(),
            ),
            other => other,
        }
    }

    /// Whether `value` is of the type `choice` (an `anyOf` alternative) describes, with no key
    /// it does not know.
    fn fits(value: &Value, choice: &Value, root: &Value) -> bool {
        let kind = json_type(value);
        let choice = choice["$ref"]
            .as_str()
            .and_then(|reference| root.pointer(reference.strip_prefix('#')?))
            .unwrap_or(choice);
        if let Some(inner) = choice["anyOf"].as_array() {
            return inner.iter().any(|inner| fits(value, inner, root));
        }
        let matches_type = match &choice["type"] {
            Value::String(declared) => {
                declared == kind || (declared == "number" && kind == "integer")
            }
            Value::Array(declared) => declared.iter().any(|declared| declared == kind),
            _ => choice.get("enum").is_some(),
        };
        let keys_known = value.as_object().is_none_or(|object| {
            object
                .keys()
                .all(|key| choice["properties"].get(key).is_some())
        });
        matches_type && keys_known
    }

    fn validator(schema: &Value) -> anyhow::Result<jsonschema::Validator> {
        jsonschema::validator_for(schema).map_err(|error| anyhow::anyhow!("{error}"))
    }

    fn errors(validator: &jsonschema::Validator, answer: &Value) -> Vec<String> {
        validator
            .iter_errors(answer)
            .map(|error| format!("{} at {}", error, error.instance_path()))
            .take(3)
            .collect()
    }

    /// The heuristic's page for a quality scenario (the suite's known-good pages).
    fn heuristic_page(
        prompt: &str,
        schema: Option<&FormSchema>,
        data: &Value,
    ) -> anyhow::Result<PageTree> {
        let tree = page_for(prompt, schema, data).map_err(anyhow::Error::msg)?;
        let catalog = Catalog::defaults();
        let report = crate::forms::validate_form::validate_form(&tree, &catalog, schema, data);
        anyhow::ensure!(report.ok, "the heuristic's page for {prompt} is not valid");
        Ok(tree)
    }

    /// A quality scenario: its name, request, response schema and data.
    type QualityScenario = (String, String, Option<FormSchema>, Value);

    fn quality_scenarios() -> anyhow::Result<Vec<QualityScenario>> {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/quality");
        let mut scenarios = Vec::new();
        for entry in std::fs::read_dir(folder)? {
            let path = entry?.path();
            let file: Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
            let schema = match &file["schema"] {
                Value::Null => None,
                schema => Some(FormSchema::from_json_schema(schema)?),
            };
            let name = file["name"].as_str().unwrap_or_default().to_owned();
            let prompt = file["prompt"].as_str().unwrap_or_default().to_owned();
            scenarios.push((name, prompt, schema, file["data"].clone()));
        }
        anyhow::ensure!(scenarios.len() >= 20, "the quality suite is there");
        Ok(scenarios)
    }

    #[test]
    fn every_quality_page_fits_its_schema_and_every_schema_follows_the_strict_rules(
    ) -> anyhow::Result<()> {
        let catalog = Catalog::defaults();
        for (name, prompt, schema, data) in quality_scenarios()? {
            let summary = DataSummary::of(&data);
            let page = page_schema(&PageRequest::new(&catalog, schema.as_ref(), &summary));
            let problems = strict_problems(&page);
            assert!(problems.is_empty(), "{name}: {problems:?}");
            let tree = heuristic_page(&prompt, schema.as_ref(), &data)?;
            let answer = answer_of(&tree, &catalog, &page);
            let found = errors(&validator(&page)?, &answer);
            assert!(
                found.is_empty(),
                "{name}: {found:?}\n{}\n{answer:#}",
                tree.outline()
            );
        }
        Ok(())
    }

    #[test]
    fn every_gallery_example_fits_the_schema_of_a_page_with_forms() -> anyhow::Result<()> {
        let catalog = Catalog::defaults();
        for spec in catalog.specs() {
            let (props, data) = spec.example();
            let summary = DataSummary::of(&data);
            let request = PageRequest {
                catalog: &catalog,
                schema: None,
                summary: &summary,
                forms: true,
            };
            let page = page_schema(&request);
            assert!(strict_problems(&page).is_empty(), "{}", spec.name);
            let mut tree = PageTree::default();
            let mut parent = None;
            if spec.submits || spec.role == Role::Action {
                tree.nodes.insert(
                    "form".into(),
                    serde_json::from_value(json!({"component": "Form", "children": ["example"]}))?,
                );
                parent = Some("form");
            }
            tree.nodes.insert(
                "example".into(),
                serde_json::from_value(json!({"component": spec.name, "props": props}))?,
            );
            tree.order = vec![parent.unwrap_or("example").to_owned()];
            let answer = answer_of(&tree, &catalog, &page);
            let found = errors(&validator(&page)?, &answer);
            assert!(found.is_empty(), "{}: {found:?}\n{answer:#}", spec.name);
        }
        Ok(())
    }

    #[test]
    fn a_text_field_offers_only_the_controls_and_types_that_answer_it() -> anyhow::Result<()> {
        let catalog = Catalog::defaults();
        let schema = FormSchema::new(vec![
            FormField::new("email", FieldKind::formatted(StringFormat::Email)),
            FormField::new("note", FieldKind::string()),
            FormField::new("city", FieldKind::string()),
        ]);
        let summary = DataSummary::of(&json!({}));
        let page = page_schema(&PageRequest::new(&catalog, Some(&schema), &summary));
        let validator = validator(&page)?;
        let input = |kind: Value| json!({"component": "Input", "parent": null, "props": {"label": "Email", "type": kind}});
        let page_with = |email: Value, note: Value| {
            json!({"title": "Contact", "nodes": [],
                   "fields": {"email": email, "note": note, "city": input(Value::Null)}})
        };
        assert!(validator.is_valid(&page_with(input(json!("email")), input(Value::Null))));
        assert!(validator.is_valid(&page_with(input(json!("email")), input(json!("password")))));
        assert!(
            !validator.is_valid(&page_with(input(json!("text")), input(Value::Null))),
            "an email typed into a text box"
        );
        assert!(
            !validator.is_valid(&page_with(input(Value::Null), input(Value::Null))),
            "an email with no type is a text box"
        );
        // Prose goes in a TextArea, a city in one line.
        let area = json!({"component": "TextArea", "parent": null,
                          "props": {"label": "Text", "rows": null}});
        let mut prose = page_with(input(json!("email")), area.clone());
        assert!(validator.is_valid(&prose), "a note in a TextArea");
        prose["fields"]["city"] = area;
        assert!(!validator.is_valid(&prose), "a city in a TextArea");
        Ok(())
    }

    #[test]
    fn an_enum_field_offers_only_its_own_options() -> anyhow::Result<()> {
        let catalog = Catalog::defaults();
        let schema = FormSchema::new(vec![FormField::new(
            "office",
            FieldKind::enumeration(["Oslo", "Bergen"]),
        )]);
        let summary = DataSummary::of(&json!({"employee": {"name": "Kari"}}));
        let page = page_schema(&PageRequest::new(&catalog, Some(&schema), &summary));
        let validator = validator(&page)?;
        let radios = |options: Value| {
            json!({"title": "Office", "nodes": [], "fields": {"office": {
                "component": "RadioGroup", "parent": null,
                "props": {"label": "Office", "options": options}}}})
        };
        let fits = |options: Value| validator.is_valid(&radios(options));
        assert!(fits(json!(["Oslo", "Bergen"])));
        assert!(fits(
            json!([{"value": "Oslo", "label": "Oslo (HQ)"}, "Bergen"])
        ));
        assert!(
            !fits(json!(["Oslo", "Trondheim"])),
            "an option the enum lacks"
        );
        assert!(
            !fits(json!([{"value": "Remote", "label": "Remote"}])),
            "an object option the enum lacks"
        );
        Ok(())
    }

    #[test]
    fn a_table_binds_its_rows_to_a_list_and_selects_only_as_a_field() -> anyhow::Result<()> {
        let catalog = Catalog::defaults();
        let schema = FormSchema::new(vec![FormField::new(
            "branch_ids",
            FieldKind::string_array(),
        )]);
        let data = json!({"repository": {"name": "tessera"},
                          "branches": [{"id": "old-ui", "age_days": 120}]});
        let summary = DataSummary::of(&data);
        let page = page_schema(&PageRequest::new(&catalog, Some(&schema), &summary));
        let validator = validator(&page)?;
        let columns = json!([{"key": "id", "label": "Branch"}]);
        let table = |rows: Value, selectable: Option<Value>| {
            let mut props = json!({"columns": columns, "rows": rows, "caption": null,
                                   "pageSize": null, "sortable": null, "emptyText": null});
            if let Some(selectable) = selectable {
                props["selectable"] = selectable;
            }
            props
        };
        let field = json!({"component": "Table", "parent": null,
            "props": table(json!({"$data": "/branches"}),
                Some(json!({"idKey": "id", "label": "Delete", "required": null, "maxItems": null})))});
        let page_with = |rows: Value, selectable: Option<Value>| {
            json!({"title": "Stale branches", "fields": {"branch_ids": field},
                   "nodes": [{"id": "t", "component": "Table", "parent": null,
                              "props": table(rows, selectable)}]})
        };
        assert!(validator.is_valid(&page_with(json!({"$data": "/branches"}), None)));
        let newest = json!({"$data": "/branches", "$groupBy": null, "$sum": null,
                            "$sortBy": "age_days", "$order": "desc", "$limit": 5});
        assert!(
            validator.is_valid(&page_with(newest, None)),
            "a sorted top five"
        );
        assert!(
            !validator.is_valid(&page_with(json!({"$data": "/repository"}), None)),
            "rows bound to a record"
        );
        let grouped = json!({"$data": "/branches", "$groupBy": "id", "$sum": null,
                             "$sortBy": null, "$order": null, "$limit": null});
        let mut selecting_groups = page_with(json!({"$data": "/branches"}), None);
        selecting_groups["fields"]["branch_ids"]["props"]["rows"] = grouped.clone();
        assert!(
            !validator.is_valid(&selecting_groups),
            "a selection of groups instead of rows"
        );
        assert!(
            validator.is_valid(&page_with(grouped, None)),
            "a table of groups"
        );
        let counted = json!({"$data": "/branches", "$count": true});
        assert!(
            !validator.is_valid(&page_with(counted, None)),
            "rows bound to a count"
        );
        let selecting = json!({"name": "branch_ids", "idKey": "id", "label": "Delete",
                               "required": null, "maxItems": null});
        assert!(
            !validator.is_valid(&page_with(json!({"$data": "/branches"}), Some(selecting))),
            "a node selecting what the field already selects"
        );
        Ok(())
    }

    #[test]
    fn a_node_of_an_unknown_component_a_foreign_field_or_pointer_is_refused() -> anyhow::Result<()>
    {
        let catalog = Catalog::defaults();
        let schema = FormSchema::new(vec![
            FormField::new("note", FieldKind::string()),
            FormField::new("urgent", FieldKind::Boolean),
        ]);
        let data = json!({"ticket": {"title": "Printer on fire"}});
        let summary = DataSummary::of(&data);
        let page = page_schema(&PageRequest::new(&catalog, Some(&schema), &summary));
        let validator = validator(&page)?;
        let note = || {
            json!({"component": "Input", "parent": null,
                             "props": {"label": "Note", "type": null}})
        };
        let urgent = || {
            json!({"component": "Checkbox", "parent": null,
                               "props": {"label": "Urgent"}})
        };
        let node = |component: &str, props: Value| {
            json!({"title": "Ticket", "fields": {"note": note(), "urgent": urgent()},
                   "nodes": [{"id": "a", "component": component, "parent": null, "props": props}]})
        };
        let text = |value: Value| json!({"text": value, "muted": null});
        let stat = |value: Value| json!({"label": "Ticket", "value": value, "delta": null});
        assert!(validator.is_valid(&node("Text", text(json!("Hello")))));
        assert!(validator.is_valid(&node("Stat", stat(json!({"$data": "/ticket/title"})))));
        assert!(
            !validator.is_valid(&node("Marquee", text(json!("Hello")))),
            "unknown component"
        );
        assert!(
            !validator.is_valid(&node("Stat", stat(json!({"$data": "/secrets"})))),
            "unknown pointer"
        );
        assert!(
            !validator.is_valid(&node("Text", json!({"text": "Hi"}))),
            "a prop left out, not null"
        );
        let foreign = json!({"title": "T", "nodes": [],
            "fields": {"note": note(), "urgent": urgent(), "priority": null}});
        assert!(!validator.is_valid(&foreign), "no such field");
        // `fields` holds every field, each only as a component that can answer it.
        let with_urgent = |urgent: Value| json!({"title": "T", "nodes": [], "fields": {"note": note(), "urgent": urgent}});
        assert!(validator.is_valid(&with_urgent(urgent())));
        let as_text = json!({"component": "TextArea", "parent": null,
                             "props": {"label": "Urgent", "rows": null}});
        assert!(
            !validator.is_valid(&with_urgent(as_text)),
            "a yes/no field as text"
        );
        assert!(
            !validator.is_valid(&with_urgent(Value::Null)),
            "a field left to nobody"
        );
        let prefilled = json!({"component": "Input", "parent": null,
                               "props": {"label": "Note", "type": null, "value": "{{/page.note}}"}});
        let made_up =
            json!({"title": "T", "nodes": [], "fields": {"note": prefilled, "urgent": urgent()}});
        assert!(
            !validator.is_valid(&made_up),
            "a prefill must come from the data"
        );
        let missing = json!({"title": "T", "nodes": [], "fields": {"note": note()}});
        assert!(!validator.is_valid(&missing), "a field left out");
        let as_node = json!({"title": "T", "fields": {"note": note(), "urgent": urgent()},
            "nodes": [{"id": "a", "component": "Checkbox", "parent": null,
                       "props": {"name": "urgent", "label": "Urgent", "checked": null}}]});
        assert!(
            !validator.is_valid(&as_node),
            "a field's component is written under fields only"
        );
        // A page that only shows data offers no form components at all.
        let display = page_schema(&PageRequest::new(&catalog, None, &summary));
        let offered: Vec<&Value> = display["properties"]["nodes"]["items"]["anyOf"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|variant| &variant["properties"]["component"]["enum"][0])
            .collect();
        assert!(offered.contains(&&json!("Table")) && !offered.contains(&&json!("Form")));
        assert!(!offered.contains(&&json!("Input")) && !offered.contains(&&json!("Button")));
        Ok(())
    }

    #[test]
    fn the_strict_check_names_what_breaks_the_rules() {
        let loose = json!({
            "type": "object",
            "properties": {"a": {"type": "string", "minLength": 2}, "b": {"type": "object"}},
            "required": ["a"],
        });
        let problems = strict_problems(&loose);
        for expected in [
            "#: additionalProperties must be false",
            "#: property `b` is not required",
            "#/properties/a: keyword `minLength` is not allowed",
            "#/properties/b: an object needs properties",
        ] {
            assert!(
                problems.iter().any(|problem| problem == expected),
                "{expected} in {problems:?}"
            );
        }
    }
}
