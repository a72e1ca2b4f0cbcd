//! A site's manifest: its operations, their tags and HTTP bindings, checked whole at load.
//!
//! The manifest is the only thing the orchestrator knows about a site (DESIGN.md §8). Everything
//! code enforces later — previews, confirmations, chunking, scopes — is derived from the tags and
//! relationships here, so a manifest that contradicts itself must not load at all: an unknown tag,
//! a `requires_preview` naming a missing or mutating operation, a batch operation without
//! `max_batch_size`, a mutating batch with no readonly filterable operation to preview it, a path
//! placeholder that is not a parameter, a manual tool whose parameters cannot be a form. Every
//! rejection names the operation. Parameter schemas are compiled once here, so checking a model's
//! arguments at run time is one call.
//!
//! This module does no I/O; the executor ([`super::executor`]) turns operations into requests.

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    fmt,
    str::FromStr,
    sync::Arc,
};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{forms::FormSchema, llm::ToolDefinition};

/// Why a manifest was rejected; every variant names the operation at fault when there is one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    /// The text is not a manifest at all.
    #[error("the manifest is not valid JSON of the expected shape: {0}")]
    Parse(String),
    /// A tag outside the vocabulary of DESIGN.md §8.
    #[error("operation `{operation}`: unknown tag `{tag}`")]
    UnknownTag {
        /// The operation.
        operation: String,
        /// The tag.
        tag: String,
    },
    /// `requires_preview` or `preview_for` names an operation the manifest does not have.
    #[error("operation `{operation}`: preview operation `{preview}` does not exist")]
    PreviewMissing {
        /// The operation.
        operation: String,
        /// The named preview.
        preview: String,
    },
    /// `requires_preview` or `preview_for` names an operation that changes state.
    #[error("operation `{operation}`: preview operation `{preview}` is not readonly")]
    PreviewMutating {
        /// The operation.
        operation: String,
        /// The named preview.
        preview: String,
    },
    /// A `batch` operation without a positive `max_batch_size`.
    #[error("operation `{operation}`: a batch operation needs a positive max_batch_size")]
    BatchWithoutMaxSize {
        /// The operation.
        operation: String,
    },
    /// Anything else that contradicts itself.
    #[error("operation `{operation}`: {reason}")]
    Invalid {
        /// The operation (or `manifest` for whole-manifest problems).
        operation: String,
        /// What is wrong.
        reason: String,
    },
}

impl ManifestError {
    fn invalid(operation: &str, reason: impl Into<String>) -> Self {
        Self::Invalid {
            operation: operation.to_owned(),
            reason: reason.into(),
        }
    }
}

/// The tag vocabulary (DESIGN.md §8 and the WAP tag reference).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tag {
    /// Modifies server state.
    Mutating,
    /// No side effects.
    Readonly,
    /// Safe to retry.
    Idempotent,
    /// Creates resources.
    Create,
    /// Reads one resource.
    Read,
    /// Modifies resources.
    Update,
    /// Removes resources.
    Delete,
    /// Returns a collection.
    List,
    /// Finds resources by criteria.
    Search,
    /// Partial update.
    Patch,
    /// Operates on many items per call.
    Batch,
    /// Accepts filter parameters (can serve as a preview).
    Filterable,
    /// Supports sorting.
    Sortable,
    /// Returns pages.
    Paginated,
    /// Subject to rate limits.
    RateLimited,
    /// Not rate limited.
    NotRateLimited,
    /// Results may be cached.
    Cached,
    /// Long-running.
    Async,
    /// Has an undo.
    Compensating,
    /// Always needs a person's approval, whatever grants exist.
    ConfirmationRequired,
    /// A preview should be shown first.
    PreviewRecommended,
}

impl Tag {
    /// Every tag, in vocabulary order.
    pub const ALL: [Self; 21] = [
        Self::Mutating,
        Self::Readonly,
        Self::Idempotent,
        Self::Create,
        Self::Read,
        Self::Update,
        Self::Delete,
        Self::List,
        Self::Search,
        Self::Patch,
        Self::Batch,
        Self::Filterable,
        Self::Sortable,
        Self::Paginated,
        Self::RateLimited,
        Self::NotRateLimited,
        Self::Cached,
        Self::Async,
        Self::Compensating,
        Self::ConfirmationRequired,
        Self::PreviewRecommended,
    ];

    /// The manifest spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mutating => "mutating",
            Self::Readonly => "readonly",
            Self::Idempotent => "idempotent",
            Self::Create => "create",
            Self::Read => "read",
            Self::Update => "update",
            Self::Delete => "delete",
            Self::List => "list",
            Self::Search => "search",
            Self::Patch => "patch",
            Self::Batch => "batch",
            Self::Filterable => "filterable",
            Self::Sortable => "sortable",
            Self::Paginated => "paginated",
            Self::RateLimited => "rate-limited",
            Self::NotRateLimited => "not-rate-limited",
            Self::Cached => "cached",
            Self::Async => "async",
            Self::Compensating => "compensating",
            Self::ConfirmationRequired => "confirmation-required",
            Self::PreviewRecommended => "preview-recommended",
        }
    }
}

impl FromStr for Tag {
    type Err = ();

    fn from_str(text: &str) -> Result<Self, ()> {
        Self::ALL
            .into_iter()
            .find(|tag| tag.as_str() == text)
            .ok_or(())
    }
}

impl fmt::Display for Tag {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// Who may call an operation: the model, a person through the manual-tool panel, or both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolMode {
    /// Offered to the model only.
    #[default]
    Llm,
    /// Offered as a form only.
    Manual,
    /// Both.
    Both,
}

/// An HTTP method an operation may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum HttpMethod {
    /// GET: arguments go in the query string.
    Get,
    /// DELETE: arguments go in the query string.
    Delete,
    /// POST: arguments go in a JSON body.
    Post,
    /// PUT: arguments go in a JSON body.
    Put,
    /// PATCH: arguments go in a JSON body.
    Patch,
}

impl HttpMethod {
    /// Whether the non-path arguments travel in the query string rather than a JSON body.
    #[must_use]
    pub fn uses_query(self) -> bool {
        matches!(self, Self::Get | Self::Delete)
    }

    /// The method as `http` knows it.
    #[must_use]
    pub fn as_http(self) -> http::Method {
        match self {
            Self::Get => http::Method::GET,
            Self::Delete => http::Method::DELETE,
            Self::Post => http::Method::POST,
            Self::Put => http::Method::PUT,
            Self::Patch => http::Method::PATCH,
        }
    }
}

/// Where an operation is reached.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpBinding {
    /// The method.
    pub method: HttpMethod,
    /// The path template under the base URL, e.g. `/items/{id}`.
    pub path: String,
    /// A base URL for this operation only; the manifest's otherwise.
    #[serde(default)]
    pub base_url: Option<String>,
}

impl HttpBinding {
    /// The `{placeholder}` names in the path template, in order.
    #[must_use]
    pub fn placeholders(&self) -> Vec<String> {
        let mut names = Vec::new();
        let mut rest = self.path.as_str();
        while let Some(start) = rest.find('{') {
            let Some(end) = rest[start..].find('}') else {
                break;
            };
            names.push(rest[start + 1..start + end].to_owned());
            rest = &rest[start + end + 1..];
        }
        names
    }
}

/// An auth header whose value comes from an environment variable at start-up.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthHeader {
    /// The header, e.g. `Authorization`.
    pub header: String,
    /// The environment variable holding the secret.
    pub env: String,
    /// Text put before the secret, e.g. `Bearer `.
    #[serde(default)]
    pub prefix: String,
}

/// One operation of a site, checked.
#[derive(Clone)]
pub struct Operation {
    /// The tool name, `[a-zA-Z0-9_-]{1,64}`.
    pub name: String,
    /// What it does, for the model and the tools panel.
    pub description: String,
    /// The entity it acts on, e.g. `items`.
    pub entity: String,
    /// Its tags.
    pub tags: BTreeSet<Tag>,
    /// Who may call it.
    pub mode: ToolMode,
    /// The tools panel's group.
    pub category: String,
    /// Where it is reached.
    pub http: HttpBinding,
    /// Its arguments as a JSON Schema object.
    pub parameters: Value,
    /// The most items one call may carry (batch operations).
    pub max_batch_size: Option<usize>,
    /// The argument holding the item ids of a batch (`ids` by default).
    pub batch_argument: Option<String>,
    /// The declared preview operation.
    pub requires_preview: Option<String>,
    /// An auth header for this operation only.
    pub auth: Option<AuthHeader>,
    validator: Arc<jsonschema::Validator>,
}

impl fmt::Debug for Operation {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Operation")
            .field("name", &self.name)
            .field("entity", &self.entity)
            .field("tags", &self.tags)
            .finish_non_exhaustive()
    }
}

impl Operation {
    /// Whether it carries `tag`.
    #[must_use]
    pub fn has(&self, tag: Tag) -> bool {
        self.tags.contains(&tag)
    }

    /// Whether it changes state.
    #[must_use]
    pub fn is_mutating(&self) -> bool {
        self.has(Tag::Mutating)
    }

    /// Whether the model may call it.
    #[must_use]
    pub fn offered_to_model(&self) -> bool {
        matches!(self.mode, ToolMode::Llm | ToolMode::Both)
    }

    /// Whether a person may call it from the tools panel or `/tool`.
    #[must_use]
    pub fn offered_manually(&self) -> bool {
        matches!(self.mode, ToolMode::Manual | ToolMode::Both)
    }

    /// Checks `arguments` against the parameter schema; returns one message per problem.
    ///
    /// # Errors
    /// The messages, each naming the argument's JSON pointer.
    pub fn validate_arguments(&self, arguments: &Value) -> Result<(), Vec<String>> {
        let errors: Vec<String> = self
            .validator
            .iter_errors(arguments)
            .map(|error| {
                let path = error.instance_path().to_string();
                if path.is_empty() {
                    error.to_string()
                } else {
                    format!("{path}: {error}")
                }
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// The ids of the items a call touches: the batch argument's values, else an `ids` array,
    /// else the `id` argument.
    #[must_use]
    pub fn item_ids(&self, arguments: &Value) -> Vec<String> {
        if self.has(Tag::Batch) {
            let key = self
                .batch_argument
                .as_deref()
                .unwrap_or(DEFAULT_BATCH_ARGUMENT);
            return arguments
                .get(key)
                .and_then(Value::as_array)
                .map(|ids| ids.iter().map(id_text).collect())
                .unwrap_or_default();
        }
        if let Some(ids) = arguments
            .get(DEFAULT_BATCH_ARGUMENT)
            .and_then(Value::as_array)
        {
            return ids.iter().map(id_text).collect();
        }
        arguments.get("id").map(id_text).into_iter().collect()
    }

    /// The tool the model sees: the description plus what code will demand, and the schema.
    #[must_use]
    pub fn tool_definition(&self, manifest: &Manifest) -> ToolDefinition {
        let rules = super::policy::describe(manifest, self);
        let tags: Vec<&str> = self.tags.iter().map(|tag| tag.as_str()).collect();
        let description = if rules.is_empty() {
            format!("{} [{}]", self.description, tags.join(", "))
        } else {
            format!(
                "{} [{}] {}",
                self.description,
                tags.join(", "),
                rules.join(" ")
            )
        };
        ToolDefinition {
            name: self.name.clone(),
            description,
            parameters: self.parameters.clone(),
        }
    }
}

/// The default name of a batch operation's ids argument.
pub const DEFAULT_BATCH_ARGUMENT: &str = "ids";

/// An id as text, so `5` and `"5"` compare equal.
#[must_use]
pub fn id_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Declared relationships between operations.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TagRelationships {
    /// Mutating operation → the readonly operation that previews it.
    #[serde(default)]
    pub preview_for: BTreeMap<String, String>,
    /// Entity → the operations acting on it.
    #[serde(default)]
    pub entity_groups: BTreeMap<String, Vec<String>>,
}

/// A whole site, checked.
#[derive(Clone, Debug)]
pub struct Manifest {
    /// The site's name.
    pub site: String,
    /// What the site is, for the system prompt.
    pub description: String,
    /// Where operations are reached: absolute (`https://…`) or relative to the app (`/demo-api`).
    pub base_url: String,
    /// An auth header for every operation.
    pub auth: Option<AuthHeader>,
    /// Declared relationships.
    pub tag_relationships: TagRelationships,
    operations: Vec<Operation>,
    index: HashMap<String, usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    site: String,
    #[serde(default)]
    description: String,
    base_url: String,
    #[serde(default)]
    auth: Option<AuthHeader>,
    operations: Vec<RawOperation>,
    #[serde(default)]
    tag_relationships: TagRelationships,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOperation {
    name: String,
    description: String,
    entity: String,
    tags: Vec<String>,
    #[serde(default)]
    mode: ToolMode,
    #[serde(default)]
    category: Option<String>,
    http: HttpBinding,
    parameters: Value,
    #[serde(default)]
    max_batch_size: Option<usize>,
    #[serde(default)]
    batch_argument: Option<String>,
    #[serde(default)]
    requires_preview: Option<String>,
    #[serde(default)]
    auth: Option<AuthHeader>,
}

impl Manifest {
    /// Loads and checks a manifest.
    ///
    /// # Errors
    /// [`ManifestError`] naming the first operation that contradicts itself or the manifest.
    pub fn from_json(text: &str) -> Result<Self, ManifestError> {
        let raw: RawManifest =
            serde_json::from_str(text).map_err(|error| ManifestError::Parse(error.to_string()))?;
        let mut operations = Vec::with_capacity(raw.operations.len());
        let mut index = HashMap::new();
        for raw_operation in raw.operations {
            let operation = check_operation(raw_operation)?;
            if index
                .insert(operation.name.clone(), operations.len())
                .is_some()
            {
                return Err(ManifestError::invalid(&operation.name, "is defined twice"));
            }
            operations.push(operation);
        }
        let manifest = Self {
            site: raw.site,
            description: raw.description,
            base_url: raw.base_url,
            auth: raw.auth,
            tag_relationships: raw.tag_relationships,
            operations,
            index,
        };
        manifest.check_relationships()?;
        Ok(manifest)
    }

    /// The operations, in manifest order.
    #[must_use]
    pub fn operations(&self) -> &[Operation] {
        &self.operations
    }

    /// The operation called `name`.
    #[must_use]
    pub fn operation(&self, name: &str) -> Option<&Operation> {
        self.index
            .get(name)
            .and_then(|&position| self.operations.get(position))
    }

    /// The readonly operation that previews `operation`: its `requires_preview`, else its
    /// `tag_relationships.preview_for` entry, else the first readonly filterable operation of the
    /// same entity (search/list ones first).
    #[must_use]
    pub fn preview_operation_for(&self, operation: &Operation) -> Option<&Operation> {
        if let Some(declared) = operation.requires_preview.as_deref().or_else(|| {
            self.tag_relationships
                .preview_for
                .get(&operation.name)
                .map(String::as_str)
        }) {
            return self.operation(declared);
        }
        let candidates = || {
            self.operations.iter().filter(|candidate| {
                candidate.entity == operation.entity
                    && candidate.has(Tag::Readonly)
                    && candidate.has(Tag::Filterable)
            })
        };
        candidates()
            .find(|candidate| candidate.has(Tag::Search) || candidate.has(Tag::List))
            .or_else(|| candidates().next())
    }

    /// Whether code demands a preview before `operation` runs: mutating and batch, a declared
    /// preview, or `preview-recommended`.
    #[must_use]
    pub fn needs_preview(&self, operation: &Operation) -> bool {
        operation.is_mutating()
            && (operation.has(Tag::Batch)
                || operation.requires_preview.is_some()
                || self
                    .tag_relationships
                    .preview_for
                    .contains_key(&operation.name)
                || operation.has(Tag::PreviewRecommended))
    }

    fn check_relationships(&self) -> Result<(), ManifestError> {
        let declared = self.operations.iter().filter_map(|operation| {
            operation
                .requires_preview
                .as_ref()
                .map(|preview| (operation.name.as_str(), preview.as_str()))
        });
        let related = self
            .tag_relationships
            .preview_for
            .iter()
            .map(|(operation, preview)| (operation.as_str(), preview.as_str()));
        for (name, preview_name) in declared.chain(related) {
            let Some(operation) = self.operation(name) else {
                return Err(ManifestError::invalid(
                    name,
                    "is named in tag_relationships.preview_for but does not exist",
                ));
            };
            let Some(preview) = self.operation(preview_name) else {
                return Err(ManifestError::PreviewMissing {
                    operation: name.to_owned(),
                    preview: preview_name.to_owned(),
                });
            };
            if preview.is_mutating() || !preview.has(Tag::Readonly) {
                return Err(ManifestError::PreviewMutating {
                    operation: name.to_owned(),
                    preview: preview_name.to_owned(),
                });
            }
            if preview.entity != operation.entity {
                return Err(ManifestError::invalid(
                    name,
                    format!(
                        "preview operation `{preview_name}` acts on `{}`, not `{}`",
                        preview.entity, operation.entity
                    ),
                ));
            }
        }
        for operation in &self.operations {
            if self.needs_preview(operation) && self.preview_operation_for(operation).is_none() {
                return Err(ManifestError::invalid(
                    &operation.name,
                    format!(
                        "needs a preview, but entity `{}` has no readonly filterable operation",
                        operation.entity
                    ),
                ));
            }
        }
        for (entity, names) in &self.tag_relationships.entity_groups {
            for name in names {
                let Some(operation) = self.operation(name) else {
                    return Err(ManifestError::invalid(
                        name,
                        format!("is listed in entity_groups.{entity} but does not exist"),
                    ));
                };
                if &operation.entity != entity {
                    return Err(ManifestError::invalid(
                        name,
                        format!(
                            "is listed in entity_groups.{entity} but acts on `{}`",
                            operation.entity
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

fn is_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
}

fn check_operation(raw: RawOperation) -> Result<Operation, ManifestError> {
    let name = raw.name;
    if !is_tool_name(&name) {
        return Err(ManifestError::invalid(
            &name,
            "the name must be 1–64 letters, digits, `_` or `-` (it becomes a tool name)",
        ));
    }
    let mut tags = BTreeSet::new();
    for tag in &raw.tags {
        let parsed = tag.parse::<Tag>().map_err(|()| ManifestError::UnknownTag {
            operation: name.clone(),
            tag: tag.clone(),
        })?;
        tags.insert(parsed);
    }
    if tags.contains(&Tag::Mutating) == tags.contains(&Tag::Readonly) {
        return Err(ManifestError::invalid(
            &name,
            "must be tagged exactly one of `readonly` and `mutating`",
        ));
    }
    if tags.contains(&Tag::RateLimited) && tags.contains(&Tag::NotRateLimited) {
        return Err(ManifestError::invalid(
            &name,
            "cannot be both `rate-limited` and `not-rate-limited`",
        ));
    }
    if raw.entity.trim().is_empty() {
        return Err(ManifestError::invalid(&name, "needs an entity"));
    }
    let properties = raw
        .parameters
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if raw.parameters.get("type").and_then(Value::as_str) != Some("object") {
        return Err(ManifestError::invalid(
            &name,
            "parameters must be a JSON Schema with \"type\": \"object\"",
        ));
    }
    let batch = tags.contains(&Tag::Batch);
    if batch && raw.max_batch_size.is_none_or(|size| size == 0) {
        return Err(ManifestError::BatchWithoutMaxSize { operation: name });
    }
    if batch {
        let key = raw
            .batch_argument
            .as_deref()
            .unwrap_or(DEFAULT_BATCH_ARGUMENT);
        let is_array = properties
            .get(key)
            .and_then(|schema| schema.get("type"))
            .and_then(Value::as_str)
            == Some("array");
        if !is_array {
            return Err(ManifestError::invalid(
                &name,
                format!("a batch operation needs an array parameter `{key}` holding the item ids"),
            ));
        }
    } else if raw.batch_argument.is_some() {
        return Err(ManifestError::invalid(
            &name,
            "batch_argument is only meaningful on a `batch` operation",
        ));
    }
    if let Some(preview) = &raw.requires_preview {
        if preview == &name {
            return Err(ManifestError::PreviewMutating {
                operation: name.clone(),
                preview: preview.clone(),
            });
        }
    }
    let required: BTreeSet<&str> = raw
        .parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for placeholder in raw.http.placeholders() {
        if !properties.contains_key(&placeholder) || !required.contains(placeholder.as_str()) {
            return Err(ManifestError::invalid(
                &name,
                format!("path placeholder `{{{placeholder}}}` must be a required parameter"),
            ));
        }
    }
    if !raw.http.path.starts_with('/') {
        return Err(ManifestError::invalid(
            &name,
            "the HTTP path must start with `/`",
        ));
    }
    if matches!(raw.mode, ToolMode::Manual | ToolMode::Both) {
        FormSchema::from_json_schema(&raw.parameters).map_err(|error| {
            ManifestError::invalid(
                &name,
                format!("is a manual tool, but its parameters cannot be a form: {error}"),
            )
        })?;
    }
    let validator = jsonschema::validator_for(&raw.parameters).map_err(|error| {
        ManifestError::invalid(
            &name,
            format!("parameters are not a valid JSON Schema: {error}"),
        )
    })?;
    Ok(Operation {
        description: raw.description,
        entity: raw.entity,
        tags,
        mode: raw.mode,
        category: raw.category.unwrap_or_else(|| "Tools".to_owned()),
        http: raw.http,
        parameters: raw.parameters,
        max_batch_size: raw.max_batch_size,
        batch_argument: raw.batch_argument,
        requires_preview: raw.requires_preview,
        auth: raw.auth,
        validator: Arc::new(validator),
        name,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn search() -> Value {
        json!({
            "name": "searchItems", "description": "search", "entity": "items",
            "tags": ["readonly", "filterable", "search"],
            "http": {"method": "GET", "path": "/items"},
            "parameters": {"type": "object", "properties": {"status": {"type": "string"}}}
        })
    }

    fn bulk_delete() -> Value {
        json!({
            "name": "bulkDelete", "description": "delete many", "entity": "items",
            "tags": ["mutating", "batch", "delete", "rate-limited"], "max_batch_size": 100,
            "http": {"method": "POST", "path": "/items/bulk-delete"},
            "parameters": {"type": "object", "properties": {"ids": {"type": "array", "items": {"type": "string"}}}, "required": ["ids"]}
        })
    }

    fn manifest(operations: Vec<Value>, relationships: Value) -> String {
        let mut manifest = json!({"site": "t", "base_url": "/api"});
        manifest["operations"] = Value::Array(operations);
        manifest["tag_relationships"] = relationships;
        manifest.to_string()
    }

    fn with(mut operation: Value, key: &str, value: Value) -> Value {
        operation[key] = value;
        operation
    }

    #[test]
    fn the_demo_manifest_loads() -> Result<(), ManifestError> {
        let manifest = Manifest::from_json(crate::demo::items::MANIFEST_JSON)?;
        assert_eq!(manifest.operations().len(), 7);
        let bulk = manifest
            .operation("bulkUpdateItems")
            .ok_or_else(|| ManifestError::Parse("missing".into()))?;
        assert_eq!(
            manifest
                .preview_operation_for(bulk)
                .map(|operation| operation.name.as_str()),
            Some("searchItems")
        );
        Ok(())
    }

    /// Every rejection rule, with the operation it must name.
    #[test]
    fn contradictory_manifests_are_rejected_naming_the_operation() {
        let no_relations = json!({});
        let cases: Vec<(&str, String, &str)> = vec![
            (
                "unknown tag",
                manifest(vec![with(search(), "tags", json!(["readonly", "speedy"]))], no_relations.clone()),
                "operation `searchItems`: unknown tag `speedy`",
            ),
            (
                "requires_preview names a missing operation",
                manifest(vec![search(), with(bulk_delete(), "requires_preview", json!("listAll"))], no_relations.clone()),
                "operation `bulkDelete`: preview operation `listAll` does not exist",
            ),
            (
                "requires_preview names a mutating operation",
                manifest(
                    vec![search(), bulk_delete(), with(with(bulk_delete(), "name", json!("purge")), "requires_preview", json!("bulkDelete"))],
                    no_relations.clone(),
                ),
                "operation `purge`: preview operation `bulkDelete` is not readonly",
            ),
            (
                "preview_for names a mutating operation",
                manifest(vec![search(), bulk_delete()], json!({"preview_for": {"bulkDelete": "bulkDelete"}})),
                "operation `bulkDelete`: preview operation `bulkDelete` is not readonly",
            ),
            (
                "batch without max_batch_size",
                manifest(vec![search(), with(bulk_delete(), "max_batch_size", Value::Null)], no_relations.clone()),
                "operation `bulkDelete`: a batch operation needs a positive max_batch_size",
            ),
            (
                "batch with max_batch_size zero",
                manifest(vec![search(), with(bulk_delete(), "max_batch_size", json!(0))], no_relations.clone()),
                "operation `bulkDelete`: a batch operation needs a positive max_batch_size",
            ),
            (
                "mutating batch with nothing to preview it",
                manifest(vec![bulk_delete()], no_relations.clone()),
                "operation `bulkDelete`: needs a preview, but entity `items` has no readonly filterable operation",
            ),
            (
                "neither readonly nor mutating",
                manifest(vec![with(search(), "tags", json!(["filterable"]))], no_relations.clone()),
                "operation `searchItems`: must be tagged exactly one of `readonly` and `mutating`",
            ),
            (
                "path placeholder that is not a parameter",
                manifest(vec![with(search(), "http", json!({"method": "GET", "path": "/items/{id}"}))], no_relations.clone()),
                "operation `searchItems`: path placeholder `{id}` must be a required parameter",
            ),
            (
                "duplicate operation",
                manifest(vec![search(), search()], no_relations.clone()),
                "operation `searchItems`: is defined twice",
            ),
            (
                "entity group naming a missing operation",
                manifest(vec![search()], json!({"entity_groups": {"items": ["searchItems", "ghost"]}})),
                "operation `ghost`: is listed in entity_groups.items but does not exist",
            ),
            (
                "manual tool whose parameters cannot be a form",
                manifest(
                    vec![with(with(search(), "mode", json!("manual")), "parameters", json!({"type": "object", "properties": {"filter": {"type": "object"}}}))],
                    no_relations.clone(),
                ),
                "operation `searchItems`: is a manual tool, but its parameters cannot be a form",
            ),
            (
                "batch without an ids array",
                manifest(
                    vec![search(), with(bulk_delete(), "parameters", json!({"type": "object", "properties": {"ids": {"type": "string"}}}))],
                    no_relations,
                ),
                "operation `bulkDelete`: a batch operation needs an array parameter `ids` holding the item ids",
            ),
        ];
        for (rule, text, expected) in cases {
            match Manifest::from_json(&text) {
                Ok(_) => panic!("{rule}: the manifest loaded"),
                Err(error) => assert!(
                    error.to_string().starts_with(expected),
                    "{rule}: got `{error}`, expected `{expected}`"
                ),
            }
        }
    }

    #[test]
    fn the_preview_is_discovered_when_not_declared() -> Result<(), ManifestError> {
        let loaded = Manifest::from_json(&manifest(vec![search(), bulk_delete()], json!({})))?;
        let bulk = loaded
            .operation("bulkDelete")
            .ok_or_else(|| ManifestError::Parse("missing".into()))?;
        assert!(loaded.needs_preview(bulk));
        assert_eq!(
            loaded
                .preview_operation_for(bulk)
                .map(|operation| operation.name.as_str()),
            Some("searchItems")
        );
        Ok(())
    }

    #[test]
    fn arguments_are_checked_against_the_schema() -> Result<(), ManifestError> {
        let loaded = Manifest::from_json(&manifest(vec![search(), bulk_delete()], json!({})))?;
        let bulk = loaded
            .operation("bulkDelete")
            .ok_or_else(|| ManifestError::Parse("missing".into()))?;
        assert!(bulk.validate_arguments(&json!({"ids": ["a", "b"]})).is_ok());
        assert!(bulk.validate_arguments(&json!({"ids": "a"})).is_err());
        assert!(bulk.validate_arguments(&json!({})).is_err());
        assert_eq!(
            bulk.item_ids(&json!({"ids": ["a", 7]})),
            vec!["a".to_owned(), "7".to_owned()]
        );
        Ok(())
    }
}
