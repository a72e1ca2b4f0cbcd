//! Decoding and validating a 30-field form submission (`tessera::forms::decode_and_validate`), as
//! a browser sends it, beside baselines measured in the same run: only parsing the body with
//! `form_urlencoded::parse` into a `Vec`, and reading the same answers as JSON with `serde_json`.
//!
//! Run with `cargo bench --bench forms`; criterion reports the mean and the median of batched
//! samples, and a second pass times single calls for the median and p99. Figures go in
//! BENCHMARKS.md.

#[path = "support/timing.rs"]
mod timing;

use std::hint::black_box;
use std::time::Duration;

use anyhow::{ensure, Context as _};
use criterion::Criterion;
use serde_json::{json, Map, Value};
use tessera::forms::{decode_and_validate, FormSchema};
use timing::{report, time_calls};

/// Thirty fields of every kind and rule of the form subset, loaded as a data workflow's schema.
fn schema_json() -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut add = |name: &str, schema: Value, is_required: bool| {
        properties.insert(name.to_owned(), schema);
        if is_required {
            required.push(name.to_owned());
        }
    };
    add(
        "full_name",
        json!({"type": "string", "minLength": 2, "maxLength": 80}),
        true,
    );
    add("email", json!({"type": "string", "format": "email"}), true);
    add(
        "backup_email",
        json!({"type": "string", "format": "email"}),
        false,
    );
    add("website", json!({"type": "string", "format": "url"}), false);
    add("profile", json!({"type": "string", "format": "uri"}), false);
    add(
        "start_date",
        json!({"type": "string", "format": "date"}),
        true,
    );
    add(
        "reference",
        json!({"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"}),
        true,
    );
    add("note", json!({"type": "string", "maxLength": 2000}), false);
    add("city", json!({"type": "string"}), false);
    add(
        "passphrase",
        json!({"type": "string", "minLength": 8}),
        false,
    );
    add(
        "age",
        json!({"type": "integer", "minimum": 18, "maximum": 120}),
        true,
    );
    add(
        "seats",
        json!({"type": "integer", "minimum": 1, "maximum": 50}),
        true,
    );
    add(
        "year",
        json!({"type": "integer", "minimum": 1900, "maximum": 2100}),
        false,
    );
    add("limit", json!({"type": "integer"}), false);
    add("budget", json!({"type": "number", "minimum": 0}), true);
    add(
        "ratio",
        json!({"type": "number", "minimum": 0, "maximum": 1}),
        false,
    );
    add("temperature", json!({"type": "number"}), false);
    add("subscribe", json!({"type": "boolean"}), false);
    add("terms", json!({"type": "boolean"}), false);
    add("starred_only", json!({"type": "boolean"}), false);
    add(
        "plan",
        json!({"type": "string", "enum": ["free", "pro", "team"]}),
        true,
    );
    add(
        "country",
        json!({"type": "string", "enum": ["de", "fr", "it", "nl", "pl", "es"]}),
        true,
    );
    add(
        "priority",
        json!({"type": "string", "enum": ["low", "normal", "high"]}),
        false,
    );
    add(
        "size",
        json!({"type": "string", "enum": ["s", "m", "l", "xl"]}),
        false,
    );
    add(
        "topics",
        json!({"type": "array", "items": {"type": "string", "enum": ["billing", "product", "security"]}, "minItems": 1}),
        false,
    );
    add(
        "languages",
        json!({"type": "array", "items": {"type": "string", "enum": ["en", "de", "fr"]}}),
        false,
    );
    add(
        "labels",
        json!({"type": "array", "items": {"type": "string", "enum": ["work", "family", "travel"]}, "uniqueItems": true}),
        false,
    );
    add(
        "aliases",
        json!({"type": "array", "items": {"type": "string"}}),
        false,
    );
    add(
        "cc",
        json!({"type": "array", "items": {"type": "string", "format": "email"}, "maxItems": 10}),
        false,
    );
    add(
        "invoices",
        json!({"type": "array", "items": {"type": "string"}, "minItems": 1, "uniqueItems": true}),
        true,
    );
    json!({"type": "object", "properties": properties, "required": required})
}

/// The answers, as a browser encodes them: percent-encoding and `+`, CRLF in the textarea,
/// repeated keys, empty rows, unicode, the hidden CSRF field and the button's `_action`, and the
/// unticked checkbox (`terms`) absent.
fn body() -> Vec<u8> {
    let pairs: &[(&str, &str)] = &[
        ("_csrf", "3f1c9a0b7d2e4c6f8a1b3d5e7f9a0c2e"),
        ("full_name", "Zoë Ada Lovelace-Byron"),
        ("email", "ada@example.com"),
        ("backup_email", ""),
        ("website", "https://ada.example.org/notes?x=1&y=2"),
        ("profile", "https://example.com/u/ada"),
        ("start_date", "2025-03-14"),
        ("reference", "ABC-1234"),
        (
            "note",
            "First line.\r\nSecond line, with ümlauts & <angle brackets>.\r\nThird.",
        ),
        ("city", "Zürich"),
        ("passphrase", "correct horse battery staple"),
        ("age", "36"),
        ("seats", "12"),
        ("year", "1968"),
        ("limit", ""),
        ("budget", "1250.50"),
        ("ratio", "0.75"),
        ("temperature", "-3.5"),
        ("subscribe", "true"),
        ("starred_only", "true"),
        ("plan", "pro"),
        ("country", "fr"),
        ("priority", "high"),
        ("size", "m"),
        ("topics", "billing"),
        ("topics", "security"),
        ("languages", "en"),
        ("languages", "fr"),
        ("labels", "work"),
        ("aliases", "Countess of Lovelace"),
        ("aliases", "A. A. L."),
        ("aliases", ""),
        ("cc", "grace@example.com"),
        ("cc", "charles@example.com"),
        ("invoices", "inv-1"),
        ("invoices", "inv-3"),
        ("invoices", "inv-7"),
        ("_action", "submit"),
    ];
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
        .into_bytes()
}

/// The same body with five wrong answers, for the path that collects one error per field.
fn wrong_body() -> Vec<u8> {
    let text = String::from_utf8_lossy(&body())
        .replace("email=ada%40example.com", "email=ada.example.com")
        .replace("age=36", "age=12")
        .replace("reference=ABC-1234", "reference=abc")
        .replace("plan=pro", "plan=gold")
        .replace("start_date=2025-03-14", "start_date=2025-02-30");
    text.into_bytes()
}

/// Baseline: the body split into owned key/value pairs and nothing else.
fn parse_only(body: &[u8]) -> Vec<(String, String)> {
    form_urlencoded::parse(body)
        .map(|(key, value)| (key.into_owned(), value.into_owned()))
        .collect()
}

fn main() -> anyhow::Result<()> {
    let schema = FormSchema::from_json_schema(&schema_json()).context("the bench schema")?;
    ensure!(schema.fields.len() == 30, "{} fields", schema.fields.len());
    let body = body();
    let wrong = wrong_body();

    // Check what is timed before timing it.
    let decoded = decode_and_validate(&schema, &body)
        .map_err(|errors| anyhow::anyhow!("the valid body was refused: {errors:?}"))?;
    ensure!(decoded["age"] == json!(36), "{decoded}");
    ensure!(decoded["terms"] == json!(false), "{decoded}");
    ensure!(
        decoded["aliases"] == json!(["Countess of Lovelace", "A. A. L."]),
        "{decoded}"
    );
    let errors = decode_and_validate(&schema, &wrong)
        .err()
        .context("the wrong body was accepted")?;
    ensure!(errors.len() == 5, "{errors:?}");
    let as_json = serde_json::to_string(&decoded)?;
    eprintln!(
        "form body {} bytes, {} pairs; the same answers as JSON {} bytes",
        body.len(),
        parse_only(&body).len(),
        as_json.len()
    );

    let mut criterion = Criterion::default()
        .sample_size(50)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(5))
        .configure_from_args();
    let mut group = criterion.benchmark_group("forms");
    group.bench_function("decode_and_validate, 30 fields, valid", |bencher| {
        bencher.iter(|| decode_and_validate(black_box(&schema), black_box(&body)));
    });
    group.bench_function("decode_and_validate, 30 fields, 5 wrong", |bencher| {
        bencher.iter(|| decode_and_validate(black_box(&schema), black_box(&wrong)));
    });
    group.bench_function("baseline: form_urlencoded::parse into a Vec", |bencher| {
        bencher.iter(|| parse_only(black_box(&body)));
    });
    group.bench_function(
        "baseline: serde_json::from_str of the same answers",
        |bencher| {
            bencher.iter(|| serde_json::from_str::<Value>(black_box(&as_json)));
        },
    );
    group.finish();
    criterion.final_summary();

    let budget = Duration::from_secs(3);
    let results = [
        time_calls("decode_and_validate, valid", budget, 1_000, 200_000, || {
            decode_and_validate(&schema, &body)
        }),
        time_calls(
            "decode_and_validate, 5 wrong",
            budget,
            1_000,
            200_000,
            || decode_and_validate(&schema, &wrong),
        ),
        time_calls("baseline: parse into a Vec", budget, 1_000, 200_000, || {
            parse_only(&body)
        }),
        time_calls(
            "baseline: serde_json::from_str",
            budget,
            1_000,
            200_000,
            || serde_json::from_str::<Value>(&as_json),
        ),
    ];
    report("forms", &results);
    Ok(())
}
