//! The page behind a link, around its rendered tree: the line saying whom a person's own link is
//! for, and the receipt once it has been answered.

use leptos::prelude::*;

/// A page to answer: the `addressed` line when the link is one person's own, then the `tree`.
#[must_use]
pub fn answer_page(addressed: Option<String>, tree: AnyView) -> AnyView {
    view! {
        {addressed.map(|line| view! {
            <p class="mb-4 rounded-md border border-indigo-200 bg-indigo-50 p-3 text-indigo-950 dark:border-indigo-800 dark:bg-indigo-950 dark:text-indigo-100" data-testid="page-for">{line}</p>
        })}
        {tree}
    }
    .into_any()
}

/// The receipt of an answered page, its `tree` built from what was recorded.
#[must_use]
pub fn receipt_page(tree: AnyView) -> AnyView {
    view! { <div data-testid="receipt">{tree}</div> }.into_any()
}
