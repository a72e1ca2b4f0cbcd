//! Prompts: minijinja templates over a run's state, typed by the response they ask for.
//!
//! `Prompt<DigestForm>` says "this prompt asks for a `DigestForm`"; the builder uses the type to
//! check the response schema at compile time and to type the next step's `response`. Templates
//! are checked when the workflow is built ([`WorkflowBuilder::build`](super::WorkflowBuilder)) and
//! rendered with the state as context, strictly: a variable the state lacks is an error, not an
//! empty string. Keep long templates in `.j2` files and load them with `include_str!`. Renders
//! are bounded (`util::templates`): a template that runs out of fuel or writes more than
//! [`MAX_RENDERED_BYTES`] fails its step with an error saying so, rather than hanging a runner.

use std::{fmt, marker::PhantomData};

use serde_json::Value;

use crate::util::templates::{self, Exhausted};

/// The most a workflow template (a prompt, a YAML step's body or message) may render to.
pub const MAX_RENDERED_BYTES: usize = 1024 * 1024;

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

impl Template {
    /// Checks the template's syntax.
    pub(crate) fn check(&self) -> Result<(), minijinja::Error> {
        templates::compile(&templates::environment(), &self.0).map(|_| ())
    }

    /// The template's source text (the page cache keys on it, not on a rendering).
    pub(crate) fn source(&self) -> &str {
        &self.0
    }

    /// Renders the template with `state` as its context, bounded; an error past a bound says
    /// which one.
    pub(crate) fn render(&self, state: &Value) -> Result<String, minijinja::Error> {
        templates::render_str(&self.0, state, MAX_RENDERED_BYTES).map_err(explain_bound)
    }

    /// Renders the template as [`Template::render`] does, as a URL: every value it prints is
    /// percent-encoded (`util::templates::url_environment`).
    pub(crate) fn render_url(&self, state: &Value) -> Result<String, minijinja::Error> {
        templates::render_url_str(&self.0, state, MAX_RENDERED_BYTES).map_err(explain_bound)
    }
}

/// A render error past a bound, saying which one; other errors as they are.
fn explain_bound(error: minijinja::Error) -> minijinja::Error {
    match Exhausted::of(&error) {
        Some(Exhausted::Fuel) => minijinja::Error::new(
            error.kind(),
            format!(
                "the template takes too much work (more than {} steps)",
                templates::FUEL
            ),
        ),
        Some(Exhausted::Output) => minijinja::Error::new(
            error.kind(),
            format!("the template renders to more than {MAX_RENDERED_BYTES} bytes"),
        ),
        None => error,
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
    fn a_template_that_loops_without_end_fails_saying_so() {
        let nested =
            "{% for a in range(100000) %}{% for b in range(100000) %}x{% endfor %}{% endfor %}";
        let error = Prompt::<()>::new(nested)
            .into_template()
            .render(&json!({}))
            .err()
            .map(|error| error.to_string());
        assert!(
            error
                .as_deref()
                .is_some_and(|text| text.contains("too much work")),
            "{error:?}"
        );
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
