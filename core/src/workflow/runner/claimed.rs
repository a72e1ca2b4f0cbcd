//! A claimed run, step by step, while its lease holds: each step's start, its task, its
//! outcome (next step, wait, finish, retry or failure) committed under the lease.

use std::{future::Future, sync::Arc};

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::{
    input::{step_name, InputError},
    lease::{millis, AbortOnDrop},
    DrainReport, Runner,
};
use crate::workflow::{
    builder::{Goto, StepContext, StepDef, StepDone, WorkflowDef},
    run::{
        ClaimedRun, Lease, LeaseOutcome, NextRun, RunStep, StepCompletion, StepRef, TimeoutAction,
        WaitInfo,
    },
    step::{StepError, StepOutput, StepResult, Unanswered},
    WorkflowError,
};

impl Runner {
    /// Drives a claimed run step by step while the lease holds.
    ///
    /// The heartbeat runs beside the whole drive (store calls included, in the same task, so a
    /// runner that dies stops renewing). Losing the lease interrupts the step under way; a store
    /// call under way is left to finish, since every write re-checks the lease and is refused.
    pub(super) async fn run_claimed(
        &self,
        claimed: ClaimedRun,
        shutdown: &CancellationToken,
        report: &mut DrainReport,
    ) -> Result<(), WorkflowError> {
        let lease_lost = CancellationToken::new();
        let heartbeat = self.renew_lease(claimed.lease.clone(), lease_lost.clone());
        tokio::select! {
            result = self.run_steps_under_lease(claimed, shutdown, &lease_lost, report) => result,
            never = heartbeat => match never {},
        }
    }

    async fn run_steps_under_lease(
        &self,
        claimed: ClaimedRun,
        shutdown: &CancellationToken,
        lease_lost: &CancellationToken,
        report: &mut DrainReport,
    ) -> Result<(), WorkflowError> {
        let store = &self.inner.store;
        let ClaimedRun { run, lease } = claimed;
        let Some(definition) = self.inner.registry.get(&run.workflow) else {
            // Claims are filtered by the registered names, so this is a registry changed under
            // a running process; leave the run for a runner that knows it.
            let _ = store.release_run(&lease, self.now_ms()).await?;
            return Ok(());
        };
        if let Some(reason) = changed_definition(&definition, run.definition_digest.as_deref()) {
            let step_ref = StepRef {
                index: run.cursor,
                name: step_name(&definition, run.cursor),
            };
            return self.fail_run(&lease, &step_ref, &reason, report).await;
        }
        let mut state = run.state;
        let mut cursor = run.cursor;
        loop {
            let Some(DueStep {
                step,
                input,
                previous_index,
                unanswered,
            }) = self.due_step(&definition, &lease, cursor, report).await?
            else {
                return Ok(());
            };
            let step_ref = StepRef {
                index: cursor,
                name: step.name.clone(),
            };
            let Some(started) = self
                .begin_attempt(&definition, &lease, (&step_ref, &input), shutdown, report)
                .await?
            else {
                return Ok(());
            };
            report.steps_started += 1;
            let context = StepContext {
                run_id: run.id,
                step_index: cursor,
                step_name: step.name.clone(),
                attempt: started.attempts,
                previous_index,
                services: Arc::clone(&self.inner.services),
            };
            let span = tracing::info_span!("step", run.id = %run.id, workflow.name = %run.workflow, step.name = %step.name, step.index = cursor, step.attempt = started.attempts);
            let input = started.input.unwrap_or(Value::Null);
            let execution = (step.handler)(context, state.clone(), input).instrument(span);
            let Some(result) = self
                .attempt_step(execution, &step_ref, &lease, (lease_lost, shutdown))
                .await?
            else {
                return Ok(());
            };
            let finished = result.and_then(|done| {
                let next = next_run(&done, step, definition.steps.len(), cursor, unanswered)?;
                Ok((done, next))
            });
            let (done, next) = match finished {
                Ok(finished) => finished,
                Err(error) => {
                    let attempt = started.attempts;
                    self.record_failure(&definition, &lease, &step_ref, attempt, &error, report)
                        .await?;
                    return Ok(());
                }
            };
            let completion = StepCompletion {
                index: cursor,
                state: done.state,
                output: done.output.to_value(),
                next,
            };
            if !self
                .commit_step(&lease, &step_ref, &completion, report)
                .await?
            {
                return Ok(());
            }
            cursor = match completion.next {
                NextRun::Continue => cursor + 1,
                NextRun::Jump(target) => target,
                _ => return Ok(()),
            };
            state = completion.state;
        }
    }

    /// The step at `cursor` with its input, when the run goes on; otherwise the run is ended as
    /// its state says (failed for an unusable input, cancelled after a wait no step hears the end
    /// of, finished past its last step) and `None` comes back.
    async fn due_step<'d>(
        &self,
        definition: &'d WorkflowDef,
        lease: &Lease,
        cursor: i64,
        report: &mut DrainReport,
    ) -> Result<Option<DueStep<'d>>, WorkflowError> {
        let store = &self.inner.store;
        let (input, previous_index) = match self.step_input(lease.run_id, cursor).await {
            Ok(found) => found,
            Err(InputError::Fatal(reason)) => {
                let step_ref = StepRef {
                    index: cursor,
                    name: step_name(definition, cursor),
                };
                self.fail_run(lease, &step_ref, &reason, report).await?;
                return Ok(None);
            }
            Err(InputError::Store(error)) => return Err(error.into()),
        };
        let step = usize::try_from(cursor)
            .ok()
            .and_then(|index| definition.steps.get(index));
        let unanswered = Unanswered::of(&input);
        let Some(step) = step.filter(|step| unanswered.is_none() || step.takes_unanswered) else {
            if let Some(why) = unanswered {
                // Cancel, or expiry with `OnTimeout::Cancel`, and no step asked to hear it.
                tracing::info!(run.id = %lease.run_id, reason = ?why, "the wait ended unanswered; run cancelled");
                store.cancel_run(lease.run_id, self.now_ms()).await?;
            } else {
                // Past the last step: the last step waited and has been answered.
                let _ = store.finish_run(lease, self.now_ms()).await?;
            }
            return Ok(None);
        };
        Ok(Some(DueStep {
            step,
            input,
            previous_index,
            unanswered,
        }))
    }

    /// Records the start of an attempt of `step` on `input`; `None` when it must not run: the
    /// runner is stopping (the run is given back), the lease is lost, or earlier attempts used
    /// up the step's retries without ever reporting back (the run fails).
    async fn begin_attempt(
        &self,
        definition: &WorkflowDef,
        lease: &Lease,
        (step, input): (&StepRef, &Value),
        shutdown: &CancellationToken,
        report: &mut DrainReport,
    ) -> Result<Option<RunStep>, WorkflowError> {
        let store = &self.inner.store;
        if shutdown.is_cancelled() {
            // A stopping runner (a claim in flight when shutdown came, or between steps) gives
            // the run back before starting a step it would abandon at once: starting it would
            // spend one of the step's attempts for nothing.
            let _ = store.release_run(lease, self.now_ms()).await?;
            return Ok(None);
        }
        let Some(started) = store
            .begin_step(lease, step.index, &step.name, input, self.now_ms())
            .await?
        else {
            tracing::warn!(run.id = %lease.run_id, step.name = %step.name, "lease lost before the step started");
            return Ok(None);
        };
        let policy = definition.retry_policy(usize::try_from(step.index).unwrap_or(usize::MAX));
        if started.attempts > i64::from(policy.max_attempts) {
            // Earlier attempts never reported back (their runner died or stopped each time):
            // give up rather than crash-loop for ever.
            let reason = format!(
                "gave up after {} attempts that never finished",
                started.attempts - 1
            );
            self.fail_run(lease, step, &reason, report).await?;
            return Ok(None);
        }
        Ok(Some(started))
    }

    /// Commits a finished step under the lease; `false` when the lease was lost first and the
    /// step's result was not recorded.
    async fn commit_step(
        &self,
        lease: &Lease,
        step: &StepRef,
        completion: &StepCompletion,
        report: &mut DrainReport,
    ) -> Result<bool, WorkflowError> {
        match self
            .inner
            .store
            .complete_step(lease, completion, self.now_ms())
            .await?
        {
            LeaseOutcome::Committed => {
                report.steps_succeeded += 1;
                Ok(true)
            }
            LeaseOutcome::LeaseLost => {
                tracing::warn!(run.id = %lease.run_id, step.name = %step.name, "lease lost; the step's result was not recorded");
                Ok(false)
            }
        }
    }

    /// Runs one attempt of a step (`execution`, its handler's future). `None` when the attempt
    /// was abandoned: the lease was lost (`abandon.0`), or the runner is stopping (`abandon.1`)
    /// and gave the run back.
    async fn attempt_step(
        &self,
        execution: impl Future<Output = StepResult<StepDone>> + Send + 'static,
        step: &StepRef,
        lease: &Lease,
        (lease_lost, shutdown): (&CancellationToken, &CancellationToken),
    ) -> Result<Option<StepResult<StepDone>>, WorkflowError> {
        // The step runs as a task of its own, so a step that computes for a while without
        // yielding (page generation) cannot starve this task's heartbeat into losing the lease
        // while the process is alive. Leaving this scope for any reason aborts it.
        let mut task = AbortOnDrop(tokio::spawn(execution));
        tokio::select! {
            joined = &mut task.0 => Ok(Some(joined.unwrap_or_else(|error| {
                Err(StepError::retryable(anyhow::anyhow!("the step's task ended abnormally: {error}")))
            }))),
            () = lease_lost.cancelled() => {
                tracing::warn!(run.id = %lease.run_id, step.name = %step.name, "lease lost during the step; abandoning it");
                Ok(None)
            }
            () = shutdown.cancelled() => {
                let _ = self.inner.store.release_run(lease, self.now_ms()).await?;
                Ok(None)
            }
        }
    }

    /// Fails the run at `step` for `reason`, a failure no retry can mend.
    async fn fail_run(
        &self,
        lease: &Lease,
        step: &StepRef,
        reason: &str,
        report: &mut DrainReport,
    ) -> Result<(), WorkflowError> {
        tracing::warn!(run.id = %lease.run_id, step.index = step.index, step.name = %step.name, error = %reason, "run failed");
        report.runs_failed += 1;
        let _ = self
            .inner
            .store
            .fail_run(lease, step, reason, self.now_ms())
            .await?;
        Ok(())
    }

    async fn record_failure(
        &self,
        definition: &WorkflowDef,
        lease: &Lease,
        step: &StepRef,
        attempt: i64,
        error: &StepError,
        report: &mut DrainReport,
    ) -> Result<(), WorkflowError> {
        let store = &self.inner.store;
        let policy = definition.retry_policy(usize::try_from(step.index).unwrap_or(usize::MAX));
        let attempt = u32::try_from(attempt).unwrap_or(u32::MAX);
        let message = error.to_string();
        let now = self.now_ms();
        if error.is_retryable() && policy.allows_retry_after(attempt) {
            let next_attempt_at = now.saturating_add(millis(policy.backoff(attempt)));
            tracing::warn!(run.id = %lease.run_id, step.name = %step.name, step.attempt = attempt, error = %message, "step failed; retrying");
            report.steps_retried += 1;
            let _ = store
                .retry_step(lease, step.index, &message, next_attempt_at, now)
                .await?;
        } else {
            tracing::warn!(run.id = %lease.run_id, step.name = %step.name, step.attempt = attempt, error = %message, "step failed; run failed");
            report.runs_failed += 1;
            let _ = store.fail_run(lease, step, &message, now).await?;
        }
        Ok(())
    }
}

/// The step a run is at, with what it is handed.
struct DueStep<'d> {
    step: &'d StepDef,
    input: Value,
    /// The index of the step whose output `input` is, when not the one just before.
    previous_index: Option<i64>,
    /// How the wait before it ended, when it ended without an answer.
    unanswered: Option<Unanswered>,
}

/// Why a run cannot go on under `definition` when it started under another version of the
/// workflow file (`started`: that file's digest): its cursor and stored outputs index the steps
/// of a file the server no longer has, so resuming could run the wrong step or skip one.
fn changed_definition(definition: &WorkflowDef, started: Option<&str>) -> Option<String> {
    let (now, then) = (definition.digest.as_deref()?, started?);
    (now != then).then(|| {
        format!(
            "the workflow file changed since this run started ({then}, now {now}); \
             the run was stopped instead of resumed on different steps: start a new run"
        )
    })
}

/// What runs after `step` (at `cursor`, of `step_count`) finished with `done`; a step that ran
/// after an `unanswered` wait ends the run cancelled unless it carries on. A finished step that
/// jumps backwards failed: a step that ran never runs again.
fn next_run(
    done: &StepDone,
    step: &StepDef,
    step_count: usize,
    cursor: i64,
    unanswered: Option<Unanswered>,
) -> StepResult<NextRun> {
    Ok(match &done.output {
        StepOutput::Wait {
            page_id,
            deadline_ms,
            on_timeout,
            ..
        } => NextRun::Wait(WaitInfo {
            page_id: page_id.map(|id| id.0),
            deadline_ms: *deadline_ms,
            on_timeout: on_timeout.unwrap_or(TimeoutAction::Fail),
        }),
        _ if unanswered.is_some() && !step.continues_unanswered => NextRun::Cancel,
        _ => match done.goto {
            Some(Goto::End) => NextRun::Finish,
            Some(Goto::Step(index)) if index >= step_count => NextRun::Finish,
            Some(Goto::Step(index)) if i64::try_from(index).is_ok_and(|index| index > cursor) => {
                NextRun::Jump(i64::try_from(index).unwrap_or(i64::MAX))
            }
            Some(Goto::Step(_)) => {
                return Err(StepError::fatal(anyhow::anyhow!(
                    "a step may only jump forward"
                )));
            }
            None if usize::try_from(cursor + 1).ok() == Some(step_count) => NextRun::Finish,
            None => NextRun::Continue,
        },
    })
}
