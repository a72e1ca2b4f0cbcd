//! The crash drill: a workflow whose steps take measurable time and record every execution
//! outside the run tables, so a test that `kill -9`s servers can check what really ran.
//!
//! Registered only when `TESSERA_DRILL_LOG` names a file (`startup.rs`); it must never appear
//! otherwise. Each step execution appends JSON lines to that file — `start`, then `end` when
//! the step's work is done, or `dropped` when its runner abandoned it (lease lost, shutdown) —
//! with the process id, the run's `tag` (set by whoever starts the run; code steps do not see the
//! run id) and the time in Unix milliseconds. A `start` with neither ended when its process died.
//! The `ui` step is logged by [`DrillPageFactory`] around page generation, so a kill can land
//! "during generation". Appends are single `write` calls on an `O_APPEND` file, so the lines of
//! several processes never interleave.

use std::{
    future::Future,
    io::Write as _,
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    forms::FormSchema,
    pages::{links::PageLinks, page::PageId},
    store::now_ms,
    workflow::{
        step::StepError, wait_for, workflow, PageFactory, PageHandle, PageRequest, Prompt,
        RetryPolicy, Workflow, WorkflowError,
    },
};

/// The drill workflow's name.
pub const WORKFLOW: &str = "crash-drill";

/// How the drill's page prompt starts: how [`DrillPageFactory`] tells drill pages apart.
const PROMPT_PREFIX: &str = "Crash drill";

/// The drill's state: what the starter asks for, and what the steps did.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DrillState {
    /// The starter's name for this run, written in every log line.
    #[serde(default)]
    pub tag: String,
    /// How long each code step works, in milliseconds.
    #[serde(default)]
    pub step_ms: u64,
    /// How many rows `Prepare` puts in the page's data (more rows, longer generation).
    #[serde(default)]
    pub rows: u64,
    /// The rows the page shows.
    #[serde(default)]
    pub items: Vec<Value>,
    /// The code steps whose results were committed, in order: each name appears once.
    #[serde(default)]
    pub trail: Vec<String>,
    /// The typed response the run resumed with.
    #[serde(default)]
    pub response: Option<DrillAnswer>,
}

/// What the drill's page asks for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, FormSchema)]
pub struct DrillAnswer {
    /// Any text.
    pub answer: String,
    /// Any whole number.
    pub amount: i64,
}

/// Where the drill's executions are recorded; cheap to clone.
#[derive(Clone, Debug)]
pub struct DrillLog {
    path: Arc<PathBuf>,
}

/// One line of the drill log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrillEvent {
    /// The process that ran the step.
    pub pid: u32,
    /// The run's tag.
    pub tag: String,
    /// The step's name.
    pub step: String,
    /// `start`, `end` or `dropped`.
    pub event: String,
    /// When, in Unix milliseconds.
    pub at_ms: i64,
}

impl DrillLog {
    /// A log appending to `path` (created on the first line).
    #[must_use]
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: Arc::new(path.into()),
        }
    }

    fn line(tag: &str, step: &str, event: &str) -> Vec<u8> {
        let event = DrillEvent {
            pid: std::process::id(),
            tag: tag.to_owned(),
            step: step.to_owned(),
            event: event.to_owned(),
            at_ms: now_ms(),
        };
        let mut line = serde_json::to_vec(&event).unwrap_or_default();
        line.push(b'\n');
        line
    }

    fn append(path: &Path, line: &[u8]) -> std::io::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        file.write_all(line)
    }

    /// Appends one event and waits until it is written, so a `start` is on disk before the
    /// step does anything.
    async fn record(&self, tag: &str, step: &str, event: &str) -> std::io::Result<()> {
        let line = Self::line(tag, step, event);
        let path = Arc::clone(&self.path);
        tokio::task::spawn_blocking(move || Self::append(&path, &line))
            .await
            .map_err(std::io::Error::other)?
    }

    /// Runs `work` as one logged execution of `step`: `start` before, `end` after, `dropped` if
    /// the future is dropped half-way.
    async fn execution<T>(&self, tag: &str, step: &str, work: impl Future<Output = T>) -> T {
        if let Err(error) = self.record(tag, step, "start").await {
            tracing::warn!(error = %error, "cannot append to the drill log");
        }
        let mut guard = Execution {
            log: self.clone(),
            tag: tag.to_owned(),
            step: step.to_owned(),
            done: false,
        };
        let result = work.await;
        guard.done = true;
        if let Err(error) = self.record(tag, step, "end").await {
            tracing::warn!(error = %error, "cannot append to the drill log");
        }
        result
    }
}

/// Writes `dropped` when an execution is abandoned before its end.
struct Execution {
    log: DrillLog,
    tag: String,
    step: String,
    done: bool,
}

impl Drop for Execution {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        // The time is taken now; the write may follow, on a blocking thread.
        let line = DrillLog::line(&self.tag, &self.step, "dropped");
        let path = Arc::clone(&self.log.path);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            drop(runtime.spawn_blocking(move || DrillLog::append(&path, &line)));
        }
    }
}

async fn work(log: &DrillLog, state: &DrillState, step: &str) {
    let millis = state.step_ms;
    log.execution(
        &state.tag,
        step,
        tokio::time::sleep(Duration::from_millis(millis)),
    )
    .await;
}

fn with_trail(mut state: DrillState, step: &str) -> DrillState {
    state.trail.push(step.to_owned());
    state
}

/// The drill: `Prepare` (works, builds the rows), `Ask` (a generated page over them),
/// `Notify` (works, then waits for the page), `Record` (works, keeps the typed response).
/// Every code step takes `step_ms`; killed attempts are retried many times, since a drill
/// kills on purpose.
///
/// # Errors
/// Only if the definition is inconsistent.
pub fn drill_workflow(log: &DrillLog) -> Result<Workflow<DrillState>, WorkflowError> {
    let prepare_log = log.clone();
    let notify_log = log.clone();
    let record_log = log.clone();
    workflow::<DrillState>(WORKFLOW)
        .step("Prepare", move |state: DrillState| {
            let log = prepare_log.clone();
            async move {
                work(&log, &state, "Prepare").await;
                let items = (0..state.rows)
                    .map(|index| serde_json::json!({"id": format!("r{index}"), "label": format!("Row {index}"), "value": index}))
                    .collect();
                Ok(with_trail(DrillState { items, ..state }, "Prepare"))
            }
        })
        .ui(
            "Ask",
            Prompt::<DrillAnswer>::new(
                "Crash drill {{ tag }}: ask for an answer and a whole number about these {{ items | length }} rows.",
            ),
        )
        .step_with_page("Notify", move |state: DrillState, page: PageHandle<DrillAnswer>| {
            let log = notify_log.clone();
            async move {
                work(&log, &state, "Notify").await;
                Ok((with_trail(state, "Notify"), wait_for(page.webhook)))
            }
        })
        .step_with_response("Record", move |state: DrillState, response: DrillAnswer| {
            let log = record_log.clone();
            async move {
                work(&log, &state, "Record").await;
                Ok(with_trail(DrillState { response: Some(response), ..state }, "Record"))
            }
        })
        .default_retry(RetryPolicy::exponential(50, Duration::from_millis(50)))
        .build()
}

/// A [`PageFactory`] that logs each page generation of a drill run as an execution of its
/// `ui` step (pages of other workflows pass through unlogged).
pub struct DrillPageFactory {
    inner: Arc<dyn PageFactory>,
    log: DrillLog,
}

impl DrillPageFactory {
    /// Wraps `inner`, logging to `log`.
    #[must_use]
    pub fn new(inner: Arc<dyn PageFactory>, log: DrillLog) -> Self {
        Self { inner, log }
    }
}

#[async_trait::async_trait]
impl PageFactory for DrillPageFactory {
    async fn create_page(&self, request: PageRequest) -> Result<PageHandle, StepError> {
        let tag = request
            .data
            .get("tag")
            .and_then(Value::as_str)
            .filter(|_| request.prompt.starts_with(PROMPT_PREFIX))
            .map(str::to_owned);
        match tag {
            Some(tag) => {
                let step = request.step_name.clone();
                self.log
                    .execution(&tag, &step, self.inner.create_page(request))
                    .await
            }
            None => self.inner.create_page(request).await,
        }
    }

    async fn relink(&self, page_id: PageId) -> Result<PageLinks, StepError> {
        self.inner.relink(page_id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_execution_logs_start_and_end_and_a_dropped_one_says_so() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let log = DrillLog::new(dir.path().join("drill.log"));
        log.execution("t1", "Prepare", async {}).await;
        let abandoned = log.execution("t1", "Notify", std::future::pending::<()>());
        let _ = tokio::time::timeout(Duration::from_millis(20), abandoned).await;
        // The `dropped` line is written on a blocking thread; wait until it is there.
        let mut events = Vec::new();
        for _ in 0..200 {
            let text = tokio::fs::read_to_string(dir.path().join("drill.log")).await?;
            events = text
                .lines()
                .map(serde_json::from_str::<DrillEvent>)
                .collect::<Result<Vec<_>, _>>()?;
            if events.len() == 4 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let seen: Vec<(&str, &str)> = events
            .iter()
            .map(|event| (event.step.as_str(), event.event.as_str()))
            .collect();
        assert_eq!(
            seen,
            [
                ("Prepare", "start"),
                ("Prepare", "end"),
                ("Notify", "start"),
                ("Notify", "dropped")
            ]
        );
        assert!(events
            .iter()
            .all(|event| event.pid == std::process::id() && event.tag == "t1"));
        Ok(())
    }
}
