//! The provider-neutral conversation: [`ChatModel`], its request and reply, and [`ModelError`].
//!
//! Every provider translates these types to and from its own wire format, so the agent loop is
//! written once. The types carry only what the loop needs (messages, tools as JSON Schema, text,
//! several tool calls per turn, a stop reason and token usage); provider extras stay inside the
//! provider modules. Two rules shape them:
//!
//! - A tool call whose arguments are not valid JSON does not fail the reply: it arrives as
//!   [`ToolCall::arguments`] = `Err(MalformedArguments)` so the loop can answer it with a tool
//!   error and let the model repair it on the next turn.
//! - A refusal with nothing usable in it is an error ([`ModelError::Refused`]); a reply that has
//!   content but was cut short by a filter is `Ok` with [`StopReason::Refused`].
//!
//! Nothing here does I/O; [`ModelError::is_retryable`] is the single place that decides which
//! failures [`crate::retry::Retrying`] tries again.

use std::{fmt, sync::Arc, time::Duration};

use serde::{Deserialize, Serialize};

/// The result type of every model call.
pub type Result<T, E = ModelError> = std::result::Result<T, E>;

/// A chat model: one request in, one complete (non-streamed) reply out.
#[async_trait::async_trait]
pub trait ChatModel: Send + Sync {
    /// Which provider and model answer, for generation records and logs.
    fn name(&self) -> ModelName;

    /// How pages are asked of this model: [`PageMode::Tools`] (the tool loop) unless the
    /// provider can constrain an answer to a JSON Schema; `TESSERA_PAGE_MODE` may force either.
    fn page_mode(&self) -> PageMode {
        PageMode::Tools
    }

    /// Sends the conversation and waits for the model's next turn.
    ///
    /// # Errors
    /// Returns a [`ModelError`] naming the failure; [`ModelError::is_retryable`] tells whether
    /// trying again may help.
    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse>;
}

#[async_trait::async_trait]
impl<T: ChatModel + ?Sized> ChatModel for Arc<T> {
    fn name(&self) -> ModelName {
        (**self).name()
    }

    fn page_mode(&self) -> PageMode {
        (**self).page_mode()
    }

    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse> {
        (**self).chat(request).await
    }
}

/// The provider and the model, shown as `provider:model`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ModelName {
    /// The provider, e.g. `openai`, `anthropic`, `gemini`, `ollama`, `scripted`.
    pub provider: String,
    /// The model as the provider names it, e.g. `gpt-4.1-mini`.
    pub model: String,
}

impl ModelName {
    /// Names a provider's model.
    #[must_use]
    pub fn new(provider: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            provider: provider.into(),
            model: model.into(),
        }
    }
}

impl fmt::Display for ModelName {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}:{}", self.provider, self.model)
    }
}

/// One call to a model: the conversation so far and the tools it may call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The conversation, oldest first. System messages may appear anywhere; providers that take
    /// a single system prompt join them in order.
    pub messages: Vec<Message>,
    /// The tools offered for this turn.
    pub tools: Vec<ToolDefinition>,
    /// The most tokens the reply may use; providers that require a value use 4096 when `None`.
    pub max_tokens: Option<u32>,
    /// Sampling temperature; the provider's default when `None`.
    pub temperature: Option<f32>,
    /// When set, the reply must be one JSON document valid against this schema, written as the
    /// reply's text (each provider asks for it in its own way); `tools` is then ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<ResponseFormat>,
}

/// How a model is asked for a page (`TESSERA_PAGE_MODE`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PageMode {
    /// The whole page in one constrained answer (plus at most one repair turn); when the
    /// provider refuses the schema, the tool loop with the same model.
    #[default]
    Auto,
    /// The whole page in one constrained answer; when that fails, straight to the heuristic.
    Whole,
    /// The tool loop: one call per component, `ValidateForm`, `Finish`.
    Tools,
}

impl PageMode {
    /// Reads `auto`, `whole` or `tools`.
    ///
    /// # Errors
    /// The accepted values, when `text` is none of them.
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        match text.trim() {
            "auto" => Ok(Self::Auto),
            "whole" => Ok(Self::Whole),
            "tools" => Ok(Self::Tools),
            other => Err(format!("`{other}` is not auto, whole or tools")),
        }
    }
}

/// An answer constrained to a JSON Schema. The schema follows OpenAI's strict structured-output
/// rules (every object closed, every property required, optional ones nullable), the strictest
/// of the providers', so one schema serves all of them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResponseFormat {
    /// A name for the schema, `[a-zA-Z0-9_-]{1,64}` (OpenAI requires one).
    pub name: String,
    /// The JSON Schema the answer must satisfy.
    pub schema: serde_json::Value,
}

/// One message of the conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", content = "content", rename_all = "snake_case")]
pub enum Message {
    /// Instructions from the application.
    System(String),
    /// What the person (or the loop, speaking for the application) says.
    User(String),
    /// A previous turn of the model, replayed verbatim.
    Assistant {
        /// The text it wrote, if any.
        text: Option<String>,
        /// The tool calls it placed, in order.
        tool_calls: Vec<ToolCall>,
    },
    /// The answer to one tool call.
    ToolResult {
        /// The [`ToolCall::id`] this answers.
        call_id: String,
        /// The tool's name (Gemini matches results by name).
        name: String,
        /// The result; strings are sent as they are, other values as JSON text.
        content: serde_json::Value,
        /// Whether the call failed; the model should read `content` as the error.
        is_error: bool,
    },
}

impl Message {
    /// A system message.
    #[must_use]
    pub fn system(text: impl Into<String>) -> Self {
        Self::System(text.into())
    }

    /// A user message.
    #[must_use]
    pub fn user(text: impl Into<String>) -> Self {
        Self::User(text.into())
    }

    /// Replays a model's reply as the assistant turn of the next request.
    #[must_use]
    pub fn assistant(response: &ChatResponse) -> Self {
        Self::Assistant {
            text: response.text.clone(),
            tool_calls: response.tool_calls.clone(),
        }
    }

    /// A successful tool result for `call`.
    #[must_use]
    pub fn tool_result(call: &ToolCall, content: serde_json::Value) -> Self {
        Self::ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content,
            is_error: false,
        }
    }

    /// A failed tool result for `call`; `content` says what was wrong.
    #[must_use]
    pub fn tool_error(call: &ToolCall, content: serde_json::Value) -> Self {
        Self::ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content,
            is_error: true,
        }
    }
}

/// A tool the model may call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// The tool's name, `[a-zA-Z0-9_-]{1,64}` (the strictest provider's rule).
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// Its arguments as a JSON Schema object; `Null` for a tool without arguments.
    pub parameters: serde_json::Value,
}

/// One tool call placed by the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's call id (synthesized as `call_N` where the provider has none).
    pub id: String,
    /// The tool called.
    pub name: String,
    /// The arguments, or the raw text when they were not valid JSON.
    pub arguments: std::result::Result<serde_json::Value, MalformedArguments>,
    /// An opaque provider token that must be sent back with the call (Gemini's
    /// `thoughtSignature`); `None` for most providers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

impl ToolCall {
    /// A call with well-formed arguments.
    #[must_use]
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: serde_json::Value,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments: Ok(arguments),
            signature: None,
        }
    }

    /// The arguments as the provider should see them again: the JSON text, or the raw text.
    #[must_use]
    pub fn arguments_text(&self) -> String {
        match &self.arguments {
            Ok(value) => value.to_string(),
            Err(malformed) => malformed.raw.clone(),
        }
    }

    /// The arguments as an object for providers that only accept objects (Anthropic, Gemini):
    /// a malformed call, or one from another provider with non-object arguments, is replayed
    /// as `{}` and its error goes in the tool result.
    #[must_use]
    pub fn arguments_object(&self) -> serde_json::Value {
        self.arguments
            .as_ref()
            .ok()
            .filter(|value| value.is_object())
            .cloned()
            .unwrap_or_else(|| serde_json::json!({}))
    }
}

/// Tool arguments that were not valid JSON, kept so the loop can feed the error back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MalformedArguments {
    /// The text the model produced.
    pub raw: String,
    /// Why it did not parse.
    pub error: String,
}

/// The model's turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The text it wrote, if any.
    pub text: Option<String>,
    /// The tool calls it placed, in order (several per turn are allowed).
    pub tool_calls: Vec<ToolCall>,
    /// Why it stopped.
    pub stop_reason: StopReason,
    /// Tokens spent on this call.
    pub usage: Usage,
}

impl ChatResponse {
    /// A text-only reply that ended its turn, with no usage (for fakes and tests).
    #[must_use]
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            tool_calls: Vec::new(),
            stop_reason: StopReason::EndTurn,
            usage: Usage::default(),
        }
    }

    /// A reply that only calls tools, with no usage (for fakes and tests).
    #[must_use]
    pub fn tool_calls(tool_calls: Vec<ToolCall>) -> Self {
        Self {
            text: None,
            tool_calls,
            stop_reason: StopReason::ToolUse,
            usage: Usage::default(),
        }
    }
}

/// Why the model stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum StopReason {
    /// It finished its turn.
    EndTurn,
    /// It wants the tool calls answered.
    ToolUse,
    /// It ran into the token limit; the reply may be cut.
    MaxTokens,
    /// A filter or the model stopped it part-way; the reply has some content.
    Refused,
    /// Anything else, as the provider named it.
    Other(String),
}

impl StopReason {
    /// Some servers (Gemini, older Ollama) say "stop" when the turn ends in tool calls; the loop
    /// only needs to know tools were called.
    pub(crate) fn given_tool_calls(self, tool_calls: &[ToolCall]) -> Self {
        if self == Self::EndTurn && !tool_calls.is_empty() {
            Self::ToolUse
        } else {
            self
        }
    }
}

/// Tokens spent on one call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Reply tokens.
    pub output_tokens: u64,
}

/// What can go wrong calling a model. Messages never contain an API key.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// No reply within the call timeout.
    #[error("the model did not answer in time")]
    Timeout,
    /// The provider asked us to slow down (HTTP 429).
    #[error("rate limited by the provider{}", retry_after_text(*.retry_after))]
    RateLimited {
        /// How long the provider asked us to wait, when it said.
        retry_after: Option<Duration>,
    },
    /// The provider failed (HTTP 5xx, including Anthropic's 529 "overloaded").
    #[error("provider error {status}: {body_excerpt}")]
    Server {
        /// The HTTP status.
        status: u16,
        /// The start of the reply body.
        body_excerpt: String,
    },
    /// The provider rejected the request (HTTP 4xx other than 408 and 429): a bad key, an
    /// unknown model, a request it does not accept. Trying again will not help.
    #[error("provider rejected the request with {status}: {body_excerpt}")]
    Rejected {
        /// The HTTP status.
        status: u16,
        /// The start of the reply body.
        body_excerpt: String,
    },
    /// The model or a filter refused, and the reply has nothing usable.
    #[error("the model refused: {reason}")]
    Refused {
        /// The refusal text or the block reason.
        reason: String,
    },
    /// The reply could not be understood.
    #[error("malformed reply from the model: {reason}")]
    Malformed {
        /// What was wrong with it.
        reason: String,
    },
    /// The model is not configured correctly; nothing was sent.
    #[error("invalid {setting}: {reason}")]
    BadConfig {
        /// The setting (environment variable) at fault.
        setting: String,
        /// Why; never contains a secret's value.
        reason: String,
    },
    /// The request did not reach the provider or the reply did not come back whole.
    #[error("cannot reach the model: {reason}")]
    Transport {
        /// The transport error.
        reason: String,
    },
    /// A [`crate::scripted::ScriptedModel`] was called in a way its script does not allow.
    #[error("scripted model: {reason}")]
    ScriptViolated {
        /// What the script expected and what happened.
        reason: String,
    },
}

fn retry_after_text(retry_after: Option<Duration>) -> String {
    retry_after
        .map(|wait| format!(", retry after {:.1}s", wait.as_secs_f64()))
        .unwrap_or_default()
}

impl ModelError {
    /// Whether the same request may succeed if sent again: timeouts, 429, 5xx and transport
    /// failures; never a refusal, a rejection, a malformed reply or bad configuration.
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Timeout
            | Self::RateLimited { .. }
            | Self::Server { .. }
            | Self::Transport { .. } => true,
            Self::Rejected { .. }
            | Self::Refused { .. }
            | Self::Malformed { .. }
            | Self::BadConfig { .. }
            | Self::ScriptViolated { .. } => false,
        }
    }

    /// A [`ModelError::BadConfig`] for `setting`.
    #[must_use]
    pub fn bad_config(setting: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::BadConfig {
            setting: setting.into(),
            reason: reason.into(),
        }
    }

    /// A [`ModelError::Malformed`].
    #[must_use]
    pub fn malformed(reason: impl Into<String>) -> Self {
        Self::Malformed {
            reason: reason.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_transient_failures_are_retryable() {
        let retryable = [
            ModelError::Timeout,
            ModelError::RateLimited { retry_after: None },
            ModelError::Server {
                status: 503,
                body_excerpt: String::new(),
            },
            ModelError::Transport {
                reason: "connection reset".into(),
            },
        ];
        let final_errors = [
            ModelError::Rejected {
                status: 401,
                body_excerpt: String::new(),
            },
            ModelError::Refused {
                reason: "no".into(),
            },
            ModelError::malformed("not JSON"),
            ModelError::bad_config("OPENAI_API_KEY", "missing"),
            ModelError::ScriptViolated {
                reason: "past the end".into(),
            },
        ];
        assert!(retryable.iter().all(ModelError::is_retryable));
        assert!(!final_errors.iter().any(ModelError::is_retryable));
    }

    #[test]
    fn a_rate_limit_message_says_how_long_to_wait() {
        let error = ModelError::RateLimited {
            retry_after: Some(Duration::from_millis(1500)),
        };
        assert_eq!(
            error.to_string(),
            "rate limited by the provider, retry after 1.5s"
        );
    }

    #[test]
    fn a_reply_replays_as_the_assistant_turn_and_its_calls_get_results() {
        let call = ToolCall::new("call_1", "Heading", json!({"text": "Hi"}));
        let response = ChatResponse::tool_calls(vec![call.clone()]);
        assert_eq!(
            Message::assistant(&response),
            Message::Assistant {
                text: None,
                tool_calls: vec![call.clone()]
            }
        );
        assert_eq!(
            Message::tool_error(&call, json!("bad level")),
            Message::ToolResult {
                call_id: "call_1".into(),
                name: "Heading".into(),
                content: json!("bad level"),
                is_error: true,
            }
        );
    }

    #[test]
    fn malformed_arguments_are_replayed_as_the_raw_text() {
        let call = ToolCall {
            id: "call_1".into(),
            name: "Table".into(),
            arguments: Err(MalformedArguments {
                raw: "{\"rows\": [".into(),
                error: "EOF while parsing".into(),
            }),
            signature: None,
        };
        assert_eq!(call.arguments_text(), "{\"rows\": [");
        assert_eq!(
            ToolCall::new("c", "T", json!({"a": 1})).arguments_text(),
            "{\"a\":1}"
        );
    }

    #[test]
    fn a_stop_with_tool_calls_counts_as_tool_use() {
        let calls = [ToolCall::new("c", "T", json!({}))];
        assert_eq!(
            StopReason::EndTurn.given_tool_calls(&calls),
            StopReason::ToolUse
        );
        assert_eq!(
            StopReason::EndTurn.given_tool_calls(&[]),
            StopReason::EndTurn
        );
        assert_eq!(
            StopReason::MaxTokens.given_tool_calls(&calls),
            StopReason::MaxTokens
        );
    }
}
