//! The page cache ("LLM then JIT"): a validated tree is reused for the next generation that would
//! ask the model the same question about data of the same shape.
//!
//! Pages bind their data (DESIGN.md §4), so a tree that was right for one snapshot is usually
//! right for the next one with the same shape. The key ([`cache_key`]) is a SHA-256 over
//! everything that decides the page except values (DESIGN.md §14): the agent's prompt templates,
//! the request's *template source* (the prompt text itself when it has none — never the rendered
//! prompt, whose interpolated counts and names differ per request), the canonical response schema,
//! the data shape signature ([`DataSummary::shape_signature`]), the component set (names, roles,
//! descriptions and props schemas) and the model. A hit is re-bound to the new request
//! ([`literals`]: text copied from the old prompt follows the new one; a value of the old request
//! the new one lacks makes the hit stale), then re-validated against the new data with code's
//! `ValidateForm`; a hit that fails either falls through to the model and the record says why.
//! Only pages the requested model built itself are stored: a heuristic fallback is never cached
//! under a real model's key.

pub mod literals;

use std::{borrow::Cow, sync::OnceLock};

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tessera_app::catalog::Catalog;

use super::{
    prompt::{template_digest, TEMPLATE_ID},
    summary::DataSummary,
};
use crate::llm::ModelName;

/// Whether a generation may use the page cache.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CachePolicy {
    /// Reuse a cached page when one validates, and store the page the model builds.
    #[default]
    Use,
    /// Do not read the cache, but store the page the model builds (replacing the cached one).
    Refresh,
    /// Neither read nor write the cache (the step opted out). Spelled `off`; `bypass` is read too.
    #[serde(rename = "off", alias = "bypass")]
    Bypass,
}

impl CachePolicy {
    /// The spellings a request may use, for error messages.
    pub const SPELLINGS: &'static str = "`use`, `refresh` or `off`";

    /// Parses `use`, `refresh`, `off` (or `bypass`, its older name).
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "use" => Some(Self::Use),
            "refresh" => Some(Self::Refresh),
            "off" | "bypass" => Some(Self::Bypass),
            _ => None,
        }
    }

    /// Whether a cached page may answer.
    #[must_use]
    pub fn reads(self) -> bool {
        self == Self::Use
    }

    /// Whether the page the model builds is stored.
    #[must_use]
    pub fn writes(self) -> bool {
        self != Self::Bypass
    }
}

pub use tessera_store::records::page_cache::{CacheLookup, CachedPage};

/// The cache key of a generation, as lower-case hex SHA-256. `source` is the request's template
/// source, or its prompt text when it has no template; `schema` is the response schema as
/// [`canonical_json`] writes it (`null` for none).
#[must_use]
pub fn cache_key(
    source: &str,
    schema: &str,
    summary: &DataSummary,
    catalog: &Catalog,
    model: &ModelName,
) -> String {
    let mut hasher = Sha256::new();
    for part in [
        format!("{TEMPLATE_ID}:{}", template_digest()),
        source.to_owned(),
        schema.to_owned(),
        summary.shape_signature(),
        components_text(catalog).into_owned(),
        model.to_string(),
    ] {
        // Length-prefixed so no two different inputs hash the same bytes.
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hex::encode(hasher.finalize())
}

pub use crate::util::canonical_json::canonical_json;

/// The components as the model is offered them (name, role, description, props schema), as
/// canonical JSON. The default catalog's is written once per process: every generation on it
/// would otherwise re-serialize all 29 props schemas for its key.
fn components_text(catalog: &Catalog) -> Cow<'static, str> {
    static DEFAULTS: OnceLock<String> = OnceLock::new();
    let write = |catalog: &Catalog| {
        let components: Vec<Value> = catalog
            .specs()
            .iter()
            .map(|spec| {
                serde_json::json!([
                    spec.name,
                    spec.role.as_str(),
                    spec.description,
                    spec.props_schema
                ])
            })
            .collect();
        canonical_json(&Value::Array(components))
    };
    if catalog.is_defaults() {
        Cow::Borrowed(DEFAULTS.get_or_init(|| write(catalog)).as_str())
    } else {
        Cow::Owned(write(catalog))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::forms::{FieldKind, FormField, FormSchema};

    fn key(prompt: &str, data: &Value, model: &str) -> String {
        let schema = FormSchema::new(vec![FormField::new("note", FieldKind::string())]);
        cache_key(
            prompt,
            &canonical_json(&schema.to_json_schema()),
            &DataSummary::of(data),
            &Catalog::defaults(),
            &ModelName::new("openai", model),
        )
    }

    #[test]
    fn the_default_catalog_keys_as_any_catalog_with_the_same_components() {
        let mut copy = Catalog::empty();
        for spec in Catalog::defaults().specs() {
            copy.register(spec.clone());
        }
        assert!(Catalog::defaults().is_defaults() && !copy.is_defaults());
        let key_with = |catalog: &Catalog| {
            cache_key(
                "Archive",
                "null",
                &DataSummary::of(&json!({})),
                catalog,
                &ModelName::new("openai", "m"),
            )
        };
        assert_eq!(key_with(&Catalog::defaults()), key_with(&copy));
        let mut changed = copy.clone();
        changed.register(tessera_app::catalog::ComponentSpec {
            description: "Another description.".to_owned(),
            ..copy.specs()[0].clone()
        });
        assert_ne!(key_with(&changed), key_with(&copy));
    }

    #[test]
    fn the_key_ignores_data_values_but_not_the_shape_prompt_or_model() {
        let base = key("Archive", &json!({"emails": [{"id": "a"}]}), "m");
        assert_eq!(base.len(), 64);
        assert_eq!(
            base,
            key(
                "Archive",
                &json!({"emails": [{"id": "b"}, {"id": "c"}]}),
                "m"
            )
        );
        assert_ne!(
            base,
            key("Archive", &json!({"emails": [{"uid": "a"}]}), "m")
        );
        assert_ne!(base, key("Delete", &json!({"emails": [{"id": "a"}]}), "m"));
        assert_ne!(base, key("Archive", &json!({"emails": [{"id": "a"}]}), "n"));
    }

    #[test]
    fn the_policy_reads_use_refresh_and_off_and_still_reads_bypass() {
        assert_eq!(CachePolicy::parse("use"), Some(CachePolicy::Use));
        assert_eq!(CachePolicy::parse("refresh"), Some(CachePolicy::Refresh));
        assert_eq!(CachePolicy::parse("off"), Some(CachePolicy::Bypass));
        assert_eq!(CachePolicy::parse("bypass"), Some(CachePolicy::Bypass));
        assert_eq!(CachePolicy::parse("sometimes"), None);
        let read: CachePolicy = serde_json::from_value(json!("bypass")).unwrap_or_default();
        assert_eq!(read, CachePolicy::Bypass);
        assert_eq!(json!(CachePolicy::Bypass), json!("off"));
        assert!(CachePolicy::Refresh.writes() && !CachePolicy::Refresh.reads());
        assert!(!CachePolicy::Bypass.writes() && !CachePolicy::Bypass.reads());
    }
}
