//! A signed-in person's inbox: the asks addressed to them, open first, each open one with a
//! button that gets them a link of their own.

use leptos::prelude::*;

/// One line of the inbox, as shown.
#[derive(Clone, Debug)]
pub struct InboxRow {
    /// The page asked, which the answer button names.
    pub page_id: String,
    /// What the ask is about.
    pub title: String,
    /// " by the … workflow", or empty when nothing more should be said.
    pub asked_by: String,
    /// When it was asked, as shown.
    pub asked_at: String,
    /// When an open ask stops taking answers, as shown.
    pub deadline: String,
    /// Where it stands for this person ("Waiting for your answer", "You declined on …").
    pub status: String,
    /// Whether it still waits for this person's answer.
    pub open: bool,
}

/// `GET /inbox`'s body: the person's asks on this `page`, and a link to the next when there
/// are `more`.
#[must_use]
pub fn inbox_page(email: &str, rows: Vec<InboxRow>, page: u32, more: bool) -> AnyView {
    let empty = rows.is_empty();
    view! {
        <section class="space-y-4" aria-labelledby="inbox-title">
            <h1 id="inbox-title" class="text-2xl font-bold">"Your inbox"</h1>
            <p class="text-slate-700 dark:text-slate-300">{format!("Requests for {email}, the ones waiting for you first.")}</p>
            {empty.then(|| view! { <p data-testid="inbox-empty">"Nothing has been asked of you."</p> })}
            <ul class="space-y-3" data-testid="inbox">
                {rows.into_iter().map(|row| view! {
                    <li class="rounded-lg border border-slate-200 bg-white p-4 shadow-sm dark:bg-slate-800 dark:border-slate-700" data-testid="inbox-item" data-open=row.open.to_string()>
                        <h2 class="font-semibold">{row.title}</h2>
                        <p class="text-sm text-slate-700 dark:text-slate-300">
                            {format!("Asked{} on {}", row.asked_by, row.asked_at)}
                            {row.open.then(|| format!(" · answer by {}", row.deadline))}
                        </p>
                        <p class="mt-1 text-sm font-medium" data-testid="inbox-status">{row.status}</p>
                        {row.open.then(|| {
                            let action = format!("/inbox/{}/answer", row.page_id);
                            view! {
                                <form method="post" action=action class="mt-2">
                                    <button type="submit" data-testid="inbox-answer" class="rounded-md bg-indigo-700 px-3 py-1 font-semibold text-white hover:bg-indigo-800 focus:outline-none focus:ring-2 focus:ring-indigo-500">"Answer"</button>
                                </form>
                            }
                        })}
                    </li>
                }).collect_view()}
            </ul>
            <nav aria-label="Inbox pages" class="flex gap-4">
                {(page > 1).then(|| view! { <a href=format!("/inbox?page={}", page - 1) class="text-indigo-700 underline dark:text-indigo-300">"Previous page"</a> })}
                {more.then(|| view! { <a href=format!("/inbox?page={}", page + 1) data-testid="inbox-next" class="text-indigo-700 underline dark:text-indigo-300">"Next page"</a> })}
            </nav>
        </section>
    }
    .into_any()
}
