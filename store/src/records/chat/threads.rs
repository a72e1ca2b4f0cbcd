//! Micro-threads: the topics of one chat session, each with intent, slots, status and summary.
//!
//! A session holds several requests at once ("delete the completed items", then "any luck?",
//! then "also show me the open ones"); code, not the model, decides which thread each turn
//! belongs to ([`super::routing`]) and moves threads through their statuses. A thread that asked
//! something carries a [`PendingQuestion`] with the answer type it expects, so an answer is only
//! attached when it fits.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{confirm::ConfirmationId, SessionId};

uuid_id! {
    /// A thread's id.
    #[derive(PartialOrd, Ord, utoipa::ToSchema)]
    pub struct ThreadId;
}

/// Where a thread is (the deterministic-orchestration status set).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ThreadStatus {
    /// We asked a question and expect an answer.
    WaitingForUser,
    /// Tools are running.
    InProgress,
    /// Cannot go on without permission or missing information.
    Blocked,
    /// A plan waits for approval (not done).
    WorkflowProposed,
    /// Finished.
    Done,
    /// Failed or stopped.
    Failed,
}

impl ThreadStatus {
    /// Every status.
    pub const ALL: [Self; 6] = [
        Self::WaitingForUser,
        Self::InProgress,
        Self::Blocked,
        Self::WorkflowProposed,
        Self::Done,
        Self::Failed,
    ];

    /// The stored name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::WaitingForUser => "waiting_for_user",
            Self::InProgress => "in_progress",
            Self::Blocked => "blocked",
            Self::WorkflowProposed => "workflow_proposed",
            Self::Done => "done",
            Self::Failed => "failed",
        }
    }

    /// Parses the stored name.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|status| status.as_str() == text)
    }

    /// Whether the thread is finished (done or failed).
    #[must_use]
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Done | Self::Failed)
    }
}

/// The answer type a pending question expects.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ExpectedType {
    /// Yes or no.
    YesNo,
    /// A number.
    Number,
    /// A date.
    Date,
    /// One of these options.
    OneOf {
        /// The options.
        options: Vec<String>,
    },
    /// Any text.
    FreeText,
}

/// A question a thread is waiting on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingQuestion {
    /// The slot the answer fills (`approval` for confirmations).
    pub key: String,
    /// The answer type that fits.
    pub expected: ExpectedType,
    /// The question as asked.
    pub prompt: String,
    /// The confirmation a yes/no answers, for approval questions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmation_id: Option<ConfirmationId>,
    /// When it was asked, unix ms.
    pub asked_at_ms: i64,
}

/// One micro-thread.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Thread {
    /// Its id.
    pub id: ThreadId,
    /// The session it belongs to.
    pub session_id: SessionId,
    /// What it is about, e.g. `delete items`.
    pub intent: String,
    /// Intent-specific values (filters, the request text, answers).
    pub slots: Map<String, Value>,
    /// Where it is.
    pub status: ThreadStatus,
    /// The question it waits on, if any.
    pub pending_question: Option<PendingQuestion>,
    /// One to three lines for a person.
    pub summary: String,
    /// Created, unix ms.
    pub created_at_ms: i64,
    /// Last changed, unix ms.
    pub updated_at_ms: i64,
}

impl Thread {
    /// A new in-progress thread for `intent`.
    #[must_use]
    pub fn new(
        session_id: SessionId,
        intent: impl Into<String>,
        summary: impl Into<String>,
        now_ms: i64,
    ) -> Self {
        Self {
            id: ThreadId::new(),
            session_id,
            intent: intent.into(),
            slots: Map::new(),
            status: ThreadStatus::InProgress,
            pending_question: None,
            summary: summary.into(),
            created_at_ms: now_ms,
            updated_at_ms: now_ms,
        }
    }
}
