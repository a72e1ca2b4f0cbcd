//! What a step is handed: its stored input on a re-run, else the output of the step before it,
//! a wait resolved to the page's response.

use serde_json::Value;

use super::Runner;
use crate::{
    store::StoreError,
    workflow::{builder::WorkflowDef, run::RunId, step::StepOutput},
};

/// Why a step's input could not be worked out.
pub(super) enum InputError {
    /// The run cannot go on (a stored output that does not decode, a page without a response).
    Fatal(String),
    /// The database failed; try again later.
    Store(StoreError),
}

impl From<StoreError> for InputError {
    fn from(error: StoreError) -> Self {
        Self::Store(error)
    }
}

/// The name of step `cursor`, for an error about its input (past the last step: the end).
pub(super) fn step_name(definition: &WorkflowDef, cursor: i64) -> String {
    usize::try_from(cursor)
        .ok()
        .and_then(|index| definition.steps.get(index))
        .map_or_else(
            || "(end of the workflow)".to_owned(),
            |step| step.name.clone(),
        )
}

impl Runner {
    /// What step `cursor` is handed, and the index of the step that handed it: its stored input
    /// when an earlier attempt recorded one, else the output of the step that ran before it
    /// (the one just before, or the one that jumped here) — resolving a wait to the page's
    /// response (or the timeout's default).
    pub(super) async fn step_input(
        &self,
        run_id: RunId,
        cursor: i64,
    ) -> Result<(Value, Option<i64>), InputError> {
        if cursor == 0 {
            return Ok((Value::Null, None));
        }
        let store = &self.inner.store;
        let steps = store.run_steps(run_id).await?;
        // Skipped steps have no row, so the latest row before the cursor is the one that ran.
        let previous_index = steps
            .iter()
            .map(|step| step.index)
            .filter(|index| *index < cursor)
            .max();
        if let Some(input) = steps
            .iter()
            .find(|step| step.index == cursor)
            .and_then(|step| step.input.clone())
        {
            return Ok((input, previous_index));
        }
        let previous = previous_index.unwrap_or(cursor - 1);
        let Some(output) = steps
            .into_iter()
            .find(|step| step.index == previous)
            .and_then(|step| step.output)
        else {
            return Err(InputError::Fatal(format!(
                "the output of step {previous} is missing"
            )));
        };
        let output: StepOutput = serde_json::from_value(output).map_err(|error| {
            InputError::Fatal(format!(
                "the output of step {previous} does not decode: {error}"
            ))
        })?;
        let input = match output {
            StepOutput::None => Value::Null,
            StepOutput::Value { value } => value,
            StepOutput::Page { page } => serde_json::to_value(page).unwrap_or(Value::Null),
            StepOutput::Wait {
                page_id,
                default_response,
                ..
            } => {
                let response = match page_id {
                    Some(page_id) => store.submitted_response(page_id.0).await?,
                    None => None,
                };
                match (response, default_response) {
                    (Some(response), _) | (None, Some(response)) => response,
                    (None, None) if page_id.is_none() => Value::Null,
                    (None, None) => {
                        return Err(InputError::Fatal(
                            "the run resumed but its page has no response".into(),
                        ))
                    }
                }
            }
        };
        Ok((input, previous_index))
    }
}
