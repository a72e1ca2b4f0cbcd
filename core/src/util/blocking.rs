//! CPU-bound work off the async workers, answered within a deadline.
//!
//! Rendering a page or checking a pasted tree can take long enough to stall every request queued
//! on the same worker thread. [`within_deadline`] runs such work on tokio's blocking pool and
//! stops *waiting* for it at a deadline. It cannot stop the work itself: whatever runs here must
//! be bounded on its own (the render budget, template fuel), so a late task still ends soon after.

use std::time::Duration;

/// How long an answer waits for a page, document or fragment to render.
pub const RENDER_DEADLINE: Duration = Duration::from_secs(10);

/// Why blocking work gave no result.
#[derive(Debug, thiserror::Error)]
pub enum BlockingError {
    /// The work was still running at the deadline.
    #[error("the work took longer than {0:?}")]
    TimedOut(Duration),
    /// The work panicked or was cancelled.
    #[error("the work did not finish: {0}")]
    Failed(#[from] tokio::task::JoinError),
}

/// Runs `work` on the blocking pool and waits for it at most `deadline`.
///
/// # Errors
/// [`BlockingError::TimedOut`] past the deadline (the work goes on in the background until it
/// ends), [`BlockingError::Failed`] when it panicked.
pub async fn within_deadline<T, F>(deadline: Duration, work: F) -> Result<T, BlockingError>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    match tokio::time::timeout(deadline, tokio::task::spawn_blocking(work)).await {
        Ok(joined) => Ok(joined?),
        Err(_) => Err(BlockingError::TimedOut(deadline)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_result_comes_back_and_a_slow_task_is_answered_at_the_deadline() {
        let quick = within_deadline(Duration::from_secs(5), || 2 + 2).await;
        assert!(matches!(quick, Ok(4)));
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let slow = within_deadline(Duration::from_millis(20), move || {
            let _ = wait.recv_timeout(Duration::from_secs(5));
        })
        .await;
        assert!(matches!(slow, Err(BlockingError::TimedOut(_))), "{slow:?}");
        let _ = release.send(());
    }
}
