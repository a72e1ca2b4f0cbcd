//! The inputs of an evaluation: scenarios (page requests) and the cases that pair each with a
//! model or a transcript.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use minijinja::{Environment, UndefinedBehavior};
use serde::Deserialize;
use serde_json::Value;

use super::EvalError;
use crate::{
    forms::FormSchema,
    llm::{ChatModel, Transcript},
};

/// One page request: a `tests/quality/*.json` fixture without its review expectations.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The fixture's name.
    pub name: String,
    /// The request, rendered over the data as an ask renders it.
    pub prompt: String,
    /// The response schema; `None` for a page that only shows data.
    pub schema: Option<FormSchema>,
    /// The data the page binds to.
    pub data: Value,
}

#[derive(Deserialize)]
struct Fixture {
    name: String,
    prompt: String,
    #[serde(default)]
    schema: Option<Value>,
    data: Value,
}

impl Scenario {
    /// How many form fields the scenario asks for (0 for a display-only page).
    #[must_use]
    pub fn fields(&self) -> usize {
        self.schema.as_ref().map_or(0, |schema| schema.fields.len())
    }

    /// Reads one fixture.
    ///
    /// # Errors
    /// [`EvalError::Scenario`] naming the file and what is wrong.
    pub fn from_file(path: &Path) -> Result<Self, EvalError> {
        let invalid = |message: String| EvalError::Scenario {
            path: path.to_owned(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|error| invalid(error.to_string()))?;
        let fixture: Fixture =
            serde_json::from_str(&text).map_err(|error| invalid(error.to_string()))?;
        let schema = match &fixture.schema {
            None | Some(Value::Null) => None,
            Some(schema) => Some(
                FormSchema::from_json_schema(schema)
                    .map_err(|error| invalid(format!("schema: {error}")))?,
            ),
        };
        let mut environment = Environment::new();
        environment.set_undefined_behavior(UndefinedBehavior::Strict);
        let prompt = environment
            .render_str(&fixture.prompt, &fixture.data)
            .map_err(|error| invalid(format!("prompt: {error}")))?;
        Ok(Self {
            name: fixture.name,
            prompt,
            schema,
            data: fixture.data,
        })
    }

    /// Every `*.json` fixture in `dir`, by file name.
    ///
    /// # Errors
    /// [`EvalError::Scenario`] for the folder or the first file that cannot be used.
    pub fn load_dir(dir: &Path) -> Result<Vec<Self>, EvalError> {
        let io = |error: std::io::Error| EvalError::Scenario {
            path: dir.to_owned(),
            message: error.to_string(),
        };
        crate::llm::replay::json_files(dir)
            .map_err(io)?
            .iter()
            .map(|path| Self::from_file(path))
            .collect()
    }
}

/// Who answers a case.
#[derive(Clone)]
pub enum Source {
    /// The configured model.
    Configured(Arc<dyn ChatModel>),
    /// A transcript, replayed from its first turn.
    Replay(Box<Transcript>),
}

/// One generation to run and measure.
#[derive(Clone)]
pub struct Case {
    /// The row's name: the scenario's, or the transcript's.
    pub label: String,
    /// The request.
    pub scenario: Scenario,
    /// Who answers it.
    pub source: Source,
}

impl Case {
    /// `scenario` answered by `model`.
    #[must_use]
    pub fn configured(scenario: Scenario, model: Arc<dyn ChatModel>) -> Self {
        Self {
            label: scenario.name.clone(),
            scenario,
            source: Source::Configured(model),
        }
    }

    /// `transcript` replayed against the scenario it names.
    ///
    /// # Errors
    /// [`EvalError::Scenario`] when no scenario has that name.
    pub fn replay(scenarios: &[Scenario], transcript: Transcript) -> Result<Self, EvalError> {
        let scenario = scenarios
            .iter()
            .find(|scenario| scenario.name == transcript.scenario)
            .cloned()
            .ok_or_else(|| EvalError::Scenario {
                path: PathBuf::from(format!("{}.json", transcript.name)),
                message: format!(
                    "the transcript's `scenario` names `{}`, which is not a scenario",
                    transcript.scenario
                ),
            })?;
        Ok(Self {
            label: transcript.name.clone(),
            scenario,
            source: Source::Replay(Box::new(transcript)),
        })
    }
}

/// One case per transcript in `folder`, each against the scenario it names.
///
/// # Errors
/// [`EvalError`] when a transcript cannot be read or names no scenario.
pub fn transcript_cases(scenarios: &[Scenario], folder: &Path) -> Result<Vec<Case>, EvalError> {
    Transcript::load_dir(folder)?
        .into_iter()
        .map(|transcript| Case::replay(scenarios, transcript))
        .collect()
}
