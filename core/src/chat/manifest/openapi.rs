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

mod infer;
mod names;
mod operation;
mod parameters;
mod schema;

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_json::Value;

pub use self::names::{slug, tool_name};
use self::{
    infer::{settle_batches, settle_id_fields},
    names::{first_server, shorten},
};
use super::{
    load::RawManifest, operation::AuthHeader, tag::ToolMode, Manifest, ManifestError,
    TagRelationships,
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
    let (mut operations, row_fields) = importer.paths(paths)?;
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

/// One document's import under way: the names taken so far and the overrides used.
struct Importer<'a> {
    document: &'a Value,
    overlay: &'a Overlay,
    names: BTreeSet<String>,
    used_overrides: BTreeSet<String>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

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
}
