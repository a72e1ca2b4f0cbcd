//! Decoding and validating a list of 200 records × 6 fields (`line_items[i].field`, issue 26)
//! beside a flat form of the same 1,200 fields, and beside only parsing the body, in one run.
//!
//! Run with `cargo bench --bench record_decode`; criterion reports the mean and the median of
//! batched samples, and a second pass times single calls for the median and p99. The goal is the
//! list within 2× the flat form. Figures go in BENCHMARKS.md.

#[path = "support/timing.rs"]
mod timing;

use std::hint::black_box;
use std::time::Duration;

use anyhow::{ensure, Context as _};
use criterion::Criterion;
use serde_json::{json, Map, Value};
use tessera::forms::{decode_and_validate, FormSchema};
use timing::{report, time_calls};

const RECORDS: usize = 200;

/// The six fields of one line item, with the rules an invoice correction has.
fn record_fields() -> Vec<(&'static str, Value)> {
    vec![
        (
            "sku",
            json!({"type": "string", "pattern": "^[A-Z]-[0-9]+$"}),
        ),
        ("description", json!({"type": "string", "maxLength": 80})),
        ("quantity", json!({"type": "integer", "minimum": 1})),
        (
            "unit_price",
            json!({"type": "number", "minimum": 0, "multipleOf": 0.01}),
        ),
        (
            "unit",
            json!({"type": "string", "enum": ["piece", "box", "pallet"]}),
        ),
        ("delivered_on", json!({"type": "string", "format": "date"})),
    ]
}

fn value_of(field: &str, index: usize) -> String {
    match field {
        "sku" => format!("A-{index}"),
        "description" => format!("Paper, A4, box {index}"),
        "quantity" => (index % 9 + 1).to_string(),
        "unit_price" => format!("{}.{:02}", index % 50, index % 100),
        "unit" => ["piece", "box", "pallet"][index % 3].to_owned(),
        _ => format!("2026-{:02}-{:02}", index % 12 + 1, index % 28 + 1),
    }
}

/// The list: `line_items`, an array of 200 six-field records.
fn list_schema() -> Value {
    let properties: Map<String, Value> = record_fields()
        .into_iter()
        .map(|(name, schema)| (name.to_owned(), schema))
        .collect();
    let names: Vec<&str> = record_fields().into_iter().map(|(name, _)| name).collect();
    json!({"type": "object", "properties": {"line_items": {"type": "array", "maxItems": 500,
        "items": {"type": "object", "properties": properties, "required": names}}},
        "required": ["line_items"]})
}

/// The same 1,200 fields as a flat form: `sku_0` … `delivered_on_199`.
fn flat_schema() -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for index in 0..RECORDS {
        for (name, schema) in record_fields() {
            let key = format!("{name}_{index}");
            properties.insert(key.clone(), schema);
            required.push(key);
        }
    }
    json!({"type": "object", "properties": properties, "required": required})
}

fn list_body() -> Vec<u8> {
    let mut body = form_urlencoded::Serializer::new(String::new());
    body.append_pair("_csrf", "token");
    body.append_pair("_count.line_items", &RECORDS.to_string());
    for index in 0..RECORDS {
        for (name, _) in record_fields() {
            body.append_pair(
                &format!("line_items[{index}].{name}"),
                &value_of(name, index),
            );
        }
    }
    body.finish().into_bytes()
}

fn flat_body() -> Vec<u8> {
    let mut body = form_urlencoded::Serializer::new(String::new());
    body.append_pair("_csrf", "token");
    for index in 0..RECORDS {
        for (name, _) in record_fields() {
            body.append_pair(&format!("{name}_{index}"), &value_of(name, index));
        }
    }
    body.finish().into_bytes()
}

/// Baseline: the body split into owned key/value pairs and nothing else.
fn parse_only(body: &[u8]) -> Vec<(String, String)> {
    form_urlencoded::parse(body)
        .map(|(key, value)| (key.into_owned(), value.into_owned()))
        .collect()
}

fn main() -> anyhow::Result<()> {
    let list = FormSchema::from_json_schema(&list_schema()).context("the list schema")?;
    let flat = FormSchema::from_json_schema(&flat_schema()).context("the flat schema")?;
    ensure!(
        flat.fields.len() == RECORDS * 6,
        "{} fields",
        flat.fields.len()
    );
    let (list_body, flat_body) = (list_body(), flat_body());

    // Check what is timed before timing it.
    let decoded = decode_and_validate(&list, &list_body)
        .map_err(|errors| anyhow::anyhow!("the list body was refused: {errors:?}"))?;
    let records = decoded["line_items"].as_array().context("records")?;
    ensure!(records.len() == RECORDS, "{} records", records.len());
    ensure!(records[199]["sku"] == json!("A-199"), "{}", records[199]);
    let decoded = decode_and_validate(&flat, &flat_body)
        .map_err(|errors| anyhow::anyhow!("the flat body was refused: {errors:?}"))?;
    ensure!(
        decoded.as_object().map(Map::len) == Some(RECORDS * 6),
        "flat"
    );
    eprintln!(
        "list body {} bytes, flat body {} bytes",
        list_body.len(),
        flat_body.len()
    );

    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(5))
        .configure_from_args();
    let mut group = criterion.benchmark_group("record_decode");
    group.bench_function("decode_and_validate, 200 records x 6 fields", |bencher| {
        bencher.iter(|| decode_and_validate(black_box(&list), black_box(&list_body)));
    });
    group.bench_function("decode_and_validate, flat 1,200 fields", |bencher| {
        bencher.iter(|| decode_and_validate(black_box(&flat), black_box(&flat_body)));
    });
    group.bench_function(
        "baseline: form_urlencoded::parse of the list body",
        |bencher| {
            bencher.iter(|| parse_only(black_box(&list_body)));
        },
    );
    group.finish();
    criterion.final_summary();

    let budget = Duration::from_secs(3);
    let results = [
        time_calls("200 records x 6 fields", budget, 100, 20_000, || {
            decode_and_validate(&list, &list_body)
        }),
        time_calls("flat 1,200 fields", budget, 100, 20_000, || {
            decode_and_validate(&flat, &flat_body)
        }),
        time_calls("baseline: parse the list body", budget, 100, 20_000, || {
            parse_only(&list_body)
        }),
    ];
    report("record_decode", &results);
    Ok(())
}
