use sqlx::SqlitePool;

use super::{classify_refusal, PageRow, COLUMNS};
use crate::{
    pages::{
        page::{NewPage, PageId, SubmitOutcome},
        token::TokenHash,
    },
    store::{begin_write, Result},
};

pub(super) async fn insert(
    pool: &SqlitePool,
    id: PageId,
    new_page: &NewPage,
    now: i64,
) -> Result<PageRow> {
    let sql = format!(
        "INSERT INTO pages (id, token_hash, run_id, status, tree, schema, data, created_at, expires_at) \
         VALUES (?, ?, ?, 'open', ?, ?, ?, ?, ?) RETURNING {COLUMNS}"
    );
    Ok(sqlx::query_as(&sql)
        .bind(id.to_string())
        .bind(&new_page.token_hash.0)
        .bind(new_page.run_id.map(|run_id| run_id.to_string()))
        .bind(new_page.tree.to_string())
        .bind(new_page.schema.as_ref().map(ToString::to_string))
        .bind(new_page.data.to_string())
        .bind(now)
        .bind(new_page.expires_at_ms)
        .fetch_one(pool)
        .await?)
}

pub(super) async fn by_token(pool: &SqlitePool, token_hash: &TokenHash) -> Result<Option<PageRow>> {
    let sql = format!("SELECT {COLUMNS} FROM pages WHERE token_hash = ?");
    Ok(sqlx::query_as(&sql)
        .bind(&token_hash.0)
        .fetch_optional(pool)
        .await?)
}

pub(super) async fn submit(
    pool: &SqlitePool,
    token_hash: &TokenHash,
    response: &str,
    now: i64,
) -> Result<SubmitOutcome> {
    let mut transaction = begin_write(pool).await?;
    let sql = format!(
        "UPDATE pages SET status = 'submitted', response = ?, submitted_at = ? \
         WHERE token_hash = ? AND status = 'open' AND expires_at > ? RETURNING {COLUMNS}"
    );
    let updated: Option<PageRow> = sqlx::query_as(&sql)
        .bind(response)
        .bind(now)
        .bind(&token_hash.0)
        .bind(now)
        .fetch_optional(&mut *transaction)
        .await?;
    let Some(row) = updated else {
        let current = sqlx::query_as(&format!("SELECT {COLUMNS} FROM pages WHERE token_hash = ?"))
            .bind(&token_hash.0)
            .fetch_optional(&mut *transaction)
            .await?;
        transaction.rollback().await?;
        return classify_refusal(current, now);
    };
    if let Some(run_id) = &row.run_id {
        sqlx::query(
            "UPDATE runs SET status = 'ready', updated_at = ? WHERE id = ? AND status = 'waiting'",
        )
        .bind(now)
        .bind(run_id)
        .execute(&mut *transaction)
        .await?;
    }
    transaction.commit().await?;
    Ok(SubmitOutcome::Submitted(row.try_into()?))
}
