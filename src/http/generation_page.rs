//! `GET /runs/generations/{id}` (admin): one generation record as a readable page — the
//! prompt, each tool call and code's decision, validation, outcome and timings. The same
//! record `GET /api/generations/{id}` returns as JSON; the prompt comes from its `started`
//! event.

use axum::{
    extract::{Path, Query, State},
    response::Response,
};
use http::StatusCode;
use serde::Deserialize;
use serde_json::Value;
use tessera_app::generation::{generation_page, AttemptView, CallView, GenerationDetail, TurnView};
use uuid::Uuid;

use super::{error::AppError, render::html_document, AppState};
use crate::{
    agent::{
        events::{EventKind, GenerationEvent},
        generation::GenerationRecord,
    },
    pages::receipt::format_utc,
    workflow::run::RunId,
};

/// Query of the generation page: the run to go back to.
#[derive(Debug, Default, Deserialize)]
pub struct BackQuery {
    run: Option<String>,
}

/// `GET /runs/generations/{id}`.
///
/// # Errors
/// 404 for an unknown id; database failures.
pub async fn show_generation(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(query): Query<BackQuery>,
) -> Result<Response, AppError> {
    let id = Uuid::parse_str(&id).map_err(|_| AppError::NotFound)?;
    let record = state.store.generation(id).await?;
    let started = state.store.generation_events(id, 0, 1).await?;
    let detail = detail(&record, started_prompt(&started), query.back_link());
    let render = move || generation_page(detail);
    Ok(html_document(&state, StatusCode::OK, "Generation · Tessera", render).await)
}

/// The prompt a generation started with, from its first event.
fn started_prompt(first_events: &[GenerationEvent]) -> Option<String> {
    first_events
        .first()
        .filter(|event| event.kind == EventKind::Started)
        .and_then(|event| event.payload.get("prompt"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

impl BackQuery {
    /// The run's timeline when the query names a run, else the runs list.
    fn back_link(&self) -> String {
        self.run
            .as_deref()
            .and_then(|run| run.parse::<RunId>().ok())
            .map_or_else(|| "/runs".to_owned(), |run| format!("/runs/{run}"))
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

fn list<'a>(value: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    value
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The page's data from a record; its transcript is
/// `{attempts: [{model, end, error, last_errors, transcript: [{turn, text, calls: [...]}]}]}`.
fn detail(record: &GenerationRecord, prompt: Option<String>, back: String) -> GenerationDetail {
    let attempts = list(&record.transcript, "attempts")
        .map(|attempt| AttemptView {
            model: attempt.get("model").map(text).unwrap_or_default(),
            end: attempt.get("end").map(text).unwrap_or_default(),
            error: attempt
                .get("error")
                .filter(|error| !error.is_null())
                .map(text),
            last_errors: list(attempt, "last_errors").map(text).collect(),
            turns: list(attempt, "transcript")
                .map(|turn| TurnView {
                    turn: turn.get("turn").and_then(Value::as_i64).unwrap_or_default(),
                    text: turn
                        .get("text")
                        .and_then(Value::as_str)
                        .filter(|text| !text.trim().is_empty())
                        .map(str::to_owned),
                    calls: list(turn, "calls")
                        .map(|call| CallView {
                            tool: call.get("tool").map(text).unwrap_or_default(),
                            arguments: call.get("arguments").map(text).unwrap_or_default(),
                            result: call.get("result").map(text).unwrap_or_default(),
                            refused: call
                                .get("is_error")
                                .and_then(Value::as_bool)
                                .unwrap_or(false),
                        })
                        .collect(),
                })
                .collect(),
        })
        .collect();
    GenerationDetail {
        id: record.id.to_string(),
        model: format!("{} / {}", record.provider, record.model),
        outcome: record.outcome.as_str().to_owned(),
        prompt,
        turns: record.turns,
        tokens_in: record.tokens_in,
        tokens_out: record.tokens_out,
        latency_ms: record.latency_ms,
        cache_hit: record.cache_hit,
        created: format_utc(record.created_at_ms),
        attempts,
        back,
    }
}
