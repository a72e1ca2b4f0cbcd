//! The `RecordList` island: with JavaScript, adding and removing a record happens in the page,
//! without a round trip.
//!
//! The server renders the whole list; the island renders only a hidden marker inside it (an
//! island with children needs a hydration context our documents do not have) and, once
//! hydrated, listens to clicks on the list's root element, catching the add and remove buttons
//! before they submit. Add
//! copies the blank record of the list's `<template>`, remove drops the record's element, and
//! then every record is renumbered in document order: names (`line_items[3].quantity` →
//! `line_items[2].quantity`), ids and the numbers people read ("Line 3"), the hidden record
//! count is updated, and the buttons follow the bounds (no add at `max`, no remove at `min`).
//! What the form then submits is exactly what the navigation without JavaScript would have
//! produced. Nothing here writes markup: it copies the server's template and sets attributes
//! and text.

use leptos::prelude::*;

/// Add and remove in the browser for the list whose root element has the id `dom_id`; renders
/// only a hidden marker that says when it is hydrated.
#[island]
pub fn RecordEditor(
    /// The list's path, as in its controls' names.
    list: String,
    /// The list's DOM id, as in its controls' ids.
    dom_id: String,
    /// What one record is called, for the status message.
    item: String,
    /// Fewest records.
    min: usize,
    /// Most records.
    max: usize,
) -> impl IntoView {
    let (hydrated, set_hydrated) = signal(false);
    let marker_for = dom_id.clone();
    let bounds = Bounds {
        list,
        dom_id,
        item,
        min,
        max,
    };
    let once = std::cell::Cell::new(Some(bounds));
    Effect::new(move |_| {
        if let Some(bounds) = once.take() {
            browser::attach(bounds);
        }
        set_hydrated.set(true);
    });
    view! {
        <span hidden data-testid="record-editor" data-for=marker_for
            data-hydrated=move || hydrated.get().to_string()></span>
    }
}

/// What the island needs to renumber a list (read by the browser build only).
#[cfg_attr(
    not(feature = "hydrate"),
    expect(dead_code, reason = "read by the browser build only")
)]
struct Bounds {
    list: String,
    dom_id: String,
    item: String,
    min: usize,
    max: usize,
}

#[cfg(feature = "hydrate")]
mod browser {
    use leptos::prelude::*;
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;
    use web_sys::{Element, HtmlElement, HtmlTemplateElement};

    use super::Bounds;

    /// Attributes that may hold a record's index.
    const INDEXED: [&str; 6] = [
        "name",
        "id",
        "for",
        "aria-describedby",
        "value",
        "aria-labelledby",
    ];

    /// Listens to clicks on the list's root element for as long as the page lives.
    pub fn attach(bounds: Bounds) {
        let Some(root) = document().get_element_by_id(&bounds.dom_id) else {
            return;
        };
        let listener =
            Closure::<dyn Fn(web_sys::MouseEvent)>::new(move |event: web_sys::MouseEvent| {
                on_click(&bounds, &event);
            });
        if root
            .add_event_listener_with_callback("click", listener.as_ref().unchecked_ref())
            .is_ok()
        {
            // The list lives as long as the page: the listener is never removed.
            listener.forget();
        }
    }

    /// Handles a click inside the list: an add or remove button is done here, not submitted.
    fn on_click(bounds: &Bounds, event: &web_sys::MouseEvent) {
        let Some(target) = event
            .target()
            .and_then(|target| target.dyn_into::<Element>().ok())
        else {
            return;
        };
        let Ok(Some(button)) =
            target.closest("button[data-record-add], button[data-record-remove]")
        else {
            return;
        };
        let Ok(Some(root)) = button.closest("[data-record-list]") else {
            return;
        };
        event.prevent_default();
        if button.has_attribute("data-record-add") {
            add(bounds, &root);
        } else if let Ok(Some(record)) = button.closest("[data-record]") {
            remove(bounds, &root, &record);
        }
    }

    fn records(root: &Element) -> Vec<Element> {
        let Ok(found) = root.query_selector_all("[data-record]") else {
            return Vec::new();
        };
        (0..found.length())
            .filter_map(|index| found.item(index))
            .filter_map(|node| node.dyn_into::<Element>().ok())
            .collect()
    }

    fn add(bounds: &Bounds, root: &Element) {
        if records(root).len() >= bounds.max {
            return;
        }
        let template = root
            .query_selector("template[data-record-template]")
            .ok()
            .flatten()
            .and_then(|element| element.dyn_into::<HtmlTemplateElement>().ok());
        let body = root.query_selector("[data-record-body]").ok().flatten();
        let (Some(template), Some(body)) = (template, body) else {
            return;
        };
        let Ok(copy) = template.content().clone_node_with_deep(true) else {
            return;
        };
        let Ok(Some(record)) = copy
            .dyn_ref::<web_sys::DocumentFragment>()
            .map_or(Ok(None), |fragment| {
                fragment.query_selector("[data-record]")
            })
        else {
            return;
        };
        if body.append_child(&record).is_err() {
            return;
        }
        let count = renumber(bounds, root);
        announce(root, &format!("{} {count} added.", bounds.item));
        focus_first_control(&record);
    }

    fn remove(bounds: &Bounds, root: &Element, record: &Element) {
        let before = records(root);
        if before.len() <= bounds.min {
            return;
        }
        let position = before.iter().position(|element| element == record);
        record.remove();
        renumber(bounds, root);
        let number = position.map_or(String::new(), |position| (position + 1).to_string());
        announce(root, &format!("{} {number} removed.", bounds.item));
        let after = records(root);
        match position.and_then(|position| after.get(position).or(after.last())) {
            Some(next) => focus_first_control(next),
            None => {
                if let Ok(Some(add)) = root.query_selector("[data-record-add]") {
                    if let Ok(add) = add.dyn_into::<HtmlElement>() {
                        let _ = add.focus();
                    }
                }
            }
        }
    }

    /// Gives every record its index in document order, updates the count and the buttons;
    /// returns the count.
    fn renumber(bounds: &Bounds, root: &Element) -> usize {
        let all = records(root);
        for (index, record) in all.iter().enumerate() {
            let old = record.get_attribute("data-record").unwrap_or_default();
            let new = index.to_string();
            if old != new {
                let from_name = format!("{}[{old}]", bounds.list);
                let to_name = format!("{}[{new}]", bounds.list);
                let from_id = format!("{}-r{old}-", bounds.dom_id);
                let to_id = format!("{}-r{new}-", bounds.dom_id);
                let mut elements = vec![record.clone()];
                if let Ok(inner) = record.query_selector_all("*") {
                    elements.extend(
                        (0..inner.length())
                            .filter_map(|position| inner.item(position))
                            .filter_map(|node| node.dyn_into::<Element>().ok()),
                    );
                }
                for element in &elements {
                    for attribute in INDEXED {
                        if let Some(value) = element.get_attribute(attribute) {
                            let changed = value
                                .replace(&from_name, &to_name)
                                .replace(&from_id, &to_id);
                            if changed != value {
                                let _ = element.set_attribute(attribute, &changed);
                            }
                        }
                    }
                }
                let _ = record.set_attribute("data-record", &new);
            }
            if let Ok(numbers) = record.query_selector_all("[data-record-number]") {
                for position in 0..numbers.length() {
                    if let Some(node) = numbers.item(position) {
                        node.set_text_content(Some(&(index + 1).to_string()));
                    }
                }
            }
        }
        let count = all.len();
        if let Ok(Some(input)) = root.query_selector("input[data-record-count]") {
            let _ = input.set_attribute("value", &count.to_string());
        }
        toggle(root, "[data-record-add]", count >= bounds.max);
        toggle(root, "[data-record-remove]", count <= bounds.min);
        count
    }

    fn toggle(root: &Element, selector: &str, hidden: bool) {
        if let Ok(found) = root.query_selector_all(selector) {
            for position in 0..found.length() {
                if let Some(element) = found
                    .item(position)
                    .and_then(|node| node.dyn_into::<HtmlElement>().ok())
                {
                    element.set_hidden(hidden);
                }
            }
        }
    }

    fn announce(root: &Element, text: &str) {
        if let Ok(Some(status)) = root.query_selector("[data-record-status]") {
            status.set_text_content(Some(text));
        }
    }

    fn focus_first_control(record: &Element) {
        if let Ok(Some(control)) =
            record.query_selector("input:not([type=hidden]), select, textarea")
        {
            if let Ok(control) = control.dyn_into::<HtmlElement>() {
                let _ = control.focus();
            }
        }
    }
}

#[cfg(not(feature = "hydrate"))]
mod browser {
    use super::Bounds;

    pub fn attach(_bounds: Bounds) {}
}
