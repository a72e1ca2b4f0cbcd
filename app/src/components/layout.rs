//! Container, Card and Details: layout components that hold other nodes.

use leptos::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::catalog::{ComponentProps, Role};
use crate::render::NodeCtx;

/// Which way a Container stacks its children.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    // Side by side.
    Row,
    // One under the other.
    #[default]
    Column,
}

/// Space between a Container's children.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Gap {
    // Small.
    Sm,
    // Medium.
    #[default]
    Md,
    // Large.
    Lg,
}

/// Props of the `Container` component.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ContainerProps {
    /// row (side by side, e.g. Stats or Buttons) or column (stacked, default).
    #[serde(default)]
    pub direction: Direction,
    /// Space between children: sm, md (default) or lg.
    #[serde(default)]
    pub gap: Gap,
    /// In a row, let children flow onto the next line when they do not fit (default true).
    #[serde(default = "yes")]
    pub wrap: bool,
}

fn yes() -> bool {
    true
}

impl ComponentProps for ContainerProps {
    const NAME: &'static str = "Container";
    const ROLE: Role = Role::Layout;
    const DESCRIPTION: &'static str = "An invisible row or column, e.g. Buttons side by side.";

    fn example() -> (Value, Value) {
        (
            json!({"direction": "row", "gap": "md", "wrap": true}),
            json!({}),
        )
    }

    fn render(self, node: &NodeCtx<'_>, children: Vec<AnyView>) -> AnyView {
        view! { <ContainerView dom_id=node.dom_id() props=self content=children/> }.into_any()
    }
}

/// A flex box.
#[component]
pub fn ContainerView(
    dom_id: String,
    props: ContainerProps,
    content: Vec<AnyView>,
) -> impl IntoView {
    let direction = match props.direction {
        Direction::Row => "flex-row items-start",
        Direction::Column => "flex-col",
    };
    let gap = match props.gap {
        Gap::Sm => "gap-2",
        Gap::Md => "gap-4",
        Gap::Lg => "gap-8",
    };
    let wrap = if props.wrap && props.direction == Direction::Row {
        "flex-wrap"
    } else {
        ""
    };
    let class = format!("flex {direction} {gap} {wrap}");
    view! { <div id=dom_id class=class>{content}</div> }
}

/// Props of the `Card` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CardProps {
    /// The card's title.
    #[serde(default)]
    pub title: Option<String>,
    /// One sentence under the title.
    #[serde(default)]
    pub description: Option<String>,
}

impl ComponentProps for CardProps {
    const NAME: &'static str = "Card";
    const ROLE: Role = Role::Layout;
    const DESCRIPTION: &'static str = "A bordered panel grouping related content.";

    fn example() -> (Value, Value) {
        (
            json!({"title": "Summary", "description": "What will happen when you submit."}),
            json!({}),
        )
    }

    fn render(self, node: &NodeCtx<'_>, children: Vec<AnyView>) -> AnyView {
        view! { <CardView dom_id=node.dom_id() props=self content=children/> }.into_any()
    }
}

/// A `<section>` labelled by its title.
#[component]
pub fn CardView(dom_id: String, props: CardProps, content: Vec<AnyView>) -> impl IntoView {
    let title_id = format!("{dom_id}-title");
    let labelled_by = props.title.as_ref().map(|_| title_id.clone());
    view! {
        <section
            id=dom_id
            aria-labelledby=labelled_by
            class="space-y-3 rounded-lg border border-slate-200 bg-white p-5 shadow-sm dark:border-slate-700 dark:bg-slate-800"
        >
            {props
                .title
                .map(|title| {
                    view! {
                        <h2 id=title_id class="text-lg font-semibold text-slate-900 dark:text-slate-100">
                            {title}
                        </h2>
                    }
                })}
            {props
                .description
                .map(|text| view! { <p class="text-sm text-slate-600 dark:text-slate-300">{text}</p> })}
            {content}
        </section>
    }
}

/// Props of the `Details` component.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DetailsProps {
    /// The always-visible line the person clicks to expand, such as "Show raw headers".
    pub summary: String,
    /// Start expanded.
    #[serde(default)]
    pub open: bool,
}

impl ComponentProps for DetailsProps {
    const NAME: &'static str = "Details";
    const ROLE: Role = Role::Layout;
    const DESCRIPTION: &'static str = "Secondary content, collapsed behind its summary.";

    fn example() -> (Value, Value) {
        (
            json!({"summary": "How were these emails chosen?"}),
            json!({}),
        )
    }

    fn render(self, node: &NodeCtx<'_>, children: Vec<AnyView>) -> AnyView {
        view! { <DetailsView dom_id=node.dom_id() props=self content=children/> }.into_any()
    }
}

/// A native `<details>` / `<summary>`.
#[component]
pub fn DetailsView(dom_id: String, props: DetailsProps, content: Vec<AnyView>) -> impl IntoView {
    view! {
        <details id=dom_id open=props.open class="rounded-md border border-slate-200 bg-white dark:border-slate-700 dark:bg-slate-800">
            <summary class="cursor-pointer rounded-md px-4 py-2 font-medium text-slate-900 focus:outline-none focus:ring-2 focus:ring-indigo-500 dark:text-slate-100">
                {props.summary}
            </summary>
            <div class="space-y-3 px-4 pb-4 pt-1">{content}</div>
        </details>
    }
}
