//! An author's changes to a page's link: get a working link (a fresh token), extend, revoke.
//!
//! The one implementation behind the run page's buttons (`/runs/{id}`), `POST /api/runs/{id}/link`
//! and the asks lifecycle API. A fresh link exists only in the answer to whoever asked for it
//! (and in memory for the step that sends it): only its token's hash is stored, so getting a
//! working link always means minting a new one, and any link sent earlier stops working.
//! Every change applies to an open page only; a page already answered or revoked is refused.

use super::{page::PageId, token::PageToken};
use crate::store::{now_ms, pages::PageChange, Store, StoreError};

/// How far "extend" moves a link's expiry when the caller does not say (the run page's button).
pub const DEFAULT_EXTENSION_MS: i64 = 7 * 24 * 3600 * 1000;

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
