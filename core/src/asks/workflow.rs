//! The built-in workflow behind every ask: `Ask` (the page) → `Notify` (send the link, wait)
//! → `Callback` (deliver the response).
//!
//! The callback is a workflow step so its retries are durable: each attempt is one signed POST
//! (the [`WebhookSender`] is built with a single attempt), and a failure is retried by the
//! step's [`callback_retry`] policy, with backoff recorded in the database, so a restart
//! between attempts loses nothing. The run's id is the delivery id (`X-Tessera-Delivery`) of
//! every attempt, so the receiver can drop a repeat.
//!
//! Payload (`Content-Type: application/json`):
//! ```json
//! { "ask_id": "7f1c…", "status": "submitted", "response": { "answer": "yes" } }
//! ```
//! `response` is the typed value, decoded and validated against the ask's schema (for an ask with
//! assignees, the answer that completed the approvals). `answers` lists every answer given, one
//! per person: `{"answered_by", "at", "outcome", "response" | "reason"}`. An ask that ends
//! unanswered is reported the same way, so a caller that only listens never waits for ever:
//! `"status": "declined"` (a person declined, or enough assignees did that the approvals can no
//! longer come; their reasons are in `answers`), `"expired"` (the link ran out) or
//! `"cancelled"` (Cancel was pressed), with `"response": null`; the run then ends cancelled. An
//! admin's cancel from the runs page while the ask waits counts as Cancel; one while the
//! callback is being retried stops it.
//!
//! With assignees, the Notify step e-mails each person their own link when the server has SMTP
//! (`TESSERA_SMTP_HOST`); otherwise the links are only in the answer to `POST /api/asks`.
//!
//! The sender reaches public addresses only (`WebhookSender::checking`, made in
//! `startup.rs`); a failed attempt is recorded as the receiver's status or a fixed reason
//! ([`Undelivered`]), since the step's error is what `GET /api/asks/{id}` shows the caller.

use std::{sync::Arc, time::Duration};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{request::AskTimeout, undelivered::Undelivered};
use crate::{
    agent::CachePolicy,
    forms::FormSchema,
    notify::{send_link, AskRecipients, Notify, NotifyError, WebhookSender},
    pages::{
        history::{EventKind, NewEvent},
        people::{email_assignees, People},
    },
    store::{now_ms, Store},
    workflow::{
        overview::run_overview, run::RunId, wait_for, workflow, Answer, DynamicPage, OnTimeout,
        PageHandle, RetryPolicy, StepError, UiOptions, Workflow, WorkflowError,
    },
};

/// The registered name of the asks workflow.
pub const ASK_WORKFLOW: &str = "ask";
/// The name of the step that delivers the callback (the asks API reads its attempts).
pub const CALLBACK_STEP: &str = "Callback";

/// An ask's run state: the checked request.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AskState {
    /// What to ask, rendered from `prompt_template` over `data`.
    pub prompt: String,
    /// The prompt as the caller wrote it (absent in asks made before prompts were templates).
    #[serde(default)]
    pub prompt_template: Option<String>,
    /// The response schema (JSON Schema in the form subset); `null` for a display-only page.
    pub schema: Value,
    /// The data the page shows.
    pub data: Value,
    /// How long the link stays valid, in seconds.
    pub expires_in_secs: u64,
    /// Send the link through the configured channels.
    #[serde(default)]
    pub notify: bool,
    /// Send the link to the recipients the ask named (within the operator's allowlist).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipients: Option<AskRecipients>,
    /// Where to POST the response.
    #[serde(default)]
    pub callback_url: Option<String>,
    /// The page cache's policy for the ask's page (`use` in asks made before it was an option).
    #[serde(default)]
    pub cache: CachePolicy,
    /// Who answers and what settles the ask (one anonymous link in asks made before assignees).
    #[serde(default)]
    pub people: People,
    /// What the deadline does if the ask is still open (cancel in asks made before it was an
    /// option).
    #[serde(default)]
    pub on_timeout: AskTimeout,
}

/// What the callback POSTs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallbackPayload {
    /// The ask (its run's id).
    pub ask_id: String,
    /// `submitted`, `declined`, `expired` or `cancelled`.
    pub status: String,
    /// The typed response; `null` unless submitted.
    pub response: Value,
    /// Every answer given, one per person (see `pages::people::AnswerRecord`).
    #[serde(default)]
    pub answers: Vec<Value>,
}

/// How a callback is retried: 30 attempts, 1 s doubling to at most 10 minutes between them
/// (about four hours in all), so a receiver that is down for a while still gets it.
#[must_use]
pub fn callback_retry() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 30,
        initial_backoff: Duration::from_secs(1),
        multiplier: 2.0,
        max_backoff: Duration::from_secs(600),
    }
}

pub use crate::notify::NotifierFor;

/// The asks workflow. `notifier` sends links when an ask says `notify: true`; `notifier_for`
/// reaches the recipients an ask names; `callbacks` signs callback deliveries (an ask with a
/// `callback_url` is refused up front when it is `None`).
///
/// # Errors
/// Only if the definition is inconsistent (a bug caught at startup).
pub fn ask_workflow(
    store: Store,
    notifier: Option<Arc<dyn Notify>>,
    notifier_for: NotifierFor,
    callbacks: Option<WebhookSender>,
) -> Result<Workflow<AskState>, WorkflowError> {
    let notify_store = store.clone();
    workflow::<AskState>(ASK_WORKFLOW)
        .ui_from_state("Ask", |state: &AskState| {
            let schema = match &state.schema {
                Value::Null => None,
                schema => Some(FormSchema::from_json_schema(schema).map_err(|error| {
                    StepError::fatal(anyhow::anyhow!("the ask's schema: {error}"))
                })?),
            };
            Ok(DynamicPage {
                prompt: state.prompt.clone(),
                // The page cache keys on what the caller wrote, not on its rendering over `data`.
                template: state.prompt_template.clone(),
                schema,
                data: state.data.clone(),
                options: UiOptions {
                    expires_in: Some(Duration::from_secs(state.expires_in_secs)),
                    cache: state.cache,
                    people: state.people.clone(),
                    ..UiOptions::default()
                },
            })
        })
        .step_with_page("Notify", move |state: AskState, page: PageHandle<Value>| {
            let notifier = notifier.clone();
            let notifier_for = Arc::clone(&notifier_for);
            let store = notify_store.clone();
            async move {
                if state.notify {
                    send_link(notifier.as_ref(), "Your answer is requested", &page.link).await;
                }
                for address in email_assignees(&notifier_for, &page.assigned).await {
                    let event = NewEvent::new(EventKind::Notified).by(address).detail("e-mail");
                    // The history is a record, not the mail: a failure to write it is logged.
                    if let Err(error) = store.record_ask_event(page.page_id, &event, now_ms()).await {
                        tracing::warn!(error = %error, "recording a notification in the ask's history failed");
                    }
                }
                if let Some(recipients) = &state.recipients {
                    match notifier_for(recipients) {
                        Ok(named) => {
                            send_link(Some(&named), "Your answer is requested", &page.link).await;
                        }
                        // A failed notification never fails the step (the caller can reissue).
                        Err(error) => tracing::warn!(error = %error, "the ask's recipients cannot be notified"),
                    }
                }
                // The run stops waiting when the link expires (the callback still says so);
                // the page's own expiry (a moment earlier) is what the person sees.
                let expires_in = Duration::from_secs(state.expires_in_secs);
                let then = match &state.on_timeout {
                    AskTimeout::Cancel => OnTimeout::Cancel,
                    AskTimeout::Fail => OnTimeout::Fail,
                    AskTimeout::Continue(default) => OnTimeout::Continue(default.clone()),
                    AskTimeout::Decline => OnTimeout::Decline,
                };
                Ok((state, wait_for(page.webhook).timeout(expires_in, then)))
            }
        })
        .step_with_answer_in_run(
            CALLBACK_STEP,
            move |run_id: RunId, state: AskState, answer: Answer<Value>| {
                let callbacks = callbacks.clone();
                let store = store.clone();
                async move {
                    deliver(&store, callbacks.as_ref(), run_id, &state, answer).await?;
                    Ok(state)
                }
            },
        )
        .retry(callback_retry())
        .build()
}

async fn deliver(
    store: &Store,
    callbacks: Option<&WebhookSender>,
    run_id: RunId,
    state: &AskState,
    answer: Answer<Value>,
) -> Result<(), StepError> {
    let Some(raw_url) = state.callback_url.as_deref() else {
        return Ok(());
    };
    let url = url::Url::parse(raw_url)
        .map_err(|error| StepError::fatal(anyhow::anyhow!("the callback URL: {error}")))?;
    let sender = callbacks.ok_or_else(|| {
        StepError::fatal(anyhow::anyhow!(
            "no TESSERA_WEBHOOK_SECRET to sign the callback with"
        ))
    })?;
    let (status, response) = match answer {
        Answer::Given(response) => ("submitted", response),
        Answer::Declined(_) => ("declined", Value::Null),
        Answer::Expired => ("expired", Value::Null),
        Answer::Cancelled => ("cancelled", Value::Null),
    };
    let overview = run_overview(store, run_id).await?;
    let answers = overview
        .pages
        .first()
        .map(|page| overview.answers_on(page))
        .unwrap_or_default()
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| StepError::fatal(anyhow::anyhow!("encoding the answers: {error}")))?;
    let payload = CallbackPayload {
        ask_id: run_id.to_string(),
        status: status.to_owned(),
        response,
        answers,
    };
    let body = serde_json::to_vec(&payload)
        .map_err(|error| StepError::fatal(anyhow::anyhow!("encoding the callback: {error}")))?;
    match sender.deliver(&url, run_id.0, &body).await {
        Ok(_) => Ok(()),
        // A final 4xx will not change by itself, but the receiver's owner may fix it: keep
        // trying by the same policy rather than dropping the answer.
        Err(
            error @ (NotifyError::Status { .. }
            | NotifyError::GaveUp { .. }
            | NotifyError::Transport { .. }
            | NotifyError::Refused { .. }),
        ) => {
            // The runner logs the step's error, which the caller reads too: the fixed reason.
            // The receiver's reply and the transport's cause are for the operator only.
            tracing::debug!(ask.id = %run_id, error = %error, "callback attempt failed");
            Err(StepError::retryable(anyhow::anyhow!(
                "{}",
                Undelivered::of(&error)
            )))
        }
        Err(error) => Err(StepError::fatal(error)),
    }
}
