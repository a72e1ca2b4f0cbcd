//! A run as the runs page and the runs API show it: the run, its steps, the pages it made and the
//! page it waits on (never its link: only the token's hash is stored).

use serde::Serialize;

use uuid::Uuid;

use super::{
    page::step_generation_id,
    run::{Run, RunId, RunStatus, RunStep},
};
use crate::{
    pages::{
        history::AskEvent,
        page::{Page, PageId, PageStatus},
        people::{answers_of, AnswerRecord, Assignee},
    },
    store::{now_ms, Store, StoreError},
};

/// Everything known about one run.
#[derive(Clone, Debug, Serialize)]
pub struct RunOverview {
    /// The run.
    pub run: Run,
    /// Its steps, in order.
    pub steps: Vec<RunStep>,
    /// The pages it made, newest first.
    #[serde(skip)]
    pub pages: Vec<Page>,
    /// The assignees of each of its pages that has them, with their answers.
    #[serde(skip)]
    pub assignees: Vec<(PageId, Vec<Assignee>)>,
    /// The history of each of its pages, oldest event first.
    #[serde(skip)]
    pub history: Vec<(PageId, Vec<AskEvent>)>,
    /// The page the run's last `ui` step made, while it is open and the run unfinished (its
    /// link is never stored;
    /// `pages::links::reissue_links` gives working ones).
    pub waiting_page: Option<PageId>,
    /// The name of the step the run is at (or ended at).
    pub current_step: Option<String>,
    /// The generation records behind each `ui` step, by step index, oldest attempt first.
    #[serde(skip)]
    pub generations: Vec<(i64, Uuid)>,
}

/// Reads a run with its steps and pages.
///
/// # Errors
/// [`StoreError::NotFound`] for an unknown run; database failures.
pub async fn run_overview(store: &Store, id: RunId) -> Result<RunOverview, StoreError> {
    let run = store.run(id).await?;
    let steps = store.run_steps(id).await?;
    let pages = store.pages_of_run(id).await?;
    let mut assignees = Vec::new();
    for page in pages.iter().filter(|page| page.is_assigned()) {
        assignees.push((page.id, store.assignees_of(page.id).await?));
    }
    let mut history = Vec::new();
    for page in &pages {
        history.push((page.id, store.ask_events(page.id).await?));
    }
    let now = now_ms();
    // The `ui` step's output names the page the step after it sends; the run waits on it while
    // it is open. Its link is not stored (only the token's hash is): see `pages::links`.
    let candidate = steps.iter().rev().find_map(|step| {
        let handle = step.output.as_ref()?.get("page")?;
        handle.get("page_id")?.as_str()?.parse::<uuid::Uuid>().ok()
    });
    let unfinished = matches!(
        run.status,
        RunStatus::Ready | RunStatus::Running | RunStatus::Waiting
    );
    let waiting_page = candidate.filter(|_| unfinished).and_then(|page_id| {
        pages
            .iter()
            .find(|page| {
                page.id.0 == page_id && page.status == PageStatus::Open && !page.is_expired(now)
            })
            .map(|page| page.id)
    });
    let generations = step_generations(store, &steps).await?;
    let current_step = steps
        .iter()
        .find(|step| step.index == run.cursor)
        .or_else(|| steps.last())
        .map(|step| step.name.clone());
    Ok(RunOverview {
        run,
        steps,
        pages,
        assignees,
        history,
        waiting_page,
        current_step,
        generations,
    })
}

impl RunOverview {
    /// The assignees of page `page_id` (empty for a page with one anonymous link).
    #[must_use]
    pub fn assignees_of(&self, page_id: PageId) -> &[Assignee] {
        self.assignees
            .iter()
            .find(|(page, _)| *page == page_id)
            .map_or(&[], |(_, people)| people.as_slice())
    }

    /// What happened to page `page_id`, oldest first.
    #[must_use]
    pub fn history_of(&self, page_id: PageId) -> &[AskEvent] {
        self.history
            .iter()
            .find(|(page, _)| *page == page_id)
            .map_or(&[], |(_, events)| events.as_slice())
    }

    /// The answers given on page `page` so far, oldest first.
    #[must_use]
    pub fn answers_on(&self, page: &Page) -> Vec<AnswerRecord> {
        answers_of(
            self.assignees_of(page.id),
            page.response.as_ref(),
            page.submitted_at_ms,
        )
    }
}

/// The generation records of the run's `ui` steps (those that handed on a page), found by their
/// derived ids, one lookup per attempt.
async fn step_generations(
    store: &Store,
    steps: &[RunStep],
) -> Result<Vec<(i64, Uuid)>, StoreError> {
    let mut found = Vec::new();
    for step in steps {
        let made_a_page = step
            .output
            .as_ref()
            .and_then(|output| output.get("kind"))
            .and_then(serde_json::Value::as_str)
            == Some("page");
        if !made_a_page {
            continue;
        }
        for attempt in 1..=step.attempts {
            let id = step_generation_id(step.run_id, step.index, attempt);
            match store.generation(id).await {
                Ok(_) => found.push((step.index, id)),
                Err(StoreError::NotFound) => {}
                Err(error) => return Err(error),
            }
        }
    }
    Ok(found)
}
