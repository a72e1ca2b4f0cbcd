//! Manual tools: the tools a person may run from the panel or `/tool`, through the same gate as
//! the model's calls, with the result told to the model afterwards.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{gate::Gate, text::summarize, turn::TurnOutcome, Orchestrator, Turn};
use crate::chat::scope::ScopeRules as _;
use crate::chat::{
    confirm::Caller,
    header::CallStatus,
    policy::{self},
    session::{SessionId, Speaker},
    threads::{Thread, ThreadStatus},
    ChatError,
};
use crate::llm::{Message, ToolCall};

/// Tool-call ids of manual tools start with this, for people reading logs and transcripts only:
/// who proposed a call is recorded with its confirmation (`confirm::Caller`) from the path it
/// arrived on, because a model may choose any id, this prefix too.
const MANUAL_CALL_PREFIX: &str = "manual-";

/// A tool a person may run from the panel or `/tool`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ManualTool {
    /// The operation.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The panel group.
    pub category: String,
    /// The form's JSON Schema (the §5 subset).
    pub parameters: Value,
    /// What code demands before it runs.
    pub rules: Vec<String>,
}

impl Orchestrator {
    /// The tools a person may run by hand in this session, in manifest order.
    ///
    /// # Errors
    /// [`ChatError::SessionNotFound`]; storage failures.
    pub async fn manual_tools(&self, id: SessionId) -> Result<Vec<ManualTool>, ChatError> {
        let session = self.session(id).await?;
        Ok(session
            .scope
            .manual_operations(&self.inner.manifest)
            .into_iter()
            .map(|operation| ManualTool {
                name: operation.name.clone(),
                description: operation.description.clone(),
                category: operation.category.clone(),
                parameters: operation.parameters.clone(),
                rules: policy::describe(&self.inner.manifest, operation),
            })
            .collect())
    }

    /// Runs a manual tool for the person, through the same gate as a model's call (scope, schema,
    /// policy); its result is injected into the model's conversation.
    ///
    /// # Errors
    /// [`ChatError::SessionNotFound`]; storage failures.
    pub async fn run_manual_tool(
        &self,
        id: SessionId,
        name: &str,
        arguments: Value,
    ) -> Result<TurnOutcome, ChatError> {
        let session = self.session(id).await?;
        self.record_transcript(
            id,
            Speaker::User,
            None,
            &format!("/tool {name} {arguments}"),
            None,
        )
        .await?;
        let mut turn = Turn::new(session, "manual_tool");
        let thread = self.manual_call(&mut turn, name, arguments).await?;
        self.finish_turn(turn, Some(thread)).await
    }

    pub(in crate::chat) async fn manual_call(
        &self,
        turn: &mut Turn,
        name: &str,
        arguments: Value,
    ) -> Result<Thread, ChatError> {
        let mut thread = Thread::new(
            turn.session.id,
            format!("manual: {name}"),
            format!("Manual tool `{name}`"),
            self.now(),
        );
        thread.slots.insert("arguments".into(), arguments.clone());
        self.save_thread(&mut thread).await?;
        self.routed(turn, Some(thread.id));
        let call = ToolCall::new(
            format!("{MANUAL_CALL_PREFIX}{}", uuid::Uuid::new_v4().simple()),
            name,
            arguments,
        );
        let (cancel, _running) = self.start_run(turn.session.id);
        turn.cancel = cancel;
        match self
            .gate(turn, &thread, &call, Caller::Person, None)
            .await?
        {
            Gate::Answered(message) => {
                self.inject_manual_result(turn, &thread, &call, &message)
                    .await?;
                self.settle_manual(turn, &mut thread).await?;
            }
            Gate::Paused(confirmation) => self.pause(turn, &mut thread, &confirmation).await?,
        }
        Ok(thread)
    }

    /// Puts a manual tool's result into the model's conversation as a system note, so the model
    /// knows what the person did (and the planner, which reads only user turns, ignores it).
    pub(super) async fn inject_manual_result(
        &self,
        turn: &Turn,
        thread: &Thread,
        call: &ToolCall,
        message: &Message,
    ) -> Result<(), ChatError> {
        let (content, is_error) = match message {
            Message::ToolResult {
                content, is_error, ..
            } => (content.clone(), *is_error),
            _ => (Value::Null, false),
        };
        let outcome = if is_error { "failed" } else { "returned" };
        let mut text = format!(
            "The person ran the manual tool `{}` with {}; it {outcome}: {}",
            call.name,
            call.arguments_text(),
            content
        );
        if text.len() > 20_000 {
            text.truncate(
                text.char_indices()
                    .nth(20_000)
                    .map_or(text.len(), |(index, _)| index),
            );
            text.push_str("… (truncated)");
        }
        self.append_model(turn.session.id, thread.id, &Message::system(text))
            .await
    }

    pub(super) async fn settle_manual(
        &self,
        turn: &mut Turn,
        thread: &mut Thread,
    ) -> Result<(), ChatError> {
        let last = turn.steps.last();
        let (status, narrative) = match last.map(|step| step.status) {
            Some(CallStatus::Succeeded) => (
                ThreadStatus::Done,
                format!("`{}` ran.", last.map_or("", |step| step.operation.as_str())),
            ),
            Some(CallStatus::Refused) => (
                ThreadStatus::Failed,
                "Code refused the tool; see the header for why.".to_owned(),
            ),
            _ => (
                ThreadStatus::Failed,
                "The tool failed; see the header for the error.".to_owned(),
            ),
        };
        thread.status = status;
        thread.summary = summarize(&turn.steps, &narrative);
        self.save_thread(thread).await?;
        turn.narrative = narrative;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::chat::{
        header::CallStatus, orchestrator::test_support::Fixture, session::MessageChannel,
    };

    #[tokio::test]
    async fn the_panel_lists_the_manifest_s_tools_with_code_s_rules() -> anyhow::Result<()> {
        let fixture = Fixture::new(Vec::new()).await?;
        let session = fixture.session().await?;
        let tools = fixture.orchestrator.manual_tools(session.id).await?;
        let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
        assert_eq!(names[0], "searchItems");
        let bulk_delete = tools
            .iter()
            .find(|tool| tool.name == "bulkDeleteItems")
            .ok_or_else(|| anyhow::anyhow!("no bulkDeleteItems in {names:?}"))?;
        assert!(
            bulk_delete
                .rules
                .iter()
                .any(|rule| rule.contains("`searchItems`")),
            "{:?}",
            bulk_delete.rules
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_manual_run_goes_through_the_gate_and_the_model_is_told() -> anyhow::Result<()> {
        let fixture = Fixture::new(Vec::new()).await?;
        let session = fixture.session().await?;
        let refused = fixture
            .orchestrator
            .run_manual_tool(session.id, "getItem", json!({}))
            .await?;
        assert_eq!(refused.header.steps[0].status, CallStatus::Refused);
        assert_eq!(
            refused.narrative,
            "Code refused the tool; see the header for why."
        );
        let ran = fixture
            .orchestrator
            .run_manual_tool(session.id, "searchItems", json!({"limit": 1}))
            .await?;
        assert_eq!(ran.narrative, "`searchItems` ran.");
        let told = fixture
            .orchestrator
            .store()
            .chat_messages(session.id, MessageChannel::Model)
            .await?;
        assert!(
            told.iter().any(|message| message
                .body
                .to_string()
                .contains("The person ran the manual tool `searchItems`")),
            "{told:?}"
        );
        Ok(())
    }
}
