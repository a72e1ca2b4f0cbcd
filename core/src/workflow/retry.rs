//! How often a failing step is tried, and how long to wait between tries.
//!
//! Exponential backoff with a cap and a maximum number of attempts, per step (as in underway's
//! `RetryPolicy`). Only [`StepError::Retryable`](super::step::StepError) failures are retried; an
//! attempt interrupted by a runner's death counts too, so a step that crashes its runner every
//! time still ends.

use std::time::Duration;

/// A step's retry policy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (at least 1).
    pub max_attempts: u32,
    /// The wait after the first failure.
    pub initial_backoff: Duration,
    /// Each further failure multiplies the wait by this.
    pub multiplier: f64,
    /// The longest wait.
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    /// Three attempts, waiting 1 s then 2 s.
    fn default() -> Self {
        Self {
            max_attempts: 3,
            initial_backoff: Duration::from_secs(1),
            multiplier: 2.0,
            max_backoff: Duration::from_secs(300),
        }
    }
}

impl RetryPolicy {
    /// No retries: the first failure fails the run.
    #[must_use]
    pub fn never() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// `max_attempts` attempts, waiting `initial_backoff` after the first failure and doubling.
    #[must_use]
    pub fn exponential(max_attempts: u32, initial_backoff: Duration) -> Self {
        Self {
            max_attempts: max_attempts.max(1),
            initial_backoff,
            ..Self::default()
        }
    }

    /// Whether another attempt follows a failed attempt number `attempt` (from 1).
    #[must_use]
    pub fn allows_retry_after(&self, attempt: u32) -> bool {
        attempt < self.max_attempts
    }

    /// The wait after failed attempt number `attempt` (from 1).
    #[must_use]
    pub fn backoff(&self, attempt: u32) -> Duration {
        let exponent = i32::try_from(attempt.saturating_sub(1)).unwrap_or(i32::MAX);
        let factor = self.multiplier.max(1.0).powi(exponent);
        let seconds = self.initial_backoff.as_secs_f64() * factor;
        if seconds.is_finite() && seconds < self.max_backoff.as_secs_f64() {
            Duration::from_secs_f64(seconds)
        } else {
            self.max_backoff
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_then_stops_at_the_cap() {
        let policy = RetryPolicy {
            max_attempts: 10,
            initial_backoff: Duration::from_millis(100),
            multiplier: 2.0,
            max_backoff: Duration::from_millis(500),
        };
        let waits: Vec<u128> = (1..=5)
            .map(|attempt| policy.backoff(attempt).as_millis())
            .collect();
        assert_eq!(waits, [100, 200, 400, 500, 500]);
        assert_eq!(policy.backoff(u32::MAX), Duration::from_millis(500));
    }

    #[test]
    fn retries_stop_at_the_maximum_attempts() {
        let policy = RetryPolicy::exponential(3, Duration::from_millis(1));
        assert!(policy.allows_retry_after(1));
        assert!(policy.allows_retry_after(2));
        assert!(!policy.allows_retry_after(3));
        assert!(!RetryPolicy::never().allows_retry_after(1));
    }
}
