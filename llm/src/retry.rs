//! [`Retrying`]: a per-call timeout and retries with exponential backoff around any model.
//!
//! Providers make exactly one HTTP call per [`ChatModel::chat`]; this wrapper decides how long a
//! call may take and whether to try again, so the policy is written once and tested without a
//! network. Only errors that [`ModelError::is_retryable`] are retried. The wait before attempt
//! `n + 1` is `min(max_delay, base_delay · 2ⁿ⁻¹)` scaled by a random factor in `[0.5, 1]`
//! (jitter, so many clients do not retry in step), and never shorter than a 429's
//! `retry_after`. A `retry_after` longer than `max_delay` is not waited out: the error is
//! returned at once so the caller can fall back instead of blocking a page for minutes.

use std::time::Duration;

use super::model::{ChatModel, ChatRequest, ChatResponse, ModelError, ModelName, PageMode, Result};
use crate::backoff::Backoff;

/// How long one call may take and how often to try.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelCallPolicy {
    /// Attempts in all, the first included; at least 1.
    pub max_attempts: u32,
    /// The wait before the first retry, before jitter.
    pub base_delay: Duration,
    /// The longest wait between attempts.
    pub max_delay: Duration,
    /// How long one attempt may take before it counts as [`ModelError::Timeout`].
    pub call_timeout: Duration,
}

impl Default for ModelCallPolicy {
    /// Three attempts, 500 ms base delay, 20 s longest wait, 60 s per call.
    fn default() -> Self {
        Self {
            max_attempts: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(20),
            call_timeout: Duration::from_secs(60),
        }
    }
}

impl ModelCallPolicy {
    /// The wait after failed attempt number `attempt` (1-based), or `None` to give up now.
    #[must_use]
    pub fn delay_after(&self, attempt: u32, error: &ModelError) -> Option<Duration> {
        let jittered = Backoff {
            base: self.base_delay,
            max: self.max_delay,
        }
        .jittered(attempt);
        match error {
            ModelError::RateLimited {
                retry_after: Some(wait),
            } if *wait > self.max_delay => None,
            ModelError::RateLimited {
                retry_after: Some(wait),
            } => Some(jittered.max(*wait)),
            _ => Some(jittered),
        }
    }
}

/// Any model, with the timeout and retries of a [`ModelCallPolicy`].
#[derive(Clone, Debug)]
pub struct Retrying<M> {
    inner: M,
    policy: ModelCallPolicy,
    /// `TESSERA_PAGE_MODE` when it says more than "the provider's own".
    page_mode: Option<PageMode>,
    /// `TESSERA_MODEL_TEMPERATURE`: the sampling temperature of every call that sets none.
    temperature: Option<f32>,
}

impl<M> Retrying<M> {
    /// Wraps `inner` with `policy`.
    #[must_use]
    pub fn new(inner: M, policy: ModelCallPolicy) -> Self {
        Self {
            inner,
            policy,
            page_mode: None,
            temperature: None,
        }
    }

    /// The same model, sampling at `temperature` on every call that does not set its own.
    #[must_use]
    pub fn with_temperature(mut self, temperature: Option<f32>) -> Self {
        self.temperature = temperature;
        self
    }

    /// The same model, asked for pages in `mode` whatever its provider prefers.
    #[must_use]
    pub fn with_page_mode(mut self, mode: Option<PageMode>) -> Self {
        self.page_mode = mode;
        self
    }

    /// The policy in force.
    #[must_use]
    pub fn policy(&self) -> ModelCallPolicy {
        self.policy
    }

    /// The wrapped model.
    #[must_use]
    pub fn inner(&self) -> &M {
        &self.inner
    }
}

#[async_trait::async_trait]
impl<M: ChatModel> ChatModel for Retrying<M> {
    fn name(&self) -> ModelName {
        self.inner.name()
    }

    fn page_mode(&self) -> PageMode {
        self.page_mode.unwrap_or_else(|| self.inner.page_mode())
    }

    async fn chat(&self, mut request: ChatRequest) -> Result<ChatResponse> {
        if request.temperature.is_none() {
            request.temperature = self.temperature;
        }
        let max_attempts = self.policy.max_attempts.max(1);
        let mut attempt = 1;
        loop {
            let outcome =
                tokio::time::timeout(self.policy.call_timeout, self.inner.chat(request.clone()))
                    .await
                    .unwrap_or(Err(ModelError::Timeout));
            let error = match outcome {
                Ok(response) => return Ok(response),
                Err(error) if error.is_retryable() && attempt < max_attempts => error,
                Err(error) => return Err(error),
            };
            let Some(delay) = self.policy.delay_after(attempt, &error) else {
                return Err(error);
            };
            tracing::warn!(
                model.name = %self.inner.name(),
                attempt,
                delay_ms = delay.as_millis(),
                error = %error,
                "model call failed, retrying"
            );
            tokio::time::sleep(delay).await;
            attempt += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::scripted::{ScriptedModel, ScriptedTurn};

    fn quick(max_attempts: u32) -> ModelCallPolicy {
        ModelCallPolicy {
            max_attempts,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(50),
            call_timeout: Duration::from_millis(200),
        }
    }

    fn server_error() -> ModelError {
        ModelError::Server {
            status: 503,
            body_excerpt: "busy".into(),
        }
    }

    #[tokio::test]
    async fn retryable_errors_are_retried_until_a_reply_comes() -> anyhow::Result<()> {
        let script = ScriptedModel::new(vec![
            ScriptedTurn::error(server_error()),
            ScriptedTurn::error(ModelError::Timeout),
            ScriptedTurn::reply(ChatResponse::text("done")),
        ]);
        let model = Retrying::new(script.clone(), quick(3));
        let response = model.chat(ChatRequest::default()).await?;
        assert_eq!(response.text.as_deref(), Some("done"));
        assert_eq!(script.requests().len(), 3);
        Ok(())
    }

    #[tokio::test]
    async fn the_last_error_is_returned_when_attempts_run_out() {
        let script = ScriptedModel::new(vec![
            ScriptedTurn::error(server_error()),
            ScriptedTurn::error(server_error()),
            ScriptedTurn::reply(ChatResponse::text("too late")),
        ]);
        let model = Retrying::new(script.clone(), quick(2));
        let outcome = model.chat(ChatRequest::default()).await;
        assert_eq!(outcome, Err(server_error()));
        assert_eq!(script.requests().len(), 2);
    }

    #[tokio::test]
    async fn final_errors_are_not_retried() {
        let refused = ModelError::Refused {
            reason: "policy".into(),
        };
        let script = ScriptedModel::new(vec![
            ScriptedTurn::error(refused.clone()),
            ScriptedTurn::reply(ChatResponse::text("unused")),
        ]);
        let model = Retrying::new(script.clone(), quick(3));
        assert_eq!(model.chat(ChatRequest::default()).await, Err(refused));
        assert_eq!(script.requests().len(), 1);
    }

    #[tokio::test]
    async fn a_rate_limit_wait_is_honoured() -> anyhow::Result<()> {
        let script = ScriptedModel::new(vec![
            ScriptedTurn::error(ModelError::RateLimited {
                retry_after: Some(Duration::from_millis(40)),
            }),
            ScriptedTurn::reply(ChatResponse::text("ok")),
        ]);
        let model = Retrying::new(script.clone(), quick(3));
        let started = Instant::now();
        model.chat(ChatRequest::default()).await?;
        assert!(started.elapsed() >= Duration::from_millis(40));
        assert_eq!(script.requests().len(), 2);
        Ok(())
    }

    #[tokio::test]
    async fn a_rate_limit_wait_longer_than_the_max_delay_is_not_waited_out() {
        let limited = ModelError::RateLimited {
            retry_after: Some(Duration::from_secs(120)),
        };
        let script = ScriptedModel::new(vec![
            ScriptedTurn::error(limited.clone()),
            ScriptedTurn::reply(ChatResponse::text("unused")),
        ]);
        let model = Retrying::new(script.clone(), quick(3));
        assert_eq!(model.chat(ChatRequest::default()).await, Err(limited));
        assert_eq!(script.requests().len(), 1);
    }

    #[tokio::test]
    async fn a_slow_call_times_out() {
        let script = ScriptedModel::new(vec![
            ScriptedTurn::reply(ChatResponse::text("slow")).after(Duration::from_secs(5))
        ]);
        let model = Retrying::new(script, quick(1));
        let started = Instant::now();
        assert_eq!(
            model.chat(ChatRequest::default()).await,
            Err(ModelError::Timeout)
        );
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn backoff_doubles_with_jitter_and_stays_under_the_max() {
        let policy = ModelCallPolicy {
            max_attempts: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
            call_timeout: Duration::from_secs(1),
        };
        for _ in 0..50 {
            let first = policy.delay_after(1, &ModelError::Timeout);
            let third = policy.delay_after(3, &ModelError::Timeout);
            let tenth = policy.delay_after(10, &ModelError::Timeout);
            assert!(first.is_some_and(|delay| (50..=100).contains(&delay.as_millis())));
            assert!(third.is_some_and(|delay| (200..=400).contains(&delay.as_millis())));
            assert!(tenth.is_some_and(|delay| (500..=1000).contains(&delay.as_millis())));
        }
    }

    #[test]
    fn defaults_are_three_attempts_and_a_minute_per_call() {
        let policy = ModelCallPolicy::default();
        assert_eq!(policy.max_attempts, 3);
        assert_eq!(policy.base_delay, Duration::from_millis(500));
        assert_eq!(policy.max_delay, Duration::from_secs(20));
        assert_eq!(policy.call_timeout, Duration::from_secs(60));
    }
}
