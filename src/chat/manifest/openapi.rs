//! Importing an OpenAPI 3.0/3.1 document as a manifest: every operation becomes a tool with its
//! parameter and request-body schemas, its tags inferred from the method and overridable.
//!
//! The import is pure (no I/O, no HTTP): the document arrives parsed, the overlay beside it.
//! Inference, in order of precedence (highest last):
//!
//! | what | rule |
//! |---|---|
//! | GET | `readonly`, `idempotent`; `filterable` with query parameters; `read` when the path ends in a parameter, else `list` |
//! | POST | `mutating`, `create` |
//! | PUT | `mutating`, `update`, `idempotent` |
//! | PATCH | `mutating`, `update`, `patch` |
//! | DELETE | `mutating`, `delete`, `confirmation-required`, `idempotent` |
//! | a body with an array of ids (`ids`, `*_ids`, `*Ids`) | `batch` of at most [`DEFAULT_MAX_BATCH_SIZE`], when the entity has a readonly filterable operation to preview it |
//! | a path ending in a parameter (`/issues/{issue_number}`), not a batch | that parameter names the one item a call touches (`id_argument`) |
//! | a read whose rows have that argument's name, or it without the entity's prefix (`number`) | the rows' id field (`id_field`), so an approval shows each item's current values |
//! | `x-tessera-tags`, `x-tessera-mode`, `x-tessera-entity`, `x-tessera-max-batch-size`, `x-tessera-id-field`, `x-tessera-exclude` on the operation | replace what was inferred |
//! | the overlay's `operations.<operationId>` | replaces both |
//!
//! `$ref`s are resolved inline; a cycle or a nesting deeper than the depth bound becomes an
//! unconstrained schema (`{}`), and the depth shrinks until an operation's parameters fit in
//! [`MAX_PARAMETER_BYTES`], so one huge schema cannot blow the per-turn offer. A request body
//! outside the form subset (a list inside a record, a non-object body, a schema cut to `{}`) makes
//! the operation model-only: a person could not fill it in; header and cookie parameters are left out (site-wide credentials come from the
//! overlay), as are operations whose body is not JSON.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::forms::FormSchema;

use super::{
    load::{is_tool_name, RawManifest, RawOperation},
    operation::{AuthHeader, HttpBinding, HttpMethod},
    tag::ToolMode,
    Manifest, ManifestError, TagRelationships,
};

/// The `max_batch_size` of an inferred batch operation when the document does not say.
pub const DEFAULT_MAX_BATCH_SIZE: usize = 100;

/// The largest parameter schema one operation keeps, in bytes of JSON.
pub const MAX_PARAMETER_BYTES: usize = 6 * 1024;

/// The deepest `$ref`/nesting level resolved before a schema is cut to `{}`.
const MAX_SCHEMA_DEPTH: usize = 6;

/// The longest description kept for an operation or a parameter, in characters.
const MAX_DESCRIPTION_CHARS: usize = 200;

/// Why a document could not be imported: the field at fault and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct ImportError {
    /// Where in the document (or the overlay), e.g. `paths./pets.get.parameters[0]`.
    pub field: String,
    /// What is wrong.
    pub reason: String,
}

impl ImportError {
    fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            reason: reason.into(),
        }
    }
}

impl From<ManifestError> for ImportError {
    fn from(error: ManifestError) -> Self {
        let field = match &error {
            ManifestError::UnknownTag { operation, .. }
            | ManifestError::PreviewMissing { operation, .. }
            | ManifestError::PreviewMutating { operation, .. }
            | ManifestError::BatchWithoutMaxSize { operation }
            | ManifestError::Invalid { operation, .. } => format!("operation {operation}"),
            ManifestError::Parse(_) => "document".to_owned(),
        };
        Self::new(field, error.to_string())
    }
}

/// What a site file says beside its OpenAPI document: a name, a base URL, site-wide credentials,
/// which operations to take, and per-operation overrides.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Overlay {
    /// The site's name (a tool-name prefix when two sites collide); from `info.title` otherwise.
    #[serde(default)]
    pub name: Option<String>,
    /// Where requests go instead of the document's first `servers` entry.
    #[serde(default)]
    pub base_url: Option<String>,
    /// A header sent with every request, its value from an environment variable.
    #[serde(default)]
    pub auth: Option<AuthHeader>,
    /// Only operations carrying one of these OpenAPI tags (all when empty).
    #[serde(default)]
    pub include_tags: Vec<String>,
    /// Operations left out, by `operationId`, tool name or `METHOD /path`.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Per-operation overrides, keyed by `operationId` or tool name.
    #[serde(default)]
    pub operations: BTreeMap<String, OperationOverride>,
}

/// What an overlay (or `x-tessera-*` extensions) may change on one operation.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperationOverride {
    /// The tags, replacing the inferred ones.
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    /// Who may call it.
    #[serde(default)]
    pub mode: Option<ToolMode>,
    /// The entity it acts on.
    #[serde(default)]
    pub entity: Option<String>,
    /// The most items one call may carry.
    #[serde(default)]
    pub max_batch_size: Option<usize>,
    /// The field of a read's rows that is the item's id.
    #[serde(default)]
    pub id_field: Option<String>,
}

/// Whether `document` looks like an OpenAPI document (it has an `openapi` version field).
#[must_use]
pub fn is_openapi(document: &Value) -> bool {
    document.get("openapi").is_some()
}

/// Imports `document` as a checked manifest, `overlay` applied.
///
/// # Errors
/// [`ImportError`] naming the field at fault: an unsupported version, no base URL, a broken
/// `$ref`, an override naming a missing operation, or an operation the manifest rules reject.
pub fn import(document: &Value, overlay: &Overlay) -> Result<Manifest, ImportError> {
    let version = document
        .get("openapi")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !(version.starts_with("3.0") || version.starts_with("3.1")) {
        return Err(ImportError::new(
            "openapi",
            format!("version `{version}` is not supported; use OpenAPI 3.0 or 3.1"),
        ));
    }
    let site = match &overlay.name {
        Some(name) => name.clone(),
        None => slug(
            document
                .pointer("/info/title")
                .and_then(Value::as_str)
                .unwrap_or("site"),
        ),
    };
    let base_url = match &overlay.base_url {
        Some(url) => url.clone(),
        None => first_server(document)?,
    };
    let paths = document
        .get("paths")
        .and_then(Value::as_object)
        .ok_or_else(|| ImportError::new("paths", "must be an object of paths"))?;
    let mut importer = Importer {
        document,
        overlay,
        names: BTreeSet::new(),
        used_overrides: BTreeSet::new(),
    };
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
                importer.operation(&field, path, method, operation, &shared)?
            {
                operations.push(raw);
                row_fields.push(fields);
            }
        }
    }
    if let Some(unused) = overlay
        .operations
        .keys()
        .find(|key| !importer.used_overrides.contains(*key))
    {
        return Err(ImportError::new(
            format!("operations.{unused}"),
            "names no operation of the document",
        ));
    }
    settle_batches(&mut operations);
    settle_id_fields(&mut operations, &row_fields);
    let description = document
        .pointer("/info/description")
        .or_else(|| document.pointer("/info/title"))
        .and_then(Value::as_str)
        .map(|text| shorten(text, MAX_DESCRIPTION_CHARS))
        .unwrap_or_default();
    Ok(Manifest::from_raw(RawManifest {
        site,
        description,
        base_url,
        auth: overlay.auth.clone(),
        operations,
        tag_relationships: TagRelationships::default(),
    })?)
}

struct Importer<'a> {
    document: &'a Value,
    overlay: &'a Overlay,
    names: BTreeSet<String>,
    used_overrides: BTreeSet<String>,
}

impl Importer<'_> {
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
        let openapi_tags: Vec<&str> = operation
            .get("tags")
            .and_then(Value::as_array)
            .map(|tags| tags.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let name = self.unique_name(&tool_name(operation_id, &method_text, path));
        let excluded = self.overlay.exclude.iter().any(|excluded| {
            Some(excluded.as_str()) == operation_id
                || excluded == &name
                || excluded == &format!("{method_text} {path}")
        }) || operation.get("x-tessera-exclude").and_then(Value::as_bool)
            == Some(true);
        let not_included = !self.overlay.include_tags.is_empty()
            && !openapi_tags
                .iter()
                .any(|tag| self.overlay.include_tags.iter().any(|wanted| wanted == tag));
        let override_key = [operation_id.unwrap_or_default(), name.as_str()]
            .into_iter()
            .find(|key| self.overlay.operations.contains_key(*key))
            .map(str::to_owned);
        if let Some(key) = &override_key {
            self.used_overrides.insert(key.clone());
        }
        if excluded || not_included {
            return Ok(None);
        }
        let Some((parameters, binding_extras, flat)) =
            self.parameters(field, path, method, &operation, shared_parameters)?
        else {
            return Ok(None);
        };
        self.names.insert(name.clone());
        let extension = extension_override(field, &operation)?;
        let overlay = override_key
            .and_then(|key| self.overlay.operations.get(&key))
            .cloned()
            .unwrap_or_default();
        let (batch_argument, inferred_tags) = infer_tags(method, path, &parameters);
        let tags = overlay.tags.or(extension.tags).unwrap_or(inferred_tags);
        let batch = tags.iter().any(|tag| tag == "batch");
        let entity = overlay
            .entity
            .or(extension.entity)
            .or_else(|| openapi_tags.first().map(|tag| slug(tag)))
            .unwrap_or_else(|| entity_of(path));
        let mode = overlay.mode.or(extension.mode).unwrap_or(if flat {
            ToolMode::Both
        } else {
            ToolMode::Llm
        });
        let description = operation
            .get("summary")
            .or_else(|| operation.get("description"))
            .and_then(Value::as_str)
            .map_or_else(
                || format!("{method_text} {path}"),
                |text| shorten(text, MAX_DESCRIPTION_CHARS),
            );
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

    /// The operation's parameters as one JSON Schema object, where each goes, and whether it can
    /// be a form; `None` when the operation cannot be called from JSON (a non-JSON body).
    fn parameters(
        &self,
        field: &str,
        path: &str,
        method: HttpMethod,
        operation: &Value,
        shared_parameters: &Value,
    ) -> Result<Option<(Value, BindingExtras, bool)>, ImportError> {
        let mut declared: Vec<(String, Value)> = Vec::new();
        for (index, parameter) in shared_parameters
            .as_array()
            .into_iter()
            .flatten()
            .map(|parameter| ("parameters", parameter))
            .chain(
                operation
                    .get("parameters")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|parameter| ("operation", parameter)),
            )
            .enumerate()
        {
            let parameter_field = format!("{field}.parameters[{index}]");
            let parameter = self.resolve_ref(&parameter_field, parameter.1)?;
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
        let mut properties = Map::new();
        let mut required = Vec::new();
        let mut extras = BindingExtras::default();
        for (_, parameter) in &declared {
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
            properties.insert(name.to_owned(), schema);
            if location == "path"
                || parameter.get("required").and_then(Value::as_bool) == Some(true)
            {
                required.push(name.to_owned());
            }
            if location == "query" && !method.uses_query() {
                extras.query.push(name.to_owned());
            }
        }
        for placeholder in placeholders(path) {
            if !properties.contains_key(&placeholder) {
                properties.insert(placeholder.clone(), json!({"type": "string"}));
            }
            if !required.contains(&placeholder) {
                required.push(placeholder);
            }
        }
        if let Some(body) = operation.get("requestBody") {
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
                // Only JSON bodies can be sent; a form or file upload is left out.
                return Ok(None);
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
                        .all(|key| !properties.contains_key(key))
                });
            match flat_properties {
                Some(body_properties) => {
                    for (key, value) in body_properties {
                        properties.insert(key.clone(), value.clone());
                    }
                    for key in schema
                        .get("required")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                    {
                        required.push(key.to_owned());
                    }
                }
                None => {
                    let name = if properties.contains_key("body") {
                        "request_body"
                    } else {
                        "body"
                    };
                    properties.insert(name.to_owned(), schema);
                    if body_required {
                        required.push(name.to_owned());
                    }
                    extras.body = Some(name.to_owned());
                }
            }
        }
        // Parameters are inlined last, so the depth bound applies to the whole object.
        let mut parameters = Value::Null;
        for depth in [MAX_SCHEMA_DEPTH, 4, 3, 2, 1] {
            let mut inlined = Map::new();
            for (key, schema) in &properties {
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
        let flat = extras.body.is_none() && FormSchema::from_json_schema(&parameters).is_ok();
        Ok(Some((parameters, extras, flat)))
    }

    /// Follows a local `$ref` (`#/components/...`) once.
    fn resolve_ref(&self, field: &str, value: &Value) -> Result<Value, ImportError> {
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
    fn inline(
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

#[derive(Default)]
struct BindingExtras {
    query: Vec<String>,
    body: Option<String>,
}

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

/// The tags the method and the parameters imply, and the ids argument when it is a batch.
fn infer_tags(method: HttpMethod, path: &str, parameters: &Value) -> (Option<String>, Vec<String>) {
    let properties = parameters.get("properties").and_then(Value::as_object);
    let has_query = properties.is_some_and(|properties| {
        properties
            .keys()
            .any(|key| !placeholders(path).contains(key))
    });
    let mut tags: Vec<&str> = match method {
        HttpMethod::Get => {
            let mut tags = vec!["readonly", "idempotent"];
            tags.push(if path.ends_with('}') { "read" } else { "list" });
            if has_query {
                tags.push("filterable");
            }
            tags
        }
        HttpMethod::Post => vec!["mutating", "create"],
        HttpMethod::Put => vec!["mutating", "update", "idempotent"],
        HttpMethod::Patch => vec!["mutating", "update", "patch"],
        HttpMethod::Delete => vec!["mutating", "delete", "confirmation-required", "idempotent"],
    };
    let ids = (method != HttpMethod::Get)
        .then(|| {
            properties.and_then(|properties| {
                properties
                    .iter()
                    .find(|(key, schema)| {
                        (key.as_str() == "ids" || key.ends_with("_ids") || key.ends_with("Ids"))
                            && schema.get("type").and_then(Value::as_str) == Some("array")
                            && schema
                                .pointer("/items/type")
                                .and_then(Value::as_str)
                                .is_some_and(|kind| matches!(kind, "string" | "integer"))
                    })
                    .map(|(key, _)| key.clone())
            })
        })
        .flatten();
    if ids.is_some() {
        tags.push("batch");
    }
    (ids, tags.into_iter().map(str::to_owned).collect())
}

/// An inferred batch needs a readonly filterable operation of its entity to preview it; without
/// one it is imported as an ordinary call rather than failing the whole document.
fn settle_batches(operations: &mut [RawOperation]) {
    let previewable: BTreeSet<String> = operations
        .iter()
        .filter(|operation| {
            operation.tags.iter().any(|tag| tag == "readonly")
                && operation.tags.iter().any(|tag| tag == "filterable")
        })
        .map(|operation| operation.entity.clone())
        .collect();
    for operation in operations.iter_mut() {
        let batch = operation.tags.iter().any(|tag| tag == "batch");
        if batch
            && operation.tags.iter().any(|tag| tag == "mutating")
            && !previewable.contains(&operation.entity)
        {
            operation.tags.retain(|tag| tag != "batch");
            operation.max_batch_size = None;
            operation.batch_argument = None;
        }
    }
}

/// A read's rows are matched to the items a change touches by an id field. The change names its
/// item by a path argument (`issue_number`, `noteId`); the read's rows carry it as that name or
/// with the entity's prefix dropped (`number`, `id`). Where neither is a field of the rows (or
/// the document does not describe them), `id` stays the default.
fn settle_id_fields(operations: &mut [RawOperation], row_fields: &[Vec<String>]) {
    let arguments: Vec<(String, String)> = operations
        .iter()
        .filter_map(|operation| {
            operation
                .id_argument
                .clone()
                .map(|argument| (operation.entity.clone(), argument))
        })
        .collect();
    for (operation, fields) in operations.iter_mut().zip(row_fields) {
        if operation.id_field.is_some() || !operation.tags.iter().any(|tag| tag == "readonly") {
            continue;
        }
        let found = arguments
            .iter()
            .filter(|(entity, _)| entity == &operation.entity)
            .flat_map(|(_, argument)| id_spellings(argument))
            .find(|candidate| fields.contains(candidate));
        if found.as_deref().is_some_and(|field| field != "id") {
            operation.id_field = found;
        }
    }
}

/// `issue_number` → `issue_number`, `number`; `noteId` → `noteId`, `id`.
fn id_spellings(argument: &str) -> Vec<String> {
    let mut spellings = vec![argument.to_owned()];
    if let Some((_, rest)) = argument.split_once('_') {
        spellings.push(rest.to_owned());
    }
    if let Some(position) = argument.rfind(|character: char| character.is_ascii_uppercase()) {
        if position > 0 {
            spellings.push(argument[position..].to_ascii_lowercase());
        }
    }
    spellings
}

fn first_server(document: &Value) -> Result<String, ImportError> {
    let server = document.pointer("/servers/0").ok_or_else(|| {
        ImportError::new(
            "servers",
            "the document names no server; give the site a base_url",
        )
    })?;
    let mut url = server
        .get("url")
        .and_then(Value::as_str)
        .ok_or_else(|| ImportError::new("servers[0].url", "must be a string"))?
        .to_owned();
    for (name, variable) in server
        .get("variables")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if let Some(default) = variable.get("default").and_then(Value::as_str) {
            url = url.replace(&format!("{{{name}}}"), default);
        }
    }
    Ok(url)
}

/// A tool name from `operationId`, or `method_path` when there is none: `[A-Za-z0-9_-]`, at most
/// 64 characters.
#[must_use]
pub fn tool_name(operation_id: Option<&str>, method: &str, path: &str) -> String {
    let source = operation_id.map_or_else(
        || format!("{}_{path}", method.to_ascii_lowercase()),
        str::to_owned,
    );
    let mut name = String::with_capacity(source.len());
    for character in source.chars() {
        let safe = if character.is_ascii_alphanumeric() || character == '-' {
            character
        } else {
            '_'
        };
        if !(safe == '_' && (name.is_empty() || name.ends_with('_'))) {
            name.push(safe);
        }
    }
    let name = name.trim_end_matches('_');
    let name: String = name.chars().take(64).collect();
    if is_tool_name(&name) {
        name
    } else {
        format!("{}_operation", method.to_ascii_lowercase())
    }
}

fn placeholders(path: &str) -> Vec<String> {
    HttpBinding {
        method: HttpMethod::Get,
        path: path.to_owned(),
        base_url: None,
        query: Vec::new(),
        body: None,
    }
    .placeholders()
}

/// The last literal segment of a path: `/repos/{owner}/{repo}/issues/{number}` acts on `issues`.
fn entity_of(path: &str) -> String {
    path.split('/')
        .rfind(|segment| !segment.is_empty() && !segment.starts_with('{'))
        .map_or_else(|| "items".to_owned(), slug)
}

/// Lower-case letters, digits and `-`: a site or entity name from a title.
#[must_use]
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for character in text.chars() {
        if character.is_ascii_alphanumeric() {
            out.push(character.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let out: String = out.trim_end_matches('-').chars().take(32).collect();
    if out.is_empty() {
        "site".to_owned()
    } else {
        out
    }
}

fn shorten(text: &str, limit: usize) -> String {
    let first = text
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("")
        .trim();
    if first.chars().count() <= limit {
        first.to_owned()
    } else {
        let cut: String = first.chars().take(limit - 1).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::manifest::Tag;

    fn petstore() -> Value {
        json!({
            "openapi": "3.0.3",
            "info": {"title": "Pet Store", "version": "1"},
            "servers": [{"url": "https://pets.example.com/{version}", "variables": {"version": {"default": "v2"}}}],
            "paths": {
                "/pets": {
                    "get": {"operationId": "listPets", "tags": ["pets"], "summary": "List pets",
                        "parameters": [{"name": "status", "in": "query", "schema": {"type": "string"}}]},
                    "post": {"operationId": "createPet", "tags": ["pets"],
                        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewPet"}}}}}
                },
                "/pets/{petId}": {
                    "parameters": [{"$ref": "#/components/parameters/PetId"}],
                    "delete": {"operationId": "deletePet", "tags": ["pets"]},
                    "patch": {"tags": ["pets"],
                        "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}}}
                },
                "/pets/archive": {
                    "post": {"operationId": "archive pets/now!", "tags": ["pets"],
                        "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {"pet_ids": {"type": "array", "items": {"type": "integer"}}}}}}}}
                }
            },
            "components": {
                "parameters": {"PetId": {"name": "petId", "in": "path", "required": true, "schema": {"type": "integer"}}},
                "schemas": {
                    "NewPet": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "tag": {"type": "string", "nullable": true}}},
                    "Node": {"type": "object", "properties": {"label": {"type": "string"}, "child": {"$ref": "#/components/schemas/Node"}}}
                }
            }
        })
    }

    #[test]
    fn operations_are_imported_with_refs_resolved_and_tags_inferred() -> Result<(), ImportError> {
        let manifest = import(&petstore(), &Overlay::default())?;
        assert_eq!(manifest.site, "pet-store");
        assert_eq!(manifest.base_url, "https://pets.example.com/v2");
        let list = manifest
            .operation("listPets")
            .ok_or_else(|| ImportError::new("listPets", "missing"))?;
        assert!(list.has(Tag::Readonly) && list.has(Tag::Filterable) && list.has(Tag::List));
        let create = manifest
            .operation("createPet")
            .ok_or_else(|| ImportError::new("createPet", "missing"))?;
        assert!(create.is_mutating() && create.offered_manually());
        assert_eq!(create.parameters["required"], json!(["name"]));
        assert_eq!(
            create.parameters["properties"]["tag"]["type"],
            json!(["string", "null"])
        );
        let delete = manifest
            .operation("deletePet")
            .ok_or_else(|| ImportError::new("deletePet", "missing"))?;
        assert!(delete.has(Tag::Delete) && delete.has(Tag::ConfirmationRequired));
        assert_eq!(
            delete.parameters["properties"]["petId"]["type"],
            json!("integer")
        );
        // No operationId: synthesised from the method and path; the recursive body is cut, and
        // not being a flat form it is offered to the model only.
        let patch = manifest
            .operation("patch_pets_petId")
            .ok_or_else(|| ImportError::new("patch", "missing"))?;
        assert!(!patch.offered_manually() && patch.offered_to_model());
        assert!(patch.parameters.to_string().len() < MAX_PARAMETER_BYTES);
        let archive = manifest
            .operation("archive_pets_now")
            .ok_or_else(|| ImportError::new("archive", "missing"))?;
        assert!(archive.has(Tag::Batch), "{:?}", archive.tags);
        assert_eq!(archive.batch_argument.as_deref(), Some("pet_ids"));
        Ok(())
    }

    #[test]
    fn a_body_with_an_address_and_line_items_is_a_manual_tool_too() -> Result<(), ImportError> {
        // Forms with structure: a nested object and a list of records are a form like any other,
        // so the person can call the operation by hand; a list inside a record is not.
        let line = json!({"type": "object", "required": ["sku"], "properties": {
            "sku": {"type": "string"}, "quantity": {"type": "integer", "minimum": 1}}});
        let document = json!({
            "openapi": "3.1.0",
            "info": {"title": "Shop", "version": "1"},
            "servers": [{"url": "https://shop.example.com"}],
            "paths": {
                "/orders": {"post": {"operationId": "createOrder", "requestBody": {"content": {"application/json": {"schema": {
                    "type": "object", "required": ["address"], "properties": {
                        "address": {"type": "object", "required": ["city"], "properties": {
                            "street": {"type": "string"}, "city": {"type": "string"}}},
                        "lines": {"type": "array", "items": line}}}}}}}},
                "/bundles": {"post": {"operationId": "createBundle", "requestBody": {"content": {"application/json": {"schema": {
                    "type": "object", "properties": {
                        "parts": {"type": "array", "items": {"type": "object", "properties": {
                            "lines": {"type": "array", "items": line}}}}}}}}}}}
            }
        });
        let manifest = import(&document, &Overlay::default())?;
        let order = manifest
            .operation("createOrder")
            .ok_or_else(|| ImportError::new("createOrder", "missing"))?;
        assert!(order.offered_manually() && order.offered_to_model());
        let bundle = manifest
            .operation("createBundle")
            .ok_or_else(|| ImportError::new("createBundle", "missing"))?;
        assert!(!bundle.offered_manually() && bundle.offered_to_model());
        Ok(())
    }

    #[test]
    fn the_overlay_selects_and_overrides_operations() -> Result<(), ImportError> {
        let overlay = Overlay {
            name: Some("shop".into()),
            base_url: Some("http://127.0.0.1:9/api".into()),
            exclude: vec!["createPet".into()],
            operations: BTreeMap::from([(
                "deletePet".to_owned(),
                OperationOverride {
                    tags: Some(vec!["mutating".into(), "delete".into()]),
                    mode: Some(ToolMode::Manual),
                    ..OperationOverride::default()
                },
            )]),
            ..Overlay::default()
        };
        let manifest = import(&petstore(), &overlay)?;
        assert_eq!(manifest.base_url, "http://127.0.0.1:9/api");
        assert!(manifest.operation("createPet").is_none());
        let delete = manifest
            .operation("deletePet")
            .ok_or_else(|| ImportError::new("deletePet", "missing"))?;
        assert!(!delete.has(Tag::ConfirmationRequired));
        assert!(!delete.offered_to_model());
        let unknown = Overlay {
            operations: BTreeMap::from([("nope".to_owned(), OperationOverride::default())]),
            ..Overlay::default()
        };
        assert_eq!(
            import(&petstore(), &unknown).map(|_| ()),
            Err(ImportError::new(
                "operations.nope",
                "names no operation of the document"
            ))
        );
        Ok(())
    }

    #[test]
    fn extensions_override_inferred_tags_and_broken_refs_name_the_field() {
        let mut document = petstore();
        document["paths"]["/pets"]["get"]["x-tessera-tags"] =
            json!(["readonly", "search", "filterable"]);
        let manifest = import(&document, &Overlay::default());
        assert!(manifest.is_ok_and(|manifest| manifest
            .operation("listPets")
            .is_some_and(|list| list.has(Tag::Search))));
        document["paths"]["/pets"]["post"]["requestBody"]["content"]["application/json"]
            ["schema"] = json!({"$ref": "#/components/schemas/Missing"});
        let error = import(&document, &Overlay::default()).err();
        assert_eq!(
            error.map(|error| error.field),
            Some("paths./pets.post.requestBody.content".to_owned())
        );
    }

    #[test]
    fn tool_names_are_made_safe() {
        assert_eq!(
            tool_name(Some("issues/list-for-repo"), "GET", "/x"),
            "issues_list-for-repo"
        );
        assert_eq!(
            tool_name(None, "GET", "/repos/{owner}/{repo}"),
            "get_repos_owner_repo"
        );
        assert_eq!(tool_name(Some(&"a".repeat(80)), "GET", "/").len(), 64);
    }
}
