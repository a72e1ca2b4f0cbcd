//! The model loop: the model proposes tool calls, each goes through the gate, until it answers in
//! words, pauses for a person, is stopped, or uses up its model calls.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
};

use minijinja::{context, Environment};
use serde_json::json;

use super::{
    gate::Gate,
    group::GroupGate,
    text::{plural, summarize},
    Orchestrator, Turn,
};
use crate::chat::scope::ScopeRules as _;
use crate::chat::{
    calendar::CivilDate,
    confirm::Caller,
    header::{CallStatus, Step, StepRole},
    manifest::Operation,
    offer,
    planner::{self},
    session::ChatSession,
    threads::{Thread, ThreadStatus},
    ChatError,
};
use crate::llm::{adopt_text_tool_calls, ChatModel, ChatRequest, ChatResponse, Message, ToolCall};

/// The prompt templates, parsed once per orchestrator; a broken one is logged and the loop then
/// fails each turn with [`ChatError::Template`] rather than the server refusing to start.
pub(super) fn system_templates() -> Environment<'static> {
    let mut templates = Environment::new();
    templates.set_trim_blocks(true);
    if let Err(error) = templates.add_template("system.j2", SYSTEM_TEMPLATE) {
        tracing::error!(error = %error, "the chat system prompt template does not parse");
    }
    templates
}

/// The most model calls one turn may make before code stops the loop.
pub const DEFAULT_MAX_MODEL_TURNS: usize = 8;

const SYSTEM_TEMPLATE: &str = include_str!("../prompts/system.j2");

/// The models a session may use, by name; one is the default.
#[derive(Clone)]
pub struct SessionModels {
    default: String,
    models: BTreeMap<String, Arc<dyn ChatModel>>,
}

impl std::fmt::Debug for SessionModels {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("SessionModels")
            .field("default", &self.default)
            .field("models", &self.models.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl SessionModels {
    /// Only `model`, under `name`, as the default.
    #[must_use]
    pub fn only(name: impl Into<String>, model: Arc<dyn ChatModel>) -> Self {
        let name = name.into();
        Self {
            default: name.clone(),
            models: BTreeMap::from([(name, model)]),
        }
    }

    /// Adds `model` under `name` and makes it the default.
    #[must_use]
    pub fn with_default(mut self, name: impl Into<String>, model: Arc<dyn ChatModel>) -> Self {
        let name = name.into();
        self.models.insert(name.clone(), model);
        self.default = name;
        self
    }

    /// The default model's name.
    #[must_use]
    pub fn default_name(&self) -> &str {
        &self.default
    }

    /// Every name.
    #[must_use]
    pub fn names(&self) -> Vec<String> {
        self.models.keys().cloned().collect()
    }

    pub(in crate::chat) fn get(&self, name: &str) -> Option<Arc<dyn ChatModel>> {
        self.models.get(name).cloned()
    }
}

impl Orchestrator {
    pub(super) fn model_for(&self, session: &ChatSession) -> Arc<dyn ChatModel> {
        self.inner
            .models
            .get(&session.model)
            .or_else(|| self.inner.models.get(self.inner.models.default_name()))
            .unwrap_or_else(|| {
                Arc::new(planner::Planner::new(self.inner.manifest.clone(), {
                    let clock = self.inner.clock.clone();
                    Arc::new(move || CivilDate::from_unix_ms(clock()))
                }))
            })
    }

    pub(super) fn system_prompt(&self, tools: &[String]) -> Result<String, ChatError> {
        let manifest = &self.inner.manifest;
        self.inner
            .templates
            .get_template("system.j2")
            .and_then(|template| {
                template.render(context! {
                    site => manifest.site,
                    description => manifest.description,
                    today => self.today().to_string(),
                    tools => tools,
                })
            })
            .map_err(|error| ChatError::Template(error.to_string()))
    }

    /// Answers `skipped` (calls the person's stop came before) as not run, each with a cancelled
    /// step, and marks the turn stopped.
    pub(super) async fn skip_after_stop(
        &self,
        turn: &mut Turn,
        thread: &Thread,
        skipped: &[ToolCall],
    ) -> Result<(), ChatError> {
        for call in skipped {
            self.append_model(
                turn.session.id,
                thread.id,
                &Message::tool_error(call, json!({"error": "not run: the person said stop"})),
            )
            .await?;
            let step = Step::new(
                call.name.clone(),
                self.role_of(&call.name),
                CallStatus::Cancelled,
                "not started: stopped by the person",
            );
            self.push_step(turn, thread.id, step);
        }
        turn.stopped = true;
        Ok(())
    }

    /// The model loop for `thread`, from the model's next proposal until it answers in words,
    /// pauses for a confirmation, is stopped, or uses up its turns.
    /// The caller registers the run ([`Self::start_run`]) and keeps the guard alive across it.
    pub(super) async fn run_loop(
        &self,
        turn: &mut Turn,
        thread: &mut Thread,
    ) -> Result<(), ChatError> {
        thread.status = ThreadStatus::InProgress;
        thread.pending_question = None;
        self.save_thread(thread).await?;
        let model = self.model_for(&turn.session);
        let operations = turn.session.scope.model_operations(&self.inner.manifest);
        let searching = offer::needs_search(&self.inner.manifest, &operations);
        for _ in 0..self.inner.max_model_turns {
            if turn.cancel.is_cancelled() {
                turn.stopped = true;
                break;
            }
            let Some(response) = self
                .propose(turn, thread, model.as_ref(), &operations)
                .await?
            else {
                return Ok(());
            };
            if response.tool_calls.is_empty() {
                return self.answer_in_words(turn, thread, response.text).await;
            }
            let (searches, calls): (Vec<ToolCall>, Vec<ToolCall>) = response
                .tool_calls
                .into_iter()
                .partition(|call| call.name == offer::FIND_OPERATIONS && searching);
            for search in &searches {
                let query = search
                    .arguments
                    .as_ref()
                    .ok()
                    .and_then(|arguments| arguments.get("query"))
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or_default();
                let found = offer::find(&operations, query);
                self.append_model(
                    turn.session.id,
                    thread.id,
                    &Message::tool_result(search, found),
                )
                .await?;
            }
            if self.gate_calls(turn, thread, &calls).await? == Proposal::Paused {
                return Ok(());
            }
            if turn.stopped {
                break;
            }
        }
        self.end_without_answer(turn, thread).await
    }

    /// Asks the model for its next step and records its reply; `None` when the model failed,
    /// which ends the turn with the failure shown and the thread failed.
    async fn propose(
        &self,
        turn: &mut Turn,
        thread: &mut Thread,
        model: &dyn ChatModel,
        operations: &[&Operation],
    ) -> Result<Option<ChatResponse>, ChatError> {
        let history = self.model_history(turn.session.id).await?;
        // A large site is offered a search and what it found, so the offer is per call.
        let tools = offer::offer(&self.inner.manifest, operations, &history);
        let tool_names: Vec<String> = tools.iter().map(|tool| tool.name.clone()).collect();
        let mut messages = vec![Message::system(self.system_prompt(&tool_names)?)];
        messages.extend(history);
        let request = ChatRequest {
            messages,
            tools: tools.clone(),
            max_tokens: None,
            temperature: None,
            response_format: None,
        };
        let mut response = match model.chat(request).await {
            Ok(response) => response,
            Err(error) => {
                tracing::warn!(chat.session = %turn.session.id, model = %model.name(), error = %error, "the chat model failed");
                let step = Step::new(
                    model.name().to_string(),
                    StepRole::Read,
                    CallStatus::Failed,
                    "model call",
                )
                .with_error(error.to_string());
                self.push_step(turn, thread.id, step);
                turn.narrative = "The model failed, so I stopped here. You can try again, or use the manual tools (/tools).".to_owned();
                thread.status = ThreadStatus::Failed;
                thread.summary = format!("The model failed: {error}");
                self.save_thread(thread).await?;
                return Ok(None);
            }
        };
        // Small models often write their calls as JSON text; the ids stay unique per session.
        let text_calls = adopt_text_tool_calls(
            &mut response,
            &tools,
            &format!("text_{}_", &uuid::Uuid::new_v4().simple().to_string()[..8]),
        );
        if text_calls > 0 {
            tracing::info!(chat.session = %turn.session.id, model = %model.name(), text_tool_calls = text_calls, "read tool calls from the model's text");
        }
        self.append_model(turn.session.id, thread.id, &Message::assistant(&response))
            .await?;
        Ok(Some(response))
    }

    /// Ends the turn on the model's answer in words; the thread failed when a call of it did.
    async fn answer_in_words(
        &self,
        turn: &mut Turn,
        thread: &mut Thread,
        text: Option<String>,
    ) -> Result<(), ChatError> {
        turn.narrative = text.unwrap_or_default();
        let failed = turn
            .steps
            .iter()
            .any(|step| step.status == CallStatus::Failed);
        thread.status = if failed {
            ThreadStatus::Failed
        } else {
            ThreadStatus::Done
        };
        thread.summary = summarize(&turn.steps, &turn.narrative);
        self.save_thread(thread).await
    }

    /// Puts a reply's `calls` through the gate in order: alone, or together with the other calls
    /// of their operation when the turn's totals demand it. Stops at the first call that waits
    /// for a person (the later ones are answered "not run") or at the person's stop.
    async fn gate_calls(
        &self,
        turn: &mut Turn,
        thread: &mut Thread,
        calls: &[ToolCall],
    ) -> Result<Proposal, ChatError> {
        // What each operation's calls add up to in this turn is judged before any runs.
        let demands = self.turn_demands(turn, calls).await?;
        let mut grouped: BTreeSet<&str> = BTreeSet::new();
        for (index, call) in calls.iter().enumerate() {
            if grouped.contains(call.name.as_str()) {
                continue;
            }
            if turn.cancel.is_cancelled() {
                let unanswered: Vec<ToolCall> = calls[index..]
                    .iter()
                    .filter(|later| !grouped.contains(later.name.as_str()))
                    .cloned()
                    .collect();
                self.skip_after_stop(turn, thread, &unanswered).await?;
                break;
            }
            let gate = match demands.get(&call.name).copied() {
                None => self.gate(turn, thread, call, Caller::Model, None).await?,
                Some(demand) => {
                    grouped.insert(call.name.as_str());
                    let members: Vec<&ToolCall> = calls
                        .iter()
                        .filter(|member| member.name == call.name)
                        .collect();
                    let (answered, paused) =
                        match self.gate_group(turn, thread, &members, demand).await? {
                            GroupGate::Answered(answered) => (answered, None),
                            GroupGate::Paused {
                                answered,
                                confirmation,
                            } => (answered, Some(confirmation)),
                        };
                    for message in &answered {
                        self.append_model(turn.session.id, thread.id, message)
                            .await?;
                    }
                    match paused {
                        Some(confirmation) => Gate::Paused(confirmation),
                        None => continue,
                    }
                }
            };
            match gate {
                Gate::Answered(message) => {
                    self.append_model(turn.session.id, thread.id, &message)
                        .await?;
                }
                Gate::Paused(confirmation) => {
                    // A group's own calls are answered once it is decided.
                    let later_calls = calls[index + 1..]
                        .iter()
                        .filter(|later| !grouped.contains(later.name.as_str()));
                    for later in later_calls {
                        let error = json!({"error": format!("not run: `{}` waits for the person's confirmation; propose this call again afterwards", confirmation.operation)});
                        self.append_model(
                            turn.session.id,
                            thread.id,
                            &Message::tool_error(later, error),
                        )
                        .await?;
                    }
                    self.pause(turn, thread, &confirmation).await?;
                    return Ok(Proposal::Paused);
                }
            }
        }
        Ok(Proposal::Answered)
    }

    /// Ends a turn the model did not answer in words: the person stopped it, or it used up its
    /// model calls.
    async fn end_without_answer(
        &self,
        turn: &mut Turn,
        thread: &mut Thread,
    ) -> Result<(), ChatError> {
        if turn.stopped || turn.cancel.is_cancelled() {
            turn.stopped = true;
            let finished = turn
                .steps
                .iter()
                .filter(|step| step.status == CallStatus::Succeeded)
                .count();
            turn.narrative = format!(
                "Stopped at your request. What finished stays finished ({} in this turn, see the header); nothing else will run.",
                plural(finished, "completed step")
            );
            thread.status = ThreadStatus::Failed;
            thread.summary = "Stopped at the person's request.".to_owned();
        } else {
            turn.narrative = format!(
                "I stopped after {} model calls without a final answer; the steps above are what ran.",
                self.inner.max_model_turns
            );
            thread.status = ThreadStatus::Failed;
            thread.summary = "Stopped: too many model calls.".to_owned();
        }
        self.save_thread(thread).await
    }
}

/// Where a model reply's calls left the turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Proposal {
    /// Each call was answered (run, refused, or skipped after a stop): the model goes on.
    Answered,
    /// A call waits for the person's confirmation: the turn ends here.
    Paused,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        chat::orchestrator::test_support::{call, Fixture},
        llm::ScriptedModel,
    };

    #[test]
    fn the_last_model_added_is_the_default_and_names_are_sorted() {
        let models = SessionModels::only("zeta", Arc::new(ScriptedModel::new(Vec::new())))
            .with_default("alpha", Arc::new(ScriptedModel::new(Vec::new())));
        assert_eq!(models.default_name(), "alpha");
        assert_eq!(models.names(), vec!["alpha".to_owned(), "zeta".to_owned()]);
        assert!(models.get("zeta").is_some());
        assert!(models.get("gpt").is_none());
    }

    #[tokio::test]
    async fn the_system_prompt_names_the_site_and_the_offered_tools() -> anyhow::Result<()> {
        let fixture = Fixture::new(Vec::new()).await?;
        let prompt = fixture
            .orchestrator
            .system_prompt(&["searchItems".to_owned()])?;
        assert!(prompt.contains("searchItems"), "{prompt}");
        assert!(
            prompt.contains(&fixture.orchestrator.manifest().site),
            "{prompt}"
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_model_that_never_answers_in_words_is_stopped_after_its_model_calls(
    ) -> anyhow::Result<()> {
        let turns = (0..4)
            .map(|index| call(&format!("c{index}"), "searchItems", json!({"limit": 1})))
            .collect();
        let fixture = Fixture::new(turns).await?;
        let session = fixture.session().await?;
        let outcome = fixture
            .orchestrator
            .handle_turn(session.id, "find my items")
            .await?;
        assert!(
            outcome
                .narrative
                .starts_with("I stopped after 4 model calls without a final answer"),
            "{}",
            outcome.narrative
        );
        assert_eq!(outcome.thread_status, Some(ThreadStatus::Failed));
        assert_eq!(outcome.header.steps.len(), 4);
        Ok(())
    }
}
