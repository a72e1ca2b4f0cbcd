//! Request building: a [`ChatRequest`] as a `generateContent` body.
//!
//! System messages go to `systemInstruction`; the rest become `contents` of `user`/`model` turns
//! (consecutive messages of one role merged, as Gemini requires alternation), tool calls become
//! `functionCall` parts carrying their `thoughtSignature`, tool results `functionResponse`
//! parts; tools are declared in Gemini's schema subset ([`gemini_schema`]).

use serde_json::{json, Map, Value};

use super::schema::gemini_schema;
use crate::model::{ChatRequest, Message};

/// The JSON body of a `generateContent` call for `request`.
pub(super) fn body(request: &ChatRequest) -> Value {
    let mut system = Vec::new();
    let mut contents: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in &request.messages {
        let (role, parts) = match message {
            Message::System(text) => {
                system.push(text.as_str());
                continue;
            }
            Message::User(text) => ("user", vec![json!({"text": text})]),
            Message::Assistant { text, tool_calls } => {
                let text_part = text
                    .as_deref()
                    .filter(|text| !text.is_empty())
                    .map(|text| json!({"text": text}));
                let call_parts = tool_calls.iter().map(|call| {
                    let args = call.arguments_object();
                    let mut part = json!({"functionCall": {"name": call.name, "args": args}});
                    if let Some(signature) = &call.signature {
                        part["thoughtSignature"] = json!(signature);
                    }
                    part
                });
                ("model", text_part.into_iter().chain(call_parts).collect())
            }
            Message::ToolResult {
                name,
                content,
                is_error,
                ..
            } => {
                // Gemini's convention: `output` for a result, `error` for a failure.
                let response = match (is_error, content) {
                    (true, content) => json!({"error": content}),
                    (false, Value::Object(_)) => content.clone(),
                    (false, content) => json!({"output": content}),
                };
                (
                    "user",
                    vec![json!({"functionResponse": {"name": name, "response": response}})],
                )
            }
        };
        if parts.is_empty() {
            continue;
        }
        match contents.last_mut() {
            Some((last_role, last_parts)) if *last_role == role => last_parts.extend(parts),
            _ => contents.push((role, parts)),
        }
    }
    let mut body = json!({
        "contents": contents
            .into_iter()
            .map(|(role, parts)| json!({"role": role, "parts": parts}))
            .collect::<Vec<_>>(),
    });
    if !system.is_empty() {
        body["systemInstruction"] = json!({"parts": [{"text": system.join("\n\n")}]});
    }
    if request.response_format.is_none() && !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                let mut declaration = json!({"name": tool.name, "description": tool.description});
                let parameters = gemini_schema(&tool.parameters);
                // Gemini rejects an object schema with no properties; a tool without
                // arguments simply has no `parameters`.
                if parameters["properties"]
                    .as_object()
                    .is_some_and(|properties| !properties.is_empty())
                {
                    declaration["parameters"] = parameters;
                }
                declaration
            })
            .collect();
        body["tools"] = json!([{"functionDeclarations": declarations}]);
    }
    let mut generation_config = Map::new();
    if let Some(max_tokens) = request.max_tokens {
        generation_config.insert("maxOutputTokens".into(), json!(max_tokens));
    }
    if let Some(temperature) = request.temperature {
        generation_config.insert("temperature".into(), json!(temperature));
    }
    if let Some(format) = &request.response_format {
        generation_config.insert("responseMimeType".into(), json!("application/json"));
        let mut schema = gemini_schema(&format.schema);
        upper_types(&mut schema);
        generation_config.insert("responseSchema".into(), schema);
    }
    if !generation_config.is_empty() {
        body["generationConfig"] = Value::Object(generation_config);
    }
    body
}

/// Spells every `type` the way Gemini's `Schema` type names them (`OBJECT`, `STRING`, …), as its
/// published types and structured-output examples do.
fn upper_types(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            for (key, value) in object.iter_mut() {
                match (key.as_str(), value) {
                    ("type", Value::String(kind)) => *kind = kind.to_uppercase(),
                    // A property may be named `type`; only schemas below it are rewritten.
                    ("properties", Value::Object(properties)) => {
                        properties.values_mut().for_each(upper_types);
                    }
                    (_, value) => upper_types(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(upper_types),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemini::schema::tests::find_rejected_keyword;

    #[test]
    fn every_default_component_tool_is_declared_in_geminis_subset() {
        let tools = crate::mock::default_page_tools();
        let offered = tools.len();
        let body = body(&ChatRequest {
            messages: vec![Message::User("Build the page.".into())],
            tools,
            max_tokens: None,
            temperature: None,
            response_format: None,
        });
        let declarations = body["tools"][0]["functionDeclarations"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(declarations.len(), offered);
        for declaration in &declarations {
            let parameters = &declaration["parameters"];
            assert_eq!(
                find_rejected_keyword(parameters),
                None,
                "{}",
                declaration["name"]
            );
        }
        let select = declarations
            .iter()
            .find(|declaration| declaration["name"] == "Select")
            .map(|declaration| declaration["parameters"].clone())
            .unwrap_or_default();
        assert_eq!(
            select["properties"]["options"]["anyOf"][1],
            json!({"type": "object"}),
            "a bindable prop's type list becomes alternatives"
        );
    }

    #[test]
    fn system_text_is_an_instruction_and_turns_of_one_role_merge() {
        let body = body(&ChatRequest {
            messages: vec![
                Message::System("Be brief.".into()),
                Message::User("Hello".into()),
                Message::User("again".into()),
                Message::System("Use tools.".into()),
            ],
            tools: Vec::new(),
            max_tokens: Some(64),
            temperature: None,
            response_format: None,
        });
        assert_eq!(
            body,
            json!({
                "contents": [{"role": "user", "parts": [{"text": "Hello"}, {"text": "again"}]}],
                "systemInstruction": {"parts": [{"text": "Be brief.\n\nUse tools."}]},
                "generationConfig": {"maxOutputTokens": 64}
            })
        );
    }
}
