//! The styled error page used for 404 and the other HTML error statuses.

use leptos::prelude::*;

/// A short, styled error page that says what went wrong and offers the way home.
#[component]
pub fn ErrorPage(status: u16, heading: String, message: String) -> impl IntoView {
    view! {
        <section aria-labelledby="error-title" class="space-y-4" data-testid="error-page">
            <p class="font-mono text-sm text-slate-600 dark:text-slate-400">{status.to_string()}</p>
            <h1 id="error-title" class="text-3xl font-bold">{heading}</h1>
            <p class="text-slate-700 dark:text-slate-300">{message}</p>
            <a href="/" class="inline-block rounded bg-indigo-700 px-4 py-2 font-semibold text-white hover:bg-indigo-800">
                "Go to the home page"
            </a>
        </section>
    }
}

/// [`ErrorPage`] with its view type erased (see the crate's documentation).
#[must_use]
pub fn error_page(status: u16, heading: String, message: String) -> AnyView {
    view! { <ErrorPage status heading message/> }.into_any()
}
