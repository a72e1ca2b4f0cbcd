//! A workflow run as the rest of the code sees it: the run, its steps, and the lease a runner
//! holds on it. These are the domain types the store reads and writes (`store/runs.rs`).

use std::str::FromStr;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

uuid_id! {
    /// A run's identity.
    #[derive(utoipa::ToSchema)]
    pub struct RunId;
}

impl FromStr for RunId {
    type Err = uuid::Error;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Uuid::parse_str(text).map(Self)
    }
}

/// Where a run is in its life (DESIGN.md §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
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
    /// The last error: why it failed, or why the current step's last attempt failed.
    pub error: Option<String>,
    /// The step that failed the run, when it failed.
    pub failed_step: Option<StepRef>,
    /// What a waiting run waits for.
    pub waiting: Option<WaitInfo>,
    /// The runner holding the run, while it is running.
    pub lease_owner: Option<String>,
    /// When that lease runs out, unix ms.
    pub lease_expires_at_ms: Option<i64>,
    /// A ready run is not claimed before this instant (retry backoff), unix ms.
    pub next_attempt_at_ms: i64,
    /// Creation time, unix ms.
    pub created_at_ms: i64,
    /// Last change, unix ms.
    pub updated_at_ms: i64,
    /// When it succeeded, failed or was cancelled, unix ms.
    pub finished_at_ms: Option<i64>,
    /// The digest of the YAML file it started on (`sha256:…`); `None` for Rust workflows.
    pub definition_digest: Option<String>,
}

impl Run {
    /// Whether the run can never change again.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        matches!(
            self.status,
            RunStatus::Succeeded | RunStatus::Failed | RunStatus::Cancelled
        )
    }
}

/// A step named by its position and its name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepRef {
    /// Its index in the workflow, from 0.
    pub index: i64,
    /// Its name.
    pub name: String,
}

/// What a waiting run waits for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitInfo {
    /// The page whose submission resumes it; none for a plain timer.
    pub page_id: Option<Uuid>,
    /// When the wait times out, unix ms; none to wait for ever.
    pub deadline_ms: Option<i64>,
    /// What the timeout does.
    pub on_timeout: TimeoutAction,
}

/// What happens to a waiting run at its deadline (the stored half of `OnTimeout`; a default
/// response to continue with lives in the waiting step's output).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeoutAction {
    /// The run fails, naming the waiting step.
    Fail,
    /// The run becomes ready and the next step gets the default response.
    Continue,
    /// The run is cancelled.
    Cancel,
}

impl TimeoutAction {
    /// The stored spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fail => "fail",
            Self::Continue => "continue",
            Self::Cancel => "cancel",
        }
    }

    /// Parses the stored spelling.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Fail, Self::Continue, Self::Cancel]
            .into_iter()
            .find(|action| action.as_str() == text)
    }
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

/// Where one step of a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepStatus {
    /// An attempt is under way (or was, when its runner died).
    Running,
    /// Finished; it never runs again.
    Succeeded,
    /// The last attempt failed; the run retries it or has failed.
    Failed,
}

impl StepStatus {
    /// The stored spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
        }
    }

    /// Parses the stored spelling.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Running, Self::Succeeded, Self::Failed]
            .into_iter()
            .find(|status| status.as_str() == text)
    }
}

/// One step of a run as recorded: the run's timeline is the list of these.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunStep {
    /// The run it belongs to.
    pub run_id: RunId,
    /// Its index in the workflow, from 0.
    pub index: i64,
    /// Its name.
    pub name: String,
    /// Where it is.
    pub status: StepStatus,
    /// What it was handed: the previous step's page or response (null when nothing).
    pub input: Option<serde_json::Value>,
    /// What it handed to the next step (tagged JSON, see `workflow::step::StepOutput`).
    pub output: Option<serde_json::Value>,
    /// Its last error.
    pub error: Option<String>,
    /// How many times it started.
    pub attempts: i64,
    /// When its last attempt started, unix ms.
    pub started_at_ms: i64,
    /// When it last finished or failed, unix ms.
    pub finished_at_ms: Option<i64>,
}

/// A runner's hold on a run: who, which claim (the fencing epoch) and until when.
///
/// Every write a runner makes checks all three, so a runner whose lease expired (and whose run
/// another runner may have claimed since) cannot commit anything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The run held.
    pub run_id: RunId,
    /// The runner holding it.
    pub owner: String,
    /// Bumped by every claim, so an older claim by the same owner is stale too.
    pub epoch: i64,
    /// When it runs out unless renewed, unix ms.
    pub expires_at_ms: i64,
}

/// A run just claimed, with the lease to act on it.
#[derive(Clone, Debug, PartialEq)]
pub struct ClaimedRun {
    /// The run as claimed (status `running`).
    pub run: Run,
    /// The lease to pass to every later write.
    pub lease: Lease,
}

/// Whether a leased write happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum LeaseOutcome {
    /// Written.
    Committed,
    /// The lease had expired, been taken over, or the run was cancelled: nothing was written.
    LeaseLost,
}

/// Where a run goes after a step succeeds.
#[derive(Clone, Debug, PartialEq)]
pub enum NextRun {
    /// Keep running under the same lease, at the next step.
    Continue,
    /// Keep running under the same lease, at this later step (a declarative workflow's
    /// `branch` or `next`); the steps in between are skipped, never run.
    Jump(i64),
    /// Suspend until the page is submitted or the deadline passes (ready at once if the page
    /// was already submitted).
    Wait(WaitInfo),
    /// That was the last step: the run succeeded.
    Finish,
    /// The step handled a wait that ended unanswered: the run ends cancelled.
    Cancel,
}

/// A step's successful result, committed with the run's new state in one transaction.
#[derive(Clone, Debug, PartialEq)]
pub struct StepCompletion {
    /// The step's index; must be the run's cursor.
    pub index: i64,
    /// The run's state after the step.
    pub state: serde_json::Value,
    /// What the next step is handed.
    pub output: serde_json::Value,
    /// Where the run goes.
    pub next: NextRun,
}

/// Which runs to list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFilter {
    /// Only runs in this status.
    pub status: Option<RunStatus>,
    /// Only runs of this workflow.
    pub workflow: Option<String>,
    /// At most this many (clamped to 1..=500).
    pub limit: i64,
    /// Skip this many, newest first.
    pub offset: i64,
}

impl Default for RunFilter {
    fn default() -> Self {
        Self {
            status: None,
            workflow: None,
            limit: 50,
            offset: 0,
        }
    }
}

/// One page of the runs list, newest first.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunList {
    /// The runs on this page.
    pub runs: Vec<Run>,
    /// How many runs match the filter in all.
    pub total: i64,
}

/// When a runner next has something to do, for sleeping until then.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NextDue {
    /// The earliest instant a ready run becomes due or a running run's lease runs out, unix ms.
    pub claimable_at_ms: Option<i64>,
    /// The earliest deadline of a waiting run, unix ms.
    pub wait_deadline_ms: Option<i64>,
}
