//! The words code writes: counts, chunk plans, confirmation questions and thread summaries.
//!
//! Kept in one place so the header, the replies and the stored summaries say things the same way.

use crate::chat::{
    confirm::Confirmation,
    header::{CallStatus, Step},
    policy::ConfirmReason,
};

pub(in crate::chat) fn plural(count: usize, word: &str) -> String {
    if count == 1 {
        format!("1 {word}")
    } else {
        format!("{count} {word}s")
    }
}

pub(super) fn chunk_text(sizes: &[usize]) -> String {
    sizes
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("+")
}

pub(super) fn confirmation_summary(confirmation: &Confirmation) -> String {
    let count = confirmation.preview.count;
    let mut text = format!(
        "`{}` on {}",
        confirmation.operation,
        plural(count.max(1), "item")
    );
    if confirmation.preview.chunks.len() > 1 {
        text.push_str(&format!(
            " in {} chunks ({})",
            confirmation.preview.chunks.len(),
            chunk_text(&confirmation.preview.chunks)
        ));
    }
    text
}

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
