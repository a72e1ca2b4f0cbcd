//! Schemas as the document holds them turned into self-contained JSON Schema: local `$ref`s
//! followed and inlined, OpenAPI-only keywords dropped or translated (`nullable`), and a cycle or
//! a nesting past the depth bound cut to `{}`.

use serde_json::{json, Map, Value};

use super::{names::shorten, ImportError, Importer, MAX_DESCRIPTION_CHARS, MAX_SCHEMA_DEPTH};

impl Importer<'_> {
    /// Follows a local `$ref` (`#/components/...`) once.
    pub(super) fn resolve_ref(&self, field: &str, value: &Value) -> Result<Value, ImportError> {
        let mut current = value.clone();
        for _ in 0..MAX_SCHEMA_DEPTH {
            let Some(reference) = current.get("$ref").and_then(Value::as_str) else {
                return Ok(current);
            };
            current = self.target(field, reference)?.clone();
        }
        Err(ImportError::new(field, "`$ref` chain too long"))
    }

    fn target(&self, field: &str, reference: &str) -> Result<&Value, ImportError> {
        reference
            .strip_prefix('#')
            .and_then(|pointer| self.document.pointer(pointer))
            .ok_or_else(|| {
                ImportError::new(
                    field,
                    format!("`$ref` `{reference}` does not resolve in this document"),
                )
            })
    }

    /// `schema` with every `$ref` inlined and OpenAPI-only keywords turned into JSON Schema; a
    /// cycle or a nesting past the depth bound becomes `{}` (anything).
    pub(super) fn inline(
        &self,
        field: &str,
        schema: &Value,
        depth: usize,
        seen: &mut Vec<String>,
    ) -> Result<Value, ImportError> {
        if depth >= MAX_SCHEMA_DEPTH {
            return Ok(json!({}));
        }
        let Value::Object(object) = schema else {
            return Ok(schema.clone());
        };
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            if seen.iter().any(|earlier| earlier == reference) {
                return Ok(json!({}));
            }
            let target = self.target(field, reference)?.clone();
            seen.push(reference.to_owned());
            let inlined = self.inline(field, &target, depth, seen);
            seen.pop();
            return inlined;
        }
        let mut out = Map::new();
        for (key, value) in object {
            match key.as_str() {
                "example" | "examples" | "xml" | "externalDocs" | "discriminator" | "readOnly"
                | "writeOnly" | "deprecated" | "nullable" | "title" => {}
                "description" => {
                    if let Some(text) = value.as_str() {
                        out.insert(
                            key.clone(),
                            Value::String(shorten(text, MAX_DESCRIPTION_CHARS)),
                        );
                    }
                }
                "properties" | "patternProperties" => {
                    let mut properties = Map::new();
                    for (name, property) in value.as_object().into_iter().flatten() {
                        properties
                            .insert(name.clone(), self.inline(field, property, depth + 1, seen)?);
                    }
                    out.insert(key.clone(), Value::Object(properties));
                }
                "items" | "additionalProperties" | "not" => {
                    out.insert(key.clone(), self.inline(field, value, depth + 1, seen)?);
                }
                "allOf" | "anyOf" | "oneOf" => {
                    let mut members = Vec::new();
                    for member in value.as_array().into_iter().flatten() {
                        members.push(self.inline(field, member, depth + 1, seen)?);
                    }
                    out.insert(key.clone(), Value::Array(members));
                }
                _ if key.starts_with("x-") => {}
                _ => {
                    out.insert(key.clone(), value.clone());
                }
            }
        }
        // OpenAPI 3.0 says `nullable: true`; JSON Schema says the type includes "null".
        if object.get("nullable").and_then(Value::as_bool) == Some(true) {
            if let Some(Value::String(kind)) = out.get("type").cloned() {
                out.insert("type".to_owned(), json!([kind, "null"]));
            }
        }
        Ok(Value::Object(out))
    }
}
