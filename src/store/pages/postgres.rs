use sqlx::PgPool;

use super::{classify_refusal, PageRow, COLUMNS};
use crate::{
    pages::{page::SubmitOutcome, token::TokenHash},
    store::{runs::notify_ready, Result},
};

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
