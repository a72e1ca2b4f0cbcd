//! The chat page (admin): the conversation, its generated views (preview table, danger confirm
//! with the count, progress, result), pending approvals with Approve / Deny forms, the message box
//! and the manual tools panel. Works without JavaScript: every action is a plain form POST.
//!
//! Views only: the server fills the plain data structs below from the orchestrator.

use std::collections::BTreeMap;

use leptos::prelude::*;

use crate::catalog::Catalog;
use crate::chat_stream::ChatLive;
use crate::render::{render_tree, AlertBox, FormState, RenderCtx};
use crate::tree::PageTree;

/// A generated view (read, confirm, progress, result): a page tree the agent loop placed, with
/// what the renderer needs besides it. Code fills `action`, `form`, `query` and `download_base`,
/// never the model.
#[derive(Clone, Debug, PartialEq)]
pub struct GeneratedView {
    /// `read`, `confirm`, `progress` or `result` (for test ids and styling).
    pub kind: String,
    /// The validated tree.
    pub tree: PageTree,
    /// The facts it binds to.
    pub data: serde_json::Value,
    /// Where its form posts.
    pub action: Option<String>,
    /// Starting values (or the person's, after a rejected answer) and messages.
    pub form: FormState,
    /// The URL prefix of its download links.
    pub download_base: Option<String>,
    /// The page's query (its tables' `page` and `sort` links); node ids are unique per view, so
    /// one view's links never page another's table.
    pub query: BTreeMap<String, String>,
}

/// Renders a generated view with the one renderer every page uses.
#[component]
pub fn GeneratedViewPanel(view: GeneratedView) -> impl IntoView {
    let GeneratedView {
        kind,
        tree,
        data,
        action,
        form,
        download_base,
        query,
    } = view;
    let mut ctx = RenderCtx::new(data);
    ctx.catalog = Catalog::defaults();
    ctx.action = action;
    ctx.form = form;
    ctx.download_base = download_base;
    ctx.query = query;
    view! { <div data-testid=format!("{kind}-view")>{render_tree(&tree, &ctx)}</div> }
}

/// One step of an execution header, as code built it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderStep {
    /// The bracketed status word (`[ok]`, `[awaiting confirmation]`, …).
    pub label: String,
    /// The status name (for styling and tests).
    pub status: String,
    /// The operation in words ("search items"); its tool name is in the header's Details.
    pub operation: String,
    /// What it did, in words.
    pub summary: String,
    /// Its error, if any.
    pub error: Option<String>,
    /// Chunk progress `(done, total)` items, when chunked.
    pub progress: Option<(u64, u64)>,
}

/// One message of the conversation.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatMessage {
    /// `user` or `assistant`.
    pub speaker: String,
    /// The execution header's steps (assistant replies only).
    pub header: Vec<HeaderStep>,
    /// The rendered header text, with tool names and hashes (always present for replies; in the
    /// header's Details, or shown when there are no steps).
    pub header_text: Option<String>,
    /// The words after the header.
    pub text: String,
    /// Read and result views of the calls this reply reports.
    pub views: Vec<GeneratedView>,
}

/// A confirmation waiting for the person.
#[derive(Clone, Debug, PartialEq)]
pub struct ApprovalView {
    /// Its id (the form action).
    pub id: String,
    /// The operation (tool name; shown under Details only).
    pub operation: String,
    /// What the approval does, in one plain line computed by code.
    pub summary: String,
    /// Why code asks, in words.
    pub reasons: Vec<String>,
    /// The planned chunk sizes.
    pub chunks: Vec<usize>,
    /// The short hash the approval is bound to (Details only).
    pub hash: String,
    /// The exact arguments, as indented JSON (Details only).
    pub arguments: String,
    /// The generated confirm view (selectable table, scope choice, danger confirm, Deny).
    pub view: GeneratedView,
}

/// A manual tool in the side panel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolEntry {
    /// The operation.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its parameters (names), from the schema.
    pub parameters: Vec<String>,
}

/// A category of manual tools.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolGroup {
    /// The category.
    pub category: String,
    /// Its tools.
    pub tools: Vec<ToolEntry>,
}

/// The whole chat page.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatPageData {
    /// The conversation, oldest first.
    pub messages: Vec<ChatMessage>,
    /// Confirmations waiting.
    pub approvals: Vec<ApprovalView>,
    /// The questions replies asked for them (a reply that is one of these points at the card).
    pub pending_questions: Vec<String>,
    /// Progress views of the calls still running.
    pub running: Vec<GeneratedView>,
    /// The manual tools.
    pub tools: Vec<ToolGroup>,
    /// A message to show once (an error of the last action).
    pub flash: Option<String>,
}

fn step_class(status: &str) -> &'static str {
    match status {
        "succeeded" => "text-green-800 dark:text-green-300",
        "failed" | "refused" => "text-red-800 dark:text-red-300",
        "awaiting_confirmation" | "running" => "text-amber-800 dark:text-amber-300",
        _ => "text-slate-700 dark:text-slate-300",
    }
}

/// A progress bar with its numbers in words (colour is never the only signal).
#[component]
pub fn ChatProgress(done: u64, total: u64, label: String) -> impl IntoView {
    let percent = done.saturating_mul(100).checked_div(total).unwrap_or(100);
    let words = format!("{label}: {done} of {total} ({percent}%)");
    view! {
        <div class="space-y-1" data-testid="chat-progress">
            <progress class="w-full" max=total.to_string() value=done.to_string() aria-label=label>{format!("{percent}%")}</progress>
            <p class="text-sm">{words}</p>
        </div>
    }
}

/// The execution header of one reply: one line per step, built by code, in words; the tool
/// names, roles and hashes are under its Details.
#[component]
pub fn ExecutionHeaderView(steps: Vec<HeaderStep>, text: Option<String>) -> impl IntoView {
    let (fallback, details) = if steps.is_empty() {
        (text, None)
    } else {
        (None, text)
    };
    let items = steps
        .into_iter()
        .map(|step| {
            let class = format!("font-mono text-sm {}", step_class(&step.status));
            view! {
                <li data-testid="header-step" data-status=step.status.clone()>
                    <span class=class>{step.label}</span>
                    " "<span class="text-sm font-medium">{step.operation}</span>
                    " "<span class="text-sm">{step.summary}</span>
                    {step.error.map(|error| view! { <p role="alert" class="text-sm text-red-800 dark:text-red-300">{error}</p> })}
                    {step.progress.map(|(done, total)| view! { <ChatProgress done total label="Progress".to_owned()/> })}
                </li>
            }
        })
        .collect_view();
    view! {
        <div class="rounded border border-slate-300 bg-slate-50 p-2 dark:border-slate-600 dark:bg-slate-900" data-testid="execution-header">
            <p class="text-xs font-semibold uppercase tracking-wide text-slate-700 dark:text-slate-300">"Execution"</p>
            <ul class="space-y-1">{items}</ul>
            {fallback.map(|text| view! { <pre class="whitespace-pre-wrap font-mono text-sm">{text}</pre> })}
            {details.map(|text| view! {
                <details class="text-sm" data-testid="header-details">
                    <summary class="cursor-pointer text-slate-700 dark:text-slate-300">"Details"</summary>
                    <pre class="whitespace-pre-wrap font-mono text-xs">{text}</pre>
                </details>
            })}
        </div>
    }
}

/// A pending approval: what it does in one line, why code asks, the generated confirm view, then
/// the tool, the hash it is bound to and the exact arguments under a collapsed Details.
#[component]
pub fn ApprovalCard(approval: ApprovalView) -> impl IntoView {
    let ApprovalView {
        id,
        operation,
        summary,
        reasons,
        chunks,
        hash,
        arguments,
        view,
    } = approval;
    let title_id = format!("approval-{id}");
    let labelled_by = title_id.clone();
    let why = (!reasons.is_empty()).then(|| {
        format!(
            "Asked because {}. Nothing has been sent yet.",
            reasons.join(", ")
        )
    });
    let plan = (chunks.len() > 1).then(|| {
        let sizes: Vec<String> = chunks.iter().map(ToString::to_string).collect();
        format!("{} requests ({})", chunks.len(), sizes.join("+"))
    });
    view! {
        <section class="space-y-3 rounded-lg border-2 border-amber-400 bg-amber-50 p-4 text-slate-900 dark:bg-slate-800 dark:text-slate-100"
            aria-labelledby=labelled_by data-testid="pending-approval">
            <h2 id=title_id class="text-lg font-semibold">"Approval needed"</h2>
            <p class="text-lg" data-testid="approval-summary">{summary}</p>
            {why.map(|why| view! { <p class="text-sm">{why}</p> })}
            <GeneratedViewPanel view/>
            <details class="text-sm" data-testid="approval-details">
                <summary class="cursor-pointer">"Details"</summary>
                <dl class="mt-2 grid grid-cols-[auto_1fr] gap-x-3 gap-y-1">
                    <dt class="font-semibold">"Tool"</dt><dd class="font-mono">{operation}</dd>
                    <dt class="font-semibold">"Bound to call hash"</dt><dd class="font-mono">{hash}</dd>
                    {plan.map(|plan| view! { <dt class="font-semibold">"Sent as"</dt><dd>{plan}</dd> })}
                    <dt class="font-semibold">"Arguments"</dt>
                    <dd><pre class="max-h-64 overflow-auto whitespace-pre-wrap font-mono text-xs">{arguments}</pre></dd>
                </dl>
            </details>
        </section>
    }
}

/// The body of `GET /chat`.
#[component]
pub fn ChatPage(data: ChatPageData) -> impl IntoView {
    let ChatPageData {
        messages,
        approvals,
        pending_questions,
        running,
        tools,
        flash,
    } = data;
    let empty = messages.is_empty();
    // A reply that asks a pending approval's question points at the approval, which asks it.
    let questions = pending_questions;
    let messages = messages
        .into_iter()
        .map(|mut message| {
            if message.speaker != "user" && questions.contains(&message.text) {
                "Waiting for your approval below.".clone_into(&mut message.text);
            }
            let user = message.speaker == "user";
            let class = if user {
                "ml-auto max-w-prose rounded-lg bg-indigo-100 p-3 text-slate-900"
            } else {
                "max-w-prose space-y-2 rounded-lg border border-slate-300 p-3 dark:border-slate-600"
            };
            let who = if user { "You" } else { "Tessera" };
            view! {
                <li class=class data-testid=format!("message-{}", message.speaker)>
                    <p class="text-xs font-semibold">{who}</p>
                    {(!user).then(|| view! { <ExecutionHeaderView steps=message.header text=message.header_text/> })}
                    <p class="whitespace-pre-wrap">{message.text}</p>
                    {message.views.into_iter().map(|view| view! { <GeneratedViewPanel view/> }).collect_view()}
                </li>
            }
        })
        .collect_view();
    let approvals = approvals
        .into_iter()
        .map(|approval| view! { <ApprovalCard approval/> })
        .collect_view();
    let running = running
        .into_iter()
        .map(|view| view! { <GeneratedViewPanel view/> })
        .collect_view();
    let tools = tools
        .into_iter()
        .map(|group| {
            let entries = group
                .tools
                .into_iter()
                .map(|tool| {
                    let params = if tool.parameters.is_empty() {
                        String::new()
                    } else {
                        format!(" --{}", tool.parameters.join(" --"))
                    };
                    view! {
                        <li class="text-sm" data-testid="manual-tool">
                            <a href=crate::chat_tools::tool_href(&tool.name) data-testid="open-tool"
                                class="font-mono text-indigo-700 underline dark:text-indigo-300">{tool.name.clone()}</a>
                            <p class="text-slate-700 dark:text-slate-300">{tool.description}</p>
                            <p class="font-mono text-xs">{format!("/tool {}{params}", tool.name)}</p>
                        </li>
                    }
                })
                .collect_view();
            view! {
                <div>
                    <h3 class="font-semibold capitalize">{group.category}</h3>
                    <ul class="space-y-2">{entries}</ul>
                </div>
            }
        })
        .collect_view();
    view! {
        <div class="grid gap-6 lg:grid-cols-[1fr_18rem]">
            <div class="space-y-4">
                <div class="flex flex-wrap items-center justify-between gap-4">
                    <h1 class="text-3xl font-bold">"Chat"</h1>
                    <form method="post" action="/logout">
                        <button type="submit" class="text-sm text-indigo-700 underline dark:text-indigo-300">"Log out"</button>
                    </form>
                </div>
                // The live island swaps this block for the server's after a streamed turn.
                <div id=crate::chat_stream::CHAT_STATE_ID class="space-y-4">
                {flash.map(|message| view! { <AlertBox message/> })}
                <ol class="space-y-3" aria-label="Conversation" data-testid="conversation">{messages}</ol>
                {empty.then(|| view! { <p class="text-slate-700 dark:text-slate-300">"Ask for something, e.g. “delete all completed items from last month”, or type /help."</p> })}
                <div class="space-y-3">{running}</div>
                <div class="space-y-4">{approvals}</div>
                </div>
                <ChatLive/>
                <form method="post" action="/chat" class="space-y-2">
                    <label for="chat-message" class="block font-medium">"Message"</label>
                    <textarea id="chat-message" name="text" rows="2" required
                        class="block w-full rounded-md border border-slate-400 bg-white px-3 py-2 text-slate-900 focus:outline-none focus:ring-2 focus:ring-indigo-500 dark:bg-slate-800 dark:text-slate-100"></textarea>
                    <button type="submit" data-testid="send"
                        class="rounded-md bg-indigo-700 px-4 py-2 font-semibold text-white hover:bg-indigo-800 focus:outline-none focus:ring-2 focus:ring-indigo-500">
                        "Send"
                    </button>
                </form>
            </div>
            <aside aria-labelledby="tools-title" class="space-y-3 rounded-lg border border-slate-300 p-3 dark:border-slate-600">
                <h2 id="tools-title" class="text-lg font-semibold">"Manual tools"</h2>
                {tools}
            </aside>
        </div>
    }
}

/// [`ChatPage`] with its view type erased (see the crate's documentation).
#[must_use]
pub fn chat_page(data: ChatPageData) -> AnyView {
    view! { <ChatPage data/> }.into_any()
}
