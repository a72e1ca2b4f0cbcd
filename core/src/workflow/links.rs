//! The in-memory hand-off of fresh page links: from the `ui` step that minted one to the step
//! after it, and to whoever started the run and waits for the link (`POST /api/asks`, the MCP
//! `ask_person`).
//!
//! A link holds its page's secret token, which is stored only as a hash (ARCHITECTURE.md,
//! invariant 9), so it cannot travel through the step's stored output. The process that made
//! the page keeps the link here for a while; a step that finds nothing here (it runs in another
//! process, or after a restart) mints a fresh link for the same page instead. Nothing here is
//! needed for correctness beyond "the link sent is one that works", so losing it is harmless.
//! The `ui` step keeps its links before its run can be seen waiting, so whoever sees the run
//! wait finds them here when this process made the page.

use std::{
    collections::HashMap,
    fmt,
    sync::Mutex,
    time::{Duration, Instant},
};

use crate::pages::{links::PageLinks, page::PageId};

/// How long a minted link is kept for the next step: long enough for any retry of the step
/// that sends it, short enough that plaintext links do not pile up in memory.
const KEPT_FOR: Duration = Duration::from_secs(3600);

/// The links this process minted, by page.
#[derive(Default)]
pub struct LinkHandoff {
    kept: Mutex<HashMap<PageId, (Instant, PageLinks)>>,
}

impl fmt::Debug for LinkHandoff {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("LinkHandoff")
            .finish_non_exhaustive()
    }
}

impl LinkHandoff {
    /// Keeps `links`, just minted for `page_id`, for the next step and the run's starter.
    pub fn put(&self, page_id: PageId, links: PageLinks) {
        let now = Instant::now();
        let mut kept = self
            .kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        kept.retain(|_, (at, _)| now.duration_since(*at) < KEPT_FOR);
        kept.insert(page_id, (now, links));
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minted_link_is_kept_by_page_and_never_shown_in_debug_output() {
        let handoff = LinkHandoff::default();
        let page_id = PageId::new();
        handoff.put(page_id, PageLinks::Shared("http://x/p/abc".into()));
        assert_eq!(
            handoff.get(page_id),
            Some(PageLinks::Shared("http://x/p/abc".into()))
        );
        assert_eq!(handoff.get(PageId::new()), None);
        handoff.put(page_id, PageLinks::Shared("http://x/p/def".into()));
        assert_eq!(
            handoff.get(page_id),
            Some(PageLinks::Shared("http://x/p/def".into())),
            "a fresh link replaces the one kept"
        );
        assert!(!format!("{handoff:?}").contains("def"));
    }
}
