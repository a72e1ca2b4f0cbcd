//! A stored page and the outcomes of submitting it.

use serde::Serialize;

use super::{component_set::ComponentSet, token::TokenHash};
use crate::records::run::RunId;

uuid_id! {
    /// A page's identity (not its link: the link carries the secret token).
    #[derive(utoipa::ToSchema)]
    pub struct PageId;
}

/// The stored status of a page. Expiry is computed from `expires_at_ms`, not stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum PageStatus {
    /// Waiting for its one submission.
    Open,
    /// Submitted; the link now shows a receipt.
    Submitted,
    /// Withdrawn by the workflow author.
    Revoked,
}

impl PageStatus {
    /// Every status, in the order `/metrics` lists them.
    pub const ALL: [Self; 3] = [Self::Open, Self::Submitted, Self::Revoked];

    /// The stored spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Submitted => "submitted",
            Self::Revoked => "revoked",
        }
    }

    /// Parses the stored spelling.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|status| status.as_str() == text)
    }
}

/// A generated page as stored.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Page {
    /// Identity.
    pub id: PageId,
    /// The run waiting on it, if any.
    pub run_id: Option<RunId>,
    /// Stored status.
    pub status: PageStatus,
    /// The page tree (DESIGN.md §4).
    pub tree: serde_json::Value,
    /// The response schema; none for display-only pages.
    pub schema: Option<serde_json::Value>,
    /// The data snapshot the tree binds to.
    pub data: serde_json::Value,
    /// The components it was generated with; `None` for pages stored before sets were recorded
    /// (served with the runner's page catalog, as then).
    #[serde(skip)]
    pub component_set: Option<ComponentSet>,
    /// The typed response, once submitted.
    pub response: Option<serde_json::Value>,
    /// Creation time, unix ms.
    pub created_at_ms: i64,
    /// After this instant the link answers 410.
    pub expires_at_ms: i64,
    /// When it was submitted, unix ms.
    pub submitted_at_ms: Option<i64>,
    /// How many assignees must approve; `None` for a page with one anonymous link.
    pub approvals_required: Option<i64>,
    /// Whether a Decline must say why.
    pub decline_reason_required: bool,
    /// Whether only the signed-in assignee may answer through their link (`sign_in: "required"`).
    pub sign_in_required: bool,
}

impl Page {
    /// Whether the page is answered by named assignees, each through their own link.
    #[must_use]
    pub fn is_assigned(&self) -> bool {
        self.approvals_required.is_some()
    }

    /// Whether the link has expired at `now_ms`.
    #[must_use]
    pub fn is_expired(&self, now_ms: i64) -> bool {
        now_ms >= self.expires_at_ms
    }

    /// Whether a submitted page's receipt has been kept `lifetime` after the answer at `now_ms`
    /// (and is no longer shown). A page not submitted has no receipt to expire.
    #[must_use]
    pub fn receipt_expired(&self, now_ms: i64, lifetime: std::time::Duration) -> bool {
        let lifetime_ms = i64::try_from(lifetime.as_millis()).unwrap_or(i64::MAX);
        self.submitted_at_ms
            .is_some_and(|submitted| now_ms >= submitted.saturating_add(lifetime_ms))
    }
}

/// What it takes to store a page.
#[derive(Clone, Debug)]
pub struct NewPage {
    /// The hash of the link's token.
    pub token_hash: TokenHash,
    /// The run that will wait on it.
    pub run_id: Option<RunId>,
    /// The page tree.
    pub tree: serde_json::Value,
    /// The response schema, if the page has a form.
    pub schema: Option<serde_json::Value>,
    /// The data snapshot.
    pub data: serde_json::Value,
    /// The components it was generated with (what it is rendered with); `None` renders it with
    /// the runner's page catalog.
    pub component_set: Option<ComponentSet>,
    /// Expiry, unix ms.
    pub expires_at_ms: i64,
}

/// What a recorded submission wrote: the page's new facts, not a copy of the page the caller
/// validated against (the statement returns only these).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recorded {
    /// The page answered.
    pub page_id: PageId,
    /// The run it resumed, if the page belongs to one.
    pub run_id: Option<RunId>,
    /// When (unix ms).
    pub submitted_at_ms: i64,
}

/// The outcome of a submission attempt; exactly one attempt per page ever gets `Submitted`.
#[derive(Clone, Debug, PartialEq)]
pub enum SubmitOutcome {
    /// This submission was recorded and the run (if any) made ready.
    Submitted(Recorded),
    /// Someone submitted first; here is the page with that response (for the receipt).
    AlreadySubmitted(Box<Page>),
    /// The link expired before this submission.
    Expired,
    /// The link was revoked.
    Revoked,
    /// No page has this token.
    NotFound,
}
