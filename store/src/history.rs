//! Each ask's history (`ask_events`, migration `20261129100000`): see `pages::history`.
//!
//! Events caused by a change of state (an answer, a timer firing, the deadline) are written in
//! that change's transaction with [`INSERT_EVENT`], so the history holds each exactly once;
//! [`Store::record_ask_event`] records the rest (a mail sent), at least once.

use super::{decode_parsed, Result, Store, StoreError};
use crate::records::{
    history::{AskEvent, EventKind, NewEvent},
    page::PageId,
};

/// Binds: page id, at (unix ms), kind, who, detail.
pub(crate) const INSERT_EVENT: &str =
    "INSERT INTO ask_events (page_id, at, kind, who, detail) VALUES ($1, $2, $3, $4, $5)";

#[derive(sqlx::FromRow)]
struct EventRow {
    at: i64,
    kind: String,
    who: Option<String>,
    detail: Option<String>,
}

impl TryFrom<EventRow> for AskEvent {
    type Error = StoreError;

    fn try_from(row: EventRow) -> Result<Self> {
        Ok(Self {
            at_ms: row.at,
            kind: decode_parsed("ask_events.kind", &row.kind, EventKind::parse)?,
            who: row.who,
            detail: row.detail,
        })
    }
}

impl Store {
    /// Appends `event` to page `page_id`'s history at `now` (unix ms).
    ///
    /// # Errors
    /// Database failures.
    pub async fn record_ask_event(
        &self,
        page_id: PageId,
        event: &NewEvent,
        now: i64,
    ) -> Result<()> {
        on_pool!(self, |pool| {
            insert_event!(page_id, now, event).execute(pool).await?;
        });
        Ok(())
    }

    /// Page `page_id`'s history, oldest first.
    ///
    /// # Errors
    /// Database failures; [`StoreError::Corrupt`] for an event of an unknown kind.
    pub async fn ask_events(&self, page_id: PageId) -> Result<Vec<AskEvent>> {
        let rows: Vec<EventRow> = on_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT at, kind, who, detail FROM ask_events WHERE page_id = $1 ORDER BY id",
            )
            .bind(page_id.to_string())
            .fetch_all(pool)
            .await?
        });
        rows.into_iter().map(AskEvent::try_from).collect()
    }
}
