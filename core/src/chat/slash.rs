//! Slash commands: `/help`, `/tools`, `/tool NAME --arg value`, `/status`, `/model`, `/clear`.
//!
//! They are handled by code and never sent to the model (DESIGN.md §8). This module parses them
//! and runs them on the [`Orchestrator`] (`/tool` through the same gate as the model's calls). `/tool` arguments are raw strings grouped by name, decoded later by
//! the manual tool's form schema with the same mechanical decoder as a page's form (DESIGN.md §5),
//! so `/tool bulkDeleteItems --ids item-0001 --ids item-0002` and a submitted form agree.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{
    audit::ExecutionStatus,
    orchestrator::{plural, step_of_execution, Turn},
    policy,
    session::{ChatSession, MessageChannel},
    threads::{Thread, ThreadStatus},
    ChatError, Orchestrator,
};
use crate::chat::scope::ScopeRules as _;
use crate::forms::{decode_values, FormSchema};

/// A parsed slash command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlashCommand {
    /// List the commands.
    Help,
    /// List the tools, grouped by category.
    Tools,
    /// Run a manual tool.
    Tool {
        /// The operation.
        name: String,
        /// `--name value` pairs; a repeated name collects several values, a bare flag is `true`.
        arguments: BTreeMap<String, Vec<String>>,
    },
    /// Show the session's threads and anything running.
    Status,
    /// Show the model, or switch to the named one.
    Model(Option<String>),
    /// Forget the conversation (the audit trail stays).
    Clear,
}

/// A slash command that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SlashError {
    /// Not one of the commands.
    #[error("unknown command `/{0}`; type /help for the list")]
    Unknown(String),
    /// `/tool` without a name.
    #[error("/tool needs a tool name, e.g. /tool searchItems --status open")]
    MissingToolName,
    /// A value without a `--name` before it, or an unclosed quote.
    #[error("cannot read the arguments: {0}")]
    BadArguments(String),
}

/// The help text `/help` shows.
pub const HELP: &str = "Commands:\n\
/help — this list\n\
/tools — the tools you can run by hand, by category, with what code demands before each runs\n\
/tool NAME --field value — run a tool by hand (repeat --field for lists)\n\
/status — the open threads and anything running\n\
/model [NAME] — the model this chat uses, or switch to NAME\n\
/clear — forget this conversation (what ran stays in the audit trail)";

/// Parses `text` when it starts with `/`; `None` for ordinary messages.
#[must_use]
pub fn parse(text: &str) -> Option<Result<SlashCommand, SlashError>> {
    let text = text.trim();
    let rest = text.strip_prefix('/')?;
    let (command, arguments) = rest
        .split_once(char::is_whitespace)
        .map_or((rest, ""), |(command, arguments)| {
            (command, arguments.trim())
        });
    Some(match command.to_lowercase().as_str() {
        "help" | "?" => Ok(SlashCommand::Help),
        "tools" => Ok(SlashCommand::Tools),
        "status" => Ok(SlashCommand::Status),
        "clear" => Ok(SlashCommand::Clear),
        "model" => Ok(SlashCommand::Model(
            Some(arguments.to_owned()).filter(|name| !name.is_empty()),
        )),
        "tool" => parse_tool(arguments),
        other => Err(SlashError::Unknown(other.to_owned())),
    })
}

fn parse_tool(arguments: &str) -> Result<SlashCommand, SlashError> {
    let tokens = tokenize(arguments)?;
    let mut tokens = tokens.into_iter().peekable();
    let Some(name) = tokens.next().filter(|name| !name.starts_with("--")) else {
        return Err(SlashError::MissingToolName);
    };
    let mut parsed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    while let Some(token) = tokens.next() {
        let Some(key) = token.strip_prefix("--") else {
            return Err(SlashError::BadArguments(format!(
                "`{token}` has no --name before it"
            )));
        };
        if let Some((key, value)) = key.split_once('=') {
            parsed
                .entry(key.to_owned())
                .or_default()
                .push(value.to_owned());
            continue;
        }
        let value = match tokens.peek() {
            Some(next) if !next.starts_with("--") => tokens.next().unwrap_or_default(),
            _ => "true".to_owned(),
        };
        parsed.entry(key.to_owned()).or_default().push(value);
    }
    Ok(SlashCommand::Tool {
        name,
        arguments: parsed,
    })
}

/// Splits on whitespace, keeping "double" or 'single' quoted runs together.
fn tokenize(text: &str) -> Result<Vec<String>, SlashError> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut in_token = false;
    for character in text.chars() {
        match (quote, character) {
            (Some(open), close) if close == open => quote = None,
            (Some(_), other) => current.push(other),
            (None, '"' | '\'') => {
                quote = Some(character);
                in_token = true;
            }
            (None, space) if space.is_whitespace() => {
                if in_token {
                    tokens.push(std::mem::take(&mut current));
                    in_token = false;
                }
            }
            (None, other) => {
                current.push(other);
                in_token = true;
            }
        }
    }
    if quote.is_some() {
        return Err(SlashError::BadArguments("a quote is not closed".into()));
    }
    if in_token {
        tokens.push(current);
    }
    Ok(tokens)
}

impl Orchestrator {
    pub(super) async fn run_slash(
        &self,
        turn: &mut Turn,
        command: Result<SlashCommand, SlashError>,
    ) -> Result<Option<Thread>, ChatError> {
        let command = match command {
            Ok(command) => command,
            Err(error) => {
                turn.narrative = error.to_string();
                return Ok(None);
            }
        };
        match command {
            SlashCommand::Help => turn.narrative = HELP.to_owned(),
            SlashCommand::Tools => turn.narrative = self.tools_text(&turn.session),
            SlashCommand::Status => self.slash_status(turn).await?,
            SlashCommand::Model(None) => {
                turn.narrative = format!(
                    "This chat uses `{}`. Available: {}.",
                    turn.session.model,
                    self.inner.models.names().join(", ")
                );
            }
            SlashCommand::Model(Some(name)) => self.slash_model(turn, &name).await?,
            SlashCommand::Clear => self.slash_clear(turn).await?,
            SlashCommand::Tool { name, arguments } => {
                return self.slash_tool(turn, &name, &arguments).await;
            }
        }
        Ok(None)
    }

    /// `/status`: the open threads, the calls running, what waits for the person, the model.
    async fn slash_status(&self, turn: &mut Turn) -> Result<(), ChatError> {
        let threads = self.inner.store.chat_threads(turn.session.id).await?;
        let executions = self.executions(turn.session.id).await?;
        turn.steps = executions
            .iter()
            .filter(|execution| execution.status == ExecutionStatus::Running)
            .map(step_of_execution)
            .collect();
        let mut lines: Vec<String> = threads
            .iter()
            .filter(|thread| !thread.status.is_terminal())
            .map(|thread| {
                format!(
                    "- {} [{}]: {}",
                    thread.intent,
                    thread.status.as_str(),
                    thread.summary
                )
            })
            .collect();
        if lines.is_empty() {
            lines.push("No open threads.".to_owned());
        }
        let pending = self.pending_approvals(turn.session.id).await?.len();
        lines.push(format!(
            "{} waiting for you.",
            plural(pending, "confirmation")
        ));
        lines.push(format!("Model: {}.", turn.session.model));
        turn.narrative = lines.join("\n");
        Ok(())
    }

    /// `/model NAME`: the session uses that model from now on, when it is one of the allowed.
    async fn slash_model(&self, turn: &mut Turn, name: &str) -> Result<(), ChatError> {
        if self.inner.models.get(name).is_some() {
            self.inner
                .store
                .set_chat_session_model(turn.session.id, name)
                .await?;
            turn.session.model = name.to_owned();
            turn.narrative = format!("This chat now uses `{name}`.");
        } else {
            turn.narrative = format!(
                "`{name}` is not available here. Available: {}.",
                self.inner.models.names().join(", ")
            );
        }
        Ok(())
    }

    /// `/clear`: stops what runs, withdraws what waits, and starts the conversation afresh; the
    /// audit trail keeps what ran.
    async fn slash_clear(&self, turn: &mut Turn) -> Result<(), ChatError> {
        let _ = self.stop(turn.session.id).await?;
        self.inner
            .store
            .withdraw_confirmations(turn.session.id, None)
            .await?;
        for mut thread in self.inner.store.chat_threads(turn.session.id).await? {
            if !thread.status.is_terminal() {
                thread.status = ThreadStatus::Failed;
                thread.pending_question = None;
                thread.summary = "Cleared before it finished.".to_owned();
                self.save_thread(&mut thread).await?;
            }
        }
        self.inner
            .store
            .clear_chat_messages(turn.session.id, MessageChannel::Model)
            .await?;
        self.inner
            .store
            .clear_chat_messages(turn.session.id, MessageChannel::Transcript)
            .await?;
        turn.narrative =
            "Cleared. The conversation starts afresh; what ran stays in the audit trail."
                .to_owned();
        Ok(())
    }

    /// `/tool NAME --field value …`: a manual call of a tool, its arguments decoded as its form
    /// would decode them.
    async fn slash_tool(
        &self,
        turn: &mut Turn,
        name: &str,
        arguments: &BTreeMap<String, Vec<String>>,
    ) -> Result<Option<Thread>, ChatError> {
        let Some(operation) = self.inner.manifest.operation(name) else {
            // A name two configured sites share is prefixed with each site's name.
            let suffix = format!("_{name}");
            let qualified: Vec<&str> = self
                .inner
                .manifest
                .operations()
                .iter()
                .map(|operation| operation.name.as_str())
                .filter(|candidate| candidate.ends_with(&suffix))
                .collect();
            turn.narrative = if qualified.is_empty() {
                format!("There is no tool `{name}`; type /tools for the list.")
            } else {
                format!(
                    "`{name}` is on several sites; name one: {}.",
                    qualified.join(", ")
                )
            };
            return Ok(None);
        };
        let schema = match FormSchema::from_json_schema(&operation.parameters) {
            Ok(schema) => schema,
            Err(error) => {
                turn.narrative = format!("`{name}` cannot be run by hand: {error}");
                return Ok(None);
            }
        };
        let decoded = match decode_values(&schema, arguments) {
            Ok(decoded) => decoded,
            Err(errors) => {
                let messages: Vec<String> = errors.0.values().cloned().collect();
                turn.narrative = format!("`{name}` was not run: {}", messages.join("; "));
                return Ok(None);
            }
        };
        Ok(Some(
            self.manual_call(turn, name, Value::Object(decoded)).await?,
        ))
    }

    pub(super) fn tools_text(&self, session: &ChatSession) -> String {
        let manifest = &self.inner.manifest;
        let mut by_category: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for operation in manifest.operations() {
            let in_scope = session.scope.check(manifest, &operation.name).is_ok();
            let mode = match (operation.offered_to_model(), operation.offered_manually()) {
                (true, true) => "model and manual",
                (true, false) => "model only",
                _ => "manual only",
            };
            let mut line = format!("- {} ({mode}): {}", operation.name, operation.description);
            let rules = policy::describe(manifest, operation);
            if !rules.is_empty() {
                // A site's summary rarely ends its sentence; the rules are sentences of their own.
                if !line.ends_with(['.', '!', '?']) {
                    line.push('.');
                }
                line.push(' ');
                line.push_str(&rules.join(" "));
            }
            if !in_scope {
                line.push_str(" [outside this session's scope]");
            }
            by_category
                .entry(operation.category.clone())
                .or_default()
                .push(line);
        }
        let mut text = String::from("What this chat can run (by hand: /tool NAME --field value):");
        for (category, lines) in by_category {
            let mut heading = category.chars();
            let heading = heading
                .next()
                .map(|first| first.to_uppercase().chain(heading).collect::<String>())
                .unwrap_or_default();
            text.push_str(&format!("\n{heading}:\n{}", lines.join("\n")));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_parses() {
        assert_eq!(parse("/help"), Some(Ok(SlashCommand::Help)));
        assert_eq!(parse(" /tools "), Some(Ok(SlashCommand::Tools)));
        assert_eq!(parse("/status"), Some(Ok(SlashCommand::Status)));
        assert_eq!(parse("/clear"), Some(Ok(SlashCommand::Clear)));
        assert_eq!(parse("/model"), Some(Ok(SlashCommand::Model(None))));
        assert_eq!(
            parse("/model heuristic"),
            Some(Ok(SlashCommand::Model(Some("heuristic".into()))))
        );
        assert_eq!(parse("show items"), None);
        assert_eq!(
            parse("/frobnicate"),
            Some(Err(SlashError::Unknown("frobnicate".into())))
        );
    }

    #[test]
    fn tool_arguments_group_repeats_and_keep_quotes() {
        let parsed = parse(
            r#"/tool createItem --title "Buy oat milk" --priority=high --ids a --ids b --urgent"#,
        );
        let expected = SlashCommand::Tool {
            name: "createItem".into(),
            arguments: BTreeMap::from([
                ("title".to_owned(), vec!["Buy oat milk".to_owned()]),
                ("priority".to_owned(), vec!["high".to_owned()]),
                ("ids".to_owned(), vec!["a".to_owned(), "b".to_owned()]),
                ("urgent".to_owned(), vec!["true".to_owned()]),
            ]),
        };
        assert_eq!(parsed, Some(Ok(expected)));
        assert_eq!(parse("/tool"), Some(Err(SlashError::MissingToolName)));
        assert!(matches!(
            parse("/tool x stray"),
            Some(Err(SlashError::BadArguments(_)))
        ));
        assert!(matches!(
            parse("/tool x --title \"open"),
            Some(Err(SlashError::BadArguments(_)))
        ));
    }

    #[tokio::test]
    async fn model_and_tool_commands_answer_by_code_naming_what_exists() -> anyhow::Result<()> {
        let fixture = crate::chat::orchestrator::test_support::Fixture::new(Vec::new()).await?;
        let session = fixture.orchestrator.create_session(None, None).await?;
        let model = fixture
            .orchestrator
            .handle_turn(session.id, "/model gpt-9")
            .await?;
        assert_eq!(model.route, "slash");
        assert_eq!(
            model.narrative,
            "`gpt-9` is not available here. Available: scripted."
        );
        let tool = fixture
            .orchestrator
            .handle_turn(session.id, "/tool nosuch")
            .await?;
        assert_eq!(
            tool.narrative,
            "There is no tool `nosuch`; type /tools for the list."
        );
        let tools = fixture
            .orchestrator
            .handle_turn(session.id, "/tools")
            .await?;
        assert!(
            tools.narrative.contains("- bulkDeleteItems ("),
            "{}",
            tools.narrative
        );
        assert!(
            fixture.model.requests().is_empty(),
            "slash commands never reach the model"
        );
        Ok(())
    }
}
