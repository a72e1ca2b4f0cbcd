//! The page cache's side of a generation: a cached page re-bound to this request when it still
//! fits (no stale literal, `ValidateForm` passes over this data), and a new valid page put back.

use serde_json::{json, Value};
use tessera_app::tree::PageTree;
use uuid::Uuid;

use super::{AgentError, GenerationInput};
use crate::{
    agent::{
        cache::{
            cache_key,
            literals::{provenance_of, rebind_prompt_text, stale_values, Request},
            CachedPage,
        },
        events::{EventKind, EventLog},
        summary::DataSummary,
    },
    forms::validate_form::{validate_form, FormReport},
    llm::ModelName,
    store::{now_ms, Store},
};

/// A cached page that fits this request.
pub(super) struct CacheHit {
    pub(super) tree: PageTree,
    pub(super) report: FormReport,
    pub(super) source: Uuid,
    /// Pieces of literal text re-bound from the old prompt to the new one.
    pub(super) rebound: usize,
}

/// What the cache holds for one generation.
pub(super) enum Lookup {
    /// A page that fits the new request, re-bound to it.
    Hit(CacheHit),
    /// Nothing usable under the key.
    Miss,
    /// A page that no longer fits; why, for the record.
    Stale(Value),
}

/// Where this generation's page is cached: `None` when the policy neither reads nor writes
/// the cache.
pub(super) fn key_for(
    input: &GenerationInput,
    request: &Request<'_>,
    schema_text: &str,
    summary: &DataSummary,
    model: &ModelName,
) -> Option<String> {
    // A page for named people is built differently (Decline, no Cancel): it has keys of its own.
    let keyed_source = if input.for_assignees {
        format!("{}\n<people>", request.source)
    } else {
        request.source.to_owned()
    };
    input
        .cache
        .writes()
        .then(|| cache_key(&keyed_source, schema_text, summary, &input.catalog, model))
}

/// What the cache holds for this generation under `key`, when the policy reads it.
pub(super) async fn look_up(
    input: &GenerationInput,
    request: &Request<'_>,
    store: &Store,
    key: Option<&str>,
    log: &mut EventLog<'_>,
) -> Result<Lookup, AgentError> {
    match key {
        Some(key) if input.cache.reads() => cached(input, request, store, key, log).await,
        _ => Ok(Lookup::Miss),
    }
}

/// Caches the valid page `tree` made for `request` under `key`.
pub(super) async fn remember(
    store: &Store,
    key: &str,
    tree: &PageTree,
    request: &Request<'_>,
    generation_id: Uuid,
    model: &ModelName,
) -> Result<(), AgentError> {
    store
        .put_cached_page(&CachedPage {
            key: key.to_owned(),
            tree: serde_json::to_value(tree).unwrap_or(Value::Null),
            provenance: provenance_of(tree, request),
            generation_id,
            model: model.to_string(),
            hits: 0,
            created_at_ms: now_ms(),
        })
        .await?;
    Ok(())
}

/// The cached page under `key`, re-bound to this request, when there is one and it fits: no
/// literal text holds a value of the old request that this one lacks, and code's `ValidateForm`
/// passes against this data.
async fn cached(
    input: &GenerationInput,
    request: &Request<'_>,
    store: &Store,
    key: &str,
    log: &mut EventLog<'_>,
) -> Result<Lookup, AgentError> {
    let Some(page) = store.cached_page(key).await? else {
        log.push(EventKind::CacheMiss, json!({"reason": "empty"}));
        return Ok(Lookup::Miss);
    };
    let Ok(mut tree) = serde_json::from_value::<PageTree>(page.tree) else {
        log.push(EventKind::CacheMiss, json!({"reason": "unreadable"}));
        return Ok(Lookup::Miss);
    };
    let rebound = rebind_prompt_text(&mut tree, &page.provenance.prompt, &input.prompt);
    let stale = stale_values(&tree, &page.provenance, request);
    if !stale.is_empty() {
        let why = json!({"reason": "stale_literal", "values": stale,
                         "source_generation": page.generation_id});
        log.push(EventKind::CacheMiss, why.clone());
        return Ok(Lookup::Stale(why));
    }
    let report = validate_form(&tree, &input.catalog, input.schema.as_ref(), &input.data);
    if !report.ok {
        let why = json!({"reason": "no_longer_valid", "errors": report.errors,
                         "source_generation": page.generation_id});
        log.push(EventKind::CacheMiss, why.clone());
        return Ok(Lookup::Stale(why));
    }
    store.record_cache_hit(key, now_ms()).await?;
    log.push(
        EventKind::CacheHit,
        json!({"source_generation": page.generation_id, "hits": page.hits + 1,
               "rebound": rebound}),
    );
    Ok(Lookup::Hit(CacheHit {
        tree,
        report,
        source: page.generation_id,
        rebound,
    }))
}
