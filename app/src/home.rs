//! The home page: what Tessera is, its version, and where to go next.

use leptos::prelude::*;

/// Facts the home page shows; the server fills them in.
#[derive(Clone, Debug)]
pub struct HomeInfo {
    /// The application's version, from the server crate.
    pub version: String,
    /// Which model generates pages (for example `heuristic`).
    pub model: String,
    /// Which database engine the store runs on (`sqlite` or `postgres`).
    pub database: String,
    /// Whether the admin is looking: only they are shown the admin pages.
    pub admin: bool,
}

/// The body of `GET /`.
#[component]
pub fn HomePage(info: HomeInfo) -> impl IntoView {
    let admin_links = [
        (
            "/runs",
            "Runs",
            "Workflow runs, their steps and the pages they are waiting on.",
        ),
        (
            "/components",
            "Components",
            "Every component a model can place, rendered, with its tool definition.",
        ),
        (
            "/chat",
            "Chat",
            "Ask for work on a site's API; previews and confirmations are enforced by code.",
        ),
    ];
    let person_links = [(
        "/inbox",
        "Your inbox",
        "What is waiting for your answer. Sign in with the e-mail address you were asked at.",
    )];
    let links: &[(&str, &str, &str)] = if info.admin {
        &admin_links
    } else {
        &person_links
    };
    view! {
        <section aria-labelledby="home-title" class="space-y-6">
            <div>
                <h1 id="home-title" data-testid="app-name" class="text-4xl font-bold tracking-tight text-indigo-700 dark:text-indigo-300">
                    "Tessera"
                </h1>
                <p class="mt-2 text-lg text-slate-700 dark:text-slate-300">
                    "Workflows that ask a person through generated, server-rendered pages."
                </p>
            </div>
            <dl class="grid grid-cols-1 gap-4 sm:grid-cols-3">
                <Fact label="Version" value=info.version testid="version"/>
                <Fact label="Model" value=info.model testid="model"/>
                <Fact label="Database" value=info.database testid="database"/>
            </dl>
            <ul class="grid grid-cols-1 gap-4 sm:grid-cols-3" aria-label="Sections">
                {links
                    .iter()
                    .copied()
                    .map(|(href, label, blurb)| {
                        view! {
                            <li class="rounded-lg border border-slate-200 bg-white p-4 shadow-sm dark:bg-slate-800 dark:border-slate-700">
                                <a href=href class="font-semibold text-indigo-700 underline dark:text-indigo-300">
                                    {label}
                                </a>
                                <p class="mt-1 text-sm text-slate-700 dark:text-slate-300">{blurb}</p>
                            </li>
                        }
                    })
                    .collect_view()}
            </ul>
        </section>
    }
}

#[component]
fn Fact(label: &'static str, value: String, testid: &'static str) -> impl IntoView {
    view! {
        <div class="rounded-lg border border-slate-200 bg-white p-4 dark:bg-slate-800 dark:border-slate-700">
            <dt class="text-sm text-slate-600 dark:text-slate-400">{label}</dt>
            <dd data-testid=testid class="mt-1 font-mono text-lg">{value}</dd>
        </div>
    }
}

/// [`HomePage`] with its view type erased (see the crate's documentation).
#[must_use]
pub fn home_page(info: HomeInfo) -> AnyView {
    view! { <HomePage info/> }.into_any()
}
