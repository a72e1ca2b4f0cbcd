use sqlx::PgPool;
use uuid::Uuid;

use super::{EventRow, GenerationRow};
use crate::{
    agent::{cache::CacheLookup, events::GenerationEvent, generation::GenerationRecord},
    store::Result,
};

pub(super) async fn insert(pool: &PgPool, record: &GenerationRecord) -> Result<()> {
    sqlx::query(
        "INSERT INTO generations (id, model, provider, prompt_hash, outcome, turns, tokens_in, tokens_out, \
         latency_ms, cache_hit, cache_lookup, transcript, tree, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
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
    .bind(record.cache_lookup.map(CacheLookup::as_str))
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
         cache_lookup, transcript, tree, created_at FROM generations WHERE id = $1",
    )
    .bind(id.to_string())
    .fetch_optional(pool)
    .await?)
}

pub(super) async fn recent(pool: &PgPool, limit: i64) -> Result<Vec<GenerationRow>> {
    Ok(sqlx::query_as(
        "SELECT id, model, provider, prompt_hash, outcome, turns, tokens_in, tokens_out, latency_ms, cache_hit, \
         cache_lookup, transcript, tree, created_at FROM generations ORDER BY created_at DESC, id DESC LIMIT $1",
    )
    .bind(limit)
    .fetch_all(pool)
    .await?)
}

pub(super) async fn insert_events(pool: &PgPool, events: &[GenerationEvent]) -> Result<()> {
    let mut transaction = pool.begin().await?;
    for event in events {
        sqlx::query(
            "INSERT INTO generation_events (generation_id, seq, kind, payload, created_at) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(event.generation_id.to_string())
        .bind(event.seq)
        .bind(event.kind.as_str())
        .bind(event.payload.to_string())
        .bind(event.created_at_ms)
        .execute(&mut *transaction)
        .await?;
    }
    transaction.commit().await?;
    Ok(())
}

pub(super) async fn events(
    pool: &PgPool,
    id: Uuid,
    after_seq: i64,
    limit: i64,
) -> Result<Vec<EventRow>> {
    Ok(sqlx::query_as(
        "SELECT generation_id, seq, kind, payload, created_at FROM generation_events \
         WHERE generation_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
    )
    .bind(id.to_string())
    .bind(after_seq)
    .bind(limit)
    .fetch_all(pool)
    .await?)
}
