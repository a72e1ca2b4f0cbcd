//! `tessera eval --record DIR`: a run of the configured model written as a transcript that
//! replays offline (`tests/transcripts/README.md`), with the model's raw answers, the provider's
//! usage, the model's name, when it was recorded and the page it built.

use std::path::Path;

use serde_json::{json, Value};
use time::{format_description::well_known::Rfc3339, OffsetDateTime};

use super::{report::ScenarioResult, scenario::Scenario, EvalError};
use crate::agent::generation::GenerationOutcome;

/// Writes `result` (a run of `model` on `scenario`) as `DIR/<scenario>.json`.
///
/// # Errors
/// [`EvalError::Record`] when the file cannot be written.
pub fn write(
    folder: &Path,
    scenario: &Scenario,
    model: &str,
    result: &ScenarioResult,
) -> Result<(), EvalError> {
    let path = folder.join(format!("{}.json", scenario.name));
    let text =
        serde_json::to_string_pretty(&transcript(scenario, model, result)).unwrap_or_default();
    std::fs::create_dir_all(folder)
        .and_then(|()| std::fs::write(&path, text + "\n"))
        .map_err(|source| EvalError::Record { path, source })
}

/// The transcript of one run.
fn transcript(scenario: &Scenario, model: &str, result: &ScenarioResult) -> Value {
    let attempt = &result.first_attempt;
    let mode = attempt["mode"].as_str().unwrap_or("tools");
    let turns: Vec<Value> = attempt["transcript"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|turn| {
            let mut recorded = json!({"text": turn["text"], "usage": turn["usage"]});
            let calls: Vec<Value> = turn["calls"]
                .as_array()
                .into_iter()
                .flatten()
                // Calls read from text are replayed from the text itself.
                .filter(|call| {
                    !call["id"]
                        .as_str()
                        .is_some_and(|id| id.starts_with("text_"))
                })
                .map(|call| json!({"name": call["tool"], "arguments": call["arguments"]}))
                .collect();
            if !calls.is_empty() {
                recorded["tool_calls"] = Value::Array(calls);
            }
            recorded
        })
        .collect();
    let outcome = match result.outcome {
        GenerationOutcome::Ok => "ok",
        _ => "fell_back",
    };
    let mut expect = json!({"outcome": outcome, "turns": result.turns});
    if result.outcome == GenerationOutcome::Ok {
        expect["page"] = json!(result.outline);
    }
    let recorded = OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .ok()
        .and_then(|now| now.format(&Rfc3339).ok());
    json!({
        "scenario": scenario.name,
        "notes": format!(
            "Recorded from {model} by `tessera eval --record` ({mode} mode): {outcome} after {} \
             turn{}, {} tokens in, {} out.",
            result.turns,
            if result.turns == 1 { "" } else { "s" },
            result.tokens.input,
            result.tokens.output,
        ),
        "model": model,
        "recorded": recorded,
        "mode": mode,
        "expect": expect,
        "turns": turns,
    })
}
