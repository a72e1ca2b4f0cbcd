//! The Gemini `generateContent` provider (`POST {base}/v1beta/models/{model}:generateContent`).
//!
//! Gemini's shape: `contents` with roles `user`/`model`, each a list of `parts` (`text`,
//! `functionCall {name, args}`, `functionResponse {name, response}`), a separate
//! `systemInstruction`, and `tools: [{functionDeclarations: [...]}]`. Three differences matter
//! to the agent loop and are absorbed here:
//!
//! - Function calls usually carry no id. Calls get `call_N`, numbered across the conversation
//!   (N counts the calls already in the request), so ids are stable and unique; results are
//!   matched back by name and order, as Gemini does.
//! - Declarations take an `OpenAPI` subset of JSON Schema, not JSON Schema: `$ref`, `$defs`,
//!   `additionalProperties`, `$schema`, `const`, `oneOf`, type arrays and most formats are
//!   rejected. [`gemini_schema`] inlines references and rewrites or drops the rest.
//! - Thinking models attach a `thoughtSignature` to function-call parts that must be sent back
//!   with the call; it rides in [`ToolCall::signature`].

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::{
    model::{
        ChatModel, ChatRequest, ChatResponse, Message, ModelError, ModelName, Result, StopReason,
        ToolCall, Usage,
    },
    openai::check_base_url,
    transport::{self, HttpReply},
};
use crate::config::Secret;

/// Google's endpoint for the Gemini API.
pub const GEMINI_BASE_URL: &str = "https://generativelanguage.googleapis.com";

/// How deep `$ref`s are followed before a recursive schema is cut to a plain object.
const MAX_REF_DEPTH: usize = 8;

/// Where and how to reach Gemini.
#[derive(Clone, Debug)]
pub struct GeminiConfig {
    /// The model, e.g. `gemini-2.5-flash` (a leading `models/` is accepted).
    pub model: String,
    /// The base URL, without `/v1beta`.
    pub base_url: String,
    /// The key, sent as `x-goog-api-key` (never in the URL).
    pub api_key: Secret,
}

impl GeminiConfig {
    /// Google's endpoint with `api_key`.
    #[must_use]
    pub fn new(model: impl Into<String>, api_key: Secret) -> Self {
        Self {
            model: model.into(),
            base_url: GEMINI_BASE_URL.into(),
            api_key,
        }
    }

    /// Uses another base URL (a proxy or a test server).
    #[must_use]
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }
}

/// A Gemini model behind `generateContent`.
#[derive(Clone, Debug)]
pub struct GeminiChat {
    config: GeminiConfig,
    url: String,
    client: reqwest::Client,
}

impl GeminiChat {
    /// Builds the provider; nothing is sent yet.
    ///
    /// # Errors
    /// Returns [`ModelError::BadConfig`] when the base URL is not an http(s) URL, the model name
    /// is empty or the HTTP client cannot be built.
    pub fn new(mut config: GeminiConfig) -> Result<Self> {
        check_base_url(&config.base_url, "base URL")?;
        config.model = config
            .model
            .strip_prefix("models/")
            .unwrap_or(&config.model)
            .to_owned();
        if config.model.is_empty() || config.model.contains(['/', '?', '#']) {
            return Err(ModelError::bad_config(
                "model",
                format!("`{}` is not a Gemini model name", config.model),
            ));
        }
        let url = transport::join(
            &config.base_url,
            &format!("v1beta/models/{}:generateContent", config.model),
        );
        Ok(Self {
            config,
            url,
            client: transport::client()?,
        })
    }

    fn body(request: &ChatRequest) -> Value {
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
                        let args = call
                            .arguments
                            .as_ref()
                            .ok()
                            .filter(|value| value.is_object())
                            .cloned()
                            .unwrap_or_else(|| json!({}));
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
        if !request.tools.is_empty() {
            let declarations: Vec<Value> = request
                .tools
                .iter()
                .map(|tool| {
                    let mut declaration =
                        json!({"name": tool.name, "description": tool.description});
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
        if !generation_config.is_empty() {
            body["generationConfig"] = Value::Object(generation_config);
        }
        body
    }
}

/// Rewrites a JSON Schema into the subset Gemini's `parameters` accept: `$ref`s inlined (from
/// `$defs` or `definitions`), `["T", "null"]` and `null` alternatives turned into
/// `nullable`, `const` and string-constant `oneOf`s into `enum`, other `oneOf` into `anyOf`,
/// single-member `allOf` merged, and unsupported keywords (`additionalProperties`, `$schema`,
/// `default`, `examples`, unknown `format`s, …) dropped.
#[must_use]
pub fn gemini_schema(schema: &Value) -> Value {
    convert(schema, schema, 0)
}

fn convert(schema: &Value, root: &Value, depth: usize) -> Value {
    let Some(object) = schema.as_object() else {
        // `true` (anything) and other shorthands: say nothing about the value.
        return json!({});
    };
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        let target = reference
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer));
        let mut resolved = match target {
            Some(target) if depth < MAX_REF_DEPTH => convert(target, root, depth + 1),
            _ => json!({"type": "object"}),
        };
        for key in ["description", "title"] {
            if let Some(value) = object.get(key) {
                resolved[key] = value.clone();
            }
        }
        return resolved;
    }

    let mut out = Map::new();
    let mut nullable = object.get("nullable") == Some(&Value::Bool(true));

    match object.get("type") {
        Some(Value::String(kind)) if kind == "null" => nullable = true,
        Some(Value::String(kind)) => {
            out.insert("type".into(), json!(kind));
        }
        Some(Value::Array(kinds)) => {
            let kinds: Vec<&str> = kinds.iter().filter_map(Value::as_str).collect();
            nullable |= kinds.contains(&"null");
            let kinds: Vec<&str> = kinds.into_iter().filter(|kind| *kind != "null").collect();
            match kinds.as_slice() {
                [kind] => {
                    out.insert("type".into(), json!(kind));
                }
                [] => {}
                several => {
                    let alternatives: Vec<Value> =
                        several.iter().map(|kind| json!({"type": kind})).collect();
                    out.insert("anyOf".into(), Value::Array(alternatives));
                }
            }
        }
        _ => {}
    }

    for key in [
        "title",
        "description",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "minProperties",
        "maxProperties",
        "propertyOrdering",
    ] {
        if let Some(value) = object.get(key) {
            out.insert(key.into(), value.clone());
        }
    }

    if let Some(Value::String(format)) = object.get("format") {
        let allowed = matches!(
            (out.get("type").and_then(Value::as_str), format.as_str()),
            (Some("string"), "enum" | "date-time")
                | (Some("integer"), "int32" | "int64")
                | (Some("number"), "float" | "double")
        );
        if allowed {
            out.insert("format".into(), json!(format));
        }
    }

    let mut constants: Vec<Value> = Vec::new();
    if let Some(constant) = object.get("const") {
        constants.push(constant.clone());
    }
    if let Some(Value::Array(values)) = object.get("enum") {
        constants.extend(values.iter().cloned());
    }
    if !constants.is_empty() {
        nullable |= constants.iter().any(Value::is_null);
        let strings: Vec<Value> = constants
            .into_iter()
            .filter(|value| !value.is_null())
            .collect();
        if strings.iter().all(Value::is_string) && !strings.is_empty() {
            out.insert("type".into(), json!("string"));
            out.insert("enum".into(), Value::Array(strings));
        }
    }

    if let Some(Value::Object(properties)) = object.get("properties") {
        let converted: Map<String, Value> = properties
            .iter()
            .map(|(name, property)| (name.clone(), convert(property, root, depth)))
            .collect();
        if let Some(Value::Array(required)) = object.get("required") {
            let required: Vec<Value> = required
                .iter()
                .filter(|name| {
                    name.as_str()
                        .is_some_and(|name| converted.contains_key(name))
                })
                .cloned()
                .collect();
            if !required.is_empty() {
                out.insert("required".into(), Value::Array(required));
            }
        }
        out.insert("properties".into(), Value::Object(converted));
        out.entry("type").or_insert_with(|| json!("object"));
    }

    match object.get("items") {
        Some(items @ Value::Object(_)) => {
            out.insert("items".into(), convert(items, root, depth));
        }
        Some(Value::Array(items)) => {
            if let Some(first) = items.first() {
                out.insert("items".into(), convert(first, root, depth));
            }
        }
        _ => {}
    }

    let alternatives: Vec<&Value> = ["anyOf", "oneOf"]
        .iter()
        .filter_map(|key| object.get(*key).and_then(Value::as_array))
        .flatten()
        .collect();
    if !alternatives.is_empty() {
        merge_alternatives(&mut out, &mut nullable, &alternatives, root, depth);
    }

    if let Some(Value::Array(parts)) = object.get("allOf") {
        for part in parts {
            if let Value::Object(part) = convert(part, root, depth) {
                for (key, value) in part {
                    out.entry(key).or_insert(value);
                }
            }
        }
    }

    if nullable {
        out.insert("nullable".into(), json!(true));
    }
    Value::Object(out)
}

/// Folds `anyOf`/`oneOf` into `out`: null alternatives become `nullable`, string constants an
/// `enum`, a single remaining alternative is merged in, several stay as `anyOf`.
fn merge_alternatives(
    out: &mut Map<String, Value>,
    nullable: &mut bool,
    alternatives: &[&Value],
    root: &Value,
    depth: usize,
) {
    let mut converted: Vec<Map<String, Value>> = Vec::new();
    for alternative in alternatives {
        let Value::Object(mut alternative) = convert(alternative, root, depth) else {
            continue;
        };
        if alternative.remove("nullable") == Some(Value::Bool(true)) {
            *nullable = true;
        }
        if !alternative.is_empty() {
            converted.push(alternative);
        }
    }
    let all_string_enums = converted.iter().all(|alternative| {
        alternative.get("type") == Some(&json!("string")) && alternative.contains_key("enum")
    });
    if all_string_enums && !converted.is_empty() {
        let values: Vec<Value> = converted
            .iter()
            .filter_map(|alternative| alternative.get("enum").and_then(Value::as_array))
            .flatten()
            .cloned()
            .collect();
        out.insert("type".into(), json!("string"));
        out.insert("enum".into(), Value::Array(values));
        return;
    }
    match converted.len() {
        0 => {}
        1 => {
            for (key, value) in converted.remove(0) {
                out.entry(key).or_insert(value);
            }
        }
        _ => {
            out.insert(
                "anyOf".into(),
                Value::Array(converted.into_iter().map(Value::Object).collect()),
            );
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GenerateResponse {
    #[serde(default)]
    candidates: Vec<Candidate>,
    prompt_feedback: Option<PromptFeedback>,
    usage_metadata: Option<UsageMetadata>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate {
    content: Option<Content>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Content {
    #[serde(default)]
    parts: Vec<Part>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Part {
    text: Option<String>,
    #[serde(default)]
    thought: bool,
    function_call: Option<FunctionCall>,
    thought_signature: Option<String>,
}

#[derive(Deserialize)]
struct FunctionCall {
    id: Option<String>,
    name: String,
    #[serde(default)]
    args: Value,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback {
    block_reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UsageMetadata {
    #[serde(default)]
    prompt_token_count: u64,
    #[serde(default)]
    candidates_token_count: u64,
    #[serde(default)]
    thoughts_token_count: u64,
}

#[derive(Deserialize)]
struct ErrorBody {
    error: ErrorDetail,
}

#[derive(Deserialize)]
struct ErrorDetail {
    #[serde(default)]
    details: Vec<Value>,
}

fn stop_reason(reason: Option<&str>) -> StopReason {
    match reason {
        None | Some("STOP") => StopReason::EndTurn,
        Some("MAX_TOKENS") => StopReason::MaxTokens,
        Some(
            "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY",
        ) => StopReason::Refused,
        Some(other) => StopReason::Other(other.to_owned()),
    }
}

/// How many tool calls the conversation already holds, so new `call_N` ids do not repeat.
fn calls_so_far(request: &ChatRequest) -> usize {
    request
        .messages
        .iter()
        .map(|message| match message {
            Message::Assistant { tool_calls, .. } => tool_calls.len(),
            _ => 0,
        })
        .sum()
}

fn parse_reply(reply: &HttpReply, first_call_number: usize) -> Result<ChatResponse> {
    let response: GenerateResponse = reply.json()?;
    let usage = response
        .usage_metadata
        .map_or_else(Usage::default, |usage| Usage {
            input_tokens: usage.prompt_token_count,
            // Gemini bills thinking tokens as output.
            output_tokens: usage.candidates_token_count + usage.thoughts_token_count,
        });
    let Some(candidate) = response.candidates.into_iter().next() else {
        return match response
            .prompt_feedback
            .and_then(|feedback| feedback.block_reason)
        {
            Some(block_reason) => Err(ModelError::Refused {
                reason: format!("the prompt was blocked ({block_reason})"),
            }),
            None => Err(ModelError::malformed("the reply has no candidates")),
        };
    };
    let mut texts = Vec::new();
    let mut tool_calls = Vec::new();
    for part in candidate
        .content
        .map(|content| content.parts)
        .unwrap_or_default()
    {
        if let Some(call) = part.function_call {
            let id = call
                .id
                .unwrap_or_else(|| format!("call_{}", first_call_number + tool_calls.len()));
            let arguments = if call.args.is_null() {
                json!({})
            } else {
                call.args
            };
            tool_calls.push(ToolCall {
                id,
                name: call.name,
                arguments: Ok(arguments),
                signature: part.thought_signature,
            });
        } else if let Some(text) = part.text.filter(|_| !part.thought) {
            texts.push(text);
        }
    }
    let text = Some(texts.concat()).filter(|text| !text.is_empty());
    let finish_reason = candidate.finish_reason;
    let stop_reason = stop_reason(finish_reason.as_deref()).given_tool_calls(&tool_calls);
    if stop_reason == StopReason::Refused && text.is_none() && tool_calls.is_empty() {
        return Err(ModelError::Refused {
            reason: format!(
                "the reply was blocked ({})",
                finish_reason.unwrap_or_default()
            ),
        });
    }
    Ok(ChatResponse {
        text,
        tool_calls,
        stop_reason,
        usage,
    })
}

/// The error for a non-2xx reply; a 429 may say how long to wait in its `RetryInfo` detail.
fn reply_error(reply: &HttpReply) -> ModelError {
    let error = reply.error();
    if let ModelError::RateLimited { retry_after: None } = error {
        let retry_after = serde_json::from_str::<ErrorBody>(&reply.body)
            .ok()
            .and_then(|body| {
                body.error.details.iter().find_map(|detail| {
                    detail["retryDelay"]
                        .as_str()
                        .and_then(transport::parse_seconds)
                })
            });
        return ModelError::RateLimited { retry_after };
    }
    error
}

#[async_trait::async_trait]
impl ChatModel for GeminiChat {
    fn name(&self) -> ModelName {
        ModelName::new("gemini", &self.config.model)
    }

    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse> {
        let http_request = self
            .client
            .post(&self.url)
            .header("x-goog-api-key", self.config.api_key.expose())
            .json(&Self::body(&request));
        let reply = transport::send(http_request).await?;
        if !reply.status.is_success() {
            return Err(reply_error(&reply));
        }
        parse_reply(&reply, calls_so_far(&request))
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::llm::{
        mock::{ensure, MockReply, MockServer, Received},
        model::ToolDefinition,
        retry::{RetryPolicy, Retrying},
    };

    const KEY: &str = "AIza-test-0123456789";

    /// Keywords Gemini's `parameters` reject; none may appear anywhere in a declaration.
    const REJECTED_KEYWORDS: [&str; 8] = [
        "additionalProperties",
        "$schema",
        "$ref",
        "$defs",
        "definitions",
        "const",
        "oneOf",
        "default",
    ];

    fn find_rejected_keyword(value: &Value) -> Option<String> {
        match value {
            Value::Object(object) => object.iter().find_map(|(key, inner)| {
                if REJECTED_KEYWORDS.contains(&key.as_str()) {
                    return Some(key.clone());
                }
                if key == "type" && !inner.is_string() {
                    return Some("type (not a string)".into());
                }
                // Property names are user data, not keywords: only look inside them.
                if key == "properties" {
                    return inner.as_object().and_then(|properties| {
                        properties.values().find_map(find_rejected_keyword)
                    });
                }
                find_rejected_keyword(inner)
            }),
            Value::Array(items) => items.iter().find_map(find_rejected_keyword),
            _ => None,
        }
    }

    /// Checks what `generateContent` requires: the path, the key header (never in the URL),
    /// `contents` of `user`/`model` turns made of known parts, as many function responses as
    /// the previous turn placed calls, and declarations in Gemini's schema subset.
    fn check_request(received: &Received) -> std::result::Result<(), String> {
        ensure(
            received.uri == "/v1beta/models/gemini-2.5-flash:generateContent",
            format!("path {}", received.uri),
        )?;
        ensure(
            received.header("x-goog-api-key") == Some(KEY),
            "missing x-goog-api-key",
        )?;
        let body = &received.body;
        let contents = body["contents"].as_array().ok_or("contents missing")?;
        ensure(!contents.is_empty(), "contents empty")?;
        let mut previous_calls = 0;
        let mut previous_role = "";
        for content in contents {
            let role = content["role"].as_str().ok_or("role missing")?;
            ensure(matches!(role, "user" | "model"), format!("bad role {role}"))?;
            ensure(
                role != previous_role,
                "consecutive turns with the same role",
            )?;
            let parts = content["parts"].as_array().ok_or("parts missing")?;
            ensure(!parts.is_empty(), "empty parts")?;
            let mut calls = 0;
            let mut responses = 0;
            for part in parts {
                let kinds = ["text", "functionCall", "functionResponse"]
                    .iter()
                    .filter(|kind| part.get(**kind).is_some())
                    .count();
                ensure(
                    kinds == 1,
                    format!("part must have exactly one kind: {part}"),
                )?;
                if let Some(call) = part.get("functionCall") {
                    ensure(role == "model", "functionCall outside a model turn")?;
                    ensure(
                        call["name"].is_string() && call["args"].is_object(),
                        "bad functionCall",
                    )?;
                    calls += 1;
                }
                if let Some(response) = part.get("functionResponse") {
                    ensure(role == "user", "functionResponse outside a user turn")?;
                    ensure(
                        response["name"].is_string(),
                        "functionResponse name missing",
                    )?;
                    ensure(
                        response["response"].is_object(),
                        "response must be an object",
                    )?;
                    responses += 1;
                }
            }
            if responses > 0 {
                ensure(
                    responses == previous_calls,
                    format!("{responses} function responses for {previous_calls} calls"),
                )?;
            }
            previous_calls = calls;
            previous_role = role;
        }
        if let Some(system) = body.get("systemInstruction") {
            ensure(
                system["parts"][0]["text"].is_string(),
                "systemInstruction needs a text part",
            )?;
        }
        if let Some(tools) = body.get("tools") {
            for declaration in tools[0]["functionDeclarations"]
                .as_array()
                .ok_or("functionDeclarations missing")?
            {
                ensure(declaration["name"].is_string(), "declaration name missing")?;
                if let Some(parameters) = declaration.get("parameters") {
                    if let Some(keyword) = find_rejected_keyword(parameters) {
                        return Err(format!("parameters use `{keyword}`, which Gemini rejects"));
                    }
                }
            }
        }
        Ok(())
    }

    async fn mock(replies: Vec<MockReply>) -> anyhow::Result<(MockServer, GeminiChat)> {
        let server = MockServer::start(check_request, replies).await?;
        let model = GeminiChat::new(
            GeminiConfig::new("models/gemini-2.5-flash", Secret::new(KEY))
                .with_base_url(&server.url),
        )?;
        Ok((server, model))
    }

    /// A `generateContent` reply as Google documents it.
    fn generated(parts: &Value, finish_reason: &str) -> Value {
        json!({
            "candidates": [{
                "content": {"parts": parts, "role": "model"},
                "finishReason": finish_reason,
                "index": 0,
                "safetyRatings": [
                    {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"}
                ]
            }],
            "usageMetadata": {
                "promptTokenCount": 70,
                "candidatesTokenCount": 20,
                "totalTokenCount": 90
            },
            "modelVersion": "gemini-2.5-flash",
            "responseId": "mAitaLmkHPPlz7IPvtfUqQ4"
        })
    }

    fn quick_policy(max_attempts: u32) -> RetryPolicy {
        RetryPolicy {
            max_attempts,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_secs(2),
            call_timeout: Duration::from_millis(300),
        }
    }

    /// A tool schema the way schemars writes one: `$schema`, `$defs`, `$ref`, `oneOf` of
    /// constants, `["string", "null"]`, `additionalProperties`.
    fn schemars_style_tool() -> ToolDefinition {
        ToolDefinition {
            name: "Table".into(),
            description: "Shows rows.".into(),
            parameters: json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {
                    "caption": {"type": ["string", "null"], "default": null},
                    "density": {"$ref": "#/$defs/Density", "description": "Row spacing."},
                    "columns": {"type": "array", "items": {"$ref": "#/$defs/Column"}, "minItems": 1},
                    "bind": {"type": "string", "format": "json-pointer"}
                },
                "required": ["columns", "bind"],
                "additionalProperties": false,
                "$defs": {
                    "Density": {"oneOf": [
                        {"type": "string", "const": "compact", "description": "Tight."},
                        {"type": "string", "const": "comfortable"}
                    ]},
                    "Column": {
                        "type": "object",
                        "properties": {"key": {"type": "string"}, "width": {"type": "integer", "format": "uint32", "minimum": 0}},
                        "required": ["key"],
                        "additionalProperties": false
                    }
                }
            }),
        }
    }

    fn request(messages: Vec<Message>) -> ChatRequest {
        ChatRequest {
            messages,
            tools: vec![
                schemars_style_tool(),
                ToolDefinition {
                    name: "Finish".into(),
                    description: "Ends the page.".into(),
                    parameters: json!({"type": "object", "properties": {}}),
                },
            ],
            max_tokens: Some(2048),
            temperature: Some(0.0),
        }
    }

    #[test]
    fn a_schemars_schema_is_rewritten_into_geminis_subset() {
        let converted = gemini_schema(&schemars_style_tool().parameters);
        assert_eq!(
            converted,
            json!({
                "type": "object",
                "properties": {
                    "caption": {"type": "string", "nullable": true},
                    "density": {"type": "string", "enum": ["compact", "comfortable"], "description": "Row spacing."},
                    "columns": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "properties": {"key": {"type": "string"}, "width": {"type": "integer", "minimum": 0}},
                            "required": ["key"]
                        }
                    },
                    "bind": {"type": "string"}
                },
                "required": ["columns", "bind"]
            })
        );
    }

    #[test]
    fn every_default_component_tool_is_declared_in_geminis_subset() {
        let catalog = tessera_app::catalog::Catalog::defaults();
        let body = GeminiChat::body(&ChatRequest {
            messages: vec![Message::User("Build the page.".into())],
            tools: crate::agent::tools::tool_definitions(&catalog),
            max_tokens: None,
            temperature: None,
        });
        let declarations = body["tools"][0]["functionDeclarations"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            declarations.len(),
            catalog.specs().len() + crate::agent::tools::AGENT_TOOLS.len()
        );
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
    fn a_recursive_schema_is_cut_instead_of_looping() {
        let tree = json!({
            "$ref": "#/$defs/Node",
            "$defs": {"Node": {"type": "object", "properties": {
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
            }}}
        });
        let converted = gemini_schema(&tree);
        assert!(find_rejected_keyword(&converted).is_none());
        assert_eq!(converted["type"], "object");
    }

    #[test]
    fn mixed_alternatives_stay_as_any_of_and_nulls_become_nullable() {
        let converted = gemini_schema(&json!({"anyOf": [
            {"type": "integer"}, {"type": "string", "maxLength": 3}, {"type": "null"}
        ]}));
        assert_eq!(
            converted,
            json!({"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 3}], "nullable": true})
        );
    }

    #[tokio::test]
    async fn a_text_reply_maps_content_stop_reason_and_usage() -> anyhow::Result<()> {
        let (server, model) = mock(vec![MockReply::ok(generated(
            &json!([{"text": "Hello! "}, {"text": "How can I help?"}]),
            "STOP",
        ))])
        .await?;
        let response = model
            .chat(request(vec![
                Message::system("You build pages."),
                Message::user("Hi"),
            ]))
            .await?;
        assert_eq!(response.text.as_deref(), Some("Hello! How can I help?"));
        assert_eq!(response.stop_reason, StopReason::EndTurn);
        assert_eq!(
            response.usage,
            Usage {
                input_tokens: 70,
                output_tokens: 20
            }
        );
        let sent = &server.received()[0].body;
        assert_eq!(
            sent["systemInstruction"],
            json!({"parts": [{"text": "You build pages."}]})
        );
        assert_eq!(
            sent["contents"],
            json!([{"role": "user", "parts": [{"text": "Hi"}]}])
        );
        assert_eq!(
            sent["generationConfig"],
            json!({"maxOutputTokens": 2048, "temperature": 0.0})
        );
        let declarations = &sent["tools"][0]["functionDeclarations"];
        assert_eq!(
            declarations[0]["parameters"]["properties"]["density"]["enum"],
            json!(["compact", "comfortable"])
        );
        assert!(declarations[1].get("parameters").is_none());
        assert_eq!(model.name().to_string(), "gemini:gemini-2.5-flash");
        assert!(server.failures().is_empty(), "{:?}", server.failures());
        Ok(())
    }

    #[tokio::test]
    async fn parallel_function_calls_get_stable_ids_and_responses_go_back_by_name(
    ) -> anyhow::Result<()> {
        let (server, model) = mock(vec![
            MockReply::ok(generated(
                &json!([
                    {"functionCall": {"name": "Table", "args": {"columns": [{"key": "id"}], "bind": "/rows"}},
                     "thoughtSignature": "CiQB0e2Kb7xTmZ"},
                    {"functionCall": {"name": "Finish", "args": {}}}
                ]),
                "STOP",
            )),
            MockReply::ok(generated(
                &json!([{"functionCall": {"name": "Finish", "args": {}}}]),
                "STOP",
            )),
        ])
        .await?;
        let mut messages = vec![Message::user("Show the rows.")];
        let first = model.chat(request(messages.clone())).await?;
        assert_eq!(first.stop_reason, StopReason::ToolUse);
        let ids: Vec<&str> = first
            .tool_calls
            .iter()
            .map(|call| call.id.as_str())
            .collect();
        assert_eq!(ids, ["call_0", "call_1"]);
        assert_eq!(
            first.tool_calls[0].signature.as_deref(),
            Some("CiQB0e2Kb7xTmZ")
        );

        messages.push(Message::assistant(&first));
        messages.push(Message::tool_result(
            &first.tool_calls[0],
            json!({"id": "c1"}),
        ));
        messages.push(Message::tool_error(
            &first.tool_calls[1],
            json!("the form is missing"),
        ));
        let second = model.chat(request(messages)).await?;
        assert_eq!(second.tool_calls[0].id, "call_2");

        let sent = &server.received()[1].body["contents"];
        assert_eq!(
            sent[1],
            json!({"role": "model", "parts": [
                {"functionCall": {"name": "Table", "args": {"columns": [{"key": "id"}], "bind": "/rows"}},
                 "thoughtSignature": "CiQB0e2Kb7xTmZ"},
                {"functionCall": {"name": "Finish", "args": {}}}
            ]})
        );
        assert_eq!(
            sent[2],
            json!({"role": "user", "parts": [
                {"functionResponse": {"name": "Table", "response": {"id": "c1"}}},
                {"functionResponse": {"name": "Finish", "response": {"error": "the form is missing"}}}
            ]})
        );
        assert!(server.failures().is_empty(), "{:?}", server.failures());
        Ok(())
    }

    #[tokio::test]
    async fn a_429_with_a_retry_delay_is_waited_out_and_retried() -> anyhow::Result<()> {
        let (server, model) = mock(vec![
            MockReply::status(
                429,
                json!({"error": {
                    "code": 429,
                    "message": "You exceeded your current quota, please check your plan and billing details.",
                    "status": "RESOURCE_EXHAUSTED",
                    "details": [
                        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
                        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1s"}
                    ]
                }}),
            ),
            MockReply::ok(generated(&json!([{"text": "ok"}]), "STOP")),
        ])
        .await?;
        let model = Retrying::new(model, quick_policy(3));
        let started = Instant::now();
        let response = model.chat(request(vec![Message::user("Hi")])).await?;
        assert_eq!(response.text.as_deref(), Some("ok"));
        assert!(started.elapsed() >= Duration::from_secs(1));
        assert_eq!(server.received().len(), 2);
        Ok(())
    }

    #[tokio::test]
    async fn a_500_is_retried_then_reported_as_a_server_error() -> anyhow::Result<()> {
        let failure = || {
            MockReply::status(
                500,
                json!({"error": {"code": 500, "message": "An internal error has occurred.", "status": "INTERNAL"}}),
            )
        };
        let (server, model) = mock(vec![failure(), failure()]).await?;
        let model = Retrying::new(model, quick_policy(2));
        let outcome = model.chat(request(vec![Message::user("Hi")])).await;
        assert!(
            matches!(outcome, Err(ModelError::Server { status: 500, .. })),
            "{outcome:?}"
        );
        assert_eq!(server.received().len(), 2);
        Ok(())
    }

    #[tokio::test]
    async fn a_reply_slower_than_the_call_timeout_is_a_timeout() -> anyhow::Result<()> {
        let (server, model) = mock(vec![MockReply::ok(generated(
            &json!([{"text": "late"}]),
            "STOP",
        ))
        .after(Duration::from_secs(3))])
        .await?;
        let model = Retrying::new(model, quick_policy(1));
        assert_eq!(
            model.chat(request(vec![Message::user("Hi")])).await,
            Err(ModelError::Timeout)
        );
        assert_eq!(server.received().len(), 1);
        Ok(())
    }

    #[tokio::test]
    async fn a_blocked_prompt_is_refused() -> anyhow::Result<()> {
        let (_server, model) = mock(vec![MockReply::ok(json!({
            "promptFeedback": {"blockReason": "SAFETY", "safetyRatings": []},
            "usageMetadata": {"promptTokenCount": 8, "totalTokenCount": 8}
        }))])
        .await?;
        assert_eq!(
            model.chat(request(vec![Message::user("Hi")])).await,
            Err(ModelError::Refused {
                reason: "the prompt was blocked (SAFETY)".into()
            })
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_reply_stopped_for_safety_without_content_is_refused() -> anyhow::Result<()> {
        let (_server, model) = mock(vec![MockReply::ok(json!({
            "candidates": [{"finishReason": "SAFETY", "index": 0}]
        }))])
        .await?;
        let outcome = model.chat(request(vec![Message::user("Hi")])).await;
        assert!(
            matches!(outcome, Err(ModelError::Refused { .. })),
            "{outcome:?}"
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_reply_without_candidates_or_block_reason_is_malformed() -> anyhow::Result<()> {
        let (_server, model) = mock(vec![MockReply::ok(json!({"candidates": []}))]).await?;
        let outcome = model.chat(request(vec![Message::user("Hi")])).await;
        assert!(
            matches!(outcome, Err(ModelError::Malformed { .. })),
            "{outcome:?}"
        );
        Ok(())
    }

    #[test]
    fn the_key_never_shows_in_debug_output_or_the_url() -> anyhow::Result<()> {
        let model = GeminiChat::new(GeminiConfig::new("gemini-2.5-flash", Secret::new(KEY)))?;
        assert!(!format!("{model:?}").contains(KEY));
        assert!(!model.url.contains(KEY));
        Ok(())
    }
}
