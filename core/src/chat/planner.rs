//! The deterministic planner: the offline "model" for "verb entity where field is value" requests.
//!
//! With no model provider configured (`TESSERA_MODEL=heuristic`), the chat still works: this
//! planner reads requests like "delete all completed items from last month", "mark all open items
//! as done" or "show items where status is open" and proposes the *same tool calls* a model would
//! — the preview search first, then the bulk operation on exactly the ids the preview returned —
//! through the same [`ChatModel`] interface. It proposes; the orchestrator's code still decides
//! (scope, schema, preview, confirmation, chunks), so the planner gets no shortcut. It is generic
//! over the manifest: verbs map to tags (`delete`, `update`, readonly `filterable`), filters to the
//! search operation's enum and `*_after` / `*_before` date parameters. Anything else gets a
//! plain answer pointing to `/tools` and the manual tools.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::{
    calendar::CivilDate,
    manifest::{Manifest, Operation, Tag},
    offer::FIND_OPERATIONS,
};
use crate::llm::{ChatModel, ChatRequest, ChatResponse, Message, ModelError, ModelName, ToolCall};

/// What a request asks for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verb {
    /// Show matching items.
    Show,
    /// Delete matching items.
    Delete,
    /// Set `field` to `value` on matching items.
    Update {
        /// The field to set.
        field: String,
        /// Its new value.
        value: String,
    },
}

/// A parsed request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Intent {
    /// What to do.
    pub verb: Verb,
    /// The entity, as the manifest names it.
    pub entity: String,
    /// The search operation's arguments that select the items.
    pub filters: Map<String, Value>,
}

impl Intent {
    /// A short name for the thread, e.g. `delete items`.
    #[must_use]
    pub fn name(&self) -> String {
        let verb = match &self.verb {
            Verb::Show => "show",
            Verb::Delete => "delete",
            Verb::Update { .. } => "update",
        };
        format!("{verb} {}", self.entity)
    }
}

/// Words that mean an enum value, beyond the value itself (with `_` read as a space).
const SYNONYMS: &[(&str, &[&str])] = &[
    (
        "completed",
        &["done", "complete", "finished", "closed", "completed"],
    ),
    (
        "open",
        &["open", "new", "todo", "to do", "not started", "incomplete"],
    ),
    (
        "in_progress",
        &[
            "in progress",
            "ongoing",
            "started",
            "in-progress",
            "underway",
        ],
    ),
    (
        "high",
        &["high", "urgent", "high priority", "high-priority"],
    ),
    ("low", &["low", "low priority", "low-priority"]),
    ("medium", &["medium", "normal"]),
];

fn normalize(text: &str) -> String {
    let lowered = text.to_lowercase();
    let cleaned: String = lowered
        .chars()
        .map(|character| {
            if character.is_alphanumeric()
                || character == '_'
                || character == '-'
                || character == ' '
            {
                character
            } else {
                ' '
            }
        })
        .collect();
    format!(
        " {} ",
        cleaned.split_whitespace().collect::<Vec<_>>().join(" ")
    )
}

/// The spellings of an enum value: itself, with spaces, and its synonyms.
fn spellings(value: &str) -> Vec<String> {
    let mut spelled = vec![value.to_owned(), value.replace('_', " ")];
    if let Some((_, words)) = SYNONYMS.iter().find(|(canonical, _)| *canonical == value) {
        spelled.extend(words.iter().map(|word| (*word).to_owned()));
    }
    spelled
}

/// Whether `phrase` occurs in `text` as whole words (both already normalized with edge spaces).
fn contains_words(text: &str, phrase: &str) -> bool {
    text.contains(&format!(" {phrase} "))
}

/// The enum values of a string parameter.
fn enum_values(schema: &Value) -> Vec<String> {
    schema
        .get("enum")
        .and_then(Value::as_array)
        .map(|values| {
            values
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn properties(operation: &Operation) -> Map<String, Value> {
    operation
        .parameters
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// The first enum value of `values` the text mentions, with where it was found.
fn mentioned_value(text: &str, values: &[String]) -> Option<(String, usize)> {
    values
        .iter()
        .flat_map(|value| {
            spellings(value)
                .into_iter()
                .map(move |spelling| (value.clone(), spelling))
        })
        .filter_map(|(value, spelling)| {
            text.find(&format!(" {spelling} "))
                .map(|position| (value, position, spelling.len()))
        })
        // Prefer the longest spelling at a position ("in progress" over "progress").
        .max_by_key(|(_, position, length)| (std::cmp::Reverse(*position), *length))
        .map(|(value, position, _)| (value, position))
}

fn verb_of(text: &str) -> Option<&'static str> {
    const SHOW: &[&str] = &[
        "show", "list", "find", "get", "display", "search", "which", "what",
    ];
    const DELETE: &[&str] = &["delete", "remove", "purge", "erase", "drop"];
    const UPDATE: &[&str] = &["mark", "set", "update", "change", "move", "make"];
    let first = text
        .split_whitespace()
        .find(|word| !matches!(*word, "please" | "can" | "you" | "could" | "now"))?;
    if SHOW.contains(&first) {
        Some("show")
    } else if DELETE.contains(&first) {
        Some("delete")
    } else if UPDATE.contains(&first) {
        Some("update")
    } else {
        None
    }
}

/// The date range a request names, as (after, before) dates; `before` is exclusive.
fn date_range(text: &str, today: CivilDate) -> Option<(CivilDate, CivilDate)> {
    if contains_words(text, "last month") || contains_words(text, "previous month") {
        return Some((today.first_of_previous_month(), today.first_of_month()));
    }
    if contains_words(text, "this month") {
        return Some((today.first_of_month(), today.add_days(1)));
    }
    if contains_words(text, "last week") || contains_words(text, "past week") {
        return Some((today.add_days(-7), today.add_days(1)));
    }
    if contains_words(text, "yesterday") {
        return Some((today.add_days(-1), today));
    }
    if contains_words(text, "today") {
        return Some((today, today.add_days(1)));
    }
    None
}

/// The readonly filterable operation that searches `entity`.
fn search_operation<'m>(manifest: &'m Manifest, entity: &str) -> Option<&'m Operation> {
    let candidates = || {
        manifest.operations().iter().filter(|operation| {
            operation.entity == entity
                && operation.has(Tag::Readonly)
                && operation.has(Tag::Filterable)
        })
    };
    candidates()
        .find(|operation| operation.has(Tag::Search) || operation.has(Tag::List))
        .or_else(|| candidates().next())
}

/// The mutating batch operation of `entity` tagged `tag`.
fn batch_operation<'m>(manifest: &'m Manifest, entity: &str, tag: Tag) -> Option<&'m Operation> {
    manifest.operations().iter().find(|operation| {
        operation.entity == entity
            && operation.is_mutating()
            && operation.has(Tag::Batch)
            && operation.has(tag)
    })
}

/// Reads a request. `None` when it is not a "verb entity where field is value" request this
/// manifest can serve.
#[must_use]
pub fn parse(text: &str, manifest: &Manifest, today: CivilDate) -> Option<Intent> {
    let normalized = normalize(text);
    let verb = verb_of(&normalized)?;
    let entity = manifest
        .operations()
        .iter()
        .map(|operation| operation.entity.as_str())
        .find(|entity| {
            let singular = entity.strip_suffix('s').unwrap_or(entity);
            contains_words(&normalized, entity) || contains_words(&normalized, singular)
        })?
        .to_owned();
    let search = search_operation(manifest, &entity)?;
    // For an update, the target value comes after " as " / " to "; filters come before it.
    let (selection, target) = if verb == "update" {
        let cut = [" as ", " to "]
            .iter()
            .filter_map(|marker| {
                normalized
                    .rfind(marker)
                    .map(|position| (position, marker.len()))
            })
            .max_by_key(|(position, _)| *position)?;
        (
            format!("{} ", &normalized[..cut.0]),
            Some(format!(" {}", &normalized[cut.0 + cut.1..])),
        )
    } else {
        (normalized.clone(), None)
    };
    let mut filters = Map::new();
    for (name, schema) in properties(search) {
        let values = enum_values(&schema);
        if values.is_empty() {
            continue;
        }
        // "where status is open" names the field; otherwise any mentioned value of the field.
        let explicit = selection
            .find(&format!(" {} is ", name.replace('_', " ")))
            .map(|position| format!(" {}", &selection[position + name.len() + 5..]));
        let scope = explicit.as_deref().unwrap_or(&selection);
        if let Some((value, _)) = mentioned_value(scope, &values) {
            filters.insert(name, Value::String(value));
        }
    }
    if let Some((after, before)) = date_range(&selection, today) {
        let names: Vec<String> = properties(search).keys().cloned().collect();
        let after_name = names.iter().find(|name| name.ends_with("_after"));
        let before_name = names.iter().find(|name| name.ends_with("_before"));
        if let (Some(after_name), Some(before_name)) = (after_name, before_name) {
            filters.insert(after_name.clone(), Value::String(after.to_string()));
            filters.insert(before_name.clone(), Value::String(before.to_string()));
        }
    }
    let verb = match verb {
        "show" => Verb::Show,
        "delete" => {
            batch_operation(manifest, &entity, Tag::Delete)?;
            Verb::Delete
        }
        _ => {
            let update = batch_operation(manifest, &entity, Tag::Update)?;
            let target = target?;
            let (field, value) = properties(update)
                .into_iter()
                .filter_map(|(name, schema)| {
                    mentioned_value(&target, &enum_values(&schema))
                        .map(|(value, position)| (name, value, position))
                })
                .min_by_key(|(_, _, position)| *position)
                .map(|(name, value, _)| (name, value))?;
            Verb::Update { field, value }
        }
    };
    Some(Intent {
        verb,
        entity,
        filters,
    })
}

/// The planner as a [`ChatModel`]: it reads the conversation since the last user message and
/// proposes the next call, exactly as a model would.
#[derive(Clone)]
pub struct Planner {
    manifest: Arc<Manifest>,
    today: Arc<dyn Fn() -> CivilDate + Send + Sync>,
}

impl std::fmt::Debug for Planner {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Planner")
            .field("site", &self.manifest.site)
            .finish()
    }
}

/// The model name the planner reports.
pub const PLANNER_MODEL: &str = "heuristic";

impl Planner {
    /// A planner for `manifest`, reading today's date from `today`.
    #[must_use]
    pub fn new(manifest: Arc<Manifest>, today: Arc<dyn Fn() -> CivilDate + Send + Sync>) -> Self {
        Self { manifest, today }
    }

    /// The next proposal for a conversation (`messages` as sent to a model, `offered` the tool
    /// names this turn may call).
    #[must_use]
    pub fn propose(&self, messages: &[Message], offered: &[String]) -> ChatResponse {
        let Some(start) = messages
            .iter()
            .rposition(|message| matches!(message, Message::User(_)))
        else {
            return ChatResponse::text("What would you like to do?");
        };
        let Message::User(request) = &messages[start] else {
            return ChatResponse::text("What would you like to do?");
        };
        let Some(intent) = parse(request, &self.manifest, (self.today)()) else {
            return ChatResponse::text(not_understood(&self.manifest));
        };
        let Some(search) = search_operation(&self.manifest, &intent.entity) else {
            return ChatResponse::text("This site has no search operation for that.");
        };
        if let Some(answer) = needs_arguments(search, &intent) {
            return ChatResponse::text(answer);
        }
        let since: &[Message] = &messages[start + 1..];
        // A search of a large site's operations only made the next call possible.
        let last_result = since.iter().rev().find_map(|message| match message {
            Message::ToolResult {
                name,
                content,
                is_error,
                ..
            } if name != FIND_OPERATIONS => Some((name.as_str(), content, *is_error)),
            _ => None,
        });
        let call_number = since
            .iter()
            .filter(|message| matches!(message, Message::Assistant { .. }))
            .count()
            + 1;
        let call = |operation: &Operation, arguments: Value| {
            offered_call(offered, call_number, operation, arguments)
        };
        let mutation = match &intent.verb {
            Verb::Show => None,
            Verb::Delete => batch_operation(&self.manifest, &intent.entity, Tag::Delete),
            Verb::Update { .. } => batch_operation(&self.manifest, &intent.entity, Tag::Update),
        };
        match last_result {
            None => call(search, Value::Object(intent.filters.clone())),
            Some((_, content, true)) => {
                ChatResponse::text(format!("That did not work: {}", error_text(content)))
            }
            Some((name, content, false)) if name == search.name => {
                let Some(mutation) = mutation else {
                    return found_text(content, &intent.entity);
                };
                match mutation_arguments(mutation, &intent, content) {
                    Some(arguments) => call(mutation, arguments),
                    None => ChatResponse::text(format!(
                        "No {} match, so nothing was changed.",
                        intent.entity
                    )),
                }
            }
            Some((_, content, false)) => {
                let done = content
                    .get("items_done")
                    .or_else(|| content.get("deleted"))
                    .or_else(|| content.get("updated"))
                    .and_then(Value::as_u64)
                    .unwrap_or_default();
                let verb = if matches!(intent.verb, Verb::Delete) {
                    "Deleted"
                } else {
                    "Updated"
                };
                ChatResponse::text(format!("{verb} {done} {}.", intent.entity))
            }
        }
    }
}

/// Call number `call_number` of `operation` with `arguments`, when this turn offers it; on a
/// large site that offers what a search found, a search for it first, as a model would.
fn offered_call(
    offered: &[String],
    call_number: usize,
    operation: &Operation,
    arguments: Value,
) -> ChatResponse {
    if offered.iter().any(|name| name == &operation.name) {
        ChatResponse::tool_calls(vec![ToolCall::new(
            format!("plan_{call_number}"),
            operation.name.clone(),
            arguments,
        )])
    } else if offered.iter().any(|name| name == FIND_OPERATIONS) {
        ChatResponse::tool_calls(vec![ToolCall::new(
            format!("plan_{call_number}"),
            FIND_OPERATIONS,
            json!({"query": operation.name}),
        )])
    } else {
        ChatResponse::text(format!(
            "`{}` is not available in this session.",
            operation.name
        ))
    }
}

/// What a search that changes nothing answers: how many `entity` it found.
fn found_text(content: &Value, entity: &str) -> ChatResponse {
    let total = content
        .get("total")
        .and_then(Value::as_u64)
        .unwrap_or(result_items(content).len() as u64);
    ChatResponse::text(format!("Found {total} {entity} matching your request."))
}

/// The arguments of `mutation` over the items the search found (`content`), with the update's
/// field when the request is one; `None` when it found none.
fn mutation_arguments(mutation: &Operation, intent: &Intent, content: &Value) -> Option<Value> {
    let ids: Vec<Value> = result_items(content)
        .iter()
        .filter_map(|item| item.get("id").cloned())
        .collect();
    if ids.is_empty() {
        return None;
    }
    let key = mutation
        .batch_argument
        .clone()
        .unwrap_or_else(|| "ids".to_owned());
    let mut arguments = Map::new();
    arguments.insert(key, Value::Array(ids));
    if let Verb::Update { field, value } = &intent.verb {
        arguments.insert(field.clone(), Value::String(value.clone()));
    }
    Some(Value::Object(arguments))
}

/// When the search needs arguments the request cannot give (a repository's owner and name, say),
/// what to type instead: a call code would refuse helps nobody.
fn needs_arguments(search: &Operation, intent: &Intent) -> Option<String> {
    let missing: Vec<&str> = search
        .required_arguments()
        .filter(|name| !intent.filters.contains_key(*name))
        .collect();
    if missing.is_empty() {
        return None;
    }
    let mut command = format!("/tool {}", search.name);
    for name in &missing {
        command.push_str(&format!(" --{name} VALUE"));
    }
    for (name, value) in &intent.filters {
        if let Some(text) = value.as_str() {
            command.push_str(&format!(" --{name} {text}"));
        }
    }
    let needed = missing
        .iter()
        .map(|name| name.replace('_', " "))
        .collect::<Vec<_>>()
        .join(", ");
    let how = if search.offered_manually() {
        format!(" Run it by hand with the values filled in: {command}")
    } else {
        String::new()
    };
    Some(format!(
        "To find the {} I need {needed}, which your request does not say, and without a language model I cannot ask for them.{how}",
        intent.entity
    ))
}

/// The answer to a request the planner cannot read: the phrasings it knows when the site has
/// bulk operations it can plan, else (another site) the manual tools, with one spelled out.
fn not_understood(manifest: &Manifest) -> String {
    let plannable = manifest.operations().iter().find(|operation| {
        operation.is_mutating()
            && operation.has(Tag::Batch)
            && search_operation(manifest, &operation.entity).is_some()
    });
    if let Some(operation) = plannable {
        let entity = &operation.entity;
        return format!(
            "Without a language model I understand requests like \"show {entity} where status is open\", \
             \"mark all open {entity} as done\" or \"delete all completed {entity} from last month\". \
             For anything else, use the manual tools (type /tools, then /tool NAME --field value)."
        );
    }
    let example = manifest
        .operations()
        .iter()
        .find(|operation| operation.offered_manually())
        .map(|operation| {
            let required: Vec<String> = operation
                .required_arguments()
                .map(|name| format!(" --{name} VALUE"))
                .collect();
            format!(
                " For example: /tool {}{}",
                operation.name,
                required.concat()
            )
        })
        .unwrap_or_default();
    format!(
        "No language model is configured, so I cannot read requests in words on {site}. \
         You can still do everything by hand: type /tools to list what {site} offers, then \
         /tool NAME --field value to run one; changes still ask for your approval first.{example}",
        site = manifest.site
    )
}

/// The items of a search result: its `items` array, or the result itself when it is an array.
#[must_use]
pub fn result_items(content: &Value) -> Vec<Value> {
    content
        .get("items")
        .and_then(Value::as_array)
        .or_else(|| content.as_array())
        .cloned()
        .unwrap_or_default()
}

fn error_text(content: &Value) -> String {
    content
        .get("error")
        .and_then(Value::as_str)
        .map_or_else(|| content.to_string(), str::to_owned)
}

#[async_trait::async_trait]
impl ChatModel for Planner {
    fn name(&self) -> ModelName {
        ModelName::new(PLANNER_MODEL, "planner")
    }

    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, ModelError> {
        let offered: Vec<String> = request.tools.iter().map(|tool| tool.name.clone()).collect();
        Ok(self.propose(&request.messages, &offered))
    }
}

/// The planner's proposal for a request's first step, for tests and the benchmark: the search
/// call with its filters.
#[must_use]
pub fn first_call(intent: &Intent, manifest: &Manifest) -> Option<(String, Value)> {
    search_operation(manifest, &intent.entity)
        .map(|search| (search.name.clone(), json!(intent.filters)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TODAY: CivilDate = CivilDate {
        year: 2026,
        month: 11,
        day: 23,
    };

    #[test]
    fn on_a_large_site_the_planner_finds_the_operation_before_calling_it(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let mut paths = serde_json::Map::new();
        paths.insert(
            "/tasks".to_owned(),
            json!({"get": {"operationId": "listTasks", "tags": ["tasks"], "parameters": [
                {"name": "status", "in": "query", "schema": {"type": "string", "enum": ["open", "done"]}}]}}),
        );
        for number in 0..30 {
            paths.insert(
                format!("/other{number}"),
                json!({"get": {"operationId": format!("other{number}"), "tags": ["other"]}}),
            );
        }
        let manifest = crate::chat::manifest::openapi::import(
            &json!({"openapi": "3.1.0", "info": {"title": "t"}, "servers": [{"url": "/api"}], "paths": paths}),
            &crate::chat::manifest::openapi::Overlay::default(),
        )?;
        let planner = Planner::new(Arc::new(manifest), Arc::new(|| TODAY));
        let mut messages = vec![Message::User("show tasks where status is open".to_owned())];
        let first = planner.propose(&messages, &[FIND_OPERATIONS.to_owned()]);
        let [search] = first.tool_calls.as_slice() else {
            return Err(format!("expected a search: {first:?}").into());
        };
        assert_eq!(search.name, FIND_OPERATIONS);
        messages.push(Message::assistant(&first));
        messages.push(Message::tool_result(
            search,
            json!({"operations": [{"name": "listTasks"}]}),
        ));
        let offered = [FIND_OPERATIONS.to_owned(), "listTasks".to_owned()];
        let second = planner.propose(&messages, &offered);
        let [call] = second.tool_calls.as_slice() else {
            return Err(format!("expected the list call: {second:?}").into());
        };
        assert_eq!(call.name, "listTasks");
        assert_eq!(
            call.arguments.as_ref().ok(),
            Some(&json!({"status": "open"}))
        );
        Ok(())
    }

    #[test]
    fn a_search_that_needs_what_the_request_does_not_say_is_answered_with_the_command(
    ) -> Result<(), Box<dyn std::error::Error>> {
        // GitHub's issue list needs the repository's owner and name; "show me the open issues"
        // names neither, so a call would only be refused by the schema check.
        let manifest = crate::chat::manifest::openapi::import(
            &json!({"openapi": "3.1.0", "info": {"title": "GitHub"}, "servers": [{"url": "/api"}], "paths": {
                "/repos/{owner}/{repo}/issues": {"get": {"operationId": "issues/list-for-repo", "tags": ["issues"], "parameters": [
                    {"name": "owner", "in": "path", "required": true, "schema": {"type": "string"}},
                    {"name": "repo", "in": "path", "required": true, "schema": {"type": "string"}},
                    {"name": "state", "in": "query", "schema": {"type": "string", "enum": ["open", "closed", "all"]}}]}}}}),
            &crate::chat::manifest::openapi::Overlay::default(),
        )?;
        let planner = Planner::new(Arc::new(manifest), Arc::new(|| TODAY));
        let messages = vec![Message::User("show me the open issues".to_owned())];
        let answer = planner.propose(&messages, &["issues_list-for-repo".to_owned()]);
        assert!(answer.tool_calls.is_empty(), "{answer:?}");
        let text = answer.text.unwrap_or_default();
        assert!(text.contains("I need owner, repo"), "{text}");
        assert!(
            text.contains("/tool issues_list-for-repo --owner VALUE --repo VALUE --state open"),
            "{text}"
        );
        Ok(())
    }

    fn demo() -> Result<Manifest, super::super::manifest::ManifestError> {
        Manifest::from_json(crate::demo::items::MANIFEST_JSON)
    }

    #[test]
    fn the_three_demo_requests_parse() -> Result<(), Box<dyn std::error::Error>> {
        let manifest = demo()?;
        let cases = [
            (
                "delete all completed items from last month",
                Verb::Delete,
                json!({"status": "completed", "updated_after": "2026-10-01", "updated_before": "2026-11-01"}),
            ),
            (
                "mark all open items as done",
                Verb::Update {
                    field: "status".into(),
                    value: "completed".into(),
                },
                json!({"status": "open"}),
            ),
            (
                "show items where status is open",
                Verb::Show,
                json!({"status": "open"}),
            ),
            (
                "show completed items",
                Verb::Show,
                json!({"status": "completed"}),
            ),
            (
                "Please show me the high priority items in progress",
                Verb::Show,
                json!({"status": "in_progress", "priority": "high"}),
            ),
            ("list items", Verb::Show, json!({})),
            (
                "set all in progress items to open",
                Verb::Update {
                    field: "status".into(),
                    value: "open".into(),
                },
                json!({"status": "in_progress"}),
            ),
        ];
        for (text, verb, filters) in cases {
            let intent = parse(text, &manifest, TODAY).ok_or(format!("`{text}` did not parse"))?;
            assert_eq!(intent.verb, verb, "{text}");
            assert_eq!(Value::Object(intent.filters), filters, "{text}");
            assert_eq!(intent.entity, "items");
        }
        Ok(())
    }

    #[test]
    fn requests_outside_the_grammar_are_not_guessed() -> Result<(), Box<dyn std::error::Error>> {
        let manifest = demo()?;
        for text in [
            "hello there",
            "delete the invoices",
            "what's the weather",
            "mark all open items",
        ] {
            assert_eq!(parse(text, &manifest, TODAY), None, "{text}");
        }
        Ok(())
    }

    #[test]
    fn the_planner_previews_then_proposes_the_bulk_call_on_the_previewed_ids(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let manifest = Arc::new(demo()?);
        let planner = Planner::new(manifest.clone(), Arc::new(|| TODAY));
        let offered: Vec<String> = manifest
            .operations()
            .iter()
            .map(|operation| operation.name.clone())
            .collect();
        let mut messages = vec![Message::user("delete all completed items from last month")];
        let first = planner.propose(&messages, &offered);
        assert_eq!(first.tool_calls.len(), 1);
        assert_eq!(first.tool_calls[0].name, "searchItems");
        messages.push(Message::assistant(&first));
        messages.push(Message::tool_result(
            &first.tool_calls[0],
            json!({"items": [{"id": "item-0001"}, {"id": "item-0002"}], "total": 2}),
        ));
        let second = planner.propose(&messages, &offered);
        assert_eq!(second.tool_calls[0].name, "bulkDeleteItems");
        assert_eq!(
            second.tool_calls[0].arguments,
            Ok(json!({"ids": ["item-0001", "item-0002"]}))
        );
        messages.push(Message::assistant(&second));
        messages.push(Message::tool_result(
            &second.tool_calls[0],
            json!({"deleted": 2}),
        ));
        assert_eq!(
            planner.propose(&messages, &offered).text.as_deref(),
            Some("Deleted 2 items.")
        );
        Ok(())
    }
}
