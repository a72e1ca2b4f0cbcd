//! What steps hand each other: step errors, pages, waits and responses.
//!
//! A step's output reaches the next step only (DESIGN.md §7). The builder enforces that in the
//! types (`step_with_page` exists only right after a `ui` step, `step_with_response` only right
//! after a step that waited); the runner enforces it in the data: the output is stored on the
//! step's own row and handed to the next step alone, never merged into the state.

use std::{fmt, marker::PhantomData, time::Duration};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::pages::{
    links::{AssigneeLink, PageLinks},
    page::PageId,
};

use super::run::TimeoutAction;

/// Why a step failed, and whether trying again may help.
///
/// Any error converts into [`StepError::Retryable`] with `?`; say [`StepError::fatal`] for
/// errors no retry can fix (bad input, a rule broken). Retries follow the step's
/// [`RetryPolicy`](super::retry::RetryPolicy).
pub enum StepError {
    /// A failure that may pass (a timeout, a 503): the step runs again after a backoff.
    Retryable(anyhow::Error),
    /// A failure no retry fixes: the run fails at once, keeping the step's name.
    Fatal(anyhow::Error),
}

impl StepError {
    /// A failure worth retrying.
    pub fn retryable(error: impl Into<anyhow::Error>) -> Self {
        Self::Retryable(error.into())
    }

    /// A failure that fails the run at once.
    pub fn fatal(error: impl Into<anyhow::Error>) -> Self {
        Self::Fatal(error.into())
    }

    /// Whether trying again may help.
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::Retryable(_))
    }

    /// The underlying error.
    #[must_use]
    pub fn error(&self) -> &anyhow::Error {
        match self {
            Self::Retryable(error) | Self::Fatal(error) => error,
        }
    }
}

impl<E: Into<anyhow::Error>> From<E> for StepError {
    fn from(error: E) -> Self {
        Self::Retryable(error.into())
    }
}

impl fmt::Display for StepError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `{:#}` keeps anyhow's context chain on one line.
        write!(formatter, "{:#}", self.error())
    }
}

impl fmt::Debug for StepError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Retryable(error) => write!(formatter, "Retryable({error:#})"),
            Self::Fatal(error) => write!(formatter, "Fatal({error:#})"),
        }
    }
}

/// What the result of a step closure is.
pub type StepResult<T> = Result<T, StepError>;

/// The right to resume a run by submitting one page: the page's webhook.
///
/// Typed by the page's response `R`, so a step that waits on it hands an `R` to the next step.
#[derive(Serialize, Deserialize)]
#[serde(bound = "")]
pub struct WaitToken<R = Value> {
    /// The page whose submission resumes the run.
    pub page_id: PageId,
    #[serde(skip)]
    response: PhantomData<fn() -> R>,
}

impl<R> WaitToken<R> {
    /// The token for a page.
    #[must_use]
    pub fn new(page_id: PageId) -> Self {
        Self {
            page_id,
            response: PhantomData,
        }
    }
}

impl<R> Clone for WaitToken<R> {
    fn clone(&self) -> Self {
        Self::new(self.page_id)
    }
}

impl<R> fmt::Debug for WaitToken<R> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("WaitToken")
            .field("page_id", &self.page_id)
            .finish()
    }
}

impl<R> PartialEq for WaitToken<R> {
    fn eq(&self, other: &Self) -> bool {
        self.page_id == other.page_id
    }
}

/// A page made by a `ui` step, handed to the next step: where to send the person, and what to
/// wait on.
///
/// Only `page_id` and `webhook` are stored (in `run_steps.output`): the link holds the page's
/// secret token, which exists at rest only as its hash. The next step gets the link from the
/// process that made the page or, after a restart, a freshly minted one (see
/// [`PageFactory::relink`](super::PageFactory::relink)).
#[derive(Serialize, Deserialize)]
#[serde(bound = "")]
pub struct PageHandle<R = Value> {
    /// The page's identity.
    pub page_id: PageId,
    /// The link to send to the person (it holds the page's secret token). Never serialized.
    /// Empty for a page with assignees, which has no shared link.
    #[serde(skip)]
    pub link: String,
    /// For a page with assignees: each person's own link (see [`crate::pages::people`]).
    /// Never serialized.
    #[serde(skip)]
    pub assigned: Vec<AssigneeLink>,
    /// What to wait on for the response; `None` for a display-only page.
    pub webhook: Option<WaitToken<R>>,
}

impl<R> PageHandle<R> {
    /// A handle for a page with a form (`has_form`) or a display-only page.
    #[must_use]
    pub fn new(page_id: PageId, link: impl Into<String>, has_form: bool) -> Self {
        Self {
            page_id,
            link: link.into(),
            assigned: Vec::new(),
            webhook: has_form.then(|| WaitToken::new(page_id)),
        }
    }

    /// The page's working links.
    #[must_use]
    pub fn links(&self) -> PageLinks {
        if self.assigned.is_empty() {
            PageLinks::Shared(self.link.clone())
        } else {
            PageLinks::Assigned(self.assigned.clone())
        }
    }

    /// The same handle with these links.
    #[must_use]
    pub fn with_links(mut self, links: PageLinks) -> Self {
        match links {
            PageLinks::Shared(link) => {
                self.link = link;
                self.assigned = Vec::new();
            }
            PageLinks::Assigned(assigned) => {
                self.link = String::new();
                self.assigned = assigned;
            }
        }
        self
    }

    /// The same handle typed by another response type.
    #[must_use]
    pub fn retype<T>(self) -> PageHandle<T> {
        PageHandle {
            page_id: self.page_id,
            link: self.link,
            assigned: self.assigned,
            webhook: self.webhook.map(|token| WaitToken::new(token.page_id)),
        }
    }
}

impl<R> Clone for PageHandle<R> {
    fn clone(&self) -> Self {
        Self {
            page_id: self.page_id,
            link: self.link.clone(),
            assigned: self.assigned.clone(),
            webhook: self.webhook.clone(),
        }
    }
}

impl<R> fmt::Debug for PageHandle<R> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("PageHandle")
            .field("page_id", &self.page_id)
            .field("link", &"***")
            .field("assigned", &self.assigned)
            .field("webhook", &self.webhook)
            .finish()
    }
}

impl<R> PartialEq for PageHandle<R> {
    fn eq(&self, other: &Self) -> bool {
        self.page_id == other.page_id
            && self.link == other.link
            && self.assigned == other.assigned
            && self.webhook == other.webhook
    }
}

/// What a wait does when its timeout passes first.
#[derive(Clone, Debug, PartialEq)]
pub enum OnTimeout<R> {
    /// Fail the run, naming the step that waited.
    Fail,
    /// Carry on: the next step gets this response instead of the person's.
    Continue(R),
    /// Cancel the run. A next step added with `step_with_answer` still runs first, with
    /// [`Answer::Expired`], so it can tell whoever waits for the answer.
    Cancel,
    /// Settle the page as declined, as a person's decline would ([`DEADLINE_REASON`]): a step
    /// added with `step_with_answer` gets [`Answer::Declined`], a YAML step the decline.
    Decline,
}

/// The reason a decline by the deadline ([`OnTimeout::Decline`]) records.
pub const DEADLINE_REASON: &str = "No answer came before the deadline.";

/// A step's request to suspend its run until a page is submitted (see [`wait_for`]).
#[derive(Debug)]
pub struct Wait<R> {
    pub(crate) token: Option<WaitToken<R>>,
    pub(crate) timeout: Option<(Duration, OnTimeout<R>)>,
}

/// Suspends the run after this step until the page behind `webhook` is submitted; the next
/// step gets the typed response.
///
/// The run waits in the database, not in memory: any runner resumes it. `None` (a
/// display-only page) can only be waited on with a [`Wait::timeout`], which makes it a timer.
#[must_use]
pub fn wait_for<R>(webhook: Option<WaitToken<R>>) -> Wait<R> {
    Wait {
        token: webhook,
        timeout: None,
    }
}

impl<R> Wait<R> {
    /// Gives up waiting after `duration`, doing `on_timeout` (a runner's sweep applies it).
    #[must_use]
    pub fn timeout(mut self, duration: Duration, on_timeout: OnTimeout<R>) -> Self {
        self.timeout = Some((duration, on_timeout));
        self
    }
}

/// The marker a builder carries after a step that waited: the next step gets an `R`.
pub struct Response<R>(PhantomData<fn() -> R>);

/// The reply of a `prompt` step without a schema, handed to the next step only.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Text {
    /// What the model wrote.
    pub text: String,
}

/// The response type of a display-only `ui` step: nothing to submit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoResponse;

/// What a step hands to the next one, as stored on its row (`run_steps.output`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StepOutput {
    /// Nothing.
    None,
    /// A value (the text of a schema-less prompt).
    Value {
        /// The value.
        value: Value,
    },
    /// The page a `ui` step made.
    Page {
        /// The handle.
        page: PageHandle,
    },
    /// The step suspended the run.
    Wait {
        /// The page whose submission resumes the run.
        page_id: Option<PageId>,
        /// When the wait times out, unix ms.
        deadline_ms: Option<i64>,
        /// What the timeout does.
        on_timeout: Option<TimeoutAction>,
        /// The response the next step gets on `OnTimeout::Continue`.
        default_response: Option<Value>,
    },
}

impl StepOutput {
    /// The tagged JSON stored on the step's row.
    #[must_use]
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

pub use tessera_store::records::unanswered::*;

/// What a step added with `step_with_answer` gets: the person's typed answer, or why there is
/// none. After an unanswered step succeeds the run ends cancelled.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer<R> {
    /// The typed response.
    Given(R),
    /// The person pressed Cancel.
    Cancelled,
    /// The wait timed out with [`OnTimeout::Cancel`].
    Expired,
    /// The person declined (or enough assignees did that the approvals needed cannot come).
    Declined(Decline),
}
