//! Typed code steps erased into handlers: the step after a wait, a code step's definition,
//! what a step that got a page returns ([`Then`]), and the link it sends.

use std::{future::Future, sync::Arc};

use serde::{de::DeserializeOwned, Serialize};

use crate::{
    pages::{links::PageLinks, page::PageId},
    store::now_ms,
    workflow::{
        run::{RunId, TimeoutAction},
        step::{
            declined_by, declined_response, Answer, Decline, OnTimeout, Response, StepError,
            StepOutput, StepResult, Unanswered, Wait, DEADLINE_REASON,
        },
    },
};

use super::{decode, encode, Handler, StepContext, StepDef, StepDone, StepKind, WorkflowState};

/// The links the step after a `ui` step sends: the ones this process minted with the page, or —
/// when another process made it, or this one restarted since — fresh ones for the same page
/// (the stored output holds no link, only the page's id), which stop the old ones working.
pub(crate) async fn working_links(context: &StepContext, page_id: PageId) -> StepResult<PageLinks> {
    if let Some(links) = context.services.links.get(page_id) {
        return Ok(links);
    }
    let factory = context.services.page_factory.clone().ok_or_else(|| {
        StepError::fatal(anyhow::anyhow!(
            "the runner has no page factory to mint a fresh link with"
        ))
    })?;
    let links = factory.relink(page_id).await?;
    tracing::info!(run.id = %context.run_id, page.id = %page_id, "the page's link was not in this process's memory (a restart or another process made it): a fresh one was minted and the earlier one no longer works");
    context.services.links.put(page_id, links.clone());
    Ok(links)
}

/// The erased handler of a step after a wait: decodes the state and the [`Answer`] (a marker,
/// or the response as an `R`), runs `step`, encodes the new state.
pub(super) fn answer_handler<S, R, F, Fut>(step: F) -> Handler
where
    S: WorkflowState,
    R: DeserializeOwned + Send + 'static,
    F: Fn(RunId, S, Answer<R>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = StepResult<S>> + Send + 'static,
{
    let step = Arc::new(step);
    Arc::new(move |context, state, input| {
        let step = Arc::clone(&step);
        Box::pin(async move {
            let state: S = decode("the run's state", state)?;
            let answer = match Unanswered::of(&input) {
                Some(Unanswered::Cancelled) => Answer::Cancelled,
                Some(Unanswered::Expired) => Answer::Expired,
                Some(Unanswered::Declined) => Answer::Declined(declined_by(&input)),
                None => Answer::Given(decode("the response", input)?),
            };
            let state = step(context.run_id, state, answer).await?;
            Ok(StepDone {
                state: encode("the run's state", &state)?,
                output: StepOutput::None,
                goto: None,
            })
        })
    })
}

/// A code step (no template, no components of its own).
pub(super) fn code_step(name: String, handler: Handler, takes_unanswered: bool) -> StepDef {
    StepDef {
        name,
        kind: StepKind::Code,
        retry: None,
        template: None,
        handler,
        takes_unanswered,
        continues_unanswered: false,
        components: Vec::new(),
    }
}

/// What a step that got a page may return besides the state: `()` (carry on) or a
/// [`Wait<R>`] (suspend until the page is submitted; the next step gets an `R`).
pub trait Then: Send + 'static {
    /// What the next step gets (`()` or [`Response<R>`]).
    type Next;

    /// The stored form.
    ///
    /// # Errors
    /// A fatal [`StepError`] when a default response does not encode.
    #[doc(hidden)]
    fn into_output(self) -> StepResult<StepOutput>;
}

impl Then for () {
    type Next = ();

    fn into_output(self) -> StepResult<StepOutput> {
        Ok(StepOutput::None)
    }
}

impl<R: Serialize + Send + 'static> Then for Wait<R> {
    type Next = Response<R>;

    fn into_output(self) -> StepResult<StepOutput> {
        let page_id = self.token.map(|token| token.page_id);
        let (deadline_ms, on_timeout, default_response) = match self.timeout {
            None => (None, None, None),
            Some((duration, on_timeout)) => {
                let after = i64::try_from(duration.as_millis()).unwrap_or(i64::MAX);
                let deadline = now_ms().saturating_add(after);
                let (action, default_response) = match on_timeout {
                    OnTimeout::Fail => (TimeoutAction::Fail, None),
                    // Resumed with the expiry marker, so a `step_with_answer` after the wait
                    // hears of it; any other step is not run and the run ends cancelled.
                    OnTimeout::Cancel => {
                        (TimeoutAction::Continue, Some(Unanswered::Expired.marker()))
                    }
                    OnTimeout::Decline => (
                        TimeoutAction::Continue,
                        Some(declined_response(&Decline {
                            reason: Some(DEADLINE_REASON.to_owned()),
                            by: None,
                        })),
                    ),
                    OnTimeout::Continue(response) => (
                        TimeoutAction::Continue,
                        Some(encode("the default response", &response)?),
                    ),
                };
                (Some(deadline), Some(action), default_response)
            }
        };
        if page_id.is_none() && deadline_ms.is_none() {
            return Err(StepError::fatal(anyhow::anyhow!(
                "wait_for on a page without a form (no webhook) needs a timeout"
            )));
        }
        Ok(StepOutput::Wait {
            page_id,
            deadline_ms,
            on_timeout,
            default_response,
        })
    }
}
