//! Executions whose process stopped mid-call: reported as interrupted, never resumed, never lost.
//!
//! A call runs in the process that approved it; its row is `running` with that orchestrator as
//! owner, checkpointed between chunks and on a heartbeat (`Store::checkpoint_execution`). When the
//! process dies, [`sweep`] (run by every orchestrator: on PostgreSQL every half lease for rows not
//! heard from for a lease, on SQLite once at start for rows of an earlier instance) marks the row
//! `interrupted` with the per-item account known so far — the chunks recorded as done succeeded,
//! the next one's outcome is unknown (its request may have reached the site), the rest was not
//! sent — and reports it once: a transcript reply with the execution header, the thread failed,
//! and the events every listener sees. Nothing is re-sent: the confirmation was consumed when the
//! execution began, so approving it again is refused, and the person asks anew for the rest.

use std::time::Duration;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::{
    audit::{Execution, ExecutionEnd, ExecutionId},
    events::Signals,
    header::{CallStatus, ChunkProgress, ExecutionHeader, Step, StepRole},
    manifest::Manifest,
    orchestrator::ChatEvent,
    policy,
    session::{MessageChannel, Speaker},
    threads::ThreadStatus,
    ChatError,
};
use crate::store::{now_ms, Store};

/// How long a running execution may go unheard before it counts as interrupted (PostgreSQL).
pub const DEFAULT_EXECUTION_LEASE: Duration = Duration::from_secs(60);

/// The planned request sizes of `execution` (the call's chunk plan, as when it began).
fn planned_sizes(execution: &Execution, manifest: &Manifest) -> Vec<usize> {
    let sizes = manifest
        .operation(&execution.operation)
        .map(|operation| policy::chunk_plan(operation, &execution.arguments).sizes)
        .unwrap_or_default();
    if sizes.len() == execution.chunks_total.max(1) {
        sizes
    } else {
        vec![execution.items_total]
    }
}

/// What is known of an interrupted execution: its per-chunk account and the error it shows.
#[must_use]
pub fn interrupted_end(execution: &Execution, manifest: &Manifest) -> ExecutionEnd {
    let sizes = planned_sizes(execution, manifest);
    let done = execution.chunks_done.min(sizes.len());
    let chunks: Vec<Value> = sizes
        .iter()
        .enumerate()
        .map(|(index, size)| {
            let chunk = index + 1;
            if index < done {
                json!({"chunk": chunk, "size": size, "status": "succeeded", "response": null})
            } else if index == done {
                json!({"chunk": chunk, "size": size, "status": "unknown",
                       "error": "unknown: the process running the call stopped before this request's answer was recorded; check the site"})
            } else {
                json!({"chunk": chunk, "size": size, "status": "not_sent",
                       "error": "not sent: the process running the call stopped"})
            }
        })
        .collect();
    let error = if done < sizes.len() {
        let rest = if done + 1 < sizes.len() {
            ", the rest was not sent"
        } else {
            ""
        };
        format!(
            "interrupted: the process running it stopped after {done} of {} requests; request {} may or may not have reached the site{rest}",
            sizes.len(),
            done + 1
        )
    } else {
        format!(
            "interrupted: the process running it stopped after all {done} requests, before it recorded the end"
        )
    };
    ExecutionEnd {
        status: super::audit::ExecutionStatus::Interrupted,
        items_done: execution.items_done,
        chunks_done: done,
        item_ids: None,
        result: Some(json!({
            "items_done": execution.items_done,
            "items_total": execution.items_total,
            "interrupted": true,
            "chunks": chunks,
        })),
        error: Some(error),
    }
}

/// The header step of an interrupted execution.
fn interrupted_step(execution: &Execution, end: &ExecutionEnd) -> Step {
    let items = if execution.items_total == 1 {
        "1 item".to_owned()
    } else {
        format!("{} items", execution.items_total)
    };
    let mut detail = format!("{} of {items} done", end.items_done);
    if execution.chunks_total > 1 {
        detail.push_str(&format!(
            " in {} of {} chunks",
            end.chunks_done, execution.chunks_total
        ));
    }
    detail.push_str("; interrupted, not resumed");
    let mut step = Step::new(
        execution.operation.clone(),
        execution.role,
        CallStatus::Interrupted,
        detail,
    );
    if let Some(error) = &end.error {
        step = step.with_error(error);
    }
    step.execution_id = Some(execution.id);
    step.hash = Some(execution.hash.clone());
    if let super::audit::Approval::Confirmation { id } = &execution.approval {
        step.confirmation_id = Some(*id);
    }
    if execution.chunks_total > 1 {
        step.chunks = Some(ChunkProgress {
            chunks_done: end.chunks_done,
            chunks_total: execution.chunks_total,
            items_done: end.items_done,
            items_total: execution.items_total,
            sizes: Vec::new(),
        });
    }
    step.result = end.result.clone();
    step
}

/// What the person reads after the header.
fn narrative(execution: &Execution, end: &ExecutionEnd) -> String {
    let mut text = format!(
        "The process that was running `{}` stopped before it finished (a crash or a restart).",
        execution.operation
    );
    if execution.role == StepRole::Mutation {
        text.push_str(&format!(
            " {} of {} items were done",
            end.items_done, execution.items_total
        ));
        let requests = execution.chunks_total.max(1);
        if end.chunks_done < requests {
            text.push_str(&format!(
                "; request {} may or may not have reached the site",
                end.chunks_done + 1
            ));
            if end.chunks_done + 1 < requests {
                text.push_str(", and the rest was not sent");
            }
        }
        text.push('.');
    }
    text.push_str(" Nothing was resumed: ask again to do the rest.");
    text
}

/// Marks and reports the stale executions `me` can see (see the module doc); returns how many
/// this call reported.
///
/// # Errors
/// Storage failures.
pub(crate) async fn sweep(
    store: &Store,
    signals: &Signals,
    manifest: &Manifest,
    lease: Duration,
) -> Result<usize, ChatError> {
    let now = now_ms();
    let alive_since = now - i64::try_from(lease.as_millis()).unwrap_or(i64::MAX);
    let mut reported = 0;
    for execution in store
        .stale_executions(signals.instance(), alive_since)
        .await?
    {
        let end = interrupted_end(&execution, manifest);
        if !store.interrupt_execution(execution.id, &end, now).await? {
            continue;
        }
        tracing::warn!(
            execution.id = %execution.id,
            session.id = %execution.session_id,
            items_done = end.items_done,
            "a chat execution was interrupted: its process stopped"
        );
        report(store, signals, &execution, &end).await?;
        reported += 1;
    }
    Ok(reported)
}

async fn report(
    store: &Store,
    signals: &Signals,
    execution: &Execution,
    end: &ExecutionEnd,
) -> Result<(), ChatError> {
    let step = interrupted_step(execution, end);
    let header = ExecutionHeader::new(vec![step.clone()]);
    let reply = format!("{}\n\n{}", header.render(), narrative(execution, end));
    // The transcript last: a reader that sees the report sees the failed thread too.
    if let Some(mut thread) = store
        .chat_threads(execution.session_id)
        .await?
        .into_iter()
        .find(|thread| thread.id == execution.thread_id)
    {
        if thread.status != ThreadStatus::Done {
            thread.status = ThreadStatus::Failed;
            thread.pending_question = None;
            thread.summary = format!(
                "Interrupted: `{}` stopped with its process; {} of {} items done.",
                execution.operation, end.items_done, execution.items_total
            );
            thread.updated_at_ms = now_ms().max(thread.updated_at_ms);
            store.save_chat_thread(&thread).await?;
        }
    }
    store
        .append_chat_message(
            execution.session_id,
            MessageChannel::Transcript,
            Speaker::Assistant.as_str(),
            Some(execution.thread_id),
            &json!({"text": reply, "header": header}),
        )
        .await?;
    signals.publish(
        execution.session_id,
        &ChatEvent::StepFinished {
            thread_id: execution.thread_id,
            step,
        },
    );
    signals.publish(
        execution.session_id,
        &ChatEvent::Reply {
            thread_id: Some(execution.thread_id),
            text: reply,
        },
    );
    Ok(())
}

/// Checkpoints execution `id` for `owner` (recording `done` when given) and cancels `cancel` when
/// the call must not go on: a stop was requested from some process, or it is no longer running.
pub(crate) async fn checkpoint(
    store: Store,
    id: ExecutionId,
    owner: String,
    done: Option<(usize, usize)>,
    cancel: CancellationToken,
) {
    match store.checkpoint_execution(id, &owner, done, now_ms()).await {
        Ok(true) => {}
        Ok(false) => cancel.cancel(),
        // A missed checkpoint is retried by the next one; the lease allows for a few.
        Err(error) => {
            tracing::warn!(execution.id = %id, error = %error, "cannot checkpoint the execution");
        }
    }
}

/// Checkpoints execution `id` every `interval` while the call runs (the caller drops this future
/// when the call ends; a process that dies stops renewing, which is the point).
pub(crate) async fn keep_alive(
    store: Store,
    id: ExecutionId,
    owner: String,
    cancel: CancellationToken,
    interval: Duration,
) -> std::convert::Infallible {
    loop {
        tokio::time::sleep(interval).await;
        checkpoint(store.clone(), id, owner.clone(), None, cancel.clone()).await;
    }
}

/// Sweeps until `shutdown`: on PostgreSQL every half lease, on SQLite once (one process: what an
/// earlier instance left running is all there is to find).
pub(crate) async fn sweep_until(
    store: Store,
    signals: std::sync::Weak<Signals>,
    manifest: std::sync::Arc<Manifest>,
    lease: Duration,
    shutdown: CancellationToken,
) {
    loop {
        let Some(strong) = signals.upgrade() else {
            return;
        };
        if let Err(error) = sweep(&store, &strong, &manifest, lease).await {
            tracing::warn!(error = %error, "cannot look for interrupted chat executions");
        }
        drop(strong);
        if !store.has_chat_bus() {
            return;
        }
        tokio::select! {
            () = tokio::time::sleep(lease / 2) => {}
            () = shutdown.cancelled() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::chat::{
        audit::{Approval, ExecutionId, ExecutionStatus},
        confirm::operation_hash,
        session::SessionId,
        threads::ThreadId,
    };

    fn running(operation: &str, ids: usize, chunks: (usize, usize)) -> Execution {
        let ids: Vec<String> = (0..ids).map(|index| format!("item-{index}")).collect();
        let arguments = json!({"ids": ids});
        Execution {
            id: ExecutionId::new(),
            session_id: SessionId(uuid::Uuid::new_v4()),
            thread_id: ThreadId(uuid::Uuid::new_v4()),
            operation: operation.to_owned(),
            hash: operation_hash(operation, &arguments),
            arguments,
            role: StepRole::Mutation,
            approval: Approval::NotNeeded,
            status: ExecutionStatus::Running,
            items_total: ids.len(),
            items_done: chunks.0 * 100,
            chunks_total: chunks.1,
            chunks_done: chunks.0,
            item_ids: None,
            result: None,
            error: None,
            created_at_ms: 0,
            finished_at_ms: None,
        }
    }

    fn statuses(end: &ExecutionEnd) -> Vec<(u64, String)> {
        end.result
            .as_ref()
            .and_then(|result| result.get("chunks"))
            .and_then(Value::as_array)
            .map(|chunks| {
                chunks
                    .iter()
                    .map(|chunk| {
                        (
                            chunk["size"].as_u64().unwrap_or_default(),
                            chunk["status"].as_str().unwrap_or_default().to_owned(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn chunks_checkpointed_as_done_succeeded_the_next_is_unknown_the_rest_not_sent(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let manifest = Manifest::from_json(crate::demo::items::MANIFEST_JSON)?;
        let end = interrupted_end(&running("bulkDeleteItems", 247, (1, 3)), &manifest);
        assert_eq!(end.status, ExecutionStatus::Interrupted);
        assert_eq!((end.items_done, end.chunks_done), (100, 1));
        assert_eq!(
            statuses(&end),
            vec![
                (100, "succeeded".to_owned()),
                (100, "unknown".to_owned()),
                (47, "not_sent".to_owned())
            ]
        );
        assert!(
            end.error.as_deref().is_some_and(
                |error| error.contains("after 1 of 3 requests; request 2 may or may not")
            )
        );
        Ok(())
    }

    #[test]
    fn a_single_request_cut_off_is_unknown_not_failed() -> Result<(), Box<dyn std::error::Error>> {
        let manifest = Manifest::from_json(crate::demo::items::MANIFEST_JSON)?;
        let end = interrupted_end(&running("bulkDeleteItems", 3, (0, 1)), &manifest);
        assert_eq!(statuses(&end), vec![(3, "unknown".to_owned())]);
        assert_eq!(end.items_done, 0);
        Ok(())
    }
}
