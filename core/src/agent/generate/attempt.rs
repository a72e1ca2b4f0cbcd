//! One model's attempt at the page and how it ended, and the sequence of attempts a generation
//! makes: the model's own (in its page mode), the tool loop when a provider refuses the page
//! schema, and the heuristic model's when no valid page came of them.

use serde_json::{json, Value};
use tessera_app::tree::PageTree;

use super::{setup::Setup, tool_loop, whole, AgentError};
use crate::{
    agent::{
        events::{EventKind, EventLog},
        generation::GenerationOutcome,
        heuristic::{HeuristicModel, HEURISTIC},
    },
    forms::validate_form::FormReport,
    llm::{ChatModel, ChatRequest, ChatResponse, ModelError, ModelName, PageMode, Usage},
};

/// How one attempt (one model's run of the loop) ended.
#[derive(Debug)]
pub(super) enum AttemptEnd {
    /// Finished with a valid page.
    Valid,
    /// `max_steps` turns without a finished, valid page.
    Exhausted,
    /// The model call failed (after its retries).
    ModelFailed(ModelError),
}

/// One model's attempt at the page, as the record keeps it.
pub(super) struct Attempt {
    pub(super) model: ModelName,
    /// `tools` (the tool loop) or `whole` (the whole page in one answer).
    pub(super) mode: &'static str,
    pub(super) end: AttemptEnd,
    pub(super) turns: i64,
    pub(super) usage: Usage,
    /// Tool calls read from the model's text rather than its `tool_calls` (`llm::text_calls`).
    pub(super) text_tool_calls: usize,
    pub(super) tree: PageTree,
    pub(super) report: FormReport,
    pub(super) transcript: Vec<Value>,
}

impl Attempt {
    /// One model call of this attempt, counted; `None` (the attempt ends, the error recorded
    /// and reported) when it fails after its retries.
    pub(super) async fn call(
        &mut self,
        model: &dyn ChatModel,
        request: ChatRequest,
        turn: usize,
        log: &mut EventLog<'_>,
    ) -> Result<Option<ChatResponse>, AgentError> {
        match model.chat(request).await {
            Ok(response) => {
                self.turns += 1;
                self.usage.input_tokens += response.usage.input_tokens;
                self.usage.output_tokens += response.usage.output_tokens;
                Ok(Some(response))
            }
            Err(error) => {
                log.push(
                    EventKind::ModelError,
                    json!({"turn": turn, "model": self.model.to_string(), "error": error.to_string()}),
                );
                log.flush().await?;
                self.end = AttemptEnd::ModelFailed(error);
                Ok(None)
            }
        }
    }

    /// The attempt as the generation's transcript keeps it.
    pub(super) fn summary(&self) -> Value {
        let (end, error) = match &self.end {
            AttemptEnd::Valid => ("valid", None),
            AttemptEnd::Exhausted => ("exhausted", None),
            AttemptEnd::ModelFailed(error) => ("model_error", Some(error.to_string())),
        };
        json!({
            "model": self.model.to_string(),
            "mode": self.mode,
            "end": end,
            "error": error,
            "turns": self.turns,
            "tokens_in": self.usage.input_tokens,
            "tokens_out": self.usage.output_tokens,
            "text_tool_calls": self.text_tool_calls,
            "last_errors": self.report.errors,
            "transcript": self.transcript,
        })
    }
}

/// The attempts of one generation in page `mode`, and its outcome: the model's own, the tool loop
/// after it when the provider refused the page schema (in `auto`), and the heuristic model's when
/// the last of those has no valid page.
pub(super) async fn run_attempts(
    model: &dyn ChatModel,
    setup: &Setup<'_>,
    mode: PageMode,
    log: &mut EventLog<'_>,
) -> Result<(Vec<Attempt>, GenerationOutcome), AgentError> {
    let mut attempts = Vec::new();
    if mode == PageMode::Tools {
        attempts.push(tool_loop::attempt(model, setup, log).await?);
    } else {
        let whole = whole::attempt(model, setup, log).await?;
        // A provider or server that cannot constrain its answer refuses the request outright;
        // the same model may still build the page by tool calls.
        let refused = matches!(
            &whole.end,
            AttemptEnd::ModelFailed(ModelError::Rejected { .. })
        );
        attempts.push(whole);
        if refused && mode == PageMode::Auto {
            log.push(
                EventKind::FallBack,
                json!({"reason": "the provider refused the page schema; building by tool calls",
                       "to": "tools"}),
            );
            attempts.push(tool_loop::attempt(model, setup, log).await?);
        }
    }
    let mut outcome = GenerationOutcome::Ok;
    let last_end = attempts.last().map(|last| &last.end);
    if !matches!(last_end, Some(AttemptEnd::Valid)) {
        outcome = GenerationOutcome::Failed;
        if model.name().provider != HEURISTIC {
            let reason = match last_end {
                Some(AttemptEnd::ModelFailed(error)) => format!("model error: {error}"),
                _ if mode == PageMode::Tools => {
                    format!("no valid page after {} turns", setup.input.max_steps)
                }
                _ => "no valid page after the answer and one repair turn".to_owned(),
            };
            let last_errors = attempts
                .last()
                .map(|last| last.report.errors.clone())
                .unwrap_or_default();
            log.push(
                EventKind::FallBack,
                json!({"reason": reason, "last_errors": last_errors, "to": HEURISTIC}),
            );
            let fallback = tool_loop::attempt(&HeuristicModel::new(), setup, log).await?;
            if matches!(fallback.end, AttemptEnd::Valid) {
                outcome = GenerationOutcome::FellBack;
            }
            attempts.push(fallback);
        }
    }
    Ok((attempts, outcome))
}
