//! The component gallery: every component in a catalog, rendered from its example by the same
//! renderer pages use, next to its props documented for people and the exact tool definition a
//! model sees (which is terse: types and enums, no prose).
//!
//! It doubles as the visual and accessibility test target, so each example gets a node id of its
//! own (the component's name) and element ids never collide across the page.

use std::collections::BTreeMap;

use leptos::prelude::*;
use serde_json::Value;

use crate::{
    catalog::{Catalog, BINDABLE, FROM_SCHEMA},
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
            let props = prop_rows(&spec.props_schema);
            let props_count = props.len();
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
                    <details class="mt-4" data-testid="gallery-props">
                        <summary class="cursor-pointer text-sm font-medium text-indigo-700 dark:text-indigo-300">
                            {format!("Props ({props_count})")}
                        </summary>
                        <PropsTable rows=props/>
                    </details>
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

/// One documented prop of a component, for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PropRow {
    /// The prop's name.
    pub name: String,
    /// Its JSON type, enum values or alternatives, in short.
    pub kind: String,
    /// Whether the component needs it.
    pub required: bool,
    /// Its `///` documentation, and notes on binding and on props code fills in.
    pub doc: String,
}

/// The props of a full props schema (with its documentation), in declaration order.
#[must_use]
pub fn prop_rows(schema: &Value) -> Vec<PropRow> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    schema["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, prop)| {
            let mut doc = prop["description"]
                .as_str()
                .unwrap_or_default()
                .replace('\n', " ");
            if prop.get(BINDABLE).is_some() {
                doc.push_str(" Usually bound to page data.");
            }
            if prop.get(FROM_SCHEMA).is_some() {
                doc.push_str(" Set by code from the response schema; not offered to the model.");
            }
            PropRow {
                name: name.clone(),
                kind: type_text(prop),
                required: required.contains(&name.as_str()),
                doc: doc.trim().to_owned(),
            }
        })
        .collect()
}

/// A short type for people: `string`, `"a" | "b"`, `array of string`, `number | string`.
fn type_text(schema: &Value) -> String {
    if let Some(values) = schema["enum"].as_array() {
        return values
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(" | ");
    }
    if let Some(constant) = schema.get("const") {
        return constant.to_string();
    }
    for alternatives in ["anyOf", "oneOf"] {
        if let Some(choices) = schema[alternatives].as_array() {
            return choices
                .iter()
                .map(type_text)
                .collect::<Vec<_>>()
                .join(" | ");
        }
    }
    let kind = match &schema["type"] {
        Value::String(kind) => kind.clone(),
        Value::Array(kinds) => kinds
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" | "),
        _ => "any".to_owned(),
    };
    match schema.get("items") {
        Some(items) if kind == "array" && items.is_object() => {
            format!("array of {}", type_text(items))
        }
        _ => kind,
    }
}

/// The props of one component as a table.
#[component]
fn PropsTable(rows: Vec<PropRow>) -> impl IntoView {
    if rows.is_empty() {
        return view! { <p class="mt-2 text-sm text-slate-700 dark:text-slate-300">"No props."</p> }
            .into_any();
    }
    let body = rows
        .into_iter()
        .map(|row| {
            view! {
                <tr class="border-t border-slate-200 align-top dark:border-slate-700">
                    <td class="py-1 pr-3 font-mono">{row.name}</td>
                    <td class="py-1 pr-3 font-mono">{row.kind}</td>
                    <td class="py-1 pr-3">{if row.required { "yes" } else { "no" }}</td>
                    <td class="py-1">{row.doc}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="mt-2 w-full text-left text-sm text-slate-800 dark:text-slate-200">
            <thead>
                <tr>
                    <th scope="col" class="py-1 pr-3">"Prop"</th>
                    <th scope="col" class="py-1 pr-3">"Type"</th>
                    <th scope="col" class="py-1 pr-3">"Required"</th>
                    <th scope="col" class="py-1">"What it is"</th>
                </tr>
            </thead>
            <tbody>{body}</tbody>
        </table>
    }
    .into_any()
}

/// [`GalleryPage`] with its view type erased (see the crate's documentation).
#[must_use]
pub fn gallery_page(catalog: Catalog) -> AnyView {
    view! { <GalleryPage catalog/> }.into_any()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_props_table_keeps_the_documentation_the_tool_schema_leaves_out() {
        let catalog = Catalog::defaults();
        let Some(input) = catalog.get("Input") else {
            panic!("no Input");
        };
        let rows = prop_rows(&input.props_schema);
        let find = |name: &str| rows.iter().find(|row| row.name == name).cloned();
        let kind = find("type").map(|row| row.kind);
        assert_eq!(
            kind.as_deref(),
            Some(r#""text" | "email" | "number" | "password" | "url" | "date""#)
        );
        let step = find("step").map(|row| row.doc).unwrap_or_default();
        assert!(step.contains("Granularity"), "{step}");
        assert!(step.contains("not offered to the model"), "{step}");
        assert!(find("name").is_some_and(|row| row.required));
        let table = catalog
            .get("Table")
            .map(|spec| prop_rows(&spec.props_schema));
        let rows_doc = table
            .and_then(|rows| rows.into_iter().find(|row| row.name == "rows"))
            .map(|row| row.doc);
        assert!(rows_doc.is_some_and(|doc| doc.ends_with("Usually bound to page data.")));
        assert!(prop_rows(&json!({"type": "object"})).is_empty());
    }
}
