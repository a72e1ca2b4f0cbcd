//! What asking for a whole page in one answer costs (issue 28): per quality scenario, the bytes
//! of the page schema the answer is constrained to, of the whole-page system prompt and of the
//! user prompt, against the tool loop's first request (its system prompt, the same user prompt
//! and every tool definition) as the baseline, in the same run; and how long building the page
//! schema takes (mean of `PAGE_SCHEMA_BENCH_RUNS` builds, default 200).
//!
//! Run with `cargo bench --bench page_schema`. Figures go in BENCHMARKS.md. A server that turns
//! the schema into a grammar (llama.cpp, vLLM) never puts it in the prompt; a hosted provider
//! counts it once per request, so both sizes are shown.

use std::{path::Path, time::Instant};

use tessera::{
    agent::{
        page_schema::{page_schema, PageRequest},
        prompt::{page_system_prompt, system_prompt, user_prompt_for},
        summary::DataSummary,
        tools::tool_definitions,
    },
    eval::scenario::Scenario,
};
use tessera_app::catalog::Catalog;

#[expect(clippy::print_stdout, reason = "the report is the bench's output")]
fn main() -> anyhow::Result<()> {
    let runs: u32 = std::env::var("PAGE_SCHEMA_BENCH_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(200);
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/quality");
    let scenarios = Scenario::load_dir(&folder)?;
    let catalog = Catalog::defaults();
    let tools = serde_json::to_string(&tool_definitions(&catalog))?.len();
    println!(
        "{:<26} {:>6} {:>8} {:>8} {:>8} {:>10} {:>9}",
        "scenario", "fields", "schema B", "system B", "user B", "tool loop B", "build µs"
    );
    let (mut whole_total, mut loop_total) = (0, 0);
    for scenario in &scenarios {
        let summary = DataSummary::of(&scenario.data);
        let request = PageRequest::new(&catalog, scenario.schema.as_ref(), &summary);
        let started = Instant::now();
        let mut schema_bytes = 0;
        for _ in 0..runs {
            schema_bytes = serde_json::to_string(&page_schema(&request))?.len();
        }
        let micros = started.elapsed().as_secs_f64() * 1e6 / f64::from(runs);
        let system = page_system_prompt(&request, false)?.len();
        let user =
            user_prompt_for(&scenario.prompt, scenario.schema.as_ref(), &summary, false)?.len();
        let tool_loop = system_prompt(scenario.schema.is_some())?.len() + user + tools;
        whole_total += system + user;
        loop_total += tool_loop;
        println!(
            "{:<26} {:>6} {:>8} {:>8} {:>8} {:>10} {:>9.0}",
            scenario.name,
            scenario.fields(),
            schema_bytes,
            system,
            user,
            tool_loop,
            micros
        );
    }
    println!(
        "prompt bytes, all scenarios: whole page {whole_total}, tool loop first turn {loop_total} \
         (baseline)"
    );
    Ok(())
}
