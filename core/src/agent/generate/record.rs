//! The generation's record: what every attempt cost and how the generation ended, stored before
//! the `finished` event that tells readers to look for it.

use std::time::Instant;

use serde_json::{json, Value};
use tessera_app::tree::PageTree;
use uuid::Uuid;

use super::{attempt::Attempt, AgentError, Finished};
use crate::{
    agent::{
        events::{EventKind, EventLog},
        generation::{GenerationOutcome, GenerationRecord},
    },
    forms::validate_form::FormReport,
    llm::ModelName,
    store::{now_ms, Store},
};

/// What every record of one generation shares, known before any attempt.
pub(super) struct RecordBase<'a> {
    pub(super) id: Uuid,
    pub(super) model: &'a ModelName,
    pub(super) prompt_hash: &'a str,
    pub(super) started: Instant,
}

impl RecordBase<'_> {
    /// The record of a generation that ended in `outcome` after `attempts`.
    pub(super) fn record(
        &self,
        outcome: GenerationOutcome,
        attempts: &[Attempt],
        cache_hit: bool,
        transcript: Value,
        tree: &PageTree,
    ) -> GenerationRecord {
        let sum = |pick: fn(&Attempt) -> u64| {
            i64::try_from(attempts.iter().map(pick).sum::<u64>()).unwrap_or(i64::MAX)
        };
        GenerationRecord {
            id: self.id,
            model: self.model.model.clone(),
            provider: self.model.provider.clone(),
            prompt_hash: self.prompt_hash.to_owned(),
            outcome,
            turns: attempts.iter().map(|attempt| attempt.turns).sum(),
            tokens_in: sum(|attempt| attempt.usage.input_tokens),
            tokens_out: sum(|attempt| attempt.usage.output_tokens),
            latency_ms: i64::try_from(self.started.elapsed().as_millis()).unwrap_or(i64::MAX),
            cache_hit,
            cache_lookup: None,
            transcript,
            tree: serde_json::to_value(tree).ok(),
            created_at_ms: now_ms(),
        }
    }
}

/// Stores the record, then the `finished` event (so a reader who saw it finds the record).
pub(super) async fn finish(
    store: &Store,
    log: &mut EventLog<'_>,
    record: GenerationRecord,
    tree: PageTree,
    report: FormReport,
) -> Result<Finished, AgentError> {
    log.flush().await?;
    store.insert_generation(&record).await?;
    log.push(
        EventKind::Finished,
        json!({"outcome": record.outcome, "turns": record.turns, "tokens_in": record.tokens_in,
               "tokens_out": record.tokens_out, "latency_ms": record.latency_ms,
               "cache_hit": record.cache_hit}),
    );
    log.flush().await?;
    Ok(Finished {
        tree,
        report,
        record,
    })
}
