//! The in-memory hand-off of fresh page links: from the `ui` step that minted one to the step
//! after it, and to whoever started the run and waits for the link (`POST /api/asks`).
//!
//! A link holds its page's secret token, which is stored only as a hash (ARCHITECTURE.md,
//! invariant 9), so it cannot travel through the step's stored output. The process that made
//! the page keeps the link here for a while; a step that finds nothing here (it runs in another
//! process, or after a restart) mints a fresh link for the same page instead. Nothing here is
//! needed for correctness beyond "the link sent is one that works", so losing it is harmless.

use std::{
    collections::HashMap,
    fmt,
    sync::Mutex,
    time::{Duration, Instant},
};

use tokio::sync::broadcast;

use super::run::RunId;
use crate::pages::{links::PageLinks, page::PageId};

/// How long a minted link is kept for the next step: long enough for any retry of the step
/// that sends it, short enough that plaintext links do not pile up in memory.
const KEPT_FOR: Duration = Duration::from_secs(3600);
/// How many minted links a waiting subscriber may fall behind before it misses some.
const ANNOUNCED: usize = 256;

/// A link just minted for a run's page.
#[derive(Clone)]
pub struct MintedLink {
    /// The run whose `ui` step made the page.
    pub run_id: RunId,
    /// The page.
    pub page_id: PageId,
    /// The links, with their secret tokens: the page's one link, or each assignee's.
    pub links: PageLinks,
}

impl fmt::Debug for MintedLink {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("MintedLink")
            .field("run_id", &self.run_id)
            .field("page_id", &self.page_id)
            .field("links", &self.links)
            .finish()
    }
}

/// The links this process minted, by page, and a channel announcing each one.
pub struct LinkHandoff {
    kept: Mutex<HashMap<PageId, (Instant, PageLinks)>>,
    announced: broadcast::Sender<MintedLink>,
}

impl Default for LinkHandoff {
    fn default() -> Self {
        Self {
            kept: Mutex::new(HashMap::new()),
            announced: broadcast::channel(ANNOUNCED).0,
        }
    }
}

impl fmt::Debug for LinkHandoff {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("LinkHandoff")
            .finish_non_exhaustive()
    }
}

impl LinkHandoff {
    /// Keeps `minted` for the next step and announces it to subscribers.
    pub fn put(&self, minted: MintedLink) {
        let now = Instant::now();
        {
            let mut kept = self
                .kept
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            kept.retain(|_, (at, _)| now.duration_since(*at) < KEPT_FOR);
            kept.insert(minted.page_id, (now, minted.links.clone()));
        }
        // No subscriber is the usual case; the link is then only kept.
        let _ = self.announced.send(minted);
    }

    /// The links this process minted for `page_id`, if it still has them.
    #[must_use]
    pub fn get(&self, page_id: PageId) -> Option<PageLinks> {
        let kept = self
            .kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        kept.get(&page_id)
            .filter(|(at, _)| at.elapsed() < KEPT_FOR)
            .map(|(_, link)| link.clone())
    }

    /// Every link minted from now on (subscribe before starting the run you wait for).
    #[must_use]
    pub fn subscribe(&self) -> broadcast::Receiver<MintedLink> {
        self.announced.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_minted_link_is_kept_by_page_and_announced_to_subscribers() {
        let handoff = LinkHandoff::default();
        let mut receiver = handoff.subscribe();
        let page_id = PageId::new();
        let run_id = RunId(uuid::Uuid::new_v4());
        handoff.put(MintedLink {
            run_id,
            page_id,
            links: PageLinks::Shared("http://x/p/abc".into()),
        });
        assert_eq!(
            handoff.get(page_id),
            Some(PageLinks::Shared("http://x/p/abc".into()))
        );
        assert_eq!(handoff.get(PageId::new()), None);
        let announced = receiver
            .recv()
            .await
            .map(|minted| (minted.run_id, minted.links));
        assert_eq!(
            announced.ok(),
            Some((run_id, PageLinks::Shared("http://x/p/abc".to_owned())))
        );
        assert!(!format!("{handoff:?}").contains("abc"));
    }
}
