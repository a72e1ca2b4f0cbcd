//! The audit trail of tool calls: one [`Execution`] per call code ran, refused or cancelled.
//!
//! An execution is recorded *before* any request is sent, in the same transaction that consumes
//! the confirmation it relies on (`Store::begin_execution`), and finished afterwards with what
//! happened. Refusals are recorded too (status `refused`, with the reason), so "refused and
//! logged" leaves a row, not only a log line. Readonly calls keep the item ids they showed, which
//! is what the policy's preview check reads.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use super::{
    confirm::{ConfirmationId, OperationHash},
    header::StepRole,
    threads::ThreadId,
    SessionId,
};

uuid_id! {
    /// An execution's id.
    pub struct ExecutionId;
}

/// Where an execution is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionStatus {
    /// Requests are being sent.
    Running,
    /// Every request succeeded.
    Succeeded,
    /// A request failed.
    Failed,
    /// Stopped between requests.
    Cancelled,
    /// Code refused it; nothing was sent.
    Refused,
    /// The process running it stopped (a crash or a restart) before it finished; what it did
    /// before is kept, and it is never resumed (`chat/interrupted.rs`).
    Interrupted,
}

impl ExecutionStatus {
    /// The stored name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
            Self::Refused => "refused",
            Self::Interrupted => "interrupted",
        }
    }

    /// Parses the stored name.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Running,
            Self::Succeeded,
            Self::Failed,
            Self::Cancelled,
            Self::Refused,
            Self::Interrupted,
        ]
        .into_iter()
        .find(|status| status.as_str() == text)
    }
}

/// What let a call run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Approval {
    /// No rule asked for one.
    NotNeeded,
    /// An approved confirmation for this exact hash, consumed by this execution.
    Confirmation {
        /// The confirmation.
        id: ConfirmationId,
    },
    /// An approved group confirmation covering this exact call among the several calls of one
    /// operation a turn added up (consumed once, before the first of them ran).
    Group {
        /// The group confirmation.
        id: ConfirmationId,
    },
    /// A grant ("always for this operation" or "for this session").
    Grant {
        /// The operation the grant names, or `*` for the session.
        operation: String,
    },
    /// Refused: nothing was approved.
    Refused,
}

impl Approval {
    /// The stored text.
    #[must_use]
    pub fn as_text(&self) -> String {
        match self {
            Self::NotNeeded => "not_needed".to_owned(),
            Self::Confirmation { id } => format!("confirmation:{id}"),
            Self::Group { id } => format!("group:{id}"),
            Self::Grant { operation } => format!("grant:{operation}"),
            Self::Refused => "refused".to_owned(),
        }
    }

    /// Parses the stored text.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "not_needed" => Some(Self::NotNeeded),
            "refused" => Some(Self::Refused),
            other => {
                if let Some(id) = other.strip_prefix("confirmation:") {
                    return Uuid::parse_str(id).ok().map(|id| Self::Confirmation {
                        id: ConfirmationId(id),
                    });
                }
                if let Some(id) = other.strip_prefix("group:") {
                    return Uuid::parse_str(id).ok().map(|id| Self::Group {
                        id: ConfirmationId(id),
                    });
                }
                other.strip_prefix("grant:").map(|operation| Self::Grant {
                    operation: operation.to_owned(),
                })
            }
        }
    }
}

/// An execution to record before any request is sent.
#[derive(Clone, Debug, PartialEq)]
pub struct NewExecution {
    /// The session.
    pub session_id: SessionId,
    /// The thread.
    pub thread_id: ThreadId,
    /// The operation.
    pub operation: String,
    /// The exact arguments.
    pub arguments: Value,
    /// Read, preview or mutation.
    pub role: StepRole,
    /// What let it run (the confirmation is consumed in the same transaction).
    pub approval: Approval,
    /// Items it touches.
    pub items_total: usize,
    /// Requests it will send.
    pub chunks_total: usize,
    /// `Running`, or `Refused` with `error` for a refusal.
    pub status: ExecutionStatus,
    /// The refusal reason.
    pub error: Option<String>,
}

impl NewExecution {
    /// The hash of the call.
    #[must_use]
    pub fn hash(&self) -> OperationHash {
        super::confirm::operation_hash(&self.operation, &self.arguments)
    }
}

/// How an execution ended.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecutionEnd {
    /// Succeeded, failed or cancelled.
    pub status: ExecutionStatus,
    /// Items in successful requests.
    pub items_done: usize,
    /// Successful requests.
    pub chunks_done: usize,
    /// Ids a readonly call showed.
    pub item_ids: Option<Vec<String>>,
    /// The site's answer (or the per-chunk account).
    pub result: Option<Value>,
    /// The error, shown in the header.
    pub error: Option<String>,
}

/// A recorded execution.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Execution {
    /// Its id.
    pub id: ExecutionId,
    /// The session.
    pub session_id: SessionId,
    /// The thread.
    pub thread_id: ThreadId,
    /// The operation.
    pub operation: String,
    /// The exact arguments.
    pub arguments: Value,
    /// Their hash.
    pub hash: OperationHash,
    /// Read, preview or mutation.
    pub role: StepRole,
    /// What let it run.
    pub approval: Approval,
    /// Where it is.
    pub status: ExecutionStatus,
    /// Items it touches.
    pub items_total: usize,
    /// Items done.
    pub items_done: usize,
    /// Requests planned.
    pub chunks_total: usize,
    /// Requests done.
    pub chunks_done: usize,
    /// Ids a readonly call showed.
    pub item_ids: Option<Vec<String>>,
    /// The site's answer.
    pub result: Option<Value>,
    /// The error or refusal reason.
    pub error: Option<String>,
    /// Recorded, unix ms.
    pub created_at_ms: i64,
    /// Finished, unix ms.
    pub finished_at_ms: Option<i64>,
}
