//! How long to wait before trying again: exponential [`Backoff`] with jitter, and what a reply's
//! `Retry-After` asked for ([`retry_after`]).
//!
//! The model providers (`llm::retry`), signed webhooks (`notify::webhook`) and the chat's site
//! calls (`chat::http_executor`) all retry; each keeps its own policy (how many attempts, whether a
//! long `Retry-After` is waited out or given up on) and takes the arithmetic from here. The wait
//! after failed attempt `n` is `min(max, base · 2ⁿ⁻¹)`; [`Backoff::jittered`] scales it by a
//! random factor in `[0.5, 1]` so many clients do not retry in step.

use std::time::Duration;

use http::HeaderMap;
use rand::Rng as _;

/// Exponential backoff: `base` after the first failure, doubling, never above `max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// The wait after the first failure, before jitter.
    pub base: Duration,
    /// The longest wait.
    pub max: Duration,
}

impl Backoff {
    /// The wait after failed attempt number `attempt` (1-based), without jitter.
    #[must_use]
    pub fn delay(&self, attempt: u32) -> Duration {
        let exponent = attempt.saturating_sub(1).min(30);
        self.base
            .saturating_mul(2_u32.saturating_pow(exponent))
            .min(self.max)
    }

    /// [`Backoff::delay`] scaled by a random factor in `[0.5, 1]`.
    #[must_use]
    pub fn jittered(&self, attempt: u32) -> Duration {
        self.delay(attempt)
            .mul_f64(rand::thread_rng().gen_range(0.5..=1.0))
    }
}

/// The wait a reply asked for: `retry-after-ms` (Azure, OpenAI) or `Retry-After` in seconds
/// (`1`, `0.5`, `37s`). An HTTP-date `Retry-After` is ignored: the caller's backoff applies.
#[must_use]
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    if let Some(millis) = header("retry-after-ms").and_then(parse_seconds) {
        return Some(millis / 1000);
    }
    header("retry-after").and_then(parse_seconds)
}

/// A non-negative decimal number of seconds, e.g. `1`, `0.5`, `37s` (Google's duration form).
#[must_use]
pub fn parse_seconds(text: &str) -> Option<Duration> {
    let number = text.trim().trim_end_matches('s');
    let seconds: f64 = number.parse().ok()?;
    Duration::try_from_secs_f64(seconds).ok()
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    const BACKOFF: Backoff = Backoff {
        base: Duration::from_millis(100),
        max: Duration::from_millis(1000),
    };

    #[test]
    fn the_delay_doubles_from_the_base_and_stops_at_the_max() {
        let delays: Vec<u128> = (1..=6)
            .map(|attempt| BACKOFF.delay(attempt).as_millis())
            .collect();
        assert_eq!(delays, [100, 200, 400, 800, 1000, 1000]);
        assert_eq!(BACKOFF.delay(0), Duration::from_millis(100));
        assert_eq!(BACKOFF.delay(u32::MAX), Duration::from_millis(1000));
    }

    #[test]
    fn jitter_stays_between_half_and_all_of_the_delay() {
        for _ in 0..200 {
            let first = BACKOFF.jittered(1).as_millis();
            let third = BACKOFF.jittered(3).as_millis();
            let tenth = BACKOFF.jittered(10).as_millis();
            assert!((50..=100).contains(&first), "{first}");
            assert!((200..=400).contains(&third), "{third}");
            assert!((500..=1000).contains(&tenth), "{tenth}");
        }
    }

    #[test]
    fn retry_after_prefers_milliseconds_and_ignores_dates() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("5"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(5)));
        headers.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(250)));
        let mut dated = HeaderMap::new();
        dated.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2026 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&dated), None);
        assert_eq!(retry_after(&HeaderMap::new()), None);
    }

    #[test]
    fn seconds_may_be_whole_fractional_or_google_durations() {
        assert_eq!(parse_seconds(" 2 "), Some(Duration::from_secs(2)));
        assert_eq!(parse_seconds("0.5"), Some(Duration::from_millis(500)));
        assert_eq!(parse_seconds("37s"), Some(Duration::from_secs(37)));
        assert_eq!(parse_seconds("-1"), None);
        assert_eq!(parse_seconds("soon"), None);
    }
}
