//! Page views: capabilities for one ask's page, held by the view an MCP host renders inline. A
//! view is neither the page's link nor derived from it; only its hash is stored. It is given when
//! the ask starts, before a model may have made the page, so it names the run and shows the page
//! that run makes. What a view may do with a page that has since ended (see its receipt) is the
//! pages layer's call, from the page it resolves to.

use super::{
    pages::{PageRow, COLUMNS},
    Result, Store, StoreError,
};
use crate::{
    records::run::RunId,
    records::{page::Page, token::TokenHash},
};

impl Store {
    /// Gives run `run_id` the view `view` at `now`; `false` (nothing stored) when the run does not
    /// exist, has a page that is no longer open, or has a page that names assignees (each answers
    /// through their own link, so a view, answering for nobody in particular, could not say who
    /// answered).
    ///
    /// # Errors
    /// Database failures; a view hash already taken is [`StoreError::Conflict`].
    pub async fn add_page_view(&self, run_id: RunId, view: &TokenHash, now: i64) -> Result<bool> {
        let written = on_pool!(self, |pool| {
            sqlx::query(
                "INSERT INTO page_views (view_hash, run_id, created_at) \
                 SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM runs WHERE id = $2) \
                 AND NOT EXISTS (SELECT 1 FROM pages WHERE run_id = $2 AND status <> 'open') \
                 AND NOT EXISTS (SELECT 1 FROM page_assignees a JOIN pages p ON p.id = a.page_id \
                 WHERE p.run_id = $2)",
            )
            .bind(&view.0)
            .bind(run_id.to_string())
            .bind(now)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(written == 1)
    }

    /// The run view `view` was given to, and the page it shows: its run's newest, or `None` while
    /// the run has made none.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] for a view no run has, or whose page names assignees; database
    /// failures.
    pub async fn page_by_view(&self, view: &TokenHash) -> Result<(RunId, Option<Page>)> {
        let run: Option<(String,)> = on_pool!(self, |pool| {
            sqlx::query_as("SELECT run_id FROM page_views WHERE view_hash = $1")
                .bind(&view.0)
                .fetch_optional(pool)
                .await?
        });
        let (run,) = run.ok_or(StoreError::NotFound)?;
        let run_id = RunId(super::decode_uuid("page_views.run_id", &run)?);
        let sql = format!(
            "SELECT {COLUMNS} FROM pages WHERE run_id = $1 \
             AND NOT EXISTS (SELECT 1 FROM page_assignees WHERE page_id = pages.id) \
             ORDER BY created_at DESC LIMIT 1"
        );
        let row: Option<PageRow> = on_pool!(self, |pool| {
            sqlx::query_as(&sql).bind(&run).fetch_optional(pool).await?
        });
        match row {
            Some(row) => Ok((run_id, Some(row.try_into()?))),
            None if self.run_has_assigned_page(&run).await? => Err(StoreError::NotFound),
            None => Ok((run_id, None)),
        }
    }

    async fn run_has_assigned_page(&self, run: &str) -> Result<bool> {
        let found: Option<(String,)> = on_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT a.page_id FROM page_assignees a JOIN pages p ON p.id = a.page_id \
                 WHERE p.run_id = $1 LIMIT 1",
            )
            .bind(run)
            .fetch_optional(pool)
            .await?
        });
        Ok(found.is_some())
    }
}
