//! The tag vocabulary of DESIGN.md §8 and how a tool is offered (to the model, by hand, or both).

use std::{fmt, str::FromStr};

use serde::{Deserialize, Serialize};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tag_reads_back_from_its_name_and_others_do_not() {
        for tag in Tag::ALL {
            assert_eq!(tag.as_str().parse::<Tag>(), Ok(tag));
            assert_eq!(tag.to_string(), tag.as_str());
        }
        assert!("speedy".parse::<Tag>().is_err());
        assert!("Readonly".parse::<Tag>().is_err(), "tags are lower-case");
    }
}
