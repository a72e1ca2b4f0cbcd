//! Generation records and their events: the audit trail of every page the agent loop built.
//!
//! Events (`generation_events`) are written while a generation runs, before its record exists,
//! so they carry the generation's id without a foreign key; the record is inserted once, at the
//! end. Readers tell a finished generation by its `finished` event.

use uuid::Uuid;

use super::{begin_write, decode_json, decode_parsed, decode_uuid, Result, Store, StoreError};
use crate::records::{
    generation::{EventKind, GenerationEvent},
    generation::{GenerationOutcome, GenerationRecord},
    page_cache::CacheLookup,
};

const COLUMNS: &str = "id, model, provider, prompt_hash, outcome, turns, tokens_in, tokens_out, \
     latency_ms, cache_hit, cache_lookup, transcript, tree, created_at";

/// The most records [`Store::recent_generations`] returns at once.
pub const MAX_LISTED_GENERATIONS: i64 = 200;

#[derive(sqlx::FromRow)]
struct GenerationRow {
    id: String,
    model: String,
    provider: String,
    prompt_hash: String,
    outcome: String,
    turns: i64,
    tokens_in: i64,
    tokens_out: i64,
    latency_ms: i64,
    cache_hit: bool,
    cache_lookup: Option<String>,
    transcript: String,
    tree: Option<String>,
    created_at: i64,
}

impl TryFrom<GenerationRow> for GenerationRecord {
    type Error = StoreError;

    fn try_from(row: GenerationRow) -> Result<Self> {
        Ok(Self {
            id: decode_uuid("generations.id", &row.id)?,
            model: row.model,
            provider: row.provider,
            prompt_hash: row.prompt_hash,
            outcome: decode_parsed(
                "generations.outcome",
                &row.outcome,
                GenerationOutcome::parse,
            )?,
            turns: row.turns,
            tokens_in: row.tokens_in,
            tokens_out: row.tokens_out,
            latency_ms: row.latency_ms,
            cache_hit: row.cache_hit,
            // An unknown spelling (a newer server's) reads as not recorded.
            cache_lookup: row.cache_lookup.as_deref().and_then(CacheLookup::parse),
            transcript: decode_json("generations.transcript", &row.transcript)?,
            tree: row
                .tree
                .as_deref()
                .map(|tree| decode_json("generations.tree", tree))
                .transpose()?,
            created_at_ms: row.created_at,
        })
    }
}

#[derive(sqlx::FromRow)]
struct EventRow {
    generation_id: String,
    seq: i64,
    kind: String,
    payload: String,
    created_at: i64,
}

impl TryFrom<EventRow> for GenerationEvent {
    type Error = StoreError;

    fn try_from(row: EventRow) -> Result<Self> {
        Ok(Self {
            generation_id: decode_uuid("generation_events.generation_id", &row.generation_id)?,
            seq: row.seq,
            kind: decode_parsed("generation_events.kind", &row.kind, EventKind::parse)?,
            payload: decode_json("generation_events.payload", &row.payload)?,
            created_at_ms: row.created_at,
        })
    }
}

impl Store {
    /// Records a generation.
    ///
    /// # Errors
    /// [`StoreError::Conflict`] when the id is already recorded.
    pub async fn insert_generation(&self, record: &GenerationRecord) -> Result<()> {
        let sql = format!(
            "INSERT INTO generations ({COLUMNS}) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)"
        );
        on_pool!(self, |pool| {
            sqlx::query(&sql)
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
        });
        Ok(())
    }

    /// Reads a generation record.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when no record has this id.
    pub async fn generation(&self, id: Uuid) -> Result<GenerationRecord> {
        let sql = format!("SELECT {COLUMNS} FROM generations WHERE id = $1");
        let row: Option<GenerationRow> = on_pool!(self, |pool| {
            sqlx::query_as(&sql)
                .bind(id.to_string())
                .fetch_optional(pool)
                .await?
        });
        row.ok_or(StoreError::NotFound)?.try_into()
    }

    /// The most recent generation records, newest first; `limit` is clamped to
    /// 1..=[`MAX_LISTED_GENERATIONS`].
    ///
    /// # Errors
    /// A database failure, or [`StoreError::Corrupt`] for a record that does not decode.
    pub async fn recent_generations(&self, limit: i64) -> Result<Vec<GenerationRecord>> {
        let limit = limit.clamp(1, MAX_LISTED_GENERATIONS);
        let sql =
            format!("SELECT {COLUMNS} FROM generations ORDER BY created_at DESC, id DESC LIMIT $1");
        let rows: Vec<GenerationRow> = on_pool!(self, |pool| {
            sqlx::query_as(&sql).bind(limit).fetch_all(pool).await?
        });
        rows.into_iter().map(TryInto::try_into).collect()
    }

    /// Stores events of one or more generations in one transaction.
    ///
    /// # Errors
    /// [`StoreError::Conflict`] when an event's `(generation_id, seq)` is already stored.
    pub async fn insert_generation_events(&self, events: &[GenerationEvent]) -> Result<()> {
        on_pool!(self, |pool| {
            let mut transaction = begin_write(pool).await?;
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
        });
        Ok(())
    }

    /// The events of generation `id` with `seq` above `after_seq`, in order, at most `limit`.
    ///
    /// # Errors
    /// A database failure, or [`StoreError::Corrupt`] for an event that does not decode.
    pub async fn generation_events(
        &self,
        id: Uuid,
        after_seq: i64,
        limit: i64,
    ) -> Result<Vec<GenerationEvent>> {
        let rows: Vec<EventRow> = on_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT generation_id, seq, kind, payload, created_at FROM generation_events \
                 WHERE generation_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
            )
            .bind(id.to_string())
            .bind(after_seq)
            .bind(limit)
            .fetch_all(pool)
            .await?
        });
        rows.into_iter().map(TryInto::try_into).collect()
    }
}
