//! Which components a page was generated with, as stored: per component name, the content hash
//! of the spec it was generated with, or [`BUILT_IN`]. How a set is made from a catalog and
//! resolved back to specs is the pages' (`pages::component_set`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What a page records for a component that was the built-in default of its name.
pub const BUILT_IN: &str = "built-in";

/// The components a page was generated with: each name and the hash of its spec, or
/// [`BUILT_IN`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ComponentSet(BTreeMap<String, String>);

impl FromIterator<(String, String)> for ComponentSet {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(entries: I) -> Self {
        Self(entries.into_iter().collect())
    }
}

impl ComponentSet {
    /// As stored: a JSON object from each name to its spec's hash.
    #[must_use]
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::Value::Object(
            self.0
                .iter()
                .map(|(name, hash)| (name.clone(), serde_json::Value::String(hash.clone())))
                .collect(),
        )
    }

    /// The hash recorded for component `name`.
    #[must_use]
    pub fn hash_of(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// Each component's name and recorded hash, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0
            .iter()
            .map(|(name, hash)| (name.as_str(), hash.as_str()))
    }

    /// How many components it holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether it holds none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}
