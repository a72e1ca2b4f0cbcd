//! Chat models: one provider-neutral interface, [`ChatModel`], over OpenAI-compatible servers,
//! Anthropic and Gemini, plus [`ScriptedModel`] for tests.
//!
//! The agent loop talks only to `Arc<dyn ChatModel>` (DESIGN.md §6), so a provider can be swapped
//! by configuration and replaced by a fake in tests. The layering:
//!
//! - [`model`]: the neutral request, reply and [`ModelError`] types and the trait;
//! - [`openai`], [`anthropic`], [`gemini`]: one HTTP call each in the provider's real wire format
//!   (streaming off), mapping HTTP facts to [`ModelError`] through a shared transport; the two
//!   keyed hosted providers take one [`hosted::HostedConfig`];
//! - [`retry`]: [`Retrying`] adds the per-call timeout and backoff around any model;
//! - [`config`]: [`model_from_spec`] picks and wraps a provider from `TESSERA_MODEL` and its env
//!   vars (listed there);
//! - [`scripted`]: a replayed script of turns for tests;
//! - [`replay`]: transcripts of realistic model behaviour (`tests/transcripts/*.json`) replayed
//!   as a model, for the test suite and `tessera eval --transcripts`;
//! - [`text_calls`]: tool calls a model wrote as text, read into real calls for every provider;
//! - [`causes`]: an error and its causes on one line (the root crate's notifiers use it too).
//!
//! Errors: every fallible function here returns [`ModelError`]; whether to retry is decided by
//! [`ModelError::is_retryable`] alone. API keys are [`tessera_settings::Secret`]s: they appear only
//! in request headers, never in URLs, errors, logs or `Debug` output. The `heuristic` model lives
//! with the agent, not here, because it needs the component catalog.

pub mod anthropic;
pub mod backoff;
pub mod causes;
pub mod config;
pub mod gemini;
pub mod hosted;
#[cfg(test)]
mod mock;
pub mod model;
pub mod openai;
pub mod replay;
pub mod retry;
pub mod scripted;
pub mod text_calls;
mod transport;

pub use config::{model_from_spec, ModelSettings, ProviderSettings};
pub use model::{
    ChatModel, ChatRequest, ChatResponse, MalformedArguments, Message, ModelError, ModelName,
    PageMode, ResponseFormat, StopReason, ToolCall, ToolDefinition, Usage,
};
pub use replay::{ReplayModel, Transcript, TranscriptError};
pub use retry::{ModelCallPolicy, Retrying};
pub use scripted::{ScriptedModel, ScriptedTurn};
pub use text_calls::adopt_text_tool_calls;
