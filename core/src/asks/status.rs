//! An ask as `GET /api/asks/{id}` shows it, read from its run, its page and its steps.
//!
//! | status | meaning |
//! |---|---|
//! | `pending` | the page is being made |
//! | `waiting` | the link is open |
//! | `submitted` | the person answered (with assignees: enough of them approved); `response` is the typed value |
//! | `declined` | the person declined (with assignees: so many declined that the approvals can no longer come) |
//! | `expired` | the link expired unanswered (`on_timeout: cancel`, the default; `decline` reports `declined`, `continue` `submitted` with the `default` answer) |
//! | `cancelled` | cancelled (by an admin, or the person pressed Cancel) |
//! | `failed` | the page could not be made, or the deadline passed with `on_timeout: fail`; `error` says why |
//!
//! `callback` (when the ask has a `callback_url`) is `pending` until the person answers (or the
//! link expires, or the person presses Cancel: the callback reports those too), then `sending`,
//! `retrying` with the last error, `delivered`, or `failed` when the retries ran out. The last
//! error is the receiver's status or a fixed reason ([`Undelivered`]), never its reply.

use serde::Serialize;
use serde_json::Value;

use super::{
    request::AskTimeout,
    undelivered::Undelivered,
    workflow::{AskState, ASK_WORKFLOW, CALLBACK_STEP},
    AskError,
};
use crate::{
    pages::{
        history::{AskEvent, EventKind},
        links::{AssigneeLink, PageLinks},
        page::PageStatus,
        people::AnswerRecord,
    },
    store::{now_ms, Store},
    workflow::{
        overview::{run_overview, RunOverview},
        run::{RunFilter, RunId, RunStatus, StepStatus},
        step::{is_cancelled_response, Unanswered},
    },
};

/// Where an ask is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AskStatus {
    /// The page is being made.
    Pending,
    /// The link is open.
    Waiting,
    /// The person answered.
    Submitted,
    /// The person declined, or enough assignees did.
    Declined,
    /// The link expired unanswered.
    Expired,
    /// Cancelled before an answer.
    Cancelled,
    /// The page could not be made.
    Failed,
}

impl AskStatus {
    /// Every status, in the order the table above lists them.
    pub const ALL: [Self; 7] = [
        Self::Pending,
        Self::Waiting,
        Self::Submitted,
        Self::Declined,
        Self::Expired,
        Self::Cancelled,
        Self::Failed,
    ];

    /// Its name as the API writes it (`waiting`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Waiting => "waiting",
            Self::Submitted => "submitted",
            Self::Declined => "declined",
            Self::Expired => "expired",
            Self::Cancelled => "cancelled",
            Self::Failed => "failed",
        }
    }

    /// The status named `raw`, if any.
    #[must_use]
    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|status| status.as_str() == raw)
    }

    /// Whether an answer may still come (the page is being made, or its link is open).
    #[must_use]
    pub fn is_open(self) -> bool {
        matches!(self, Self::Pending | Self::Waiting)
    }
}

/// The callback's delivery.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct CallbackView {
    /// `pending`, `retrying`, `delivered` or `failed`.
    pub state: &'static str,
    /// Delivery attempts so far.
    pub attempts: i64,
    /// The last attempt's error, while not delivered: `the receiver answered 503`, `could not
    /// deliver` or the refusal of a URL that no longer resolves to public addresses.
    pub last_error: Option<String>,
}

/// An ask, for the API.
#[derive(Clone, Debug, PartialEq, Serialize, utoipa::ToSchema)]
pub struct AskView {
    /// Its id (its run's id).
    pub id: String,
    /// Where it is.
    pub status: AskStatus,
    /// A fresh link: only in the answer to whoever created it (`POST /api/asks`) or asked for
    /// a new one (`POST /api/asks/{id}/reissue`); `null` everywhere else, since only the
    /// token's hash is stored. Always `null` for an ask with assignees, which has no shared
    /// link: see `links`.
    pub link: Option<String>,
    /// For an ask with assignees: each person's own link, answered exactly where `link` would
    /// be (and only there); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub links: Option<Vec<AssigneeLink>>,
    /// The people the ask is for, in its order (absent for one anonymous link).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schema(required = false)]
    pub assignees: Vec<String>,
    /// With assignees: how many must approve.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub approvals_required: Option<i64>,
    /// When the link expires, unix ms (once the page exists).
    pub expires_at_ms: Option<i64>,
    /// The typed response, once submitted (with assignees: the answer that completed the
    /// approvals).
    pub response: Option<Value>,
    /// When it was settled, unix ms.
    pub submitted_at_ms: Option<i64>,
    /// Every answer given, oldest first, one per person: who, when, and the response or the
    /// reason they declined.
    #[schema(value_type = Vec<crate::pages::people::AnswerRecordSchema>)]
    pub answers: Vec<AnswerRecord>,
    /// What happened to it, oldest first: created, notified, reminded, escalated, each
    /// answer, the deadline (see `pages::history`).
    #[schema(value_type = Vec<crate::pages::history::AskEventSchema>)]
    pub history: Vec<AskEvent>,
    /// Why it failed.
    pub error: Option<String>,
    /// The callback's delivery, when the ask has a `callback_url`.
    pub callback: Option<CallbackView>,
}

impl AskView {
    /// Puts fresh links in the view, the one place they are shown: `link` for an ask's one
    /// link, `links` for its assignees' (then `link` stays `null`).
    pub fn set_links(&mut self, links: Option<PageLinks>) {
        match links {
            Some(PageLinks::Shared(link)) => self.link = Some(link),
            Some(PageLinks::Assigned(links)) => self.links = Some(links),
            None if !self.assignees.is_empty() => self.links = None,
            None => self.link = None,
        }
    }
}

/// Reads ask `id`.
///
/// # Errors
/// [`AskError::NotFound`] for an unknown id or a run of another workflow; database failures.
pub async fn ask_status(store: &Store, id: &str) -> Result<AskView, AskError> {
    let id: RunId = id.parse().map_err(|_| AskError::NotFound)?;
    let overview = run_overview(store, id).await?;
    if overview.run.workflow != ASK_WORKFLOW {
        return Err(AskError::NotFound);
    }
    Ok(view(&overview))
}

/// An ask in a list: its view and what it asks.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AskSummary {
    /// The ask as [`ask_status`] shows it.
    #[serde(flatten)]
    pub view: AskView,
    /// What the person is asked (the prompt rendered over the ask's data).
    pub prompt: String,
}

/// How many of the newest asks [`list_asks`] reads.
pub const LIST_LIMIT: i64 = 100;

/// The newest [`LIST_LIMIT`] asks, newest first, only those in `status` when given.
///
/// # Errors
/// Database failures.
pub async fn list_asks(
    store: &Store,
    status: Option<AskStatus>,
) -> Result<Vec<AskSummary>, AskError> {
    let listed = store
        .list_runs(&RunFilter {
            workflow: Some(ASK_WORKFLOW.to_owned()),
            limit: LIST_LIMIT,
            ..RunFilter::default()
        })
        .await?;
    let mut asks = Vec::new();
    for run in listed.runs {
        let overview = run_overview(store, run.id).await?;
        let view = view(&overview);
        if status.is_some_and(|wanted| wanted != view.status) {
            continue;
        }
        let prompt = serde_json::from_value::<AskState>(overview.run.state.clone())
            .map(|state| state.prompt)
            .unwrap_or_default();
        asks.push(AskSummary { view, prompt });
    }
    Ok(asks)
}

/// The API's view of an ask's run.
#[must_use]
pub fn view(overview: &RunOverview) -> AskView {
    let run = &overview.run;
    let page = overview.pages.first();
    let stored = page.and_then(|page| page.response.as_ref());
    let pressed_cancel = stored.is_some_and(is_cancelled_response);
    let declined = stored.and_then(Unanswered::of) == Some(Unanswered::Declined);
    let response = stored.filter(|_| !pressed_cancel).cloned();
    let now = now_ms();
    let expired = page.is_some_and(|page| page.status == PageStatus::Open && page.is_expired(now));
    let history = page
        .map(|page| overview.history_of(page.id).to_vec())
        .unwrap_or_default();
    // The deadline of an open page may have settled the ask as `on_timeout` said.
    let deadline = history
        .iter()
        .find(|event| event.kind == EventKind::Deadline)
        .and_then(|event| event.detail.as_deref());
    let (response, declined) = match (response, deadline) {
        (None, Some("continue")) => (
            serde_json::from_value::<AskState>(run.state.clone())
                .ok()
                .and_then(|state| match state.on_timeout {
                    AskTimeout::Continue(default) => Some(default),
                    _ => None,
                }),
            declined,
        ),
        (None, Some("decline")) => (None, true),
        (response, _) => (response, declined),
    };
    let expiry_ends_it = serde_json::from_value::<AskState>(run.state.clone())
        .map_or(true, |state| state.on_timeout == AskTimeout::Cancel);
    let status = if response.is_some() {
        AskStatus::Submitted
    } else if declined {
        AskStatus::Declined
    } else if deadline == Some("fail") && run.status == RunStatus::Failed {
        AskStatus::Failed
    } else if expired && run.status == RunStatus::Waiting && !expiry_ends_it {
        // The page ran out; the deadline the run waits on (a moment later) settles it.
        AskStatus::Waiting
    } else if expired {
        AskStatus::Expired
    } else if pressed_cancel {
        // Already while the callback that says so is still being delivered.
        AskStatus::Cancelled
    } else {
        match run.status {
            RunStatus::Cancelled => AskStatus::Cancelled,
            RunStatus::Failed => AskStatus::Failed,
            _ if overview.waiting_page.is_some() => AskStatus::Waiting,
            _ if page.is_some_and(|page| page.status == PageStatus::Revoked) => {
                AskStatus::Cancelled
            }
            _ => AskStatus::Pending,
        }
    };
    let wants_callback = serde_json::from_value::<AskState>(run.state.clone())
        .ok()
        .is_some_and(|state| state.callback_url.is_some());
    let callback = wants_callback.then(|| {
        let step = overview
            .steps
            .iter()
            .find(|step| step.name == CALLBACK_STEP);
        let state = match (step.map(|step| step.status), run.status) {
            (Some(StepStatus::Succeeded), _) => "delivered",
            (Some(_), RunStatus::Failed) => "failed",
            (Some(StepStatus::Failed), _) => "retrying",
            (Some(StepStatus::Running), _) => "sending",
            (None, _) => "pending",
        };
        CallbackView {
            state,
            attempts: step.map_or(0, |step| step.attempts),
            last_error: step
                .filter(|step| step.status != StepStatus::Succeeded)
                .and_then(|step| step.error.as_deref())
                .map(Undelivered::shown),
        }
    });
    AskView {
        id: run.id.to_string(),
        status,
        link: None,
        links: None,
        assignees: page
            .map(|page| overview.assignees_of(page.id))
            .unwrap_or_default()
            .iter()
            .map(|assignee| assignee.email.clone())
            .collect(),
        approvals_required: page.and_then(|page| page.approvals_required),
        expires_at_ms: page.map(|page| page.expires_at_ms),
        response,
        submitted_at_ms: page.and_then(|page| page.submitted_at_ms),
        answers: page
            .map(|page| overview.answers_on(page))
            .unwrap_or_default(),
        history,
        error: (status == AskStatus::Failed)
            .then(|| run.error.clone())
            .flatten(),
        callback,
    }
}
