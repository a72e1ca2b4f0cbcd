//! The runs pages (admin): the list with status filters and paging, and one run's timeline.
//!
//! Views only: the server fills the plain data structs below from the store.

use leptos::prelude::*;

use crate::render::AlertBox;

/// One row of the runs list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunRow {
    /// Run id.
    pub id: String,
    /// Workflow name.
    pub workflow: String,
    /// Status (`ready`, `waiting`, …).
    pub status: String,
    /// The step it is at, or the last one.
    pub step: String,
    /// Last change, formatted.
    pub updated: String,
}

/// The runs list page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunsList {
    /// The rows of this page.
    pub rows: Vec<RunRow>,
    /// The status filter in force, if any.
    pub status: Option<String>,
    /// Zero-based page number.
    pub page: u32,
    /// Whether a next page exists.
    pub has_next: bool,
    /// Workflows that can be started from here.
    pub workflows: Vec<String>,
    /// A message to show once (e.g. "Run started").
    pub flash: Option<String>,
}

const STATUSES: [&str; 6] = [
    "ready",
    "running",
    "waiting",
    "succeeded",
    "failed",
    "cancelled",
];

fn badge_class(status: &str) -> &'static str {
    match status {
        "succeeded" => "bg-green-100 text-green-900",
        "failed" | "declined" => "bg-red-100 text-red-900",
        "waiting" => "bg-amber-100 text-amber-900",
        "running" | "ready" => "bg-indigo-100 text-indigo-900",
        _ => "bg-slate-200 text-slate-900",
    }
}

/// A status shown as a coloured badge with its word (colour is never the only signal).
#[component]
pub fn StatusBadge(status: String) -> impl IntoView {
    let class = format!(
        "rounded-full px-2 py-0.5 text-xs font-semibold {}",
        badge_class(&status)
    );
    view! { <span class=class data-testid="run-status">{status}</span> }
}

/// The body of `GET /runs`.
#[component]
pub fn RunsListPage(list: RunsList) -> impl IntoView {
    let RunsList {
        rows,
        status,
        page,
        has_next,
        workflows,
        flash,
    } = list;
    let filter_link = move |value: Option<&'static str>, current: &Option<String>| {
        let href = value.map_or_else(
            || "/runs".to_owned(),
            |value| format!("/runs?status={value}"),
        );
        let label = value.unwrap_or("all");
        let active = value.map(str::to_owned) == *current;
        view! {
            <a href=href aria-current=active.then_some("page")
                class=if active { "rounded bg-indigo-700 px-2 py-1 text-sm text-white" } else { "rounded px-2 py-1 text-sm text-indigo-700 underline dark:text-indigo-300" }>
                {label}
            </a>
        }
    };
    let filters = std::iter::once(None)
        .chain(STATUSES.iter().map(|status| Some(*status)))
        .map(|value| filter_link(value, &status))
        .collect_view();
    let query_status = status
        .clone()
        .map(|status| format!("status={status}&"))
        .unwrap_or_default();
    let previous = (page > 0).then(|| format!("/runs?{query_status}page={}", page - 1));
    let next = has_next.then(|| format!("/runs?{query_status}page={}", page + 1));
    let empty = rows.is_empty();
    let body = rows
        .into_iter()
        .map(|row| {
            view! {
                <tr class="border-t border-slate-200 dark:border-slate-700" data-testid="run-row">
                    <td class="py-2 pr-4"><a class="font-mono text-sm text-indigo-700 underline dark:text-indigo-300" href=format!("/runs/{}", row.id)>{row.id[..8.min(row.id.len())].to_owned()}</a></td>
                    <td class="py-2 pr-4">{row.workflow}</td>
                    <td class="py-2 pr-4"><StatusBadge status=row.status/></td>
                    <td class="py-2 pr-4">{row.step}</td>
                    <td class="py-2 pr-4 text-sm text-slate-700 dark:text-slate-300">{row.updated}</td>
                </tr>
            }
        })
        .collect_view();
    let starters = workflows
        .into_iter()
        .map(|workflow| {
            view! {
                <form method="post" action="/runs/start">
                    <input type="hidden" name="workflow" value=workflow.clone()/>
                    <button type="submit" data-testid=format!("start-{workflow}")
                        class="rounded-md bg-indigo-700 px-3 py-2 text-sm font-semibold text-white hover:bg-indigo-800 focus:outline-none focus:ring-2 focus:ring-indigo-500">
                        {format!("Start {workflow}")}
                    </button>
                </form>
            }
        })
        .collect_view();
    view! {
        <div class="space-y-6">
            <div class="flex flex-wrap items-center justify-between gap-4">
                <h1 class="text-3xl font-bold">"Runs"</h1>
                <form method="post" action="/logout">
                    <button type="submit" class="text-sm text-indigo-700 underline dark:text-indigo-300">"Log out"</button>
                </form>
            </div>
            {flash.map(|message| view! { <p role="status" class="rounded border border-green-300 bg-green-50 p-3 text-green-900">{message}</p> })}
            <section aria-labelledby="start-title" class="space-y-2">
                <h2 id="start-title" class="text-xl font-semibold">"Start a demo run"</h2>
                <div class="flex flex-wrap gap-3">{starters}</div>
            </section>
            <nav aria-label="Filter by status" class="flex flex-wrap gap-2">{filters}</nav>
            <table class="w-full text-left">
                <caption class="sr-only">"Workflow runs, newest first"</caption>
                <thead><tr>
                    <th scope="col" class="pb-2">"Run"</th>
                    <th scope="col" class="pb-2">"Workflow"</th>
                    <th scope="col" class="pb-2">"Status"</th>
                    <th scope="col" class="pb-2">"Step"</th>
                    <th scope="col" class="pb-2">"Updated"</th>
                </tr></thead>
                <tbody>{body}</tbody>
            </table>
            {empty.then(|| view! { <p class="text-slate-700 dark:text-slate-300">"No runs here yet."</p> })}
            <nav aria-label="Pages" class="flex gap-4">
                {previous.map(|href| view! { <a href=href class="text-indigo-700 underline dark:text-indigo-300">"Newer"</a> })}
                {next.map(|href| view! { <a href=href class="text-indigo-700 underline dark:text-indigo-300">"Older"</a> })}
            </nav>
        </div>
    }
}

/// One step on a run's timeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepView {
    /// Position in the workflow.
    pub index: i64,
    /// Step name.
    pub name: String,
    /// `running`, `succeeded` or `failed`.
    pub status: String,
    /// Attempts made.
    pub attempts: i64,
    /// The output, pretty JSON.
    pub output: Option<String>,
    /// The error, when it failed.
    pub error: Option<String>,
    /// Ids of the generation records behind a `ui` step's page, oldest attempt first.
    pub generations: Vec<String>,
}

/// A page the run made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageView {
    /// Page id (used by the admin actions).
    pub id: String,
    /// `open`, `submitted`, `revoked` or `expired`.
    pub status: String,
    /// When it expires, formatted.
    pub expires: String,
    /// The response, pretty JSON, once submitted.
    pub response: Option<String>,
    /// For a page with assignees: how many approvals settle it, e.g. "2 of 3 approvals needed".
    pub approvals: Option<String>,
    /// Who answered, oldest first.
    pub answers: Vec<AnswerLine>,
    /// Assignees who have not answered yet.
    pub waiting_on: Vec<String>,
    /// What happened to the page, oldest first.
    pub history: Vec<HistoryLine>,
}

/// One event in a page's history, in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryLine {
    /// When, formatted.
    pub at: String,
    /// What happened, as a sentence.
    pub text: String,
}

/// One person's answer on a run's page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnswerLine {
    /// Who (an e-mail address, or "the link" for a page's anonymous link).
    pub who: String,
    /// `submitted` or `declined`.
    pub outcome: String,
    /// When, formatted.
    pub at: String,
    /// The answer in short, or the reason they declined.
    pub detail: String,
}

/// A fresh link shown once on the run page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewLink {
    /// The assignee it is for; `None` for a page's one link.
    pub assignee: Option<String>,
    /// The link.
    pub link: String,
}

/// The run timeline page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunDetail {
    /// Run id.
    pub id: String,
    /// Workflow name.
    pub workflow: String,
    /// Status.
    pub status: String,
    /// The run's error, when it failed.
    pub error: Option<String>,
    /// The run's state, pretty JSON.
    pub state: String,
    /// The steps, in order.
    pub steps: Vec<StepView>,
    /// The pages it made, newest first.
    pub pages: Vec<PageView>,
    /// Freshly issued links, shown once after "Get a working link" (one per assignee who has
    /// not answered on a page with assignees).
    pub new_links: Vec<NewLink>,
    /// A message to show once.
    pub flash: Option<String>,
    /// The run is not finished: the page reloads itself (the server sends `Refresh`).
    pub live: bool,
    /// What a waiting run waits for and until when (written by the server).
    pub waiting: Option<String>,
}

/// The body of `GET /runs/{id}`.
#[component]
pub fn RunDetailPage(detail: RunDetail) -> impl IntoView {
    let RunDetail {
        id,
        workflow,
        status,
        error,
        state,
        steps,
        pages,
        new_links,
        flash,
        live,
        waiting,
    } = detail;
    let cancellable = matches!(status.as_str(), "ready" | "running" | "waiting");
    let this_run = id.clone();
    let steps_view = steps
        .into_iter()
        .map(|step| {
            view! {
                <li class="rounded border border-slate-200 p-3 dark:border-slate-700" data-testid="run-step">
                    <div class="flex flex-wrap items-center gap-3">
                        <span class="font-mono text-sm">{format!("#{}", step.index + 1)}</span>
                        <span class="font-semibold">{step.name}</span>
                        <StatusBadge status=step.status/>
                        <span class="text-sm text-slate-700 dark:text-slate-300">{format!("{} attempt(s)", step.attempts)}</span>
                    </div>
                    {step.error.map(|error| view! { <p role="alert" class="mt-2 text-red-800 dark:text-red-300">{error}</p> })}
                    {(!step.generations.is_empty()).then(|| {
                        let links = step.generations.into_iter().enumerate().map(|(index, generation)| view! {
                            <li><a href=format!("/runs/generations/{generation}?run={this_run}") data-testid="generation-link"
                                class="text-sm text-indigo-700 underline dark:text-indigo-300">{format!("Generation record {}", index + 1)}</a></li>
                        }).collect_view();
                        view! { <ul class="mt-2 flex flex-wrap gap-3">{links}</ul> }
                    })}
                    {step.output.map(|output| view! {
                        <details class="mt-2"><summary class="cursor-pointer text-sm text-indigo-700 dark:text-indigo-300">"Output"</summary>
                        <pre class="mt-1 overflow-auto rounded bg-slate-900 p-2 text-xs text-slate-100"><code>{output}</code></pre></details>
                    })}
                </li>
            }
        })
        .collect_view();
    let run_id = id.clone();
    let pages_view = pages
        .into_iter()
        .map(|page| {
            let open = page.status == "open";
            let action = format!("/runs/{run_id}/pages/{}", page.id);
            view! {
                <li class="rounded border border-slate-200 p-3 dark:border-slate-700" data-testid="run-page">
                    <div class="flex flex-wrap items-center gap-3">
                        <span class="font-mono text-sm">{page.id[..8.min(page.id.len())].to_owned()}</span>
                        <StatusBadge status=page.status/>
                        <span class="text-sm">{format!("expires {}", page.expires)}</span>
                    </div>
                    {page.approvals.map(|text| view! { <p class="mt-2 text-sm" data-testid="page-approvals">{text}</p> })}
                    {(!page.answers.is_empty()).then(|| {
                        let rows = page.answers.into_iter().map(|answer| view! {
                            <tr class="border-t border-slate-200 dark:border-slate-700" data-testid="page-answer">
                                <td class="py-1 pr-3 text-sm">{answer.who}</td>
                                <td class="py-1 pr-3"><StatusBadge status=answer.outcome/></td>
                                <td class="py-1 pr-3 text-sm">{answer.at}</td>
                                <td class="py-1 pr-3 text-sm">{answer.detail}</td>
                            </tr>
                        }).collect_view();
                        view! {
                            <table class="mt-2 w-full text-left" data-testid="page-answers">
                                <caption class="sr-only">"Who answered, oldest first"</caption>
                                <thead><tr>
                                    <th scope="col" class="pr-3 text-sm">"Answered by"</th>
                                    <th scope="col" class="pr-3 text-sm">"Answer"</th>
                                    <th scope="col" class="pr-3 text-sm">"When"</th>
                                    <th scope="col" class="pr-3 text-sm">"Answer or reason"</th>
                                </tr></thead>
                                <tbody>{rows}</tbody>
                            </table>
                        }
                    })}
                    {(!page.waiting_on.is_empty()).then(|| view! {
                        <p class="mt-2 text-sm" data-testid="page-waiting-on">{format!("Not answered yet: {}", page.waiting_on.join(", "))}</p>
                    })}
                    {page.response.map(|response| view! {
                        <pre class="mt-2 overflow-auto rounded bg-slate-900 p-2 text-xs text-slate-100" data-testid="page-response"><code>{response}</code></pre>
                    })}
                    {(!page.history.is_empty()).then(|| {
                        let events = page.history.into_iter().map(|event| view! {
                            <li class="relative border-l-2 border-slate-300 pb-2 pl-4 dark:border-slate-600" data-testid="history-event">
                                <span class="absolute -left-[5px] top-1.5 h-2 w-2 rounded-full bg-indigo-600 dark:bg-indigo-300" aria-hidden="true"></span>
                                <span class="block text-xs text-slate-600 dark:text-slate-300">{event.at}</span>
                                <span class="text-sm">{event.text}</span>
                            </li>
                        }).collect_view();
                        view! {
                            <section class="mt-3" aria-label="History">
                                <h3 class="mb-1 text-sm font-semibold">"History"</h3>
                                <ol class="ml-1" data-testid="page-history">{events}</ol>
                            </section>
                        }
                    })}
                    {open.then(|| view! {
                        <div class="mt-2 flex flex-wrap gap-2">
                            <form method="post" action=action.clone()><input type="hidden" name="action" value="reissue"/>
                                <button type="submit" data-testid="reissue-link" class="rounded border border-indigo-700 px-3 py-1 text-sm text-indigo-800 dark:text-indigo-200"
                                    title="A fresh link, shown once: any link sent earlier stops working">"Get a working link"</button></form>
                            <form method="post" action=action.clone()><input type="hidden" name="action" value="extend"/>
                                <button type="submit" class="rounded border border-slate-500 px-3 py-1 text-sm">"Extend by 7 days"</button></form>
                            <form method="post" action=action><input type="hidden" name="action" value="revoke"/>
                                <button type="submit" class="rounded border border-red-700 px-3 py-1 text-sm text-red-800 dark:text-red-300">"Revoke link"</button></form>
                        </div>
                    })}
                </li>
            }
        })
        .collect_view();
    view! {
        <div class="space-y-6">
            <p><a href="/runs" class="text-indigo-700 underline dark:text-indigo-300">"All runs"</a></p>
            <div class="flex flex-wrap items-center gap-3">
                <h1 class="text-3xl font-bold">{workflow}</h1>
                <StatusBadge status=status/>
                <span class="font-mono text-sm" data-testid="run-id">{id.clone()}</span>
            </div>
            {flash.map(|message| view! { <p role="status" class="rounded border border-green-300 bg-green-50 p-3 text-green-900">{message}</p> })}
            {live.then(|| view! {
                <p class="text-sm text-slate-700 dark:text-slate-300" data-testid="run-live">
                    "This run is still going: the page refreshes itself every few seconds. "
                    <a href=format!("/runs/{id}") class="text-indigo-700 underline dark:text-indigo-300">"Refresh now"</a>
                </p>
            })}
            {waiting.map(|text| view! {
                <p class="text-sm text-slate-800 dark:text-slate-200" data-testid="run-waiting">{text}</p>
            })}
            {(!new_links.is_empty()).then(|| {
                let items = new_links.into_iter().map(|new_link| { let href = new_link.link.clone(); view! {
                    <li>
                        {new_link.assignee.map(|assignee| view! { <span class="me-2 font-semibold">{format!("{assignee}:")}</span> })}
                        <a href=href data-testid="page-link" class="break-all font-mono text-indigo-800 underline">{new_link.link}</a>
                    </li>
                }}).collect_view();
                view! {
                    <div role="status" class="rounded border border-amber-300 bg-amber-50 p-3 text-amber-950">
                        <p class="font-semibold">"Working links, shown once (only their hashes are stored). Links sent earlier no longer work."</p>
                        <ul class="mt-1 space-y-1">{items}</ul>
                    </div>
                }
            })}
            {error.map(|message| view! { <AlertBox message/> })}
            {cancellable.then(|| view! {
                <form method="post" action=format!("/runs/{id}/cancel")>
                    <button type="submit" data-testid="cancel-run" class="rounded-md bg-red-700 px-3 py-2 text-sm font-semibold text-white hover:bg-red-800">"Cancel run"</button>
                </form>
            })}
            <section aria-labelledby="steps-title"><h2 id="steps-title" class="text-xl font-semibold">"Steps"</h2><ol class="mt-2 space-y-2">{steps_view}</ol></section>
            <section aria-labelledby="pages-title"><h2 id="pages-title" class="text-xl font-semibold">"Pages"</h2><ul class="mt-2 space-y-2">{pages_view}</ul></section>
            <section aria-labelledby="state-title"><h2 id="state-title" class="text-xl font-semibold">"State"</h2>
                <pre class="mt-2 overflow-auto rounded bg-slate-900 p-3 text-xs text-slate-100"><code>{state}</code></pre></section>
        </div>
    }
}

/// [`RunsListPage`] with its view type erased (see the crate's documentation).
#[must_use]
pub fn runs_list_page(list: RunsList) -> AnyView {
    view! { <RunsListPage list/> }.into_any()
}

/// [`RunDetailPage`] with its view type erased (see the crate's documentation).
#[must_use]
pub fn run_detail_page(detail: RunDetail) -> AnyView {
    view! { <RunDetailPage detail/> }.into_any()
}
