//! [`ScriptedModel`]: a fake [`ChatModel`] that replays a fixed list of turns, for tests.
//!
//! It exists so the agent loop can be tested turn by turn without a network: each
//! [`ScriptedTurn`] may assert which tools the loop offered, then answers with a reply (text
//! and/or tool calls) or an error. Every request is recorded so a test can check what the loop
//! sent (tool results, error feedback). It never improvises: a call past the end of the script
//! or an offered tool set that differs from the expected one is
//! [`ModelError::ScriptViolated`], which is not retryable, so the test fails with that message.

use std::{
    collections::BTreeSet,
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use super::model::{ChatModel, ChatRequest, ChatResponse, ModelError, ModelName, Result, ToolCall};

/// One scripted turn: an optional check of the tools offered, then the answer.
#[derive(Clone, Debug, PartialEq)]
pub struct ScriptedTurn {
    /// The tool names the request must offer (in any order); `None` skips the check.
    pub expect_tools: Option<Vec<String>>,
    /// What the model answers.
    pub reply: Result<ChatResponse>,
    /// How long to wait before answering (to exercise timeouts).
    pub delay: Duration,
}

impl ScriptedTurn {
    /// A turn that answers `response`.
    #[must_use]
    pub fn reply(response: ChatResponse) -> Self {
        Self {
            expect_tools: None,
            reply: Ok(response),
            delay: Duration::ZERO,
        }
    }

    /// A turn that answers with text and ends.
    #[must_use]
    pub fn text(text: impl Into<String>) -> Self {
        Self::reply(ChatResponse::text(text))
    }

    /// A turn that places `tool_calls`.
    #[must_use]
    pub fn tool_calls(tool_calls: Vec<ToolCall>) -> Self {
        Self::reply(ChatResponse::tool_calls(tool_calls))
    }

    /// A turn that fails with `error`.
    #[must_use]
    pub fn error(error: ModelError) -> Self {
        Self {
            expect_tools: None,
            reply: Err(error),
            delay: Duration::ZERO,
        }
    }

    /// Asserts the request offers exactly these tools.
    #[must_use]
    pub fn expecting_tools<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.expect_tools = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Waits `delay` before answering.
    #[must_use]
    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

#[derive(Debug, Default)]
struct Transcript {
    next_turn: usize,
    requests: Vec<ChatRequest>,
}

/// A model that replays [`ScriptedTurn`]s in order. Clones share the script and the record.
#[derive(Clone, Debug)]
pub struct ScriptedModel {
    name: ModelName,
    turns: Arc<Vec<ScriptedTurn>>,
    transcript: Arc<Mutex<Transcript>>,
}

impl ScriptedModel {
    /// A model that will answer with `turns`, one per call.
    #[must_use]
    pub fn new(turns: Vec<ScriptedTurn>) -> Self {
        Self {
            name: ModelName::new("scripted", "script"),
            turns: Arc::new(turns),
            transcript: Arc::default(),
        }
    }

    /// Reports `model` as the model name (the provider stays `scripted`).
    #[must_use]
    pub fn named(mut self, model: impl Into<String>) -> Self {
        self.name = ModelName::new("scripted", model);
        self
    }

    /// Every request received so far, in order (including ones that violated the script).
    #[must_use]
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.transcript().requests.clone()
    }

    /// How many turns have not been played yet.
    #[must_use]
    pub fn remaining_turns(&self) -> usize {
        self.turns.len().saturating_sub(self.transcript().next_turn)
    }

    fn transcript(&self) -> std::sync::MutexGuard<'_, Transcript> {
        // A test that panicked while holding the lock has already failed; keep the record.
        self.transcript
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Records `request` and picks the turn that answers it.
    fn take_turn(&self, request: ChatRequest) -> Result<ScriptedTurn> {
        let offered: BTreeSet<String> =
            request.tools.iter().map(|tool| tool.name.clone()).collect();
        let mut transcript = self.transcript();
        transcript.requests.push(request);
        let index = transcript.next_turn;
        let Some(turn) = self.turns.get(index) else {
            return Err(ModelError::ScriptViolated {
                reason: format!(
                    "called {} times but the script has only {} turns",
                    index + 1,
                    self.turns.len()
                ),
            });
        };
        transcript.next_turn += 1;
        if let Some(expected) = &turn.expect_tools {
            let expected: BTreeSet<String> = expected.iter().cloned().collect();
            if expected != offered {
                let missing: Vec<&String> = expected.difference(&offered).collect();
                let unexpected: Vec<&String> = offered.difference(&expected).collect();
                return Err(ModelError::ScriptViolated {
                    reason: format!(
                        "turn {} expected tools {expected:?}, but missing {missing:?} and \
                         unexpected {unexpected:?}",
                        index + 1
                    ),
                });
            }
        }
        Ok(turn.clone())
    }
}

#[async_trait::async_trait]
impl ChatModel for ScriptedModel {
    fn name(&self) -> ModelName {
        self.name.clone()
    }

    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse> {
        let turn = self.take_turn(request)?;
        if !turn.delay.is_zero() {
            tokio::time::sleep(turn.delay).await;
        }
        turn.reply
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::{Message, ToolDefinition};

    fn offering(names: &[&str]) -> ChatRequest {
        ChatRequest {
            messages: vec![Message::user("make a page")],
            tools: names
                .iter()
                .map(|name| ToolDefinition {
                    name: (*name).to_owned(),
                    description: String::new(),
                    parameters: json!({"type": "object"}),
                })
                .collect(),
            ..ChatRequest::default()
        }
    }

    #[tokio::test]
    async fn turns_are_replayed_in_order_and_requests_recorded() -> anyhow::Result<()> {
        let call = ToolCall::new("call_1", "Heading", json!({"text": "Hello"}));
        let model = ScriptedModel::new(vec![
            ScriptedTurn::tool_calls(vec![call.clone()]).expecting_tools(["Heading", "Finish"]),
            ScriptedTurn::text("done"),
        ]);
        let first = model.chat(offering(&["Finish", "Heading"])).await?;
        assert_eq!(first.tool_calls, vec![call]);
        let second = model.chat(offering(&[])).await?;
        assert_eq!(second.text.as_deref(), Some("done"));
        let requests = model.requests();
        assert_eq!(requests.len(), 2);
        assert_eq!(requests[0].tools.len(), 2);
        assert_eq!(model.remaining_turns(), 0);
        Ok(())
    }

    #[tokio::test]
    async fn a_call_past_the_script_is_an_error() -> anyhow::Result<()> {
        let model = ScriptedModel::new(vec![ScriptedTurn::text("only turn")]);
        model.chat(offering(&[])).await?;
        let error = model.chat(offering(&[])).await.err();
        assert_eq!(
            error,
            Some(ModelError::ScriptViolated {
                reason: "called 2 times but the script has only 1 turns".into()
            })
        );
        assert_eq!(model.requests().len(), 2);
        Ok(())
    }

    #[tokio::test]
    async fn offering_other_tools_than_expected_is_a_clear_error() {
        let model = ScriptedModel::new(vec![
            ScriptedTurn::text("unused").expecting_tools(["Heading", "Finish"])
        ]);
        let error = model
            .chat(offering(&["Heading", "Table"]))
            .await
            .err()
            .map(|error| error.to_string());
        assert_eq!(
            error.as_deref(),
            Some(
                "scripted model: turn 1 expected tools {\"Finish\", \"Heading\"}, but missing \
                 [\"Finish\"] and unexpected [\"Table\"]"
            )
        );
    }

    #[tokio::test]
    async fn a_scripted_error_is_returned_as_is() {
        let model = ScriptedModel::new(vec![ScriptedTurn::error(ModelError::Timeout)]);
        assert_eq!(model.chat(offering(&[])).await, Err(ModelError::Timeout));
        assert_eq!(model.name().to_string(), "scripted:script");
    }
}
