//! The OpenAI-compatible chat-completions provider: OpenAI, Azure OpenAI, Ollama, vLLM,
//! llama.cpp's server, `OpenRouter` and anything else that speaks `POST {base}/chat/completions`.
//!
//! One provider covers them all because they share the wire format: `messages` with roles
//! `system`/`user`/`assistant`/`tool`, `tools: [{type: "function", function: {name, description,
//! parameters}}]`, assistant `tool_calls` whose `arguments` are a JSON *string*, tool results as
//! `role: "tool"` messages carrying `tool_call_id`. Streaming is off. What differs is configured
//! in [`OpenAiConfig`]: the base URL, the auth header (`Authorization: Bearer` or Azure's
//! `api-key` plus `?api-version=`), whether a key is needed at all (local servers), and which
//! field carries the token limit (OpenAI's current `max_completion_tokens` or the older
//! `max_tokens` that local servers understand).
//!
//! Replies are read leniently where compatible servers differ (a missing call id gets `call_N`,
//! `arguments` sent as an object is accepted, "stop" with tool calls counts as tool use) and
//! strictly where it matters: arguments that are not JSON become [`MalformedArguments`], never a
//! failed reply.

use serde::Deserialize;
use serde_json::{json, Value};

use super::{
    model::{
        ChatModel, ChatRequest, ChatResponse, MalformedArguments, Message, ModelError, ModelName,
        Result, StopReason, ToolCall, Usage,
    },
    transport::{self, HttpReply},
};
use tessera_settings::Secret;

/// OpenAI's own endpoint.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// Ollama's OpenAI-compatible endpoint on its default port.
pub const OLLAMA_BASE_URL: &str = "http://localhost:11434/v1";

/// How the key is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenAiAuth {
    /// `Authorization: Bearer KEY` (OpenAI, `OpenRouter`, vLLM, llama.cpp).
    Bearer,
    /// `api-key: KEY` (Azure OpenAI).
    ApiKeyHeader,
}

/// Which request field carries [`ChatRequest::max_tokens`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaxTokensField {
    /// `max_completion_tokens`: OpenAI's current field (its reasoning models reject the old one).
    MaxCompletionTokens,
    /// `max_tokens`: the field Ollama, vLLM and llama.cpp have always understood.
    MaxTokens,
}

impl MaxTokensField {
    fn key(self) -> &'static str {
        match self {
            Self::MaxCompletionTokens => "max_completion_tokens",
            Self::MaxTokens => "max_tokens",
        }
    }
}

/// Where and how to reach an OpenAI-compatible server.
#[derive(Clone, Debug)]
pub struct OpenAiConfig {
    /// The provider name reported in [`ModelName`] (`openai`, `ollama`, …).
    pub provider: String,
    /// The model, e.g. `gpt-4.1-mini` or `llama3.1`.
    pub model: String,
    /// The base URL; requests go to `{base_url}/chat/completions`.
    pub base_url: String,
    /// The key; `None` for servers that need none.
    pub api_key: Option<Secret>,
    /// How the key is sent.
    pub auth: OpenAiAuth,
    /// Azure's `api-version` query parameter, when set.
    pub api_version: Option<String>,
    /// Which field carries the token limit.
    pub max_tokens_field: MaxTokensField,
}

impl OpenAiConfig {
    /// OpenAI itself: bearer key, `max_completion_tokens`.
    #[must_use]
    pub fn openai(model: impl Into<String>, api_key: Secret) -> Self {
        Self {
            provider: "openai".into(),
            model: model.into(),
            base_url: OPENAI_BASE_URL.into(),
            api_key: Some(api_key),
            auth: OpenAiAuth::Bearer,
            api_version: None,
            max_tokens_field: MaxTokensField::MaxCompletionTokens,
        }
    }

    /// A local Ollama: no key, `max_tokens`.
    #[must_use]
    pub fn ollama(model: impl Into<String>) -> Self {
        Self {
            provider: "ollama".into(),
            model: model.into(),
            base_url: OLLAMA_BASE_URL.into(),
            api_key: None,
            auth: OpenAiAuth::Bearer,
            api_version: None,
            max_tokens_field: MaxTokensField::MaxTokens,
        }
    }

    /// Uses another base URL (vLLM, llama.cpp, `OpenRouter`, an Azure deployment URL).
    #[must_use]
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// Azure style: the key goes in `api-key` and every request carries `?api-version=`.
    #[must_use]
    pub fn with_azure_api_version(mut self, api_version: impl Into<String>) -> Self {
        self.auth = OpenAiAuth::ApiKeyHeader;
        self.api_version = Some(api_version.into());
        self
    }
}

/// A model behind an OpenAI-compatible chat-completions endpoint.
#[derive(Clone, Debug)]
pub struct OpenAiChat {
    config: OpenAiConfig,
    url: String,
    client: reqwest::Client,
}

impl OpenAiChat {
    /// Builds the provider; nothing is sent yet.
    ///
    /// # Errors
    /// Returns [`ModelError::BadConfig`] when the base URL is not an http(s) URL or the HTTP
    /// client cannot be built.
    pub fn new(config: OpenAiConfig) -> Result<Self> {
        check_base_url(&config.base_url, "base URL")?;
        let url = transport::join(&config.base_url, "chat/completions");
        Ok(Self {
            config,
            url,
            client: transport::client()?,
        })
    }

    /// The JSON body sent for `request`.
    fn body(&self, request: &ChatRequest) -> Value {
        let mut body = json!({
            "model": self.config.model,
            "messages": request.messages.iter().map(wire_message).collect::<Vec<_>>(),
            "stream": false,
        });
        if let Some(format) = &request.response_format {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": {"name": format.name, "strict": true, "schema": format.schema},
            });
        } else if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|tool| {
                    let mut function = json!({"name": tool.name, "description": tool.description});
                    if !tool.parameters.is_null() {
                        function["parameters"] = tool.parameters.clone();
                    }
                    json!({"type": "function", "function": function})
                })
                .collect();
        }
        if let Some(max_tokens) = request.max_tokens {
            body[self.config.max_tokens_field.key()] = json!(max_tokens);
        }
        if let Some(temperature) = request.temperature {
            body["temperature"] = json!(temperature);
        }
        body
    }
}

/// Checks that `base_url` is an absolute http(s) URL; `setting` names it in the error.
pub(crate) fn check_base_url(base_url: &str, setting: &str) -> Result<()> {
    match reqwest::Url::parse(base_url) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => Ok(()),
        Ok(_) => Err(ModelError::bad_config(
            setting,
            format!("`{base_url}` must be an http:// or https:// URL"),
        )),
        Err(error) => Err(ModelError::bad_config(
            setting,
            format!("`{base_url}` is not a URL: {error}"),
        )),
    }
}

fn wire_message(message: &Message) -> Value {
    match message {
        Message::System(text) => json!({"role": "system", "content": text}),
        Message::User(text) => json!({"role": "user", "content": text}),
        Message::Assistant { text, tool_calls } => {
            let mut wire = json!({"role": "assistant", "content": text});
            if tool_calls.is_empty() {
                // An assistant turn needs content or tool calls.
                wire["content"] = json!(text.as_deref().unwrap_or_default());
            } else {
                wire["tool_calls"] = tool_calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": call.arguments_text()},
                        })
                    })
                    .collect();
            }
            wire
        }
        Message::ToolResult {
            call_id,
            content,
            is_error,
            ..
        } => {
            let content = if *is_error {
                json!({"error": content}).to_string()
            } else {
                transport::content_text(content)
            };
            json!({"role": "tool", "tool_call_id": call_id, "content": content})
        }
    }
}

#[derive(Deserialize)]
struct Completion {
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct Choice {
    message: ResponseMessage,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct ResponseMessage {
    content: Option<String>,
    refusal: Option<String>,
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Deserialize)]
struct WireToolCall {
    id: Option<String>,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    #[serde(default)]
    arguments: Value,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

#[derive(Deserialize)]
struct ErrorBody {
    error: ErrorDetail,
}

#[derive(Deserialize)]
struct ErrorDetail {
    code: Option<Value>,
    #[serde(default)]
    message: String,
}

/// Turns `arguments` (a JSON string per the spec, an object from some servers) into a value.
fn parse_arguments(arguments: Value) -> std::result::Result<Value, MalformedArguments> {
    match arguments {
        Value::String(raw) if raw.trim().is_empty() => Ok(json!({})),
        Value::String(raw) => serde_json::from_str(&raw).map_err(|error| MalformedArguments {
            raw,
            error: error.to_string(),
        }),
        Value::Null => Ok(json!({})),
        other => Ok(other),
    }
}

fn stop_reason(finish_reason: Option<&str>) -> StopReason {
    match finish_reason {
        None | Some("stop") => StopReason::EndTurn,
        Some("tool_calls" | "function_call") => StopReason::ToolUse,
        Some("length") => StopReason::MaxTokens,
        Some("content_filter") => StopReason::Refused,
        Some(other) => StopReason::Other(other.to_owned()),
    }
}

/// Maps a 2xx chat-completions body to a [`ChatResponse`].
fn parse_reply(reply: &HttpReply) -> Result<ChatResponse> {
    let completion: Completion = reply.json()?;
    let Some(choice) = completion.choices.into_iter().next() else {
        return Err(ModelError::malformed("the reply has no choices"));
    };
    let tool_calls: Vec<ToolCall> = choice
        .message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(index, call)| ToolCall {
            id: call.id.unwrap_or_else(|| format!("call_{index}")),
            name: call.function.name,
            arguments: parse_arguments(call.function.arguments),
            signature: None,
        })
        .collect();
    let text = choice.message.content.filter(|text| !text.is_empty());
    let refusal = choice.message.refusal.filter(|text| !text.is_empty());
    let mut stop_reason =
        stop_reason(choice.finish_reason.as_deref()).given_tool_calls(&tool_calls);
    if refusal.is_some() {
        stop_reason = StopReason::Refused;
    }
    if stop_reason == StopReason::Refused && text.is_none() && tool_calls.is_empty() {
        return Err(ModelError::Refused {
            reason: refusal.unwrap_or_else(|| "the content filter stopped the reply".into()),
        });
    }
    let usage = completion.usage.map_or_else(Usage::default, |usage| Usage {
        input_tokens: usage.prompt_tokens,
        output_tokens: usage.completion_tokens,
    });
    Ok(ChatResponse {
        text,
        tool_calls,
        stop_reason,
        usage,
    })
}

/// The error for a non-2xx reply; Azure reports filtered prompts as 400 `content_filter`.
fn reply_error(reply: &HttpReply) -> ModelError {
    if reply.status == http::StatusCode::BAD_REQUEST {
        if let Ok(body) = serde_json::from_str::<ErrorBody>(&reply.body) {
            if body.error.code.as_ref().and_then(Value::as_str) == Some("content_filter") {
                return ModelError::Refused {
                    reason: body.error.message,
                };
            }
        }
    }
    reply.error()
}

#[async_trait::async_trait]
impl ChatModel for OpenAiChat {
    fn name(&self) -> ModelName {
        ModelName::new(&self.config.provider, &self.config.model)
    }

    fn page_mode(&self) -> super::model::PageMode {
        super::model::PageMode::Auto
    }

    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse> {
        let mut http_request = self.client.post(&self.url).json(&self.body(&request));
        if let Some(api_version) = &self.config.api_version {
            http_request = http_request.query(&[("api-version", api_version)]);
        }
        if let Some(key) = &self.config.api_key {
            http_request = match self.config.auth {
                OpenAiAuth::Bearer => http_request.bearer_auth(key.expose()),
                OpenAiAuth::ApiKeyHeader => http_request.header("api-key", key.expose()),
            };
        }
        let reply = transport::send(http_request).await?;
        if !reply.status.is_success() {
            return Err(reply_error(&reply));
        }
        parse_reply(&reply)
    }
}

#[cfg(test)]
mod tests {
    use std::{sync::Arc, time::Duration};

    use jsonschema::Validator;

    use super::*;
    use crate::{
        mock::{
            accept_all, ensure, quick_policy, reports_the_server_error, times_out,
            waits_out_the_rate_limit, MockReply, MockServer, Received,
        },
        model::ToolDefinition,
        retry::Retrying,
    };

    const KEY: &str = "sk-test-0123456789";

    /// Validators for request and response bodies, from the published `OpenAPI` extract.
    struct Spec {
        request: Validator,
        response: Validator,
    }

    impl Spec {
        fn load() -> anyhow::Result<Arc<Self>> {
            // Vendored in the repository (see llm/tests/data/openai/README.md) so the suite reads
            // nothing outside its own clone.
            let file: Value = serde_json::from_str(include_str!(
                "../tests/data/openai/openai-chat-completions.schema.json"
            ))?;
            let compile = |name: &str| -> anyhow::Result<Validator> {
                let schema = json!({
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "$ref": format!("#/$defs/{name}"),
                    "$defs": file["$defs"],
                });
                jsonschema::validator_for(&schema).map_err(|error| anyhow::anyhow!("{error}"))
            };
            Ok(Arc::new(Self {
                request: compile("CreateChatCompletionRequest")?,
                response: compile("CreateChatCompletionResponse")?,
            }))
        }

        fn check_request(&self, body: &Value) -> std::result::Result<(), String> {
            let errors: Vec<String> = self
                .request
                .iter_errors(body)
                .map(|error| format!("{} at {}", error, error.instance_path()))
                .collect();
            ensure(
                errors.is_empty(),
                format!("request does not match the spec: {errors:?}"),
            )
        }

        fn check_replies(&self, replies: &[MockReply]) -> anyhow::Result<()> {
            for reply in replies {
                let body = reply.body();
                if body.get("choices").is_none() {
                    continue;
                }
                let errors: Vec<String> = self
                    .response
                    .iter_errors(body)
                    .map(|error| error.to_string())
                    .collect();
                anyhow::ensure!(
                    errors.is_empty(),
                    "mock reply does not match the spec: {errors:?}"
                );
            }
            Ok(())
        }
    }

    /// A mock that validates every request against the spec, checks the OpenAI headers and
    /// replays `replies` (validated too).
    async fn openai_mock(
        replies: Vec<MockReply>,
        extra: impl Fn(&Received) -> std::result::Result<(), String> + Send + Sync + 'static,
    ) -> anyhow::Result<MockServer> {
        let spec = Spec::load()?;
        spec.check_replies(&replies)?;
        MockServer::start(
            move |received| {
                ensure(
                    received.uri.starts_with("/v1/chat/completions"),
                    format!("unexpected path {}", received.uri),
                )?;
                spec.check_request(&received.body)?;
                ensure(
                    received.body["stream"] == json!(false),
                    "streaming must be off",
                )?;
                extra(received)
            },
            replies,
        )
        .await
    }

    fn bearer(received: &Received) -> std::result::Result<(), String> {
        ensure(
            received.header("authorization") == Some(&format!("Bearer {KEY}")),
            "missing bearer key",
        )
    }

    fn provider(server: &MockServer) -> anyhow::Result<OpenAiChat> {
        Ok(OpenAiChat::new(
            OpenAiConfig::openai("gpt-4.1-mini", Secret::new(KEY))
                .with_base_url(format!("{}/v1", server.url)),
        )?)
    }

    /// A completion as OpenAI documents it (the "chat completion object" example).
    fn completion(message: &Value, finish_reason: &str) -> Value {
        json!({
            "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
            "object": "chat.completion",
            "created": 1_741_570_283,
            "model": "gpt-4.1-mini-2025-04-14",
            "choices": [{
                "index": 0,
                "message": message,
                "logprobs": null,
                "finish_reason": finish_reason,
            }],
            "usage": {
                "prompt_tokens": 82,
                "completion_tokens": 17,
                "total_tokens": 99,
                "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                "completion_tokens_details": {
                    "reasoning_tokens": 0,
                    "audio_tokens": 0,
                    "accepted_prediction_tokens": 0,
                    "rejected_prediction_tokens": 0
                }
            },
            "service_tier": "default",
            "system_fingerprint": "fp_06737a9306"
        })
    }

    fn text_reply(text: &str) -> Value {
        completion(
            &json!({"role": "assistant", "content": text, "refusal": null, "annotations": []}),
            "stop",
        )
    }

    fn tool_reply(calls: &[(&str, &str, &str)]) -> Value {
        let calls: Vec<Value> = calls
            .iter()
            .map(|(id, name, arguments)| {
                json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
            })
            .collect();
        completion(
            &json!({"role": "assistant", "content": null, "refusal": null, "tool_calls": calls, "annotations": []}),
            "tool_calls",
        )
    }

    fn page_tools() -> Vec<ToolDefinition> {
        vec![
            ToolDefinition {
                name: "Heading".into(),
                description: "Adds a heading.".into(),
                parameters: json!({
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "type": "object",
                    "properties": {"text": {"type": "string"}, "level": {"type": "integer"}},
                    "required": ["text"],
                    "additionalProperties": false
                }),
            },
            ToolDefinition {
                name: "Finish".into(),
                description: "Ends the page.".into(),
                parameters: Value::Null,
            },
        ]
    }

    fn request(messages: Vec<Message>) -> ChatRequest {
        ChatRequest {
            messages,
            tools: page_tools(),
            max_tokens: Some(1024),
            temperature: Some(0.2),
            response_format: None,
        }
    }

    #[tokio::test]
    async fn a_constrained_answer_asks_for_the_strict_json_schema_and_no_tools(
    ) -> anyhow::Result<()> {
        let page = r#"{"nodes":[{"id":"h","component":"Heading","parent":null,"props":{"text":"Triage","level":null}}]}"#;
        let server = openai_mock(vec![MockReply::ok(text_reply(page))], bearer).await?;
        let model = provider(&server)?;
        let mut constrained = request(vec![Message::user("Build the page.")]);
        constrained.response_format = Some(crate::mock::page_response_format());
        let response = model.chat(constrained).await?;
        assert!(server.failures().is_empty(), "{:?}", server.failures());
        assert_eq!(response.text.as_deref(), Some(page));
        let sent = &server.received()[0].body;
        assert!(
            sent.get("tools").is_none(),
            "the answer is the page, not tool calls"
        );
        let format = &sent["response_format"];
        assert_eq!(format["type"], "json_schema");
        assert_eq!(format["json_schema"]["name"], "tessera_page");
        assert_eq!(format["json_schema"]["strict"], json!(true));
        assert_eq!(
            format["json_schema"]["schema"]["properties"]["nodes"]["type"],
            "array"
        );
        assert_eq!(model.page_mode(), crate::PageMode::Auto);
        Ok(())
    }

    #[tokio::test]
    async fn a_text_reply_maps_content_stop_reason_and_usage() -> anyhow::Result<()> {
        let server = openai_mock(vec![MockReply::ok(text_reply("Hello there."))], bearer).await?;
        let model = provider(&server)?;
        let response = model
            .chat(request(vec![
                Message::system("You build pages."),
                Message::user("Say hello."),
            ]))
            .await?;
        assert_eq!(response.text.as_deref(), Some("Hello there."));
        assert!(response.tool_calls.is_empty());
        assert_eq!(response.stop_reason, StopReason::EndTurn);
        assert_eq!(
            response.usage,
            Usage {
                input_tokens: 82,
                output_tokens: 17
            }
        );
        let sent = &server.received()[0].body;
        assert_eq!(sent["model"], "gpt-4.1-mini");
        assert_eq!(sent["max_completion_tokens"], 1024);
        assert_eq!(
            sent["messages"][0],
            json!({"role": "system", "content": "You build pages."})
        );
        assert_eq!(sent["tools"][0]["type"], "function");
        assert_eq!(
            sent["tools"][0]["function"]["parameters"]["required"],
            json!(["text"])
        );
        assert!(sent["tools"][1]["function"].get("parameters").is_none());
        assert_eq!(model.name().to_string(), "openai:gpt-4.1-mini");
        assert!(server.failures().is_empty());
        Ok(())
    }

    #[tokio::test]
    async fn parallel_tool_calls_keep_their_ids_and_results_go_back_as_tool_messages(
    ) -> anyhow::Result<()> {
        let server = openai_mock(
            vec![
                MockReply::ok(tool_reply(&[
                    ("call_abc123", "Heading", r#"{"text":"Orders","level":1}"#),
                    ("call_def456", "Heading", r#"{"text":"Details","level":2}"#),
                ])),
                MockReply::ok(text_reply("Done.")),
            ],
            bearer,
        )
        .await?;
        let model = provider(&server)?;
        let mut messages = vec![
            Message::system("You build pages."),
            Message::user("Two headings."),
        ];
        let first = model.chat(request(messages.clone())).await?;
        assert_eq!(first.stop_reason, StopReason::ToolUse);
        let ids: Vec<&str> = first
            .tool_calls
            .iter()
            .map(|call| call.id.as_str())
            .collect();
        assert_eq!(ids, ["call_abc123", "call_def456"]);
        assert_eq!(
            first.tool_calls[1].arguments,
            Ok(json!({"text": "Details", "level": 2}))
        );

        messages.push(Message::assistant(&first));
        messages.push(Message::tool_result(
            &first.tool_calls[0],
            json!({"id": "c1"}),
        ));
        messages.push(Message::tool_error(
            &first.tool_calls[1],
            json!("level must be 1"),
        ));
        let second = model.chat(request(messages)).await?;
        assert_eq!(second.text.as_deref(), Some("Done."));

        let sent = &server.received()[1].body["messages"];
        assert_eq!(sent[2]["role"], "assistant");
        assert_eq!(sent[2]["content"], Value::Null);
        let wire_calls = sent[2]["tool_calls"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(wire_calls.len(), 2);
        for (wire, (id, text)) in wire_calls
            .iter()
            .zip([("call_abc123", "Orders"), ("call_def456", "Details")])
        {
            assert_eq!(wire["id"], id);
            assert_eq!(wire["type"], "function");
            assert_eq!(wire["function"]["name"], "Heading");
            let arguments: Value =
                serde_json::from_str(wire["function"]["arguments"].as_str().unwrap_or_default())?;
            assert_eq!(arguments["text"], text);
        }
        assert_eq!(
            sent[3],
            json!({"role": "tool", "tool_call_id": "call_abc123", "content": r#"{"id":"c1"}"#})
        );
        assert_eq!(
            sent[4],
            json!({"role": "tool", "tool_call_id": "call_def456", "content": r#"{"error":"level must be 1"}"#})
        );
        assert!(server.failures().is_empty());
        Ok(())
    }

    #[tokio::test]
    async fn malformed_tool_arguments_are_kept_and_the_reply_still_succeeds() -> anyhow::Result<()>
    {
        let server = openai_mock(
            vec![
                MockReply::ok(tool_reply(&[
                    ("call_1", "Heading", r#"{"text": "Orders", "level": "#),
                    ("call_2", "Finish", ""),
                ])),
                MockReply::ok(text_reply("Fixed.")),
            ],
            bearer,
        )
        .await?;
        let model = provider(&server)?;
        let messages = vec![Message::user("A heading.")];
        let first = model.chat(request(messages.clone())).await?;
        let malformed = first.tool_calls[0].arguments.clone().err();
        assert_eq!(
            malformed.as_ref().map(|malformed| malformed.raw.as_str()),
            Some(r#"{"text": "Orders", "level": "#)
        );
        assert!(malformed.is_some_and(|malformed| !malformed.error.is_empty()));
        assert_eq!(first.tool_calls[1].arguments, Ok(json!({})));

        // The loop answers the bad call with a tool error; the raw text goes back unchanged.
        let mut follow_up = messages;
        follow_up.push(Message::assistant(&first));
        follow_up.push(Message::tool_error(
            &first.tool_calls[0],
            json!("arguments are not JSON"),
        ));
        follow_up.push(Message::tool_result(&first.tool_calls[1], json!("ok")));
        model.chat(request(follow_up)).await?;
        let sent = &server.received()[1].body["messages"];
        assert_eq!(
            sent[1]["tool_calls"][0]["function"]["arguments"],
            r#"{"text": "Orders", "level": "#
        );
        assert_eq!(sent[2]["content"], r#"{"error":"arguments are not JSON"}"#);
        assert!(server.failures().is_empty());
        Ok(())
    }

    #[tokio::test]
    async fn a_429_with_retry_after_is_waited_out_and_retried() -> anyhow::Result<()> {
        let server = openai_mock(
            vec![
                MockReply::status(
                    429,
                    json!({"error": {"message": "Rate limit reached", "type": "requests", "param": null, "code": "rate_limit_exceeded"}}),
                )
                .header("retry-after", "1"),
                MockReply::ok(text_reply("After the wait.")),
            ],
            bearer,
        )
        .await?;
        let hi = request(vec![Message::user("Hi")]);
        waits_out_the_rate_limit(&server, provider(&server)?, hi, "After the wait.").await
    }

    #[tokio::test]
    async fn a_500_is_retried_then_reported_as_a_server_error() -> anyhow::Result<()> {
        let failure = || {
            MockReply::status(
                500,
                json!({"error": {"message": "The server had an error", "type": "server_error"}}),
            )
        };
        let server = openai_mock(vec![failure(), failure(), failure()], bearer).await?;
        let hi = request(vec![Message::user("Hi")]);
        reports_the_server_error(
            &server,
            provider(&server)?,
            hi,
            3,
            (500, "server had an error"),
        )
        .await;
        Ok(())
    }

    #[tokio::test]
    async fn a_reply_slower_than_the_call_timeout_is_a_timeout() -> anyhow::Result<()> {
        let slow = || MockReply::ok(text_reply("late")).after(Duration::from_secs(3));
        let server = openai_mock(vec![slow(), slow()], bearer).await?;
        times_out(
            &server,
            provider(&server)?,
            request(vec![Message::user("Hi")]),
            2,
        )
        .await;
        Ok(())
    }

    #[tokio::test]
    async fn a_refusal_is_reported_as_refused_and_not_retried() -> anyhow::Result<()> {
        let refusal = completion(
            &json!({"role": "assistant", "content": null, "refusal": "I'm sorry, I can't help with that.", "annotations": []}),
            "stop",
        );
        let server = openai_mock(vec![MockReply::ok(refusal)], bearer).await?;
        let model = Retrying::new(provider(&server)?, quick_policy(3));
        let outcome = model.chat(request(vec![Message::user("Hi")])).await;
        assert_eq!(
            outcome,
            Err(ModelError::Refused {
                reason: "I'm sorry, I can't help with that.".into()
            })
        );
        assert_eq!(server.received().len(), 1);
        Ok(())
    }

    #[tokio::test]
    async fn a_bad_key_is_rejected_without_retrying() -> anyhow::Result<()> {
        let server = openai_mock(
            vec![MockReply::status(
                401,
                json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}),
            )],
            accept_all,
        )
        .await?;
        let model = Retrying::new(provider(&server)?, quick_policy(3));
        let outcome = model.chat(request(vec![Message::user("Hi")])).await;
        assert!(matches!(
            outcome,
            Err(ModelError::Rejected { status: 401, .. })
        ));
        assert_eq!(server.received().len(), 1);
        Ok(())
    }

    #[tokio::test]
    async fn an_unparseable_body_is_malformed() -> anyhow::Result<()> {
        let server =
            MockServer::start(accept_all, vec![MockReply::ok(json!("<html>oops</html>"))]).await?;
        let outcome = provider(&server)?
            .chat(request(vec![Message::user("Hi")]))
            .await;
        assert!(
            matches!(outcome, Err(ModelError::Malformed { .. })),
            "{outcome:?}"
        );
        Ok(())
    }

    #[tokio::test]
    async fn azure_style_sends_the_api_key_header_and_api_version() -> anyhow::Result<()> {
        let server = openai_mock(
            vec![MockReply::ok(text_reply("Hi from Azure."))],
            |received| {
                ensure(
                    received.header("api-key") == Some(KEY),
                    "missing api-key header",
                )?;
                ensure(
                    received.header("authorization").is_none(),
                    "unexpected bearer",
                )?;
                ensure(
                    received.uri == "/v1/chat/completions?api-version=2024-10-21",
                    format!("unexpected uri {}", received.uri),
                )
            },
        )
        .await?;
        let model = OpenAiChat::new(
            OpenAiConfig::openai("my-deployment", Secret::new(KEY))
                .with_base_url(format!("{}/v1/", server.url))
                .with_azure_api_version("2024-10-21"),
        )?;
        let response = model.chat(request(vec![Message::user("Hi")])).await?;
        assert_eq!(response.text.as_deref(), Some("Hi from Azure."));
        assert!(server.failures().is_empty());
        Ok(())
    }

    #[tokio::test]
    async fn ollama_style_sends_no_key_and_uses_max_tokens() -> anyhow::Result<()> {
        // Ollama (like some other local servers) sends arguments as an object and says "stop".
        let ollama_reply = completion(
            &json!({"role": "assistant", "content": "", "refusal": null, "tool_calls": [
                {"id": "call_x1", "type": "function", "function": {"name": "Heading", "arguments": "{\"text\":\"Hi\"}"}}
            ]}),
            "stop",
        );
        let server = openai_mock(vec![MockReply::ok(ollama_reply)], |received| {
            ensure(received.header("authorization").is_none(), "unexpected key")?;
            ensure(
                received.body["max_tokens"] == json!(1024),
                "max_tokens missing",
            )?;
            ensure(
                received.body.get("max_completion_tokens").is_none(),
                "wrong field",
            )
        })
        .await?;
        let model = OpenAiChat::new(
            OpenAiConfig::ollama("llama3.1").with_base_url(format!("{}/v1", server.url)),
        )?;
        let response = model.chat(request(vec![Message::user("Hi")])).await?;
        assert_eq!(response.stop_reason, StopReason::ToolUse);
        assert_eq!(response.text, None);
        assert_eq!(response.tool_calls[0].arguments, Ok(json!({"text": "Hi"})));
        assert_eq!(model.name().to_string(), "ollama:llama3.1");
        assert!(server.failures().is_empty());
        Ok(())
    }

    #[test]
    fn a_request_offering_every_default_component_matches_the_spec() -> anyhow::Result<()> {
        let tools = crate::mock::default_page_tools();
        let offered = tools.len();
        let provider = OpenAiChat::new(OpenAiConfig::openai("gpt-4.1-mini", Secret::new(KEY)))?;
        let body = provider.body(&ChatRequest {
            messages: vec![
                Message::System(crate::mock::PAGE_SYSTEM_PROMPT.to_owned()),
                Message::User("Build the page.".into()),
            ],
            tools,
            max_tokens: Some(1024),
            temperature: None,
            response_format: None,
        });
        assert_eq!(body["tools"].as_array().map(Vec::len), Some(offered));
        Spec::load()?
            .check_request(&body)
            .map_err(|error| anyhow::anyhow!(error))
    }

    #[tokio::test]
    async fn the_spec_check_is_not_vacuous() -> anyhow::Result<()> {
        let spec = Spec::load()?;
        assert!(spec
            .check_request(&json!({"model": "gpt-4.1-mini", "messages": []}))
            .is_err());
        assert!(spec
            .check_request(
                &json!({"model": "gpt-4.1-mini", "messages": [{"role": "tool", "content": "x"}]})
            )
            .is_err());
        assert!(spec
            .check_replies(&[MockReply::ok(json!({"choices": [{"message": {}}]}))])
            .is_err());
        Ok(())
    }

    #[test]
    fn arguments_sent_as_an_object_or_empty_are_accepted() {
        assert_eq!(parse_arguments(json!({"a": 1})), Ok(json!({"a": 1})));
        assert_eq!(parse_arguments(json!("")), Ok(json!({})));
        assert!(parse_arguments(json!("{nope")).is_err());
    }

    #[test]
    fn an_azure_content_filter_rejection_is_a_refusal() {
        let reply = HttpReply {
            status: http::StatusCode::BAD_REQUEST,
            headers: http::HeaderMap::new(),
            body: json!({"error": {"code": "content_filter", "message": "The prompt was filtered.", "status": 400}}).to_string(),
        };
        assert_eq!(
            reply_error(&reply),
            ModelError::Refused {
                reason: "The prompt was filtered.".into()
            }
        );
    }

    #[test]
    fn the_key_never_shows_in_debug_output() -> anyhow::Result<()> {
        let model = OpenAiChat::new(OpenAiConfig::openai("gpt-4.1-mini", Secret::new(KEY)))?;
        assert!(!format!("{model:?}").contains(KEY));
        Ok(())
    }

    #[test]
    fn a_base_url_that_is_not_http_is_bad_config() {
        let outcome =
            OpenAiChat::new(OpenAiConfig::ollama("llama3.1").with_base_url("localhost:11434"));
        assert!(matches!(outcome, Err(ModelError::BadConfig { .. })));
    }
}
