//! An author's changes to a page's link: get a working link (a fresh token), extend, revoke.
//!
//! The one implementation behind the run page's buttons (`/runs/{id}`), `POST /api/runs/{id}/link`
//! and the asks lifecycle API. A fresh link exists only in the answer to whoever asked for it
//! (and in memory for the step that sends it): only its token's hash is stored, so getting a
//! working link always means minting a new one, and any link sent earlier stops working.
//! Every change applies to an open page only; a page already answered or revoked is refused.

use super::{factory::DEFAULT_EXPIRY, page::PageId, token::PageToken};
use crate::{
    store::{now_ms, pages::PageChange, Store, StoreError},
    workflow::run::RunId,
};

/// A change the run page's buttons ask for, by the form's `action` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkAction {
    /// `revoke`: withdraw the link.
    Revoke,
    /// `extend`: move the expiry by a new link's lifetime ([`DEFAULT_EXPIRY`], 7 days).
    Extend,
    /// `reissue`: a fresh working link, shown once.
    Reissue,
}

impl LinkAction {
    /// The action a form's `action` value names, if any.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "revoke" => Some(Self::Revoke),
            "extend" => Some(Self::Extend),
            "reissue" => Some(Self::Reissue),
            _ => None,
        }
    }
}

/// What a run page's button did to the page's link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunPageChange {
    /// A fresh link was issued: it is here and nowhere else.
    NewLink(String),
    /// The link was revoked or extended.
    Changed,
    /// The page is no longer open: nothing changed.
    NotOpen,
}

/// Applies `action` to page `page_id` of run `run_id` (the run page's buttons).
///
/// # Errors
/// [`StoreError::NotFound`] for an unknown page or one of another run; database failures.
pub async fn change_run_page(
    store: &Store,
    public_url: &str,
    run_id: RunId,
    page_id: PageId,
    action: LinkAction,
) -> Result<RunPageChange, StoreError> {
    if store.page(page_id).await?.run_id != Some(run_id) {
        return Err(StoreError::NotFound);
    }
    let extension = Extension::By(i64::try_from(DEFAULT_EXPIRY.as_millis()).unwrap_or(i64::MAX));
    let changed = match action {
        LinkAction::Revoke => revoke_link(store, page_id).await?.done(),
        LinkAction::Extend => extend_link(store, page_id, extension).await?.done(),
        LinkAction::Reissue => match reissue_link(store, public_url, page_id).await? {
            LinkChange::Done(link) => return Ok(RunPageChange::NewLink(link)),
            LinkChange::NotOpen => false,
        },
    };
    Ok(if changed {
        RunPageChange::Changed
    } else {
        RunPageChange::NotOpen
    })
}

/// What a change did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkChange<T> {
    /// The page was open and changed.
    Done(T),
    /// The page is no longer open (answered, cancelled or revoked): nothing changed.
    NotOpen,
}

/// The link that opens a page with `token`, under the server's public URL.
#[must_use]
pub fn page_link(public_url: &str, token: &PageToken) -> String {
    format!("{}/p/{}", public_url.trim_end_matches('/'), token.as_str())
}

/// Gives open page `page_id` a fresh token and returns its link; the old link stops working.
///
/// # Errors
/// [`StoreError::NotFound`] for an unknown page; database failures.
pub async fn reissue_link(
    store: &Store,
    public_url: &str,
    page_id: PageId,
) -> Result<LinkChange<String>, StoreError> {
    let token = PageToken::generate();
    let changed = store
        .change_open_page(page_id, &PageChange::Reissue(token.hash()))
        .await?;
    if changed {
        tracing::info!(page.id = %page_id, "a fresh link was issued for the page; earlier links no longer work");
        return Ok(LinkChange::Done(page_link(public_url, &token)));
    }
    // Tell an unknown page from one that is no longer open.
    store.page(page_id).await?;
    Ok(LinkChange::NotOpen)
}

/// How far to move a link's expiry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extension {
    /// This many ms after the later of now and the current expiry (the run page's button).
    By(i64),
    /// This many ms from now, but never earlier than the current expiry (the asks API's
    /// `expires_in`).
    FromNow(i64),
}

/// Moves open page `page_id`'s expiry (and the deadline of the run waiting on it, in the same
/// transaction); returns the new expiry, unix ms.
///
/// # Errors
/// [`StoreError::NotFound`] for an unknown page; database failures.
pub async fn extend_link(
    store: &Store,
    page_id: PageId,
    extension: Extension,
) -> Result<LinkChange<i64>, StoreError> {
    let page = store.page(page_id).await?;
    let now = now_ms();
    let expires_at_ms = match extension {
        Extension::By(ms) => page.expires_at_ms.max(now).saturating_add(ms),
        Extension::FromNow(ms) => now.saturating_add(ms).max(page.expires_at_ms),
    };
    let changed = store
        .change_open_page(page_id, &PageChange::Extend(expires_at_ms))
        .await?;
    Ok(if changed {
        LinkChange::Done(expires_at_ms)
    } else {
        LinkChange::NotOpen
    })
}

/// Withdraws open page `page_id`'s link: it answers 410 from now on.
///
/// # Errors
/// [`StoreError::NotFound`] for an unknown page; database failures.
pub async fn revoke_link(store: &Store, page_id: PageId) -> Result<LinkChange<()>, StoreError> {
    store.page(page_id).await?;
    let changed = store.change_open_page(page_id, &PageChange::Revoke).await?;
    Ok(if changed {
        LinkChange::Done(())
    } else {
        LinkChange::NotOpen
    })
}

impl<T> LinkChange<T> {
    /// Whether the page changed.
    #[must_use]
    pub fn done(&self) -> bool {
        matches!(self, Self::Done(_))
    }
}
