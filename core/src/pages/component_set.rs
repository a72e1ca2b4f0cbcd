//! Which components a page was generated with, recorded with the page as content hashes.
//!
//! A `ui_with` step may override a default component (its own `Heading`); that override must
//! reach that step's pages and no other's. So a page records, per component name, a hash of the
//! spec it was generated with ([`ComponentSet`]), and is rendered with exactly those specs, looked
//! up in the specs the server knows ([`KnownComponents`]: the defaults, the runner's and every
//! `ui_with` step's). Code cannot be hashed, so a spec's hash covers what describes it as data:
//! name, role, description, props schema, examples and whether it submits. A page whose recorded
//! spec is no longer on the server (the component was removed or changed since) is refused with
//! [`UnknownComponent`] rather than rendered with whatever now has that name.
//!
//! A spec identical to the built-in default of its name is recorded as [`BUILT_IN`], not by its
//! hash, and renders with whatever default this server ships: a release that rewords a default's
//! description or tool definition must not turn every open page into an error page.
//!
//! This module decides nothing about HTTP; `http/pages.rs` turns the refusal into an error page.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::json;
use sha2::{Digest as _, Sha256};
use tessera_app::catalog::{Catalog, ComponentSpec};

use crate::util::canonical_json::canonical_json;

/// The content hash of one component spec: 16 hex digits of a SHA-256 over its data.
///
/// 64 bits tell the few specs of one server apart; nothing adversarial chooses them.
#[must_use]
pub fn spec_hash(spec: &ComponentSpec) -> String {
    let described = json!({
        "name": spec.name,
        "role": spec.role,
        "description": spec.description,
        "props_schema": spec.props_schema,
        "example_props": spec.example_props,
        "example_data": spec.example_data,
        "submits": spec.submits,
    });
    let digest = Sha256::digest(canonical_json(&described));
    hex::encode(&digest[..8])
}

pub use tessera_store::records::component_set::{ComponentSet, BUILT_IN};

/// The set `catalog` offers, as a page records it (one spec per name: the catalog already
/// resolved overrides).
#[must_use]
pub fn set_of(catalog: &Catalog) -> ComponentSet {
    let defaults = Catalog::defaults();
    catalog
        .specs()
        .iter()
        .map(|spec| {
            let hash = spec_hash(spec);
            let built_in = defaults
                .get(&spec.name)
                .is_some_and(|default| spec_hash(default) == hash);
            let recorded = if built_in { BUILT_IN.to_owned() } else { hash };
            (spec.name.clone(), recorded)
        })
        .collect()
}

/// A recorded component whose spec this server does not have.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("component {name} (spec {hash}) is not among this server's components")]
pub struct UnknownComponent {
    /// The component's name.
    pub name: String,
    /// The hash the page recorded for it.
    pub hash: String,
}

/// Every component spec a server can render a page with, by content hash.
///
/// Several specs may share a name (a default `Heading` and a step's own); each page picks
/// through its [`ComponentSet`].
#[derive(Clone, Debug, Default)]
pub struct KnownComponents {
    by_hash: HashMap<String, ComponentSpec>,
    built_in: HashMap<String, ComponentSpec>,
    /// Catalogs already built, by set. A set's catalog never changes, and building one clones
    /// every spec it names (schemas, examples), which every page view and every submission
    /// would otherwise pay again. Sets are few (one per runner and step configuration); past
    /// [`MEMO_SETS`] the memo starts again rather than grows.
    memo: Arc<Mutex<HashMap<ComponentSet, Catalog>>>,
}

/// Most component sets whose catalogs are kept.
const MEMO_SETS: usize = 64;

impl KnownComponents {
    /// The default components and `extra` (the runner's and its steps' own).
    pub fn with<'a>(extra: impl IntoIterator<Item = &'a ComponentSpec>) -> Self {
        let mut known = Self::default();
        for spec in Catalog::defaults().specs() {
            known.by_hash.insert(spec_hash(spec), spec.clone());
            known.built_in.insert(spec.name.clone(), spec.clone());
        }
        for spec in extra {
            known.by_hash.insert(spec_hash(spec), spec.clone());
        }
        known
    }

    /// Whether this exact spec (by content) is known.
    #[must_use]
    pub fn contains(&self, spec: &ComponentSpec) -> bool {
        self.by_hash.contains_key(&spec_hash(spec))
    }

    /// The catalog a page recorded `set` with.
    ///
    /// # Errors
    /// [`UnknownComponent`] naming the first recorded component whose spec is not known.
    pub fn catalog_for(&self, set: &ComponentSet) -> Result<Catalog, UnknownComponent> {
        let kept = self
            .memo
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(set)
            .cloned();
        if let Some(catalog) = kept {
            return Ok(catalog);
        }
        let catalog = self.build_catalog(set)?;
        let mut kept = self.memo.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() >= MEMO_SETS {
            kept.clear();
        }
        kept.insert(set.clone(), catalog.clone());
        Ok(catalog)
    }

    fn build_catalog(&self, set: &ComponentSet) -> Result<Catalog, UnknownComponent> {
        let mut catalog = Catalog::empty();
        for (name, hash) in set.iter() {
            let spec = if hash == BUILT_IN {
                self.built_in.get(name)
            } else {
                self.by_hash.get(hash)
            };
            let spec = spec
                .filter(|spec| spec.name == name)
                .ok_or_else(|| UnknownComponent {
                    name: name.to_owned(),
                    hash: hash.to_owned(),
                })?;
            catalog.register(spec.clone());
        }
        Ok(catalog)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shouting_heading() -> Option<ComponentSpec> {
        let mut spec = Catalog::defaults().get("Heading").cloned()?;
        spec.description = "A heading in capitals.".to_owned();
        Some(spec)
    }

    #[test]
    fn a_set_resolves_to_the_specs_it_was_made_with_not_to_others_of_the_same_name() {
        let Some(shouting) = shouting_heading() else {
            panic!("the default catalog has a Heading");
        };
        let known = KnownComponents::with([&shouting]);
        let default_set = set_of(&Catalog::defaults());
        let overridden_set = set_of(&Catalog::resolve(std::slice::from_ref(&shouting), &[]));
        assert_ne!(
            default_set.hash_of("Heading"),
            overridden_set.hash_of("Heading")
        );
        let default_catalog = known.catalog_for(&default_set);
        let overridden_catalog = known.catalog_for(&overridden_set);
        assert_eq!(
            default_catalog
                .ok()
                .and_then(|catalog| catalog.get("Heading").map(|spec| spec.description.clone())),
            Catalog::defaults()
                .get("Heading")
                .map(|spec| spec.description.clone())
        );
        assert_eq!(
            overridden_catalog
                .ok()
                .and_then(|catalog| catalog.get("Heading").map(|spec| spec.description.clone())),
            Some("A heading in capitals.".to_owned())
        );
    }

    #[test]
    fn a_set_naming_a_spec_the_server_lacks_is_refused_naming_it() {
        let Some(shouting) = shouting_heading() else {
            panic!("the default catalog has a Heading");
        };
        let recorded = set_of(&Catalog::resolve(&[shouting], &[]));
        let refused = KnownComponents::with([]).catalog_for(&recorded);
        assert_eq!(
            refused.err().map(|unknown| unknown.name),
            Some("Heading".to_owned())
        );
    }

    #[test]
    fn built_in_components_are_recorded_as_such_and_render_with_this_servers_defaults() {
        let recorded = set_of(&Catalog::defaults());
        assert_eq!(recorded.hash_of("Heading"), Some(BUILT_IN));
        assert_eq!(recorded.len(), Catalog::defaults().specs().len());
        // A page made before a release reworded the defaults still renders after it: what it
        // recorded is "the built-in Heading", not the old wording's hash.
        let resolved = KnownComponents::with([]).catalog_for(&recorded);
        assert_eq!(
            resolved.ok().map(|catalog| catalog.specs().len()),
            Some(Catalog::defaults().specs().len())
        );
    }

    #[test]
    fn the_hash_is_stable_and_follows_content() {
        let catalog = Catalog::defaults();
        let Some(heading) = catalog.get("Heading") else {
            panic!("the default catalog has a Heading");
        };
        assert_eq!(spec_hash(heading), spec_hash(&heading.clone()));
        assert_eq!(spec_hash(heading).len(), 16);
        let mut renamed = heading.clone();
        renamed.name = "Title".to_owned();
        assert_ne!(spec_hash(heading), spec_hash(&renamed));
    }
}
