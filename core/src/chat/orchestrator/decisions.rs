//! Confirmations and their answers: what waits for the person, approving or denying it (also as a
//! "yes"/"no" turn), and approving a subset of the previewed items as a new, narrowed call.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{
    gate::Gate,
    text::{approval_question, confirmation_summary, plural},
    turn::TurnOutcome,
    Orchestrator, Turn,
};
use crate::chat::{
    confirm::{
        grouped_calls, ApprovalScope, Caller, Confirmation, ConfirmationId, ConfirmationPreview,
        ConfirmationStatus, NewConfirmation, OperationHash,
    },
    header::{CallStatus, Step, StepRole},
    manifest::{id_text, Manifest, Operation, Tag},
    policy::{self, ConfirmReason},
    routing::TypedAnswer,
    session::{SessionId, Speaker},
    threads::{ExpectedType, PendingQuestion, Thread, ThreadId, ThreadStatus},
    ChatError,
};
use crate::{
    llm::{Message, ToolCall},
    store::chat::Decision,
};

/// A confirmation waiting for the person, with everything a confirm view needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingApproval {
    /// Its id (for approve / deny).
    pub confirmation_id: ConfirmationId,
    /// The thread waiting on it.
    pub thread_id: ThreadId,
    /// The operation.
    pub operation: String,
    /// The exact arguments.
    pub arguments: Value,
    /// The SHA-256 the approval is bound to.
    pub hash: OperationHash,
    /// Why code asks.
    pub reasons: Vec<ConfirmReason>,
    /// The reasons for a person.
    pub reasons_text: Vec<String>,
    /// Items touched, the preview rows of those items, and the chunk plan.
    pub preview: ConfirmationPreview,
    /// Whether the call deletes (danger styling).
    pub destructive: bool,
    /// The approval scopes the person may choose (only `once` for `confirmation-required`).
    pub allowed_scopes: Vec<ApprovalScope>,
    /// The question, as the transcript asks it.
    pub question: String,
}

impl Orchestrator {
    /// Confirmations waiting for the person, oldest first.
    ///
    /// # Errors
    /// Storage failures.
    pub async fn pending_approvals(
        &self,
        id: SessionId,
    ) -> Result<Vec<PendingApproval>, ChatError> {
        let pending = self
            .inner
            .store
            .confirmations_with_status(id, ConfirmationStatus::Pending)
            .await?;
        Ok(pending
            .iter()
            .map(|confirmation| self.pending_approval(confirmation))
            .collect())
    }

    pub(super) fn pending_approval(&self, confirmation: &Confirmation) -> PendingApproval {
        let operation = self.inner.manifest.operation(&confirmation.operation);
        let always = operation.is_some_and(|operation| operation.has(Tag::ConfirmationRequired));
        PendingApproval {
            confirmation_id: confirmation.id,
            thread_id: confirmation.thread_id,
            operation: confirmation.operation.clone(),
            arguments: confirmation.arguments.clone(),
            hash: confirmation.hash.clone(),
            reasons: confirmation.reasons.clone(),
            reasons_text: confirmation
                .reasons
                .iter()
                .map(ConfirmReason::describe)
                .collect(),
            preview: confirmation.preview.clone(),
            destructive: operation.is_some_and(|operation| operation.has(Tag::Delete)),
            allowed_scopes: if always {
                vec![ApprovalScope::Once]
            } else {
                vec![
                    ApprovalScope::Once,
                    ApprovalScope::Operation,
                    ApprovalScope::Session,
                ]
            },
            question: approval_question(confirmation),
        }
    }

    /// Approves or denies a pending confirmation. An approval runs the exact confirmed call (the
    /// confirmation is consumed in the transaction that records it) and continues the loop.
    ///
    /// # Errors
    /// [`ChatError::SessionNotFound`], [`ChatError::ConfirmationNotFound`],
    /// [`ChatError::Scope`] for an approval scope the confirmation does not offer,
    /// [`ChatError::Conflict`] when it was already decided; storage failures.
    pub async fn decide(
        &self,
        id: SessionId,
        confirmation_id: ConfirmationId,
        decision: Decision,
    ) -> Result<TurnOutcome, ChatError> {
        let session = self.session(id).await?;
        let said = match decision {
            Decision::Approve(ApprovalScope::Once) => "Approved (this once).",
            Decision::Approve(ApprovalScope::Operation) => "Approved (always for this operation).",
            Decision::Approve(ApprovalScope::Session) => "Approved (for this session).",
            Decision::Deny => "Declined.",
        };
        let mut turn = Turn::new(session, "decision");
        let thread = self
            .apply_decision(&mut turn, confirmation_id, decision, Some(said))
            .await?;
        self.finish_turn(turn, Some(thread)).await
    }

    /// Approves a pending confirmation for `selected` of its previewed items with `scope`.
    ///
    /// Every previewed item (or `None`) is a plain approval of the confirmed call. A strict subset
    /// is a *changed call*: the confirmation is withdrawn, and a new one bound to the hash of the
    /// narrowed arguments (the same call with only the chosen ids, in the previewed order) is
    /// created and approved, so the executor still only runs what a person approved. A selection
    /// can only narrow: an id outside the preview, an empty selection or a scope the confirmation
    /// does not offer is refused and nothing changes.
    ///
    /// # Errors
    /// [`ChatError::Selection`] for a selection the confirmation does not offer;
    /// otherwise as [`Self::decide`].
    pub async fn approve_selection(
        &self,
        id: SessionId,
        confirmation_id: ConfirmationId,
        selected: Option<&[String]>,
        scope: ApprovalScope,
    ) -> Result<TurnOutcome, ChatError> {
        let confirmation = self.session_confirmation(id, confirmation_id).await?;
        if confirmation.status != ConfirmationStatus::Pending {
            return Err(ChatError::Conflict(
                "this confirmation was already answered".to_owned(),
            ));
        }
        self.check_scope(&confirmation, scope)?;
        let Some(operation) = self.inner.manifest.operation(&confirmation.operation) else {
            return Err(ChatError::ConfirmationNotFound);
        };
        let previewed = operation.item_ids(&confirmation.arguments);
        let key = operation
            .batch_argument
            .as_deref()
            .unwrap_or(crate::chat::manifest::DEFAULT_BATCH_ARGUMENT);
        // A call on one item (no id list) has nothing to narrow: its view shows no ticks, so
        // the form's missing `ids` means "the call as previewed", not "none ticked".
        let batch = confirmation.arguments.get(key).is_some_and(Value::is_array);
        let Some(selected) = selected.filter(|_| batch) else {
            return self
                .decide(id, confirmation_id, Decision::Approve(scope))
                .await;
        };
        let chosen = chosen_items(&previewed, selected)?;
        if chosen.len() == previewed.len() {
            return self
                .decide(id, confirmation_id, Decision::Approve(scope))
                .await;
        }
        let narrowed = narrowed_call(&self.inner.manifest, operation, &confirmation, &chosen)?;
        // Withdraw first: it is the conditional step (pending -> denied), so two racing answers
        // cannot both narrow, and a crash after it leaves nothing approved.
        self.inner
            .store
            .decide_confirmation(id, confirmation_id, Decision::Deny)
            .await?;
        let narrowed = self.inner.store.create_confirmation(&narrowed).await?;
        let session = self.session(id).await?;
        let mut turn = Turn::new(session, "decision");
        let mut superseded = Step::new(
            confirmation.operation.clone(),
            StepRole::Mutation,
            CallStatus::Declined,
            format!(
                "narrowed by the person to {} of {}; nothing was sent for the rest",
                chosen.len(),
                plural(previewed.len(), "item")
            ),
        );
        superseded.hash = Some(confirmation.hash.clone());
        superseded.confirmation_id = Some(confirmation.id);
        self.push_step(&mut turn, confirmation.thread_id, superseded);
        let said = format!(
            "Approved {} of {} ({}).",
            chosen.len(),
            plural(previewed.len(), "item"),
            match scope {
                ApprovalScope::Once => "this once",
                ApprovalScope::Operation => "always for this operation",
                ApprovalScope::Session => "for this session",
            }
        );
        let thread = self
            .apply_decision(
                &mut turn,
                narrowed.id,
                Decision::Approve(scope),
                Some(&said),
            )
            .await?;
        self.finish_turn(turn, Some(thread)).await
    }

    /// Refuses an approval whose `scope` the confirmation does not offer (only `once` for a
    /// `confirmation-required` operation) — before anything is recorded, so no grant is stored.
    /// Every way to approve (the page's forms, `/api/chat`, a "yes") comes through here.
    fn check_scope(
        &self,
        confirmation: &Confirmation,
        scope: ApprovalScope,
    ) -> Result<(), ChatError> {
        if self
            .pending_approval(confirmation)
            .allowed_scopes
            .contains(&scope)
        {
            Ok(())
        } else {
            Err(ChatError::Scope(format!(
                "`{}` can only be approved once at a time",
                confirmation.operation
            )))
        }
    }

    /// Confirmation `confirmation_id` of session `id`; an unknown one (or another session's) is
    /// [`ChatError::ConfirmationNotFound`].
    pub(super) async fn session_confirmation(
        &self,
        id: SessionId,
        confirmation_id: ConfirmationId,
    ) -> Result<Confirmation, ChatError> {
        self.inner
            .store
            .confirmation(id, confirmation_id)
            .await
            .map_err(|error| match error {
                crate::store::StoreError::NotFound => ChatError::ConfirmationNotFound,
                other => other.into(),
            })
    }

    pub(super) async fn apply_decision(
        &self,
        turn: &mut Turn,
        confirmation_id: ConfirmationId,
        decision: Decision,
        said: Option<&str>,
    ) -> Result<Thread, ChatError> {
        let id = turn.session.id;
        // Another session's (or an unknown) confirmation is not found, and a scope it does not
        // offer is refused, before anything changes.
        let pending = self.session_confirmation(id, confirmation_id).await?;
        if let Decision::Approve(scope) = decision {
            self.check_scope(&pending, scope)?;
        }
        let confirmation = self
            .inner
            .store
            .decide_confirmation(id, confirmation_id, decision)
            .await?;
        if let Some(said) = said {
            self.record_transcript(id, Speaker::User, Some(confirmation.thread_id), said, None)
                .await?;
        }
        let threads = self.inner.store.chat_threads(id).await?;
        let mut thread = threads
            .into_iter()
            .find(|thread| thread.id == confirmation.thread_id)
            .ok_or(ChatError::ConfirmationNotFound)?;
        thread.pending_question = None;
        self.routed(turn, Some(thread.id));
        match decision {
            Decision::Deny => self.declined(turn, &mut thread, &confirmation).await?,
            Decision::Approve(_) => self.approved(turn, &mut thread, &confirmation).await?,
        }
        Ok(thread)
    }

    /// A confirmation the person declined: nothing is sent, and the model (not the person, for
    /// a manual call) is told so for each call it covered.
    async fn declined(
        &self,
        turn: &mut Turn,
        thread: &mut Thread,
        confirmation: &Confirmation,
    ) -> Result<(), ChatError> {
        // Who proposed the call was recorded from the path it arrived on; its id says nothing.
        if confirmation.caller != Caller::Person {
            let declined = match grouped_calls(&confirmation.arguments) {
                Some(calls) => calls
                    .iter()
                    .map(|grouped| grouped.tool_call(&confirmation.operation))
                    .collect(),
                None => vec![confirmed_call(confirmation)],
            };
            for call in &declined {
                self.append_model(
                    turn.session.id,
                    thread.id,
                    &Message::tool_error(
                        call,
                        json!({"error": "the person declined this call; nothing was sent"}),
                    ),
                )
                .await?;
            }
        }
        let mut step = Step::new(
            confirmation.operation.clone(),
            StepRole::Mutation,
            CallStatus::Declined,
            "declined by the person; nothing was sent",
        );
        step.hash = Some(confirmation.hash.clone());
        step.confirmation_id = Some(confirmation.id);
        self.push_step(turn, thread.id, step);
        thread.status = ThreadStatus::Done;
        thread.summary = format!(
            "Declined: {}; nothing changed.",
            confirmation_summary(confirmation)
        );
        self.save_thread(thread).await?;
        turn.narrative = "Declined. Nothing was changed.".to_owned();
        Ok(())
    }

    /// A confirmation the person approved: its call (or group of calls) goes through the gate
    /// again and runs, then the model's loop (or, for a manual call, the person's) goes on.
    async fn approved(
        &self,
        turn: &mut Turn,
        thread: &mut Thread,
        confirmation: &Confirmation,
    ) -> Result<(), ChatError> {
        thread.status = ThreadStatus::InProgress;
        self.save_thread(thread).await?;
        let (cancel, _running) = self.start_run(turn.session.id);
        turn.cancel = cancel;
        if let Some(calls) = &grouped_calls(&confirmation.arguments) {
            return match self.run_group(turn, thread, confirmation, calls).await? {
                Some(again) => self.pause(turn, thread, &again).await,
                None => self.run_loop(turn, thread).await,
            };
        }
        let call = confirmed_call(confirmation);
        match self
            .gate(turn, thread, &call, confirmation.caller, None)
            .await?
        {
            Gate::Answered(message) if confirmation.caller == Caller::Person => {
                self.inject_manual_result(turn, thread, &call, &message)
                    .await?;
                self.settle_manual(turn, thread).await
            }
            Gate::Answered(message) => {
                self.append_model(turn.session.id, thread.id, &message)
                    .await?;
                self.run_loop(turn, thread).await
            }
            Gate::Paused(again) => self.pause(turn, thread, &again).await,
        }
    }

    pub(super) async fn answer(
        &self,
        turn: &mut Turn,
        mut thread: Thread,
        answer: TypedAnswer,
        text: &str,
    ) -> Result<Thread, ChatError> {
        let confirmation_id = thread
            .pending_question
            .as_ref()
            .and_then(|question| question.confirmation_id);
        match (confirmation_id, &answer) {
            (Some(confirmation_id), TypedAnswer::YesNo(yes)) => {
                let decision = if *yes {
                    Decision::Approve(ApprovalScope::Once)
                } else {
                    Decision::Deny
                };
                match self
                    .apply_decision(turn, confirmation_id, decision, None)
                    .await
                {
                    Ok(thread) => Ok(thread),
                    Err(ChatError::Conflict(message)) => {
                        turn.narrative =
                            format!("That confirmation can no longer be answered: {message}.");
                        thread.pending_question = None;
                        self.save_thread(&mut thread).await?;
                        Ok(thread)
                    }
                    Err(other) => Err(other),
                }
            }
            _ => {
                let key = thread
                    .pending_question
                    .as_ref()
                    .map_or_else(|| "answer".to_owned(), |question| question.key.clone());
                thread
                    .slots
                    .insert(key, serde_json::to_value(&answer).unwrap_or(Value::Null));
                thread.pending_question = None;
                self.run_on(turn, thread, text).await
            }
        }
    }

    pub(super) async fn pause(
        &self,
        turn: &mut Turn,
        thread: &mut Thread,
        confirmation: &Confirmation,
    ) -> Result<(), ChatError> {
        let question = approval_question(confirmation);
        thread.status = ThreadStatus::WorkflowProposed;
        thread.pending_question = Some(PendingQuestion {
            key: "approval".to_owned(),
            expected: ExpectedType::YesNo,
            prompt: question.clone(),
            confirmation_id: Some(confirmation.id),
            asked_at_ms: self.now(),
        });
        thread.summary = format!(
            "Waiting for approval: {}",
            confirmation_summary(confirmation)
        );
        self.save_thread(thread).await?;
        turn.narrative = question;
        Ok(())
    }
}

/// The call a confirmation stands for, as the model proposed it.
fn confirmed_call(confirmation: &Confirmation) -> ToolCall {
    ToolCall::new(
        confirmation.call_id.clone(),
        confirmation.operation.clone(),
        confirmation.arguments.clone(),
    )
}

/// The previewed items a person's `selected` ticks keep, in the previewed order. Refused: an id
/// outside the preview (a selection can only narrow) and an empty selection.
fn chosen_items<'p>(
    previewed: &'p [String],
    selected: &[String],
) -> Result<Vec<&'p String>, ChatError> {
    if let Some(stranger) = selected.iter().find(|item| !previewed.contains(item)) {
        return Err(ChatError::Selection(format!(
            "`{stranger}` was not in the preview; an approval can only cover previewed items"
        )));
    }
    let chosen: Vec<&String> = previewed
        .iter()
        .filter(|item| selected.contains(item))
        .collect();
    if chosen.is_empty() {
        return Err(ChatError::Selection(
            "Tick at least one item to approve, or choose Deny.".to_owned(),
        ));
    }
    Ok(chosen)
}

/// The confirmation of `confirmation`'s call narrowed to the `chosen` items: its id list keeps
/// only them, so its hash is the narrowed call's, and its preview shows only their rows.
fn narrowed_call(
    manifest: &Manifest,
    operation: &Operation,
    confirmation: &Confirmation,
    chosen: &[&String],
) -> Result<NewConfirmation, ChatError> {
    let key = operation
        .batch_argument
        .as_deref()
        .unwrap_or(crate::chat::manifest::DEFAULT_BATCH_ARGUMENT);
    let Some(original_ids) = confirmation.arguments.get(key).and_then(Value::as_array) else {
        return Err(ChatError::Selection(format!(
            "`{}` cannot be narrowed to some of its items",
            confirmation.operation
        )));
    };
    let narrowed_ids: Vec<Value> = original_ids
        .iter()
        .filter(|item| chosen.contains(&&id_text(item)))
        .cloned()
        .collect();
    let mut arguments = confirmation.arguments.clone();
    arguments[key] = Value::Array(narrowed_ids);
    let row_id = manifest.row_id_field(confirmation.preview.preview_operation.as_deref());
    let items = confirmation
        .preview
        .items
        .iter()
        .filter(|item| {
            item.get(row_id)
                .is_some_and(|item_id| chosen.contains(&&id_text(item_id)))
        })
        .cloned()
        .collect();
    Ok(NewConfirmation {
        session_id: confirmation.session_id,
        thread_id: confirmation.thread_id,
        call_id: confirmation.call_id.clone(),
        caller: confirmation.caller,
        operation: confirmation.operation.clone(),
        reasons: confirmation.reasons.clone(),
        preview: ConfirmationPreview {
            count: chosen.len(),
            items,
            chunks: policy::chunk_plan(operation, &arguments).sizes,
            preview_operation: confirmation.preview.preview_operation.clone(),
        },
        arguments,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{
        chat::orchestrator::test_support::{call, Fixture},
        llm::ScriptedTurn,
    };

    async fn paused_delete() -> anyhow::Result<(Fixture, SessionId, PendingApproval)> {
        let fixture = Fixture::new(vec![
            call("c1", "deleteItem", json!({"id": "item-0001"})),
            ScriptedTurn::text("Deleted."),
        ])
        .await?;
        let session = fixture.session().await?;
        let outcome = fixture
            .orchestrator
            .handle_turn(session.id, "delete item-0001")
            .await?;
        let approval = outcome
            .pending_approvals
            .first()
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("the delete did not ask: {}", outcome.reply))?;
        Ok((fixture, session.id, approval))
    }

    #[tokio::test]
    async fn a_delete_waits_with_a_question_bound_to_its_hash() -> anyhow::Result<()> {
        let (_fixture, _session, approval) = paused_delete().await?;
        assert_eq!(approval.operation, "deleteItem");
        assert!(approval.destructive);
        assert_eq!(approval.allowed_scopes.len(), 3);
        assert!(
            approval.question.contains(approval.hash.short()),
            "{}",
            approval.question
        );
        Ok(())
    }

    #[tokio::test]
    async fn no_as_a_turn_declines_and_a_second_answer_is_a_conflict() -> anyhow::Result<()> {
        let (fixture, session, approval) = paused_delete().await?;
        let outcome = fixture.orchestrator.handle_turn(session, "no").await?;
        assert_eq!(outcome.narrative, "Declined. Nothing was changed.");
        assert_eq!(outcome.header.steps[0].status, CallStatus::Declined);
        assert_eq!(outcome.thread_status, Some(ThreadStatus::Done));
        let again = fixture
            .orchestrator
            .decide(
                session,
                approval.confirmation_id,
                Decision::Approve(ApprovalScope::Once),
            )
            .await;
        assert!(matches!(again, Err(ChatError::Conflict(_))), "{again:?}");
        let audit = fixture
            .orchestrator
            .store()
            .chat_executions(session)
            .await?;
        assert!(audit.is_empty(), "nothing ran for a declined call");
        Ok(())
    }

    #[tokio::test]
    async fn another_sessions_confirmation_is_not_found() -> anyhow::Result<()> {
        let (fixture, _session, approval) = paused_delete().await?;
        let stranger = fixture.session().await?;
        let answered = fixture
            .orchestrator
            .approve_selection(
                stranger.id,
                approval.confirmation_id,
                None,
                ApprovalScope::Once,
            )
            .await;
        assert!(
            matches!(answered, Err(ChatError::ConfirmationNotFound)),
            "{answered:?}"
        );
        Ok(())
    }
}
