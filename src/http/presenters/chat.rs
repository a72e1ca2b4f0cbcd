//! The chat page's view model (`tessera_app::chat::ChatPageData`) from a session's view, its
//! generated views and its manual tools.

use std::collections::BTreeMap;

use serde_json::Value;
use tessera_app::{
    chat::{
        ApprovalView, ChatMessage, ChatPageData, GeneratedView, HeaderStep, ToolEntry, ToolGroup,
    },
    render::FormState,
};

use crate::chat::{
    header::{CallStatus, Step},
    orchestrator::ManualTool,
    session::{Speaker, TranscriptEntry},
    views::{field_words, ChatView, SessionViews, IDS_FIELD},
    ConfirmationId, ExecutionHeader, PendingApproval, SessionView,
};

/// The person's answer to one confirm view, shown again after it was refused.
#[derive(Clone, Debug)]
pub struct RejectedAnswer {
    /// The confirmation the answer was for.
    pub confirmation: ConfirmationId,
    /// The person's values and the message saying what was refused.
    pub form: FormState,
}

impl RejectedAnswer {
    /// The confirm view's form with the person's `values` and `message` on the ticks.
    #[must_use]
    pub fn refused_selection(
        confirmation: ConfirmationId,
        values: BTreeMap<String, Vec<String>>,
        message: String,
    ) -> Self {
        let form = FormState {
            values,
            errors: BTreeMap::from([(IDS_FIELD.to_owned(), message.clone())]),
            form_error: Some(message),
        };
        Self { confirmation, form }
    }
}

/// The whole chat page: the transcript with each result view under its message, the pending
/// approvals (one re-filled with `rejected`), the calls running, the manual tools by category.
#[must_use]
pub fn chat_page_data(
    view: &SessionView,
    mut generated: SessionViews,
    tools: &[ManualTool],
    flash: Option<String>,
    rejected: Option<&RejectedAnswer>,
    query: &BTreeMap<String, String>,
) -> ChatPageData {
    let pending: Vec<String> = view
        .pending_approvals
        .iter()
        .map(|approval| approval.question.clone())
        .collect();
    let messages = view
        .transcript
        .iter()
        .map(|entry| message(entry, &mut generated, query, &pending))
        .collect();
    let approvals = view
        .pending_approvals
        .iter()
        .filter_map(|approval| {
            let confirm = generated.confirms.remove(&approval.confirmation_id)?;
            let summary = confirm.summary.clone();
            let mut shown = generated_view(confirm, query);
            if let Some(rejected) =
                rejected.filter(|rejected| rejected.confirmation == approval.confirmation_id)
            {
                shown.form = rejected.form.clone();
            }
            Some(approval_view(approval, shown, summary))
        })
        .collect();
    ChatPageData {
        messages,
        approvals,
        pending_questions: pending,
        running: generated
            .progress
            .into_iter()
            .map(|view| generated_view(view, query))
            .collect(),
        tools: tool_groups(tools),
        flash,
    }
}

fn message(
    entry: &TranscriptEntry,
    generated: &mut SessionViews,
    query: &BTreeMap<String, String>,
    pending: &[String],
) -> ChatMessage {
    let header_text = entry.header.as_ref().map(ExecutionHeader::render);
    let text = match &header_text {
        Some(rendered) => entry
            .text
            .strip_prefix(rendered.as_str())
            .unwrap_or(&entry.text)
            .trim_start()
            .to_owned(),
        None => entry.text.clone(),
    };
    let steps = entry
        .header
        .as_ref()
        .map(|header| header.steps.as_slice())
        .unwrap_or_default();
    let text = if entry.speaker == Speaker::Assistant && !pending.contains(&text) {
        // The tools this reply ran are named in words, as the header names them.
        steps.iter().fold(plain_words(&text), |text, step| {
            text.replace(&step.operation, &field_words(&step.operation))
        })
    } else {
        text
    };
    ChatMessage {
        speaker: entry.speaker.as_str().to_owned(),
        header: steps.iter().map(header_step).collect(),
        header_text: (entry.speaker == Speaker::Assistant)
            .then(|| header_text.unwrap_or_else(|| "Execution: no operations ran.".to_owned())),
        text,
        views: steps
            .iter()
            .filter_map(|step| step.execution_id)
            .filter_map(|execution| {
                generated
                    .reads
                    .remove(&execution)
                    .or_else(|| generated.results.remove(&execution))
            })
            .map(|view| generated_view(view, query))
            .collect(),
    }
}

/// A reply as a person reads it: no code quotes, and no call hash (the approval's Details has
/// it). The stored reply, which the model and the JSON API see, keeps both.
fn plain_words(text: &str) -> String {
    const HASH_NOTE: &str = " (this approval is bound to hash ";
    let mut plain = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(HASH_NOTE) {
        plain.push_str(&rest[..start]);
        rest = rest[start..]
            .find(')')
            .map_or("", |end| &rest[start + end + 1..]);
    }
    plain.push_str(rest);
    plain.replace('`', "")
}

fn generated_view(view: ChatView, query: &BTreeMap<String, String>) -> GeneratedView {
    GeneratedView {
        query: query.clone(),
        kind: view.kind.as_str().to_owned(),
        tree: view.tree,
        data: view.data,
        action: view.action,
        form: FormState {
            values: view.values,
            ..FormState::default()
        },
        download_base: view.download_base,
    }
}

fn status_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(text)) => text,
        _ => String::new(),
    }
}

fn header_step(step: &Step) -> HeaderStep {
    // The page says what a step did in words; the tool name, its role and the hash a
    // confirmation is bound to are in the header's Details (the rendered header text).
    let summary = match step.status {
        CallStatus::AwaitingConfirmation => {
            "waiting for your approval below; nothing sent yet".to_owned()
        }
        _ => step.detail.replace('`', ""),
    };
    HeaderStep {
        label: step.status.label().to_owned(),
        status: status_name(&step.status),
        operation: field_words(&step.operation),
        summary,
        error: step.error.clone(),
        progress: step.chunks.as_ref().map(|chunks| {
            (
                u64::try_from(chunks.items_done).unwrap_or(u64::MAX),
                u64::try_from(chunks.items_total).unwrap_or(u64::MAX),
            )
        }),
    }
}

fn approval_view(
    approval: &PendingApproval,
    view: GeneratedView,
    summary: Option<String>,
) -> ApprovalView {
    let summary = summary.unwrap_or_else(|| field_words(&approval.operation));
    ApprovalView {
        id: approval.confirmation_id.0.to_string(),
        operation: approval.operation.clone(),
        summary,
        reasons: approval.reasons_text.clone(),
        chunks: approval.preview.chunks.clone(),
        hash: approval.hash.short().to_owned(),
        arguments: arguments_text(&approval.arguments),
        view,
    }
}

/// The most characters of an approval's arguments its Details show.
const ARGUMENTS_CHARS: usize = 4000;

fn arguments_text(arguments: &Value) -> String {
    let text = serde_json::to_string_pretty(arguments).unwrap_or_default();
    if text.chars().count() <= ARGUMENTS_CHARS {
        return text;
    }
    let cut: String = text.chars().take(ARGUMENTS_CHARS).collect();
    format!("{cut}\n… (cut; the approval is bound to every argument)")
}

fn tool_groups(tools: &[ManualTool]) -> Vec<ToolGroup> {
    let mut groups: BTreeMap<String, Vec<ToolEntry>> = BTreeMap::new();
    for tool in tools {
        let parameters = tool
            .parameters
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default();
        groups
            .entry(tool.category.clone())
            .or_default()
            .push(ToolEntry {
                name: tool.name.clone(),
                description: tool.description.clone(),
                parameters,
            });
    }
    groups
        .into_iter()
        .map(|(category, tools)| ToolGroup { category, tools })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::plain_words;

    #[test]
    fn a_reply_loses_its_code_quotes_and_the_hash_note() {
        assert_eq!(
            plain_words("Approve `bulkDeleteItems` on 3 items? Answer yes or no (this approval is bound to hash afab598fc3fe)."),
            "Approve bulkDeleteItems on 3 items? Answer yes or no."
        );
        assert_eq!(plain_words("Found 20 items."), "Found 20 items.");
    }
}
