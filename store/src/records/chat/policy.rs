//! What the chat's policy decided, as stored: why a call needed confirming, and the grants a
//! person gave in a session.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// A call touching more items than this needs a confirmation.
pub const CONFIRM_ABOVE_ITEMS: usize = 10;

/// Why a call needs a person's confirmation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum ConfirmReason {
    /// The operation deletes.
    Delete,
    /// The operation changes many items at once.
    MutatingBatch,
    /// The call touches more than [`CONFIRM_ABOVE_ITEMS`] items.
    ManyItems {
        /// How many.
        count: usize,
    },
    /// The manifest says so, always.
    ConfirmationRequired,
    /// This turn's calls of the operation touch more than [`CONFIRM_ABOVE_ITEMS`] items together.
    TurnTotal {
        /// How many items, counting the calls of this turn no approval stood behind.
        count: usize,
    },
}

impl ConfirmReason {
    /// The reason for a person.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Self::Delete => "it deletes".to_owned(),
            Self::MutatingBatch => "it changes many items at once".to_owned(),
            Self::ManyItems { count } => {
                format!("it touches {count} items (more than {CONFIRM_ABOVE_ITEMS})")
            }
            Self::ConfirmationRequired => "the site requires confirmation for it".to_owned(),
            Self::TurnTotal { count } => format!(
                "this turn's calls of it touch {count} items together (more than {CONFIRM_ABOVE_ITEMS})"
            ),
        }
    }
}

/// Grants the person gave in this session.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grants {
    /// Operations approved "always for this operation".
    pub operations: BTreeSet<String>,
    /// Everything approved "for this session".
    pub session: bool,
}

impl Grants {
    /// Whether a grant covers `operation`.
    #[must_use]
    pub fn covers(&self, operation: &str) -> bool {
        self.session || self.operations.contains(operation)
    }
}
