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
//! This module does no I/O; the executor ([`super::http_executor`]) turns operations into requests.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

mod load;
mod merge;
pub mod openapi;
mod operation;
mod tag;

pub use operation::{
    id_text, AuthHeader, HttpBinding, HttpMethod, Operation, DEFAULT_BATCH_ARGUMENT,
    DEFAULT_ID_FIELD,
};
pub use tag::{Tag, ToolMode};

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

impl Manifest {
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

    /// The field identifying the rows `reader` returns (`id` for an unknown or unnamed reader).
    #[must_use]
    pub fn row_id_field(&self, reader: Option<&str>) -> &str {
        reader
            .and_then(|name| self.operation(name))
            .map_or(DEFAULT_ID_FIELD, Operation::row_id_field)
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
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    pub(super) fn search() -> Value {
        json!({
            "name": "searchItems", "description": "search", "entity": "items",
            "tags": ["readonly", "filterable", "search"],
            "http": {"method": "GET", "path": "/items"},
            "parameters": {"type": "object", "properties": {"status": {"type": "string"}}}
        })
    }

    pub(super) fn bulk_delete() -> Value {
        json!({
            "name": "bulkDelete", "description": "delete many", "entity": "items",
            "tags": ["mutating", "batch", "delete", "rate-limited"], "max_batch_size": 100,
            "http": {"method": "POST", "path": "/items/bulk-delete"},
            "parameters": {"type": "object", "properties": {"ids": {"type": "array", "items": {"type": "string"}}}, "required": ["ids"]}
        })
    }

    pub(super) fn manifest(operations: Vec<Value>, relationships: Value) -> String {
        let mut manifest = json!({"site": "t", "base_url": "/api"});
        manifest["operations"] = Value::Array(operations);
        manifest["tag_relationships"] = relationships;
        manifest.to_string()
    }

    pub(super) fn with(mut operation: Value, key: &str, value: Value) -> Value {
        operation[key] = value;
        operation
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
}
