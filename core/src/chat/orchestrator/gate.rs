//! The five-step gate every proposed call passes before any byte is sent (see the
//! [`super`] module doc for the order), and the refusal it answers with.

use std::collections::{BTreeSet, HashMap};

use serde_json::{json, Map, Value};

use super::{
    broadcast::ChatEvent,
    text::{confirmation_summary, plural},
    Orchestrator, Turn,
};
use crate::chat::scope::ScopeRules as _;
use crate::chat::{
    audit::{Approval, ExecutionStatus, NewExecution},
    confirm::{
        operation_hash, touched_ids, Caller, Confirmation, ConfirmationId, ConfirmationPreview,
        NewConfirmation,
    },
    header::{CallStatus, Step, StepRole},
    manifest::{id_text, Operation},
    planner::result_items,
    policy::{self, PolicyContext, PreviewDemand, Verdict},
    scope::ScopeRefusal,
    session::SessionId,
    threads::{Thread, ThreadId},
    ChatError,
};
use crate::{
    llm::{Message, ToolCall},
    store::chat::BeginExecutionError,
};

/// A call, or a turn's group of calls, that waits for a person's approval.
pub(super) struct PendingApproval<'a> {
    /// The call the confirmation is filed under (a group's first call).
    pub call_id: String,
    /// Who proposed it.
    pub caller: Caller,
    /// The operation.
    pub operation: &'a Operation,
    /// The arguments the approval is bound to (a group's, merged).
    pub arguments: Value,
    /// Why it needs approval.
    pub reasons: Vec<crate::chat::policy::ConfirmReason>,
    /// Items it touches, as the confirmation states them.
    pub count: usize,
    /// Requests it will be sent as.
    pub chunks: Vec<usize>,
}

/// How the gate answered a call.
pub(super) enum Gate {
    /// The call ran or was refused; this is the tool result.
    Answered(Message),
    /// The call waits for a person.
    Paused(Box<Confirmation>),
}

/// A call that passed steps 1–4 of the gate.
pub(super) struct Admitted<'a> {
    pub(super) operation: &'a Operation,
    pub(super) arguments: Value,
}

/// What a call refused for want of a preview is told: which operation to call first.
pub(super) fn preview_refusal(operation: &Operation, demand: &PreviewDemand) -> String {
    let sample: Vec<&str> = demand
        .unshown_ids
        .iter()
        .take(5)
        .map(String::as_str)
        .collect();
    format!(
        "preview required: `{}` changes items no preview in this conversation has shown; call `{}` first so the person sees them, then propose this call with the ids it returned ({} not shown, e.g. {})",
        operation.name,
        demand.operation,
        plural(demand.unshown_ids.len(), "id"),
        sample.join(", ")
    )
}

/// A call that passed the gate's checks.
#[derive(Clone, Copy)]
pub(super) struct Proposed<'a> {
    pub(super) call: &'a ToolCall,
    pub(super) operation: &'a Operation,
    pub(super) arguments: &'a Value,
}

impl Orchestrator {
    pub(super) fn role_of(&self, operation: &str) -> StepRole {
        match self.inner.manifest.operation(operation) {
            Some(operation) if operation.is_mutating() => StepRole::Mutation,
            _ => StepRole::Read,
        }
    }

    /// Marks this turn's earlier reads by `operation`'s preview operation as previews, once a
    /// mutation relies on them (a search is only a preview in hindsight).
    pub(super) fn mark_previews(&self, turn: &mut Turn, operation: &Operation) {
        if !self.inner.manifest.needs_preview(operation) {
            return;
        }
        if let Some(preview) = self.inner.manifest.preview_operation_for(operation) {
            for step in &mut turn.steps {
                if step.operation == preview.name && step.role == StepRole::Read {
                    step.role = StepRole::Preview;
                }
            }
        }
    }

    /// Refuses a call: tool error to the caller, a `refused` audit row, one log line, a step.
    pub(super) async fn refuse(
        &self,
        turn: &mut Turn,
        thread: &Thread,
        call: &ToolCall,
        arguments: &Value,
        reason: &str,
    ) -> Result<Gate, ChatError> {
        tracing::warn!(
            chat.session = %turn.session.id,
            chat.thread = %thread.id,
            tool.name = %call.name,
            reason,
            "refused a tool call"
        );
        let role = self.role_of(&call.name);
        let recorded = self
            .inner
            .store
            .begin_execution(&NewExecution {
                session_id: turn.session.id,
                thread_id: thread.id,
                operation: call.name.clone(),
                arguments: arguments.clone(),
                role,
                approval: Approval::Refused,
                items_total: 0,
                chunks_total: 0,
                status: ExecutionStatus::Refused,
                error: Some(reason.to_owned()),
            })
            .await;
        let execution_id = match recorded {
            Ok(id) => Some(id),
            Err(BeginExecutionError::Store(error)) => return Err(error.into()),
            Err(BeginExecutionError::ConfirmationUnusable) => None,
        };
        let mut step = Step::new(
            call.name.clone(),
            role,
            CallStatus::Refused,
            "refused by code; nothing was sent",
        )
        .with_error(reason);
        step.execution_id = execution_id;
        self.push_step(turn, thread.id, step);
        Ok(Gate::Answered(Message::tool_error(
            call,
            json!({"error": reason, "refused_by": "code", "nothing_sent": true}),
        )))
    }

    /// Steps 1–4 of the gate (well-formed arguments, scope and caller, schema, host): the call's
    /// operation and arguments, or the refusal it was answered with.
    pub(super) async fn admit(
        &self,
        turn: &mut Turn,
        thread: &Thread,
        call: &ToolCall,
        caller: Caller,
    ) -> Result<Result<Admitted<'_>, Gate>, ChatError> {
        let manifest = &self.inner.manifest;
        let arguments = match &call.arguments {
            Ok(Value::Null) => Value::Object(Map::new()),
            Ok(arguments) => arguments.clone(),
            Err(malformed) => {
                let reason = format!("the arguments are not valid JSON: {}", malformed.error);
                let raw = Value::String(malformed.raw.clone());
                return Ok(Err(self.refuse(turn, thread, call, &raw, &reason).await?));
            }
        };
        let operation = match turn.session.scope.check(manifest, &call.name) {
            Ok(operation) => operation,
            Err(refusal) => {
                let reason = refusal.to_string();
                return Ok(Err(self
                    .refuse(turn, thread, call, &arguments, &reason)
                    .await?));
            }
        };
        let offered = match caller {
            Caller::Model => operation
                .offered_to_model()
                .then_some(())
                .ok_or(ScopeRefusal::WrongCaller(call.name.clone(), "the model")),
            Caller::Person => operation
                .offered_manually()
                .then_some(())
                .ok_or(ScopeRefusal::WrongCaller(call.name.clone(), "manual use")),
        };
        if let Err(refusal) = offered {
            let reason = refusal.to_string();
            return Ok(Err(self
                .refuse(turn, thread, call, &arguments, &reason)
                .await?));
        }
        if let Err(errors) = operation.validate_arguments(&arguments) {
            let reason = format!(
                "the arguments do not match `{}`'s schema: {}",
                operation.name,
                errors.join("; ")
            );
            return Ok(Err(self
                .refuse(turn, thread, call, &arguments, &reason)
                .await?));
        }
        let host_refusal = match self.inner.executor.url_for(operation, &arguments) {
            Ok(url) => {
                let host = url.host_str().unwrap_or_default();
                turn.session
                    .scope
                    .check_host(&operation.name, host)
                    .err()
                    .map(|refusal| refusal.to_string())
            }
            Err(error) => Some(error.to_string()),
        };
        if let Some(reason) = host_refusal {
            return Ok(Err(self
                .refuse(turn, thread, call, &arguments, &reason)
                .await?));
        }
        Ok(Ok(Admitted {
            operation,
            arguments,
        }))
    }

    /// The ids this thread's readonly calls of `operation`'s entity have shown.
    pub(super) async fn shown_ids(
        &self,
        thread: &Thread,
        operation: &Operation,
    ) -> Result<BTreeSet<String>, ChatError> {
        let readers: Vec<String> = self
            .inner
            .manifest
            .operations()
            .iter()
            .filter(|candidate| candidate.entity == operation.entity && !candidate.is_mutating())
            .map(|candidate| candidate.name.clone())
            .collect();
        Ok(self.inner.store.shown_item_ids(thread.id, &readers).await?)
    }

    /// The gate every proposed call passes; see the module doc for the order. `group` is the
    /// approved group confirmation this exact call was part of (it stands for the person's
    /// approval of the call; the preview is still checked).
    pub(super) async fn gate(
        &self,
        turn: &mut Turn,
        thread: &Thread,
        call: &ToolCall,
        caller: Caller,
        group: Option<ConfirmationId>,
    ) -> Result<Gate, ChatError> {
        let manifest = &self.inner.manifest;
        let Admitted {
            operation,
            arguments,
        } = match self.admit(turn, thread, call, caller).await? {
            Ok(admitted) => admitted,
            Err(refused) => return Ok(refused),
        };
        let shown = self.shown_ids(thread, operation).await?;
        let grants = self.inner.store.chat_grants(turn.session.id).await?;
        let approved = match group {
            Some(_) => None,
            None => {
                let hash = operation_hash(&operation.name, &arguments);
                self.inner
                    .store
                    .approved_confirmation(turn.session.id, &hash)
                    .await?
            }
        };
        let verdict = policy::evaluate(
            manifest,
            operation,
            &arguments,
            PolicyContext {
                shown_ids: &shown,
                grants: &grants,
                confirmed: approved.is_some() || group.is_some(),
            },
        );
        match verdict {
            Verdict::NeedsPreview(demand) => {
                let reason = preview_refusal(operation, &demand);
                self.refuse(turn, thread, call, &arguments, &reason).await
            }
            Verdict::NeedsConfirmation { reasons, chunks } => {
                let pending = PendingApproval {
                    call_id: call.id.clone(),
                    caller,
                    operation,
                    count: operation.item_ids(&arguments).len(),
                    arguments: arguments.clone(),
                    reasons,
                    chunks: chunks.sizes.clone(),
                };
                let confirmation = self.pause_for_approval(turn, thread, pending).await?;
                Ok(Gate::Paused(Box::new(confirmation)))
            }
            Verdict::Allow {
                chunks,
                waived_by_grant,
                ..
            } => {
                self.mark_previews(turn, operation);
                let approval = match (group, approved) {
                    (Some(id), _) => Approval::Group { id },
                    (None, Some(confirmation)) => Approval::Confirmation {
                        id: confirmation.id,
                    },
                    (None, None) if !waived_by_grant.is_empty() => Approval::Grant {
                        operation: if grants.session {
                            crate::store::chat::SESSION_GRANT.to_owned()
                        } else {
                            operation.name.clone()
                        },
                    },
                    (None, None) => Approval::NotNeeded,
                };
                let proposed = Proposed {
                    call,
                    operation,
                    arguments: &arguments,
                };
                self.execute(turn, thread, proposed, &chunks, approval)
                    .await
            }
        }
    }

    /// The header's step and the event for a confirmation that now waits for the person.
    /// Stores the confirmation a person must give for `pending`, with the rows it touches as its
    /// preview, and pauses the turn on it: the one way a call (or a turn's group of calls) waits
    /// for a person.
    pub(super) async fn pause_for_approval(
        &self,
        turn: &mut Turn,
        thread: &Thread,
        pending: PendingApproval<'_>,
    ) -> Result<Confirmation, ChatError> {
        let operation = pending.operation;
        self.mark_previews(turn, operation);
        let items = self
            .preview_rows(turn.session.id, thread.id, operation, &pending.arguments)
            .await?;
        let confirmation = self
            .inner
            .store
            .create_confirmation(&NewConfirmation {
                session_id: turn.session.id,
                thread_id: thread.id,
                call_id: pending.call_id,
                caller: pending.caller,
                operation: operation.name.clone(),
                arguments: pending.arguments,
                reasons: pending.reasons,
                preview: ConfirmationPreview {
                    count: pending.count,
                    items,
                    chunks: pending.chunks,
                    preview_operation: self
                        .inner
                        .manifest
                        .preview_operation_for(operation)
                        .map(|preview| preview.name.clone()),
                },
            })
            .await?;
        self.await_confirmation(turn, &confirmation);
        Ok(confirmation)
    }

    pub(super) fn await_confirmation(&self, turn: &mut Turn, confirmation: &Confirmation) {
        let mut step = Step::new(
            confirmation.operation.clone(),
            self.role_of(&confirmation.operation),
            CallStatus::AwaitingConfirmation,
            format!("{}; nothing sent yet", confirmation_summary(confirmation)),
        );
        step.hash = Some(confirmation.hash.clone());
        step.confirmation_id = Some(confirmation.id);
        self.push_step(turn, confirmation.thread_id, step);
        let approval = self.pending_approval(confirmation);
        self.emit(turn, ChatEvent::ApprovalRequested { approval });
    }

    /// The preview rows of the items a call touches (from this thread's readonly results).
    pub(super) async fn preview_rows(
        &self,
        id: SessionId,
        thread_id: ThreadId,
        operation: &Operation,
        arguments: &Value,
    ) -> Result<Vec<Value>, ChatError> {
        let wanted = touched_ids(operation, arguments);
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        let mut rows: HashMap<String, Value> = HashMap::new();
        for execution in self.inner.store.chat_executions(id).await? {
            if execution.thread_id != thread_id
                || execution.status != ExecutionStatus::Succeeded
                || execution.role == StepRole::Mutation
            {
                continue;
            }
            if let Some(result) = &execution.result {
                let id_field = self.inner.manifest.row_id_field(Some(&execution.operation));
                let mut items = result_items(result);
                if items.is_empty() && result.get(id_field).is_some() {
                    items.push(result.clone());
                }
                for item in items {
                    if let Some(item_id) = item.get(id_field) {
                        rows.insert(id_text(item_id), item);
                    }
                }
            }
        }
        Ok(wanted
            .iter()
            .filter_map(|item_id| rows.get(item_id).cloned())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::{
        chat::{
            header::{CallStatus, StepRole},
            orchestrator::test_support::{call, Fixture},
            scope::RequestedScope,
        },
        llm::ScriptedTurn,
    };

    #[tokio::test]
    async fn arguments_outside_the_schema_are_refused_and_nothing_is_sent() -> anyhow::Result<()> {
        let fixture = Fixture::new(vec![
            call("c1", "getItem", json!({})),
            ScriptedTurn::text("Could not read it."),
        ])
        .await?;
        let session = fixture.session().await?;
        let outcome = fixture
            .orchestrator
            .handle_turn(session.id, "show item")
            .await?;
        let step = &outcome.header.steps[0];
        assert_eq!(
            (step.operation.as_str(), step.status),
            ("getItem", CallStatus::Refused)
        );
        assert!(
            step.error
                .as_deref()
                .is_some_and(|error| error.contains("do not match `getItem`'s schema")),
            "{step:?}"
        );
        let audit = fixture
            .orchestrator
            .store()
            .chat_executions(session.id)
            .await?;
        assert_eq!(audit.len(), 1, "a refusal leaves one audit row");
        assert_eq!(audit[0].items_done, 0);
        Ok(())
    }

    #[tokio::test]
    async fn a_batch_change_of_items_no_preview_showed_is_refused_naming_the_preview(
    ) -> anyhow::Result<()> {
        let fixture = Fixture::new(vec![
            call("c1", "bulkDeleteItems", json!({"ids": ["item-0001"]})),
            ScriptedTurn::text("I need a preview first."),
        ])
        .await?;
        let session = fixture.session().await?;
        let outcome = fixture
            .orchestrator
            .handle_turn(session.id, "delete it")
            .await?;
        let step = &outcome.header.steps[0];
        assert_eq!(
            (step.role, step.status),
            (StepRole::Mutation, CallStatus::Refused)
        );
        assert!(
            step.error
                .as_deref()
                .is_some_and(|error| error.starts_with("preview required")
                    && error.contains("`searchItems`")),
            "{step:?}"
        );
        assert!(outcome.pending_approvals.is_empty());
        Ok(())
    }

    #[tokio::test]
    async fn an_operation_outside_the_session_scope_is_refused() -> anyhow::Result<()> {
        let fixture = Fixture::new(vec![
            call("c1", "deleteItem", json!({"id": "item-0001"})),
            ScriptedTurn::text("Not allowed."),
        ])
        .await?;
        let requested: RequestedScope =
            serde_json::from_value(json!({"operations": ["searchItems"]}))?;
        let session = fixture
            .orchestrator
            .create_session(Some(&requested), None)
            .await?;
        let outcome = fixture
            .orchestrator
            .handle_turn(session.id, "delete it")
            .await?;
        assert_eq!(outcome.header.steps[0].status, CallStatus::Refused);
        assert!(
            outcome.pending_approvals.is_empty(),
            "no confirmation for a refused call"
        );
        Ok(())
    }
}
