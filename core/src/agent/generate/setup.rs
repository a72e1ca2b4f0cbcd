//! The conversation and page every attempt of one generation starts from: the prompts, the
//! data summary, and the tools and page schema, made on first use.

use std::sync::OnceLock;

use serde_json::Value;

use super::{AgentError, GenerationInput};
use crate::{
    agent::{
        page_schema::{page_schema, PageRequest},
        prompt::{page_system_prompt, system_prompt, user_prompt_for},
        summary::DataSummary,
        tools::tool_definitions,
    },
    llm::ToolDefinition,
};

/// The conversation and page one attempt starts from.
pub(super) struct Setup<'a> {
    pub(super) input: &'a GenerationInput,
    pub(super) system: String,
    pub(super) user: String,
    pub(super) summary: DataSummary,
    /// Made on first use: a cache hit calls no model, so it never needs them.
    tools: OnceLock<Vec<ToolDefinition>>,
    /// The whole-page answer's schema, made on first use like the tools.
    page_schema: OnceLock<Value>,
}

impl<'a> Setup<'a> {
    /// The prompts and data summary for `input`; tools and page schema are made on first use.
    ///
    /// # Errors
    /// [`AgentError::Template`] when a prompt template fails to render.
    pub(super) fn new(input: &'a GenerationInput) -> Result<Self, AgentError> {
        let summary = DataSummary::of(&input.data);
        Ok(Self {
            input,
            system: system_prompt(input.schema.is_some())?,
            user: user_prompt_for(
                &input.prompt,
                input.schema.as_ref(),
                &summary,
                input.for_assignees,
            )?,
            summary,
            tools: OnceLock::new(),
            page_schema: OnceLock::new(),
        })
    }

    /// The tool definitions offered to the model.
    pub(super) fn tools(&self) -> &[ToolDefinition] {
        self.tools
            .get_or_init(|| tool_definitions(&self.input.catalog))
    }

    fn page_request(&self) -> PageRequest<'_> {
        PageRequest::new(
            &self.input.catalog,
            self.input.schema.as_ref(),
            &self.summary,
        )
    }

    /// The schema a whole-page answer must follow.
    pub(super) fn page_schema(&self) -> &Value {
        self.page_schema
            .get_or_init(|| page_schema(&self.page_request()))
    }

    /// The system prompt of a whole-page answer: the format, the components, the fields.
    pub(super) fn page_system(&self) -> Result<String, AgentError> {
        Ok(page_system_prompt(
            &self.page_request(),
            self.input.for_assignees,
        )?)
    }
}
