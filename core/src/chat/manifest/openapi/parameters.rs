//! An operation's parameters as one JSON Schema object: its path and query parameters, its JSON
//! request body (flattened beside them when it is an object whose names do not clash, else one
//! `body` argument), and where each goes in the request.

use serde_json::{json, Map, Value};

use super::{
    names::{placeholders, shorten},
    ImportError, Importer, MAX_DESCRIPTION_CHARS, MAX_PARAMETER_BYTES, MAX_SCHEMA_DEPTH,
};
use crate::{chat::manifest::operation::HttpMethod, forms::FormSchema};

/// Where arguments go beyond the path: query parameters of a method that sends a body, and the
/// argument that is the whole body when it is not flattened.
#[derive(Default)]
pub(super) struct BindingExtras {
    pub(super) query: Vec<String>,
    pub(super) body: Option<String>,
}

/// The parameters' object being built: each argument's schema, the required ones, and where
/// the ones outside the path go.
#[derive(Default)]
struct Arguments {
    properties: Map<String, Value>,
    required: Vec<String>,
    extras: BindingExtras,
}

impl Importer<'_> {
    /// The operation's parameters as one JSON Schema object, where each goes, and whether it can
    /// be a form; `None` when the operation cannot be called from JSON (a non-JSON body).
    pub(super) fn parameters(
        &self,
        field: &str,
        path: &str,
        method: HttpMethod,
        operation: &Value,
        shared_parameters: &Value,
    ) -> Result<Option<(Value, BindingExtras, bool)>, ImportError> {
        let declared = self.declared_parameters(field, operation, shared_parameters)?;
        let mut arguments = path_and_query(&declared, method);
        for placeholder in placeholders(path) {
            if !arguments.properties.contains_key(&placeholder) {
                arguments
                    .properties
                    .insert(placeholder.clone(), json!({"type": "string"}));
            }
            if !arguments.required.contains(&placeholder) {
                arguments.required.push(placeholder);
            }
        }
        if let Some(body) = operation.get("requestBody") {
            if !self.add_body(field, body, &mut arguments)? {
                // Only JSON bodies can be sent; a form or file upload is left out.
                return Ok(None);
            }
        }
        let Arguments {
            properties,
            required,
            extras,
        } = arguments;
        let parameters = self.bounded(field, &properties, &required)?;
        let flat = extras.body.is_none() && FormSchema::from_json_schema(&parameters).is_ok();
        Ok(Some((parameters, extras, flat)))
    }

    /// The path item's parameters then the operation's, each resolved and keyed by its place and
    /// name (`query:status`); an operation's parameter replaces the path item's of that key.
    fn declared_parameters(
        &self,
        field: &str,
        operation: &Value,
        shared_parameters: &Value,
    ) -> Result<Vec<(String, Value)>, ImportError> {
        let mut declared: Vec<(String, Value)> = Vec::new();
        for (index, parameter) in shared_parameters
            .as_array()
            .into_iter()
            .flatten()
            .chain(
                operation
                    .get("parameters")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten(),
            )
            .enumerate()
        {
            let parameter_field = format!("{field}.parameters[{index}]");
            let parameter = self.resolve_ref(&parameter_field, parameter)?;
            let Some(name) = parameter.get("name").and_then(Value::as_str) else {
                return Err(ImportError::new(
                    parameter_field,
                    "a parameter needs a name",
                ));
            };
            let location = parameter.get("in").and_then(Value::as_str).unwrap_or("");
            // Operation-level parameters replace path-level ones of the same name and place.
            declared.retain(|(key, _)| key != &format!("{location}:{name}"));
            declared.push((format!("{location}:{name}"), parameter));
        }
        Ok(declared)
    }

    /// Adds the JSON request `body` to `arguments`: its properties beside the parameters when it
    /// is an object whose names do not clash with theirs, else as one `body` (or `request_body`)
    /// argument. False when the body is not JSON.
    fn add_body(
        &self,
        field: &str,
        body: &Value,
        arguments: &mut Arguments,
    ) -> Result<bool, ImportError> {
        let body_field = format!("{field}.requestBody");
        let body = self.resolve_ref(&body_field, body)?;
        let content = body.get("content").and_then(Value::as_object);
        let json_schema = content.and_then(|content| {
            content
                .iter()
                .find(|(media, _)| {
                    media.starts_with("application/json") || media.ends_with("+json")
                })
                .map(|(_, media)| media.get("schema").cloned().unwrap_or_else(|| json!({})))
        });
        let Some(schema) = json_schema else {
            return Ok(false);
        };
        let body_required = body.get("required").and_then(Value::as_bool) == Some(true);
        let schema = self.inline(
            &format!("{body_field}.content"),
            &schema,
            0,
            &mut Vec::new(),
        )?;
        let flat_properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .filter(|_| {
                schema
                    .get("type")
                    .and_then(Value::as_str)
                    .is_none_or(|kind| kind == "object")
            })
            .filter(|body_properties| {
                body_properties
                    .keys()
                    .all(|key| !arguments.properties.contains_key(key))
            });
        match flat_properties {
            Some(body_properties) => {
                for (key, value) in body_properties {
                    arguments.properties.insert(key.clone(), value.clone());
                }
                for key in schema
                    .get("required")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                {
                    arguments.required.push(key.to_owned());
                }
            }
            None => {
                let name = if arguments.properties.contains_key("body") {
                    "request_body"
                } else {
                    "body"
                };
                arguments.properties.insert(name.to_owned(), schema);
                if body_required {
                    arguments.required.push(name.to_owned());
                }
                arguments.extras.body = Some(name.to_owned());
            }
        }
        Ok(true)
    }

    /// The parameters' object with every schema inlined, the depth shrinking until it fits in
    /// [`MAX_PARAMETER_BYTES`]. Inlined last, so the depth bound applies to the whole object.
    fn bounded(
        &self,
        field: &str,
        properties: &Map<String, Value>,
        required: &[String],
    ) -> Result<Value, ImportError> {
        let mut parameters = Value::Null;
        for depth in [MAX_SCHEMA_DEPTH, 4, 3, 2, 1] {
            let mut inlined = Map::new();
            for (key, schema) in properties {
                let schema = self.inline(
                    &format!("{field}.parameters.{key}"),
                    schema,
                    MAX_SCHEMA_DEPTH - depth,
                    &mut Vec::new(),
                )?;
                inlined.insert(key.clone(), schema);
            }
            parameters = json!({"type": "object", "properties": inlined, "required": required});
            if parameters.to_string().len() <= MAX_PARAMETER_BYTES {
                break;
            }
        }
        Ok(parameters)
    }
}

/// The path and query parameters among `declared` as arguments (header and cookie ones are left
/// out: site-wide credentials come from the overlay); a query parameter of a method that sends a
/// body is marked to go in the query.
fn path_and_query(declared: &[(String, Value)], method: HttpMethod) -> Arguments {
    let mut arguments = Arguments::default();
    for (_, parameter) in declared {
        let name = parameter
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let location = parameter.get("in").and_then(Value::as_str).unwrap_or("");
        if !matches!(location, "path" | "query") {
            continue;
        }
        let mut schema = parameter
            .get("schema")
            .cloned()
            .unwrap_or_else(|| json!({}));
        if let (Some(object), Some(text)) = (
            schema.as_object_mut(),
            parameter.get("description").and_then(Value::as_str),
        ) {
            object
                .entry("description")
                .or_insert_with(|| Value::String(shorten(text, MAX_DESCRIPTION_CHARS)));
        }
        arguments.properties.insert(name.to_owned(), schema);
        if location == "path" || parameter.get("required").and_then(Value::as_bool) == Some(true) {
            arguments.required.push(name.to_owned());
        }
        if location == "query" && !method.uses_query() {
            arguments.extras.query.push(name.to_owned());
        }
    }
    arguments
}
