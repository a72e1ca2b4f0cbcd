//! `MultiTextInput`: a list of strings entered one per row.
//!
//! The server renders enough blank rows, all with the same `name`, so the field works with
//! JavaScript off (the decoder collects every value of the key and drops empty ones). The rows sit
//! in an island: once hydrated, its "Add another" button appends a row and focuses it. Before
//! hydration the button is disabled, as with the theme toggle.

use leptos::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{check_name, control_class, Described, FieldLabel, FieldNotes};
use crate::catalog::{ComponentProps, FieldInfo, FieldYield, Role};
use crate::render::{FieldState, NodeCtx};

const DEFAULT_ROWS: usize = 3;
const DEFAULT_MAX_ROWS: usize = 20;

/// Props of the `MultiTextInput` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MultiTextInputProps {
    /// The form key, matching an array-of-strings field of the response schema.
    pub name: String,
    /// The visible label, such as "Guest email addresses".
    pub label: String,
    /// Whether at least one row must be filled in.
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub required: bool,
    /// One sentence of help shown under the rows.
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub help: Option<String>,
    /// An example entry shown greyed in empty rows.
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub placeholder: Option<String>,
    /// How many rows to show at first, 1 to 20 (default 3).
    #[serde(default)]
    #[schemars(range(min = 1, max = 20))]
    pub rows: Option<u8>,
    /// The most rows "Add another" may reach, 1 to 50 (default 20).
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    pub max_rows: Option<u8>,
    /// Initial entries.
    #[serde(default)]
    pub values: Vec<String>,
}

impl ComponentProps for MultiTextInputProps {
    const NAME: &'static str = "MultiTextInput";
    const ROLE: Role = Role::Field;
    const DESCRIPTION: &'static str = "Free strings, one per row.";

    fn example() -> (Value, Value) {
        (
            json!({"name": "cc", "label": "Also notify", "placeholder": "name@example.com",
                   "rows": 2, "help": "One address per row."}),
            json!({}),
        )
    }

    fn check(&self) -> Result<(), String> {
        check_name(&self.name)?;
        if self.rows.is_some_and(|rows| !(1..=20).contains(&rows)) {
            return Err("`rows` must be between 1 and 20".to_owned());
        }
        if self.max_rows.is_some_and(|rows| !(1..=50).contains(&rows)) {
            return Err("`maxRows` must be between 1 and 50".to_owned());
        }
        Ok(())
    }

    fn field(&self) -> Option<FieldInfo> {
        Some(FieldInfo::new(
            &self.name,
            &self.label,
            FieldYield::StringArray,
            self.required,
        ))
    }

    fn render(self, node: &NodeCtx<'_>, _children: Vec<AnyView>) -> AnyView {
        let state = node.field(&self.name);
        view! { <MultiTextInputView dom_id=node.dom_id() props=self state/> }.into_any()
    }
}

/// The label, the rows island, help and error.
#[component]
pub fn MultiTextInputView(
    dom_id: String,
    props: MultiTextInputProps,
    state: FieldState,
) -> impl IntoView {
    let described = Described::new(&dom_id, props.help.as_ref(), state.error.as_ref());
    let described_by = described.by();
    let invalid = state.error.is_some();
    let max_rows = props.max_rows.map_or(DEFAULT_MAX_ROWS, usize::from).max(1);
    let mut values: Vec<String> = match &state.values {
        Some(submitted) => submitted
            .iter()
            .filter(|value| !value.trim().is_empty())
            .cloned()
            .collect(),
        None => props.values.clone(),
    };
    let wanted = props
        .rows
        .map_or(DEFAULT_ROWS, usize::from)
        .max(values.len() + 1)
        .min(max_rows.max(values.len()));
    values.resize(wanted.max(1), String::new());
    view! {
        <div class="space-y-1">
            <FieldLabel for_id=dom_id.clone() label=props.label.clone() required=props.required/>
            <MultiTextRows
                name=props.name
                dom_id=dom_id
                label=props.label
                values=values
                required=props.required
                placeholder=props.placeholder
                described_by=described_by
                invalid=invalid
                max_rows=max_rows
            />
            <FieldNotes described help=props.help error=state.error/>
        </div>
    }
}

/// The rows and the "Add another" button; the only island of the catalog.
#[island]
pub fn MultiTextRows(
    name: String,
    dom_id: String,
    label: String,
    values: Vec<String>,
    required: bool,
    placeholder: Option<String>,
    described_by: Option<String>,
    invalid: bool,
    max_rows: usize,
) -> impl IntoView {
    let initial = values.len();
    let (count, set_count) = signal(initial);
    let (hydrated, set_hydrated) = signal(false);
    Effect::new(move |_| set_hydrated.set(true));
    let values = StoredValue::new(values);
    let row_id = move |index: usize| {
        if index == 0 {
            dom_id.clone()
        } else {
            format!("{dom_id}-{index}")
        }
    };
    let row_id_for_rows = row_id.clone();
    let add = move |_| {
        let next = count.get_untracked();
        if next < max_rows {
            set_count.set(next + 1);
            browser::focus_later(row_id(next));
        }
    };
    let add_disabled = move || !hydrated.get() || count.get() >= max_rows;
    view! {
        <div class="space-y-2" data-testid="multi-text-rows">
            <For
                each=move || 0..count.get()
                key=|index| *index
                children=move |index| {
                    let value = values.with_value(|values| values.get(index).cloned().unwrap_or_default());
                    let aria_label = (index > 0).then(|| format!("{label}, row {}", index + 1));
                    view! {
                        <input
                            id=row_id_for_rows(index)
                            type="text"
                            name=name.clone()
                            value=value
                            placeholder=placeholder.clone()
                            required=required && index == 0
                            aria-label=aria_label
                            aria-invalid=invalid.then_some("true")
                            aria-describedby=described_by.clone()
                            class=control_class(invalid)
                        />
                    }
                }
            />
            <button
                type="button"
                data-testid="multi-text-add"
                data-hydrated=move || hydrated.get().to_string()
                disabled=add_disabled
                on:click=add
                class="rounded-md border border-slate-400 px-3 py-1 text-sm font-medium text-slate-800 hover:bg-slate-100 focus:outline-none focus:ring-2 focus:ring-indigo-500 disabled:opacity-60 dark:text-slate-100 dark:hover:bg-slate-700"
            >
                "Add another"
            </button>
        </div>
    }
}

#[cfg(feature = "hydrate")]
mod browser {
    use leptos::prelude::*;
    use wasm_bindgen::JsCast;

    /// Focuses the element with `id` after the next frame, once the new row exists.
    pub fn focus_later(id: String) {
        request_animation_frame(move || {
            if let Some(element) = document()
                .get_element_by_id(&id)
                .and_then(|element| element.dyn_into::<web_sys::HtmlElement>().ok())
            {
                let _ = element.focus();
            }
        });
    }
}

#[cfg(not(feature = "hydrate"))]
mod browser {
    pub fn focus_later(_id: String) {}
}
