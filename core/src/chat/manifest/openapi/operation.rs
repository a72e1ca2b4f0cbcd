//! One operation of the document as a [`RawOperation`]: whether it is taken at all (the
//! overlay's `exclude` and `include_tags`, `x-tessera-exclude`), its name, and what the overlay,
//! the `x-tessera-*` extensions and inference say about its tags, mode, entity and batch size.

use serde_json::{Map, Value};

use super::{
    infer::infer_tags,
    names::{entity_of, placeholders, shorten, slug, tool_name},
    ImportError, Importer, OperationOverride, DEFAULT_MAX_BATCH_SIZE, MAX_DESCRIPTION_CHARS,
};
use crate::chat::manifest::{
    load::RawOperation,
    operation::{HttpBinding, HttpMethod},
    tag::ToolMode,
};

impl Importer<'_> {
    /// Every operation of every path, in the document's order, with the fields of the rows each
    /// answers with.
    pub(super) fn paths(
        &mut self,
        paths: &Map<String, Value>,
    ) -> Result<(Vec<RawOperation>, Vec<Vec<String>>), ImportError> {
        let mut operations = Vec::new();
        let mut row_fields = Vec::new();
        for (path, item) in paths {
            let shared = item.get("parameters").cloned().unwrap_or(Value::Null);
            for (method_name, method) in [
                ("get", HttpMethod::Get),
                ("post", HttpMethod::Post),
                ("put", HttpMethod::Put),
                ("patch", HttpMethod::Patch),
                ("delete", HttpMethod::Delete),
            ] {
                let Some(operation) = item.get(method_name) else {
                    continue;
                };
                let field = format!("paths.{path}.{method_name}");
                if let Some((raw, fields)) =
                    self.operation(&field, path, method, operation, &shared)?
                {
                    operations.push(raw);
                    row_fields.push(fields);
                }
            }
        }
        Ok((operations, row_fields))
    }

    /// The operation at `field` (`paths./pets.get`) as a raw operation with the fields of the
    /// rows it answers with; `None` when it is left out or cannot be called from JSON.
    fn operation(
        &mut self,
        field: &str,
        path: &str,
        method: HttpMethod,
        operation: &Value,
        shared_parameters: &Value,
    ) -> Result<Option<(RawOperation, Vec<String>)>, ImportError> {
        let operation = self.resolve_ref(field, operation)?;
        let operation_id = operation.get("operationId").and_then(Value::as_str);
        let method_text = format!("{method:?}").to_ascii_uppercase();
        let openapi_tags = openapi_tags(&operation);
        let name = self.unique_name(&tool_name(operation_id, &method_text, path));
        // An override counts as used even when it names an operation left out.
        let overlay = self.take_override(operation_id, &name);
        if self.left_out(
            &operation,
            operation_id,
            &name,
            &format!("{method_text} {path}"),
        ) || !self.included(&openapi_tags)
        {
            return Ok(None);
        }
        let Some((parameters, binding_extras, flat)) =
            self.parameters(field, path, method, &operation, shared_parameters)?
        else {
            return Ok(None);
        };
        self.names.insert(name.clone());
        let extension = extension_override(field, &operation)?;
        let (batch_argument, inferred_tags) = infer_tags(method, path, &parameters);
        let tags = overlay.tags.or(extension.tags).unwrap_or(inferred_tags);
        let batch = tags.iter().any(|tag| tag == "batch");
        let entity = overlay
            .entity
            .or(extension.entity)
            .or_else(|| openapi_tags.first().map(|tag| slug(tag)))
            .unwrap_or_else(|| entity_of(path));
        // A person can call it by hand only when its parameters are a form.
        let inferred_mode = if flat { ToolMode::Both } else { ToolMode::Llm };
        let mode = overlay.mode.or(extension.mode).unwrap_or(inferred_mode);
        let description = description_of(&operation, &method_text, path);
        Ok(Some((
            RawOperation {
                name,
                description,
                entity,
                tags,
                mode,
                category: openapi_tags.first().map(|tag| (*tag).to_owned()),
                http: HttpBinding {
                    method,
                    path: path.to_owned(),
                    base_url: None,
                    query: binding_extras.query,
                    body: binding_extras.body,
                },
                parameters,
                max_batch_size: batch.then(|| {
                    overlay
                        .max_batch_size
                        .or(extension.max_batch_size)
                        .unwrap_or(DEFAULT_MAX_BATCH_SIZE)
                }),
                batch_argument: batch.then_some(batch_argument).flatten(),
                requires_preview: None,
                auth: None,
                id_field: overlay.id_field.or(extension.id_field),
                // The one item a call touches is the path's last placeholder: `issue_number`.
                id_argument: (!batch && path.ends_with('}'))
                    .then(|| placeholders(path).pop())
                    .flatten(),
                identifying_fields: Vec::new(),
            },
            self.row_fields(field, &operation)?,
        )))
    }

    /// The overlay's override of the operation, by `operationId` or tool name, marked used; the
    /// default (no change) when there is none.
    fn take_override(&mut self, operation_id: Option<&str>, name: &str) -> OperationOverride {
        let Some(key) = [operation_id.unwrap_or_default(), name]
            .into_iter()
            .find(|key| self.overlay.operations.contains_key(*key))
        else {
            return OperationOverride::default();
        };
        self.used_overrides.insert(key.to_owned());
        self.overlay
            .operations
            .get(key)
            .cloned()
            .unwrap_or_default()
    }

    /// Whether the overlay's `exclude` names the operation (by `operationId`, tool name or
    /// `METHOD /path`) or the operation says `x-tessera-exclude: true`.
    fn left_out(
        &self,
        operation: &Value,
        operation_id: Option<&str>,
        name: &str,
        method_and_path: &str,
    ) -> bool {
        self.overlay.exclude.iter().any(|excluded| {
            Some(excluded.as_str()) == operation_id
                || excluded == name
                || excluded == method_and_path
        }) || operation.get("x-tessera-exclude").and_then(Value::as_bool) == Some(true)
    }

    /// Whether the operation carries one of the overlay's `include_tags` (any does when there
    /// are none).
    fn included(&self, openapi_tags: &[&str]) -> bool {
        self.overlay.include_tags.is_empty()
            || openapi_tags
                .iter()
                .any(|tag| self.overlay.include_tags.iter().any(|wanted| wanted == tag))
    }

    /// The fields of the rows a read answers with: the first 2xx JSON response's object, or the
    /// object its array holds.
    fn row_fields(&self, field: &str, operation: &Value) -> Result<Vec<String>, ImportError> {
        let Some(response) = operation
            .get("responses")
            .and_then(Value::as_object)
            .and_then(|responses| responses.iter().find(|(code, _)| code.starts_with('2')))
            .map(|(_, response)| response)
        else {
            return Ok(Vec::new());
        };
        let response = self.resolve_ref(field, response)?;
        let Some(schema) = response
            .get("content")
            .and_then(Value::as_object)
            .and_then(|content| {
                content.iter().find(|(media, _)| {
                    media.starts_with("application/json") || media.ends_with("+json")
                })
            })
            .and_then(|(_, media)| media.get("schema"))
        else {
            return Ok(Vec::new());
        };
        let mut schema = self.resolve_ref(field, schema)?;
        if let Some(items) = schema.get("items") {
            schema = self.resolve_ref(field, items)?;
        }
        Ok(schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default())
    }

    fn unique_name(&self, wanted: &str) -> String {
        if !self.names.contains(wanted) {
            return wanted.to_owned();
        }
        (2..)
            .map(|number| {
                let suffix = format!("_{number}");
                let keep = 64 - suffix.len();
                format!("{}{suffix}", &wanted[..wanted.len().min(keep)])
            })
            .find(|candidate| !self.names.contains(candidate))
            .unwrap_or_else(|| wanted.to_owned())
    }
}

/// What the operation's `x-tessera-*` extensions say, each checked.
fn extension_override(field: &str, operation: &Value) -> Result<OperationOverride, ImportError> {
    let pick = |key: &str| operation.get(key).cloned();
    let tags = pick("x-tessera-tags")
        .map(serde_json::from_value::<Vec<String>>)
        .transpose()
        .map_err(|error| ImportError::new(format!("{field}.x-tessera-tags"), error.to_string()))?;
    let mode = pick("x-tessera-mode")
        .map(serde_json::from_value::<ToolMode>)
        .transpose()
        .map_err(|error| ImportError::new(format!("{field}.x-tessera-mode"), error.to_string()))?;
    let entity = pick("x-tessera-entity").and_then(|value| value.as_str().map(str::to_owned));
    let max_batch_size = pick("x-tessera-max-batch-size")
        .map(serde_json::from_value::<usize>)
        .transpose()
        .map_err(|error| {
            ImportError::new(
                format!("{field}.x-tessera-max-batch-size"),
                error.to_string(),
            )
        })?;
    let id_field = pick("x-tessera-id-field").and_then(|value| value.as_str().map(str::to_owned));
    Ok(OperationOverride {
        tags,
        mode,
        entity,
        max_batch_size,
        id_field,
    })
}

/// The operation's own OpenAPI `tags`.
fn openapi_tags(operation: &Value) -> Vec<&str> {
    operation
        .get("tags")
        .and_then(Value::as_array)
        .map(|tags| tags.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The operation's `summary` or `description`, cut short; `METHOD /path` when it has neither.
fn description_of(operation: &Value, method_text: &str, path: &str) -> String {
    operation
        .get("summary")
        .or_else(|| operation.get("description"))
        .and_then(Value::as_str)
        .map_or_else(
            || format!("{method_text} {path}"),
            |text| shorten(text, MAX_DESCRIPTION_CHARS),
        )
}
