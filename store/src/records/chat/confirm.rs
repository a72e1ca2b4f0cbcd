//! Confirmations as stored: a call paused for a person's approval, bound to the hash of the
//! exact call ([`operation_hash`]).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use super::{policy::ConfirmReason, session::SessionId, threads::ThreadId};
use crate::canonical_json::canonical_json;

/// The SHA-256 (hex) of an operation and its canonical arguments.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct OperationHash(pub String);

impl OperationHash {
    /// The first 12 hex digits, for headers and logs.
    #[must_use]
    pub fn short(&self) -> &str {
        self.0.get(..12).unwrap_or(&self.0)
    }
}

impl fmt::Display for OperationHash {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.0)
    }
}

/// Hashes `operation` called with `arguments`: SHA-256 over a version line, the operation name
/// and the canonical JSON of the arguments, separated by newlines.
#[must_use]
pub fn operation_hash(operation: &str, arguments: &Value) -> OperationHash {
    let mut hasher = Sha256::new();
    hasher.update(b"tessera.chat.operation.v1\n");
    hasher.update(operation.as_bytes());
    hasher.update(b"\n");
    hasher.update(canonical_json(arguments).as_bytes());
    OperationHash(hex::encode(hasher.finalize()))
}

uuid_id! {
    /// A confirmation's id.
    pub struct ConfirmationId;
}

/// Who proposed a call. It is decided by the path the call arrived on — the model loop or the
/// manual-tool form (and `/tool`) — and stored with its confirmation; never read from the call's
/// id, which a model chooses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Caller {
    /// The model, through the model loop.
    Model,
    /// A person, through the manual-tool form or `/tool`.
    Person,
}

impl Caller {
    /// The stored name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Model => "model",
            Self::Person => "person",
        }
    }

    /// Parses the stored name.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Model, Self::Person]
            .into_iter()
            .find(|caller| caller.as_str() == text)
    }
}

/// How far an approval reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalScope {
    /// This exact call, once.
    Once,
    /// Every later call of this operation in this session (except `confirmation-required` ones).
    Operation,
    /// Every later call in this session (except `confirmation-required` ones).
    Session,
}

impl ApprovalScope {
    /// The stored name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Once => "once",
            Self::Operation => "operation",
            Self::Session => "session",
        }
    }

    /// Parses the stored name.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Once, Self::Operation, Self::Session]
            .into_iter()
            .find(|scope| scope.as_str() == text)
    }
}

/// Where a confirmation is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConfirmationStatus {
    /// Waiting for the person.
    Pending,
    /// Approved, not used yet.
    Approved,
    /// Declined (or withdrawn by stop or `/clear`).
    Denied,
    /// Used by exactly one execution.
    Consumed,
}

impl ConfirmationStatus {
    /// The stored name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Approved => "approved",
            Self::Denied => "denied",
            Self::Consumed => "consumed",
        }
    }

    /// Parses the stored name.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Pending, Self::Approved, Self::Denied, Self::Consumed]
            .into_iter()
            .find(|status| status.as_str() == text)
    }
}

/// What the person is shown before approving: the count, the affected items, the chunks.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ConfirmationPreview {
    /// How many items the call touches.
    pub count: usize,
    /// The items as the preview showed them (those the call touches, in call order).
    pub items: Vec<Value>,
    /// The requests the call will be split into.
    pub chunks: Vec<usize>,
    /// The preview operation that showed them.
    pub preview_operation: Option<String>,
}

/// A pending or decided confirmation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Confirmation {
    /// Its id.
    pub id: ConfirmationId,
    /// The session.
    pub session_id: SessionId,
    /// The thread whose call waits for it.
    pub thread_id: ThreadId,
    /// The model's tool-call id the answer goes to (a group's first call).
    pub call_id: String,
    /// Who proposed the call.
    pub caller: Caller,
    /// The operation.
    pub operation: String,
    /// The exact arguments.
    pub arguments: Value,
    /// Their hash.
    pub hash: OperationHash,
    /// Why code asks.
    pub reasons: Vec<ConfirmReason>,
    /// What the person is shown.
    pub preview: ConfirmationPreview,
    /// Where it is.
    pub status: ConfirmationStatus,
    /// How far the approval reaches, once decided.
    pub scope: Option<ApprovalScope>,
    /// Created, unix ms.
    pub created_at_ms: i64,
    /// Decided, unix ms.
    pub decided_at_ms: Option<i64>,
    /// Used, unix ms.
    pub consumed_at_ms: Option<i64>,
}

/// A confirmation to store, before it has an id.
#[derive(Clone, Debug, PartialEq)]
pub struct NewConfirmation {
    /// The session.
    pub session_id: SessionId,
    /// The thread.
    pub thread_id: ThreadId,
    /// The model's tool-call id (a group's first call).
    pub call_id: String,
    /// Who proposed the call, from the path it arrived on.
    pub caller: Caller,
    /// The operation.
    pub operation: String,
    /// The exact arguments.
    pub arguments: Value,
    /// Why code asks.
    pub reasons: Vec<ConfirmReason>,
    /// What the person is shown.
    pub preview: ConfirmationPreview,
}

impl NewConfirmation {
    /// The hash the confirmation is bound to.
    #[must_use]
    pub fn hash(&self) -> OperationHash {
        operation_hash(&self.operation, &self.arguments)
    }
}
