use sqlx::SqlitePool;

use super::{classify_refusal, PageRow, COLUMNS};
use crate::{
    pages::{page::SubmitOutcome, token::TokenHash},
    store::{begin_write, Result},
};

pub(super) async fn by_token(pool: &SqlitePool, token_hash: &TokenHash) -> Result<Option<PageRow>> {
    let sql = format!("SELECT {COLUMNS} FROM pages WHERE token_hash = ?");
    Ok(sqlx::query_as(&sql)
        .bind(&token_hash.0)
        .fetch_optional(pool)
        .await?)
}

pub(super) async fn submit(
    pool: &SqlitePool,
    key: super::PageKey<'_>,
    response: &str,
    now: i64,
) -> Result<SubmitOutcome> {
    let mut transaction = begin_write(pool).await?;
    let sql = format!(
        "UPDATE pages SET status = 'submitted', response = ?, submitted_at = ? \
         WHERE {column} = ? AND status = 'open' AND expires_at > ? RETURNING {COLUMNS}",
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
            "SELECT {COLUMNS} FROM pages WHERE {column} = ?",
            column = key.column()
        ))
        .bind(key.value())
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
