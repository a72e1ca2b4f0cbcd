//! The execution header: the deterministic account of what ran, put before every reply.
//!
//! Code builds it from the steps it executed, refused or paused — not from anything the model
//! wrote — and it always comes first, so a narrative cannot hide a failure (DESIGN.md §8, the
//! "error visibility" rule). Errors are shown, truncated to [`MAX_ERROR_CHARS`] so a huge upstream
//! body cannot flood the chat. The text uses words in brackets rather than icons so it reads the
//! same in a screen reader, a log line and a test assertion.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    audit::ExecutionId,
    confirm::{ConfirmationId, OperationHash},
};

/// The most characters of one error the header shows.
pub const MAX_ERROR_CHARS: usize = 300;

/// What a step was for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepRole {
    /// A readonly call.
    Read,
    /// A readonly call that showed the items a later change touches.
    Preview,
    /// A call that changes state.
    Mutation,
}

impl StepRole {
    /// The stored and shown name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Preview => "preview",
            Self::Mutation => "mutation",
        }
    }

    /// Parses the stored name.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Read, Self::Preview, Self::Mutation]
            .into_iter()
            .find(|role| role.as_str() == text)
    }
}

/// How a step ended (or where it stands).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// It ran and the site said yes.
    Succeeded,
    /// It ran (or part of it did) and failed.
    Failed,
    /// Code refused it before any request.
    Refused,
    /// It waits for a person's confirmation; nothing was sent.
    AwaitingConfirmation,
    /// A person declined it; nothing was sent.
    Declined,
    /// It was stopped between requests.
    Cancelled,
    /// It is running.
    Running,
    /// The process running it stopped before it finished; it was not resumed.
    Interrupted,
}

impl CallStatus {
    /// The bracketed word the header shows.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::Succeeded => "[ok]",
            Self::Failed => "[failed]",
            Self::Refused => "[refused]",
            Self::AwaitingConfirmation => "[awaiting confirmation]",
            Self::Declined => "[declined]",
            Self::Cancelled => "[cancelled]",
            Self::Running => "[running]",
            Self::Interrupted => "[interrupted]",
        }
    }
}

/// Progress of a chunked call.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkProgress {
    /// Chunks finished.
    pub chunks_done: usize,
    /// Chunks in all.
    pub chunks_total: usize,
    /// Items in finished chunks.
    pub items_done: usize,
    /// Items in all.
    pub items_total: usize,
    /// The planned chunk sizes.
    pub sizes: Vec<usize>,
}

/// One step of a turn, as code saw it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The operation.
    pub operation: String,
    /// What it was for.
    pub role: StepRole,
    /// How it ended.
    pub status: CallStatus,
    /// A short fact line, e.g. `23 items` or `247 items in 3 chunks (100+100+47)`.
    pub detail: String,
    /// The error or refusal reason, truncated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The audit-trail row, when the call reached the executor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_id: Option<ExecutionId>,
    /// The confirmation it waits on or used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmation_id: Option<ConfirmationId>,
    /// The hash the confirmation is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<OperationHash>,
    /// Chunk progress, for chunked calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunks: Option<ChunkProgress>,
    /// The site's answer (for result views); not shown in the header text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
}

impl Step {
    /// A step with no optional parts.
    #[must_use]
    pub fn new(
        operation: impl Into<String>,
        role: StepRole,
        status: CallStatus,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            operation: operation.into(),
            role,
            status,
            detail: detail.into(),
            error: None,
            execution_id: None,
            confirmation_id: None,
            hash: None,
            chunks: None,
            result: None,
        }
    }

    /// Adds an error, truncated to [`MAX_ERROR_CHARS`].
    #[must_use]
    pub fn with_error(mut self, error: impl AsRef<str>) -> Self {
        self.error = Some(truncate(error.as_ref()));
        self
    }
}

/// Cuts `text` to [`MAX_ERROR_CHARS`] characters, marking the cut.
#[must_use]
pub fn truncate(text: &str) -> String {
    let single_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if single_line.chars().count() <= MAX_ERROR_CHARS {
        return single_line;
    }
    let mut cut: String = single_line.chars().take(MAX_ERROR_CHARS).collect();
    cut.push_str("… (truncated)");
    cut
}

/// The header of one reply.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ExecutionHeader {
    /// The steps, in order.
    pub steps: Vec<Step>,
}

impl ExecutionHeader {
    /// The header over `steps`.
    #[must_use]
    pub fn new(steps: Vec<Step>) -> Self {
        Self { steps }
    }

    /// Whether any step failed or was refused.
    #[must_use]
    pub fn has_errors(&self) -> bool {
        self.steps
            .iter()
            .any(|step| matches!(step.status, CallStatus::Failed | CallStatus::Refused))
    }

    /// The header as text: a count line, then one line per step with its status and error.
    #[must_use]
    pub fn render(&self) -> String {
        if self.steps.is_empty() {
            return "Execution: no operations ran.".to_owned();
        }
        let count = |status: CallStatus| {
            self.steps
                .iter()
                .filter(|step| step.status == status)
                .count()
        };
        let mut tallies = Vec::new();
        for (status, word) in [
            (CallStatus::Succeeded, "succeeded"),
            (CallStatus::Failed, "failed"),
            (CallStatus::Refused, "refused"),
            (CallStatus::AwaitingConfirmation, "awaiting confirmation"),
            (CallStatus::Declined, "declined"),
            (CallStatus::Cancelled, "cancelled"),
            (CallStatus::Running, "running"),
        ] {
            let number = count(status);
            if number > 0 {
                tallies.push(format!("{number} {word}"));
            }
        }
        let plural = if self.steps.len() == 1 {
            "step"
        } else {
            "steps"
        };
        let mut text = format!(
            "Execution: {} {plural} ({})",
            self.steps.len(),
            tallies.join(", ")
        );
        for (position, step) in self.steps.iter().enumerate() {
            let _ = write!(
                text,
                "\n{}. {} {} ({})",
                position + 1,
                step.status.label(),
                step.operation,
                step.role.as_str()
            );
            if !step.detail.is_empty() {
                let _ = write!(text, ": {}", step.detail);
            }
            if let Some(hash) = &step.hash {
                let _ = write!(text, "; hash {}", hash.short());
            }
            if let Some(error) = &step.error {
                let _ = write!(text, " | error: {error}");
            }
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_lists_every_step_with_its_status_and_error() {
        let header = ExecutionHeader::new(vec![
            Step::new(
                "searchItems",
                StepRole::Preview,
                CallStatus::Succeeded,
                "23 items",
            ),
            Step {
                hash: Some(OperationHash("0123456789abcdef".into())),
                ..Step::new(
                    "bulkDeleteItems",
                    StepRole::Mutation,
                    CallStatus::AwaitingConfirmation,
                    "23 items",
                )
            },
            Step::new(
                "bulkUpdateItems",
                StepRole::Mutation,
                CallStatus::Failed,
                "chunk 2 of 3 failed",
            )
            .with_error("HTTP 500: boom"),
        ]);
        assert_eq!(
            header.render(),
            "Execution: 3 steps (1 succeeded, 1 failed, 1 awaiting confirmation)\n\
             1. [ok] searchItems (preview): 23 items\n\
             2. [awaiting confirmation] bulkDeleteItems (mutation): 23 items; hash 0123456789ab\n\
             3. [failed] bulkUpdateItems (mutation): chunk 2 of 3 failed | error: HTTP 500: boom"
        );
        assert!(header.has_errors());
        assert_eq!(
            ExecutionHeader::default().render(),
            "Execution: no operations ran."
        );
    }

    #[test]
    fn long_errors_are_truncated_not_dropped() {
        let step =
            Step::new("x", StepRole::Read, CallStatus::Failed, "").with_error("e".repeat(5000));
        let error = step.error.unwrap_or_default();
        assert!(error.ends_with("… (truncated)"));
        assert_eq!(
            error.chars().count(),
            MAX_ERROR_CHARS + "… (truncated)".chars().count()
        );
    }
}
