//! Manual tools as forms (DESIGN.md §8): a tool's parameter schema becomes a generated page, and
//! the page's submission becomes the tool's arguments.
//!
//! The schema goes through the form subset ([`FormSchema::from_json_schema`]); the page tree comes
//! from the same agent loop as every generated page ([`generate_page`]: the configured model, the
//! heuristic as the fallback, the page cache in front), so it passes `ValidateForm` for that schema.
//! A submission is decoded mechanically and validated by the §5 rules ([`read_submission`]); only a
//! valid value reaches [`Orchestrator::run_manual_tool`], which still applies scope, schema and
//! policy, so a destructive tool run by hand waits for an approval like a model's call.
//!
//! Showing a form writes nothing but the generation's audit record (and, the first time, the page
//! cache entry the next showing hits); no chat or business state changes until a valid POST.
//!
//! This module knows nothing of HTTP: the handlers in `http/chat_tools.rs` render and redirect.

use serde_json::json;
use tessera_app::{render::FormState, tree::PageTree};

use super::{orchestrator::ManualTool, ChatError, Orchestrator, SessionId, TurnOutcome};
use crate::{
    agent::{generate_page, AgentError, AllowedModels, GenerationInput, UnknownModel},
    forms::{FormSchema, Offered, SchemaError},
    pages::submission::{read_submission, Submission},
};

/// Why a tool form cannot be shown or run.
#[derive(Debug, thiserror::Error)]
pub enum ToolFormError {
    /// No manual tool of that name in this session's scope.
    #[error("no manual tool `{0}` in this chat")]
    UnknownTool(String),
    /// The tool's parameters are outside the form subset (the manifest author's fault).
    #[error("`{tool}` cannot be run by hand: {error}")]
    Schema {
        /// The tool.
        tool: String,
        /// What is outside the subset.
        error: SchemaError,
    },
    /// The configured model is missing (a setup problem).
    #[error(transparent)]
    Model(#[from] UnknownModel),
    /// Not even the heuristic page could be built, or recording it failed.
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// The orchestrator failed.
    #[error(transparent)]
    Chat(#[from] ChatError),
}

/// A manual tool's form: the tool, its schema and the page tree that asks for its arguments.
#[derive(Clone, Debug)]
pub struct ToolForm {
    /// The tool, as the side panel lists it.
    pub tool: ManualTool,
    /// Its parameters in the form subset.
    pub schema: FormSchema,
    /// The generated page (it holds the Form with one field per parameter).
    pub tree: PageTree,
}

/// What a submitted tool form amounted to.
#[derive(Debug)]
pub enum ToolSubmission {
    /// The tool went through the orchestrator (ran, was refused, or waits for an approval).
    Ran(Box<TurnOutcome>),
    /// The person pressed Cancel; nothing ran.
    Cancelled,
    /// A field was wrong: the form again, with the person's values and a message per field.
    Invalid(Box<ToolForm>, FormState),
}

/// The form for the manual tool `name` in session `id`.
///
/// # Errors
/// [`ToolFormError::UnknownTool`] for a tool outside the session's manual tools;
/// [`ToolFormError::Schema`] for parameters outside the form subset; generation and storage
/// failures.
pub async fn tool_form(
    orchestrator: &Orchestrator,
    models: &AllowedModels,
    id: SessionId,
    name: &str,
) -> Result<ToolForm, ToolFormError> {
    let tool = orchestrator
        .manual_tools(id)
        .await?
        .into_iter()
        .find(|tool| tool.name == name)
        .ok_or_else(|| ToolFormError::UnknownTool(name.to_owned()))?;
    let schema =
        FormSchema::from_json_schema(&tool.parameters).map_err(|error| ToolFormError::Schema {
            tool: tool.name.clone(),
            error,
        })?;
    let model = models.choose(None)?;
    let input = GenerationInput::new(prompt(&tool))
        .with_schema(schema.clone())
        .with_data(json!({}));
    let generated = generate_page(input, model.as_ref(), orchestrator.store(), None).await?;
    Ok(ToolForm {
        tool,
        schema,
        tree: generated.tree,
    })
}

/// Decodes and validates `body` (a form POST) for the tool `name`, and runs it when valid.
///
/// # Errors
/// As [`tool_form`]; orchestrator failures.
pub async fn submit_tool_form(
    orchestrator: &Orchestrator,
    models: &AllowedModels,
    id: SessionId,
    name: &str,
    body: &[u8],
) -> Result<ToolSubmission, ToolFormError> {
    let form = tool_form(orchestrator, models, id, name).await?;
    // A tool form's closed sets are its schema's enums, which the decoder enforces already: the
    // form is generated from the schema and `ValidateForm` keeps its options equal to them.
    match read_submission(&form.schema, &Offered::default(), body) {
        Submission::Valid(arguments) => Ok(ToolSubmission::Ran(Box::new(
            orchestrator.run_manual_tool(id, name, arguments).await?,
        ))),
        // A tool form offers no Decline; a crafted one is a no, as Cancel is.
        Submission::Cancelled | Submission::Declined(_) => Ok(ToolSubmission::Cancelled),
        Submission::Invalid(state) => Ok(ToolSubmission::Invalid(Box::new(form), state)),
    }
}

/// The request the page is generated from: what the tool does and what code demands before it
/// runs, so the page says it to the person.
fn prompt(tool: &ManualTool) -> String {
    let mut text = format!("Run {} by hand. {}", tool.name, tool.description.trim());
    if !tool.rules.is_empty() {
        text.push(' ');
        text.push_str(&tool.rules.join(" "));
    }
    text
}
