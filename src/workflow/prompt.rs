//! Prompts: minijinja templates over a run's state, typed by the response they ask for.
//!
//! `Prompt<DigestForm>` says "this prompt asks for a `DigestForm`"; the builder uses the type to
//! check the response schema at compile time and to type the next step's `response`. Templates
//! are checked when the workflow is built ([`WorkflowBuilder::build`](super::WorkflowBuilder)) and
//! rendered with the state as context, strictly: a variable the state lacks is an error, not an
//! empty string. Keep long templates in `.j2` files and load them with `include_str!`.

use std::{fmt, marker::PhantomData};

use minijinja::{Environment, UndefinedBehavior};
use serde_json::Value;

/// A prompt template asking for an `R`.
pub struct Prompt<R> {
    template: String,
    response: PhantomData<fn() -> R>,
}

impl<R> Prompt<R> {
    /// A prompt from a minijinja template, rendered with the run's state as context
    /// (`{{ emails | length }} emails from {{ sender }}`).
    #[must_use]
    pub fn new(template: impl Into<String>) -> Self {
        Self {
            template: template.into(),
            response: PhantomData,
        }
    }

    /// The template text.
    #[must_use]
    pub fn template(&self) -> &str {
        &self.template
    }

    pub(crate) fn into_template(self) -> Template {
        Template(self.template)
    }
}

impl<R> Clone for Prompt<R> {
    fn clone(&self) -> Self {
        Self::new(self.template.clone())
    }
}

impl<R> fmt::Debug for Prompt<R> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_tuple("Prompt")
            .field(&self.template)
            .finish()
    }
}

/// A prompt template without its response type, as the runner holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Template(String);

fn environment() -> Environment<'static> {
    let mut environment = Environment::new();
    environment.set_undefined_behavior(UndefinedBehavior::Strict);
    environment
}

impl Template {
    /// Checks the template's syntax.
    pub(crate) fn check(&self) -> Result<(), minijinja::Error> {
        environment().template_from_str(&self.0).map(|_| ())
    }

    /// The template's source text (the page cache keys on it, not on a rendering).
    pub(crate) fn source(&self) -> &str {
        &self.0
    }

    /// Renders the template with `state` as its context.
    pub(crate) fn render(&self, state: &Value) -> Result<String, minijinja::Error> {
        environment().render_str(&self.0, state)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_prompt_renders_over_the_state() -> Result<(), minijinja::Error> {
        let prompt = Prompt::<()>::new("{{ emails | length }} emails for {{ owner.name }}");
        let rendered = prompt
            .into_template()
            .render(&json!({"emails": [1, 2, 3], "owner": {"name": "Ada"}}))?;
        assert_eq!(rendered, "3 emails for Ada");
        Ok(())
    }

    #[test]
    fn a_missing_variable_is_an_error_not_an_empty_string() {
        let prompt = Prompt::<()>::new("Hello {{ nobody }}");
        assert!(prompt.into_template().render(&json!({})).is_err());
    }

    #[test]
    fn a_broken_template_fails_its_check() {
        assert!(Prompt::<()>::new("{% if %}")
            .into_template()
            .check()
            .is_err());
        assert!(Prompt::<()>::new("{{ a }}").into_template().check().is_ok());
    }
}
