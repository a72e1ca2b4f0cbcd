//! Server rendering: a 50-node page whose Table is bound to 1,000 data rows (500 a page, the
//! most `pageSize` allows), the same table alone, the component gallery (all 29 examples and their
//! tool definitions, as `GET /components` serves them without the document shell) and its 29
//! examples alone, each beside a baseline measured in the same run: the same table, the same
//! gallery text and the examples' texts, written by a plain `String` writer with manual escaping.
//!
//! Two hostile trees follow, with no baseline: 20 Tables bound to one array of 2,000 rows (the
//! 17 KB preview body that once made a 5.9 MB page), and a 1 MiB `POST /api/pages/preview` body:
//! 2,000 Tables of 500 rows a page over one array filling the rest of the mebibyte (before the
//! render budget, a million rows; without `pageSize` it would have been every row of every table,
//! gigabytes, which is why that variant is not benched). Set `RENDER_BENCH_SKIP_WORST=1` to leave
//! the second out.
//!
//! Run with `cargo bench --bench render`; criterion reports the mean and the median of batched
//! samples, and a second pass times single calls for the median and p99. Figures go in
//! BENCHMARKS.md.

#[path = "support/timing.rs"]
mod timing;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Duration;

use anyhow::ensure;
use criterion::Criterion;
use leptos::prelude::*;
use serde_json::{json, Value};
use tessera_app::{
    binding::resolve_props,
    catalog::Catalog,
    gallery::GalleryPage,
    render::{render_tree, RenderCtx},
    tree::{Node, PageTree},
};
use timing::{report, time_calls};

const ROWS: usize = 1_000;
/// Rows per page of the bound table: the most `pageSize` allows, so both sides of a comparison
/// write the same rows whether or not tables page by default.
const PAGE: usize = 500;

/// The columns of the bound table: data key and header label.
const COLUMNS: [(&str, &str); 5] = [
    ("from", "From"),
    ("subject", "Subject"),
    ("date", "Received"),
    ("size", "Size (KB)"),
    ("folder", "Folder"),
];

/// 1,000 emails, with characters that must be escaped in some cells.
fn data() -> Value {
    let emails: Vec<Value> = (1..=ROWS)
        .map(|index| {
            json!({
                "id": format!("m{index}"),
                "from": format!("sender{}@example.com", index % 97),
                "subject": format!("Q&A <weekly> \"digest\", issue {index}"),
                "date": format!("2023-{:02}-{:02}", index % 12 + 1, index % 28 + 1),
                "size": index % 500,
                "folder": if index % 3 == 0 { "Receipts" } else { "Inbox" },
            })
        })
        .collect();
    let monthly: Vec<Value> = (1..=12)
        .map(|month| json!({"month": format!("M{month}"), "count": month * 17 % 90}))
        .collect();
    json!({
        "user": "Ada",
        "mailbox": "ada@example.com",
        "count": ROWS,
        "oldest": "2023-01-02",
        "emails": emails,
        "monthly": monthly,
        "senders": [{"name": "Newsletter Weekly"}, {"name": "Billing"}, {"name": "Old Project"}],
        "history": [
            {"date": "2024-03-01 09:00", "title": "Run started"},
            {"date": "2024-03-01 09:01", "title": "Fetched 1,000 emails", "description": "From the inbox of ada@example.com."},
            {"date": "2024-03-01 09:02", "title": "Waiting for a person"}
        ],
        "log": "12:00 fetched 1000 emails\n12:01 waiting for a person",
        "folders": [{"value": "old", "label": "Old mail"}, {"value": "receipts", "label": "Receipts"}, "Misc"]
    })
}

fn columns() -> Value {
    COLUMNS
        .iter()
        .map(|(key, label)| json!({"key": key, "label": label}))
        .collect()
}

/// A realistic page of exactly 50 nodes: summary, layout, display components, the 1,000-row
/// table and a form with one field of every kind.
fn fifty_node_page() -> anyhow::Result<PageTree> {
    let mut nodes = serde_json::Map::new();
    let mut add = |id: &str, component: &str, props: Value, children: &[&str]| {
        nodes.insert(
            id.to_owned(),
            json!({"component": component, "props": props, "children": children}),
        );
    };
    add(
        "title",
        "Heading",
        json!({"text": "Inbox clean-up for {{/user}}", "level": 1}),
        &[],
    );
    add(
        "intro",
        "Text",
        json!({"text": "{{/count}} emails are older than a year."}),
        &[],
    );
    add(
        "warning",
        "Alert",
        json!({"tone": "warning", "title": "Archiving is final", "text": "Archived emails leave the inbox of {{/mailbox}}."}),
        &[],
    );
    add(
        "stats",
        "Container",
        json!({"direction": "row", "gap": "md", "wrap": true}),
        &["stat1", "stat2", "stat3", "stat4"],
    );
    for (index, label) in ["Emails found", "Oldest", "Senders", "Folders"]
        .iter()
        .enumerate()
    {
        add(
            &format!("stat{}", index + 1),
            "Stat",
            json!({"label": label, "value": {"$data": "/count"}}),
            &[],
        );
    }
    add(
        "summary",
        "Card",
        json!({"title": "Summary", "description": "What will happen when you submit."}),
        &["facts", "senders", "status"],
    );
    add(
        "facts",
        "KeyValue",
        json!({"items": [
            {"label": "Mailbox", "value": {"$data": "/mailbox"}},
            {"label": "Emails found", "value": {"$data": "/count"}},
            {"label": "Oldest", "value": "{{/oldest}}"}
        ]}),
        &[],
    );
    add(
        "senders",
        "List",
        json!({"items": {"$data": "/senders"}, "itemKey": "name"}),
        &[],
    );
    add(
        "status",
        "Badge",
        json!({"text": "Ready", "tone": "success"}),
        &[],
    );
    add(
        "emails",
        "Table",
        json!({"caption": "Emails older than a year", "rows": {"$data": "/emails"}, "columns": columns(), "pageSize": PAGE}),
        &[],
    );
    add("rule", "Divider", json!({}), &[]);
    add(
        "history",
        "Timeline",
        json!({"events": {"$data": "/history"}}),
        &[],
    );
    add(
        "chart",
        "Chart",
        json!({"kind": "bar", "title": "Emails per month", "data": {"$data": "/monthly"}, "labelKey": "month", "valueKey": "count", "xLabel": "Month", "yLabel": "Emails"}),
        &[],
    );
    add(
        "more",
        "Details",
        json!({"summary": "How were these emails chosen?"}),
        &["more-text"],
    );
    add(
        "more-text",
        "Text",
        json!({"text": "Every email older than 365 days, except starred ones."}),
        &[],
    );
    add(
        "log",
        "Code",
        json!({"language": "log", "code": {"$data": "/log"}}),
        &[],
    );
    add(
        "progress",
        "ProgressBar",
        json!({"label": "Emails reviewed", "value": 40, "max": 120}),
        &[],
    );
    add(
        "settings",
        "Link",
        json!({"href": "https://mail.example.com/settings", "label": "Open the mailbox settings"}),
        &[],
    );
    add(
        "logo",
        "Image",
        json!({"src": "data:image/svg+xml;base64,PHN2Zy8+", "alt": "The team's logo"}),
        &[],
    );
    add(
        "download",
        "DownloadLink",
        json!({"label": "Download the list as CSV", "format": "csv", "data": {"$data": "/emails"}, "columns": ["from", "subject", "date"]}),
        &[],
    );
    let fields = [
        "reason",
        "note",
        "email",
        "count-input",
        "budget",
        "website",
        "date",
        "notify",
        "folder",
        "priority",
        "labels",
        "languages",
        "cc",
        "keep",
        "archive-when",
        "contact",
        "tags",
        "subject-filter",
        "min-size",
        "reply",
        "more-labels",
        "form-rule",
        "confirm",
        "buttons",
    ];
    add(
        "form",
        "Form",
        json!({"title": "Archive old emails", "description": "Nothing is deleted."}),
        &fields,
    );
    add(
        "reason",
        "Input",
        json!({"name": "reason", "label": "Reason", "required": true, "minLength": 2}),
        &[],
    );
    add(
        "note",
        "TextArea",
        json!({"name": "note", "label": "Note", "rows": 3, "maxLength": 500}),
        &[],
    );
    add(
        "email",
        "Input",
        json!({"name": "email", "label": "Work email", "type": "email", "required": true, "help": "We send the receipt here.", "value": "{{/mailbox}}"}),
        &[],
    );
    add(
        "count-input",
        "Input",
        json!({"name": "limit", "label": "At most", "type": "number", "min": 1, "max": 1000, "step": 1}),
        &[],
    );
    add(
        "budget",
        "Input",
        json!({"name": "budget", "label": "Budget", "type": "number", "min": 0, "step": 0.01}),
        &[],
    );
    add(
        "website",
        "Input",
        json!({"name": "website", "label": "Website", "type": "url"}),
        &[],
    );
    add(
        "date",
        "Input",
        json!({"name": "after", "label": "Archive after", "type": "date"}),
        &[],
    );
    add(
        "notify",
        "Checkbox",
        json!({"name": "notify", "label": "Email me when done", "checked": true}),
        &[],
    );
    add(
        "folder",
        "Select",
        json!({"name": "folder", "label": "Archive into", "required": true, "options": {"$data": "/folders"}, "value": "old"}),
        &[],
    );
    add(
        "priority",
        "RadioGroup",
        json!({"name": "priority", "label": "Priority", "options": ["low", "normal", "high"], "value": "normal"}),
        &[],
    );
    add(
        "labels",
        "CheckboxGroup",
        json!({"name": "labels", "label": "Labels", "options": ["work", "family", "travel"]}),
        &[],
    );
    add(
        "languages",
        "Select",
        json!({"name": "languages", "label": "Languages", "multiple": true, "options": ["en", "de", "fr"]}),
        &[],
    );
    add(
        "cc",
        "MultiTextInput",
        json!({"name": "cc", "label": "Also notify", "rows": 2}),
        &[],
    );
    add(
        "keep",
        "Checkbox",
        json!({"name": "keep_starred", "label": "Keep starred emails"}),
        &[],
    );
    add(
        "archive-when",
        "RadioGroup",
        json!({"name": "when", "label": "When", "options": ["now", "tonight"]}),
        &[],
    );
    add(
        "contact",
        "Input",
        json!({"name": "contact", "label": "Contact person"}),
        &[],
    );
    add(
        "tags",
        "MultiTextInput",
        json!({"name": "tags", "label": "Tags", "rows": 1}),
        &[],
    );
    add(
        "subject-filter",
        "Input",
        json!({"name": "subject_filter", "label": "Only subjects containing", "placeholder": "invoice"}),
        &[],
    );
    add(
        "min-size",
        "Input",
        json!({"name": "min_size", "label": "Only larger than (KB)", "type": "number", "min": 0}),
        &[],
    );
    add(
        "reply",
        "TextArea",
        json!({"name": "reply", "label": "Auto-reply text", "rows": 2}),
        &[],
    );
    add(
        "more-labels",
        "CheckboxGroup",
        json!({"name": "extra_labels", "label": "Also label as", "options": ["old", "bulk"]}),
        &[],
    );
    add("form-rule", "Divider", json!({}), &[]);
    add(
        "confirm",
        "Checkbox",
        json!({"name": "confirm", "label": "I understand", "required": true}),
        &[],
    );
    add(
        "buttons",
        "Container",
        json!({"direction": "row", "gap": "md"}),
        &["submit", "cancel"],
    );
    add(
        "submit",
        "Button",
        json!({"label": "Archive", "variant": "danger"}),
        &[],
    );
    add(
        "cancel",
        "Button",
        json!({"label": "Cancel", "variant": "secondary", "kind": "cancel"}),
        &[],
    );
    let tree: PageTree = serde_json::from_value(json!({
        "nodes": nodes,
        "order": ["title", "intro", "warning", "stats", "summary", "emails", "rule", "history",
                  "chart", "more", "log", "progress", "settings", "logo", "download", "form"]
    }))?;
    ensure!(
        tree.nodes.len() == 50,
        "the page has {} nodes, not 50",
        tree.nodes.len()
    );
    Ok(tree)
}

/// Only the bound table, as the renderer sees it.
fn table_page() -> anyhow::Result<PageTree> {
    Ok(serde_json::from_value(json!({
        "nodes": {"emails": {"component": "Table", "props": {
            "caption": "Emails older than a year", "rows": {"$data": "/emails"}, "columns": columns(),
            "pageSize": PAGE
        }}},
        "order": ["emails"]
    }))?)
}

/// `tables` Tables (with `pageSize` when given) bound to one array of `rows` short rows, and the
/// context holding that array.
fn many_tables(tables: usize, rows: usize, page_size: Option<usize>) -> (PageTree, RenderCtx) {
    let mut nodes = serde_json::Map::new();
    for table in 0..tables {
        let mut props = json!({"rows": {"$data": "/rows"}});
        if let Some(size) = page_size {
            props["pageSize"] = json!(size);
        }
        nodes.insert(
            format!("t{table}"),
            json!({"component": "Table", "props": props}),
        );
    }
    let rows: Vec<Value> = (0..rows)
        .map(|row| json!({"id": row, "name": format!("Row {row}")}))
        .collect();
    let tree = PageTree {
        nodes: nodes
            .into_iter()
            .filter_map(|(id, node)| Some((id, serde_json::from_value(node).ok()?)))
            .collect(),
        order: Vec::new(),
    };
    (tree, RenderCtx::new(json!({ "rows": rows })))
}

/// The most rendering a 1 MiB preview body can ask for: 2,000 Tables of 500 rows a page, and as
/// many rows as the rest of the mebibyte holds, checked by serializing the body.
fn worst_case() -> anyhow::Result<(PageTree, RenderCtx)> {
    const BODY: usize = 1024 * 1024;
    let tables = 2_000;
    let (tree, _) = many_tables(tables, 0, Some(500));
    let tree_bytes = serde_json::to_vec(&tree)?.len();
    let row_bytes = serde_json::to_vec(&json!({"id": 99_999, "name": "Row 99999"}))?.len() + 1;
    let rows = (BODY - tree_bytes - 64) / row_bytes;
    let (tree, ctx) = many_tables(tables, rows, Some(500));
    let body = serde_json::to_vec(&json!({"tree": tree, "data": ctx.data}))?;
    ensure!(body.len() <= BODY, "the body is {} bytes", body.len());
    Ok((tree, ctx))
}

fn render(tree: &PageTree, ctx: &RenderCtx) -> String {
    Owner::new().with(|| render_tree(tree, ctx).to_html())
}

/// The 29 gallery examples as the gallery builds them: one single-node tree and context each.
fn gallery_examples(catalog: &Catalog) -> Vec<(PageTree, RenderCtx)> {
    catalog
        .specs()
        .iter()
        .map(|spec| {
            let (props, data) = spec.example();
            let node_id = format!("gallery-{}", spec.name.to_lowercase());
            let tree = PageTree {
                nodes: BTreeMap::from([(
                    node_id.clone(),
                    Node {
                        component: spec.name.clone(),
                        props,
                        children: Vec::new(),
                    },
                )]),
                order: vec![node_id],
            };
            let mut ctx = RenderCtx::new(data);
            ctx.catalog = catalog.clone();
            ctx.download_base = Some("/components/download".to_owned());
            (tree, ctx)
        })
        .collect()
}

/// The 29 examples rendered, without the gallery's headings, descriptions and tool definitions.
fn render_examples(examples: &[(PageTree, RenderCtx)]) -> String {
    Owner::new().with(|| {
        let mut out = String::new();
        for (tree, ctx) in examples {
            out.push_str(&render_tree(tree, ctx).to_html());
        }
        out
    })
}

/// The examples baseline: each example's props resolved against its data, and every text in
/// them written escaped into a section by hand.
fn examples_by_hand(examples: &[(PageTree, RenderCtx)]) -> String {
    fn texts(out: &mut String, value: &Value) {
        match value {
            Value::Null => {}
            Value::String(text) => {
                out.push_str("<span>");
                escape_into(out, text);
                out.push_str("</span>");
            }
            Value::Bool(_) | Value::Number(_) => {
                out.push_str("<span>");
                escape_into(out, &value.to_string());
                out.push_str("</span>");
            }
            Value::Array(items) => items.iter().for_each(|item| texts(out, item)),
            Value::Object(map) => map.values().for_each(|item| texts(out, item)),
        }
    }
    let mut out = String::with_capacity(64 * 1024);
    for (tree, ctx) in examples {
        for (id, node) in &tree.nodes {
            let _ = write!(out, "<section id=\"t-{id}\" class=\"space-y-6\">");
            texts(&mut out, &resolve_props(&node.props, &ctx.data));
            out.push_str("</section>");
        }
    }
    out
}

fn render_gallery(catalog: &Catalog) -> String {
    let catalog = catalog.clone();
    Owner::new().with(|| view! { <GalleryPage catalog/> }.to_html())
}

/// Writes `text` into `out` escaped for HTML text and double-quoted attributes.
fn escape_into(out: &mut String, text: &str) {
    for character in text.chars() {
        match character {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
}

fn cell_text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

/// The baseline: the same table (caption, headers, the first 500 rows, the same classes) written
/// by hand.
fn table_by_hand(data: &Value) -> String {
    const CELL: &str = "px-3 py-2 text-sm text-slate-800 dark:text-slate-200";
    const HEAD: &str =
        "px-3 py-2 text-left text-sm font-semibold text-slate-900 dark:text-slate-100";
    let rows = data
        .pointer("/emails")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let mut out = String::with_capacity(rows.len() * 600);
    out.push_str("<div class=\"space-y-2\"><div tabindex=\"0\" role=\"region\" aria-label=\"");
    escape_into(&mut out, "Emails older than a year");
    out.push_str(
        "\" class=\"overflow-x-auto rounded-lg border\"><table class=\"min-w-full\"><caption>",
    );
    escape_into(&mut out, "Emails older than a year");
    out.push_str("</caption><thead><tr>");
    for (key, label) in COLUMNS {
        let _ = write!(
            out,
            "<th scope=\"col\" class=\"{HEAD}\"><a href=\"?dir=asc&amp;sort=emails.{key}\">"
        );
        escape_into(&mut out, label);
        out.push_str("<span class=\"sr-only\">, sort ascending</span></a></th>");
    }
    out.push_str("</tr></thead><tbody>");
    for row in rows.iter().take(PAGE) {
        out.push_str("<tr class=\"border-t border-slate-200 dark:border-slate-700\">");
        for (key, _) in COLUMNS {
            let _ = write!(out, "<td class=\"{CELL}\">");
            escape_into(&mut out, &cell_text(row.get(key)));
            out.push_str("</td>");
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div></div>");
    out
}

/// The gallery baseline: each example's name, description, resolved props (as text) and pretty
/// tool definition, escaped into a section by hand.
fn gallery_by_hand(catalog: &Catalog) -> String {
    let tools = catalog.tool_definitions();
    let mut out = String::with_capacity(256 * 1024);
    out.push_str("<div class=\"space-y-6\"><h1>Components</h1>");
    for (spec, tool) in catalog.specs().iter().zip(tools) {
        let (props, data) = spec.example();
        let resolved = resolve_props(&props, &data);
        out.push_str("<section data-testid=\"gallery-entry\"><h2>");
        escape_into(&mut out, &spec.name);
        out.push_str("</h2><p>");
        escape_into(&mut out, &spec.description);
        out.push_str("</p><div>");
        escape_into(&mut out, &resolved.to_string());
        out.push_str("</div><details><summary>Tool definition (JSON)</summary><pre><code>");
        escape_into(
            &mut out,
            &serde_json::to_string_pretty(&tool).unwrap_or_default(),
        );
        out.push_str("</code></pre></details></section>");
    }
    out.push_str("</div>");
    out
}

fn main() -> anyhow::Result<()> {
    let data = data();
    let page = fifty_node_page()?;
    let table = table_page()?;
    let ctx = RenderCtx::new(data.clone());
    let catalog = Catalog::defaults();
    ensure!(
        catalog.specs().len() == 31,
        "{} components",
        catalog.specs().len()
    );

    // Check what is timed before timing it.
    let page_html = render(&page, &ctx);
    ensure!(
        !page_html.contains("node-error"),
        "a node of the page did not render"
    );
    ensure!(
        page_html.contains("issue 500<") && !page_html.contains("issue 501<"),
        "the page shows the table's first page"
    );
    ensure!(
        page_html.contains("Q&amp;A &lt;weekly&gt;"),
        "cells are escaped"
    );
    let table_html = render(&table, &ctx);
    ensure!(
        table_html.matches("<tr").count() == PAGE + 1,
        "the table has {} rows",
        table_html.matches("<tr").count()
    );
    let by_hand = table_by_hand(&data);
    ensure!(
        by_hand.matches("<tr").count() == PAGE + 1,
        "the baseline table"
    );
    let (attack, attack_ctx) = many_tables(20, 2_000, None);
    let attack_html = render(&attack, &attack_ctx);
    let worst = (std::env::var_os("RENDER_BENCH_SKIP_WORST").is_none())
        .then(worst_case)
        .transpose()?;
    let worst_html = worst.as_ref().map(|(tree, ctx)| render(tree, ctx));
    eprintln!(
        "Hostile trees: 20 tables x 2,000 rows: {} bytes of HTML, {} rows written; \
         1 MiB worst case: {}",
        attack_html.len(),
        attack_html.matches("<tr class=\"border-t").count(),
        worst_html
            .as_ref()
            .map_or("skipped".to_owned(), |html| format!(
                "{} bytes of HTML, {} rows written",
                html.len(),
                html.matches("<tr class=\"border-t").count()
            ))
    );
    let gallery_html = render_gallery(&catalog);
    ensure!(
        gallery_html
            .matches("data-testid=\"gallery-entry\"")
            .count()
            == 31,
        "the gallery shows every component"
    );
    let gallery_baseline = gallery_by_hand(&catalog);
    let examples = gallery_examples(&catalog);
    let examples_html = render_examples(&examples);
    ensure!(
        !examples_html.contains("node-error"),
        "an example did not render"
    );
    let examples_baseline = examples_by_hand(&examples);
    eprintln!(
        "HTML sizes: 50-node page {} bytes; table alone {} bytes; table by hand {} bytes; \
         gallery {} bytes; gallery by hand {} bytes; 29 examples {} bytes; examples by hand {} bytes",
        page_html.len(),
        table_html.len(),
        by_hand.len(),
        gallery_html.len(),
        gallery_baseline.len(),
        examples_html.len(),
        examples_baseline.len()
    );

    let mut criterion = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(8))
        .configure_from_args();
    let mut group = criterion.benchmark_group("render");
    group.bench_function("page, 50 nodes, 1,000-row bound table", |bencher| {
        bencher.iter(|| render(black_box(&page), black_box(&ctx)));
    });
    group.bench_function("table alone, 1,000 rows, renderer", |bencher| {
        bencher.iter(|| render(black_box(&table), black_box(&ctx)));
    });
    group.bench_function("baseline: table by hand, String writer", |bencher| {
        bencher.iter(|| table_by_hand(black_box(&data)));
    });
    group.bench_function("gallery, 29 examples and tool definitions", |bencher| {
        bencher.iter(|| render_gallery(black_box(&catalog)));
    });
    group.bench_function("baseline: gallery text by hand, String writer", |bencher| {
        bencher.iter(|| gallery_by_hand(black_box(&catalog)));
    });
    group.bench_function("gallery examples alone, 28 trees, renderer", |bencher| {
        bencher.iter(|| render_examples(black_box(&examples)));
    });
    group.bench_function(
        "baseline: example texts by hand, String writer",
        |bencher| {
            bencher.iter(|| examples_by_hand(black_box(&examples)));
        },
    );
    group.bench_function(
        "hostile: 20 tables bound to one 2,000-row array",
        |bencher| {
            bencher.iter(|| render(black_box(&attack), black_box(&attack_ctx)));
        },
    );
    if let Some((tree, ctx)) = &worst {
        group.bench_function("hostile: the worst 1 MiB preview body", |bencher| {
            bencher.iter(|| render(black_box(tree), black_box(ctx)));
        });
    }
    group.finish();
    criterion.final_summary();

    let budget = Duration::from_secs(6);
    let results = [
        time_calls(
            "page, 50 nodes, 1,000-row table",
            budget,
            200,
            5_000,
            || render(&page, &ctx),
        ),
        time_calls("table alone, renderer", budget, 200, 5_000, || {
            render(&table, &ctx)
        }),
        time_calls("baseline: table by hand", budget, 200, 20_000, || {
            table_by_hand(&data)
        }),
        time_calls("gallery, 29 examples", budget, 200, 5_000, || {
            render_gallery(&catalog)
        }),
        time_calls("baseline: gallery by hand", budget, 200, 20_000, || {
            gallery_by_hand(&catalog)
        }),
        time_calls(
            "gallery examples alone, renderer",
            budget,
            200,
            20_000,
            || render_examples(&examples),
        ),
        time_calls(
            "baseline: example texts by hand",
            budget,
            200,
            50_000,
            || examples_by_hand(&examples),
        ),
    ];
    report("render", &results);
    Ok(())
}
