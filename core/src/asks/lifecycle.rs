//! Managing an ask after it started: cancel it, decline it (MCP's elicitation decline), extend
//! its link, or get fresh links.
//!
//! The same domain functions as the run page's buttons (`Runner::cancel_run`,
//! `pages::links`), so the once-only rules are one implementation: only an ask that still
//! waits for its answer changes; one already answered, cancelled or expired is a
//! [`AskError::Conflict`].

use std::time::Duration;

use super::{
    request::{parse_reissue, AskRequest},
    status::{view, AskStatus, AskView},
    workflow::ASK_WORKFLOW,
    AskError,
};
use crate::{
    pages::{
        links::{extend_link, reissue_assignee, reissue_links, Extension, LinkChange, PageLinks},
        page::{PageId, SubmitOutcome},
    },
    store::{now_ms, Store, StoreError},
    workflow::{
        overview::{run_overview, RunOverview},
        run::RunId,
        step::{declined_response, Decline},
        Runner,
    },
};

/// Reads ask `id` with its run, refusing ids of other runs.
async fn ask_overview(store: &Store, id: &str) -> Result<RunOverview, AskError> {
    let id: RunId = id.parse().map_err(|_| AskError::NotFound)?;
    let overview = run_overview(store, id).await?;
    if overview.run.workflow != ASK_WORKFLOW {
        return Err(AskError::NotFound);
    }
    Ok(overview)
}

/// The page an ask waits on, or why it cannot change.
fn open_page(overview: &RunOverview) -> Result<PageId, AskError> {
    let current = view(overview).status;
    match (current, overview.waiting_page) {
        (AskStatus::Waiting, Some(page_id)) => Ok(page_id),
        (AskStatus::Pending, _) => Err(AskError::Conflict(
            "the ask's page is still being made; try again in a moment".into(),
        )),
        (status, _) => Err(closed(status)),
    }
}

fn closed(status: AskStatus) -> AskError {
    let status = serde_json::to_value(status)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_default();
    AskError::Conflict(format!("the ask is already {status}"))
}

/// Cancels ask `id` as an admin's cancel of its run does: a waiting ask is answered with the
/// Cancel marker (its callback reports `cancelled`), a pending one is cancelled outright.
///
/// # Errors
/// [`AskError::NotFound`] for an unknown id; [`AskError::Conflict`] when it is already
/// submitted, expired, cancelled or failed.
pub async fn cancel_ask(runner: &Runner, id: &str) -> Result<AskView, AskError> {
    let overview = ask_overview(runner.store(), id).await?;
    let status = view(&overview).status;
    if !matches!(status, AskStatus::Pending | AskStatus::Waiting) {
        return Err(closed(status));
    }
    runner.cancel_run(overview.run.id).await?;
    Ok(view(&run_overview(runner.store(), overview.run.id).await?))
}

/// Declines ask `id` for the person, as its page's Decline button would, with `reason`: what an
/// MCP client's decline of the URL-mode elicitation means. The ask ends `declined` (its
/// callback says so) and its run resumes once.
///
/// # Errors
/// [`AskError::NotFound`] for an unknown id; [`AskError::Conflict`] when it no longer waits, or
/// has assignees (each of them declines for themselves, through their own link).
pub async fn decline_ask(
    runner: &Runner,
    id: &str,
    reason: Option<String>,
) -> Result<AskView, AskError> {
    let overview = ask_overview(runner.store(), id).await?;
    let page_id = open_page(&overview)?;
    if !overview.assignees_of(page_id).is_empty() {
        return Err(AskError::Conflict(
            "the ask has assignees: each of them declines through their own link".into(),
        ));
    }
    let marker = declined_response(&Decline { reason, by: None });
    match runner
        .store()
        .answer_page(page_id, &marker, now_ms())
        .await?
    {
        SubmitOutcome::Submitted(_) => runner.wake(),
        _ => {
            return Err(closed(
                view(&run_overview(runner.store(), overview.run.id).await?).status,
            ))
        }
    }
    Ok(view(&run_overview(runner.store(), overview.run.id).await?))
}

/// Makes ask `id`'s link expire `expires_in` from now (never earlier than it already does); the
/// run's wait moves with it.
///
/// # Errors
/// [`AskError::NotFound`] for an unknown id; [`AskError::Conflict`] when it no longer waits.
pub async fn extend_ask(
    store: &Store,
    id: &str,
    expires_in: Duration,
) -> Result<AskView, AskError> {
    let overview = ask_overview(store, id).await?;
    let page_id = open_page(&overview)?;
    let millis = i64::try_from(expires_in.as_millis()).unwrap_or(i64::MAX / 2);
    match extend_link(store, page_id, Extension::FromNow(millis)).await? {
        LinkChange::Done(_) => Ok(view(&run_overview(store, overview.run.id).await?)),
        LinkChange::NotOpen => Err(closed(
            view(&run_overview(store, overview.run.id).await?).status,
        )),
    }
}

/// Gives ask `id` a fresh link, answered once in the view's `link`; any link sent earlier
/// stops working. For an ask with assignees: fresh links (in `links`) for everyone who has not
/// answered, or only for the assignee `request` names ([`parse_reissue`]).
///
/// # Errors
/// [`AskError::NotFound`] for an unknown id; [`AskError::Conflict`] when it no longer waits or
/// the assignee has answered; [`AskError::Invalid`] for a bad body or an assignee the ask is not
/// for.
pub async fn reissue_ask(
    store: &Store,
    public_url: &str,
    id: &str,
    request: Option<AskRequest>,
) -> Result<AskView, AskError> {
    let overview = ask_overview(store, id).await?;
    let assignee = parse_reissue(request)?;
    let page_id = open_page(&overview)?;
    let change = match assignee.as_deref() {
        None => reissue_links(store, public_url, page_id).await?,
        Some(assignee) => match reissue_assignee(store, public_url, page_id, assignee).await {
            Ok(LinkChange::Done(link)) => LinkChange::Done(PageLinks::Assigned(vec![link])),
            Ok(LinkChange::NotOpen) => {
                return Err(AskError::Conflict(format!(
                    "`{assignee}` has answered already; their link is not reissued"
                )))
            }
            Err(StoreError::NotFound) => {
                return Err(AskError::invalid(
                    "assignee",
                    format!("`{assignee}` is not one of the ask's assignees"),
                ))
            }
            Err(error) => return Err(error.into()),
        },
    };
    match change {
        LinkChange::Done(links) => {
            let mut answer = view(&overview);
            answer.set_links(Some(links));
            Ok(answer)
        }
        LinkChange::NotOpen => Err(closed(
            view(&run_overview(store, overview.run.id).await?).status,
        )),
    }
}
