//! What a turn's calls of one operation add up to (`policy::turn_demand`): several calls beyond
//! the operation's `max_batch_size` are refused, several calls touching more than the
//! confirmation threshold together wait for one confirmation of them all (a *group*), and an
//! approved group's calls run one by one through the gate.
//!
//! A group is always the model's: manual tools run one call at a time. Its confirmation stores
//! every call's id and arguments (`confirm::GroupedCall`), so each call's result goes back to the
//! model under its own id, and it is consumed once, before the first call runs, so approving it
//! twice (or after a crash) never runs a call twice.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use super::{
    gate::{preview_refusal, Admitted, Gate, PendingApproval},
    Orchestrator, Turn,
};
use crate::chat::{
    confirm::{group_arguments, touched_ids, Caller, Confirmation, GroupedCall},
    policy::{self, ConfirmReason, GroupDemand, PolicyContext, Verdict},
    threads::Thread,
    ChatError,
};
use crate::llm::{Message, ToolCall};

/// How a reply's calls of one operation were answered together.
pub(super) enum GroupGate {
    /// Every call was answered (refused); these are the tool results.
    Answered(Vec<Message>),
    /// The admitted calls wait for one confirmation; the others were refused with `answered`.
    Paused {
        /// The refused calls' tool results.
        answered: Vec<Message>,
        /// The group confirmation.
        confirmation: Box<Confirmation>,
    },
}

/// A call's arguments as the audit records them, also when they are not JSON.
fn recorded_arguments(call: &ToolCall) -> Value {
    match &call.arguments {
        Ok(arguments) => arguments.clone(),
        Err(malformed) => Value::String(malformed.raw.clone()),
    }
}

impl Orchestrator {
    /// What each operation of a model reply's `calls` demands together, counted over the turn;
    /// operations whose calls go through the gate one by one are left out.
    pub(super) async fn turn_demands(
        &self,
        turn: &Turn,
        calls: &[ToolCall],
    ) -> Result<BTreeMap<String, GroupDemand>, ChatError> {
        let mut proposed: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
        for call in calls {
            if let Ok(arguments) = &call.arguments {
                proposed
                    .entry(call.name.as_str())
                    .or_default()
                    .push(arguments);
            }
        }
        let grants = self.inner.store.chat_grants(turn.session.id).await?;
        let mut demands = BTreeMap::new();
        for (name, arguments) in proposed {
            let Some(operation) = self.inner.manifest.operation(name) else {
                continue;
            };
            if let Some(demand) =
                policy::turn_demand(operation, turn.totals.of(name), &arguments, &grants)
            {
                demands.insert(name.to_owned(), demand);
            }
        }
        Ok(demands)
    }

    /// Answers `members` (a reply's calls of one operation) together, as `demand` says.
    pub(super) async fn gate_group(
        &self,
        turn: &mut Turn,
        thread: &Thread,
        members: &[&ToolCall],
        demand: GroupDemand,
    ) -> Result<GroupGate, ChatError> {
        match demand {
            GroupDemand::OverMaximum { calls, items, max } => {
                let answered = self
                    .refuse_over_maximum(turn, thread, members, (calls, items, max))
                    .await?;
                Ok(GroupGate::Answered(answered))
            }
            GroupDemand::Confirm { count } => {
                self.confirm_group(turn, thread, members, count).await
            }
        }
    }

    /// Refuses every call in `members` (a reply's calls of one operation) because this turn's
    /// calls of it add up beyond its `max_batch_size`; returns their tool results.
    async fn refuse_over_maximum(
        &self,
        turn: &mut Turn,
        thread: &Thread,
        members: &[&ToolCall],
        (calls, items, max): (usize, usize, usize),
    ) -> Result<Vec<Message>, ChatError> {
        let Some(first) = members.first() else {
            return Ok(Vec::new());
        };
        let operation = &first.name;
        let reason = format!(
            "`{operation}` refused: this turn's {calls} calls of it add up to {items} items, more than its max_batch_size of {max}, so code sent none of them. Send the items as one `{operation}` call (code splits it into chunks of {max}, with a preview and a confirmation), or ask the person to narrow the request."
        );
        let mut answered = Vec::with_capacity(members.len());
        for member in members {
            let arguments = recorded_arguments(member);
            if let Gate::Answered(message) = self
                .refuse(turn, thread, member, &arguments, &reason)
                .await?
            {
                answered.push(message);
            }
        }
        Ok(answered)
    }

    /// Holds `members` (a reply's calls of one operation that touch `count` items together with
    /// this turn's unapproved earlier calls) for one confirmation. Each call passes steps 1–4 of
    /// the gate and its preview first; a call that does not is refused and left out.
    async fn confirm_group(
        &self,
        turn: &mut Turn,
        thread: &Thread,
        members: &[&ToolCall],
        count: usize,
    ) -> Result<GroupGate, ChatError> {
        let grants = self.inner.store.chat_grants(turn.session.id).await?;
        let mut answered = Vec::new();
        let mut grouped = Vec::new();
        let mut reasons: Vec<ConfirmReason> = Vec::new();
        let mut shown: Option<BTreeSet<String>> = None;
        let mut group_operation = None;
        for member in members {
            let Admitted {
                operation,
                arguments,
            } = match self.admit(turn, thread, member, Caller::Model).await? {
                Ok(admitted) => admitted,
                Err(Gate::Answered(message)) => {
                    answered.push(message);
                    continue;
                }
                Err(Gate::Paused(_)) => continue,
            };
            if shown.is_none() {
                shown = Some(self.shown_ids(thread, operation).await?);
            }
            let Some(shown_ids) = &shown else {
                continue;
            };
            let context = PolicyContext {
                shown_ids,
                grants: &grants,
                confirmed: false,
            };
            let verdict = policy::evaluate(&self.inner.manifest, operation, &arguments, context);
            if let Verdict::NeedsPreview(demand) = verdict {
                let reason = preview_refusal(operation, &demand);
                if let Gate::Answered(message) = self
                    .refuse(turn, thread, member, &arguments, &reason)
                    .await?
                {
                    answered.push(message);
                }
                continue;
            }
            // Each call's own reasons hold for the group; its item count is the group's.
            for reason in policy::confirmation_reasons(operation, &arguments) {
                if !matches!(reason, ConfirmReason::ManyItems { .. }) && !reasons.contains(&reason)
                {
                    reasons.push(reason);
                }
            }
            group_operation = Some(operation);
            grouped.push(GroupedCall {
                call_id: member.id.clone(),
                arguments,
            });
        }
        let (Some(operation), Some(first)) = (group_operation, grouped.first()) else {
            return Ok(GroupGate::Answered(answered));
        };
        reasons.push(ConfirmReason::TurnTotal { count });
        let arguments = group_arguments(&grouped);
        let pending = PendingApproval {
            call_id: first.call_id.clone(),
            caller: Caller::Model,
            operation,
            count: touched_ids(operation, &arguments).len(),
            arguments,
            reasons,
            chunks: grouped
                .iter()
                .map(|call| operation.item_ids(&call.arguments).len().max(1))
                .collect(),
        };
        let confirmation = self.pause_for_approval(turn, thread, pending).await?;
        Ok(GroupGate::Paused {
            answered,
            confirmation: Box::new(confirmation),
        })
    }

    /// Runs the calls of an approved group confirmation, in the model's order, each through the
    /// gate as approved by it; their results go to the model under their own ids. The
    /// confirmation is consumed first, once.
    ///
    /// # Errors
    /// [`ChatError::Conflict`] when the confirmation was already used; storage failures.
    pub(super) async fn run_group(
        &self,
        turn: &mut Turn,
        thread: &Thread,
        confirmation: &Confirmation,
        calls: &[GroupedCall],
    ) -> Result<Option<Box<Confirmation>>, ChatError> {
        let session = turn.session.id;
        let consumed = self
            .inner
            .store
            .consume_confirmation(session, confirmation.id, &confirmation.hash)
            .await?;
        if !consumed {
            return Err(ChatError::Conflict(
                "this confirmation was already used".to_owned(),
            ));
        }
        let calls: Vec<ToolCall> = calls
            .iter()
            .map(|call| call.tool_call(&confirmation.operation))
            .collect();
        for (index, call) in calls.iter().enumerate() {
            if turn.cancel.is_cancelled() {
                self.skip_after_stop(turn, thread, &calls[index..]).await?;
                return Ok(None);
            }
            let caller = Caller::Model;
            match self
                .gate(turn, thread, call, caller, Some(confirmation.id))
                .await?
            {
                Gate::Answered(message) => self.append_model(session, thread.id, &message).await?,
                // An approved group stands for each call's confirmation, so this cannot happen;
                // if it did, the rest wait like any calls after a pause.
                Gate::Paused(again) => {
                    for later in &calls[index + 1..] {
                        let error = json!({"error": "not run: an earlier call waits for the person's confirmation"});
                        self.append_model(session, thread.id, &Message::tool_error(later, error))
                            .await?;
                    }
                    return Ok(Some(again));
                }
            }
        }
        Ok(None)
    }
}
