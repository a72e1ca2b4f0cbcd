//! The chat's live stream: an island that, once JavaScript runs, sends a turn or a decision
//! without a full reload and shows what the server does while it happens.
//!
//! Without JavaScript it renders an empty live region and every chat form posts as usual. After
//! hydration it opens an `EventSource` on `/chat/events` (the session's `ChatEvent`s as JSON) and,
//! once connected, takes over the submissions of the message form (`POST /chat`) and of the
//! approval forms (`POST /chat/approvals/…`): it sends them with `fetch` and appends what streams
//! back — the person's words, steps, chunk progress (items done, chunk k of n), the reply. When the
//! turn ends it fetches `/chat` and swaps in the server-rendered state (the block with id
//! [`CHAT_STATE_ID`]), keeping only the progress bars, so the page never shows anything the server
//! would not. A post that does not end in the usual redirect falls back to loading `/chat`.
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

/// The id of the server-rendered block (conversation, running calls, approvals) the island
/// refreshes after a streamed turn.
pub const CHAT_STATE_ID: &str = "chat-state";

/// What is left once the server-rendered state has been swapped in: only the progress bars (the
/// person's words and the reply are in the conversation by then).
pub fn settle(entries: &mut Vec<LiveEntry>) {
    entries.retain(|entry| matches!(entry, LiveEntry::Progress { .. }));
}

/// What one server-sent event does to the live entries: the event's name and its JSON data.
/// Returns whether it ends the turn (the reply).
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
        "reply" => {
            entries.push(LiveEntry::Reply(text("/text")));
            return true;
        }
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
        DomParser, EventSource, FormData, HtmlElement, HtmlFormElement, MessageEvent, RequestInit,
        RequestRedirect, Response, ResponseType, SubmitEvent, SupportedType, UrlSearchParams,
    };

    use super::{apply_event, settle, LiveEntry, CHAT_STATE_ID};

    const EVENTS: [&str; 6] = [
        "turn_routed",
        "step_started",
        "progress",
        "step_finished",
        "approval_requested",
        "reply",
    ];

    /// What the listeners share: the entries, and whether a post of this page is in flight
    /// (events of other tabs' turns are not this page's to show).
    #[derive(Clone)]
    struct Live {
        entries: RwSignal<Vec<LiveEntry>>,
        in_flight: Rc<Cell<bool>>,
    }

    /// Opens the stream and takes over the chat's forms once it is connected.
    pub fn connect(entries: RwSignal<Vec<LiveEntry>>, stream: RwSignal<String>) {
        let Ok(source) = EventSource::new("/chat/events") else {
            return;
        };
        stream.set("connecting".to_owned());
        let live = Live {
            entries,
            in_flight: Rc::new(Cell::new(false)),
        };
        let on_open = Closure::<dyn Fn()>::new(move || stream.set("open".to_owned()));
        source.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        on_open.forget();
        // The browser reconnects by itself; until then, forms post the plain way.
        let on_error = Closure::<dyn Fn()>::new(move || stream.set("connecting".to_owned()));
        source.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        on_error.forget();
        for name in EVENTS {
            let live = live.clone();
            let listener = Closure::<dyn Fn(MessageEvent)>::new(move |event: MessageEvent| {
                if !live.in_flight.get() {
                    return;
                }
                let data = event
                    .data()
                    .as_string()
                    .and_then(|text| serde_json::from_str::<Value>(&text).ok())
                    .unwrap_or(Value::Null);
                let mut ended = false;
                live.entries
                    .update(|entries| ended = apply_event(entries, name, &data));
                if ended {
                    refresh(&live);
                }
            });
            let _ =
                source.add_event_listener_with_callback(name, listener.as_ref().unchecked_ref());
            listener.forget();
        }
        let on_submit = Closure::<dyn Fn(SubmitEvent)>::new(move |event: SubmitEvent| {
            if stream.get_untracked() == "open" && !live.in_flight.get() {
                take_over(&event, &live);
            }
        });
        if let Some(document) = web_sys::window().and_then(|window| window.document()) {
            let _ = document
                .add_event_listener_with_callback("submit", on_submit.as_ref().unchecked_ref());
        }
        on_submit.forget();
        // The stream lives as long as the page.
        std::mem::forget(source);
    }

    /// Sends a chat form with `fetch` instead of navigating, when it is one of the chat's own.
    fn take_over(event: &SubmitEvent, live: &Live) {
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
        if let Some(button) = event
            .submitter()
            .and_then(|submitter| submitter.dyn_into::<HtmlElement>().ok())
        {
            if let Some(name) = button.get_attribute("name").filter(|name| !name.is_empty()) {
                let value = button.get_attribute("value").unwrap_or_default();
                let _ = data.append_with_str(&name, &value);
            }
        }
        let Ok(body) = UrlSearchParams::new_with_str_sequence_sequence(&data) else {
            return;
        };
        let Some(window) = web_sys::window() else {
            return;
        };
        event.prevent_default();
        live.in_flight.set(true);
        if path == "/chat" {
            let text = body.get("text").unwrap_or_default();
            live.entries
                .update(|entries| entries.push(LiveEntry::User(text.trim().to_owned())));
            form.reset();
        }
        disable_buttons(&form);
        let init = RequestInit::new();
        init.set_method("POST");
        init.set_body(&body.into());
        init.set_redirect(RequestRedirect::Manual);
        let sent = window.fetch_with_str_and_init(&action, &init);
        // POST-redirect-GET answers with a redirect: the turn is over on the server. Anything
        // else (a refused post, an error) is the server-rendered page's to show.
        let after = live.clone();
        let on_answer = Closure::<dyn FnMut(JsValue)>::new(move |answer: JsValue| {
            let redirected = answer
                .dyn_into::<Response>()
                .is_ok_and(|response| response.type_() == ResponseType::Opaqueredirect);
            if redirected {
                if after.in_flight.get() {
                    refresh(&after);
                }
            } else {
                load_chat();
            }
        });
        let on_failure = Closure::<dyn FnMut(JsValue)>::new(move |_| load_chat());
        let _ = sent.then2(&on_answer, &on_failure);
        on_answer.forget();
        on_failure.forget();
    }

    /// Swaps in the server-rendered state of `/chat`; the turn is over for this page.
    fn refresh(live: &Live) {
        live.in_flight.set(false);
        let Some(window) = web_sys::window() else {
            return;
        };
        let entries = live.entries;
        let on_text = Closure::<dyn FnMut(JsValue)>::new(move |text: JsValue| {
            let Some(text) = text.as_string() else {
                return load_chat();
            };
            let fresh = DomParser::new()
                .and_then(|parser| parser.parse_from_string(&text, SupportedType::TextHtml))
                .ok()
                .and_then(|document| document.get_element_by_id(CHAT_STATE_ID));
            let current = web_sys::window()
                .and_then(|window| window.document())
                .and_then(|document| document.get_element_by_id(CHAT_STATE_ID));
            match (fresh, current) {
                (Some(fresh), Some(current)) => {
                    // Our own server-rendered, escaped HTML for the same block.
                    current.set_inner_html(&fresh.inner_html());
                    entries.update(settle);
                    enable_buttons();
                }
                _ => load_chat(),
            }
        });
        let on_response = Closure::<dyn FnMut(JsValue)>::new(move |answer: JsValue| {
            match answer
                .dyn_into::<Response>()
                .ok()
                .filter(Response::ok)
                .and_then(|response| response.text().ok())
            {
                Some(text) => {
                    let _ = text.then(&on_text);
                }
                None => load_chat(),
            }
        });
        let on_failure = Closure::<dyn FnMut(JsValue)>::new(move |_| load_chat());
        let _ = window
            .fetch_with_str("/chat")
            .then2(&on_response, &on_failure);
        on_response.forget();
        on_failure.forget();
    }

    /// Marks the buttons this island disabled, so [`enable_buttons`] gives back only those.
    const DISABLED_MARK: &str = "data-live-disabled";

    /// A second click while the post is in flight would send it twice.
    fn disable_buttons(form: &HtmlFormElement) {
        for button in elements(form.query_selector_all("button")) {
            let _ = button.set_attribute("disabled", "");
            let _ = button.set_attribute(DISABLED_MARK, "");
        }
    }

    fn enable_buttons() {
        let marked = web_sys::window()
            .and_then(|window| window.document())
            .map(|document| document.query_selector_all(&format!("button[{DISABLED_MARK}]")));
        if let Some(marked) = marked {
            for button in elements(marked) {
                let _ = button.remove_attribute("disabled");
                let _ = button.remove_attribute(DISABLED_MARK);
            }
        }
    }

    fn elements(list: Result<web_sys::NodeList, JsValue>) -> impl Iterator<Item = HtmlElement> {
        let list = list.ok();
        let length = list.as_ref().map_or(0, web_sys::NodeList::length);
        (0..length).filter_map(move |index| {
            list.as_ref()
                .and_then(|list| list.item(index))
                .and_then(|node| node.dyn_into::<HtmlElement>().ok())
        })
    }

    fn load_chat() {
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
    fn progress_of_one_execution_is_updated_in_place_and_only_progress_outlives_the_turn() {
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
        assert!(!apply_event(
            &mut entries,
            "approval_requested",
            &json!({"approval": {}})
        ));
        assert!(
            apply_event(&mut entries, "reply", &json!({"text": "Execution: 1 step"})),
            "the reply ends the turn"
        );
        assert_eq!(
            entries.last(),
            Some(&LiveEntry::Reply("Execution: 1 step".to_owned()))
        );
        settle(&mut entries);
        assert_eq!(entries.len(), 1, "only the progress bar stays");
    }
}
