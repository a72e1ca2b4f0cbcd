//! The ask's prompt: the caller's minijinja template, checked and rendered over `data`.
//!
//! Only the caller's own text is ever a template; `data` values are inserted as text. The render
//! is strict (an unknown variable is refused, naming it) and bounded (`util::templates`), so a
//! template cannot run away with the server's time or memory.

use minijinja::ErrorKind;
use serde_json::Value;

use super::{AskError, MAX_PROMPT_CHARS};
use crate::util::templates::{self, Exhausted};

/// `prompt`: a required, non-blank template of at most [`MAX_PROMPT_CHARS`] characters.
pub(super) fn parse_prompt(value: Option<Value>) -> Result<String, AskError> {
    match value {
        Some(Value::String(prompt)) if prompt.trim().is_empty() => {
            Err(AskError::invalid("prompt", "must not be empty"))
        }
        Some(Value::String(prompt)) if prompt.chars().count() > MAX_PROMPT_CHARS => {
            Err(AskError::invalid(
                "prompt",
                format!("must be at most {MAX_PROMPT_CHARS} characters"),
            ))
        }
        Some(Value::String(prompt)) => Ok(prompt),
        None | Some(Value::Null) => Err(AskError::invalid(
            "prompt",
            "is required: what to ask the person",
        )),
        Some(_) => Err(AskError::invalid("prompt", "must be a string")),
    }
}

/// Renders the caller's prompt template over `data`, strictly and bounded (see the module doc).
pub(super) fn render_prompt(template: &str, data: &Value) -> Result<String, AskError> {
    let environment = templates::environment();
    let compiled = templates::compile(&environment, template).map_err(|error| {
        AskError::invalid(
            "prompt",
            format!(
                "is not a valid template: {}{}",
                error.detail().unwrap_or("syntax error"),
                error
                    .line()
                    .map(|line| format!(" (line {line})"))
                    .unwrap_or_default()
            ),
        )
    })?;
    // A character takes at most four bytes: past that many, the prompt is too long whatever it is.
    let max_bytes = MAX_PROMPT_CHARS * 4;
    let rendered = templates::render(&compiled, data, max_bytes).map_err(|error| {
        match Exhausted::of(&error) {
            Some(Exhausted::Fuel) => {
                return AskError::invalid(
                    "prompt",
                    format!(
                    "takes too much work to render (more than {} template steps); loop over less",
                    templates::FUEL
                ),
                )
            }
            Some(Exhausted::Output) => {
                return AskError::invalid(
                    "prompt",
                    format!("renders to more than {MAX_PROMPT_CHARS} characters"),
                )
            }
            None => {}
        }
        if error.kind() == ErrorKind::UndefinedError {
            let mut names: Vec<String> = compiled.undeclared_variables(true).into_iter().collect();
            names.sort();
            if let Some(unknown) = names.iter().find(|name| !resolves(data, name)) {
                return AskError::invalid(
                    "prompt",
                    format!("uses the unknown variable `{unknown}`; `data` has no such value"),
                );
            }
        }
        AskError::invalid(
            "prompt",
            format!(
                "does not render over `data`: {}",
                error.detail().unwrap_or("undefined value")
            ),
        )
    })?;
    if rendered.trim().is_empty() {
        return Err(AskError::invalid("prompt", "renders to nothing"));
    }
    if rendered.chars().count() > MAX_PROMPT_CHARS {
        return Err(AskError::invalid(
            "prompt",
            format!("renders to more than {MAX_PROMPT_CHARS} characters"),
        ));
    }
    Ok(rendered)
}

/// Whether the dotted variable `name` (`role.title`) names a value in `data`.
fn resolves(data: &Value, name: &str) -> bool {
    let mut current = data;
    for part in name.split('.') {
        match current.get(part) {
            Some(next) => current = next,
            None => return false,
        }
    }
    true
}
