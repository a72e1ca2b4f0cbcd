//! Page views: capabilities for one page, held by the view an MCP host renders inline. A view is
//! neither the page's link nor derived from it; only its hash is stored, and it is made only while
//! its page is open. What a view may do with a page that has since ended (see its receipt) is the
//! pages layer's call, from the page it resolves to.

use super::{
    pages::{PageRow, COLUMNS},
    Result, Store, StoreError,
};
use crate::pages::{
    page::{Page, PageId},
    token::TokenHash,
};

impl Store {
    /// Gives open page `page_id` the view `view` at `now`; `false` (nothing stored) when the page
    /// is not open, does not exist, or names assignees (each answers through their own link, so
    /// a view, answering for nobody in particular, could not say who answered).
    ///
    /// # Errors
    /// Database failures; a view hash already taken is [`StoreError::Conflict`].
    pub async fn add_page_view(&self, page_id: PageId, view: &TokenHash, now: i64) -> Result<bool> {
        let written = on_pool!(self, |pool| {
            sqlx::query(
                "INSERT INTO page_views (view_hash, page_id, created_at) \
                 SELECT $1, $2, $3 WHERE EXISTS \
                 (SELECT 1 FROM pages WHERE id = $2 AND status = 'open') \
                 AND NOT EXISTS (SELECT 1 FROM page_assignees WHERE page_id = $2)",
            )
            .bind(&view.0)
            .bind(page_id.to_string())
            .bind(now)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(written == 1)
    }

    /// The page view `view` was given to.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] for a view no page has; database failures.
    pub async fn page_by_view(&self, view: &TokenHash) -> Result<Page> {
        let sql = format!(
            "SELECT {COLUMNS} FROM pages WHERE id = \
             (SELECT page_id FROM page_views WHERE view_hash = $1)"
        );
        let row: Option<PageRow> = on_pool!(self, |pool| {
            sqlx::query_as(&sql)
                .bind(&view.0)
                .fetch_optional(pool)
                .await?
        });
        row.ok_or(StoreError::NotFound)?.try_into()
    }
}
