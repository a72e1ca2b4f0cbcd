//! What the model is offered each turn: every operation of a small site, or, on a large one, a
//! search tool and only the operations it found or already used, within a byte budget.
//!
//! A site of a thousand operations (GitHub's) would send megabytes of schemas with every model
//! call. Above [`SEARCH_ABOVE_OPERATIONS`], or when the definitions together pass the budget (14
//! of GitHub's operations already take 19 KB), the model gets [`FIND_OPERATIONS`]; what a search
//! returned, and what the model called, is read back from the conversation, so the offer needs no
//! state of its own and survives a restart or a paused approval. The newest finds win when the
//! budget ([`OFFER_BUDGET_BYTES`]) is tight. The offer only decides what the model *sees*: code
//! still checks every call against the session's scope, as for any other call.

use serde_json::{json, Value};

use super::manifest::{Manifest, Operation};
use crate::llm::{Message, ToolDefinition};

/// The search tool's name.
pub const FIND_OPERATIONS: &str = "find_operations";

/// A site with more operations than this (offered to the model) gets the search tool instead.
pub const SEARCH_ABOVE_OPERATIONS: usize = 30;

/// The most bytes of tool definitions (as JSON) offered in one model call.
pub const OFFER_BUDGET_BYTES: usize = 12 * 1024;

/// The most operations one search returns.
pub const FIND_LIMIT: usize = 8;

/// Whether `operations` are too many, or their definitions too large, to offer whole.
#[must_use]
pub fn needs_search(manifest: &Manifest, operations: &[&Operation]) -> bool {
    operations.len() > SEARCH_ABOVE_OPERATIONS
        || operations
            .iter()
            .map(|operation| bytes(&operation.tool_definition(manifest)))
            .sum::<usize>()
            > OFFER_BUDGET_BYTES
}

/// The search tool's definition.
#[must_use]
pub fn find_operations_tool(operations: usize) -> ToolDefinition {
    ToolDefinition {
        name: FIND_OPERATIONS.to_owned(),
        description: format!(
            "This site has {operations} operations; search them by words (what you want to do and on what, e.g. \"close issue\"). The operations found become callable tools on your next step."
        ),
        parameters: json!({
            "type": "object",
            "properties": {"query": {"type": "string", "description": "words describing the operation"}},
            "required": ["query"]
        }),
    }
}

/// The tools for the next model call: all of `operations`, or the search tool plus those the
/// conversation `history` found or used, newest first until the budget is spent.
#[must_use]
pub fn offer(
    manifest: &Manifest,
    operations: &[&Operation],
    history: &[Message],
) -> Vec<ToolDefinition> {
    // The same test as `needs_search`, on definitions built once: they are the offer if it passes.
    if operations.len() <= SEARCH_ABOVE_OPERATIONS {
        let all: Vec<ToolDefinition> = operations
            .iter()
            .map(|operation| operation.tool_definition(manifest))
            .collect();
        if offer_bytes(&all) <= OFFER_BUDGET_BYTES {
            return all;
        }
    }
    let search = find_operations_tool(operations.len());
    let mut spent = bytes(&search);
    let mut chosen: Vec<ToolDefinition> = Vec::new();
    // The newest message first; within one search's answer, its best match first.
    for name in wanted(history).iter().rev().flatten() {
        if chosen.iter().any(|tool| &tool.name == name) {
            continue;
        }
        let Some(operation) = operations.iter().find(|operation| &operation.name == name) else {
            continue;
        };
        let definition = operation.tool_definition(manifest);
        let size = bytes(&definition);
        if spent + size > OFFER_BUDGET_BYTES {
            continue;
        }
        spent += size;
        chosen.push(definition);
    }
    chosen.reverse();
    std::iter::once(search).chain(chosen).collect()
}

/// The bytes a set of tool definitions takes as JSON.
#[must_use]
pub fn offer_bytes(tools: &[ToolDefinition]) -> usize {
    tools.iter().map(bytes).sum()
}

fn bytes(tool: &ToolDefinition) -> usize {
    tool.name.len() + tool.description.len() + tool.parameters.to_string().len() + 40
}

/// Operation names per message, in the order the conversation met them: found by a search (in
/// its order, best first), or called.
fn wanted(history: &[Message]) -> Vec<Vec<String>> {
    let mut names = Vec::new();
    for message in history {
        match message {
            Message::ToolResult {
                name,
                content,
                is_error: false,
                ..
            } if name == FIND_OPERATIONS => {
                names.push(
                    content
                        .get("operations")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(|found| found.get("name").and_then(Value::as_str))
                        .map(str::to_owned)
                        .collect(),
                );
            }
            Message::Assistant { tool_calls, .. } => names.push(
                tool_calls
                    .iter()
                    .filter(|call| call.name != FIND_OPERATIONS)
                    .map(|call| call.name.clone())
                    .collect(),
            ),
            _ => {}
        }
    }
    names
}

/// The answer to a search: the best [`FIND_LIMIT`] operations by words shared with `query`.
#[must_use]
pub fn find(operations: &[&Operation], query: &str) -> Value {
    let words: Vec<String> = words_of(query)
        .into_iter()
        .filter(|word| !STOP_WORDS.contains(&word.as_str()))
        .collect();
    // More query words matched first; among equals, the operation whose name says least beyond
    // them (`issues_get` before `issues_get-comment` for "get an issue").
    let mut scored: Vec<((usize, std::cmp::Reverse<usize>), &Operation)> = operations
        .iter()
        .map(|operation| {
            let haystack = words_of(&format!(
                "{} {} {} {}",
                operation.name, operation.description, operation.entity, operation.category
            ));
            let matched = words
                .iter()
                .filter(|word| {
                    haystack
                        .iter()
                        .any(|candidate| candidate.starts_with(word.as_str()))
                })
                .count();
            let name_words = words_of(&operation.name).len();
            // The exact tool name (the offline planner asks by name) comes first.
            let matched = if operation.name == query.trim() {
                usize::MAX
            } else {
                matched
            };
            ((matched, std::cmp::Reverse(name_words)), *operation)
        })
        .filter(|((matched, _), _)| *matched > 0)
        .collect();
    scored.sort_by_key(|(score, _)| std::cmp::Reverse(*score));
    let found: Vec<Value> = scored
        .into_iter()
        .take(FIND_LIMIT)
        .map(|(_, operation)| {
            json!({
                "name": operation.name,
                "description": operation.description,
                "method": format!("{:?}", operation.http.method).to_ascii_uppercase(),
                "path": operation.http.path,
            })
        })
        .collect();
    if found.is_empty() {
        json!({"operations": [], "note": "nothing matched; try other words"})
    } else {
        json!({"operations": found, "note": "these are now callable tools"})
    }
}

/// Words a search ignores.
const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "to", "of", "for", "on", "in", "and", "or", "with", "by", "from", "my",
    "all", "this", "these", "that", "some", "me",
];

/// Lower-case words, split on anything but letters and digits, plurals folded to the singular.
fn words_of(text: &str) -> Vec<String> {
    let mut spaced = String::with_capacity(text.len());
    let mut previous_lower = false;
    for character in text.chars() {
        // camelCase names split into words: `listIssues` → `list issues`.
        if character.is_ascii_uppercase() && previous_lower {
            spaced.push(' ');
        }
        previous_lower = character.is_ascii_lowercase();
        spaced.push(character.to_ascii_lowercase());
    }
    spaced
        .split(|character: char| !character.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .filter(|word| word.len() > 1 || word.chars().all(|character| character.is_ascii_digit()))
        .map(|word| {
            word.strip_suffix('s')
                .filter(|stem| stem.len() > 2)
                .unwrap_or(word)
                .to_owned()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::manifest::openapi::{import, Overlay};
    use crate::llm::ToolCall;

    fn large_site() -> Result<Manifest, crate::chat::manifest::openapi::ImportError> {
        let mut paths = serde_json::Map::new();
        for number in 0..40 {
            paths.insert(
                format!("/things{number}/{{id}}"),
                json!({
                    "get": {"operationId": format!("getThing{number}"), "summary": format!("Get thing {number}"),
                        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}]},
                    "delete": {"operationId": format!("deleteThing{number}"), "summary": format!("Delete thing {number} for good"),
                        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}]}
                }),
            );
        }
        import(
            &json!({"openapi": "3.1.0", "info": {"title": "big"}, "servers": [{"url": "http://127.0.0.1:1"}], "paths": paths}),
            &Overlay::default(),
        )
    }

    #[test]
    fn a_large_site_offers_the_search_and_then_what_it_found(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let manifest = large_site()?;
        let operations: Vec<&Operation> = manifest.operations().iter().collect();
        let first = offer(&manifest, &operations, &[]);
        assert_eq!(
            first
                .iter()
                .map(|tool| tool.name.as_str())
                .collect::<Vec<_>>(),
            [FIND_OPERATIONS]
        );
        let found = find(&operations, "delete thing 7");
        assert_eq!(found["operations"][0]["name"], "deleteThing7");
        let call = ToolCall::new("f1", FIND_OPERATIONS, json!({"query": "delete thing 7"}));
        let history = [
            Message::Assistant {
                text: None,
                tool_calls: vec![call.clone()],
            },
            Message::tool_result(&call, found),
        ];
        let next = offer(&manifest, &operations, &history);
        assert!(next.iter().any(|tool| tool.name == "deleteThing7"));
        assert!(next.len() <= FIND_LIMIT + 1);
        assert!(offer_bytes(&next) <= OFFER_BUDGET_BYTES);
        Ok(())
    }
}
