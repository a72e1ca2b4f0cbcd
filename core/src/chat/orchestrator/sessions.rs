//! Sessions as stored: creating one, reading it back for a reload, and appending to its two
//! channels (the transcript a person sees and the conversation the model sees).

use std::sync::PoisonError;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{decisions::PendingApproval, text::plural, Orchestrator};
use crate::chat::scope::ScopeRules as _;
use crate::chat::{
    audit::{Execution, ExecutionStatus},
    header::{CallStatus, ChunkProgress, ExecutionHeader, Step, StepRole},
    scope::RequestedScope,
    session::{ChatSession, MessageChannel, SessionId, Speaker, TranscriptEntry},
    threads::{Thread, ThreadId},
    ChatError,
};
use crate::llm::Message;

/// A session as the chat page shows it after a reload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SessionView {
    /// The session.
    pub session: ChatSession,
    /// The visible transcript, oldest first.
    #[schema(value_type = Vec<Object>)]
    pub transcript: Vec<TranscriptEntry>,
    /// Its threads, oldest first.
    #[schema(value_type = Vec<Object>)]
    pub threads: Vec<Thread>,
    /// Confirmations waiting for the person.
    #[schema(value_type = Vec<Object>)]
    pub pending_approvals: Vec<PendingApproval>,
    /// Calls still running, with their progress.
    #[schema(value_type = Vec<Object>)]
    pub running: Vec<Step>,
}

/// A header step for a recorded execution (nudges, `/status`, reloads).
pub(in crate::chat) fn step_of_execution(execution: &Execution) -> Step {
    let status = match execution.status {
        ExecutionStatus::Running => CallStatus::Running,
        ExecutionStatus::Succeeded => CallStatus::Succeeded,
        ExecutionStatus::Failed => CallStatus::Failed,
        ExecutionStatus::Cancelled => CallStatus::Cancelled,
        ExecutionStatus::Refused => CallStatus::Refused,
        ExecutionStatus::Interrupted => CallStatus::Interrupted,
    };
    let detail = if execution.role == StepRole::Mutation {
        format!(
            "{} of {} done",
            execution.items_done,
            plural(execution.items_total, "item")
        )
    } else {
        plural(execution.item_ids.as_ref().map_or(0, Vec::len), "item")
    };
    let mut step = Step::new(execution.operation.clone(), execution.role, status, detail);
    if let Some(error) = &execution.error {
        step = step.with_error(error);
    }
    step.execution_id = Some(execution.id);
    if execution.chunks_total > 1 {
        step.chunks = Some(ChunkProgress {
            chunks_done: execution.chunks_done,
            chunks_total: execution.chunks_total,
            items_done: execution.items_done,
            items_total: execution.items_total,
            sizes: Vec::new(),
        });
    }
    step
}

impl Orchestrator {
    /// Starts a session. `requested` narrows the server's allowlist (never widens it; what it
    /// named beyond the allowlist is logged and dropped); `model` picks a configured model.
    ///
    /// # Errors
    /// [`ChatError::UnknownModel`]; storage failures.
    pub async fn create_session(
        &self,
        requested: Option<&RequestedScope>,
        model: Option<&str>,
    ) -> Result<ChatSession, ChatError> {
        let model = match model.map(str::trim).filter(|name| !name.is_empty()) {
            Some(name) if self.inner.models.get(name).is_some() => name.to_owned(),
            Some(name) => {
                return Err(ChatError::UnknownModel {
                    requested: name.to_owned(),
                    available: self.inner.models.names(),
                })
            }
            None => self.inner.models.default_name().to_owned(),
        };
        let id = SessionId::new();
        let scope = match requested {
            Some(requested) => {
                let (scope, stripped) = self.inner.allowlist.intersect(requested);
                if !stripped.is_empty() {
                    tracing::warn!(
                        chat.session = %id,
                        stripped.operations = ?stripped.operations,
                        stripped.entities = ?stripped.entities,
                        "a requested capability scope named more than the allowlist; the extra was dropped"
                    );
                }
                scope
            }
            None => self.inner.allowlist.clone(),
        };
        let now = self.now();
        let session = ChatSession {
            id,
            scope,
            model,
            created_at_ms: now,
            updated_at_ms: now,
        };
        self.inner.store.create_chat_session(&session).await?;
        Ok(session)
    }

    pub(super) async fn session(&self, id: SessionId) -> Result<ChatSession, ChatError> {
        self.inner
            .store
            .chat_session(id)
            .await
            .map_err(|error| match error {
                crate::store::StoreError::NotFound => ChatError::SessionNotFound,
                other => other.into(),
            })
    }

    /// Everything the chat page shows after a reload: transcript, threads, pending approvals and
    /// running calls.
    ///
    /// # Errors
    /// [`ChatError::SessionNotFound`]; storage failures.
    pub async fn session_view(&self, id: SessionId) -> Result<SessionView, ChatError> {
        let session = self.session(id).await?;
        let transcript = self.transcript(id).await?;
        let threads = self.inner.store.chat_threads(id).await?;
        let pending_approvals = self.pending_approvals(id).await?;
        let running = self
            .executions(id)
            .await?
            .iter()
            .filter(|execution| execution.status == ExecutionStatus::Running)
            .map(step_of_execution)
            .collect();
        Ok(SessionView {
            session,
            transcript,
            threads,
            pending_approvals,
            running,
        })
    }

    /// The visible transcript, oldest first.
    ///
    /// # Errors
    /// Storage failures, or a corrupt stored message.
    pub async fn transcript(&self, id: SessionId) -> Result<Vec<TranscriptEntry>, ChatError> {
        let messages = self
            .inner
            .store
            .chat_messages(id, MessageChannel::Transcript)
            .await?;
        Ok(messages
            .into_iter()
            .map(|message| TranscriptEntry {
                id: message.id,
                speaker: Speaker::parse(&message.role).unwrap_or(Speaker::Assistant),
                text: message
                    .body
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                header: message
                    .body
                    .get("header")
                    .and_then(|header| serde_json::from_value(header.clone()).ok()),
                thread_id: message.thread_id,
                created_at_ms: message.created_at_ms,
            })
            .collect())
    }

    /// A session's executions, with the live progress of calls running in this process.
    pub(in crate::chat) async fn executions(
        &self,
        id: SessionId,
    ) -> Result<Vec<Execution>, ChatError> {
        let mut executions = self.inner.store.chat_executions(id).await?;
        let live = self
            .inner
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for execution in &mut executions {
            if let Some(progress) = live.get(&execution.id) {
                if execution.status == ExecutionStatus::Running {
                    execution.items_done = execution.items_done.max(progress.items_done);
                    execution.chunks_done = execution.chunks_done.max(progress.chunks_done);
                }
            }
        }
        Ok(executions)
    }

    pub(super) async fn record_transcript(
        &self,
        id: SessionId,
        speaker: Speaker,
        thread_id: Option<ThreadId>,
        text: &str,
        header: Option<&ExecutionHeader>,
    ) -> Result<(), ChatError> {
        let mut body = json!({ "text": text });
        if let Some(header) = header {
            body["header"] = serde_json::to_value(header).unwrap_or(Value::Null);
        }
        self.inner
            .store
            .append_chat_message(
                id,
                MessageChannel::Transcript,
                speaker.as_str(),
                thread_id,
                &body,
            )
            .await?;
        Ok(())
    }

    pub(super) async fn append_model(
        &self,
        id: SessionId,
        thread_id: ThreadId,
        message: &Message,
    ) -> Result<(), ChatError> {
        let role = match message {
            Message::System(_) => "system",
            Message::User(_) => "user",
            Message::Assistant { .. } => "assistant",
            Message::ToolResult { .. } => "tool",
        };
        let body = serde_json::to_value(message).unwrap_or(Value::Null);
        self.inner
            .store
            .append_chat_message(id, MessageChannel::Model, role, Some(thread_id), &body)
            .await?;
        Ok(())
    }

    pub(super) async fn model_history(&self, id: SessionId) -> Result<Vec<Message>, ChatError> {
        let stored = self
            .inner
            .store
            .chat_messages(id, MessageChannel::Model)
            .await?;
        let mut messages = Vec::with_capacity(stored.len());
        for message in stored {
            match serde_json::from_value(message.body) {
                Ok(decoded) => messages.push(decoded),
                Err(error) => {
                    return Err(ChatError::Store(crate::store::StoreError::Corrupt {
                        column: "chat_messages.body",
                        reason: error.to_string(),
                    }))
                }
            }
        }
        Ok(messages)
    }

    pub(in crate::chat) async fn save_thread(&self, thread: &mut Thread) -> Result<(), ChatError> {
        thread.updated_at_ms = self.now().max(thread.updated_at_ms);
        self.inner.store.save_chat_thread(thread).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{chat::orchestrator::test_support::Fixture, llm::ScriptedTurn};

    #[tokio::test]
    async fn a_model_the_server_does_not_have_is_refused_naming_the_ones_it_has(
    ) -> anyhow::Result<()> {
        let fixture = Fixture::new(Vec::new()).await?;
        let refused = fixture
            .orchestrator
            .create_session(None, Some("gpt-9"))
            .await;
        match refused {
            Err(ChatError::UnknownModel {
                requested,
                available,
            }) => {
                assert_eq!(requested, "gpt-9");
                assert_eq!(available, vec!["scripted".to_owned()]);
            }
            other => anyhow::bail!("expected UnknownModel, got {other:?}"),
        }
        Ok(())
    }

    #[tokio::test]
    async fn a_reload_shows_the_transcript_with_the_reply_s_header() -> anyhow::Result<()> {
        let fixture = Fixture::new(vec![ScriptedTurn::text("Hello there.")]).await?;
        let session = fixture.session().await?;
        fixture
            .orchestrator
            .handle_turn(session.id, "hello, find items")
            .await?;
        let view = fixture.orchestrator.session_view(session.id).await?;
        let speakers: Vec<Speaker> = view.transcript.iter().map(|entry| entry.speaker).collect();
        assert_eq!(speakers, vec![Speaker::User, Speaker::Assistant]);
        assert!(view.transcript[1].text.ends_with("Hello there."));
        assert!(view.transcript[1].header.is_some());
        assert!(view.running.is_empty());
        let unknown = fixture.orchestrator.session_view(SessionId::new()).await;
        assert!(
            matches!(unknown, Err(ChatError::SessionNotFound)),
            "{unknown:?}"
        );
        Ok(())
    }
}
