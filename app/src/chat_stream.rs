//! The chat's live stream: an island that, once JavaScript runs, sends a turn or a decision
//! without a full reload and shows what the server does while it happens.
//!
//! Without JavaScript it renders an empty live region and every chat form posts as usual. After
//! hydration it opens an `EventSource` on `/chat/events` (the session's `ChatEvent`s as JSON) and,
//! once connected, takes over the submissions of the message form (`POST /chat`) and of the
//! approval forms (`POST /chat/approvals/…`): it sends them with `fetch` and appends what streams
//! back — the person's words, steps, chunk progress (items done, chunk k of n), the reply. When the
//! turn leaves something only the server-rendered page can show (an approval to decide), it
//! reloads that state once the reply has arrived. If the stream is not connected, or the request
//! does not end in the usual redirect, the page falls back to the server's answer.
//!
//! Browser APIs only (`web-sys`): the hydrate build has no tokio, reqwest or sqlx.

use leptos::prelude::*;
use serde_json::Value;

use crate::chat::ChatProgress;

/// One line of the live part of the conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LiveEntry {
    /// What the person sent.
    User(String),
    /// A step that started, finished or was refused, in words.
    Step {
        /// The status name (`succeeded`, `refused`, …) for styling and tests.
        status: String,
        /// The line.
        text: String,
    },
    /// A chunked call's progress, updated in place.
    Progress {
        /// The execution it belongs to.
        execution: String,
        /// The operation.
        operation: String,
        /// Items in finished chunks.
        items_done: u64,
        /// Items in all.
        items_total: u64,
        /// Chunks finished.
        chunks_done: u64,
        /// Chunks in all.
        chunks_total: u64,
    },
    /// The reply, execution header first.
    Reply(String),
}

/// What one server-sent event does to the live entries: the event's name and its JSON data.
/// Returns whether the server-rendered page must be reloaded after the reply (an approval waits).
pub fn apply_event(entries: &mut Vec<LiveEntry>, name: &str, data: &Value) -> bool {
    let text = |pointer: &str| {
        data.pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let number = |pointer: &str| data.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    match name {
        "step_started" => {
            let chunks: Vec<String> = data
                .get("chunks")
                .and_then(Value::as_array)
                .map(|sizes| sizes.iter().map(ToString::to_string).collect())
                .unwrap_or_default();
            let plan = if chunks.len() > 1 {
                format!(" in {} chunks ({})", chunks.len(), chunks.join("+"))
            } else {
                String::new()
            };
            entries.push(LiveEntry::Step {
                status: "running".to_owned(),
                text: format!("{} started{plan}", text("/operation")),
            });
        }
        "progress" => {
            let execution = text("/execution_id");
            let progress = LiveEntry::Progress {
                execution: execution.clone(),
                operation: text("/operation"),
                items_done: number("/progress/items_done"),
                items_total: number("/progress/items_total"),
                chunks_done: number("/progress/chunks_done"),
                chunks_total: number("/progress/chunks_total"),
            };
            let existing = entries.iter_mut().find(|entry| {
                matches!(entry, LiveEntry::Progress { execution: other, .. } if *other == execution)
            });
            match existing {
                Some(entry) => *entry = progress,
                None => entries.push(progress),
            }
        }
        "step_finished" => entries.push(LiveEntry::Step {
            status: text("/step/status"),
            text: format!("{} {}", text("/step/operation"), text("/step/detail")),
        }),
        "approval_requested" => return true,
        "reply" => entries.push(LiveEntry::Reply(text("/text"))),
        _ => {}
    }
    false
}

fn entry_view(entry: LiveEntry) -> AnyView {
    match entry {
        LiveEntry::User(text) => view! {
            <li class="ml-auto max-w-prose rounded-lg bg-indigo-100 p-3 text-slate-900" data-testid="live-user">
                <p class="text-xs font-semibold">"You"</p>
                <p class="whitespace-pre-wrap">{text}</p>
            </li>
        }
        .into_any(),
        LiveEntry::Step { status, text } => view! {
            <li class="font-mono text-sm" data-testid="live-step" data-status=status>{text}</li>
        }
        .into_any(),
        LiveEntry::Progress {
            operation,
            items_done,
            items_total,
            chunks_done,
            chunks_total,
            ..
        } => view! {
            <li data-testid="live-progress">
                <ChatProgress done=items_done total=items_total label=format!("{operation} items done")/>
                <p class="text-sm">{format!("Chunk {chunks_done} of {chunks_total}")}</p>
            </li>
        }
        .into_any(),
        LiveEntry::Reply(text) => view! {
            <li class="max-w-prose rounded-lg border border-slate-300 p-3 dark:border-slate-600" data-testid="live-reply">
                <p class="text-xs font-semibold">"Tessera"</p>
                <p class="whitespace-pre-wrap font-mono text-sm">{text}</p>
            </li>
        }
        .into_any(),
    }
}

/// The live part of the conversation; see the module docs.
#[island]
pub fn ChatLive() -> impl IntoView {
    let entries = RwSignal::new(Vec::<LiveEntry>::new());
    let stream = RwSignal::new("off".to_owned());
    Effect::new(move |_| browser::connect(entries, stream));
    view! {
        <div data-testid="chat-live" data-stream=move || stream.get() aria-live="polite">
            <ol class="space-y-3" aria-label="Live updates">
                {move || entries.get().into_iter().map(entry_view).collect_view()}
            </ol>
        </div>
    }
}

#[cfg(feature = "hydrate")]
mod browser {
    use std::{cell::Cell, rc::Rc};

    use leptos::prelude::*;
    use serde_json::Value;
    use wasm_bindgen::{closure::Closure, JsCast, JsValue};
    use web_sys::{
        EventSource, FormData, HtmlElement, HtmlFormElement, MessageEvent, RequestInit,
        RequestRedirect, Response, ResponseType, SubmitEvent, UrlSearchParams,
    };

    use super::{apply_event, LiveEntry};

    const EVENTS: [&str; 6] = [
        "turn_routed",
        "step_started",
        "progress",
        "step_finished",
        "approval_requested",
        "reply",
    ];

    /// Opens the stream and takes over the chat's forms once it is connected.
    pub fn connect(entries: RwSignal<Vec<LiveEntry>>, stream: RwSignal<String>) {
        let Ok(source) = EventSource::new("/chat/events") else {
            return;
        };
        stream.set("connecting".to_owned());
        let reload_after_reply = Rc::new(Cell::new(false));
        let on_open = Closure::<dyn Fn()>::new(move || stream.set("open".to_owned()));
        source.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        on_open.forget();
        // The browser reconnects by itself; until then, forms post the plain way.
        let on_error = Closure::<dyn Fn()>::new(move || stream.set("connecting".to_owned()));
        source.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        on_error.forget();
        for name in EVENTS {
            let reload = reload_after_reply.clone();
            let listener = Closure::<dyn Fn(MessageEvent)>::new(move |event: MessageEvent| {
                let data = event
                    .data()
                    .as_string()
                    .and_then(|text| serde_json::from_str::<Value>(&text).ok())
                    .unwrap_or(Value::Null);
                let mut needs_reload = false;
                entries.update(|entries| needs_reload = apply_event(entries, name, &data));
                if needs_reload {
                    reload.set(true);
                }
                if name == "reply" && reload.replace(false) {
                    reload_page();
                }
            });
            let _ =
                source.add_event_listener_with_callback(name, listener.as_ref().unchecked_ref());
            listener.forget();
        }
        let on_submit = Closure::<dyn Fn(SubmitEvent)>::new(move |event: SubmitEvent| {
            if stream.get_untracked() == "open" {
                take_over(&event, entries);
            }
        });
        if let Some(document) = web_sys::window().and_then(|window| window.document()) {
            let _ = document
                .add_event_listener_with_callback("submit", on_submit.as_ref().unchecked_ref());
        }
        on_submit.forget();
        // Keep the source alive for the page's lifetime.
        std::mem::forget(source);
    }

    /// Sends a chat form with `fetch` instead of navigating, when it is one of the chat's own.
    fn take_over(event: &SubmitEvent, entries: RwSignal<Vec<LiveEntry>>) {
        let Some(form) = event
            .target()
            .and_then(|target| target.dyn_into::<HtmlFormElement>().ok())
        else {
            return;
        };
        let action = form.action();
        let path = web_sys::Url::new(&action)
            .map(|url| url.pathname())
            .unwrap_or_default();
        let ours = path == "/chat" || path.starts_with("/chat/approvals/");
        if !ours || !form.method().eq_ignore_ascii_case("post") {
            return;
        }
        let Ok(data) = FormData::new_with_form(&form) else {
            return;
        };
        if let Some(submitter) = event.submitter() {
            if let Some(button) = submitter.dyn_ref::<HtmlElement>() {
                if let Some(name) = button.get_attribute("name").filter(|name| !name.is_empty()) {
                    let value = button.get_attribute("value").unwrap_or_default();
                    let _ = data.append_with_str(&name, &value);
                }
            }
        }
        let Ok(body) = UrlSearchParams::new_with_str_sequence_sequence(&data) else {
            return;
        };
        event.prevent_default();
        if path == "/chat" {
            let text = body.get("text").unwrap_or_default();
            entries.update(|entries| entries.push(LiveEntry::User(text.trim().to_owned())));
            form.reset();
        }
        disable_buttons(&form);
        let init = RequestInit::new();
        init.set_method("POST");
        init.set_body(&body.into());
        init.set_redirect(RequestRedirect::Manual);
        let Some(window) = web_sys::window() else {
            return;
        };
        let sent = window.fetch_with_str_and_init(&action, &init);
        // POST-redirect-GET answers with a redirect: the stream carries the rest. Anything else
        // (a refused post, an error page) is shown by the server-rendered page instead.
        let on_answer = Closure::<dyn FnMut(JsValue)>::new(move |answer: JsValue| {
            let redirected = answer
                .dyn_into::<Response>()
                .is_ok_and(|response| response.type_() == ResponseType::Opaqueredirect);
            if !redirected {
                reload_page();
            }
        });
        let on_failure = Closure::<dyn FnMut(JsValue)>::new(move |_| reload_page());
        let _ = sent.then2(&on_answer, &on_failure);
        on_answer.forget();
        on_failure.forget();
    }

    fn disable_buttons(form: &HtmlFormElement) {
        if let Ok(buttons) = form.query_selector_all("button") {
            for index in 0..buttons.length() {
                if let Some(button) = buttons
                    .item(index)
                    .and_then(|node| node.dyn_into::<HtmlElement>().ok())
                {
                    let _ = button.set_attribute("disabled", "");
                }
            }
        }
    }

    fn reload_page() {
        if let Some(window) = web_sys::window() {
            let _ = window.location().assign("/chat");
        }
    }
}

#[cfg(not(feature = "hydrate"))]
mod browser {
    use leptos::prelude::*;

    use super::LiveEntry;

    pub fn connect(_entries: RwSignal<Vec<LiveEntry>>, _stream: RwSignal<String>) {}
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn progress_of_one_execution_is_updated_in_place_and_an_approval_asks_for_a_reload() {
        let mut entries = Vec::new();
        let started = json!({"operation": "bulkUpdateItems", "chunks": [100, 100, 47]});
        assert!(!apply_event(&mut entries, "step_started", &started));
        for (done, chunks) in [(100, 1), (200, 2), (247, 3)] {
            let progress = json!({"execution_id": "e1", "operation": "bulkUpdateItems",
                "progress": {"items_done": done, "items_total": 247, "chunks_done": chunks, "chunks_total": 3}});
            assert!(!apply_event(&mut entries, "progress", &progress));
        }
        assert_eq!(entries.len(), 2);
        assert!(
            matches!(&entries[0], LiveEntry::Step { text, .. } if text == "bulkUpdateItems started in 3 chunks (100+100+47)")
        );
        assert!(matches!(
            &entries[1],
            LiveEntry::Progress {
                items_done: 247,
                items_total: 247,
                ..
            }
        ));
        assert!(apply_event(
            &mut entries,
            "approval_requested",
            &json!({"approval": {}})
        ));
        apply_event(&mut entries, "reply", &json!({"text": "Execution: 1 step"}));
        assert_eq!(
            entries.last(),
            Some(&LiveEntry::Reply("Execution: 1 step".to_owned()))
        );
    }
}
