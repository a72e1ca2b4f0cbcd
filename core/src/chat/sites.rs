//! Sites from configuration: the files `TESSERA_SITES` names, read and checked at start.
//!
//! A site file is one of three things, told apart by its keys: a manifest (`site`,
//! `operations`), an OpenAPI 3.0/3.1 document (`openapi`), or a small site file naming an OpenAPI
//! document beside it (`document`) with an overlay ([`Overlay`]: name, base URL, credentials,
//! which operations, per-operation overrides). Each may be JSON or YAML. A file that cannot be
//! used is one [`SiteError`] naming the file and the field, and `main` stops with it, as it does
//! for a bad setting. Credentials are only named here (an environment variable); their presence
//! is checked now so a missing one stops the start, and their values are read by the executor
//! and never stored or logged.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::manifest::{
    openapi::{self, ImportError, Overlay},
    Manifest, ManifestError,
};

/// A site file that cannot be used: the file, the field at fault and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("site file {file}: {field}: {reason}")]
pub struct SiteError {
    /// The file, as configured.
    pub file: String,
    /// The field at fault (`document` when the file itself is unreadable).
    pub field: String,
    /// What is wrong.
    pub reason: String,
}

impl SiteError {
    fn new(file: &Path, field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            file: file.display().to_string(),
            field: field.into(),
            reason: reason.into(),
        }
    }

    fn from_import(file: &Path, error: ImportError) -> Self {
        Self::new(file, error.field, error.reason)
    }

    fn from_manifest(file: &Path, error: &ManifestError) -> Self {
        let field = match error {
            ManifestError::Parse(_) => "manifest".to_owned(),
            ManifestError::UnknownTag { operation, .. }
            | ManifestError::PreviewMissing { operation, .. }
            | ManifestError::PreviewMutating { operation, .. }
            | ManifestError::BatchWithoutMaxSize { operation }
            | ManifestError::Invalid { operation, .. } => format!("operations.{operation}"),
        };
        Self::new(file, field, error.to_string())
    }
}

/// The environment lookup credentials are checked against.
pub type EnvCheck<'a> = &'a dyn Fn(&str) -> bool;

/// Reads and checks every file, in order; several sites are merged later
/// ([`Manifest::merge`]), so two sites with the same name are rejected here.
///
/// # Errors
/// The first [`SiteError`].
pub fn load_sites(paths: &[PathBuf], env_is_set: EnvCheck<'_>) -> Result<Vec<Manifest>, SiteError> {
    let mut sites: Vec<Manifest> = Vec::with_capacity(paths.len());
    for path in paths {
        let site = load_site(path, env_is_set)?;
        if sites.iter().any(|earlier| earlier.site == site.site) {
            return Err(SiteError::new(
                path,
                "name",
                format!("another site is already called `{}`", site.site),
            ));
        }
        sites.push(site);
    }
    Ok(sites)
}

/// Reads one site file (manifest, OpenAPI document or site file with overlay).
///
/// # Errors
/// [`SiteError`] naming the file and the field.
pub fn load_site(path: &Path, env_is_set: EnvCheck<'_>) -> Result<Manifest, SiteError> {
    let value = read_document(path)?;
    let manifest = if openapi::is_openapi(&value) {
        openapi::import(&value, &Overlay::default())
            .map_err(|error| SiteError::from_import(path, error))?
    } else if let Some(document) = value.get("document") {
        let Some(document) = document.as_str() else {
            return Err(SiteError::new(
                path,
                "document",
                "must be the path of an OpenAPI document",
            ));
        };
        let mut overlay_value = value.clone();
        if let Some(object) = overlay_value.as_object_mut() {
            object.remove("document");
        }
        let overlay: Overlay = serde_json::from_value(overlay_value)
            .map_err(|error| SiteError::new(path, "overlay", error.to_string()))?;
        let document_path = path
            .parent()
            .unwrap_or_else(|| Path::new("."))
            .join(document);
        let document_value = read_document(&document_path)
            .map_err(|error| SiteError::new(path, "document", error.reason))?;
        if !openapi::is_openapi(&document_value) {
            return Err(SiteError::new(
                path,
                "document",
                format!(
                    "{} is not an OpenAPI document (no `openapi` field)",
                    document_path.display()
                ),
            ));
        }
        openapi::import(&document_value, &overlay)
            .map_err(|error| SiteError::from_import(path, error))?
    } else if value.get("operations").is_some() {
        Manifest::from_value(value).map_err(|error| SiteError::from_manifest(path, &error))?
    } else {
        return Err(SiteError::new(
            path,
            "document",
            "is neither a manifest (`site`, `operations`), an OpenAPI document (`openapi`) nor a site file (`document`)",
        ));
    };
    let missing = std::iter::once(&manifest.auth)
        .chain(
            manifest
                .operations()
                .iter()
                .map(|operation| &operation.auth),
        )
        .flatten()
        .find(|auth| !env_is_set(&auth.env));
    if let Some(auth) = missing {
        return Err(SiteError::new(
            path,
            "auth.env",
            format!("the credential variable {} is not set", auth.env),
        ));
    }
    Ok(manifest)
}

/// The largest site file read, in bytes (GitHub's whole document is about 12 MB).
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// A JSON or YAML file as JSON values (YAML when it does not start with `{`).
fn read_document(path: &Path) -> Result<Value, SiteError> {
    let size = std::fs::metadata(path)
        .map_err(|error| SiteError::new(path, "document", format!("cannot be read: {error}")))?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(SiteError::new(
            path,
            "document",
            format!("is {size} bytes; a site file may have at most {MAX_FILE_BYTES}"),
        ));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|error| SiteError::new(path, "document", format!("cannot be read: {error}")))?;
    if text.trim_start().starts_with('{') {
        serde_json::from_str(&text).map_err(|error| {
            SiteError::new(path, "document", format!("is not valid JSON: {error}"))
        })
    } else {
        serde_yaml_ng::from_str(&text).map_err(|error| {
            SiteError::new(path, "document", format!("is not valid YAML: {error}"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> std::io::Result<PathBuf> {
        let path = dir.join(name);
        std::fs::write(&path, text)?;
        Ok(path)
    }

    #[test]
    fn a_site_file_names_a_yaml_openapi_document_beside_it() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        write(
            dir.path(),
            "shop.yaml",
            "openapi: 3.1.0\ninfo: {title: Shop, version: '1'}\nservers: [{url: 'https://shop.example'}]\npaths:\n  /orders:\n    get:\n      operationId: listOrders\n      responses:\n        200: {description: ok}\n",
        )?;
        let site = write(
            dir.path(),
            "site.yaml",
            "name: shop\ndocument: shop.yaml\nbase_url: http://127.0.0.1:9\nauth: {header: Authorization, env: SHOP_TOKEN, prefix: 'Bearer '}\n",
        )?;
        let manifest = load_site(&site, &|name| name == "SHOP_TOKEN")?;
        assert_eq!(manifest.site, "shop");
        assert_eq!(manifest.base_url, "http://127.0.0.1:9");
        assert!(manifest.operation("listOrders").is_some());
        let error = load_site(&site, &|_| false).err();
        assert_eq!(error.map(|error| error.field), Some("auth.env".to_owned()));
        Ok(())
    }

    #[test]
    fn a_bad_file_names_the_file_and_the_field() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let cases = [
            ("a.yaml", "name: a\ndocument: missing.yaml\n", "document"),
            (
                "b.yaml",
                "name: b\ndocument: a.yaml\nbase_urll: x\n",
                "overlay",
            ),
            ("c.json", r#"{"openapi": "2.0", "paths": {}}"#, "openapi"),
            (
                "d.json",
                r#"{"site": "d", "base_url": "/x", "operations": [{"name": "x"}]}"#,
                "manifest",
            ),
            ("e.yaml", "hello: world\n", "document"),
        ];
        for (name, text, field) in cases {
            let path = write(dir.path(), name, text)?;
            let error = load_site(&path, &|_| true).err();
            assert_eq!(
                error.as_ref().map(|error| error.field.as_str()),
                Some(field),
                "{name}: {error:?}"
            );
            assert!(error.is_some_and(|error| error
                .to_string()
                .starts_with(&format!("site file {}", path.display()))));
        }
        Ok(())
    }
}
