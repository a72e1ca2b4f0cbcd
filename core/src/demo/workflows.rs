//! The demo workflows `make run` offers with no key: an email digest that asks which emails to
//! archive, a bulk approval of expense claims, and a display-only dashboard.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{
    emails::{inbox, Email},
    expenses::{claims, Claim},
};
use crate::{
    forms::{FormEnum, FormSchema},
    notify::{send_link, Notify},
    workflow::{
        wait_for, workflow, NoResponse, PageHandle, Prompt, Registry, UiOptions, Workflow,
        WorkflowError,
    },
};

/// The email digest's page prompt (a template over [`Digest`]).
pub const DIGEST_PROMPT: &str = "Present these {{ emails | length }} emails grouped by category; let the person pick which to archive and add a note.";
/// The email digest's result page prompt.
pub const DIGEST_RESULT_PROMPT: &str =
    "Archived {{ archived | length }} of {{ emails | length }} emails. Note: {{ note or \"none\" }}.";
/// The bulk approval's page prompt (a template over [`Approvals`]).
pub const APPROVAL_PROMPT: &str = "Approve or reject these {{ claims | length }} expense claims; select the claims and give a reason.";
/// The dashboard's page prompt.
pub const DASHBOARD_PROMPT: &str =
    "Inbox and expenses at a glance: emails per category and claim totals.";

/// The email digest's state.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Digest {
    /// The fetched inbox.
    #[serde(default)]
    pub emails: Vec<Email>,
    /// The ids the person chose to archive.
    #[serde(default)]
    pub archived: Vec<String>,
    /// Their note.
    #[serde(default)]
    pub note: Option<String>,
}

/// What the digest page asks for.
#[derive(Clone, Debug, Serialize, Deserialize, FormSchema)]
pub struct DigestForm {
    /// The emails to archive (their ids).
    pub archive_ids: Vec<String>,
    /// Anything the archiver should know.
    pub note: Option<String>,
}

/// The bulk approval's state.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Approvals {
    /// The claims to decide.
    #[serde(default)]
    pub claims: Vec<Claim>,
    /// The decision.
    #[serde(default)]
    pub decision: Option<String>,
    /// The claims it applies to.
    #[serde(default)]
    pub selected: Vec<String>,
    /// Why.
    #[serde(default)]
    pub reason: Option<String>,
}

/// Approve or reject.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, FormEnum)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Pay the selected claims.
    Approve,
    /// Refuse the selected claims.
    Reject,
}

/// What the approval page asks for.
#[derive(Clone, Debug, Serialize, Deserialize, FormSchema)]
pub struct ApprovalForm {
    /// Approve or reject the selected claims.
    pub decision: ApprovalDecision,
    /// The claims the decision applies to (their ids).
    pub claim_ids: Vec<String>,
    /// Why, in one sentence.
    pub reason: String,
}

/// The dashboard's state: figures to show.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Dashboard {
    /// Emails per category.
    #[serde(default)]
    pub by_category: Vec<serde_json::Value>,
    /// Claim totals.
    #[serde(default)]
    pub totals: serde_json::Value,
}

/// The email digest: fetch, ask which to archive, notify, wait, archive, show the result.
///
/// # Errors
/// Only if the definition is inconsistent (a bug caught at startup).
pub fn email_digest(notifier: Option<Arc<dyn Notify>>) -> Result<Workflow<Digest>, WorkflowError> {
    workflow::<Digest>("email-digest")
        .step("Fetch", |state: Digest| async move {
            Ok(Digest {
                emails: inbox(),
                ..state
            })
        })
        .ui("ShowDigest", Prompt::<DigestForm>::new(DIGEST_PROMPT))
        .step_with_page(
            "Notify",
            move |state: Digest, page: PageHandle<DigestForm>| {
                let notifier = notifier.clone();
                async move {
                    send_link(
                        notifier.as_ref(),
                        "Which emails should be archived?",
                        &page.link,
                    )
                    .await;
                    Ok((state, wait_for(page.webhook)))
                }
            },
        )
        .step_with_response(
            "Archive",
            |state: Digest, response: DigestForm| async move {
                let archived: Vec<String> = response
                    .archive_ids
                    .into_iter()
                    .filter(|id| state.emails.iter().any(|email| &email.id == id))
                    .collect();
                Ok(Digest {
                    archived,
                    note: response.note,
                    ..state
                })
            },
        )
        .display(
            "Result",
            Prompt::<NoResponse>::new(DIGEST_RESULT_PROMPT),
            UiOptions::default(),
        )
        .build()
}

/// The bulk approval: approve or reject a selection of claims with a reason.
///
/// # Errors
/// Only if the definition is inconsistent.
pub fn bulk_approval(
    notifier: Option<Arc<dyn Notify>>,
) -> Result<Workflow<Approvals>, WorkflowError> {
    workflow::<Approvals>("bulk-approval")
        .step("Collect", |state: Approvals| async move {
            Ok(Approvals {
                claims: claims(),
                ..state
            })
        })
        .ui("Review", Prompt::<ApprovalForm>::new(APPROVAL_PROMPT))
        .step_with_page(
            "Notify",
            move |state: Approvals, page: PageHandle<ApprovalForm>| {
                let notifier = notifier.clone();
                async move {
                    send_link(
                        notifier.as_ref(),
                        "Expense claims need a decision",
                        &page.link,
                    )
                    .await;
                    Ok((state, wait_for(page.webhook)))
                }
            },
        )
        .step_with_response(
            "Record",
            |state: Approvals, response: ApprovalForm| async move {
                let decision = match response.decision {
                    ApprovalDecision::Approve => "approve",
                    ApprovalDecision::Reject => "reject",
                };
                Ok(Approvals {
                    decision: Some(decision.to_owned()),
                    selected: response.claim_ids,
                    reason: Some(response.reason),
                    ..state
                })
            },
        )
        .build()
}

/// The dashboard: figures computed by code, shown on a display-only page.
///
/// # Errors
/// Only if the definition is inconsistent.
pub fn dashboard() -> Result<Workflow<Dashboard>, WorkflowError> {
    workflow::<Dashboard>("dashboard")
        .step("Compute", |_state: Dashboard| async move {
            let emails = inbox();
            let mut by_category = Vec::new();
            for category in ["newsletter", "receipt", "notification", "personal", "work"] {
                let count = emails.iter().filter(|email| email.category == category).count();
                by_category.push(serde_json::json!({"category": category, "count": count}));
            }
            let claims = claims();
            let total: f64 = claims.iter().map(|claim| claim.amount).sum();
            let totals = serde_json::json!({"claims": claims.len(), "amount": (total * 100.0).round() / 100.0, "emails": emails.len()});
            Ok(Dashboard { by_category, totals })
        })
        .display("Show", Prompt::<NoResponse>::new(DASHBOARD_PROMPT), UiOptions::default())
        .build()
}

/// Every demo workflow, registered.
///
/// # Errors
/// Only if a definition is inconsistent.
pub fn registry(notifier: Option<Arc<dyn Notify>>) -> Result<Registry, WorkflowError> {
    Registry::new()
        .with(email_digest(notifier.clone())?)?
        .with(bulk_approval(notifier)?)?
        .with(dashboard()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forms::{FieldKind, FormSchemaType};

    #[test]
    fn the_demo_forms_have_the_documented_schemas() {
        let digest = DigestForm::form_schema();
        assert!(matches!(
            digest.field("archive_ids").map(|field| &field.kind),
            Some(FieldKind::StringArray { .. })
        ));
        assert!(digest.field("note").is_some_and(|field| !field.required));
        let approval = ApprovalForm::form_schema();
        assert!(
            matches!(approval.field("decision").map(|field| &field.kind), Some(FieldKind::Enum { options }) if options == &["approve".to_owned(), "reject".to_owned()])
        );
    }

    #[test]
    fn the_demo_registry_holds_three_workflows() -> Result<(), WorkflowError> {
        assert_eq!(
            registry(None)?.names(),
            vec!["bulk-approval", "dashboard", "email-digest"]
        );
        Ok(())
    }
}
