//! An author's changes to a page's link: get a working link (a fresh token), extend, revoke.
//!
//! The one implementation behind the run page's buttons (`/runs/{id}`), `POST /api/runs/{id}/link`
//! and the asks lifecycle API. A fresh link exists only in the answer to whoever asked for it
//! (and in memory for the step that sends it): only its token's hash is stored, so getting a
//! working link always means minting a new one, and any link sent earlier stops working.
//! Every change applies to an open page only; a page already answered or revoked is refused.

use std::{fmt, time::Duration};

use serde::Serialize;

use super::{page::PageId, token::PageToken};
use crate::{
    store::records::run::RunId,
    store::{now_ms, pages::PageChange, Store, StoreError},
};

/// How long a link stays valid when the step does not say.
pub const DEFAULT_EXPIRY: Duration = Duration::from_secs(7 * 24 * 3600);

/// One assignee's own link to a page (it holds their secret token: never logged or stored).
#[derive(Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct AssigneeLink {
    /// Their e-mail address.
    pub assignee: String,
    /// Their link.
    pub link: String,
}

impl fmt::Debug for AssigneeLink {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("AssigneeLink")
            .field("assignee", &self.assignee)
            .field("link", &"***")
            .finish()
    }
}

/// The working links of a page: its one anonymous link, or each assignee's own (no shared link
/// exists beside them).
#[derive(Clone, PartialEq, Eq)]
pub enum PageLinks {
    /// The page's one link.
    Shared(String),
    /// One link per assignee who has not answered yet.
    Assigned(Vec<AssigneeLink>),
}

impl PageLinks {
    /// The shared link, if the page has one.
    #[must_use]
    pub fn shared(&self) -> Option<&str> {
        match self {
            Self::Shared(link) => Some(link),
            Self::Assigned(_) => None,
        }
    }

    /// The assignees' links (empty for a page with a shared link).
    #[must_use]
    pub fn assigned(&self) -> &[AssigneeLink] {
        match self {
            Self::Shared(_) => &[],
            Self::Assigned(links) => links,
        }
    }
}

impl fmt::Debug for PageLinks {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Shared(_) => formatter.write_str("Shared(***)"),
            Self::Assigned(links) => formatter.debug_tuple("Assigned").field(links).finish(),
        }
    }
}

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
    /// Fresh links were issued: they are here and nowhere else.
    NewLink(PageLinks),
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
        LinkAction::Reissue => match reissue_links(store, public_url, page_id).await? {
            LinkChange::Done(links) => return Ok(RunPageChange::NewLink(links)),
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

/// Gives open page `page_id` fresh links: a fresh token for its anonymous link, or for a page
/// with assignees one for each assignee who has not answered yet (there is no shared link to
/// give). The links sent earlier stop working.
///
/// # Errors
/// [`StoreError::NotFound`] for an unknown page; database failures.
pub async fn reissue_links(
    store: &Store,
    public_url: &str,
    page_id: PageId,
) -> Result<LinkChange<PageLinks>, StoreError> {
    let page = store.page(page_id).await?;
    if !page.is_assigned() {
        return Ok(match reissue_link(store, public_url, page_id).await? {
            LinkChange::Done(link) => LinkChange::Done(PageLinks::Shared(link)),
            LinkChange::NotOpen => LinkChange::NotOpen,
        });
    }
    let mut issued = Vec::new();
    for assignee in store.assignees_of(page_id).await? {
        if assignee.answer.is_some() {
            continue;
        }
        let token = PageToken::generate();
        if store
            .reissue_assignee_link(page_id, assignee.position, &token.hash())
            .await?
        {
            issued.push(AssigneeLink {
                assignee: assignee.email,
                link: page_link(public_url, &token),
            });
        }
    }
    if issued.is_empty() {
        return Ok(LinkChange::NotOpen);
    }
    tracing::info!(page.id = %page_id, links = issued.len(), "fresh links were issued for the page's assignees; their earlier links no longer work");
    Ok(LinkChange::Done(PageLinks::Assigned(issued)))
}

/// Gives assignee `assignee` of open page `page_id` a fresh link, if they have not answered;
/// their earlier link stops working.
///
/// # Errors
/// [`StoreError::NotFound`] for an unknown page or a person the page is not for; database
/// failures.
pub async fn reissue_assignee(
    store: &Store,
    public_url: &str,
    page_id: PageId,
    assignee: &str,
) -> Result<LinkChange<AssigneeLink>, StoreError> {
    let wanted = assignee.to_ascii_lowercase();
    let found = store
        .assignees_of(page_id)
        .await?
        .into_iter()
        .find(|person| person.email.to_ascii_lowercase() == wanted)
        .ok_or(StoreError::NotFound)?;
    let token = PageToken::generate();
    if !store
        .reissue_assignee_link(page_id, found.position, &token.hash())
        .await?
    {
        return Ok(LinkChange::NotOpen);
    }
    tracing::info!(page.id = %page_id, "a fresh link was issued for one assignee; their earlier link no longer works");
    Ok(LinkChange::Done(AssigneeLink {
        assignee: found.email,
        link: page_link(public_url, &token),
    }))
}

/// Gives open page `page_id` a fresh token and returns its link; the old link stops working.
/// For a page without assignees (see [`reissue_links`]).
///
/// # Errors
/// [`StoreError::NotFound`] for an unknown page; database failures.
async fn reissue_link(
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
