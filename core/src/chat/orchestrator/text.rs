//! The words code writes: counts, chunk plans, confirmation questions and thread summaries.
//!
//! Kept in one place so the header, the replies and the stored summaries say things the same way.

use crate::chat::{
    confirm::{grouped_calls, Confirmation},
    header::{CallStatus, Step},
    policy::ConfirmReason,
};

/// `count` and `word`, with an `s` unless the count is one ("1 item", "3 items").
pub(in crate::chat) fn plural(count: usize, word: &str) -> String {
    if count == 1 {
        format!("1 {word}")
    } else {
        format!("{count} {word}s")
    }
}

/// A chunk plan as the header writes it: `100+100+47`.
pub(super) fn chunk_text(sizes: &[usize]) -> String {
    sizes
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("+")
}

/// What a confirmation covers: the operation, its item count and, when chunked, the plan.
pub(super) fn confirmation_summary(confirmation: &Confirmation) -> String {
    let count = confirmation.preview.count;
    let mut text = format!(
        "`{}` on {}",
        confirmation.operation,
        plural(count.max(1), "item")
    );
    if let Some(calls) = grouped_calls(&confirmation.arguments) {
        text.push_str(&format!(" in {}", plural(calls.len(), "call")));
    } else if confirmation.preview.chunks.len() > 1 {
        text.push_str(&format!(
            " in {} chunks ({})",
            confirmation.preview.chunks.len(),
            chunk_text(&confirmation.preview.chunks)
        ));
    }
    text
}

/// The question a pending confirmation asks, with code's reasons and the hash it is bound to.
pub(super) fn approval_question(confirmation: &Confirmation) -> String {
    let reasons: Vec<String> = confirmation
        .reasons
        .iter()
        .map(ConfirmReason::describe)
        .collect();
    format!(
        "Approve {}? Code asks because {}. Nothing has been sent yet. Answer yes or no (this approval is bound to hash {}).",
        confirmation_summary(confirmation),
        reasons.join(", "),
        confirmation.hash.short()
    )
}

/// A thread's one-line summary: failures first, then the reply's first line.
pub(super) fn summarize(steps: &[Step], narrative: &str) -> String {
    let first_line = narrative.lines().next().unwrap_or_default();
    let failed = steps
        .iter()
        .filter(|step| step.status == CallStatus::Failed)
        .count();
    let mut summary: String = first_line.chars().take(200).collect();
    if failed > 0 {
        summary = format!("{} failed. {summary}", plural(failed, "step"));
    }
    if summary.is_empty() {
        summary = format!("{} ran.", plural(steps.len(), "step"));
    }
    summary
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::chat::{
        confirm::{operation_hash, ConfirmationId, ConfirmationStatus},
        header::{CallStatus, Step, StepRole},
        policy::ConfirmReason,
        session::SessionId,
        threads::ThreadId,
    };

    fn confirmation(count: usize, chunks: Vec<usize>) -> Confirmation {
        let arguments = json!({"ids": ["a"]});
        Confirmation {
            id: ConfirmationId::new(),
            session_id: SessionId(uuid::Uuid::new_v4()),
            thread_id: ThreadId(uuid::Uuid::new_v4()),
            call_id: "call-1".to_owned(),
            caller: crate::chat::confirm::Caller::Model,
            operation: "bulkDeleteItems".to_owned(),
            hash: operation_hash("bulkDeleteItems", &arguments),
            arguments,
            reasons: vec![ConfirmReason::Delete, ConfirmReason::MutatingBatch],
            preview: crate::chat::confirm::ConfirmationPreview {
                count,
                items: Vec::new(),
                chunks,
                preview_operation: None,
            },
            status: ConfirmationStatus::Pending,
            scope: None,
            created_at_ms: 0,
            decided_at_ms: None,
            consumed_at_ms: None,
        }
    }

    #[test]
    fn counts_are_singular_for_one_only() {
        assert_eq!(plural(1, "item"), "1 item");
        assert_eq!(plural(0, "item"), "0 items");
        assert_eq!(plural(247, "item"), "247 items");
        assert_eq!(chunk_text(&[100, 100, 47]), "100+100+47");
    }

    #[test]
    fn a_chunked_confirmation_names_its_chunk_plan_and_one_request_does_not() {
        assert_eq!(
            confirmation_summary(&confirmation(247, vec![100, 100, 47])),
            "`bulkDeleteItems` on 247 items in 3 chunks (100+100+47)"
        );
        assert_eq!(
            confirmation_summary(&confirmation(0, vec![1])),
            "`bulkDeleteItems` on 1 item",
            "a call on no previewed item still touches one"
        );
    }

    #[test]
    fn the_approval_question_gives_code_s_reasons_and_the_hash() {
        let asked = confirmation(3, vec![3]);
        let question = approval_question(&asked);
        assert!(
            question.starts_with("Approve `bulkDeleteItems` on 3 items? Code asks because it deletes, it changes many items at once."),
            "{question}"
        );
        assert!(question.contains(asked.hash.short()), "{question}");
    }

    #[test]
    fn a_summary_leads_with_failures_and_falls_back_to_the_step_count() {
        let failed = Step::new(
            "bulkDeleteItems",
            StepRole::Mutation,
            CallStatus::Failed,
            "0 of 3 done",
        );
        let read = Step::new(
            "searchItems",
            StepRole::Read,
            CallStatus::Succeeded,
            "3 items",
        );
        assert_eq!(
            summarize(&[read.clone(), failed], "It went wrong.\nDetails follow."),
            "1 step failed. It went wrong."
        );
        assert_eq!(summarize(&[read], ""), "1 step ran.");
    }
}
