use sqlx::PgPool;

use super::{classify_refusal, PageRow, COLUMNS};
use crate::{
    pages::{
        page::{NewPage, PageId, SubmitOutcome},
        token::TokenHash,
    },
    store::{runs::notify_ready, Result},
};

pub(super) async fn insert(
    pool: &PgPool,
    id: PageId,
    new_page: &NewPage,
    now: i64,
) -> Result<PageRow> {
    let sql = format!(
        "INSERT INTO pages (id, token_hash, run_id, status, tree, schema, data, component_set, \
         created_at, expires_at) VALUES ($1, $2, $3, 'open', $4, $5, $6, $7, $8, $9) RETURNING {COLUMNS}"
    );
    Ok(sqlx::query_as(&sql)
        .bind(id.to_string())
        .bind(&new_page.token_hash.0)
        .bind(new_page.run_id.map(|run_id| run_id.to_string()))
        .bind(new_page.tree.to_string())
        .bind(new_page.schema.as_ref().map(ToString::to_string))
        .bind(new_page.data.to_string())
        .bind(
            new_page
                .component_set
                .as_ref()
                .map(|set| set.to_json().to_string()),
        )
        .bind(now)
        .bind(new_page.expires_at_ms)
        .fetch_one(pool)
        .await?)
}

pub(super) async fn by_token(pool: &PgPool, token_hash: &TokenHash) -> Result<Option<PageRow>> {
    let sql = format!("SELECT {COLUMNS} FROM pages WHERE token_hash = $1");
    Ok(sqlx::query_as(&sql)
        .bind(&token_hash.0)
        .fetch_optional(pool)
        .await?)
}

pub(super) async fn submit(
    pool: &PgPool,
    key: super::PageKey<'_>,
    response: &str,
    now: i64,
) -> Result<SubmitOutcome> {
    let mut transaction = pool.begin().await?;
    // The conditional UPDATE takes the row lock; a concurrent submitter blocks on it, then
    // re-checks `status = 'open'` after the first commits and matches nothing.
    let sql = format!(
        "UPDATE pages SET status = 'submitted', response = $1, submitted_at = $2 \
         WHERE {column} = $3 AND status = 'open' AND expires_at > $4 RETURNING {COLUMNS}",
        column = key.column()
    );
    let updated: Option<PageRow> = sqlx::query_as(&sql)
        .bind(response)
        .bind(now)
        .bind(key.value())
        .bind(now)
        .fetch_optional(&mut *transaction)
        .await?;
    let Some(row) = updated else {
        let current = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM pages WHERE {column} = $1",
            column = key.column()
        ))
        .bind(key.value())
        .fetch_optional(&mut *transaction)
        .await?;
        transaction.rollback().await?;
        return classify_refusal(current, now);
    };
    if let Some(run_id) = &row.run_id {
        let resumed = sqlx::query("UPDATE runs SET status = 'ready', updated_at = $1 WHERE id = $2 AND status = 'waiting'")
            .bind(now)
            .bind(run_id)
            .execute(&mut *transaction)
            .await?
            .rows_affected();
        if resumed > 0 {
            // Runners in every process wake at commit; one NOTIFY per submission (DESIGN.md §10).
            notify_ready(&mut transaction).await?;
        }
    }
    transaction.commit().await?;
    Ok(SubmitOutcome::Submitted(row.try_into()?))
}

pub(super) async fn by_id(pool: &PgPool, id: PageId) -> Result<Option<PageRow>> {
    let sql = format!("SELECT {COLUMNS} FROM pages WHERE id = $1");
    Ok(sqlx::query_as(&sql)
        .bind(id.to_string())
        .fetch_optional(pool)
        .await?)
}

pub(super) async fn of_run(
    pool: &PgPool,
    run_id: crate::workflow::run::RunId,
) -> Result<Vec<PageRow>> {
    let sql = format!("SELECT {COLUMNS} FROM pages WHERE run_id = $1 ORDER BY created_at DESC");
    Ok(sqlx::query_as(&sql)
        .bind(run_id.to_string())
        .fetch_all(pool)
        .await?)
}

pub(super) async fn change_open(
    pool: &PgPool,
    id: PageId,
    change: &super::PageChange,
) -> Result<bool> {
    let mut transaction = pool.begin().await?;
    let query = match change {
        super::PageChange::Revoke => {
            sqlx::query("UPDATE pages SET status = 'revoked' WHERE id = $1 AND status = 'open'")
                .bind(id.to_string())
        }
        super::PageChange::Extend(expires_at) => {
            sqlx::query("UPDATE pages SET expires_at = $1 WHERE id = $2 AND status = 'open'")
                .bind(*expires_at)
                .bind(id.to_string())
        }
        super::PageChange::Reissue(hash) => {
            sqlx::query("UPDATE pages SET token_hash = $1 WHERE id = $2 AND status = 'open'")
                .bind(hash.0.clone())
                .bind(id.to_string())
        }
    };
    let changed = query.execute(&mut *transaction).await?.rows_affected() == 1;
    if let (true, super::PageChange::Extend(expires_at)) = (changed, change) {
        // A run waiting on this page with a deadline waits as long as its link lives.
        sqlx::query(
            "UPDATE runs SET wait_deadline = $1 \
             WHERE wait_page_id = $2 AND status = 'waiting' AND wait_deadline IS NOT NULL",
        )
        .bind(*expires_at)
        .bind(id.to_string())
        .execute(&mut *transaction)
        .await?;
    }
    transaction.commit().await?;
    Ok(changed)
}
