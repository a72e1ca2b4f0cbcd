//! The author's preview page: the page tree, schema and data boxes beside the tree rendered and
//! the ValidateForm report on it.

use leptos::prelude::*;
use serde::Deserialize;

use crate::components::input::escape_textarea;
use crate::render::AlertBox;

/// The three boxes, as sent (the `POST /preview` form) and shown again.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct PreviewBoxes {
    /// The page tree (JSON).
    #[serde(default)]
    pub tree: String,
    /// The response schema (JSON Schema), possibly empty.
    #[serde(default)]
    pub schema: String,
    /// The data (JSON).
    #[serde(default)]
    pub data: String,
}

/// One finding of the ValidateForm report, in the words the page shows.
#[derive(Clone, Debug)]
pub struct ReportLine {
    /// `error` or `warning`.
    pub severity: &'static str,
    /// The rule's code.
    pub rule: &'static str,
    /// The node and field at fault ("node a, field b"), or empty.
    pub place: String,
    /// What is wrong.
    pub message: String,
    /// What to do.
    pub fix: String,
}

/// The ValidateForm report as shown: whether the page passed, and every finding.
#[derive(Clone, Debug)]
pub struct PreviewReport {
    /// No errors.
    pub ok: bool,
    /// Errors first, then warnings.
    pub lines: Vec<ReportLine>,
}

/// What the right-hand side shows.
pub enum PreviewOutcome {
    /// Nothing previewed yet.
    NotYet,
    /// The boxes could not be read or checked: why.
    Refused(String),
    /// The report and the page rendered (inert).
    Rendered {
        /// ValidateForm's findings.
        report: PreviewReport,
        /// The tree rendered with the data.
        page: AnyView,
    },
}

/// `GET/POST /preview`'s body.
#[must_use]
pub fn preview_page(boxes: &PreviewBoxes, outcome: PreviewOutcome) -> AnyView {
    let right = match outcome {
        PreviewOutcome::NotYet => view! { <p class="text-slate-700 dark:text-slate-300">"Press Preview to render the tree and check it."</p> }.into_any(),
        PreviewOutcome::Refused(message) => view! {
            <AlertBox message test_id="preview-error"/>
        }
        .into_any(),
        PreviewOutcome::Rendered { report, page } => view! {
            {report_view(report)}
            <div inert class="mt-4 rounded border border-dashed border-slate-300 p-4 dark:border-slate-600">{page}</div>
        }
        .into_any(),
    };
    view! {
        <h1 class="text-3xl font-bold">"Preview a page"</h1>
        <p class="mt-2 text-slate-700 dark:text-slate-300">
            "Paste a page tree, a response schema (optional) and data; see it rendered beside the ValidateForm report."
        </p>
        <div class="mt-6 grid gap-6 lg:grid-cols-2">
            <form method="post" action="/preview" class="space-y-4">
                {textarea("tree", "Page tree (JSON)", &boxes.tree)}
                {textarea("schema", "Response schema (JSON Schema, optional)", &boxes.schema)}
                {textarea("data", "Data (JSON)", &boxes.data)}
                <button type="submit" class="rounded-md bg-indigo-700 px-4 py-2 font-semibold text-white hover:bg-indigo-800 focus:outline-none focus:ring-2 focus:ring-indigo-500">
                    "Preview"
                </button>
            </form>
            <section aria-label="Result">{right}</section>
        </div>
    }
    .into_any()
}

fn textarea(name: &'static str, label: &'static str, value: &str) -> impl IntoView {
    let id = format!("preview-{name}");
    // Leptos writes `<textarea>` children unescaped, so a pasted `</textarea>` would end the
    // box and the rest would become markup; the leading newline is the one parsers drop.
    let value = format!("\n{}", escape_textarea(value));
    view! {
        <div>
            <label for=id.clone() class="block font-medium">{label}</label>
            <textarea id=id name=name rows="12" spellcheck="false"
                class="mt-1 block w-full rounded-md border border-slate-400 bg-white p-2 font-mono text-xs text-slate-900 focus:outline-none focus:ring-2 focus:ring-indigo-500 dark:bg-slate-800 dark:text-slate-100">
                {value}
            </textarea>
        </div>
    }
}

fn report_view(report: PreviewReport) -> impl IntoView {
    let (heading, tone) = if report.ok {
        (
            "ValidateForm: OK",
            "border-green-300 bg-green-50 text-green-900",
        )
    } else {
        (
            "ValidateForm: problems found",
            "border-red-300 bg-red-50 text-red-900",
        )
    };
    let items = report
        .lines
        .into_iter()
        .map(|line| {
            view! {
                <li>
                    <span class="font-mono text-xs">{format!("{} · {} ", line.severity, line.rule)}</span>
                    {(!line.place.is_empty()).then(|| format!("({}) ", line.place))}
                    {line.message}
                    <span class="block text-sm">{format!("Fix: {}", line.fix)}</span>
                </li>
            }
        })
        .collect_view();
    view! {
        <div data-testid="validation-report" class=format!("rounded border p-3 {tone}")>
            <h2 class="font-semibold">{heading}</h2>
            <ul class="mt-2 list-disc space-y-2 pl-5">{items}</ul>
        </div>
    }
}
