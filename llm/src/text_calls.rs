//! Tool calls a model wrote as text: found in a reply's text and turned into real [`ToolCall`]s.
//!
//! Small models served by llama.cpp or Ollama often answer a tool turn with JSON in their text
//! instead of the protocol's `tool_calls` — fenced (```` ```json {"name": …, "arguments": …} ``` ````),
//! bare, several in a row, a JSON array of them, or Hermes/Qwen style
//! `<tool_call>{…}</tool_call>`. Without this such a turn counts as "no tool calls" and is
//! wasted. [`adopt_text_tool_calls`] is the one place that reads them, for every provider; the
//! page agent loop and the chat orchestrator both call it.
//!
//! What counts as a call is deliberately narrow: a complete JSON object whose `name` is a tool
//! offered in this request and whose `arguments` (or `parameters`, as Llama writes it) is an
//! object, a string holding JSON, or `null`; the only other keys allowed are `id` and `type`.
//! A JSON value that is not such a call (or an array of only such calls) is skipped whole, so
//! nothing inside an unrelated object is picked out of it. Everything else in the text is left
//! alone, and a reply that already has `tool_calls` is never touched.

use std::ops::Range;

use serde_json::Value;

use super::model::{ChatResponse, MalformedArguments, StopReason, ToolCall, ToolDefinition};

/// Keys a written call may carry besides its name and arguments.
const EXTRA_KEYS: [&str; 2] = ["id", "type"];

/// When `response` has no tool calls, moves the calls its text holds (naming tools in `offered`)
/// into `tool_calls`, with ids `{id_prefix}1`, `{id_prefix}2`, …; the text keeps only what is
/// left around them. Returns how many calls were adopted (0 leaves `response` unchanged).
pub fn adopt_text_tool_calls(
    response: &mut ChatResponse,
    offered: &[ToolDefinition],
    id_prefix: &str,
) -> usize {
    if !response.tool_calls.is_empty() {
        return 0;
    }
    let Some(text) = response.text.as_deref() else {
        return 0;
    };
    let found = text_tool_calls(text, |name| offered.iter().any(|tool| tool.name == name));
    if found.calls.is_empty() {
        return 0;
    }
    let rest = remainder(text, &found.spans);
    response.text = (!rest.is_empty()).then_some(rest);
    response.tool_calls = found
        .calls
        .into_iter()
        .enumerate()
        .map(|(index, (name, arguments))| ToolCall {
            id: format!("{id_prefix}{}", index + 1),
            name,
            arguments,
            signature: None,
        })
        .collect();
    if matches!(response.stop_reason, StopReason::EndTurn) {
        response.stop_reason = StopReason::ToolUse;
    }
    response.tool_calls.len()
}

type Arguments = Result<Value, MalformedArguments>;

/// The calls found in a text and the byte ranges they took.
#[derive(Debug, Default)]
struct Found {
    calls: Vec<(String, Arguments)>,
    spans: Vec<Range<usize>>,
}

/// Every call in `text` naming a tool `is_offered` accepts, in order.
fn text_tool_calls(text: &str, is_offered: impl Fn(&str) -> bool) -> Found {
    let mut found = Found::default();
    let mut position = 0;
    while let Some(offset) = text[position..].find(['{', '[']) {
        let start = position + offset;
        let mut values = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        let Some(Ok(value)) = values.next() else {
            // Not JSON from here (prose, a truncated object): look from the next character.
            position = start + 1;
            continue;
        };
        let end = start + values.byte_offset();
        position = end;
        let Some(calls) = calls_in(&value) else {
            continue;
        };
        let offered: Vec<(String, Arguments)> = calls
            .into_iter()
            .filter(|(name, _)| is_offered(name))
            .collect();
        if !offered.is_empty() {
            found.calls.extend(offered);
            found.spans.push(start..end);
        }
    }
    found
}

/// The calls `value` is: one call object, or a non-empty array of only call objects.
fn calls_in(value: &Value) -> Option<Vec<(String, Arguments)>> {
    match value {
        Value::Object(_) => call_of(value).map(|call| vec![call]),
        Value::Array(items) if !items.is_empty() => items.iter().map(call_of).collect(),
        _ => None,
    }
}

/// `{"name": "…", "arguments": …}` as a call; `None` for anything else.
fn call_of(value: &Value) -> Option<(String, Arguments)> {
    let object = value.as_object()?;
    let name = object.get("name")?.as_str()?;
    let mut argument_keys = ["arguments", "parameters"]
        .into_iter()
        .filter(|key| object.contains_key(*key));
    let key = argument_keys.next()?;
    if argument_keys.next().is_some() {
        return None;
    }
    let known =
        |other: &String| other == "name" || other == key || EXTRA_KEYS.contains(&other.as_str());
    if !object.keys().all(known) {
        return None;
    }
    let arguments = match object.get(key)? {
        Value::Object(_) => Ok(object[key].clone()),
        Value::Null => Ok(Value::Object(serde_json::Map::new())),
        Value::String(raw) => {
            serde_json::from_str::<Value>(raw).map_err(|error| MalformedArguments {
                raw: raw.clone(),
                error: error.to_string(),
            })
        }
        _ => return None,
    };
    Some((name.to_owned(), arguments))
}

/// `text` without the calls' spans, without the fences and tags that held only a call, trimmed.
fn remainder(text: &str, spans: &[Range<usize>]) -> String {
    let mut rest = String::with_capacity(text.len());
    let mut from = 0;
    for span in spans {
        rest.push_str(&text[from..span.start]);
        from = span.end;
    }
    rest.push_str(&text[from..]);
    let emptied = regex::Regex::new(r"(?s)```[A-Za-z0-9_-]*\s*```|<tool_call>\s*</tool_call>")
        .map(|wrappers| wrappers.replace_all(&rest, "").into_owned())
        .unwrap_or(rest);
    emptied.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn offered(names: &[&str]) -> Vec<ToolDefinition> {
        names
            .iter()
            .map(|name| ToolDefinition {
                name: (*name).to_owned(),
                description: String::new(),
                parameters: json!({"type": "object"}),
            })
            .collect()
    }

    /// The reply after adoption: the calls as `(name, arguments)` and the text left.
    fn adopted(text: &str) -> (Vec<(String, Value)>, Option<String>) {
        let mut response = ChatResponse::text(text);
        let count = adopt_text_tool_calls(
            &mut response,
            &offered(&["Form", "Input", "Button", "Finish", "searchItems"]),
            "text_1_",
        );
        assert_eq!(count, response.tool_calls.len());
        let calls = response
            .tool_calls
            .iter()
            .map(|call| {
                let arguments = match &call.arguments {
                    Ok(value) => value.clone(),
                    Err(malformed) => json!({"malformed": malformed.raw}),
                };
                (call.name.clone(), arguments)
            })
            .collect();
        (calls, response.text)
    }

    fn call(name: &str, arguments: Value) -> (String, Value) {
        (name.to_owned(), arguments)
    }

    #[test]
    fn a_fenced_json_call_becomes_a_tool_call_and_the_fence_goes() {
        let text = "I'll start with the form.\n```json\n{\"name\": \"Form\", \"arguments\": {\"props\": {\"submitLabel\": \"Save\"}}}\n```\nThen the fields.";
        let (calls, rest) = adopted(text);
        assert_eq!(
            calls,
            vec![call("Form", json!({"props": {"submitLabel": "Save"}}))]
        );
        assert_eq!(
            rest.as_deref(),
            Some("I'll start with the form.\n\nThen the fields.")
        );
    }

    #[test]
    fn an_unlabelled_fence_and_bare_objects_in_a_row_are_all_read_in_order() {
        let text = "```\n{\"name\": \"Form\", \"arguments\": {\"props\": {}}}\n```\n{\"name\": \"Input\", \"arguments\": {\"props\": {\"name\": \"email\"}, \"parent\": \"c1\"}}\n{\"name\": \"Button\", \"arguments\": {\"props\": {\"label\": \"Go\"}, \"parent\": \"c1\"}}";
        let (calls, rest) = adopted(text);
        let names: Vec<&str> = calls.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["Form", "Input", "Button"]);
        assert_eq!(calls[1].1["parent"], "c1");
        assert_eq!(rest, None, "nothing but calls was written");
    }

    #[test]
    fn a_json_array_of_calls_is_read_as_several_calls() {
        let text = "```json\n[{\"name\": \"Input\", \"arguments\": {\"props\": {\"name\": \"a\"}}},\n {\"name\": \"Finish\", \"arguments\": {}}]\n```";
        let (calls, _) = adopted(text);
        assert_eq!(
            calls,
            vec![
                call("Input", json!({"props": {"name": "a"}})),
                call("Finish", json!({}))
            ]
        );
    }

    #[test]
    fn hermes_tool_call_tags_are_read_with_string_arguments() {
        let text = "<tool_call>\n{\"name\": \"Button\", \"arguments\": \"{\\\"props\\\": {\\\"label\\\": \\\"Send\\\"}}\"}\n</tool_call>\n<tool_call>{\"name\": \"Finish\", \"arguments\": null}</tool_call>";
        let (calls, rest) = adopted(text);
        assert_eq!(
            calls,
            vec![
                call("Button", json!({"props": {"label": "Send"}})),
                call("Finish", json!({}))
            ]
        );
        assert_eq!(rest, None);
    }

    #[test]
    fn braces_and_quotes_inside_strings_do_not_end_a_call_early() {
        let text = r#"Here: {"name": "Input", "arguments": {"props": {"label": "Use {curly} and \"quotes\" }}", "help": "[not an array"}}} done"#;
        let (calls, rest) = adopted(text);
        assert_eq!(calls.len(), 1);
        assert_eq!(
            calls[0].1["props"]["label"],
            "Use {curly} and \"quotes\" }}"
        );
        assert_eq!(calls[0].1["props"]["help"], "[not an array");
        assert_eq!(rest.as_deref(), Some("Here:  done"));
    }

    #[test]
    fn llama_style_parameters_and_an_id_or_type_key_are_accepted() {
        let (calls, _) = adopted(
            r#"{"type": "function", "id": "x", "name": "searchItems", "parameters": {"q": "red"}}"#,
        );
        assert_eq!(calls, vec![call("searchItems", json!({"q": "red"}))]);
    }

    #[test]
    fn string_arguments_that_are_not_json_arrive_as_malformed_for_the_loop_to_answer() {
        let mut response = ChatResponse::text(r#"{"name": "Form", "arguments": "{props: }"}"#);
        assert_eq!(
            adopt_text_tool_calls(&mut response, &offered(&["Form"]), "t_"),
            1
        );
        let malformed = response.tool_calls[0].arguments.as_ref().err();
        assert_eq!(malformed.map(|error| error.raw.as_str()), Some("{props: }"));
        assert_eq!(response.tool_calls[0].id, "t_1");
        assert_eq!(response.stop_reason, StopReason::ToolUse);
    }

    #[test]
    fn near_misses_are_not_calls() {
        let near_misses = [
            // A tool that was not offered.
            r#"{"name": "DropTables", "arguments": {}}"#,
            // No arguments key.
            r#"{"name": "Form"}"#,
            // Arguments of the wrong type.
            r#"{"name": "Form", "arguments": [1, 2]}"#,
            // The name is not a string.
            r#"{"name": ["Form"], "arguments": {}}"#,
            // Both argument spellings at once.
            r#"{"name": "Form", "arguments": {}, "parameters": {}}"#,
            // An unknown extra key: some other object that happens to have a name.
            r#"{"name": "Form", "arguments": {}, "email": "ana@example.com"}"#,
            // Truncated JSON.
            r#"```json
{"name": "Form", "arguments": {"props": {"submitLabel": "Save"}"#,
            // Python, not JSON.
            "{'name': 'Form', 'arguments': {}}",
            // A call nested inside another object is not a call of this turn.
            r#"{"plan": {"name": "Form", "arguments": {}}}"#,
            // An array mixing calls with other values.
            r#"[{"name": "Form", "arguments": {}}, "and then"]"#,
            // Prose only.
            "I would call Form with a submit label of Save [then Finish].",
        ];
        for text in near_misses {
            let (calls, rest) = adopted(text);
            assert!(calls.is_empty(), "{text} was read as {calls:?}");
            assert_eq!(rest.as_deref(), Some(text), "the text stays as it was");
        }
    }

    #[test]
    fn only_offered_names_of_several_are_kept() {
        let (calls, rest) = adopted(
            "{\"name\": \"Marquee\", \"arguments\": {}}\n{\"name\": \"Finish\", \"arguments\": {}}",
        );
        assert_eq!(calls, vec![call("Finish", json!({}))]);
        assert_eq!(
            rest.as_deref(),
            Some("{\"name\": \"Marquee\", \"arguments\": {}}")
        );
    }

    #[test]
    fn a_reply_with_protocol_tool_calls_is_left_alone() {
        let mut response =
            ChatResponse::tool_calls(vec![ToolCall::new("call_1", "Form", json!({}))]);
        response.text = Some(r#"{"name": "Finish", "arguments": {}}"#.into());
        let before = response.clone();
        assert_eq!(
            adopt_text_tool_calls(&mut response, &offered(&["Form", "Finish"]), "t_"),
            0
        );
        assert_eq!(response, before);
    }
}
