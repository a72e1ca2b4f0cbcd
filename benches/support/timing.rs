//! Per-call timing for the percentiles criterion does not report: criterion estimates the mean
//! and the median of batched samples, but a tail (p99) needs every call timed on its own.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// The distribution of single-call times of one function.
pub struct Percentiles {
    /// What was timed.
    pub name: String,
    /// How many calls were timed.
    pub calls: usize,
    /// The middle call time.
    pub median: Duration,
    /// The call time 99% of calls stayed at or under.
    pub p99: Duration,
    /// The mean call time.
    pub mean: Duration,
}

/// Times single calls of `work` for about `budget` (at least `min_calls`, at most `max_calls`),
/// after a warm-up of a tenth of the budget. Run as a check (`--test`, as `make bench-check`
/// passes it, criterion's flag), `work` is called once: what a bench times still runs, without
/// the wait.
pub fn time_calls<T>(
    name: &str,
    budget: Duration,
    min_calls: usize,
    max_calls: usize,
    mut work: impl FnMut() -> T,
) -> Percentiles {
    if std::env::args().any(|arg| arg == "--test") {
        let call = Instant::now();
        black_box(work());
        return Percentiles::of(name, vec![call.elapsed()]);
    }
    let warm_up = Instant::now();
    while warm_up.elapsed() < budget / 10 {
        black_box(work());
    }
    let mut times = Vec::with_capacity(max_calls);
    let started = Instant::now();
    while times.len() < max_calls && (times.len() < min_calls || started.elapsed() < budget) {
        let call = Instant::now();
        black_box(work());
        times.push(call.elapsed());
    }
    Percentiles::of(name, times)
}

impl Percentiles {
    /// The distribution of `times` (one per call; at least one).
    pub fn of(name: &str, mut times: Vec<Duration>) -> Self {
        times.sort_unstable();
        let calls = times.len();
        let at = |fraction: f64| {
            // Nearest rank: the smallest time with at least `fraction` of the calls at or under it.
            let rank = (fraction * calls as f64).ceil() as usize;
            times
                .get(rank.clamp(1, calls.max(1)) - 1)
                .copied()
                .unwrap_or_default()
        };
        let total: Duration = times.iter().sum();
        Self {
            name: name.to_owned(),
            calls,
            median: at(0.5),
            p99: at(0.99),
            mean: total / u32::try_from(calls.max(1)).unwrap_or(u32::MAX),
        }
    }
}

/// Prints one table of results, aligned, on stderr (criterion's own output goes to stdout).
pub fn report(title: &str, results: &[Percentiles]) {
    let width = results
        .iter()
        .map(|result| result.name.len())
        .max()
        .unwrap_or(0);
    eprintln!("\n{title}: single calls timed one by one");
    eprintln!(
        "  {:width$}  {:>7}  {:>11}  {:>11}  {:>11}",
        "", "calls", "median", "p99", "mean"
    );
    for result in results {
        eprintln!(
            "  {:width$}  {:>7}  {:>11}  {:>11}  {:>11}",
            result.name,
            result.calls,
            format!("{:.1?}", result.median),
            format!("{:.1?}", result.p99),
            format!("{:.1?}", result.mean),
        );
    }
}
