//! `SelectionLimit`: the "N selected (at most M)" line of a selectable Table with `maxItems`.
//!
//! Server-rendered it is the count when the page was made (so it is right after every paging or
//! search POST, and without JavaScript the server's 422 says what is wrong). Once hydrated it
//! counts as the person ticks (ticked boxes plus the ticks carried from other pages) and stops a
//! submit over the limit with a message, before anything is sent. Paging, search and Cancel are
//! never stopped.

use leptos::prelude::*;

use super::paging::NAV_FIELD;

/// The live count and, after a refused submit, the message.
#[island]
pub fn SelectionLimit(
    // The selection's fieldset, whose form is watched.
    fieldset_id: String,
    // The field name of the ticks.
    name: String,
    // The most ticks allowed.
    max: u32,
    // Ticks when the page was rendered.
    initial: usize,
    // Whether the table is paged (the line then says ticks survive paging).
    paged: bool,
    // The id `aria-describedby` points at.
    help_id: String,
) -> impl IntoView {
    let (count, set_count) = signal(initial);
    let (over, set_over) = signal(false);
    let (hydrated, set_hydrated) = signal(false);
    Effect::new(move |_| {
        browser::watch(&fieldset_id, &name, max, set_count, set_over);
        set_hydrated.set(true);
    });
    let limit = usize::try_from(max).unwrap_or(usize::MAX);
    let line = move || {
        let mut text = format!("{} selected (at most {max}).", count.get());
        if paged {
            text.push_str(" Ticks are kept when you search or change page.");
        }
        text
    };
    let refused = move || over.get() && count.get() > limit;
    view! {
        <p id=help_id class="text-sm text-slate-600 dark:text-slate-300" data-testid="selection-count"
            data-hydrated=move || hydrated.get().to_string()>
            {line}
        </p>
        <Show when=refused>
            <p role="alert" class="rounded-md border border-red-300 bg-red-50 p-2 text-sm font-medium text-red-800 dark:bg-red-950 dark:text-red-200"
                data-testid="selection-over-limit">
                {move || {
                    let ticked = count.get();
                    format!(
                        "{ticked} rows are ticked, but at most {max} can be chosen. Untick {} before you send.",
                        ticked.saturating_sub(limit)
                    )
                }}
            </p>
        </Show>
    }
}

/// The selector for the ticks of `name`: ticked boxes and the hidden inputs carrying ticks.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
fn ticks_selector(name: &str) -> String {
    let quoted = name.replace('\\', "\\\\").replace('"', "\\\"");
    format!("input[type=\"checkbox\"][name=\"{quoted}\"]:checked, input[type=\"hidden\"][name=\"{quoted}\"]")
}

/// Whether a submit pressed with this button is a table navigation or a Cancel, never stopped.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
fn is_navigation(button_name: Option<&str>, button_value: Option<&str>) -> bool {
    button_name == Some(NAV_FIELD) || matches!(button_value, Some("cancel" | "decline"))
}

#[cfg(feature = "hydrate")]
mod browser {
    use leptos::ev;
    use leptos::prelude::*;
    use wasm_bindgen::JsCast;

    use super::{is_navigation, ticks_selector};

    /// The form around `fieldset_id`, when `event` happened inside it.
    fn form_of(fieldset_id: &str, event: &web_sys::Event) -> Option<web_sys::Element> {
        let fieldset = document().get_element_by_id(fieldset_id)?;
        let form = fieldset.closest("form").ok()??;
        let target = event.target()?.dyn_into::<web_sys::Node>().ok()?;
        form.contains(Some(&target)).then_some(form)
    }

    fn count(form: &web_sys::Element, selector: &str) -> usize {
        form.query_selector_all(selector)
            .map(|list| usize::try_from(list.length()).unwrap_or(usize::MAX))
            .unwrap_or(0)
    }

    pub fn watch(
        fieldset_id: &str,
        name: &str,
        max: u32,
        set_count: WriteSignal<usize>,
        set_over: WriteSignal<bool>,
    ) {
        let limit = usize::try_from(max).unwrap_or(usize::MAX);
        let selector = ticks_selector(name);
        let (id, ticks) = (fieldset_id.to_owned(), selector.clone());
        let _ = window_event_listener(ev::change, move |event| {
            if let Some(form) = form_of(&id, &event) {
                let ticked = count(&form, &ticks);
                set_count.set(ticked);
                if ticked <= limit {
                    set_over.set(false);
                }
            }
        });
        let id = fieldset_id.to_owned();
        let _ = window_event_listener(ev::submit, move |event| {
            let Some(form) = form_of(&id, &event) else {
                return;
            };
            let button = event.submitter();
            let attribute =
                |key: &str| button.as_ref().and_then(|button| button.get_attribute(key));
            if is_navigation(attribute("name").as_deref(), attribute("value").as_deref()) {
                return;
            }
            let ticked = count(&form, &selector);
            set_count.set(ticked);
            if ticked > limit {
                event.prevent_default();
                set_over.set(true);
            }
        });
    }
}

#[cfg(not(feature = "hydrate"))]
mod browser {
    use leptos::prelude::WriteSignal;

    pub fn watch(
        _fieldset_id: &str,
        _name: &str,
        _max: u32,
        _set_count: WriteSignal<usize>,
        _set_over: WriteSignal<bool>,
    ) {
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paging_and_cancel_are_never_stopped_but_a_submit_is_counted() {
        assert!(is_navigation(Some("_nav"), Some("")));
        assert!(is_navigation(Some("_action"), Some("cancel")));
        assert!(!is_navigation(Some("_action"), Some("submit")));
        assert!(!is_navigation(None, None));
    }

    #[test]
    fn the_selector_counts_ticked_boxes_and_carried_ticks_of_its_field_only() {
        assert_eq!(
            ticks_selector("ids"),
            "input[type=\"checkbox\"][name=\"ids\"]:checked, input[type=\"hidden\"][name=\"ids\"]"
        );
        assert!(ticks_selector("a\"b").contains("a\\\"b"));
    }
}
