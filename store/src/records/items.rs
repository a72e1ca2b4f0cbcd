//! The demo items' domain types: what an item is, how it is filtered and changed.
//!
//! These are the types the HTTP routes parse into and the store reads and writes; the JSON shapes
//! here are the demo site's public API, described to models by `items_manifest.json`.

use std::fmt;

use serde::{Deserialize, Serialize, Serializer};

use tessera_forms::dates::{iso_datetime, CivilDate};

/// The most rows one search returns.
pub const MAX_PAGE_SIZE: i64 = 1000;

/// The most ids one bulk call may carry; a larger batch is answered 429 with `Retry-After`.
pub const MAX_BATCH_SIZE: usize = 100;

/// An item's id, e.g. `item-0042`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ItemId(pub String);

impl ItemId {
    /// A fresh random id for a created item.
    #[must_use]
    pub fn random() -> Self {
        Self(format!(
            "item-{}",
            &uuid::Uuid::new_v4().simple().to_string()[..10]
        ))
    }
}

impl fmt::Display for ItemId {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.0)
    }
}

/// Where an item is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemStatus {
    /// Not started.
    Open,
    /// Someone is on it.
    InProgress,
    /// Finished.
    Completed,
}

impl ItemStatus {
    /// Every status, in life order.
    pub const ALL: [Self; 3] = [Self::Open, Self::InProgress, Self::Completed];

    /// The stored and wire name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::InProgress => "in_progress",
            Self::Completed => "completed",
        }
    }

    /// Parses the stored and wire name.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|status| status.as_str() == text)
    }
}

/// How urgent an item is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// Whenever.
    Low,
    /// Soon.
    Medium,
    /// Now.
    High,
}

impl Priority {
    /// Every priority, lowest first.
    pub const ALL: [Self; 3] = [Self::Low, Self::Medium, Self::High];

    /// The stored and wire name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }

    /// Parses the stored and wire name.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|priority| priority.as_str() == text)
    }
}

/// One item, as stored. It serializes as the API shows it: the due date as `YYYY-MM-DD`, the
/// instants as RFC 3339 UTC text named without their `_ms`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Item {
    /// Its id.
    pub id: ItemId,
    /// A short title.
    pub title: String,
    /// A longer description (may be empty).
    pub description: String,
    /// Its status.
    pub status: ItemStatus,
    /// Its priority.
    pub priority: Priority,
    /// Who it is assigned to, if anyone.
    pub assignee: Option<String>,
    /// When it is due.
    #[serde(serialize_with = "date_text")]
    pub due_date: Option<CivilDate>,
    /// Created, unix ms.
    #[serde(rename = "created_at", serialize_with = "instant_text")]
    pub created_at_ms: i64,
    /// Last changed, unix ms.
    #[serde(rename = "updated_at", serialize_with = "instant_text")]
    pub updated_at_ms: i64,
    /// Completed, unix ms (only while completed).
    #[serde(rename = "completed_at", serialize_with = "optional_instant_text")]
    pub completed_at_ms: Option<i64>,
}

// The field types are serde's to choose: `serialize_with` hands each function a reference.
fn date_text<S: Serializer>(date: &Option<CivilDate>, to: S) -> Result<S::Ok, S::Error> {
    date.map(|date| date.to_string()).serialize(to)
}

fn instant_text<S: Serializer>(unix_ms: &i64, to: S) -> Result<S::Ok, S::Error> {
    to.serialize_str(&iso_datetime(*unix_ms))
}

fn optional_instant_text<S: Serializer>(unix_ms: &Option<i64>, to: S) -> Result<S::Ok, S::Error> {
    unix_ms.map(iso_datetime).serialize(to)
}

/// Which items a search returns. Date bounds: `updated_after` inclusive, `updated_before`
/// exclusive, both unix ms.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ItemFilter {
    /// Only this status.
    pub status: Option<ItemStatus>,
    /// Only this priority.
    pub priority: Option<Priority>,
    /// Changed at or after this instant.
    pub updated_after_ms: Option<i64>,
    /// Changed before this instant.
    pub updated_before_ms: Option<i64>,
    /// Title or description contains this text (case-insensitive).
    pub text: Option<String>,
    /// At most this many rows (1..=[`MAX_PAGE_SIZE`]).
    pub limit: i64,
    /// Skip this many rows.
    pub offset: i64,
}

/// One page of a search and how many items matched in all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ItemPage {
    /// The rows of this page, most recently changed first.
    pub items: Vec<Item>,
    /// How many items match the filter.
    pub total: i64,
}

/// A new item's fields.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct NewItem {
    /// A short title (required, 1–200 characters).
    pub title: String,
    /// A longer description.
    #[serde(default)]
    pub description: String,
    /// Its status (`open` when absent).
    #[serde(default)]
    pub status: Option<ItemStatus>,
    /// Its priority (`medium` when absent).
    #[serde(default)]
    pub priority: Option<Priority>,
    /// Who it is assigned to.
    #[serde(default)]
    pub assignee: Option<String>,
    /// When it is due, `YYYY-MM-DD`.
    #[serde(default)]
    pub due_date: Option<String>,
}

/// A change to an item: absent fields stay as they are.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ItemPatch {
    /// A new title.
    pub title: Option<String>,
    /// A new description.
    pub description: Option<String>,
    /// A new status; entering `completed` stamps `completed_at`, leaving it clears it.
    pub status: Option<ItemStatus>,
    /// A new priority.
    pub priority: Option<Priority>,
    /// A new assignee.
    pub assignee: Option<String>,
    /// A new due date.
    pub due_date: Option<CivilDate>,
}

impl ItemPatch {
    /// Whether the patch changes nothing.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}
