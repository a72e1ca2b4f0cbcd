//! The time of day as code that decides by it reads it: injected, so tests move time instead of
//! sleeping through it.

use std::sync::Arc;

/// The current time, unix ms.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// The machine's clock.
#[must_use]
pub fn system_clock() -> Clock {
    Arc::new(crate::store::now_ms)
}
