//! `tessera eval`: runs a set of page requests through a model and reports what choosing that
//! model would mean — valid pages, fallbacks, turns, tokens, latency, page size.
//!
//! Scenarios are the page-quality fixtures (`tests/quality/*.json`: prompt, schema, data; the
//! `expect` part is the quality suite's and is ignored here). The model is the one the server
//! would use (`TESSERA_MODEL` and the provider settings, through [`Config`](crate::config)), or,
//! with `--transcripts DIR`, every transcript in that folder replayed against the scenario it
//! names ([`crate::llm::ReplayModel`]). Each generation runs the real agent loop on a temporary
//! SQLite store with the page cache bypassed, so it needs nothing and measures the model every
//! time.
//!
//! [`scenario`] loads the inputs, [`meter`] counts what crosses the model boundary, [`report`]
//! prints. A bad model is a result, not an error: [`EvalError`] is only for what stops the
//! evaluation itself (unreadable files, a bad setting, the store).

pub mod meter;
pub mod record;
pub mod report;
pub mod scenario;

use std::{path::PathBuf, sync::Arc, time::Instant};

use leptos::prelude::*;
use tessera_app::{
    catalog::Catalog,
    render::{render_tree, RenderCtx},
    tree::PageTree,
};
use uuid::Uuid;

use self::{
    meter::Metered,
    report::{Report, ScenarioResult, Tokens},
    scenario::{Case, Scenario, Source},
};
use crate::{
    agent::{generate_page, AgentError, CachePolicy, GenerationInput},
    config::DatabaseUrl,
    llm::{ChatModel, ModelError, PageMode, ReplayModel, TranscriptError},
    store::{Store, StoreError},
};

/// What stops an evaluation (never a model that does badly).
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// The command line is wrong; the message says how to call it.
    #[error("{0}")]
    Usage(String),
    /// A scenario file cannot be used; the message names the file and the field.
    #[error("scenario {path}: {message}")]
    Scenario {
        /// The file at fault.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A transcript cannot be read.
    #[error(transparent)]
    Transcript(#[from] TranscriptError),
    /// The model settings are wrong.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The temporary store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The agent loop failed for a reason other than the model (a broken prompt template).
    #[error("scenario {scenario}: {source}")]
    Agent {
        /// The scenario being generated.
        scenario: String,
        /// What failed.
        source: AgentError,
    },
    /// A recorded transcript could not be written.
    #[error("cannot write {path}: {source}")]
    Record {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The temporary folder for the store could not be made.
    #[error("cannot create a temporary store: {0}")]
    TempStore(std::io::Error),
}

/// The command line of `tessera eval`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalOptions {
    /// The scenario fixtures.
    pub scenarios: PathBuf,
    /// Replay these transcripts instead of calling the configured model.
    pub transcripts: Option<PathBuf>,
    /// Print JSON instead of the table.
    pub json: bool,
    /// Only the scenarios with these names (all when empty).
    pub only: Vec<String>,
    /// Model turns allowed per attempt.
    pub max_steps: usize,
    /// How the configured model is asked for pages; its own preference when `None`.
    pub mode: Option<PageMode>,
    /// Write each configured-model run here as a replayable transcript.
    pub record: Option<PathBuf>,
}

/// The usage line of `tessera eval`.
pub const USAGE: &str = "usage: tessera eval [--scenarios DIR] [--only NAMES] [--max-steps N] \
     [--mode auto|whole|tools] [--record DIR] [--transcripts DIR] [--json]\n\
     \x20 --scenarios DIR    page requests to run (default tests/quality)\n\
     \x20 --only NAMES       only these scenarios, comma-separated (e.g. bug-report,shipping-address)\n\
     \x20 --max-steps N      model turns allowed per page in the tool loop (default 10)\n\
     \x20 --mode MODE        whole (one constrained answer), tools (the tool loop) or auto\n\
     \x20 --record DIR       write each run as a replayable transcript into DIR\n\
     \x20 --transcripts DIR  replay the transcripts in DIR instead of the configured model\n\
     \x20 --json             print the results as JSON\n\
     The model is TESSERA_MODEL with the server's provider settings (see tessera --help).\n";

impl EvalOptions {
    /// Reads the arguments after `eval`.
    ///
    /// # Errors
    /// [`EvalError::Usage`] naming the argument that is not understood.
    pub fn parse(arguments: &[String]) -> Result<Self, EvalError> {
        let mut options = Self {
            scenarios: PathBuf::from("tests/quality"),
            transcripts: None,
            json: false,
            only: Vec::new(),
            max_steps: crate::agent::generate::DEFAULT_MAX_STEPS,
            mode: None,
            record: None,
        };
        let mut arguments = arguments.iter();
        while let Some(argument) = arguments.next() {
            let mut folder = |flag: &str| {
                arguments
                    .next()
                    .map(PathBuf::from)
                    .ok_or_else(|| EvalError::Usage(format!("{flag} needs a folder\n{USAGE}")))
            };
            match argument.as_str() {
                "--scenarios" => options.scenarios = folder("--scenarios")?,
                "--transcripts" => options.transcripts = Some(folder("--transcripts")?),
                "--json" => options.json = true,
                "--record" => options.record = Some(folder("--record")?),
                "--mode" => {
                    let mode = arguments.next().map(|mode| PageMode::parse(mode));
                    options.mode = match mode {
                        Some(Ok(mode)) => Some(mode),
                        Some(Err(reason)) => {
                            return Err(EvalError::Usage(format!("--mode: {reason}\n{USAGE}")))
                        }
                        None => {
                            return Err(EvalError::Usage(format!("--mode needs a mode\n{USAGE}")))
                        }
                    };
                }
                "--only" => {
                    let names = arguments.next().ok_or_else(|| {
                        EvalError::Usage(format!("--only needs scenario names\n{USAGE}"))
                    })?;
                    options.only = names.split(',').map(str::to_owned).collect();
                }
                "--max-steps" => {
                    options.max_steps = arguments
                        .next()
                        .and_then(|steps| steps.parse().ok())
                        .filter(|steps| *steps > 0)
                        .ok_or_else(|| {
                            EvalError::Usage(format!("--max-steps needs a number above 0\n{USAGE}"))
                        })?;
                }
                other => {
                    return Err(EvalError::Usage(format!(
                        "unknown argument `{other}`\n{USAGE}"
                    )))
                }
            }
        }
        Ok(options)
    }
}

/// Runs every case of `options` — the scenarios with `model`, or the transcripts — and returns
/// the results; `model_label` names the model in the report.
///
/// # Errors
/// [`EvalError`] when the inputs cannot be read or the temporary store fails.
pub async fn run(
    options: &EvalOptions,
    model: Arc<dyn ChatModel>,
    model_label: &str,
) -> Result<Report, EvalError> {
    let mut scenarios = Scenario::load_dir(&options.scenarios)?;
    if !options.only.is_empty() {
        if let Some(unknown) = options
            .only
            .iter()
            .find(|name| !scenarios.iter().any(|scenario| &scenario.name == *name))
        {
            return Err(EvalError::Usage(format!(
                "--only: no scenario named `{unknown}` in {}",
                options.scenarios.display()
            )));
        }
        scenarios.retain(|scenario| options.only.contains(&scenario.name));
    }
    let (label, cases) = match &options.transcripts {
        Some(folder) => (
            format!("replayed transcripts ({})", folder.display()),
            scenario::transcript_cases(&scenarios, folder)?,
        ),
        None => (
            model_label.to_owned(),
            scenarios
                .into_iter()
                .map(|scenario| Case::configured(scenario, model.clone()))
                .collect(),
        ),
    };
    let folder = tempfile::tempdir().map_err(EvalError::TempStore)?;
    let path = folder.path().join("eval.db");
    let store = Store::connect(&DatabaseUrl::Sqlite(path.to_string_lossy().into_owned())).await?;
    let mut results = Vec::with_capacity(cases.len());
    for case in &cases {
        let result = evaluate(case, &store, options).await?;
        if let (Some(folder), Source::Configured(model)) = (&options.record, &case.source) {
            record::write(folder, &case.scenario, &model.name().to_string(), &result)?;
        }
        results.push(result);
    }
    store.close().await;
    Ok(Report {
        model: label,
        results,
    })
}

/// Generates `case`'s page once and measures it.
///
/// # Errors
/// [`EvalError::Agent`] when the loop fails for a reason other than the model; a model that
/// produces no valid page is a result with outcome `fell_back` (or `failed`).
pub async fn evaluate(
    case: &Case,
    store: &Store,
    options: &EvalOptions,
) -> Result<ScenarioResult, EvalError> {
    let (model, expect): (Arc<dyn ChatModel>, _) = match &case.source {
        Source::Replay(transcript) => (
            Arc::new(ReplayModel::new(transcript)),
            transcript.expect.clone(),
        ),
        Source::Configured(model) => (model.clone(), None),
    };
    let metered = Metered::new(model);
    let scenario = &case.scenario;
    let input = GenerationInput {
        id: Uuid::new_v4(),
        prompt: scenario.prompt.clone(),
        schema: scenario.schema.clone(),
        data: scenario.data.clone(),
        catalog: Catalog::defaults(),
        max_steps: options.max_steps,
        cache: CachePolicy::Bypass,
        template: None,
        for_assignees: false,
        mode: match case.source {
            Source::Replay(_) => None,
            Source::Configured(_) => options.mode,
        },
    };
    let started = Instant::now();
    let generated = generate_page(input, &metered, store, None).await;
    let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let (record, tree) = match generated {
        Ok(generated) => (generated.record, Some(generated.tree)),
        Err(AgentError::Failed { record, .. }) => (*record, None),
        Err(source) => {
            return Err(EvalError::Agent {
                scenario: case.label.clone(),
                source,
            })
        }
    };
    let calls = metered.calls();
    let first_attempt = &record.transcript["attempts"][0];
    let text_tool_calls = first_attempt["text_tool_calls"].as_u64().unwrap_or(0);
    let (html_bytes, nodes) = tree.as_ref().map_or((0, 0), |tree| {
        (html_bytes(tree, &scenario.data), tree.nodes.len())
    });
    let outline = tree.as_ref().map_or_else(Vec::new, |tree| {
        tree.outline().lines().map(str::to_owned).collect()
    });
    Ok(ScenarioResult {
        name: case.label.clone(),
        scenario: scenario.name.clone(),
        fields: scenario.fields(),
        outcome: record.outcome,
        turns: u32::try_from(calls.iter().filter(|call| call.answered).count()).unwrap_or(u32::MAX),
        tokens: Tokens::of(&calls),
        text_tool_calls,
        rules_reported: rules_reported(first_attempt),
        latency_ms,
        html_bytes,
        nodes,
        outline,
        expect,
        first_attempt: first_attempt.clone(),
    })
}

/// The rules code reported to the model in an attempt's tool results (`ValidateForm` reports,
/// refused calls, a refused `Finish`), each once, in the order first seen.
fn rules_reported(attempt: &serde_json::Value) -> Vec<String> {
    let mut rules: Vec<String> = Vec::new();
    let mut note = |issue: &serde_json::Value| {
        if let Some(rule) = issue["rule"].as_str() {
            if !rules.iter().any(|seen| seen == rule) {
                rules.push(rule.to_owned());
            }
        }
    };
    let turns = attempt["transcript"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    for call in turns
        .iter()
        .filter_map(|turn| turn["calls"].as_array())
        .flatten()
    {
        let result = &call["result"];
        let error = &result["error"];
        let nested = error["errors"].as_array().or(result["errors"].as_array());
        if error["rule"] != "not_finished" {
            note(error);
        }
        for issue in nested.into_iter().flatten() {
            note(issue);
        }
    }
    // A whole-page answer's problems, as its repair turn named them.
    for problem in turns
        .iter()
        .filter_map(|turn| turn["problems"].as_array())
        .flatten()
    {
        note(problem);
    }
    rules
}

/// The page as a person gets it, without the document shell: the size a model's choices decide.
fn html_bytes(tree: &PageTree, data: &serde_json::Value) -> usize {
    let ctx = RenderCtx::new(data.clone());
    Owner::new()
        .with(|| render_tree(tree, &ctx).to_html())
        .len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arguments(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn the_command_line_names_folders_and_refuses_the_unknown() -> Result<(), EvalError> {
        let options = EvalOptions::parse(&arguments("--transcripts tests/transcripts --json"))?;
        assert_eq!(options.scenarios, PathBuf::from("tests/quality"));
        assert_eq!(
            options.transcripts,
            Some(PathBuf::from("tests/transcripts"))
        );
        assert!(options.json);
        let unknown = EvalOptions::parse(&arguments("--fast")).err();
        assert!(unknown
            .map(|error| error.to_string())
            .is_some_and(|text| text.starts_with("unknown argument `--fast`")));
        let measured = EvalOptions::parse(&arguments(
            "--only bug-report,shipping-address --max-steps 2 --mode whole --record /tmp/rec",
        ))?;
        assert_eq!(measured.only, ["bug-report", "shipping-address"]);
        assert_eq!(measured.max_steps, 2);
        assert_eq!(measured.mode, Some(PageMode::Whole));
        assert_eq!(measured.record, Some(PathBuf::from("/tmp/rec")));
        let bad_mode = EvalOptions::parse(&arguments("--mode grammar")).err();
        assert!(bad_mode
            .map(|error| error.to_string())
            .is_some_and(|text| text.starts_with("--mode: `grammar` is not auto, whole or tools")));
        let no_steps = EvalOptions::parse(&arguments("--max-steps 0")).err();
        assert!(no_steps
            .map(|error| error.to_string())
            .is_some_and(|text| text.starts_with("--max-steps needs a number above 0")));
        let missing = EvalOptions::parse(&arguments("--scenarios")).err();
        assert!(missing
            .map(|error| error.to_string())
            .is_some_and(|text| text.starts_with("--scenarios needs a folder")));
        Ok(())
    }
}
