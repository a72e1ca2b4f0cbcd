//! The component gallery: every component in a catalog, rendered from its example by the same
//! renderer pages use, next to the exact tool definition a model sees.
//!
//! It doubles as the visual and accessibility test target, so each example gets a node id of its
//! own (the component's name) and element ids never collide across the page.

use std::collections::BTreeMap;

use leptos::prelude::*;
use serde_json::Value;

use crate::{
    catalog::Catalog,
    render::{render_tree, RenderCtx},
    tree::{Node, PageTree},
};

/// The body of `GET /components`.
#[component]
#[expect(
    clippy::needless_pass_by_value,
    reason = "Leptos component props are owned"
)]
pub fn GalleryPage(catalog: Catalog) -> impl IntoView {
    let tools = catalog.tool_definitions();
    let count = catalog.specs().len();
    let entries = catalog
        .specs()
        .iter()
        .zip(tools)
        .map(|(spec, tool)| {
            let (props, data) = spec.example();
            let node_id = format!("gallery-{}", spec.name.to_lowercase());
            let tree = PageTree {
                nodes: BTreeMap::from([(node_id.clone(), Node { component: spec.name.clone(), props, children: Vec::new() })]),
                order: vec![node_id],
            };
            let mut ctx = RenderCtx::new(data);
            ctx.catalog = catalog.clone();
            ctx.download_base = Some("/components/download".to_owned());
            let rendered = render_tree(&tree, &ctx);
            let tool_json = serde_json::to_string_pretty(&tool).unwrap_or_else(|_| Value::Null.to_string());
            let anchor = spec.name.to_lowercase();
            let heading_id = format!("component-{anchor}");
            let labelled_by = heading_id.clone();
            view! {
                <section
                    aria-labelledby=labelled_by
                    data-testid="gallery-entry"
                    data-component=spec.name.clone()
                    class="rounded-lg border border-slate-200 bg-white p-5 shadow-sm dark:bg-slate-800 dark:border-slate-700"
                >
                    <div class="flex flex-wrap items-baseline gap-3">
                        <h2 id=heading_id class="text-xl font-semibold">{spec.name.clone()}</h2>
                        <span class="rounded-full bg-slate-100 px-2 py-0.5 text-xs font-medium text-slate-700 dark:bg-slate-700 dark:text-slate-100">
                            {spec.role.as_str()}
                        </span>
                    </div>
                    <p class="mt-2 text-sm text-slate-700 dark:text-slate-300">{spec.description.clone()}</p>
                    <div class="mt-4 rounded border border-dashed border-slate-300 p-4 dark:border-slate-600">{rendered}</div>
                    <details class="mt-4">
                        <summary class="cursor-pointer text-sm font-medium text-indigo-700 dark:text-indigo-300">
                            "Tool definition (JSON)"
                        </summary>
                        <pre class="mt-2 max-h-96 overflow-auto rounded bg-slate-900 p-3 text-xs text-slate-100">
                            <code>{tool_json}</code>
                        </pre>
                    </details>
                </section>
            }
        })
        .collect_view();
    view! {
        <div class="space-y-6">
            <div>
                <h1 class="text-3xl font-bold">"Components"</h1>
                <p class="mt-2 text-slate-700 dark:text-slate-300">
                    {format!("{count} components a model can place. Each is rendered from its example by the page renderer; its tool definition is exactly what a model is offered (also at ")}
                    <a href="/api/components" class="text-indigo-700 underline dark:text-indigo-300">"/api/components"</a>
                    ")."
                </p>
            </div>
            {entries}
        </div>
    }
}
