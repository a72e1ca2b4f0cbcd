//! The audit record of one page generation (DESIGN.md §6): what the model was asked, what it did,
//! what it cost and how it ended.

use serde::Serialize;
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
    pub cache_lookup: Option<crate::agent::cache::CacheLookup>,
    /// Every tool call with its arguments and result.
    pub transcript: serde_json::Value,
    /// The final tree, if any.
    pub tree: Option<serde_json::Value>,
    /// When it was recorded, unix ms.
    pub created_at_ms: i64,
}
