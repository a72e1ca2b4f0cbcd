//! The audit record of one page generation (DESIGN.md §6): what the model was asked, what it did,
//! what it cost and how it ended, and the events it went through.

use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

/// How a generation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum GenerationOutcome {
    /// The model produced a tree that passed validation.
    Ok,
    /// The model failed and the heuristic page was used instead.
    FellBack,
    /// No page could be produced.
    Failed,
}

impl GenerationOutcome {
    /// The stored spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::FellBack => "fell_back",
            Self::Failed => "failed",
        }
    }

    /// Parses the stored spelling.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Ok, Self::FellBack, Self::Failed]
            .into_iter()
            .find(|outcome| outcome.as_str() == text)
    }
}

/// One generation, as recorded.
#[derive(Clone, Debug, PartialEq, Serialize, utoipa::ToSchema)]
pub struct GenerationRecord {
    /// Identity.
    pub id: Uuid,
    /// The model's name, e.g. `gpt-4.1-mini` or `heuristic`.
    pub model: String,
    /// The provider, e.g. `openai` or `heuristic`.
    pub provider: String,
    /// SHA-256 of the rendered prompt.
    pub prompt_hash: String,
    /// How it ended.
    pub outcome: GenerationOutcome,
    /// Model turns taken.
    pub turns: i64,
    /// Input tokens used.
    pub tokens_in: i64,
    /// Output tokens used.
    pub tokens_out: i64,
    /// Wall time, ms.
    pub latency_ms: i64,
    /// Whether the page cache answered instead of a model.
    pub cache_hit: bool,
    /// What the page cache did: hit, miss, stale (a cached page no longer fitted), refresh or
    /// off; `None` in records made before it was recorded.
    pub cache_lookup: Option<crate::records::page_cache::CacheLookup>,
    /// Every tool call with its arguments and result.
    pub transcript: serde_json::Value,
    /// The final tree, if any.
    pub tree: Option<serde_json::Value>,
    /// When it was recorded, unix ms.
    pub created_at_ms: i64,
}

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// The generation began: model, cache policy.
    Started,
    /// The page cache answered: the stored tree validates against the new data.
    CacheHit,
    /// The page cache had nothing (or a tree that no longer validates).
    CacheMiss,
    /// A tool call succeeded: the tool, and for components the new node's id.
    ToolCall,
    /// A tool call was refused: the tool and the structured error the model got.
    ToolError,
    /// Code's own `ValidateForm` ran on the tree (model asked, or the model said it was done).
    Validation,
    /// The model stopped before the page was valid; code told it what is still wrong.
    FollowUp,
    /// The model call failed after retries.
    ModelError,
    /// The model did not produce a valid page; the heuristic page is built instead.
    FallBack,
    /// The generation ended: outcome, turns, tokens. Always the last event.
    Finished,
}

impl EventKind {
    /// Every kind, in a fixed order.
    pub const ALL: [Self; 10] = [
        Self::Started,
        Self::CacheHit,
        Self::CacheMiss,
        Self::ToolCall,
        Self::ToolError,
        Self::Validation,
        Self::FollowUp,
        Self::ModelError,
        Self::FallBack,
        Self::Finished,
    ];

    /// The stored spelling, also the SSE event name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Started => "started",
            Self::CacheHit => "cache_hit",
            Self::CacheMiss => "cache_miss",
            Self::ToolCall => "tool_call",
            Self::ToolError => "tool_error",
            Self::Validation => "validation",
            Self::FollowUp => "follow_up",
            Self::ModelError => "model_error",
            Self::FallBack => "fell_back",
            Self::Finished => "finished",
        }
    }

    /// Parses the stored spelling.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == text)
    }
}

/// One event of one generation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GenerationEvent {
    /// The generation it belongs to.
    pub generation_id: Uuid,
    /// Its position in the generation, from 1, without gaps.
    pub seq: i64,
    /// What happened.
    pub kind: EventKind,
    /// The details, a JSON object.
    pub payload: Value,
    /// When it happened, unix ms.
    pub created_at_ms: i64,
}
