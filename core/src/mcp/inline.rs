//! The page an MCP App's view shows, and its answers: `show_page` and `submit_answer`.
//!
//! A view reaches its page only through its view capability (`pages::lifecycle::open_view`,
//! `submit_view`): the same page, decoder, validation and exactly-once recording as the page's
//! link. The HTML is rendered here as `/p/{token}` renders it — the same tree, catalog, values,
//! escaping and render budget — but as a fragment with no form `action`, no CSRF token, no
//! downloads and no navigation: the view sends the form through the host, never to a URL.

use std::{collections::BTreeMap, time::Duration};

use serde::Serialize;
use serde_json::{json, Value};
use tessera_app::{
    components::paging::state_query,
    render::{tree_html, FormState, RenderCtx},
    tree::PageTree,
};

use crate::{
    asks::AskError,
    forms::pairs,
    pages::{
        lifecycle::{open_view, submit_view, Link, Opened, Submitted, Viewed},
        page::{Page, PageStatus},
        receipt::{link_receipt_tree, notice_tree},
        render_ctx::page_render_ctx,
    },
    store::now_ms,
    util::blocking::{within_deadline, RENDER_DEADLINE},
    workflow::Runner,
};

/// Where the page a view shows is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Ready to answer.
    Open,
    /// Still being made: ask again shortly (no HTML yet).
    Preparing,
    /// This submission was recorded: the receipt.
    Submitted,
    /// Wrong or missing values: the page again with the person's values and messages.
    Invalid,
    /// A table's page, sort or search, or a record added or removed: the page again.
    Navigated,
    /// Answered before, expired, withdrawn: the receipt or a notice; it takes no answer.
    Closed,
}

/// What a view is shown.
#[derive(Clone, Debug, PartialEq)]
pub struct Shown {
    /// Where the page is.
    pub status: Status,
    /// The page, its receipt or a notice; `None` while the page is being made.
    pub html: Option<String>,
}

impl Shown {
    /// The structured content a tool answers: the status only. The HTML holds the page's data,
    /// which is the person's to see, so it travels in `_meta`, which hosts keep from the model.
    #[must_use]
    pub fn structured(&self) -> Value {
        json!({ "status": self.status })
    }

    /// The `_meta` entry for view `view`.
    #[must_use]
    pub fn meta(&self, view: &str) -> Value {
        let mut meta = json!({ "view": view, "status": self.status });
        if let (Some(html), Some(object)) = (&self.html, meta.as_object_mut()) {
            object.insert("html".to_owned(), Value::String(html.clone()));
        }
        meta
    }

    /// A sentence for whoever reads only text.
    #[must_use]
    pub fn sentence(&self) -> &'static str {
        match self.status {
            Status::Open => "The page is shown to the person.",
            Status::Preparing => "The page is still being prepared.",
            Status::Submitted => "The person's answer was recorded.",
            Status::Invalid => "Some of the person's answers need correcting; the page shows why.",
            Status::Navigated => "The page shows what the person asked to see.",
            Status::Closed => "The page takes no answer any more.",
        }
    }
}

/// The longest `query` (a table's page or sort on a page without a form) `show_page` takes.
pub const MAX_QUERY_BYTES: usize = 2048;

/// What view `view` shows now; `query` pages or sorts a table on a page without a form.
///
/// # Errors
/// [`AskError::Invalid`] naming `view` when no page has it; database failures.
pub async fn show(
    runner: &Runner,
    view: &str,
    query: &str,
    receipt_lifetime: Duration,
) -> Result<Shown, AskError> {
    let query = state_query(&pairs(query.as_bytes()));
    let opened = match open_view(runner.store(), view, now_ms(), receipt_lifetime).await? {
        Viewed::Preparing => {
            return Ok(Shown {
                status: Status::Preparing,
                html: None,
            })
        }
        Viewed::Unmade => {
            return Ok(closed(
                "This request ended",
                "It ended before its page was ready; there is nothing to answer.",
            )
            .await)
        }
        Viewed::Page(opened) => *opened,
    };
    Ok(match opened {
        Opened::Open(link) => Shown {
            status: Status::Open,
            html: Some(open_html(runner, &link, FormState::default(), query).await),
        },
        Opened::Receipt(link) => Shown {
            status: Status::Closed,
            html: Some(receipt_html(&link, "Your answer was received").await),
        },
        Opened::NotFound => return Err(unknown_view()),
        other => notice_of(&other).await,
    })
}

/// Records `body` (the form's `application/x-www-form-urlencoded` encoding, with the button
/// pressed) through view `view`, exactly as a POST to the page's link would be; wakes the run
/// when the answer settled the page.
///
/// # Errors
/// [`AskError::Invalid`] naming `view` when no page has it, or `body` when the page takes no
/// answer; database failures.
pub async fn submit(
    runner: &Runner,
    view: &str,
    body: &str,
    receipt_lifetime: Duration,
) -> Result<Shown, AskError> {
    let table_state = state_query(&pairs(body.as_bytes()));
    let catalog_for = |page: &Page| runner.catalog_for_page(page);
    let submitted = submit_view(
        runner.store(),
        &catalog_for,
        view,
        body.as_bytes(),
        now_ms(),
        receipt_lifetime,
    )
    .await
    .map_err(|error| AskError::Unexpected(error.into()))?;
    Ok(match submitted {
        Submitted::Accepted(link) => {
            if link.page.status == PageStatus::Submitted {
                runner.wake();
            }
            Shown {
                status: Status::Submitted,
                html: Some(receipt_html(&link, "Thank you — your answer was received").await),
            }
        }
        Submitted::Invalid(link, form) => Shown {
            status: Status::Invalid,
            html: Some(open_html(runner, &link, form, table_state).await),
        },
        Submitted::Navigated(link, form, query) => Shown {
            status: Status::Navigated,
            html: Some(open_html(runner, &link, form, query).await),
        },
        Submitted::AlreadySubmitted(link) => Shown {
            status: Status::Closed,
            html: Some(receipt_html(&link, "This request was already answered").await),
        },
        Submitted::NoForm => {
            return Err(AskError::invalid(
                "body",
                "this page only shows information; it takes no answer",
            ))
        }
        Submitted::Expired => notice_of(&Opened::Expired).await,
        Submitted::Revoked => notice_of(&Opened::Revoked).await,
        // A view carries no CSRF token and is never refused for one.
        Submitted::Forbidden | Submitted::NotFound => return Err(unknown_view()),
    })
}

fn unknown_view() -> AskError {
    AskError::invalid("view", "no page has this view")
}

async fn notice_of(opened: &Opened) -> Shown {
    let (heading, message) = match opened {
        Opened::Expired => (
            "This request has expired",
            "It is no longer waiting for an answer; nothing was recorded.",
        ),
        Opened::ReceiptExpired => (
            "This request was answered",
            "Its receipt is no longer kept.",
        ),
        _ => (
            "This request was withdrawn",
            "Whoever asked withdrew it; nothing was recorded.",
        ),
    };
    closed(heading, message).await
}

async fn closed(heading: &str, message: &str) -> Shown {
    Shown {
        status: Status::Closed,
        html: Some(render(notice_tree(heading, message), RenderCtx::new(Value::Null)).await),
    }
}

async fn open_html(
    runner: &Runner,
    link: &Link,
    form: FormState,
    query: BTreeMap<String, String>,
) -> String {
    let page = &link.page;
    let Ok(tree) = serde_json::from_value::<PageTree>(page.tree.clone()) else {
        return notice_html(
            "This page cannot be shown",
            "Its stored layout is damaged; nothing was recorded.",
        )
        .await;
    };
    match runner.catalog_for_page(page) {
        Ok(catalog) => {
            render(
                tree.clone(),
                page_render_ctx(page, &tree, catalog, form, query),
            )
            .await
        }
        Err(unknown) => {
            tracing::error!(page.id = %page.id, component.name = %unknown.name, "page cannot be shown in a view: {unknown}");
            notice_html(
                "This page cannot be shown",
                "It was made with components this server no longer has; nothing was recorded.",
            )
            .await
        }
    }
}

async fn receipt_html(link: &Link, heading: &str) -> String {
    render(
        link_receipt_tree(link, heading),
        RenderCtx::new(Value::Null),
    )
    .await
}

async fn notice_html(heading: &str, message: &str) -> String {
    render(notice_tree(heading, message), RenderCtx::new(Value::Null)).await
}

/// Renders off the async workers within [`RENDER_DEADLINE`]; a tree over its budget, or one
/// that took too long, is a notice saying so, never a page cut short.
async fn render(tree: PageTree, ctx: RenderCtx) -> String {
    let rendered = within_deadline(RENDER_DEADLINE, move || tree_html(&tree, &ctx)).await;
    let (heading, message) = match rendered {
        Ok(Ok(html)) => return html,
        Ok(Err(over)) => ("This page is too large to show", over.for_the_person()),
        Err(error) => {
            tracing::warn!(error = %error, "a page for a view did not render");
            (
                "This page took too long to show",
                "The server gave up rendering it. Try again in a moment.".to_owned(),
            )
        }
    };
    let notice = notice_tree(heading, &message);
    tree_html(&notice, &RenderCtx::new(Value::Null)).unwrap_or_default()
}
