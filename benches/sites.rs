//! Importing sites (issue 25): how long loading a site file takes and how many bytes of tool
//! definitions the model is offered per call, for GitHub's full OpenAPI document (about a
//! thousand operations), the trimmed issues-and-labels copy the tests serve, and the demo
//! manifest as the baseline, in the same run.
//!
//! Loading is `chat::sites::load_site`: read the file, parse it, import every operation
//! (`$ref`s inlined, tags inferred), compile each parameter schema. The offer is
//! `chat::offer::offer` over no conversation (a large site: only the search tool) and after one
//! `find_operations` search (the search tool plus what it found).
//!
//! Run with `cargo bench --bench sites` after `scripts/setup.sh --test` (the full document comes
//! from `tests/tools/node_modules/@octokit/openapi`; without it that line is skipped with a
//! message). `SITES_BENCH_RUNS` sets the timed loads per file (default 5). Figures go in
//! BENCHMARKS.md.

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use serde_json::json;
use tessera::{
    chat::{
        manifest::Operation,
        offer::{find, offer, offer_bytes, FIND_OPERATIONS},
        sites::load_site,
    },
    llm::{Message, ToolCall},
};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

#[expect(clippy::print_stdout, reason = "the report is the bench's output")]
fn main() -> anyhow::Result<()> {
    let runs: usize = std::env::var("SITES_BENCH_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(5);
    let demo = tempfile::NamedTempFile::with_suffix(".json")?;
    std::fs::write(demo.path(), tessera::demo::items::MANIFEST_JSON)?;
    let full =
        root().join("tests/tools/node_modules/@octokit/openapi/generated/api.github.com.json");
    let files = [
        ("demo manifest (baseline)", demo.path().to_path_buf()),
        (
            "GitHub issues and labels (tests/data)",
            root().join("tests/data/github/issues-and-labels.json"),
        ),
        ("GitHub, full api.github.com.json", full),
    ];
    println!("| file | bytes | operations | load median | load min | offered, first call | offered, after one search |");
    println!("|---|---|---|---|---|---|---|");
    for (label, path) in files {
        if !path.exists() {
            println!(
                "| {label} | skipped: {} is missing (run scripts/setup.sh --test) | | | | | |",
                path.display()
            );
            continue;
        }
        let size = std::fs::metadata(&path)?.len();
        let mut times: Vec<Duration> = Vec::with_capacity(runs);
        let mut manifest = None;
        for _ in 0..runs.max(1) {
            let started = Instant::now();
            let loaded = load_site(&path, &|_| true)?;
            times.push(started.elapsed());
            manifest = Some(loaded);
        }
        let Some(manifest) = manifest else { continue };
        times.sort();
        let operations: Vec<&Operation> = manifest.operations().iter().collect();
        let first = offer_bytes(&offer(&manifest, &operations, &[]));
        let call = ToolCall::new("f1", FIND_OPERATIONS, json!({"query": "close an issue"}));
        let history = [
            Message::Assistant {
                text: None,
                tool_calls: vec![call.clone()],
            },
            Message::tool_result(&call, find(&operations, "close an issue")),
        ];
        let after = offer_bytes(&offer(&manifest, &operations, &history));
        println!(
            "| {label} | {size} | {} | {:.1} ms | {:.1} ms | {first} B | {after} B |",
            operations.len(),
            times[times.len() / 2].as_secs_f64() * 1000.0,
            times[0].as_secs_f64() * 1000.0,
        );
    }
    Ok(())
}
