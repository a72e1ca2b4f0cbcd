//! The runs pages' view models (`tessera_app::runs`) and the runs API's JSON bodies.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;
use tessera_app::runs::{
    AnswerLine, HistoryLine, NewLink, PageView, RunDetail, RunRow, RunsList, StepView,
};
use utoipa::ToSchema;

use crate::{
    pages::{
        links::{AssigneeLink, PageLinks, RunPageChange},
        page::{PageId, PageStatus},
        people::{current_votes, AnswerRecord, Outcome},
        receipt::format_utc,
    },
    workflow::{
        overview::RunOverview,
        run::{Run, RunFilter, RunId, RunList, RunStatus, StepStatus, TimeoutAction},
        Unanswered,
    },
};

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// One run's timeline as of `now` (unix ms), with a fresh link to show once and a flash line.
#[must_use]
pub fn run_detail(
    overview: &RunOverview,
    now: i64,
    new_links: Option<PageLinks>,
    flash: Option<String>,
) -> RunDetail {
    // A fresh link is shown once: reloading would lose it, so that answer stays put (it offers
    // "Refresh now").
    let live = new_links.is_none()
        && matches!(
            overview.run.status,
            RunStatus::Ready | RunStatus::Running | RunStatus::Waiting
        );
    RunDetail {
        id: overview.run.id.to_string(),
        workflow: overview.run.workflow.clone(),
        status: overview.run.status.as_str().to_owned(),
        error: overview.run.error.clone(),
        state: pretty(&overview.run.state),
        steps: overview
            .steps
            .iter()
            .map(|step| StepView {
                index: step.index,
                name: step.name.clone(),
                status: step.status.as_str().to_owned(),
                attempts: step.attempts,
                output: step
                    .output
                    .as_ref()
                    .filter(|output| !output.is_null())
                    .map(pretty),
                error: step.error.clone(),
                generations: overview
                    .generations
                    .iter()
                    .filter(|(index, _)| *index == step.index)
                    .map(|(_, id)| id.to_string())
                    .collect(),
            })
            .collect(),
        pages: overview
            .pages
            .iter()
            .map(|page| PageView {
                id: page.id.to_string(),
                status: if page.status == PageStatus::Open && page.is_expired(now) {
                    "expired".to_owned()
                } else {
                    page.status.as_str().to_owned()
                },
                expires: format_utc(page.expires_at_ms),
                response: page.response.as_ref().map(pretty),
                approvals: page.approvals_required.map(|required| {
                    let (votes, stage) = current_votes(overview.assignees_of(page.id));
                    let approvals = format!("{required} of {votes} approvals needed");
                    if stage > 0 {
                        format!("Stage {}: {approvals}", stage + 1)
                    } else {
                        approvals
                    }
                }),
                answers: overview
                    .answers_on(page)
                    .into_iter()
                    .map(|answer| AnswerLine {
                        who: answer
                            .answered_by
                            .clone()
                            .unwrap_or_else(|| "the page's link".to_owned()),
                        outcome: answer.outcome.as_str().to_owned(),
                        at: format_utc(answer.at_ms),
                        detail: answer_detail(&answer),
                    })
                    .collect(),
                waiting_on: overview
                    .assignees_of(page.id)
                    .iter()
                    .filter(|assignee| assignee.answer.is_none())
                    .map(|assignee| assignee.email.clone())
                    .collect(),
                history: overview
                    .history_of(page.id)
                    .iter()
                    .map(|event| HistoryLine {
                        at: format_utc(event.at_ms),
                        text: event.sentence(),
                    })
                    .collect(),
            })
            .collect(),
        waiting: waiting_sentence(overview),
        new_links: new_links.map(new_link_views).unwrap_or_default(),
        flash,
        live,
    }
}

/// Fresh links as the run page shows them once.
fn new_link_views(links: PageLinks) -> Vec<NewLink> {
    match links {
        PageLinks::Shared(link) => vec![NewLink {
            assignee: None,
            link,
        }],
        PageLinks::Assigned(links) => links
            .into_iter()
            .map(|link| NewLink {
                assignee: Some(link.assignee),
                link: link.link,
            })
            .collect(),
    }
}

/// A person's answer in one line: the typed answer as compact JSON, or why they declined.
fn answer_detail(answer: &AnswerRecord) -> String {
    match answer.outcome {
        Outcome::Submitted => answer
            .response
            .as_ref()
            .map(Value::to_string)
            .unwrap_or_default(),
        Outcome::Declined => answer
            .reason
            .clone()
            .unwrap_or_else(|| "(no reason given)".to_owned()),
    }
}

/// What a waiting run waits for, until when, and what happens then, in one sentence.
fn waiting_sentence(overview: &RunOverview) -> Option<String> {
    let run = &overview.run;
    if run.status != RunStatus::Waiting {
        return None;
    }
    let wait = run.waiting.as_ref()?;
    let Some(deadline) = wait.deadline_ms else {
        return Some("Waiting for an answer, with no deadline.".to_owned());
    };
    let default_response = overview
        .steps
        .iter()
        .find(|step| step.index == run.cursor - 1)
        .and_then(|step| step.output.as_ref())
        .and_then(|output| output.get("default_response"));
    let then = match wait.on_timeout {
        TimeoutAction::Fail => "the run fails",
        TimeoutAction::Cancel => "the run is cancelled",
        TimeoutAction::Continue if default_response.and_then(Unanswered::of).is_some() => {
            "the run is cancelled"
        }
        TimeoutAction::Continue => "the run carries on with its default answer",
    };
    Some(format!(
        "Waiting for an answer until {}; then {then}. Extending the link moves this too.",
        format_utc(deadline)
    ))
}

/// The fresh links to show once (if any) and the flash line after a run page's link button.
#[must_use]
pub fn link_change(change: RunPageChange) -> (Option<PageLinks>, String) {
    let (new_links, flash) = match change {
        RunPageChange::NewLink(PageLinks::Shared(link)) => (
            Some(PageLinks::Shared(link)),
            "A working link was issued. Any link sent earlier no longer works.",
        ),
        RunPageChange::NewLink(links) => (
            Some(links),
            "Working links were issued for everyone who has not answered. Their earlier links no longer work.",
        ),
        RunPageChange::Changed => (None, "Done."),
        RunPageChange::NotOpen => (None, "Nothing changed: the page is no longer open."),
    };
    (new_links, flash.to_owned())
}

/// The body of `POST /api/runs/{id}/link`: the page's fresh link, or its assignees' links.
#[derive(Debug, Serialize, ToSchema)]
pub struct IssuedLinks {
    /// The page the links open.
    pub page_id: PageId,
    /// The page's one link (absent for a page with assignees).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// Each assignee's own link, for those who have not answered (absent without assignees).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<AssigneeLink>>,
}

/// The body of `POST /api/runs/{id}/link`.
#[must_use]
pub fn issued_links(page_id: PageId, links: &PageLinks) -> IssuedLinks {
    let (link, links) = match links {
        PageLinks::Shared(link) => (Some(link.clone()), None),
        PageLinks::Assigned(links) => (None, Some(links.clone())),
    };
    IssuedLinks {
        page_id,
        link,
        links,
    }
}

/// One page of the runs list, as `filter` (a status, a page's limit and offset) listed it, with
/// the workflows a person may start from the list.
#[must_use]
pub fn runs_list(listed: &RunList, filter: &RunFilter, workflows: Vec<String>) -> RunsList {
    let page_size = filter.limit.max(1);
    let page = u32::try_from(filter.offset / page_size).unwrap_or(0);
    let rows = listed
        .runs
        .iter()
        .map(|run| RunRow {
            id: run.id.to_string(),
            workflow: run.workflow.clone(),
            status: run.status.as_str().to_owned(),
            step: format!("step {}", run.cursor + 1),
            updated: format_utc(run.updated_at_ms),
        })
        .collect();
    RunsList {
        rows,
        status: filter.status.map(|status| status.as_str().to_owned()),
        page,
        has_next: i64::from(page + 1) * page_size < listed.total,
        workflows,
        flash: None,
    }
}

/// Where to find a run: itself in the API and (when just started) its page.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunLinks {
    /// `GET /api/runs/{id}`.
    #[serde(rename = "self")]
    pub itself: String,
    /// The admin's timeline page, in the answer to `POST /api/runs` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<String>,
}

/// A run in the API's lists and in the answer to `POST /api/runs`.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunSummary {
    /// Its id.
    pub id: RunId,
    /// Its workflow.
    pub workflow: String,
    /// Where it is.
    pub status: RunStatus,
    /// Where to find it.
    pub links: RunLinks,
}

/// A run in the API's lists: id, workflow, status and its links.
#[must_use]
pub fn run_summary(run: &Run) -> RunSummary {
    RunSummary {
        id: run.id,
        workflow: run.workflow.clone(),
        status: run.status,
        links: RunLinks {
            itself: format!("/api/runs/{}", run.id),
            page: None,
        },
    }
}

/// A just-started run: its summary with the link to its timeline page.
#[must_use]
pub fn started_run(run: &Run) -> RunSummary {
    let mut summary = run_summary(run);
    summary.links.page = Some(format!("/runs/{}", run.id));
    summary
}

/// The body of `GET /api/runs`.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunsPage {
    /// This page of runs, newest first.
    pub runs: Vec<RunSummary>,
    /// How many runs match the filter in all.
    pub total: i64,
}

/// One step of a run, in `GET /api/runs/{id}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct StepJson {
    /// Its index in the workflow, from 0.
    pub index: i64,
    /// Its name.
    pub name: String,
    /// Where it is.
    pub status: StepStatus,
    /// How many times it started.
    pub attempts: i64,
    /// What it handed to the next step.
    pub output: Option<Value>,
    /// Its last error.
    pub error: Option<String>,
}

/// One page of a run, in `GET /api/runs/{id}` (never its link).
#[derive(Debug, Serialize, ToSchema)]
pub struct PageJson {
    /// As stored: an open page past `expires_at_ms` has expired.
    pub status: PageStatus,
    /// When its link expires, unix ms.
    pub expires_at_ms: i64,
    /// The typed response, once submitted.
    pub response: Option<Value>,
}

/// The body of `GET /api/runs/{id}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunJson {
    /// Its id.
    pub id: RunId,
    /// Its workflow.
    pub workflow: String,
    /// Where it is.
    pub status: RunStatus,
    /// The name of the step it is at (or ended at).
    pub current_step: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
    /// Its state.
    pub state: Value,
    /// Its steps, in order.
    pub steps: Vec<StepJson>,
    /// Its pages, by id.
    pub pages: BTreeMap<String, PageJson>,
    /// The page it waits on, while one is open.
    pub waiting_page: Option<PageId>,
    /// The digest of the workflow definition it runs.
    pub definition_digest: Option<String>,
}

/// `GET /api/runs/{id}`'s body: status, current step, each step's output and the id of the
/// page it waits on (never a link).
#[must_use]
pub fn run_json(overview: &RunOverview) -> RunJson {
    let steps = overview
        .steps
        .iter()
        .map(|step| StepJson {
            index: step.index,
            name: step.name.clone(),
            status: step.status,
            attempts: step.attempts,
            output: step.output.clone(),
            error: step.error.clone(),
        })
        .collect();
    let pages = overview
        .pages
        .iter()
        .map(|page| {
            let json = PageJson {
                status: page.status,
                expires_at_ms: page.expires_at_ms,
                response: page.response.clone(),
            };
            (page.id.to_string(), json)
        })
        .collect();
    RunJson {
        id: overview.run.id,
        workflow: overview.run.workflow.clone(),
        status: overview.run.status,
        current_step: overview.current_step.clone(),
        error: overview.run.error.clone(),
        state: overview.run.state.clone(),
        steps,
        pages,
        waiting_page: overview.waiting_page,
        definition_digest: overview.run.definition_digest.clone(),
    }
}
