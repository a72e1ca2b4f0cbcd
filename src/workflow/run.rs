//! A workflow run as the rest of the code sees it.

use std::{fmt, str::FromStr};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A run's identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(pub Uuid);

impl RunId {
    /// A fresh random id.
    #[must_use]
    pub fn new() -> Self {
        Self(Uuid::new_v4())
    }
}

impl Default for RunId {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(formatter)
    }
}

impl FromStr for RunId {
    type Err = uuid::Error;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Uuid::parse_str(text).map(Self)
    }
}

/// Where a run is in its life (DESIGN.md §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Waiting for a runner to claim it.
    Ready,
    /// Claimed by a runner holding its lease.
    Running,
    /// Suspended until a person (or a timeout) answers.
    Waiting,
    /// Finished every step.
    Succeeded,
    /// Stopped by an error that retries did not fix.
    Failed,
    /// Stopped on request.
    Cancelled,
}

impl RunStatus {
    /// Every status, in life order.
    pub const ALL: [Self; 6] = [
        Self::Ready,
        Self::Running,
        Self::Waiting,
        Self::Succeeded,
        Self::Failed,
        Self::Cancelled,
    ];

    /// The stored spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ready => "ready",
            Self::Running => "running",
            Self::Waiting => "waiting",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    /// Parses the stored spelling.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|status| status.as_str() == text)
    }
}

/// A run with its current state.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Run {
    /// Identity.
    pub id: RunId,
    /// The registered workflow's name.
    pub workflow: String,
    /// Where it is in its life.
    pub status: RunStatus,
    /// Index of the next step to run.
    pub cursor: i64,
    /// The run's state, as JSON.
    pub state: serde_json::Value,
    /// How many times the current step has been attempted.
    pub attempts: i64,
    /// The last error, when it failed.
    pub error: Option<String>,
    /// Creation time, unix ms.
    pub created_at_ms: i64,
    /// Last change, unix ms.
    pub updated_at_ms: i64,
}

/// What it takes to start a run.
#[derive(Clone, Debug)]
pub struct NewRun {
    /// The registered workflow's name.
    pub workflow: String,
    /// The initial state.
    pub state: serde_json::Value,
    /// The initial status: `Ready` to be claimed, `Waiting` when it starts by asking a person.
    pub status: RunStatus,
}
