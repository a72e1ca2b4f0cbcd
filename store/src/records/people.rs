//! What named people answered on a page (DESIGN.md §15), as stored: each assignee, their
//! answer, and the tally that settles the page ([`Tally::settles`], applied by the store inside
//! the transaction that records an answer).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera_forms::dates::iso_datetime;

use super::unanswered::{declined_by, Unanswered};

/// The longest decline reason kept, in characters.
pub const MAX_REASON_CHARS: usize = 2_000;

/// What a stage's declines do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnDecline {
    /// The whole ask is declined.
    #[default]
    Settle,
    /// The next stage is asked anyway (the last stage's declines still decline the ask).
    Continue,
}

impl OnDecline {
    /// The stored spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Settle => "settle",
            Self::Continue => "continue",
        }
    }
}

/// What one person's answer was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// They submitted the form: an approval.
    Submitted,
    /// They declined, maybe saying why.
    Declined,
}

impl Outcome {
    /// The stored spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Submitted => "submitted",
            Self::Declined => "declined",
        }
    }

    /// Parses the stored spelling.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Submitted, Self::Declined]
            .into_iter()
            .find(|outcome| outcome.as_str() == text)
    }
}

/// What a person gives through their link.
#[derive(Clone, Debug, PartialEq)]
pub enum Given {
    /// The typed answer to the form.
    Answer(Value),
    /// A decline, with the reason when they gave one.
    Decline(Option<String>),
}

impl Given {
    /// Its outcome.
    #[must_use]
    pub fn outcome(&self) -> Outcome {
        match self {
            Self::Answer(_) => Outcome::Submitted,
            Self::Decline(_) => Outcome::Declined,
        }
    }
}

/// One recorded answer, as every door shows it: who, when, what.
#[derive(Clone, Debug, PartialEq)]
pub struct AnswerRecord {
    /// The assignee; `None` for the anonymous link of a page without assignees.
    pub answered_by: Option<String>,
    /// When, unix ms.
    pub at_ms: i64,
    /// Submitted or declined.
    pub outcome: Outcome,
    /// The typed answer, when submitted.
    pub response: Option<Value>,
    /// Why they declined, when they said.
    pub reason: Option<String>,
}

/// The shape [`AnswerRecord`] serializes to, for the API's document.
#[derive(utoipa::ToSchema)]
#[schema(as = AnswerRecord)]
#[expect(
    dead_code,
    reason = "describes AnswerRecord's hand-written serialization; never built"
)]
pub struct AnswerRecordSchema {
    /// The assignee; `null` for the anonymous link of a page without assignees.
    answered_by: Option<String>,
    /// When, RFC 3339 UTC.
    #[schema(format = DateTime)]
    at: String,
    /// Submitted or declined.
    outcome: Outcome,
    /// The typed answer, for a submission.
    #[schema(required = false)]
    response: Option<Value>,
    /// Why they declined, for a decline.
    #[schema(required = false)]
    reason: Option<String>,
}

impl Serialize for AnswerRecord {
    /// `{"answered_by", "at", "outcome", "response"}` for a submission,
    /// `{"answered_by", "at", "outcome", "reason"}` for a decline; `at` is RFC 3339 UTC.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("answered_by", &self.answered_by)?;
        map.serialize_entry("at", &iso_datetime(self.at_ms))?;
        map.serialize_entry("outcome", &self.outcome)?;
        match self.outcome {
            Outcome::Submitted => map.serialize_entry("response", &self.response)?,
            Outcome::Declined => map.serialize_entry("reason", &self.reason)?,
        }
        map.end()
    }
}

/// One assignee of a page, with their answer once they gave it.
#[derive(Clone, Debug, PartialEq)]
pub struct Assignee {
    /// Their place in the ask's list, from 0.
    pub position: i64,
    /// Their e-mail address.
    pub email: String,
    /// The group they answer for, when asked as one of its members (`pages::groups`).
    pub group: Option<String>,
    /// The approval stage they were asked in, from 0 (0 on a page without stages).
    pub stage: i64,
    /// What they answered, if they did.
    pub answer: Option<AnswerRecord>,
}

/// The answers given on a page so far, against what settles it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tally {
    /// Assignees in all.
    pub assignees: u32,
    /// Approvals needed.
    pub required: u32,
    /// Submissions so far.
    pub approvals: u32,
    /// Declines so far.
    pub declines: u32,
}

/// Where a page's answers leave it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settled {
    /// Not yet decided: more answers may settle it either way.
    Open,
    /// Enough approvals.
    Submitted,
    /// So many declines that the approvals needed can no longer come.
    Declined,
}

impl Tally {
    /// Whether these answers settle the page: submitted once `required` approved, declined as
    /// soon as more than `assignees - required` declined (the rest can no longer reach
    /// `required`), open otherwise.
    #[must_use]
    pub fn settles(self) -> Settled {
        if self.approvals >= self.required {
            Settled::Submitted
        } else if self.declines > self.assignees.saturating_sub(self.required) {
            Settled::Declined
        } else {
            Settled::Open
        }
    }
}

/// How many votes the stage under way has (the last stage anyone was asked in): one per person
/// asked alone and one per group; and that stage, from 0.
#[must_use]
pub fn current_votes(assignees: &[Assignee]) -> (usize, i64) {
    let stage = assignees
        .iter()
        .map(|assignee| assignee.stage)
        .max()
        .unwrap_or(0);
    let mut voters: Vec<(bool, &str)> = assignees
        .iter()
        .filter(|assignee| assignee.stage == stage)
        .map(|assignee| match &assignee.group {
            Some(group) => (true, group.as_str()),
            None => (false, assignee.email.as_str()),
        })
        .collect();
    voters.sort_unstable();
    voters.dedup();
    (voters.len(), stage)
}

/// The answers a page holds, oldest first: its assignees' answers, or for a page without
/// assignees the one answer of its anonymous link (a Cancel or an expiry is no answer).
#[must_use]
pub fn answers_of(
    assignees: &[Assignee],
    response: Option<&Value>,
    at_ms: Option<i64>,
) -> Vec<AnswerRecord> {
    if !assignees.is_empty() {
        let mut answers: Vec<AnswerRecord> = assignees
            .iter()
            .filter_map(|assignee| assignee.answer.clone())
            .collect();
        answers.sort_by_key(|answer| answer.at_ms);
        return answers;
    }
    let (Some(response), Some(at_ms)) = (response, at_ms) else {
        return Vec::new();
    };
    match Unanswered::of(response) {
        None => vec![AnswerRecord {
            answered_by: None,
            at_ms,
            outcome: Outcome::Submitted,
            response: Some(response.clone()),
            reason: None,
        }],
        Some(Unanswered::Declined) => {
            let decline = declined_by(response);
            vec![AnswerRecord {
                answered_by: decline.by,
                at_ms,
                outcome: Outcome::Declined,
                response: None,
                reason: decline.reason,
            }]
        }
        Some(Unanswered::Cancelled | Unanswered::Expired) => Vec::new(),
    }
}

/// A reason as kept: trimmed, `None` when empty, at most [`MAX_REASON_CHARS`] characters.
#[must_use]
pub fn clean_reason(raw: Option<&str>) -> Option<String> {
    let trimmed = raw.map(str::trim).filter(|reason| !reason.is_empty())?;
    Some(trimmed.chars().take(MAX_REASON_CHARS).collect())
}
