//! Heuristic page generation: the whole agent loop (heuristic model, tools, `ValidateForm`, events
//! and the record on a fresh SQLite store) for a 30-field schema over 100, 10,000 and 100,000
//! data rows, the cache-hit path for the same request, and two baselines on the same data at each
//! size (serializing the rows, building the data summary). Also prints the size of the prompt a model would be sent for 10 and
//! for 10,000 rows, and the bytes of each tool definition. Run with
//! `cargo bench --bench heuristic`; figures go in BENCHMARKS.md.

#[path = "support/scratch.rs"]
mod scratch;

use std::time::Duration;

use criterion::{black_box, BatchSize, Criterion};
use serde_json::{json, Value};
use tessera::{
    agent::{
        generate_page, prompt::system_prompt, prompt::user_prompt, summary::DataSummary,
        tools::tool_definitions, CachePolicy, GenerationInput, HeuristicModel,
    },
    forms::{FieldKind, FormField, FormSchema, StringFormat},
};
use tessera_app::catalog::Catalog;

use scratch::Scratch;

fn rows(count: usize) -> Value {
    let emails: Vec<Value> = (1..=count)
        .map(|index| {
            json!({"id": format!("m{index}"), "from": format!("sender{}@example.com", index % 97),
                   "subject": format!("Weekly news, issue {index}"), "date": "2023-01-04",
                   "size_kb": index % 500, "unread": index % 3 == 0})
        })
        .collect();
    json!({"mailbox": "ada@example.com", "unread": 1204, "emails": emails})
}

/// Thirty fields covering every field kind, one of them a selectable table over the rows.
fn thirty_fields() -> FormSchema {
    let mut fields = vec![FormField::new("archive_ids", FieldKind::string_array())
        .with_description("ids of the emails to archive")];
    for index in 1..30 {
        let name = format!("field_{index}");
        let field = match index % 9 {
            0 => FormField::new(name, FieldKind::string()),
            1 => FormField::new(format!("{name}_note"), FieldKind::string()).optional(),
            2 => FormField::new(
                name,
                FieldKind::String {
                    format: Some(StringFormat::Email),
                    min_length: None,
                    max_length: None,
                    pattern: None,
                },
            ),
            3 => FormField::new(name, FieldKind::integer()).optional(),
            4 => FormField::new(name, FieldKind::number()),
            5 => FormField::new(name, FieldKind::Boolean),
            6 => FormField::new(name, FieldKind::enumeration(["low", "normal", "high"])),
            7 => FormField::new(
                name,
                FieldKind::enumeration(["a", "b", "c", "d", "e", "f", "g", "h"]),
            ),
            _ => FormField::new(name, FieldKind::enum_array(["work", "family", "travel"])),
        };
        fields.push(field);
    }
    FormSchema::new(fields)
}

fn input(data: &Value, cache: CachePolicy) -> GenerationInput {
    GenerationInput::new("Archive old emails. Tick the ones to archive and fill in the rest.")
        .with_schema(thirty_fields())
        .with_data(data.clone())
        .with_cache(cache)
}

fn prompt_sizes() -> anyhow::Result<()> {
    let schema = thirty_fields();
    let definitions = tool_definitions(&Catalog::defaults());
    let tools = serde_json::to_string(&definitions)?.len();
    let system = system_prompt(true)?.len();
    let mut per_tool: Vec<String> = Vec::new();
    for tool in &definitions {
        per_tool.push(format!(
            "{} {}",
            tool.name,
            serde_json::to_string(tool)?.len()
        ));
    }
    eprintln!("tool definitions, bytes each: {}", per_tool.join(", "));
    eprintln!(
        "offer (system prompt + tool definitions): {} bytes, about {} tokens at 4 bytes a token",
        system + tools,
        (system + tools) / 4
    );
    for count in [10, 10_000] {
        let data = rows(count);
        let user = user_prompt(
            "Archive old emails. Tick the ones to archive and fill in the rest.",
            Some(&schema),
            &DataSummary::of(&data),
        )?;
        // Baseline: the same prompt with the schema and the summary pretty-printed, as sent
        // before issue 13 (only the indentation differs).
        let summary = DataSummary::of(&data);
        let pretty = user.len() + serde_json::to_string_pretty(&schema.to_json_schema())?.len()
            - serde_json::to_string(&schema.to_json_schema())?.len()
            + serde_json::to_string_pretty(&summary)?.len()
            - serde_json::to_string(&summary)?.len();
        eprintln!(
            "prompt size, {count} rows: user prompt {} bytes (pretty-printed: {pretty}); with \
             system prompt ({system} bytes) and tool definitions ({tools} bytes): {} bytes; the \
             data itself: {} bytes",
            user.len(),
            user.len() + system + tools,
            serde_json::to_string(&data)?.len(),
        );
    }
    Ok(())
}

/// The row counts every generation figure is measured at: the goal is time flat in the rows.
const SIZES: [usize; 3] = [100, 10_000, 100_000];

fn label(count: usize) -> String {
    match count {
        100_000 => "100k".to_owned(),
        10_000 => "10k".to_owned(),
        other => other.to_string(),
    }
}

fn main() -> anyhow::Result<()> {
    prompt_sizes()?;
    let scratch = Scratch::new()?;
    let (runtime, store) = (&scratch.runtime, scratch.store.clone());
    let model = HeuristicModel::new();
    let mut criterion = Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(5))
        .configure_from_args();
    let mut group = criterion.benchmark_group("heuristic");
    for count in SIZES {
        let data = rows(count);
        let size = label(count);
        // Prime the cache for the cache-hit benchmark, and check the loop works before timing it.
        let primed = runtime.block_on(generate_page(
            input(&data, CachePolicy::Use),
            &model,
            &store,
            None,
        ))?;
        anyhow::ensure!(primed.report.ok, "the heuristic page does not validate");
        eprintln!(
            "heuristic page over {count} rows: {} nodes, {} turns",
            primed.tree.nodes.len(),
            primed.record.turns
        );
        // The input owns its copy of the data (the caller's, made outside the timing): what is
        // timed is the generation, not the bench copying its rows.
        group.bench_function(
            format!("generate_page, 30 fields, {size} rows, cache bypassed"),
            |bencher| {
                bencher.iter_batched(
                    || input(&data, CachePolicy::Bypass),
                    |input| runtime.block_on(generate_page(input, &model, &store, None)),
                    BatchSize::PerIteration,
                );
            },
        );
        group.bench_function(
            format!("generate_page, 30 fields, {size} rows, cache hit"),
            |bencher| {
                bencher.iter_batched(
                    || input(&data, CachePolicy::Use),
                    |input| runtime.block_on(generate_page(input, &model, &store, None)),
                    BatchSize::PerIteration,
                );
            },
        );
        group.bench_function(
            format!("baseline: serde_json::to_string of the {size} rows"),
            |bencher| {
                bencher.iter(|| serde_json::to_string(black_box(&data)).map(|text| text.len()));
            },
        );
        group.bench_function(
            format!("baseline: DataSummary of the {size} rows"),
            |bencher| {
                bencher.iter(|| DataSummary::of(black_box(&data)));
            },
        );
    }
    group.finish();
    criterion.final_summary();
    scratch.close();
    Ok(())
}
