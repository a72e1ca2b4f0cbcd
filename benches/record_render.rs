//! Rendering lists of records (issue 26): a `RecordList` of 200 records × 6 fields (1,200
//! controls, all on one page) beside its baseline measured in the same run, the flat form of the
//! same 1,200 fields (one Input each, named `f0` … `f1199`), both before and after a refused
//! submission (every value re-filled, one error). Then the page of 500 bound records a person
//! corrects: 50 records a page with the other 450 carried as hidden inputs, its render time and
//! bytes.
//!
//! Run with `cargo bench --bench record_render`; criterion reports the mean and median of batched
//! samples, and a second pass times single calls for the median and p99. Figures go in
//! BENCHMARKS.md ("Lists of records").

#[path = "support/timing.rs"]
mod timing;

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Duration;

use anyhow::ensure;
use criterion::Criterion;
use leptos::prelude::*;
use serde_json::{json, Value};
use tessera_app::{
    render::{render_tree, RenderCtx},
    tree::PageTree,
};
use timing::{report, time_calls};

const RECORDS: usize = 200;
const BIG_LIST: usize = 500;

/// The six fields of a record: member, label, input type.
const FIELDS: [(&str, &str, &str); 6] = [
    ("sku", "SKU", "text"),
    ("description", "Description", "text"),
    ("quantity", "Quantity", "number"),
    ("unit_price", "Unit price", "number"),
    ("delivered_on", "Delivered on", "date"),
    ("contact", "Contact", "email"),
];

fn columns() -> Value {
    Value::Array(
        FIELDS
            .iter()
            .map(|(field, label, input)| {
                json!({"field": field, "label": label, "input": input, "required": true})
            })
            .collect(),
    )
}

fn row(index: usize) -> Value {
    json!({
        "sku": format!("SKU-{index:04}"),
        "description": format!("Item {index} <boxed> & wrapped"),
        "quantity": index % 17 + 1,
        "unit_price": 4.5 + (index % 9) as f64,
        "delivered_on": "2026-11-28",
        "contact": format!("buyer{index}@example.com")
    })
}

/// The 200-record list, with no paging (every control on the page, like the flat form).
fn record_page() -> anyhow::Result<PageTree> {
    Ok(serde_json::from_value(json!({
        "nodes": {
            "f": {"component": "Form", "children": ["r", "b"]},
            "r": {"component": "RecordList", "props": {
                "name": "line_items", "label": "Line items", "item_label": "Line",
                "columns": columns(), "page_size": 500, "min_items": RECORDS, "max_items": 1000
            }},
            "b": {"component": "Button", "props": {"label": "Send"}}
        },
        "order": ["f"]
    }))?)
}

/// The flat form of the same 1,200 fields.
fn flat_page() -> anyhow::Result<PageTree> {
    let mut nodes = serde_json::Map::new();
    let mut children = Vec::new();
    for index in 0..RECORDS * FIELDS.len() {
        let (_, label, input) = FIELDS[index % FIELDS.len()];
        let id = format!("c{index}");
        nodes.insert(
            id.clone(),
            json!({"component": "Input", "props": {
                "name": format!("f{index}"), "label": format!("{label} {}", index / FIELDS.len() + 1),
                "type": input, "required": true
            }}),
        );
        children.push(Value::String(id));
    }
    children.push(json!("b"));
    nodes.insert(
        "f".to_owned(),
        json!({"component": "Form", "children": children}),
    );
    nodes.insert(
        "b".to_owned(),
        json!({"component": "Button", "props": {"label": "Send"}}),
    );
    Ok(serde_json::from_value(
        json!({"nodes": nodes, "order": ["f"]}),
    )?)
}

/// The person's values after a refused submission, for the list and for the flat form.
fn refused(records: bool) -> RenderCtx {
    let mut ctx = RenderCtx::new(json!({}));
    let mut values: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for record in 0..RECORDS {
        let data = row(record);
        for (position, (field, _, _)) in FIELDS.iter().enumerate() {
            let text = match &data[field] {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            let key = if records {
                format!("line_items[{record}].{field}")
            } else {
                format!("f{}", record * FIELDS.len() + position)
            };
            values.insert(key, vec![text]);
        }
    }
    if records {
        values.insert("_count.line_items".to_owned(), vec![RECORDS.to_string()]);
        ctx.form.errors.insert(
            "line_items[7].quantity".to_owned(),
            "Quantity on line 8 must be at least 1".to_owned(),
        );
    } else {
        ctx.form
            .errors
            .insert("f44".to_owned(), "Quantity must be at least 1".to_owned());
    }
    ctx.form.values = values;
    ctx
}

/// 500 bound records, 50 a page, three read-only columns.
fn big_page() -> anyhow::Result<(PageTree, RenderCtx)> {
    let tree = serde_json::from_value(json!({
        "nodes": {
            "f": {"component": "Form", "children": ["r", "b"]},
            "r": {"component": "RecordList", "props": {
                "name": "line_items", "label": "Line items", "item_label": "Line",
                "rows": {"$data": "/items"}, "key": "sku",
                "columns": [
                    {"field": "sku", "label": "SKU", "read_only": true},
                    {"field": "description", "label": "Description", "read_only": true},
                    {"field": "quantity", "label": "Quantity", "input": "number", "required": true},
                    {"field": "unit_price", "label": "Unit price", "input": "number", "step": 0.01},
                    {"field": "delivered_on", "label": "Delivered on", "input": "date"},
                    {"field": "contact", "label": "Contact", "input": "email", "read_only": true}
                ],
                "page_size": 50
            }},
            "b": {"component": "Button", "props": {"label": "Send corrections"}}
        },
        "order": ["f"]
    }))?;
    let items: Vec<Value> = (0..BIG_LIST).map(row).collect();
    Ok((tree, RenderCtx::new(json!({ "items": items }))))
}

fn render(tree: &PageTree, ctx: &RenderCtx) -> String {
    Owner::new().with(|| render_tree(tree, ctx).to_html())
}

fn main() -> anyhow::Result<()> {
    let records = record_page()?;
    let flat = flat_page()?;
    let pristine = RenderCtx::new(json!({}));
    let refused_records = refused(true);
    let refused_flat = refused(false);
    let (big, big_ctx) = big_page()?;

    // Check what is timed before timing it.
    let records_html = render(&records, &refused_records);
    ensure!(!records_html.contains("node-error"), "the list rendered");
    ensure!(
        records_html.contains(r#"name="line_items[199].contact" value="buyer199@example.com""#),
        "every record is re-filled"
    );
    ensure!(
        records_html.contains("Quantity on line 8 must be at least 1"),
        "the error is shown"
    );
    let flat_html = render(&flat, &refused_flat);
    ensure!(
        flat_html.matches("<input id=").count() == RECORDS * FIELDS.len(),
        "the flat form has every field"
    );
    let big_html = render(&big, &big_ctx);
    ensure!(
        big_html
            .matches(r#"type="number" name="line_items["#)
            .count()
            == 100,
        "one page of 50 records shows two number controls each"
    );
    ensure!(
        big_html.contains(r#"<input type="hidden" name="line_items[499].quantity" value="7">"#),
        "records off the page travel hidden"
    );
    // What a browser sends back for the 500-record page: every field of every record, the count,
    // the CSRF token and the action, against the server's 1 MiB body limit.
    let mut encoded = form_urlencoded::Serializer::new(String::new());
    encoded.append_pair("_csrf", &"x".repeat(64));
    encoded.append_pair("_count.line_items", &BIG_LIST.to_string());
    for index in 0..BIG_LIST {
        let data = row(index);
        for (field, _, _) in FIELDS {
            let text = match &data[field] {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            encoded.append_pair(&format!("line_items[{index}].{field}"), &text);
        }
    }
    encoded.append_pair("_action", "submit");
    let body = encoded.finish();
    ensure!(body.len() < 1024 * 1024, "the body fits the default limit");
    eprintln!(
        "The 500-record page's submission: {} bytes ({:.0} % of the 1 MiB TESSERA_BODY_LIMIT)",
        body.len(),
        body.len() as f64 * 100.0 / (1024.0 * 1024.0)
    );
    eprintln!(
        "HTML sizes: 200 x 6 list {} bytes (pristine {}); flat 1,200 fields {} bytes (pristine {}); \
         500-record page (50 shown) {} bytes",
        records_html.len(),
        render(&records, &pristine).len(),
        flat_html.len(),
        render(&flat, &pristine).len(),
        big_html.len()
    );

    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(6))
        .configure_from_args();
    let mut group = criterion.benchmark_group("record_render");
    group.bench_function("list, 200 records x 6 fields, pristine", |bencher| {
        bencher.iter(|| render(black_box(&records), black_box(&pristine)));
    });
    group.bench_function("baseline: flat form, 1,200 fields, pristine", |bencher| {
        bencher.iter(|| render(black_box(&flat), black_box(&pristine)));
    });
    group.bench_function("list, 200 records x 6 fields, after a 422", |bencher| {
        bencher.iter(|| render(black_box(&records), black_box(&refused_records)));
    });
    group.bench_function(
        "baseline: flat form, 1,200 fields, after a 422",
        |bencher| {
            bencher.iter(|| render(black_box(&flat), black_box(&refused_flat)));
        },
    );
    group.bench_function("500 bound records, 50 a page, 450 carried", |bencher| {
        bencher.iter(|| render(black_box(&big), black_box(&big_ctx)));
    });
    group.finish();
    criterion.final_summary();

    let budget = Duration::from_secs(5);
    let results = [
        time_calls("list 200 x 6, after a 422", budget, 50, 2_000, || {
            render(&records, &refused_records)
        }),
        time_calls(
            "baseline: flat 1,200, after a 422",
            budget,
            50,
            2_000,
            || render(&flat, &refused_flat),
        ),
        time_calls("500 bound records, one page", budget, 50, 2_000, || {
            render(&big, &big_ctx)
        }),
    ];
    report("record_render", &results);
    Ok(())
}
