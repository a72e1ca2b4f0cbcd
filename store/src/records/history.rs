//! An ask's history (DESIGN.md §15): what happened to its page, in order — created, who was
//! notified and how, reminded, escalated, each answer, the deadline — as every door shows it.
//!
//! The store keeps the events (`ask_events`, written in the transaction of the change they
//! record where there is one); this module names them and says them in words for the run page.
//! Nothing here reads the store or knows HTTP.

use serde::{Serialize, Serializer};

use tessera_forms::dates::iso_datetime;

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// The page was made; `detail` lists who was asked.
    Created,
    /// `who` was sent their link; `detail` names the channel.
    Notified,
    /// `who`, who had not answered, was reminded (with a fresh link).
    Reminded,
    /// `who` was added to the people asked, after the others had not settled it.
    Escalated,
    /// `who` submitted an answer.
    Answered,
    /// `who` declined; `detail` is their reason when they gave one.
    Declined,
    /// The deadline passed; `detail` is what it did (`fail`, `cancel`, `continue`, `decline`).
    Deadline,
    /// A stage of the approvals began; `detail` is its number, from 1.
    StageStarted,
}

impl EventKind {
    const ALL: [Self; 8] = [
        Self::Created,
        Self::Notified,
        Self::Reminded,
        Self::Escalated,
        Self::Answered,
        Self::Declined,
        Self::Deadline,
        Self::StageStarted,
    ];

    /// The stored spelling, also the API's `event`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Notified => "notified",
            Self::Reminded => "reminded",
            Self::Escalated => "escalated",
            Self::Answered => "answered",
            Self::Declined => "declined",
            Self::Deadline => "deadline",
            Self::StageStarted => "stage_started",
        }
    }

    /// Parses the stored spelling.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == text)
    }
}

/// One event to record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewEvent {
    /// What happened.
    pub kind: EventKind,
    /// The person it concerns, if one.
    pub who: Option<String>,
    /// What else there is to say (see [`EventKind`]).
    pub detail: Option<String>,
}

impl NewEvent {
    /// An event about nobody in particular.
    #[must_use]
    pub fn new(kind: EventKind) -> Self {
        Self {
            kind,
            who: None,
            detail: None,
        }
    }

    /// The same event about `who`.
    #[must_use]
    pub fn by(mut self, who: impl Into<String>) -> Self {
        self.who = Some(who.into());
        self
    }

    /// The same event with `detail`.
    #[must_use]
    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }
}

/// One recorded event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AskEvent {
    /// When, unix ms.
    pub at_ms: i64,
    /// What happened.
    pub kind: EventKind,
    /// The person it concerns, if one.
    pub who: Option<String>,
    /// What else there is to say.
    pub detail: Option<String>,
}

impl AskEvent {
    /// The event in a sentence, for a person reading the run page.
    #[must_use]
    pub fn sentence(&self) -> String {
        // Without a name, the answer came through a page's one anonymous link.
        let who = self.who.as_deref().unwrap_or("The link's holder");
        let detail = self.detail.as_deref();
        match self.kind {
            EventKind::Created => match detail {
                Some(people) if !people.is_empty() => format!("Asked {people}."),
                _ => "Asked.".to_owned(),
            },
            EventKind::Notified => match detail {
                Some(channel) => format!("Sent {who} their link by {channel}."),
                None => format!("Sent {who} their link."),
            },
            EventKind::Reminded => format!("Reminded {who}, who had not answered yet."),
            EventKind::Escalated => format!("Also asked {who}: nobody had settled it in time."),
            EventKind::Answered => format!("{who} answered."),
            EventKind::Declined => match detail {
                Some(reason) => format!("{who} declined: “{reason}”."),
                None => format!("{who} declined."),
            },
            EventKind::Deadline => match detail {
                Some("fail") => "The deadline passed: the run failed.".to_owned(),
                Some("continue") => {
                    "The deadline passed: the run went on with the default answer.".to_owned()
                }
                Some("decline") => "The deadline passed: the ask was declined.".to_owned(),
                _ => "The deadline passed: the ask expired.".to_owned(),
            },
            EventKind::StageStarted => match detail {
                Some(stage) => format!("Stage {stage} began."),
                None => "The next stage began.".to_owned(),
            },
        }
    }
}

impl Serialize for AskEvent {
    /// `{"at", "event", "who", "detail", "text"}`; `at` is RFC 3339 UTC, `text` the sentence.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut map = serializer.serialize_map(Some(5))?;
        map.serialize_entry("at", &iso_datetime(self.at_ms))?;
        map.serialize_entry("event", self.kind.as_str())?;
        map.serialize_entry("who", &self.who)?;
        map.serialize_entry("detail", &self.detail)?;
        map.serialize_entry("text", &self.sentence())?;
        map.end()
    }
}

/// How [`AskEvent`] reads in the API (its serialization is written by hand above).
#[derive(utoipa::ToSchema)]
#[schema(as = AskEvent)]
#[expect(
    dead_code,
    reason = "describes AskEvent's hand-written serialization; never built"
)]
pub struct AskEventSchema {
    /// When, RFC 3339 UTC.
    #[schema(format = DateTime)]
    at: String,
    /// What happened.
    #[schema(value_type = String, pattern = "^(created|notified|reminded|escalated|answered|declined|deadline|stage_started|signed_in)$")]
    event: String,
    /// The person it concerns, if one.
    who: Option<String>,
    /// What else there is to say: the people asked, the channel, the reason, the outcome.
    detail: Option<String>,
    /// The event in a sentence, as the run page shows it.
    text: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_parses_back_from_its_spelling() {
        for kind in EventKind::ALL {
            assert_eq!(EventKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(EventKind::parse("exploded"), None);
    }

    #[test]
    fn events_read_as_sentences() {
        let event = AskEvent {
            at_ms: 0,
            kind: EventKind::Declined,
            who: Some("bo@x.test".into()),
            detail: Some("over budget".into()),
        };
        assert_eq!(event.sentence(), "bo@x.test declined: “over budget”.");
        let deadline = AskEvent {
            kind: EventKind::Deadline,
            who: None,
            detail: Some("decline".into()),
            ..event
        };
        assert_eq!(
            deadline.sentence(),
            "The deadline passed: the ask was declined."
        );
    }
}
