//! The 5,000-row selection page: the HTML size and render time of its first view and of a search,
//! beside a baseline measured in the same run: the same 5,000 rows rendered the way selectable
//! tables were before server-side paging (every row a tick box; ten unpaged tables of 500 rows,
//! since one table may hold at most 500 rows per page).
//!
//! Run with `cargo bench -p tessera-app --features ssr --bench selections` (it lives in the view
//! crate so a release build need not compile the server); figures go in BENCHMARKS.md.

#[path = "../../benches/support/timing.rs"]
mod timing;

use std::collections::BTreeMap;
use std::time::Duration;

use leptos::prelude::*;
use serde_json::{json, Map, Value};
use tessera_app::{
    render::{render_tree, RenderCtx},
    tree::PageTree,
};
use timing::{report, time_calls};

const ROWS: usize = 5_000;

fn users() -> Vec<Value> {
    (1..=ROWS)
        .map(|index| {
            json!({
                "id": format!("u{index}"),
                "name": format!("User {index}"),
                "email": format!("user{index}@example.com"),
                "last_seen": format!("2025-{:02}-{:02}", index % 12 + 1, index % 28 + 1),
            })
        })
        .collect()
}

fn columns() -> Value {
    json!([{"key": "id", "label": "Id"}, {"key": "name", "label": "Name"},
           {"key": "email", "label": "Email"}, {"key": "last_seen", "label": "Last seen"}])
}

/// The page the heuristic builds for `deactivate_ids` (maxItems 500) over 5,000 users.
fn selection_page() -> Result<PageTree, String> {
    serde_json::from_value(json!({
        "nodes": {
            "h": {"component": "Heading", "props": {"text": "Deactivate the users who left", "level": 1}},
            "f": {"component": "Form", "children": ["t", "b"]},
            "t": {"component": "Table", "props": {"caption": "Users", "rows": {"$data": "/users"}, "columns": columns(),
                  "selectable": {"name": "deactivate_ids", "idKey": "id", "label": "Deactivate ids", "maxItems": 500}}},
            "b": {"component": "Button", "props": {"label": "Deactivate", "variant": "danger"}}
        },
        "order": ["h", "f"]
    }))
    .map_err(|error| error.to_string())
}

/// The old page: every row a tick box, in ten unpaged tables of 500 rows.
fn every_row_page(data: &mut Value) -> Result<PageTree, String> {
    let mut nodes = Map::new();
    let mut children = Vec::new();
    let rows = data["users"].as_array().cloned().unwrap_or_default();
    for (chunk, part) in rows.chunks(500).enumerate() {
        let key = format!("part{chunk}");
        data[&key] = Value::Array(part.to_vec());
        let id = format!("t{chunk}");
        nodes.insert(
            id.clone(),
            json!({"component": "Table", "props": {"rows": {"$data": format!("/{key}")},
            "columns": columns(), "pageSize": 500,
            "selectable": {"name": "deactivate_ids", "idKey": "id", "label": "Deactivate ids"}}}),
        );
        children.push(json!(id));
    }
    nodes.insert(
        "f".into(),
        json!({"component": "Form", "children": children}),
    );
    serde_json::from_value(json!({"nodes": nodes, "order": ["f"]}))
        .map_err(|error| error.to_string())
}

fn render(tree: &PageTree, ctx: &RenderCtx) -> String {
    Owner::new().with(|| render_tree(tree, ctx).to_html())
}

fn ensure(holds: bool, what: &str) -> Result<(), String> {
    if holds {
        Ok(())
    } else {
        Err(what.to_owned())
    }
}

fn run() -> Result<(), String> {
    let mut data = json!({ "users": users() });
    let old = every_row_page(&mut data)?;
    let page = selection_page()?;
    let first = RenderCtx::new(data.clone());
    let mut searched = RenderCtx::new(data.clone());
    searched.query = BTreeMap::from([("t.q".to_owned(), "user49".to_owned())]);
    let baseline = RenderCtx::new(data);

    let first_html = render(&page, &first);
    ensure(
        first_html.matches("type=\"checkbox\"").count() == 50,
        "the first view shows one page",
    )?;
    let search_html = render(&page, &searched);
    // user49, user490-499, user4900-4999: 111 matches, 50 on the first page.
    ensure(
        search_html.contains("111 of 5000 rows match"),
        "the search filters",
    )?;
    let old_html = render(&old, &baseline);
    ensure(
        old_html.matches("type=\"checkbox\"").count() == ROWS,
        "the baseline shows every row",
    )?;
    eprintln!(
        "selections: first view {} bytes; search {} bytes; baseline (every row) {} bytes",
        first_html.len(),
        search_html.len(),
        old_html.len()
    );

    let budget = Duration::from_secs(3);
    let results = [
        time_calls(
            "first view, 5,000 rows, one page",
            budget,
            50,
            2_000,
            || render(&page, &first),
        ),
        time_calls("search \"user49\", one page", budget, 50, 2_000, || {
            render(&page, &searched)
        }),
        time_calls("baseline: every row a tick box", budget, 10, 200, || {
            render(&old, &baseline)
        }),
    ];
    report("selections", &results);
    Ok(())
}

fn main() {
    if let Err(error) = run() {
        eprintln!("selections bench failed: {error}");
        std::process::exit(1);
    }
}
