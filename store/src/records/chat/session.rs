//! A chat session: its id, capability scope and model, and the messages it keeps.
//!
//! A session keeps two message channels in the store: the **transcript** a person sees (their
//! words, and each reply with its execution header) and the **model** conversation (the
//! provider-neutral [`crate::llm::Message`]s replayed to the model on the next turn). Both live in
//! the database, so history and pending approvals survive a reload and a restart.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::{header::ExecutionHeader, scope::CapabilityScope, threads::ThreadId};

uuid_id! {
    /// A session's id.
    #[derive(PartialOrd, Ord, utoipa::ToSchema)]
    pub struct SessionId;
}

impl SessionId {
    /// Parses an id from text (a URL segment, a cookie).
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        Uuid::parse_str(text).ok().map(Self)
    }
}

/// A chat session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ChatSession {
    /// Its id.
    pub id: SessionId,
    /// What it may run (already intersected with the server's allowlist):
    /// `{operations, entities?, hosts?}`.
    #[schema(value_type = Object)]
    pub scope: CapabilityScope,
    /// The model its turns use (`heuristic` for the offline planner).
    pub model: String,
    /// Created, unix ms.
    pub created_at_ms: i64,
    /// Last turn, unix ms.
    pub updated_at_ms: i64,
}

/// Which message channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageChannel {
    /// What the person sees.
    Transcript,
    /// What the model is replayed.
    Model,
}

impl MessageChannel {
    /// The stored name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Transcript => "transcript",
            Self::Model => "model",
        }
    }
}

/// Who said a transcript message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Speaker {
    /// The person.
    User,
    /// Tessera.
    Assistant,
}

impl Speaker {
    /// The stored name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Assistant => "assistant",
        }
    }

    /// Parses the stored name.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "user" => Some(Self::User),
            "assistant" => Some(Self::Assistant),
            _ => None,
        }
    }
}

/// One message of the visible transcript.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TranscriptEntry {
    /// Its position (increasing per session).
    pub id: i64,
    /// Who said it.
    pub speaker: Speaker,
    /// The full text; for replies, the rendered header, a blank line, then the narrative.
    pub text: String,
    /// For replies: the header as data (for a richer rendering than the text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<ExecutionHeader>,
    /// The thread it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<ThreadId>,
    /// When, unix ms.
    pub created_at_ms: i64,
}
