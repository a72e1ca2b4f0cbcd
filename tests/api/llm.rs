//! Chat models through the public API: a model chosen by configuration reaches the server its
//! environment names, and the scripted model drives a tool loop the way the agent will.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use axum::{extract::State, http::HeaderMap, routing::post, Json, Router};
use serde_json::{json, Value};
use tessera::llm::{
    model_from_spec, ChatModel as _, ChatRequest, Message, ModelError, ModelSettings,
    ScriptedModel, ScriptedTurn, StopReason, ToolCall, ToolDefinition,
};

type Seen = Arc<Mutex<Vec<(Option<String>, Value)>>>;

async fn completions(
    State(seen): State<Seen>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Json<Value> {
    let authorization = headers
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    if let Ok(mut seen) = seen.lock() {
        seen.push((authorization, body));
    }
    Json(json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_741_570_283,
        "model": "qwen2.5",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": null, "refusal": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "Heading", "arguments": "{\"text\":\"Orders\"}"}}
            ]},
            "logprobs": null,
            "finish_reason": "tool_calls"
        }],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
    }))
}

fn heading_tool() -> ToolDefinition {
    ToolDefinition {
        name: "Heading".into(),
        description: "Adds a heading.".into(),
        parameters: json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    }
}

#[tokio::test]
async fn a_model_from_the_environment_calls_the_configured_server() -> anyhow::Result<()> {
    let seen = Seen::default();
    let router = Router::new()
        .route("/v1/chat/completions", post(completions))
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base_url = format!("http://{}/v1", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, router).await });

    let env: HashMap<&str, String> = HashMap::from([
        ("OPENAI_BASE_URL", base_url),
        ("OPENAI_API_KEY", "sk-local".to_owned()),
        ("TESSERA_MODEL_TIMEOUT_SECS", "5".to_owned()),
    ]);
    let settings = ModelSettings::from_lookup(&|name: &str| env.get(name).cloned())?;
    let model = model_from_spec("openai:qwen2.5", &settings)?;
    assert_eq!(model.name().to_string(), "openai:qwen2.5");

    let response = model
        .chat(ChatRequest {
            messages: vec![Message::user("A page about orders.")],
            tools: vec![heading_tool()],
            max_tokens: Some(256),
            temperature: None,
            response_format: None,
        })
        .await?;
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(
        response.tool_calls[0].arguments,
        Ok(json!({"text": "Orders"}))
    );
    assert_eq!(response.usage.input_tokens, 12);

    let seen = seen
        .lock()
        .map_err(|_| anyhow::anyhow!("poisoned"))?
        .clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].0.as_deref(), Some("Bearer sk-local"));
    assert_eq!(seen[0].1["model"], "qwen2.5");
    // A custom base URL is some other OpenAI-compatible server: the widely understood field.
    assert_eq!(seen[0].1["max_tokens"], 256);
    Ok(())
}

#[test]
fn a_missing_key_is_reported_before_anything_is_sent() {
    let outcome = model_from_spec("anthropic:claude-sonnet-4-5", &ModelSettings::default());
    assert!(matches!(
        outcome.err(),
        Some(ModelError::BadConfig { setting, .. }) if setting == "ANTHROPIC_API_KEY"
    ));
}

#[tokio::test]
async fn a_scripted_model_drives_a_tool_loop_and_records_the_feedback() -> anyhow::Result<()> {
    let bad_call = ToolCall::new("call_1", "Heading", json!({"txt": "Orders"}));
    let good_call = ToolCall::new("call_2", "Heading", json!({"text": "Orders"}));
    let model = ScriptedModel::new(vec![
        ScriptedTurn::tool_calls(vec![bad_call.clone()]).expecting_tools(["Heading"]),
        ScriptedTurn::tool_calls(vec![good_call.clone()]).expecting_tools(["Heading"]),
        ScriptedTurn::text("Done."),
    ]);

    // A miniature agent loop: answer each call, stop when the model stops calling tools.
    let mut messages = vec![Message::user("A page about orders.")];
    loop {
        let response = model
            .chat(ChatRequest {
                messages: messages.clone(),
                tools: vec![heading_tool()],
                ..ChatRequest::default()
            })
            .await?;
        messages.push(Message::assistant(&response));
        if response.tool_calls.is_empty() {
            break;
        }
        for call in &response.tool_calls {
            let valid = call
                .arguments
                .as_ref()
                .is_ok_and(|arguments| arguments.get("text").is_some());
            messages.push(if valid {
                Message::tool_result(call, json!({"id": "c1"}))
            } else {
                Message::tool_error(call, json!("`text` is required"))
            });
        }
    }

    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(
        requests[1].messages.last(),
        Some(&Message::tool_error(&bad_call, json!("`text` is required")))
    );
    assert_eq!(
        requests[2].messages.last(),
        Some(&Message::tool_result(&good_call, json!({"id": "c1"})))
    );
    assert_eq!(model.remaining_turns(), 0);
    Ok(())
}
