//! Execution of a call that passed the gate: the audit row, the executor's chunks with progress,
//! heartbeat and cancel, and the step and tool result that report what happened.

use std::sync::PoisonError;

use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::{
    broadcast::ChatEvent,
    gate::{Gate, Proposed},
    text::{chunk_text, plural},
    Orchestrator, Turn,
};
use crate::chat::{
    audit::{Approval, ExecutionEnd, ExecutionId, ExecutionStatus, NewExecution},
    confirm::operation_hash,
    header::{CallStatus, ChunkProgress, Step, StepRole},
    http_executor::RunOutcome,
    manifest::{id_text, Operation},
    planner::result_items,
    policy::{self},
    threads::{Thread, ThreadId},
    ChatError,
};
use crate::{llm::Message, store::chat::BeginExecutionError};

/// A call the gate passed, once its audit row exists: what running it and reporting it need.
struct Running<'a> {
    proposed: Proposed<'a>,
    thread_id: ThreadId,
    chunks: &'a policy::ChunkPlan,
    approval: Approval,
    role: StepRole,
    execution_id: ExecutionId,
}

impl Orchestrator {
    pub(super) async fn execute(
        &self,
        turn: &mut Turn,
        thread: &Thread,
        proposed: Proposed<'_>,
        chunks: &policy::ChunkPlan,
        approval: Approval,
    ) -> Result<Gate, ChatError> {
        let Proposed {
            call,
            operation,
            arguments,
        } = proposed;
        let role = self.role_of(&operation.name);
        let items_total = if operation.is_mutating() {
            operation.item_ids(arguments).len()
        } else {
            0
        };
        let begun = self
            .inner
            .store
            .begin_execution(&NewExecution {
                session_id: turn.session.id,
                thread_id: thread.id,
                operation: operation.name.clone(),
                arguments: arguments.clone(),
                role,
                approval: approval.clone(),
                items_total,
                chunks_total: chunks.sizes.len(),
                status: ExecutionStatus::Running,
                error: None,
            })
            .await;
        let execution_id = match begun {
            Ok(execution_id) => execution_id,
            Err(BeginExecutionError::ConfirmationUnusable) => {
                let reason = "the confirmation for this exact call was already used or withdrawn; a new one is needed";
                return self.refuse(turn, thread, call, arguments, reason).await;
            }
            Err(BeginExecutionError::Store(error)) => return Err(error.into()),
        };
        if operation.is_mutating() {
            let approved = !matches!(approval, Approval::NotNeeded);
            turn.totals.record(&operation.name, items_total, approved);
        }
        self.emit(
            turn,
            ChatEvent::StepStarted {
                thread_id: thread.id,
                operation: operation.name.clone(),
                chunks: chunks.sizes.clone(),
            },
        );
        let running = Running {
            proposed,
            thread_id: thread.id,
            chunks,
            approval,
            role,
            execution_id,
        };
        let outcome = self.run_owned(turn, &running).await;
        self.report(turn, &running, &outcome).await
    }

    /// Runs the call's chunks as this process's: checkpoints between chunks record progress and
    /// read a stop sent from any process; the heartbeat tells the others it is still alive.
    async fn run_owned(&self, turn: &mut Turn, running: &Running<'_>) -> RunOutcome {
        let (proposed, thread_id, execution_id) =
            (&running.proposed, running.thread_id, running.execution_id);
        let owner = self.inner.signals.instance().to_owned();
        let store = self.inner.store.clone();
        if let Err(error) = store
            .checkpoint_execution(execution_id, &owner, None, crate::store::now_ms())
            .await
        {
            tracing::warn!(execution.id = %execution_id, error = %error, "cannot claim the execution");
        }
        let mut progress_events = Vec::new();
        let session_id = turn.session.id;
        let cancel = turn.cancel.clone();
        let outcome = {
            let mut on_progress = |progress: &ChunkProgress| -> BoxFuture<'static, ()> {
                self.inner
                    .live
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(execution_id, progress.clone());
                let event = ChatEvent::Progress {
                    thread_id,
                    execution_id,
                    operation: proposed.operation.name.clone(),
                    progress: progress.clone(),
                };
                self.broadcast(session_id, &event);
                progress_events.push(event);
                Box::pin(crate::chat::interrupted::checkpoint(
                    store.clone(),
                    execution_id,
                    owner.clone(),
                    Some((progress.items_done, progress.chunks_done)),
                    cancel.clone(),
                ))
            };
            let run = self.inner.executor.run(
                proposed.operation,
                proposed.arguments,
                running.chunks,
                &turn.cancel,
                &mut on_progress,
            );
            let heartbeat = crate::chat::interrupted::keep_alive(
                store.clone(),
                execution_id,
                owner.clone(),
                cancel.clone(),
                self.inner.execution_lease / 3,
            );
            tokio::select! {
                outcome = run => outcome,
                never = heartbeat => match never {},
            }
        };
        turn.events.extend(progress_events);
        self.inner
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&execution_id);
        outcome
    }

    /// Ends the audit row with what the run did, shows it as the thread's step and answers the
    /// model's call with its result or error.
    async fn report(
        &self,
        turn: &mut Turn,
        running: &Running<'_>,
        outcome: &RunOutcome,
    ) -> Result<Gate, ChatError> {
        let Proposed {
            call, operation, ..
        } = running.proposed;
        let result = outcome.result_value();
        let status = if outcome.succeeded() {
            ExecutionStatus::Succeeded
        } else if outcome.cancelled {
            ExecutionStatus::Cancelled
        } else {
            ExecutionStatus::Failed
        };
        let shown_ids = (!operation.is_mutating() && status == ExecutionStatus::Succeeded)
            .then(|| shown_ids(operation, &result));
        let error = failure_text(outcome);
        let progress = outcome.progress();
        // A read's rows are kept with the turn for its view (paging re-reads them, never the
        // site), so a long list is stored cut, saying how long it was.
        let stored = if operation.is_mutating() {
            result.clone()
        } else {
            crate::chat::views::bounded_result(&result)
        };
        self.inner
            .store
            .finish_execution(
                running.execution_id,
                &ExecutionEnd {
                    status,
                    items_done: progress.items_done,
                    chunks_done: progress.chunks_done,
                    item_ids: shown_ids.clone(),
                    result: Some(stored.clone()),
                    error: error.clone(),
                },
            )
            .await?;
        let detail = if operation.is_mutating() {
            done_detail(&progress, running.chunks, outcome.cancelled)
        } else {
            shown_detail(&result, shown_ids.as_ref().map_or(0, Vec::len))
        };
        let mut step = running.step(status, detail, error.as_deref());
        if running.chunks.is_chunked() {
            step.chunks = Some(progress);
        }
        step.result = Some(stored);
        self.push_step(turn, running.thread_id, step);
        let message = match status {
            ExecutionStatus::Succeeded => Message::tool_result(call, result),
            ExecutionStatus::Cancelled => Message::tool_error(
                call,
                json!({"error": "stopped by the person between requests; finished chunks stay finished", "result": result}),
            ),
            _ => Message::tool_error(
                call,
                json!({"error": error.unwrap_or_else(|| "the call failed".to_owned()), "result": result}),
            ),
        };
        Ok(Gate::Answered(message))
    }
}

impl Running<'_> {
    /// The thread's step for the call, naming its execution and the approval it ran under.
    fn step(&self, status: ExecutionStatus, detail: String, error: Option<&str>) -> Step {
        let operation = self.proposed.operation;
        let step_status = match status {
            ExecutionStatus::Succeeded => CallStatus::Succeeded,
            ExecutionStatus::Cancelled => CallStatus::Cancelled,
            _ => CallStatus::Failed,
        };
        let mut step = Step::new(operation.name.clone(), self.role, step_status, detail);
        if let Some(error) = error {
            step = step.with_error(error);
        }
        step.execution_id = Some(self.execution_id);
        match &self.approval {
            Approval::Confirmation { id } => {
                step.confirmation_id = Some(*id);
                step.hash = Some(operation_hash(&operation.name, self.proposed.arguments));
            }
            Approval::Group { id } => step.confirmation_id = Some(*id),
            _ => {}
        }
        step
    }
}

/// The ids of the rows a read returned: its list's, or the one record's it returned alone.
fn shown_ids(operation: &Operation, result: &Value) -> Vec<String> {
    let id_field = operation.row_id_field();
    let mut items = result_items(result);
    if items.is_empty() && result.get(id_field).is_some() {
        items.push(result.clone());
    }
    items
        .iter()
        .filter_map(|item| item.get(id_field))
        .map(id_text)
        .collect()
}

/// The failed chunk's error, naming the chunk when the call was sent in several.
fn failure_text(outcome: &RunOutcome) -> Option<String> {
    outcome.failure().map(|(chunk, error)| {
        if outcome.planned.len() > 1 {
            format!(
                "chunk {} of {} failed: {error}",
                chunk.index,
                outcome.planned.len()
            )
        } else {
            error.to_string()
        }
    })
}

/// A change's detail: how many items, in how many chunks, and whether the person stopped it.
fn done_detail(progress: &ChunkProgress, chunks: &policy::ChunkPlan, cancelled: bool) -> String {
    let mut detail = format!(
        "{} of {} done",
        progress.items_done,
        plural(progress.items_total, "item")
    );
    if chunks.is_chunked() {
        detail.push_str(&format!(
            " in {} of {} chunks ({})",
            progress.chunks_done,
            progress.chunks_total,
            chunk_text(&chunks.sizes)
        ));
    }
    if cancelled {
        detail.push_str("; stopped by the person, the rest was not sent");
    }
    detail
}

/// A read's detail: how many rows are shown, of how many the site says there are.
fn shown_detail(result: &Value, shown: usize) -> String {
    match result
        .get("total")
        .and_then(Value::as_u64)
        .and_then(|total| usize::try_from(total).ok())
    {
        Some(total) if total != shown => format!("{shown} of {total} items shown"),
        _ => plural(shown, "item"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::{
        chat::{
            audit::ExecutionStatus,
            header::{CallStatus, StepRole},
            orchestrator::test_support::{call, Fixture},
        },
        llm::{Message, ScriptedTurn},
    };

    #[tokio::test]
    async fn a_read_that_passed_the_gate_reaches_the_site_and_is_audited() -> anyhow::Result<()> {
        let fixture = Fixture::new(vec![
            call("c1", "searchItems", json!({"limit": 3})),
            ScriptedTurn::text("Here they are."),
        ])
        .await?;
        let session = fixture.session().await?;
        let outcome = fixture
            .orchestrator
            .handle_turn(session.id, "list items")
            .await?;
        let step = &outcome.header.steps[0];
        assert_eq!(
            (step.role, step.status),
            (StepRole::Read, CallStatus::Succeeded)
        );
        assert!(step.detail.starts_with("3 of "), "{}", step.detail);
        let audit = fixture
            .orchestrator
            .store()
            .chat_executions(session.id)
            .await?;
        assert_eq!(audit.len(), 1);
        assert_eq!(audit[0].status, ExecutionStatus::Succeeded);
        assert_eq!(step.execution_id, Some(audit[0].id));
        assert_eq!(
            audit[0].item_ids.as_ref().map(Vec::len),
            Some(3),
            "the shown ids are kept for previews"
        );
        // The model saw the site's answer as the call's result.
        let history = &fixture.model.requests()[1].messages;
        assert!(history.iter().any(|message| matches!(
            message,
            Message::ToolResult {
                is_error: false,
                ..
            }
        )));
        Ok(())
    }
}
