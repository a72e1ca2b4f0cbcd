//! A closed-loop load generator for benches against a server on loopback.
//!
//! `concurrency` tasks each send their next request as soon as their previous one was answered,
//! so the figures say what the server sustains, not what an open-loop schedule asks of it. Each
//! request's send and answer instants are kept, so a bench can measure from the send to an event
//! the answer does not show (a run resuming after a page submission).

use std::{
    future::Future,
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

/// When each request of a load run was sent and answered, by request index.
pub struct Timed {
    /// The instant each request started to be sent.
    pub sent: Vec<Instant>,
    /// The instant its answer was read.
    pub answered: Vec<Instant>,
}

impl Timed {
    /// Send-to-answer time of each request.
    pub fn latencies(&self) -> Vec<Duration> {
        self.sent
            .iter()
            .zip(&self.answered)
            .map(|(sent, answered)| answered.saturating_duration_since(*sent))
            .collect()
    }

    /// The first send.
    pub fn first_sent(&self) -> Option<Instant> {
        self.sent.iter().min().copied()
    }

    /// Requests answered per second, from the first send to the last answer.
    pub fn answers_per_second(&self) -> f64 {
        per_second(self.first_sent(), &self.answered)
    }
}

/// `events.len()` per second, from `start` to the latest of `events`.
pub fn per_second(start: Option<Instant>, events: &[Instant]) -> f64 {
    let (Some(start), Some(end)) = (start, events.iter().max()) else {
        return 0.0;
    };
    let seconds = end.saturating_duration_since(start).as_secs_f64();
    if seconds > 0.0 {
        events.len() as f64 / seconds
    } else {
        0.0
    }
}

/// Sends requests `0..count` over `concurrency` tasks, each calling `send(index)` and awaiting it
/// before taking the next index.
///
/// # Errors
/// The first request that failed (`send` decides what failure is, e.g. an unexpected status).
pub async fn closed_loop<F, Fut>(count: usize, concurrency: usize, send: F) -> anyhow::Result<Timed>
where
    F: Fn(usize) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = anyhow::Result<()>> + Send + 'static,
{
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..concurrency.max(1) {
        let next = Arc::clone(&next);
        let send = send.clone();
        tasks.spawn(async move {
            let mut timed = Vec::new();
            loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= count {
                    return anyhow::Ok(timed);
                }
                let sent = Instant::now();
                send(index).await?;
                timed.push((index, sent, Instant::now()));
            }
        });
    }
    let now = Instant::now();
    let mut sent = vec![now; count];
    let mut answered = vec![now; count];
    while let Some(joined) = tasks.join_next().await {
        for (index, at, answer) in joined?? {
            sent[index] = at;
            answered[index] = answer;
        }
    }
    Ok(Timed { sent, answered })
}
