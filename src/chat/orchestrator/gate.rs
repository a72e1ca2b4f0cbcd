//! The five-step gate every proposed call passes before any byte is sent (see the
//! [`super`] module doc for the order), and the refusal it answers with.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::{
    broadcast::ChatEvent,
    text::{confirmation_summary, plural},
    Orchestrator, Turn,
};
use crate::chat::{
    audit::{Approval, ExecutionStatus, NewExecution},
    confirm::{operation_hash, Confirmation, ConfirmationPreview, NewConfirmation},
    header::{CallStatus, Step, StepRole},
    manifest::{id_text, Operation},
    planner::result_items,
    policy::{self, PolicyContext, Verdict},
    scope::ScopeRefusal,
    session::SessionId,
    threads::{Thread, ThreadId},
    ChatError,
};
use crate::{
    llm::{Message, ToolCall},
    store::chat::BeginExecutionError,
};

/// Who proposed a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Caller {
    Model,
    Person,
}

/// How the gate answered a call.
pub(super) enum Gate {
    /// The call ran or was refused; this is the tool result.
    Answered(Message),
    /// The call waits for a person.
    Paused(Box<Confirmation>),
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

    /// The gate every proposed call passes; see the module doc for the order.
    pub(super) async fn gate(
        &self,
        turn: &mut Turn,
        thread: &Thread,
        call: &ToolCall,
        caller: Caller,
    ) -> Result<Gate, ChatError> {
        let manifest = self.inner.manifest.clone();
        let arguments = match &call.arguments {
            Ok(Value::Null) => Value::Object(Map::new()),
            Ok(arguments) => arguments.clone(),
            Err(malformed) => {
                let reason = format!("the arguments are not valid JSON: {}", malformed.error);
                return self
                    .refuse(
                        turn,
                        thread,
                        call,
                        &Value::String(malformed.raw.clone()),
                        &reason,
                    )
                    .await;
            }
        };
        let operation = match turn.session.scope.check(&manifest, &call.name) {
            Ok(operation) => operation,
            Err(refusal) => {
                return self
                    .refuse(turn, thread, call, &arguments, &refusal.to_string())
                    .await
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
            return self
                .refuse(turn, thread, call, &arguments, &refusal.to_string())
                .await;
        }
        if let Err(errors) = operation.validate_arguments(&arguments) {
            let reason = format!(
                "the arguments do not match `{}`'s schema: {}",
                operation.name,
                errors.join("; ")
            );
            return self.refuse(turn, thread, call, &arguments, &reason).await;
        }
        match self.inner.executor.url_for(operation, &arguments) {
            Ok(url) => {
                let host = url.host_str().unwrap_or_default();
                if let Err(refusal) = turn.session.scope.check_host(&operation.name, host) {
                    return self
                        .refuse(turn, thread, call, &arguments, &refusal.to_string())
                        .await;
                }
            }
            Err(error) => {
                return self
                    .refuse(turn, thread, call, &arguments, &error.to_string())
                    .await
            }
        }
        let readers: Vec<String> = manifest
            .operations()
            .iter()
            .filter(|candidate| candidate.entity == operation.entity && !candidate.is_mutating())
            .map(|candidate| candidate.name.clone())
            .collect();
        let shown = self.inner.store.shown_item_ids(thread.id, &readers).await?;
        let grants = self.inner.store.chat_grants(turn.session.id).await?;
        let hash = operation_hash(&operation.name, &arguments);
        let approved = self
            .inner
            .store
            .approved_confirmation(turn.session.id, &hash)
            .await?;
        let verdict = policy::evaluate(
            &manifest,
            operation,
            &arguments,
            PolicyContext {
                shown_ids: &shown,
                grants: &grants,
                confirmed: approved.is_some(),
            },
        );
        match verdict {
            Verdict::NeedsPreview(demand) => {
                let sample: Vec<&str> = demand
                    .unshown_ids
                    .iter()
                    .take(5)
                    .map(String::as_str)
                    .collect();
                let reason = format!(
                    "preview required: `{}` changes items no preview in this conversation has shown; call `{}` first so the person sees them, then propose this call with the ids it returned ({} not shown, e.g. {})",
                    operation.name,
                    demand.operation,
                    plural(demand.unshown_ids.len(), "id"),
                    sample.join(", ")
                );
                self.refuse(turn, thread, call, &arguments, &reason).await
            }
            Verdict::NeedsConfirmation { reasons, chunks } => {
                self.mark_previews(turn, operation);
                let items = self
                    .preview_rows(turn.session.id, thread.id, operation, &arguments)
                    .await?;
                let confirmation = self
                    .inner
                    .store
                    .create_confirmation(&NewConfirmation {
                        session_id: turn.session.id,
                        thread_id: thread.id,
                        call_id: call.id.clone(),
                        operation: operation.name.clone(),
                        arguments: arguments.clone(),
                        reasons,
                        preview: ConfirmationPreview {
                            count: operation.item_ids(&arguments).len(),
                            items,
                            chunks: chunks.sizes.clone(),
                            preview_operation: manifest
                                .preview_operation_for(operation)
                                .map(|preview| preview.name.clone()),
                        },
                    })
                    .await?;
                let mut step = Step::new(
                    operation.name.clone(),
                    StepRole::Mutation,
                    CallStatus::AwaitingConfirmation,
                    format!("{}; nothing sent yet", confirmation_summary(&confirmation)),
                );
                step.hash = Some(confirmation.hash.clone());
                step.confirmation_id = Some(confirmation.id);
                step.role = self.role_of(&operation.name);
                self.push_step(turn, thread.id, step);
                let approval = self.pending_approval(&confirmation);
                self.emit(turn, ChatEvent::ApprovalRequested { approval });
                Ok(Gate::Paused(Box::new(confirmation)))
            }
            Verdict::Allow {
                chunks,
                waived_by_grant,
                ..
            } => {
                self.mark_previews(turn, operation);
                let approval = match approved {
                    Some(confirmation) => Approval::Confirmation {
                        id: confirmation.id,
                    },
                    None if !waived_by_grant.is_empty() => Approval::Grant {
                        operation: if grants.session {
                            crate::store::chat::SESSION_GRANT.to_owned()
                        } else {
                            operation.name.clone()
                        },
                    },
                    None => Approval::NotNeeded,
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

    /// The preview rows of the items a call touches (from this thread's readonly results).
    pub(super) async fn preview_rows(
        &self,
        id: SessionId,
        thread_id: ThreadId,
        operation: &Operation,
        arguments: &Value,
    ) -> Result<Vec<Value>, ChatError> {
        let wanted = operation.item_ids(arguments);
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
                let mut items = result_items(result);
                if items.is_empty() && result.get("id").is_some() {
                    items.push(result.clone());
                }
                for item in items {
                    if let Some(item_id) = item.get("id") {
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
