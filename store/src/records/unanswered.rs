//! The responses a page stores when it was not answered with its form: a Cancel, a timeout, a
//! decline. Stored as a response no form can produce (`$` cannot start a form field name), so the
//! runner recognises one whatever the step's response type.

use serde_json::Value;

/// The key of the response a page stores when the person pressed its Cancel button.
pub const CANCELLED_KEY: &str = "$cancelled";
/// The key the response of a wait that timed out with `OnTimeout::Cancel` carries besides
/// [`CANCELLED_KEY`].
const EXPIRED_KEY: &str = "$expired";
/// The key of the response a page stores when it was declined (a person's Decline, or enough
/// assignees' declines that the approvals needed can no longer come).
pub const DECLINED_KEY: &str = "$declined";
/// Beside [`DECLINED_KEY`]: why, when the person said.
const REASON_KEY: &str = "$reason";
/// Beside [`DECLINED_KEY`]: the assignee whose decline settled the page.
const BY_KEY: &str = "$by";

/// Why a wait ended without an answer. Stored as a response no form can produce (`$` cannot
/// start a form field name), so the runner recognises it whatever the step's response type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unanswered {
    /// The person pressed the page's Cancel button.
    Cancelled,
    /// The wait timed out with `OnTimeout::Cancel`.
    Expired,
    /// The person (or enough of the assignees) declined; [`declined_by`] says who and why.
    Declined,
}

impl Unanswered {
    /// The marker stored in place of a response.
    #[must_use]
    pub fn marker(self) -> Value {
        match self {
            Self::Cancelled => serde_json::json!({ CANCELLED_KEY: true }),
            Self::Expired => serde_json::json!({ CANCELLED_KEY: true, EXPIRED_KEY: true }),
            Self::Declined => serde_json::json!({ DECLINED_KEY: true }),
        }
    }

    /// Which marker `response` is, if it is one.
    #[must_use]
    pub fn of(response: &Value) -> Option<Self> {
        let flag = |key| response.get(key).and_then(Value::as_bool).unwrap_or(false);
        if flag(DECLINED_KEY) {
            return Some(Self::Declined);
        }
        match (flag(CANCELLED_KEY), flag(EXPIRED_KEY)) {
            (true, true) => Some(Self::Expired),
            (true, false) => Some(Self::Cancelled),
            (false, _) => None,
        }
    }
}

/// Who declined and why, as a declined page's response records it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decline {
    /// Why, when they said.
    pub reason: Option<String>,
    /// The assignee whose decline settled the page; `None` for an anonymous link.
    pub by: Option<String>,
}

/// The response stored for a declined page: a marker no form can produce, with the reason and
/// the assignee when known.
#[must_use]
pub fn declined_response(decline: &Decline) -> Value {
    let mut marker = serde_json::Map::new();
    marker.insert(DECLINED_KEY.to_owned(), Value::Bool(true));
    if let Some(reason) = &decline.reason {
        marker.insert(REASON_KEY.to_owned(), Value::String(reason.clone()));
    }
    if let Some(by) = &decline.by {
        marker.insert(BY_KEY.to_owned(), Value::String(by.clone()));
    }
    Value::Object(marker)
}

/// The [`Decline`] a declined page's response records (empty for any other response).
#[must_use]
pub fn declined_by(response: &Value) -> Decline {
    let text = |key| response.get(key).and_then(Value::as_str).map(str::to_owned);
    Decline {
        reason: text(REASON_KEY),
        by: text(BY_KEY),
    }
}

/// The response stored for a page answered with its Cancel button.
#[must_use]
pub fn cancelled_response() -> Value {
    Unanswered::Cancelled.marker()
}

/// Whether a stored response is a marker rather than an answer (the runner then cancels the run
/// instead of handing the next step a response it cannot decode).
#[must_use]
pub fn is_cancelled_response(response: &Value) -> bool {
    Unanswered::of(response).is_some()
}
