//! Gemini's schema subset: tool parameters rewritten from JSON Schema into the `OpenAPI` subset
//! `functionDeclarations` accept.

use serde_json::{json, Map, Value};

/// How deep `$ref`s are followed before a recursive schema is cut to a plain object.
const MAX_REF_DEPTH: usize = 8;

/// Rewrites a JSON Schema into the subset Gemini's `parameters` accept: `$ref`s inlined (from
/// `$defs` or `definitions`), `["T", "null"]` and `null` alternatives turned into
/// `nullable`, `const` and string-constant `oneOf`s into `enum`, other `oneOf` into `anyOf`,
/// single-member `allOf` merged, and unsupported keywords (`additionalProperties`, `$schema`,
/// `default`, `examples`, unknown `format`s, …) dropped.
#[must_use]
pub fn gemini_schema(schema: &Value) -> Value {
    convert(schema, schema, 0)
}

fn convert(schema: &Value, root: &Value, depth: usize) -> Value {
    let Some(object) = schema.as_object() else {
        // `true` (anything) and other shorthands: say nothing about the value.
        return json!({});
    };
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        let target = reference
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer));
        let mut resolved = match target {
            Some(target) if depth < MAX_REF_DEPTH => convert(target, root, depth + 1),
            _ => json!({"type": "object"}),
        };
        for key in ["description", "title"] {
            if let Some(value) = object.get(key) {
                resolved[key] = value.clone();
            }
        }
        return resolved;
    }

    let mut out = Map::new();
    let mut nullable = object.get("nullable") == Some(&Value::Bool(true));

    match object.get("type") {
        Some(Value::String(kind)) if kind == "null" => nullable = true,
        Some(Value::String(kind)) => {
            out.insert("type".into(), json!(kind));
        }
        Some(Value::Array(kinds)) => {
            let kinds: Vec<&str> = kinds.iter().filter_map(Value::as_str).collect();
            nullable |= kinds.contains(&"null");
            let kinds: Vec<&str> = kinds.into_iter().filter(|kind| *kind != "null").collect();
            match kinds.as_slice() {
                [kind] => {
                    out.insert("type".into(), json!(kind));
                }
                [] => {}
                several => {
                    let alternatives: Vec<Value> =
                        several.iter().map(|kind| json!({"type": kind})).collect();
                    out.insert("anyOf".into(), Value::Array(alternatives));
                }
            }
        }
        _ => {}
    }

    for key in [
        "title",
        "description",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "minProperties",
        "maxProperties",
        "propertyOrdering",
    ] {
        if let Some(value) = object.get(key) {
            out.insert(key.into(), value.clone());
        }
    }

    if let Some(Value::String(format)) = object.get("format") {
        let allowed = matches!(
            (out.get("type").and_then(Value::as_str), format.as_str()),
            (Some("string"), "enum" | "date-time")
                | (Some("integer"), "int32" | "int64")
                | (Some("number"), "float" | "double")
        );
        if allowed {
            out.insert("format".into(), json!(format));
        }
    }

    let mut constants: Vec<Value> = Vec::new();
    if let Some(constant) = object.get("const") {
        constants.push(constant.clone());
    }
    if let Some(Value::Array(values)) = object.get("enum") {
        constants.extend(values.iter().cloned());
    }
    if !constants.is_empty() {
        nullable |= constants.iter().any(Value::is_null);
        let strings: Vec<Value> = constants
            .into_iter()
            .filter(|value| !value.is_null())
            .collect();
        if strings.iter().all(Value::is_string) && !strings.is_empty() {
            out.insert("type".into(), json!("string"));
            out.insert("enum".into(), Value::Array(strings));
        }
    }

    if let Some(Value::Object(properties)) = object.get("properties") {
        let converted: Map<String, Value> = properties
            .iter()
            .map(|(name, property)| (name.clone(), convert(property, root, depth)))
            .collect();
        if let Some(Value::Array(required)) = object.get("required") {
            let required: Vec<Value> = required
                .iter()
                .filter(|name| {
                    name.as_str()
                        .is_some_and(|name| converted.contains_key(name))
                })
                .cloned()
                .collect();
            if !required.is_empty() {
                out.insert("required".into(), Value::Array(required));
            }
        }
        out.insert("properties".into(), Value::Object(converted));
        out.entry("type").or_insert_with(|| json!("object"));
    }

    match object.get("items") {
        Some(items @ Value::Object(_)) => {
            out.insert("items".into(), convert(items, root, depth));
        }
        Some(Value::Array(items)) => {
            if let Some(first) = items.first() {
                out.insert("items".into(), convert(first, root, depth));
            }
        }
        _ => {}
    }

    let alternatives: Vec<&Value> = ["anyOf", "oneOf"]
        .iter()
        .filter_map(|key| object.get(*key).and_then(Value::as_array))
        .flatten()
        .collect();
    if !alternatives.is_empty() {
        merge_alternatives(&mut out, &mut nullable, &alternatives, root, depth);
    }

    if let Some(Value::Array(parts)) = object.get("allOf") {
        for part in parts {
            if let Value::Object(part) = convert(part, root, depth) {
                for (key, value) in part {
                    out.entry(key).or_insert(value);
                }
            }
        }
    }

    if nullable {
        out.insert("nullable".into(), json!(true));
    }
    Value::Object(out)
}

/// Folds `anyOf`/`oneOf` into `out`: null alternatives become `nullable`, string constants an
/// `enum`, a single remaining alternative is merged in, several stay as `anyOf`.
fn merge_alternatives(
    out: &mut Map<String, Value>,
    nullable: &mut bool,
    alternatives: &[&Value],
    root: &Value,
    depth: usize,
) {
    let mut converted: Vec<Map<String, Value>> = Vec::new();
    for alternative in alternatives {
        let Value::Object(mut alternative) = convert(alternative, root, depth) else {
            continue;
        };
        if alternative.remove("nullable") == Some(Value::Bool(true)) {
            *nullable = true;
        }
        if !alternative.is_empty() {
            converted.push(alternative);
        }
    }
    let all_string_enums = converted.iter().all(|alternative| {
        alternative.get("type") == Some(&json!("string")) && alternative.contains_key("enum")
    });
    if all_string_enums && !converted.is_empty() {
        let values: Vec<Value> = converted
            .iter()
            .filter_map(|alternative| alternative.get("enum").and_then(Value::as_array))
            .flatten()
            .cloned()
            .collect();
        out.insert("type".into(), json!("string"));
        out.insert("enum".into(), Value::Array(values));
        return;
    }
    match converted.len() {
        0 => {}
        1 => {
            for (key, value) in converted.remove(0) {
                out.entry(key).or_insert(value);
            }
        }
        _ => {
            out.insert(
                "anyOf".into(),
                Value::Array(converted.into_iter().map(Value::Object).collect()),
            );
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::model::ToolDefinition;

    /// Keywords Gemini's `parameters` reject; none may appear anywhere in a declaration.
    const REJECTED_KEYWORDS: [&str; 8] = [
        "additionalProperties",
        "$schema",
        "$ref",
        "$defs",
        "definitions",
        "const",
        "oneOf",
        "default",
    ];

    pub(in crate::gemini) fn find_rejected_keyword(value: &Value) -> Option<String> {
        match value {
            Value::Object(object) => object.iter().find_map(|(key, inner)| {
                if REJECTED_KEYWORDS.contains(&key.as_str()) {
                    return Some(key.clone());
                }
                if key == "type" && !inner.is_string() {
                    return Some("type (not a string)".into());
                }
                // Property names are user data, not keywords: only look inside them.
                if key == "properties" {
                    return inner.as_object().and_then(|properties| {
                        properties.values().find_map(find_rejected_keyword)
                    });
                }
                find_rejected_keyword(inner)
            }),
            Value::Array(items) => items.iter().find_map(find_rejected_keyword),
            _ => None,
        }
    }

    /// A tool schema the way schemars writes one: `$schema`, `$defs`, `$ref`, `oneOf` of
    /// constants, `["string", "null"]`, `additionalProperties`.
    pub(in crate::gemini) fn schemars_style_tool() -> ToolDefinition {
        ToolDefinition {
            name: "Table".into(),
            description: "Shows rows.".into(),
            parameters: json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {
                    "caption": {"type": ["string", "null"], "default": null},
                    "density": {"$ref": "#/$defs/Density", "description": "Row spacing."},
                    "columns": {"type": "array", "items": {"$ref": "#/$defs/Column"}, "minItems": 1},
                    "bind": {"type": "string", "format": "json-pointer"}
                },
                "required": ["columns", "bind"],
                "additionalProperties": false,
                "$defs": {
                    "Density": {"oneOf": [
                        {"type": "string", "const": "compact", "description": "Tight."},
                        {"type": "string", "const": "comfortable"}
                    ]},
                    "Column": {
                        "type": "object",
                        "properties": {"key": {"type": "string"}, "width": {"type": "integer", "format": "uint32", "minimum": 0}},
                        "required": ["key"],
                        "additionalProperties": false
                    }
                }
            }),
        }
    }

    #[test]
    fn a_schemars_schema_is_rewritten_into_geminis_subset() {
        let converted = gemini_schema(&schemars_style_tool().parameters);
        assert_eq!(
            converted,
            json!({
                "type": "object",
                "properties": {
                    "caption": {"type": "string", "nullable": true},
                    "density": {"type": "string", "enum": ["compact", "comfortable"], "description": "Row spacing."},
                    "columns": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "properties": {"key": {"type": "string"}, "width": {"type": "integer", "minimum": 0}},
                            "required": ["key"]
                        }
                    },
                    "bind": {"type": "string"}
                },
                "required": ["columns", "bind"]
            })
        );
    }

    #[test]
    fn a_recursive_schema_is_cut_instead_of_looping() {
        let tree = json!({
            "$ref": "#/$defs/Node",
            "$defs": {"Node": {"type": "object", "properties": {
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
            }}}
        });
        let converted = gemini_schema(&tree);
        assert!(find_rejected_keyword(&converted).is_none());
        assert_eq!(converted["type"], "object");
    }

    #[test]
    fn mixed_alternatives_stay_as_any_of_and_nulls_become_nullable() {
        let converted = gemini_schema(&json!({"anyOf": [
            {"type": "integer"}, {"type": "string", "maxLength": 3}, {"type": "null"}
        ]}));
        assert_eq!(
            converted,
            json!({"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 3}], "nullable": true})
        );
    }
}
