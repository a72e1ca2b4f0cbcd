//! One turn of the person: route it, do what the route says, reply with the header first.
//!
//! Routing itself is [`crate::chat::routing`]; this file only dispatches on the route and builds
//! the reply from what ran.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    broadcast::ChatEvent, decisions::PendingApproval, sessions::step_of_execution, text::plural,
    Orchestrator, Turn,
};
use crate::chat::{
    audit::{Execution, ExecutionStatus},
    header::ExecutionHeader,
    planner::{self},
    routing::{self, OverrideKind, Route},
    session::{SessionId, Speaker},
    slash::{self},
    threads::{Thread, ThreadId, ThreadStatus},
    ChatError,
};
use crate::llm::Message;

/// The result of one turn (or one decision, or one manual tool run).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TurnOutcome {
    /// The session.
    pub session_id: SessionId,
    /// How code routed it: a [`Route::name`], `slash`, `decision` or `manual_tool`.
    pub route: String,
    /// The thread it touched.
    pub thread_id: Option<ThreadId>,
    /// That thread's status afterwards.
    pub thread_status: Option<ThreadStatus>,
    /// What ran, built by code.
    #[schema(value_type = Object)]
    pub header: ExecutionHeader,
    /// The words after the header (the model's, or code's).
    pub narrative: String,
    /// Header, blank line, narrative: the stored reply.
    pub reply: String,
    /// Confirmations waiting in the session after this turn.
    #[schema(value_type = Vec<Object>)]
    pub pending_approvals: Vec<PendingApproval>,
    /// Everything emitted during the turn, in order.
    #[schema(value_type = Vec<Object>)]
    pub events: Vec<ChatEvent>,
}

impl Orchestrator {
    /// Handles one turn of the person: routes it, runs what it asks for, and replies with the
    /// execution header first.
    ///
    /// # Errors
    /// [`ChatError::SessionNotFound`]; storage failures. Model and site failures are not errors:
    /// they are in the outcome's header and narrative.
    pub async fn handle_turn(&self, id: SessionId, text: &str) -> Result<TurnOutcome, ChatError> {
        let session = self.session(id).await?;
        self.record_transcript(id, Speaker::User, None, text, None)
            .await?;
        let mut turn = Turn::new(session, "");
        if let Some(command) = slash::parse(text) {
            turn.route = "slash".to_owned();
            let thread = self.run_slash(&mut turn, command).await?;
            return self.finish_turn(turn, thread).await;
        }
        let threads = self.inner.store.chat_threads(id).await?;
        let route = routing::route(text, &threads, self.today());
        turn.route = route.name().to_owned();
        let find = |thread_id: Option<ThreadId>| {
            thread_id.and_then(|thread_id| {
                threads
                    .iter()
                    .find(|thread| thread.id == thread_id)
                    .cloned()
            })
        };
        let thread = match route {
            Route::Override { kind, thread, rest } => {
                let stopped = find(thread);
                self.routed(&mut turn, thread);
                let stopped = self.stop_thread(&mut turn, stopped).await?;
                match (kind, rest) {
                    (OverrideKind::Redirect, Some(rest)) => {
                        let stopped_note = std::mem::take(&mut turn.narrative);
                        let redirected = self.new_request(&mut turn, &rest).await?;
                        turn.narrative = format!("{stopped_note}\n\n{}", turn.narrative);
                        Some(redirected)
                    }
                    _ => stopped,
                }
            }
            Route::Answer { thread, answer } => {
                self.routed(&mut turn, Some(thread));
                match find(Some(thread)) {
                    Some(thread) => Some(self.answer(&mut turn, thread, answer, text).await?),
                    None => Some(self.new_request(&mut turn, text).await?),
                }
            }
            Route::StatusNudge { thread } => {
                self.routed(&mut turn, thread);
                let thread = find(thread);
                self.report_status(&mut turn, thread.as_ref()).await?;
                thread
            }
            Route::Filler { thread } => {
                self.routed(&mut turn, thread);
                let thread = find(thread);
                turn.narrative = match thread
                    .as_ref()
                    .and_then(|thread| thread.pending_question.as_ref())
                {
                    Some(question) => format!("Noted. Still waiting for you: {}", question.prompt),
                    None => "Noted.".to_owned(),
                };
                thread
            }
            Route::NewRequest { text } => Some(self.new_request(&mut turn, &text).await?),
        };
        self.finish_turn(turn, thread).await
    }

    pub(super) async fn finish_turn(
        &self,
        mut turn: Turn,
        thread: Option<Thread>,
    ) -> Result<TurnOutcome, ChatError> {
        let header = ExecutionHeader::new(std::mem::take(&mut turn.steps));
        let narrative = turn.narrative.trim().to_owned();
        let reply = if narrative.is_empty() {
            header.render()
        } else {
            format!("{}\n\n{narrative}", header.render())
        };
        let thread_id = thread.as_ref().map(|thread| thread.id);
        self.record_transcript(
            turn.session.id,
            Speaker::Assistant,
            thread_id,
            &reply,
            Some(&header),
        )
        .await?;
        self.emit(
            &mut turn,
            ChatEvent::Reply {
                thread_id,
                text: reply.clone(),
            },
        );
        let pending_approvals = self.pending_approvals(turn.session.id).await?;
        Ok(TurnOutcome {
            session_id: turn.session.id,
            route: turn.route,
            thread_id,
            thread_status: thread.map(|thread| thread.status),
            header,
            narrative,
            reply,
            pending_approvals,
            events: turn.events,
        })
    }

    pub(super) async fn new_request(
        &self,
        turn: &mut Turn,
        text: &str,
    ) -> Result<Thread, ChatError> {
        let intent = planner::parse(text, &self.inner.manifest, self.today());
        let mut thread = Thread::new(
            turn.session.id,
            intent
                .as_ref()
                .map_or_else(|| "request".to_owned(), planner::Intent::name),
            text.chars().take(200).collect::<String>(),
            self.now(),
        );
        thread
            .slots
            .insert("request".into(), Value::String(text.to_owned()));
        if let Some(intent) = &intent {
            thread
                .slots
                .insert("filters".into(), Value::Object(intent.filters.clone()));
        }
        self.save_thread(&mut thread).await?;
        self.routed(turn, Some(thread.id));
        self.run_on(turn, thread, text).await
    }

    /// Adds the person's `text` to the model conversation and runs the model loop for `thread`,
    /// cancellable through the turn.
    pub(super) async fn run_on(
        &self,
        turn: &mut Turn,
        mut thread: Thread,
        text: &str,
    ) -> Result<Thread, ChatError> {
        self.append_model(turn.session.id, thread.id, &Message::user(text))
            .await?;
        let (cancel, _running) = self.start_run(turn.session.id);
        turn.cancel = cancel;
        self.run_loop(turn, &mut thread).await?;
        Ok(thread)
    }

    pub(super) async fn stop_thread(
        &self,
        turn: &mut Turn,
        thread: Option<Thread>,
    ) -> Result<Option<Thread>, ChatError> {
        let was_running = self.stop(turn.session.id).await?;
        let withdrawn = self
            .inner
            .store
            .withdraw_confirmations(turn.session.id, thread.as_ref().map(|thread| thread.id))
            .await?;
        let Some(mut thread) = thread else {
            turn.narrative = "Nothing is running.".to_owned();
            return Ok(None);
        };
        let finished = self
            .inner
            .store
            .chat_executions(turn.session.id)
            .await?
            .iter()
            .filter(|execution| {
                execution.thread_id == thread.id && execution.status == ExecutionStatus::Succeeded
            })
            .count();
        thread.status = ThreadStatus::Failed;
        thread.pending_question = None;
        thread.summary = "Stopped at the person's request.".to_owned();
        self.save_thread(&mut thread).await?;
        let mut parts = vec!["Stopped.".to_owned()];
        if was_running {
            parts.push("The running work halts before its next request.".to_owned());
        }
        if withdrawn > 0 {
            parts.push(format!(
                "{} withdrawn; nothing was sent for it.",
                plural(withdrawn as usize, "pending confirmation")
            ));
        }
        parts.push(format!(
            "{} stay finished.",
            plural(finished, "finished step")
        ));
        turn.narrative = parts.join(" ");
        Ok(Some(thread))
    }

    pub(super) async fn report_status(
        &self,
        turn: &mut Turn,
        thread: Option<&Thread>,
    ) -> Result<(), ChatError> {
        let Some(thread) = thread else {
            turn.narrative = "Nothing is running, and nothing waits for you.".to_owned();
            return Ok(());
        };
        let executions: Vec<Execution> = self
            .executions(turn.session.id)
            .await?
            .into_iter()
            .filter(|execution| execution.thread_id == thread.id)
            .collect();
        // The header of a nudge is the thread's steps so far, as recorded: it shows progress and
        // failures the earlier replies may predate.
        turn.steps = executions.iter().map(step_of_execution).collect();
        let running = executions
            .iter()
            .find(|execution| execution.status == ExecutionStatus::Running);
        turn.narrative = match (thread.status, running) {
            (_, Some(execution)) => format!(
                "Still working on `{}`: {} of {} done.",
                execution.operation,
                execution.items_done,
                plural(execution.items_total, "item")
            ),
            (ThreadStatus::WorkflowProposed | ThreadStatus::WaitingForUser, None) => format!(
                "Waiting for you: {}",
                thread
                    .pending_question
                    .as_ref()
                    .map_or(thread.summary.as_str(), |question| question.prompt.as_str())
            ),
            (status, None) => format!("{} ({})", thread.summary, status.as_str().replace('_', " ")),
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::{
        chat::{orchestrator::test_support::Fixture, threads::ThreadStatus},
        llm::ScriptedTurn,
    };

    #[tokio::test]
    async fn thanks_is_noted_without_asking_the_model() -> anyhow::Result<()> {
        let fixture = Fixture::new(Vec::new()).await?;
        let session = fixture.session().await?;
        let outcome = fixture
            .orchestrator
            .handle_turn(session.id, "thanks")
            .await?;
        assert_eq!(outcome.narrative, "Noted.");
        assert!(
            fixture.model.requests().is_empty(),
            "filler never reaches the model"
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_request_answered_in_words_replies_header_first_and_closes_its_thread(
    ) -> anyhow::Result<()> {
        let fixture = Fixture::new(vec![ScriptedTurn::text("Nothing to do.")]).await?;
        let session = fixture.session().await?;
        let outcome = fixture
            .orchestrator
            .handle_turn(session.id, "what can you do with my items")
            .await?;
        assert_eq!(outcome.route, "new_request");
        assert_eq!(outcome.thread_status, Some(ThreadStatus::Done));
        assert_eq!(
            outcome.reply,
            format!("{}\n\nNothing to do.", outcome.header.render())
        );
        Ok(())
    }

    #[tokio::test]
    async fn stop_with_nothing_running_says_so() -> anyhow::Result<()> {
        let fixture = Fixture::new(Vec::new()).await?;
        let session = fixture.session().await?;
        let outcome = fixture.orchestrator.handle_turn(session.id, "stop").await?;
        assert_eq!(outcome.narrative, "Nothing is running.");
        Ok(())
    }
}
