//! [`Metered`]: a [`ChatModel`] wrapper that writes down what each call sent and got back, so an
//! evaluation can count turns and estimate tokens for models that report none.

use std::{
    sync::{Arc, Mutex, PoisonError},
    time::Instant,
};

use crate::llm::{ChatModel, ChatRequest, ChatResponse, ModelError, ModelName, Usage};

/// One model call as seen from outside.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallMeter {
    /// Whether the model answered (a failed call is not a turn).
    pub answered: bool,
    /// The request as JSON (messages and tool definitions), in bytes.
    pub request_bytes: usize,
    /// The reply's text and tool calls, in bytes.
    pub response_bytes: usize,
    /// What the provider reported; zero when it reports nothing.
    pub usage: Usage,
    /// How long the call took, ms.
    pub elapsed_ms: u64,
}

/// Measures every call to the model it wraps.
pub struct Metered {
    inner: Arc<dyn ChatModel>,
    calls: Mutex<Vec<CallMeter>>,
}

impl Metered {
    /// Wraps `inner`.
    #[must_use]
    pub fn new(inner: Arc<dyn ChatModel>) -> Self {
        Self {
            inner,
            calls: Mutex::new(Vec::new()),
        }
    }

    /// Every call so far, in order.
    #[must_use]
    pub fn calls(&self) -> Vec<CallMeter> {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// The bytes a reply carries: its text and each call's name and arguments.
fn response_bytes(response: &ChatResponse) -> usize {
    let text = response.text.as_deref().map_or(0, str::len);
    let calls: usize = response
        .tool_calls
        .iter()
        .map(|call| call.name.len() + call.arguments_text().len())
        .sum();
    text + calls
}

#[async_trait::async_trait]
impl ChatModel for Metered {
    fn name(&self) -> ModelName {
        self.inner.name()
    }

    fn page_mode(&self) -> crate::llm::PageMode {
        self.inner.page_mode()
    }

    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, ModelError> {
        let request_bytes = serde_json::to_vec(&request).map_or(0, |bytes| bytes.len());
        let started = Instant::now();
        let result = self.inner.chat(request).await;
        let meter = CallMeter {
            answered: result.is_ok(),
            request_bytes,
            response_bytes: result.as_ref().map_or(0, response_bytes),
            usage: result
                .as_ref()
                .map_or_else(|_| Usage::default(), |response| response.usage),
            elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        };
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(meter);
        result
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::llm::{Message, ScriptedModel, ScriptedTurn, ToolCall};

    #[tokio::test]
    async fn each_call_is_measured_and_a_failure_is_no_turn() {
        let model = Metered::new(Arc::new(ScriptedModel::new(vec![
            ScriptedTurn::tool_calls(vec![ToolCall::new("c", "Form", json!({"props": {}}))]),
            ScriptedTurn::error(ModelError::Timeout),
        ])));
        let request = ChatRequest {
            messages: vec![Message::user("make a form")],
            ..ChatRequest::default()
        };
        let _ = model.chat(request.clone()).await;
        let _ = model.chat(request).await;
        let calls = model.calls();
        assert_eq!(calls.len(), 2);
        assert!(calls[0].answered);
        assert_eq!(
            calls[0].response_bytes,
            "Form".len() + "{\"props\":{}}".len()
        );
        assert!(calls[0].request_bytes > "make a form".len());
        assert!(!calls[1].answered);
    }
}
