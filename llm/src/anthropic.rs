//! The Anthropic Messages API provider (`POST {base}/v1/messages`, tool use, streaming off).
//!
//! Anthropic differs from the OpenAI shape in ways the agent loop must not see: the system prompt
//! is a top-level `system` field, `max_tokens` is required, a turn is a list of content blocks
//! (`text`, `tool_use {id, name, input}`, `tool_result {tool_use_id, content, is_error}`), tool
//! results travel in a *user* message that must directly follow the assistant turn that asked
//! for them, and roles must alternate. This module merges consecutive same-role messages into
//! one turn so that rule always holds. Tool inputs arrive as JSON objects, so Anthropic never
//! produces [`crate::model::MalformedArguments`].

use serde::Deserialize;
use serde_json::{json, Value};

use super::{
    hosted::HostedConfig,
    model::{
        ChatModel, ChatRequest, ChatResponse, Message, ModelError, ModelName, Result, StopReason,
        ToolCall, Usage,
    },
    openai::check_base_url,
    transport::{self, HttpReply},
};

/// Anthropic's own endpoint (requests go to `{base}/v1/messages`).
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// The API version header value this module is written against.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// `max_tokens` when the request leaves it open (Anthropic requires a value).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// A Claude model behind the Messages API.
#[derive(Clone, Debug)]
pub struct AnthropicChat {
    config: HostedConfig,
    url: String,
    client: reqwest::Client,
}

impl AnthropicChat {
    /// Builds the provider; nothing is sent yet.
    ///
    /// # Errors
    /// Returns [`ModelError::BadConfig`] when the base URL is not an http(s) URL or the HTTP
    /// client cannot be built.
    pub fn new(config: HostedConfig) -> Result<Self> {
        check_base_url(&config.base_url, "base URL")?;
        let url = transport::join(&config.base_url, "v1/messages");
        Ok(Self {
            config,
            url,
            client: transport::client()?,
        })
    }

    fn body(&self, request: &ChatRequest) -> Value {
        let mut system = Vec::new();
        let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
        for message in &request.messages {
            let (role, blocks) = match message {
                Message::System(text) => {
                    system.push(text.as_str());
                    continue;
                }
                Message::User(text) => ("user", vec![json!({"type": "text", "text": text})]),
                Message::Assistant { text, tool_calls } => {
                    let text_block = text
                        .as_deref()
                        .filter(|text| !text.is_empty())
                        .map(|text| json!({"type": "text", "text": text}));
                    let tool_blocks = tool_calls.iter().map(|call| {
                        // Anthropic only ever sends objects.
                        let input = call.arguments_object();
                        json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input})
                    });
                    (
                        "assistant",
                        text_block.into_iter().chain(tool_blocks).collect(),
                    )
                }
                Message::ToolResult {
                    call_id,
                    content,
                    is_error,
                    ..
                } => {
                    let mut block = json!({
                        "type": "tool_result",
                        "tool_use_id": call_id,
                        "content": transport::content_text(content),
                    });
                    if *is_error {
                        block["is_error"] = json!(true);
                    }
                    ("user", vec![block])
                }
            };
            if blocks.is_empty() {
                // Anthropic rejects empty turns; an empty assistant turn carries nothing.
                continue;
            }
            match turns.last_mut() {
                Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
                _ => turns.push((role, blocks)),
            }
        }
        let mut body = json!({
            "model": self.config.model,
            "max_tokens": request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            "messages": turns
                .into_iter()
                .map(|(role, content)| json!({"role": role, "content": content}))
                .collect::<Vec<_>>(),
        });
        if !system.is_empty() {
            body["system"] = json!(system.join("\n\n"));
        }
        if let Some(format) = &request.response_format {
            // Anthropic constrains a tool's input, not text: one strict tool the model must call.
            body["tools"] = json!([{
                "name": format.name,
                "description": "Answer with the whole page.",
                "input_schema": format.schema,
                "strict": true,
            }]);
            body["tool_choice"] = json!({"type": "tool", "name": format.name});
        } else if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|tool| {
                    let input_schema = if tool.parameters.is_object() {
                        tool.parameters.clone()
                    } else {
                        json!({"type": "object", "properties": {}})
                    };
                    json!({
                        "name": tool.name,
                        "description": tool.description,
                        "input_schema": input_schema,
                    })
                })
                .collect();
        }
        if let Some(temperature) = request.temperature {
            body["temperature"] = json!(temperature);
        }
        body
    }
}

#[derive(Deserialize)]
struct WireMessage {
    content: Vec<Block>,
    stop_reason: Option<String>,
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    /// Thinking and server-tool blocks: not part of the answer.
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
}

fn stop_reason(reason: Option<&str>) -> StopReason {
    match reason {
        None | Some("end_turn" | "stop_sequence") => StopReason::EndTurn,
        Some("tool_use") => StopReason::ToolUse,
        Some("max_tokens") => StopReason::MaxTokens,
        Some("refusal") => StopReason::Refused,
        Some(other) => StopReason::Other(other.to_owned()),
    }
}

fn parse_reply(reply: &HttpReply) -> Result<ChatResponse> {
    let message: WireMessage = reply.json()?;
    let mut texts = Vec::new();
    let mut tool_calls = Vec::new();
    for block in message.content {
        match block {
            Block::Text { text } => texts.push(text),
            Block::ToolUse { id, name, input } => tool_calls.push(ToolCall {
                id,
                name,
                arguments: Ok(input),
                signature: None,
            }),
            Block::Other => {}
        }
    }
    let text = Some(texts.join("\n")).filter(|text| !text.is_empty());
    let stop_reason = stop_reason(message.stop_reason.as_deref()).given_tool_calls(&tool_calls);
    if stop_reason == StopReason::Refused && text.is_none() && tool_calls.is_empty() {
        return Err(ModelError::Refused {
            reason: "the model declined to answer (stop_reason: refusal)".into(),
        });
    }
    let usage = message.usage.map_or_else(Usage::default, |usage| Usage {
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
    });
    Ok(ChatResponse {
        text,
        tool_calls,
        stop_reason,
        usage,
    })
}

#[async_trait::async_trait]
impl ChatModel for AnthropicChat {
    fn name(&self) -> ModelName {
        ModelName::new("anthropic", &self.config.model)
    }

    fn page_mode(&self) -> super::model::PageMode {
        super::model::PageMode::Auto
    }

    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse> {
        let http_request = self
            .client
            .post(&self.url)
            .header("x-api-key", self.config.api_key.expose())
            .header("anthropic-version", ANTHROPIC_VERSION)
            .json(&self.body(&request));
        let reply = transport::send(http_request).await?;
        if !reply.status.is_success() {
            return Err(reply.error());
        }
        let response = parse_reply(&reply)?;
        Ok(match &request.response_format {
            Some(format) => answer_as_text(response, &format.name),
            None => response,
        })
    }
}

/// A constrained answer arrives as the input of the one forced tool; the neutral reply carries it
/// as text, like every other provider's.
fn answer_as_text(mut response: ChatResponse, tool: &str) -> ChatResponse {
    if let Some(index) = response
        .tool_calls
        .iter()
        .position(|call| call.name == tool)
    {
        let call = response.tool_calls.remove(index);
        response.text = Some(call.arguments_text());
        response.tool_calls.clear();
        response.stop_reason = StopReason::EndTurn;
    }
    response
}

#[cfg(test)]
mod tests {
    use std::{collections::BTreeSet, time::Duration};

    use tessera_settings::Secret;

    use super::*;
    use crate::{
        mock::{
            ensure, quick_policy, reports_the_server_error, spec_errors, times_out, vendored,
            waits_out_the_rate_limit, MockReply, MockServer, Received, Vendored,
        },
        model::ToolDefinition,
        retry::Retrying,
    };

    const KEY: &str = "sk-ant-test-0123456789";

    /// Checks what the Messages API requires of every request: headers, `model`, `max_tokens`,
    /// alternating roles starting with `user`, known block types, `input_schema` objects, and
    /// every `tool_result` answering a `tool_use` of the turn just before it, results first.
    fn check_request(received: &Received) -> std::result::Result<(), String> {
        ensure(
            received.uri == "/v1/messages",
            format!("path {}", received.uri),
        )?;
        ensure(
            received.header("x-api-key") == Some(KEY),
            "missing x-api-key",
        )?;
        ensure(
            received.header("anthropic-version") == Some(ANTHROPIC_VERSION),
            "missing anthropic-version",
        )?;
        ensure(
            received
                .header("content-type")
                .is_some_and(|value| value.starts_with("application/json")),
            "not JSON",
        )?;
        let body = &received.body;
        ensure(body["model"].is_string(), "model missing")?;
        ensure(
            body["max_tokens"].as_u64().is_some_and(|n| n > 0),
            "max_tokens missing",
        )?;
        ensure(
            body.get("system").is_none_or(Value::is_string),
            "system must be a string",
        )?;
        let messages = body["messages"].as_array().ok_or("messages missing")?;
        ensure(!messages.is_empty(), "messages empty")?;
        let mut previous_tool_uses = BTreeSet::new();
        for (index, message) in messages.iter().enumerate() {
            let role = message["role"].as_str().ok_or("role missing")?;
            let expected_role = if index % 2 == 0 { "user" } else { "assistant" };
            ensure(
                role == expected_role,
                format!("message {index} should be {expected_role}"),
            )?;
            let blocks = message["content"]
                .as_array()
                .ok_or("content must be blocks")?;
            ensure(!blocks.is_empty(), format!("message {index} is empty"))?;
            let mut tool_uses = BTreeSet::new();
            let mut seen_other = false;
            for block in blocks {
                match block["type"].as_str() {
                    Some("text") => {
                        ensure(
                            block["text"].as_str().is_some_and(|t| !t.is_empty()),
                            "empty text",
                        )?;
                        seen_other = true;
                    }
                    Some("tool_use") => {
                        ensure(role == "assistant", "tool_use outside an assistant turn")?;
                        ensure(
                            block["input"].is_object(),
                            "tool_use input must be an object",
                        )?;
                        ensure(block["name"].is_string(), "tool_use name missing")?;
                        tool_uses.insert(
                            block["id"]
                                .as_str()
                                .ok_or("tool_use id missing")?
                                .to_owned(),
                        );
                    }
                    Some("tool_result") => {
                        ensure(role == "user", "tool_result outside a user turn")?;
                        ensure(!seen_other, "tool_result blocks must come first")?;
                        let id = block["tool_use_id"].as_str().ok_or("tool_use_id missing")?;
                        ensure(
                            previous_tool_uses.contains(id),
                            format!("tool_result {id} answers no tool_use of the previous turn"),
                        )?;
                        ensure(block["content"].is_string(), "tool_result content")?;
                        ensure(
                            block.get("is_error").is_none_or(Value::is_boolean),
                            "is_error must be a boolean",
                        )?;
                    }
                    other => return Err(format!("unknown block type {other:?}")),
                }
            }
            previous_tool_uses = tool_uses;
        }
        if let Some(tools) = body.get("tools") {
            for tool in tools.as_array().ok_or("tools must be an array")? {
                ensure(tool["name"].is_string(), "tool name missing")?;
                ensure(
                    tool["input_schema"]["type"] == "object",
                    "input_schema must be an object schema",
                )?;
            }
        }
        let errors = spec_errors(published()?, body);
        ensure(
            errors.is_empty(),
            format!("request does not match the SDK's MessageCreateParams: {errors:?}"),
        )
    }

    /// `MessageCreateParamsNonStreaming` as the published `@anthropic-ai/sdk` types define it
    /// (vendored, see llm/tests/data/anthropic/README.md).
    fn published() -> std::result::Result<&'static jsonschema::Validator, String> {
        static SPEC: Vendored = Vendored::new();
        vendored(
            &SPEC,
            include_str!("../tests/data/anthropic/messages-create.schema.json"),
        )
    }

    async fn mock(replies: Vec<MockReply>) -> anyhow::Result<(MockServer, AnthropicChat)> {
        let server = MockServer::start(check_request, replies).await?;
        let model = AnthropicChat::new(HostedConfig::new(
            "claude-sonnet-4-5",
            &server.url,
            Secret::new(KEY),
        ))?;
        Ok((server, model))
    }

    /// A Messages API reply as Anthropic documents it.
    fn message(content: &Value, stop_reason: &str) -> Value {
        json!({
            "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": null,
            "usage": {"input_tokens": 2095, "output_tokens": 503}
        })
    }

    fn request(messages: Vec<Message>) -> ChatRequest {
        ChatRequest {
            messages,
            tools: vec![ToolDefinition {
                name: "get_weather".into(),
                description: "Get the current weather in a given location".into(),
                parameters: json!({
                    "type": "object",
                    "properties": {"location": {"type": "string", "description": "The city and state"}},
                    "required": ["location"]
                }),
            }],
            max_tokens: None,
            temperature: None,
            response_format: None,
        }
    }

    #[test]
    fn the_vendored_request_schema_refuses_what_the_api_would() -> anyhow::Result<()> {
        let spec = published().map_err(anyhow::Error::msg)?;
        let body = json!({"model": "claude-sonnet-4-5", "max_tokens": 64,
                          "messages": [{"role": "user", "content": "Hi"}]});
        assert!(spec.is_valid(&body));
        let mut unknown = body.clone();
        unknown["response_format"] = json!({"type": "json_schema"});
        assert!(!spec.is_valid(&unknown), "Anthropic has no response_format");
        let mut strict = body;
        strict["tools"] =
            json!([{"name": "page", "input_schema": {"type": "object"}, "strict": "yes"}]);
        assert!(!spec.is_valid(&strict), "strict is a boolean");
        Ok(())
    }

    #[tokio::test]
    async fn a_constrained_answer_is_a_forced_strict_tool_whose_input_comes_back_as_text(
    ) -> anyhow::Result<()> {
        let page = json!({"nodes": [{"id": "h", "component": "Heading", "parent": null,
                                     "props": {"text": "Triage", "level": null}}]});
        let (server, model) = mock(vec![MockReply::ok(message(
            &json!([{"type": "tool_use", "id": "toolu_01", "name": "tessera_page", "input": page}]),
            "tool_use",
        ))])
        .await?;
        let mut constrained = request(vec![Message::user("Build the page.")]);
        constrained.response_format = Some(crate::mock::page_response_format());
        let response = model.chat(constrained).await?;
        assert!(server.failures().is_empty(), "{:?}", server.failures());
        assert_eq!(
            serde_json::from_str::<Value>(response.text.as_deref().unwrap_or_default())?,
            page
        );
        assert!(response.tool_calls.is_empty());
        assert_eq!(response.stop_reason, StopReason::EndTurn);
        let sent = &server.received()[0].body;
        let tools = sent["tools"].as_array().map_or(0, Vec::len);
        assert_eq!(tools, 1, "only the answer's tool is offered");
        assert_eq!(sent["tools"][0]["strict"], json!(true));
        assert_eq!(sent["tools"][0]["name"], "tessera_page");
        assert_eq!(
            sent["tool_choice"],
            json!({"type": "tool", "name": "tessera_page"})
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_text_reply_maps_content_stop_reason_and_usage() -> anyhow::Result<()> {
        let (server, model) = mock(vec![MockReply::ok(message(
            &json!([{"type": "text", "text": "Hi! My name is Claude."}]),
            "end_turn",
        ))])
        .await?;
        let response = model
            .chat(request(vec![
                Message::system("You build pages."),
                Message::system("Be brief."),
                Message::user("Hello"),
            ]))
            .await?;
        assert_eq!(response.text.as_deref(), Some("Hi! My name is Claude."));
        assert_eq!(response.stop_reason, StopReason::EndTurn);
        assert_eq!(
            response.usage,
            Usage {
                input_tokens: 2095,
                output_tokens: 503
            }
        );
        let sent = &server.received()[0].body;
        assert_eq!(sent["system"], "You build pages.\n\nBe brief.");
        assert_eq!(sent["max_tokens"], DEFAULT_MAX_TOKENS);
        assert_eq!(sent["model"], "claude-sonnet-4-5");
        assert_eq!(
            sent["tools"][0]["input_schema"]["required"],
            json!(["location"])
        );
        assert_eq!(model.name().to_string(), "anthropic:claude-sonnet-4-5");
        assert!(server.failures().is_empty(), "{:?}", server.failures());
        Ok(())
    }

    #[tokio::test]
    async fn parallel_tool_uses_keep_their_ids_and_results_go_back_in_one_user_turn(
    ) -> anyhow::Result<()> {
        let (server, model) = mock(vec![
            MockReply::ok(message(
                &json!([
                    {"type": "text", "text": "I'll check both cities."},
                    {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather",
                     "input": {"location": "San Francisco, CA"}},
                    {"type": "tool_use", "id": "toolu_01B19r91rw91mr918836mr0", "name": "get_weather",
                     "input": {"location": "New York, NY"}}
                ]),
                "tool_use",
            )),
            MockReply::ok(message(
                &json!([{"type": "text", "text": "Sunny in SF, raining in NY."}]),
                "end_turn",
            )),
        ])
        .await?;
        let mut messages = vec![Message::user("Weather in SF and NY?")];
        let first = model.chat(request(messages.clone())).await?;
        assert_eq!(first.stop_reason, StopReason::ToolUse);
        assert_eq!(first.text.as_deref(), Some("I'll check both cities."));
        let ids: Vec<&str> = first
            .tool_calls
            .iter()
            .map(|call| call.id.as_str())
            .collect();
        assert_eq!(
            ids,
            [
                "toolu_01A09q90qw90lq917835lq9",
                "toolu_01B19r91rw91mr918836mr0"
            ]
        );
        assert_eq!(
            first.tool_calls[1].arguments,
            Ok(json!({"location": "New York, NY"}))
        );

        messages.push(Message::assistant(&first));
        messages.push(Message::tool_result(
            &first.tool_calls[0],
            json!("15 degrees, sunny"),
        ));
        messages.push(Message::tool_error(
            &first.tool_calls[1],
            json!({"error": "station offline"}),
        ));
        let second = model.chat(request(messages)).await?;
        assert_eq!(second.text.as_deref(), Some("Sunny in SF, raining in NY."));

        let sent = &server.received()[1].body["messages"];
        assert_eq!(sent.as_array().map(Vec::len), Some(3));
        assert_eq!(sent[1]["content"][1]["type"], "tool_use");
        assert_eq!(
            sent[2],
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
                 "content": "15 degrees, sunny"},
                {"type": "tool_result", "tool_use_id": "toolu_01B19r91rw91mr918836mr0",
                 "content": "{\"error\":\"station offline\"}", "is_error": true}
            ]})
        );
        assert!(server.failures().is_empty(), "{:?}", server.failures());
        Ok(())
    }

    #[tokio::test]
    async fn a_429_with_retry_after_is_waited_out_and_retried() -> anyhow::Result<()> {
        let (server, model) = mock(vec![
            MockReply::status(
                429,
                json!({"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded your per-minute rate limit"}}),
            )
            .header("retry-after", "1"),
            MockReply::ok(message(&json!([{"type": "text", "text": "ok"}]), "end_turn")),
        ])
        .await?;
        waits_out_the_rate_limit(&server, model, request(vec![Message::user("Hi")]), "ok").await
    }

    #[tokio::test]
    async fn an_overloaded_server_is_retried_then_reported() -> anyhow::Result<()> {
        let overloaded = || {
            MockReply::status(
                529,
                json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            )
        };
        let failure = MockReply::status(
            500,
            json!({"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}),
        );
        let (server, model) = mock(vec![overloaded(), overloaded(), failure]).await?;
        let hi = request(vec![Message::user("Hi")]);
        reports_the_server_error(&server, model, hi, 3, (500, "api_error")).await;
        Ok(())
    }

    #[tokio::test]
    async fn a_reply_slower_than_the_call_timeout_is_a_timeout() -> anyhow::Result<()> {
        let (server, model) = mock(vec![MockReply::ok(message(
            &json!([{"type": "text", "text": "late"}]),
            "end_turn",
        ))
        .after(Duration::from_secs(3))])
        .await?;
        times_out(&server, model, request(vec![Message::user("Hi")]), 1).await;
        Ok(())
    }

    #[tokio::test]
    async fn a_refusal_without_content_is_refused() -> anyhow::Result<()> {
        let (server, model) = mock(vec![MockReply::ok(message(&json!([]), "refusal"))]).await?;
        let model = Retrying::new(model, quick_policy(3));
        let outcome = model.chat(request(vec![Message::user("Hi")])).await;
        assert!(
            matches!(outcome, Err(ModelError::Refused { .. })),
            "{outcome:?}"
        );
        assert_eq!(server.received().len(), 1);
        Ok(())
    }

    #[tokio::test]
    async fn a_refusal_after_some_text_keeps_the_text() -> anyhow::Result<()> {
        let (_server, model) = mock(vec![MockReply::ok(message(
            &json!([{"type": "text", "text": "Here is the start"}]),
            "refusal",
        ))])
        .await?;
        let response = model.chat(request(vec![Message::user("Hi")])).await?;
        assert_eq!(response.stop_reason, StopReason::Refused);
        assert_eq!(response.text.as_deref(), Some("Here is the start"));
        Ok(())
    }

    #[tokio::test]
    async fn a_body_without_content_is_malformed() -> anyhow::Result<()> {
        let (_server, model) = mock(vec![MockReply::ok(json!({"type": "message"}))]).await?;
        let outcome = model.chat(request(vec![Message::user("Hi")])).await;
        assert!(
            matches!(outcome, Err(ModelError::Malformed { .. })),
            "{outcome:?}"
        );
        Ok(())
    }

    #[test]
    fn the_key_never_shows_in_debug_output() -> anyhow::Result<()> {
        let model = AnthropicChat::new(HostedConfig::new(
            "claude-sonnet-4-5",
            ANTHROPIC_BASE_URL,
            Secret::new(KEY),
        ))?;
        assert!(!format!("{model:?}").contains(KEY));
        Ok(())
    }
}
