use sqlx::PgPool;
use uuid::Uuid;

use super::GenerationRow;
use crate::{agent::generation::GenerationRecord, store::Result};

pub(super) async fn insert(pool: &PgPool, record: &GenerationRecord) -> Result<()> {
    sqlx::query(
        "INSERT INTO generations (id, model, provider, prompt_hash, outcome, turns, tokens_in, tokens_out, \
         latency_ms, cache_hit, transcript, tree, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
    )
    .bind(record.id.to_string())
    .bind(&record.model)
    .bind(&record.provider)
    .bind(&record.prompt_hash)
    .bind(record.outcome.as_str())
    .bind(record.turns)
    .bind(record.tokens_in)
    .bind(record.tokens_out)
    .bind(record.latency_ms)
    .bind(record.cache_hit)
    .bind(record.transcript.to_string())
    .bind(record.tree.as_ref().map(ToString::to_string))
    .bind(record.created_at_ms)
    .execute(pool)
    .await?;
    Ok(())
}

pub(super) async fn get(pool: &PgPool, id: Uuid) -> Result<Option<GenerationRow>> {
    Ok(sqlx::query_as(
        "SELECT id, model, provider, prompt_hash, outcome, turns, tokens_in, tokens_out, latency_ms, cache_hit, \
         transcript, tree, created_at FROM generations WHERE id = $1",
    )
    .bind(id.to_string())
    .fetch_optional(pool)
    .await?)
}
