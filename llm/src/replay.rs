//! [`ReplayModel`]: a recorded or hand-written [`Transcript`] of a model's behaviour, replayed as
//! a [`ChatModel`].
//!
//! Transcripts (`tests/transcripts/<name>.json`, format in `tests/transcripts/README.md`) show
//! what real models do — place whole forms, make the mistakes `ValidateForm` must catch, write
//! tool calls as text — so the test suite and `tessera eval --transcripts` can run the agent loop
//! against that behaviour without a network. Turn *i* of a generation is answered by
//! `turns[i]`; past the end the model answers empty text, which is how a model stops.
//!
//! Unlike [`crate::ScriptedModel`] it checks nothing about the requests and knows no tool
//! names: a transcript may call any tool, and whether the loop accepts it is what is measured.
//! One `ReplayModel` replays one generation; make a new one per run.

use std::{
    path::{Path, PathBuf},
    sync::atomic::{AtomicUsize, Ordering},
};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::model::{
    ChatModel, ChatRequest, ChatResponse, MalformedArguments, ModelName, PageMode, Result,
    StopReason, ToolCall, Usage,
};

/// The provider name replayed transcripts report.
pub const REPLAY: &str = "replay";

/// A transcript could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    /// The file or folder could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path at fault.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a transcript; the message names the field.
    #[error("{path}: {message}")]
    Invalid {
        /// The file at fault.
        path: PathBuf,
        /// What is wrong, naming the field.
        message: String,
    },
}

/// One transcript file.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transcript {
    /// The file's stem; set by the loader.
    #[serde(skip)]
    pub name: String,
    /// The `tests/quality/<scenario>.json` fixture it answers.
    pub scenario: String,
    /// What realistic behaviour it shows.
    pub notes: String,
    /// The model it was recorded from (`openai:qwen2.5-coder-1.5b-instruct-q4_k_m`); absent for
    /// a hand-written transcript.
    #[serde(default)]
    pub model: Option<String>,
    /// When it was recorded (RFC 3339); absent for a hand-written transcript.
    #[serde(default)]
    pub recorded: Option<String>,
    /// How the page was asked for: `tools` (the tool loop, the default) or `whole` (the whole
    /// page in one constrained answer; each turn's `text` is the answer).
    #[serde(default)]
    pub mode: Option<PageMode>,
    /// The outcome the transcript claims, checked by the test suite.
    #[serde(default)]
    pub expect: Option<Expectation>,
    /// The model's turns, in order.
    pub turns: Vec<TranscriptTurn>,
}

/// What a transcript claims happens when it is replayed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    /// How the generation ends.
    pub outcome: ExpectedOutcome,
    /// The model's turns (the fallback's not counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<u32>,
    /// How many tool calls the loop read from the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_tool_calls: Option<u32>,
    /// The page the replay must build, as its outline (`GetPage`'s lines), for a recorded
    /// transcript: the same answers give the same page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<Vec<String>>,
    /// Rules code must report to the model along the way (`ValidateForm` errors such as
    /// `field_outside_form`, refusals such as `invalid_props`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reported: Vec<String>,
}

/// How a replayed generation ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExpectedOutcome {
    /// The model's page passed `ValidateForm`.
    Ok,
    /// The model gave up or ran out of turns; the heuristic page was used.
    FellBack,
}

/// One turn of the model.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TranscriptTurn {
    /// What it wrote (may hold tool calls written as text).
    #[serde(default)]
    pub text: Option<String>,
    /// The calls it placed through the protocol.
    #[serde(default)]
    pub tool_calls: Vec<WrittenCall>,
    /// The provider's token count, when the transcript was recorded from a real model.
    #[serde(default)]
    pub usage: Option<Usage>,
}

/// One protocol tool call; `arguments` is an object, or a string as some providers send it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WrittenCall {
    /// The tool.
    pub name: String,
    /// Its arguments.
    #[serde(default)]
    pub arguments: Value,
}

impl Transcript {
    /// Reads one transcript file.
    ///
    /// # Errors
    /// [`TranscriptError`] naming the file, and the field when the JSON does not fit.
    pub fn from_file(path: &Path) -> Result<Self, TranscriptError> {
        let text = std::fs::read_to_string(path).map_err(|source| TranscriptError::Io {
            path: path.to_owned(),
            source,
        })?;
        let mut transcript: Self =
            serde_json::from_str(&text).map_err(|error| TranscriptError::Invalid {
                path: path.to_owned(),
                message: error.to_string(),
            })?;
        transcript.name = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(transcript)
    }

    /// Every `*.json` transcript in `dir`, by file name.
    ///
    /// # Errors
    /// [`TranscriptError`] for the folder or the first file that cannot be read.
    pub fn load_dir(dir: &Path) -> Result<Vec<Self>, TranscriptError> {
        let io = |source| TranscriptError::Io {
            path: dir.to_owned(),
            source,
        };
        json_files(dir)
            .map_err(io)?
            .iter()
            .map(|path| Self::from_file(path))
            .collect()
    }
}

/// The `*.json` files in `dir`, sorted by path: the fixtures of a folder (transcripts here,
/// evaluation scenarios in the root crate), read in an order that does not depend on the disk.
///
/// # Errors
/// The folder or one of its entries cannot be read.
pub fn json_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path
            .extension()
            .is_some_and(|extension| extension == "json")
        {
            paths.push(path);
        }
    }
    paths.sort();
    Ok(paths)
}

/// Replays one [`Transcript`], one turn per call.
#[derive(Debug)]
pub struct ReplayModel {
    name: ModelName,
    mode: PageMode,
    turns: Vec<TranscriptTurn>,
    next_turn: AtomicUsize,
}

impl ReplayModel {
    /// A model that answers with `transcript`'s turns, from the first.
    #[must_use]
    pub fn new(transcript: &Transcript) -> Self {
        Self {
            name: ModelName::new(REPLAY, transcript.name.clone()),
            mode: transcript.mode.unwrap_or(PageMode::Tools),
            turns: transcript.turns.clone(),
            next_turn: AtomicUsize::new(0),
        }
    }

    fn response(turn_number: usize, turn: &TranscriptTurn) -> ChatResponse {
        let tool_calls: Vec<ToolCall> = turn
            .tool_calls
            .iter()
            .enumerate()
            .map(|(index, call)| ToolCall {
                id: format!("call_{turn_number}_{}", index + 1),
                name: call.name.clone(),
                arguments: arguments_of(&call.arguments),
                signature: None,
            })
            .collect();
        let stop_reason = if tool_calls.is_empty() {
            StopReason::EndTurn
        } else {
            StopReason::ToolUse
        };
        ChatResponse {
            text: turn.text.clone(),
            tool_calls,
            stop_reason,
            usage: turn.usage.unwrap_or_default(),
        }
    }
}

/// Arguments as a provider delivers them: a string is JSON text that may not parse.
fn arguments_of(arguments: &Value) -> std::result::Result<Value, MalformedArguments> {
    match arguments {
        Value::String(raw) => serde_json::from_str(raw).map_err(|error| MalformedArguments {
            raw: raw.clone(),
            error: error.to_string(),
        }),
        Value::Null => Ok(Value::Object(serde_json::Map::new())),
        other => Ok(other.clone()),
    }
}

#[async_trait::async_trait]
impl ChatModel for ReplayModel {
    fn name(&self) -> ModelName {
        self.name.clone()
    }

    fn page_mode(&self) -> PageMode {
        self.mode
    }

    async fn chat(&self, _request: ChatRequest) -> Result<ChatResponse> {
        let index = self.next_turn.fetch_add(1, Ordering::Relaxed);
        Ok(match self.turns.get(index) {
            Some(turn) => Self::response(index + 1, turn),
            None => ChatResponse::text(""),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn transcript(value: Value) -> anyhow::Result<Transcript> {
        Ok(serde_json::from_value(value)?)
    }

    #[tokio::test]
    async fn turns_replay_in_order_then_the_model_stops() -> anyhow::Result<()> {
        let mut recorded = transcript(json!({
            "scenario": "schedule-meeting",
            "notes": "two turns",
            "turns": [
                {"tool_calls": [{"name": "Form", "arguments": {"props": {}}},
                                {"name": "Finish", "arguments": "{\"summary\": "}]},
                {"text": "```json\n{\"name\": \"Finish\", \"arguments\": {}}\n```",
                 "usage": {"input_tokens": 900, "output_tokens": 20}}
            ]
        }))?;
        recorded.name = "example".into();
        let model = ReplayModel::new(&recorded);
        assert_eq!(model.name().to_string(), "replay:example");
        let first = model.chat(ChatRequest::default()).await?;
        assert_eq!(first.tool_calls[0].id, "call_1_1");
        assert_eq!(first.tool_calls[0].arguments, Ok(json!({"props": {}})));
        assert!(
            first.tool_calls[1].arguments.is_err(),
            "string arguments that do not parse arrive malformed"
        );
        assert_eq!(first.stop_reason, StopReason::ToolUse);
        let second = model.chat(ChatRequest::default()).await?;
        assert!(
            second.tool_calls.is_empty(),
            "text calls are the loop's job"
        );
        assert_eq!(second.usage.input_tokens, 900);
        let past_the_end = model.chat(ChatRequest::default()).await?;
        assert_eq!(past_the_end.text.as_deref(), Some(""));
        assert!(past_the_end.tool_calls.is_empty());
        Ok(())
    }

    #[test]
    fn a_transcript_with_an_unknown_field_is_refused_naming_it() {
        let error = transcript(json!({"scenario": "x", "notes": "", "turns": [], "turn": []}))
            .err()
            .map(|error| error.to_string());
        assert!(
            error.as_deref().is_some_and(|text| text.contains("`turn`")),
            "{error:?}"
        );
    }
}
