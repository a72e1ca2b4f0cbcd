//! `Fieldset`: the controls of one object of the response schema, grouped under its legend.
//!
//! The fieldset submits nothing itself: its children are ordinary controls named by the full
//! path of their member (`address.city`, `order.shipping.postal_code`), so the decoder builds
//! the nested object from the names alone. The legend and help come from the object's schema
//! `title` and `description`, filled in by code when the node is placed; without them the
//! legend is the member's name made readable, never the raw path.

use leptos::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{check_name, humanize_path, Described, FieldNotes};
use crate::catalog::{ComponentProps, Role};
use crate::render::NodeCtx;

/// Props of the `Fieldset` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FieldsetProps {
    /// The object's path in the response schema, such as "address" or "order.shipping".
    pub name: String,
    /// The legend (default: the object's schema title).
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub legend: Option<String>,
    /// One sentence under the legend (default: the object's schema description).
    #[serde(default)]
    #[schemars(extend("x-from-schema" = true))]
    pub description: Option<String>,
}

impl FieldsetProps {
    /// The legend shown: the given one, else the last member of the path made readable.
    #[must_use]
    pub fn legend_text(&self) -> String {
        self.legend
            .clone()
            .filter(|legend| !legend.trim().is_empty())
            .unwrap_or_else(|| humanize_path(&self.name))
    }
}

impl ComponentProps for FieldsetProps {
    const NAME: &'static str = "Fieldset";
    const ROLE: Role = Role::Layout;
    const DESCRIPTION: &'static str =
        "An object field; children are Fields named by path: address.city.";

    fn example() -> (Value, Value) {
        (
            json!({"name": "address", "legend": "Delivery address",
                   "description": "Where the parcel goes."}),
            json!({}),
        )
    }

    fn check(&self) -> Result<(), String> {
        check_name(&self.name)
    }

    fn render(self, node: &NodeCtx<'_>, children: Vec<AnyView>) -> AnyView {
        // An error about the object as a whole (its children report their own).
        let error = node.field(&self.name).error;
        view! { <FieldsetView dom_id=node.dom_id() props=self error content=children/> }.into_any()
    }
}

/// A native `<fieldset>` with its legend, help, the object's own error and the member controls.
#[component]
pub fn FieldsetView(
    dom_id: String,
    props: FieldsetProps,
    error: Option<String>,
    content: Vec<AnyView>,
) -> impl IntoView {
    let described = Described::new(&dom_id, props.description.as_ref(), error.as_ref());
    let legend = props.legend_text();
    let described_by = described.by();
    view! {
        <fieldset
            id=dom_id
            aria-describedby=described_by
            class="space-y-4 rounded-lg border border-slate-300 p-4 dark:border-slate-600"
            data-testid="fieldset"
        >
            <legend class="px-1 text-base font-semibold text-slate-900 dark:text-slate-100">{legend}</legend>
            <FieldNotes described help=props.description error/>
            {content}
        </fieldset>
    }
}
