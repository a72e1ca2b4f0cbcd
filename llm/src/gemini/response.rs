//! Response parsing: a `generateContent` reply as a [`ChatResponse`], and a failed reply as the
//! [`ModelError`] that decides retrying.
//!
//! Text parts are joined (thought summaries dropped); function calls without an id get `call_N`,
//! numbered on from the calls already in the conversation; thinking tokens count as output.

use serde_json::json;

use super::wire::{ErrorBody, GenerateResponse};
use crate::{
    backoff::parse_seconds,
    model::{ChatRequest, ChatResponse, Message, ModelError, Result, StopReason, ToolCall, Usage},
    transport::HttpReply,
};

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
pub(super) fn calls_so_far(request: &ChatRequest) -> usize {
    request
        .messages
        .iter()
        .map(|message| match message {
            Message::Assistant { tool_calls, .. } => tool_calls.len(),
            _ => 0,
        })
        .sum()
}

pub(super) fn parse_reply(reply: &HttpReply, first_call_number: usize) -> Result<ChatResponse> {
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
pub(super) fn reply_error(reply: &HttpReply) -> ModelError {
    let error = reply.error();
    if let ModelError::RateLimited { retry_after: None } = error {
        let retry_after = serde_json::from_str::<ErrorBody>(&reply.body)
            .ok()
            .and_then(|body| {
                body.error
                    .details
                    .iter()
                    .find_map(|detail| detail["retryDelay"].as_str().and_then(parse_seconds))
            });
        return ModelError::RateLimited { retry_after };
    }
    error
}
