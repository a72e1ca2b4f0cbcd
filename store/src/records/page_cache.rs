//! The page cache's records: a cached page with what its literal text owes to the request it
//! was built for ([`Provenance`]), and what the cache did for one generation ([`CacheLookup`]).
//! Keys, staleness and re-binding are the agent's (`agent::cache`).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// What the page cache did for one generation: the label of `/metrics`'
/// `tessera_page_cache_lookups_total` and the `cache.result` of the record's transcript.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CacheLookup {
    /// A cached page answered: no model ran.
    Hit,
    /// Nothing (readable) was cached under the key: the model ran.
    Miss,
    /// A cached page no longer fitted (stale literal text, or it failed validation against the
    /// new data): the model ran.
    Stale,
    /// The policy was `refresh`: the cache was not read, the model ran.
    Refresh,
    /// The policy was `off`.
    Off,
}

impl CacheLookup {
    /// Every result, in a fixed order.
    pub const ALL: [Self; 5] = [Self::Hit, Self::Miss, Self::Stale, Self::Refresh, Self::Off];

    /// The stored spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hit => "hit",
            Self::Miss => "miss",
            Self::Stale => "stale",
            Self::Refresh => "refresh",
            Self::Off => "off",
        }
    }

    /// Parses the stored spelling.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|lookup| lookup.as_str() == text)
    }
}

/// A page stored in the cache.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CachedPage {
    /// The cache key ([`cache_key`]).
    pub key: String,
    /// The validated page tree.
    pub tree: Value,
    /// What its literal text owes to the request it was built for (see [`literals`]).
    pub provenance: Provenance,
    /// The generation that built it.
    pub generation_id: Uuid,
    /// The model that built it, `provider:model`.
    pub model: String,
    /// How often it was reused.
    pub hits: i64,
    /// When it was stored, unix ms.
    pub created_at_ms: i64,
}

/// Where a value written into literal text came from, in the request the page was built for.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Interpolated into the rendered prompt.
    Prompt,
    /// A data value at this pointer pattern (array indices written `*`).
    Data(String),
    /// The length of an array at this pointer pattern.
    Length(String),
    /// A number found in none of the request's values: the model computed it.
    Unverifiable,
}

/// What a stored page's literal text owes to the request it was built for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Provenance {
    /// The rendered prompt the page was built for (re-binding aligns the new one against it).
    pub prompt: String,
    /// Each value token of the literal text (lower case) and where it came from.
    pub values: BTreeMap<String, BTreeSet<Origin>>,
}
