//! Generation records: the audit trail of every page the agent loop built.

mod postgres;
mod sqlite;

use uuid::Uuid;

use super::{decode_json, decode_uuid, Result, Store, StoreError};
use crate::agent::generation::{GenerationOutcome, GenerationRecord};

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
            outcome: GenerationOutcome::parse(&row.outcome).ok_or_else(|| StoreError::Corrupt {
                column: "generations.outcome",
                reason: row.outcome.clone(),
            })?,
            turns: row.turns,
            tokens_in: row.tokens_in,
            tokens_out: row.tokens_out,
            latency_ms: row.latency_ms,
            cache_hit: row.cache_hit,
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

impl Store {
    /// Records a generation.
    ///
    /// # Errors
    /// [`StoreError::Conflict`] when the id is already recorded.
    pub async fn insert_generation(&self, record: &GenerationRecord) -> Result<()> {
        match self {
            Self::Sqlite(pool) => sqlite::insert(pool, record).await,
            Self::Postgres(pool) => postgres::insert(pool, record).await,
        }
    }

    /// Reads a generation record.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when no record has this id.
    pub async fn generation(&self, id: Uuid) -> Result<GenerationRecord> {
        let row = match self {
            Self::Sqlite(pool) => sqlite::get(pool, id).await?,
            Self::Postgres(pool) => postgres::get(pool, id).await?,
        };
        row.ok_or(StoreError::NotFound)?.try_into()
    }
}
