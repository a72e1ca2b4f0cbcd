//! Loading a manifest: the raw JSON shapes and the checks that reject one contradicting itself.
//!
//! Every rejection names the operation; nothing here does I/O.

use std::{
    collections::{BTreeSet, HashMap},
    sync::Arc,
};

use serde::Deserialize;
use serde_json::Value;

use crate::forms::FormSchema;

use super::{
    operation::{AuthHeader, HttpBinding, Operation, DEFAULT_BATCH_ARGUMENT},
    tag::{Tag, ToolMode},
    Manifest, ManifestError, TagRelationships,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawManifest {
    pub(super) site: String,
    #[serde(default)]
    pub(super) description: String,
    pub(super) base_url: String,
    #[serde(default)]
    pub(super) auth: Option<AuthHeader>,
    pub(super) operations: Vec<RawOperation>,
    #[serde(default)]
    pub(super) tag_relationships: TagRelationships,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOperation {
    pub(super) name: String,
    pub(super) description: String,
    pub(super) entity: String,
    pub(super) tags: Vec<String>,
    #[serde(default)]
    pub(super) mode: ToolMode,
    #[serde(default)]
    pub(super) category: Option<String>,
    pub(super) http: HttpBinding,
    pub(super) parameters: Value,
    #[serde(default)]
    pub(super) max_batch_size: Option<usize>,
    #[serde(default)]
    pub(super) batch_argument: Option<String>,
    #[serde(default)]
    pub(super) requires_preview: Option<String>,
    #[serde(default)]
    pub(super) auth: Option<AuthHeader>,
    #[serde(default)]
    pub(super) id_field: Option<String>,
    #[serde(default)]
    pub(super) id_argument: Option<String>,
    #[serde(default)]
    pub(super) identifying_fields: Vec<String>,
}

pub(super) fn is_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
}

/// The operation's tags: each known, exactly one of `readonly` and `mutating`, and not both
/// rate-limit tags.
fn check_tags(name: &str, raw: &[String]) -> Result<BTreeSet<Tag>, ManifestError> {
    let mut tags = BTreeSet::new();
    for tag in raw {
        let parsed = tag.parse::<Tag>().map_err(|()| ManifestError::UnknownTag {
            operation: name.to_owned(),
            tag: tag.clone(),
        })?;
        tags.insert(parsed);
    }
    if tags.contains(&Tag::Mutating) == tags.contains(&Tag::Readonly) {
        return Err(ManifestError::invalid(
            name,
            "must be tagged exactly one of `readonly` and `mutating`",
        ));
    }
    if tags.contains(&Tag::RateLimited) && tags.contains(&Tag::NotRateLimited) {
        return Err(ManifestError::invalid(
            name,
            "cannot be both `rate-limited` and `not-rate-limited`",
        ));
    }
    Ok(tags)
}

/// The operation's parameters as its other fields need them: an object schema; a batch's
/// required id list (and a `max_batch_size`); each path placeholder a required parameter; an
/// `id_argument` among them; a preview by another operation than itself.
fn check_arguments(name: &str, raw: &RawOperation, batch: bool) -> Result<(), ManifestError> {
    let properties = raw
        .parameters
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if raw.parameters.get("type").and_then(Value::as_str) != Some("object") {
        return Err(ManifestError::invalid(
            name,
            "parameters must be a JSON Schema with \"type\": \"object\"",
        ));
    }
    if batch && raw.max_batch_size.is_none_or(|size| size == 0) {
        return Err(ManifestError::BatchWithoutMaxSize {
            operation: name.to_owned(),
        });
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
                name,
                format!("a batch operation needs an array parameter `{key}` holding the item ids"),
            ));
        }
    } else if raw.batch_argument.is_some() {
        return Err(ManifestError::invalid(
            name,
            "batch_argument is only meaningful on a `batch` operation",
        ));
    }
    if let Some(preview) = &raw.requires_preview {
        if preview == name {
            return Err(ManifestError::PreviewMutating {
                operation: name.to_owned(),
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
                name,
                format!("path placeholder `{{{placeholder}}}` must be a required parameter"),
            ));
        }
    }
    if let Some(argument) = &raw.id_argument {
        if batch || !properties.contains_key(argument) {
            return Err(ManifestError::invalid(
                name,
                format!("id_argument `{argument}` must be a parameter of an operation that is not a batch"),
            ));
        }
    }
    Ok(())
}

pub(super) fn check_operation(raw: RawOperation) -> Result<Operation, ManifestError> {
    let name = raw.name.clone();
    if !is_tool_name(&name) {
        return Err(ManifestError::invalid(
            &name,
            "the name must be 1–64 letters, digits, `_` or `-` (it becomes a tool name)",
        ));
    }
    let tags = check_tags(&name, &raw.tags)?;
    if raw.entity.trim().is_empty() {
        return Err(ManifestError::invalid(&name, "needs an entity"));
    }
    check_arguments(&name, &raw, tags.contains(&Tag::Batch))?;
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
        id_field: raw.id_field,
        id_argument: raw.id_argument,
        identifying_fields: raw.identifying_fields,
        validator: Arc::new(validator),
        name,
    })
}

impl Manifest {
    /// Loads and checks a manifest.
    ///
    /// # Errors
    /// [`ManifestError`] naming the first operation that contradicts itself or the manifest.
    pub fn from_json(text: &str) -> Result<Self, ManifestError> {
        let raw: RawManifest =
            serde_json::from_str(text).map_err(|error| ManifestError::Parse(error.to_string()))?;
        Self::from_raw(raw)
    }

    /// Loads and checks a manifest already parsed into JSON values (from JSON or YAML text).
    ///
    /// # Errors
    /// As [`Manifest::from_json`].
    pub fn from_value(value: Value) -> Result<Self, ManifestError> {
        let raw: RawManifest = serde_json::from_value(value)
            .map_err(|error| ManifestError::Parse(error.to_string()))?;
        Self::from_raw(raw)
    }

    pub(super) fn from_raw(raw: RawManifest) -> Result<Self, ManifestError> {
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

    /// Rejects relationships that contradict the operations: a preview naming a missing or
    /// mutating operation, a mutating batch with nothing readonly to preview it.
    pub(super) fn check_relationships(&self) -> Result<(), ManifestError> {
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::chat::manifest::tests::{bulk_delete, manifest, search, with};

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
}
