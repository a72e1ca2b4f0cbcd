//! `prompt` steps: a model asked for text or for a form's fields, merged into the state.

use std::sync::Arc;

use serde::{de::DeserializeOwned, Serialize};
use serde_json::Value;

use crate::{
    forms::FormSchemaType,
    llm::{ChatModel, ChatRequest, Message, ToolDefinition},
    workflow::{
        prompt::Template,
        step::{Response, StepError, StepOutput, StepResult, Text},
    },
};

use super::{decode, encode, fatal, Handler, StepContext, StepDone, WorkflowState};

/// What a `prompt` step asks the model for: [`Text`], or a form type whose fields are merged
/// into the state.
pub trait PromptOutput: sealed::PromptKind + Sized + Send + 'static {
    /// What the next step gets.
    type Next;
}

pub(super) mod sealed {
    use super::{Handler, Template, WorkflowState};

    /// A prompt template, opaque outside the crate.
    pub struct PromptTemplate(pub(crate) Template);

    /// An erased step, opaque outside the crate.
    pub struct ErasedStep(pub(crate) Handler);

    /// How each kind of prompt becomes a step; sealed so only this module implements it.
    pub trait PromptKind {
        fn handler<S: WorkflowState>(template: PromptTemplate) -> ErasedStep;
    }
}

/// The tool a model answers a schema prompt with.
pub(crate) const ANSWER_TOOL: &str = "Answer";

/// Asks the model for an answer in the shape of `parameters` (a JSON schema), offered as the
/// [`ANSWER_TOOL`]: the arguments of its call to it or, from a model that wrote the answer out
/// instead, its text read as JSON; `None` when it gave neither. Whether the answer fits the
/// shape is the caller's check.
pub(crate) async fn ask_for_answer(
    context: &StepContext,
    prompt: String,
    parameters: Value,
) -> StepResult<Option<Value>> {
    let tool = ToolDefinition {
        name: ANSWER_TOOL.into(),
        description: "Give your answer in this shape.".into(),
        parameters,
    };
    let reply = ask_model(context, prompt, vec![tool]).await?;
    Ok(reply
        .tool_calls
        .into_iter()
        .find(|call| call.name == ANSWER_TOOL)
        .and_then(|call| call.arguments.ok())
        .or_else(|| {
            reply
                .text
                .as_deref()
                .and_then(|text| serde_json::from_str(text.trim()).ok())
        }))
}

/// The model gave no answer in the shape asked for: worth asking again.
pub(crate) fn no_answer() -> StepError {
    StepError::retryable(anyhow::anyhow!(
        "the model gave no {ANSWER_TOOL} in the schema's shape"
    ))
}

pub(crate) async fn ask_model(
    context: &StepContext,
    prompt: String,
    tools: Vec<ToolDefinition>,
) -> StepResult<crate::llm::ChatResponse> {
    let model = context.services.model.clone().ok_or_else(|| {
        StepError::fatal(anyhow::anyhow!("the runner has no model for prompt steps"))
    })?;
    let mut messages = Vec::new();
    if !tools.is_empty() {
        messages.push(Message::system(format!(
            "Answer by calling the {ANSWER_TOOL} tool exactly once with arguments that fit its schema."
        )));
    }
    messages.push(Message::user(prompt));
    model
        .chat(ChatRequest {
            messages,
            tools,
            ..ChatRequest::default()
        })
        .await
        .map_err(|error| {
            if error.is_retryable() {
                StepError::retryable(error)
            } else {
                StepError::fatal(error)
            }
        })
}

impl PromptOutput for Text {
    type Next = Response<Text>;
}

impl sealed::PromptKind for Text {
    fn handler<S: WorkflowState>(template: sealed::PromptTemplate) -> sealed::ErasedStep {
        let template = template.0;
        sealed::ErasedStep(Arc::new(move |context, state, _input| {
            let template = template.clone();
            Box::pin(async move {
                let prompt = template
                    .render(&state)
                    .map_err(|error| fatal("the prompt does not render", error))?;
                let reply = ask_model(&context, prompt, Vec::new()).await?;
                let text = Text {
                    text: reply.text.unwrap_or_default(),
                };
                Ok(StepDone {
                    state,
                    output: StepOutput::Value {
                        value: encode("the reply", &text)?,
                    },
                    goto: None,
                })
            })
        }))
    }
}

impl<R> PromptOutput for R
where
    R: FormSchemaType + Serialize + DeserializeOwned + Send + 'static,
{
    type Next = ();
}

impl<R> sealed::PromptKind for R
where
    R: FormSchemaType + Serialize + DeserializeOwned + Send + 'static,
{
    fn handler<S: WorkflowState>(template: sealed::PromptTemplate) -> sealed::ErasedStep {
        let template = template.0;
        sealed::ErasedStep(Arc::new(move |context, state, _input| {
            let template = template.clone();
            Box::pin(async move {
                let prompt = template
                    .render(&state)
                    .map_err(|error| fatal("the prompt does not render", error))?;
                let arguments = ask_for_answer(&context, prompt, R::json_schema())
                    .await?
                    .ok_or_else(no_answer)?;
                let answer: R = serde_json::from_value(arguments).map_err(|error| {
                    StepError::retryable(anyhow::anyhow!(
                        "the model's answer does not fit the schema: {error}"
                    ))
                })?;
                let state = merge(state, encode("the answer", &answer)?)?;
                let state: S = decode("the state with the answer merged in", state)?;
                Ok(StepDone {
                    state: encode("the run's state", &state)?,
                    output: StepOutput::None,
                    goto: None,
                })
            })
        }))
    }
}

/// Sets every field of `answer` on `state` (both JSON objects).
pub(super) fn merge(state: Value, answer: Value) -> StepResult<Value> {
    match (state, answer) {
        (Value::Object(mut state), Value::Object(answer)) => {
            state.extend(answer);
            Ok(Value::Object(state))
        }
        _ => Err(StepError::fatal(anyhow::anyhow!(
            "a prompt's answer merges only into a state that is a JSON object"
        ))),
    }
}
