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
//!   with the call; it rides in [`ToolCall::signature`](super::model::ToolCall::signature).
//!
//! This file holds the provider (configuration, the one HTTP call); the jobs around it are one
//! file each: [`request`] builds the body, [`schema`] rewrites tool schemas, [`wire`] declares the
//! reply's JSON and [`response`] turns a reply into a response or an error.

mod request;
mod response;
mod schema;
mod wire;

pub use schema::gemini_schema;

use super::{
    hosted::HostedConfig,
    model::{ChatModel, ChatRequest, ChatResponse, ModelError, ModelName, Result},
    openai::check_base_url,
    transport,
};

/// Google's endpoint for the Gemini API.
pub const GEMINI_BASE_URL: &str = "https://generativelanguage.googleapis.com";

/// A Gemini model behind `generateContent`.
#[derive(Clone, Debug)]
pub struct GeminiChat {
    config: HostedConfig,
    url: String,
    client: reqwest::Client,
}

impl GeminiChat {
    /// Builds the provider; nothing is sent yet.
    ///
    /// # Errors
    /// Returns [`ModelError::BadConfig`] when the base URL is not an http(s) URL, the model name
    /// is empty or the HTTP client cannot be built.
    pub fn new(mut config: HostedConfig) -> Result<Self> {
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
}

#[async_trait::async_trait]
impl ChatModel for GeminiChat {
    fn name(&self) -> ModelName {
        ModelName::new("gemini", &self.config.model)
    }

    fn page_mode(&self) -> super::model::PageMode {
        super::model::PageMode::Auto
    }

    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse> {
        let http_request = self
            .client
            .post(&self.url)
            .header("x-goog-api-key", self.config.api_key.expose())
            .json(&request::body(&request));
        let reply = transport::send(http_request).await?;
        if !reply.status.is_success() {
            return Err(response::reply_error(&reply));
        }
        response::parse_reply(&reply, response::calls_so_far(&request))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::{json, Value};

    use tessera_settings::Secret;

    use super::{
        schema::tests::{find_rejected_keyword, schemars_style_tool},
        *,
    };
    use crate::{
        mock::{
            ensure, reports_the_server_error, spec_errors, times_out, vendored,
            waits_out_the_rate_limit, MockReply, MockServer, Received, Vendored,
        },
        model::{Message, StopReason, ToolDefinition, Usage},
    };

    const KEY: &str = "AIza-test-0123456789";

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
        if let Some(config) = body.get("generationConfig") {
            let errors = spec_errors(published()?, config);
            ensure(
                errors.is_empty(),
                format!("generationConfig does not match the SDK's GenerationConfig: {errors:?}"),
            )?;
        }
        Ok(())
    }

    /// `GenerationConfig` (and the `Schema` of `responseSchema`) as the published `@google/genai`
    /// types define them (vendored, see llm/tests/data/gemini/README.md).
    fn published() -> std::result::Result<&'static jsonschema::Validator, String> {
        static SPEC: Vendored = Vendored::new();
        vendored(
            &SPEC,
            include_str!("../tests/data/gemini/generation-config.schema.json"),
        )
    }

    async fn mock(replies: Vec<MockReply>) -> anyhow::Result<(MockServer, GeminiChat)> {
        let server = MockServer::start(check_request, replies).await?;
        let model = GeminiChat::new(HostedConfig::new(
            "models/gemini-2.5-flash",
            &server.url,
            Secret::new(KEY),
        ))?;
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
            response_format: None,
        }
    }

    #[test]
    fn the_vendored_generation_config_refuses_what_the_api_would() -> anyhow::Result<()> {
        let spec = published().map_err(anyhow::Error::msg)?;
        let config = json!({"responseMimeType": "application/json",
                            "responseSchema": {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}}});
        assert!(spec.is_valid(&config));
        let lower = json!({"responseSchema": {"type": "object"}});
        assert!(
            !spec.is_valid(&lower),
            "the published Schema type spells types in capitals"
        );
        let closed = json!({"responseSchema": {"type": "OBJECT", "additionalProperties": false}});
        assert!(
            !spec.is_valid(&closed),
            "Schema has no additionalProperties"
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_constrained_answer_asks_for_json_with_the_page_as_response_schema(
    ) -> anyhow::Result<()> {
        let page = r#"{"nodes":[{"id":"h","component":"Heading","parent":null,"props":{"text":"Triage","level":null}}]}"#;
        let (server, model) = mock(vec![MockReply::ok(generated(
            &json!([{"text": page}]),
            "STOP",
        ))])
        .await?;
        let mut constrained = request(vec![Message::user("Build the page.")]);
        constrained.response_format = Some(crate::mock::page_response_format());
        let response = model.chat(constrained).await?;
        assert!(server.failures().is_empty(), "{:?}", server.failures());
        assert_eq!(response.text.as_deref(), Some(page));
        let sent = &server.received()[0].body;
        assert!(sent.get("tools").is_none());
        let config = &sent["generationConfig"];
        assert_eq!(config["responseMimeType"], "application/json");
        let schema = &config["responseSchema"];
        assert_eq!(schema["type"], "OBJECT");
        assert_eq!(schema["properties"]["nodes"]["type"], "ARRAY");
        assert!(
            find_rejected_keyword(schema).is_none(),
            "no `$ref`, `additionalProperties` or `const` reaches Gemini"
        );
        Ok(())
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
        waits_out_the_rate_limit(&server, model, request(vec![Message::user("Hi")]), "ok").await
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
        let hi = request(vec![Message::user("Hi")]);
        reports_the_server_error(&server, model, hi, 2, (500, "internal error")).await;
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
        times_out(&server, model, request(vec![Message::user("Hi")]), 1).await;
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
        let model = GeminiChat::new(HostedConfig::new(
            "gemini-2.5-flash",
            GEMINI_BASE_URL,
            Secret::new(KEY),
        ))?;
        assert!(!format!("{model:?}").contains(KEY));
        assert!(!model.url.contains(KEY));
        Ok(())
    }
}
