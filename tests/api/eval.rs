//! `tessera eval` and the replayed transcripts: every transcript in `tests/transcripts` ends the
//! way it claims, the heuristic gives every scenario a valid page, and the command exits non-zero
//! only when the evaluation itself cannot run.

use std::{
    path::{Path, PathBuf},
    process::Command,
    sync::Arc,
};

use tessera::{
    agent::{generation::GenerationOutcome, HeuristicModel},
    eval::{run, EvalOptions},
    llm::Transcript,
};

const BINARY: &str = env!("CARGO_BIN_EXE_tessera");

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn options(transcripts: Option<&str>) -> EvalOptions {
    EvalOptions {
        scenarios: repository().join("tests/quality"),
        transcripts: transcripts.map(|folder| repository().join(folder)),
        json: false,
        only: Vec::new(),
        max_steps: tessera::agent::generate::DEFAULT_MAX_STEPS,
        mode: None,
        record: None,
    }
}

#[tokio::test]
async fn every_transcript_replays_to_the_outcome_it_claims() -> anyhow::Result<()> {
    let transcripts = Transcript::load_dir(&repository().join("tests/transcripts"))?;
    assert!(
        transcripts.len() >= 6,
        "only {} transcripts",
        transcripts.len()
    );
    for transcript in &transcripts {
        assert!(
            transcript.expect.is_some() && !transcript.notes.trim().is_empty(),
            "{}: every transcript says what it shows and claims an outcome",
            transcript.name
        );
    }
    let report = run(
        &options(Some("tests/transcripts")),
        Arc::new(HeuristicModel::new()),
        "unused",
    )
    .await?;
    assert_eq!(report.results.len(), transcripts.len());
    let unmet: Vec<String> = report
        .results
        .iter()
        .filter_map(|result| {
            result
                .unmet_expectation()
                .map(|unmet| format!("{}: {unmet}", result.name))
        })
        .collect();
    assert!(unmet.is_empty(), "\n{}", unmet.join("\n"));
    // What the set is for: text-written calls read, a fallback shown, mistakes reported.
    assert!(report
        .results
        .iter()
        .any(|result| result.text_tool_calls > 0));
    assert!(report
        .results
        .iter()
        .any(|result| result.outcome == GenerationOutcome::FellBack));
    assert!(report.results.iter().any(|result| result
        .rules_reported
        .iter()
        .any(|rule| rule == "field_outside_form")));
    Ok(())
}

#[tokio::test]
async fn the_heuristic_gives_every_scenario_a_valid_page_measured_in_estimated_tokens(
) -> anyhow::Result<()> {
    let report = run(&options(None), Arc::new(HeuristicModel::new()), "heuristic").await?;
    let forms: Vec<_> = report
        .results
        .iter()
        .filter(|result| result.fields > 0)
        .collect();
    assert!(forms.len() >= 20, "only {} forms", forms.len());
    assert!(forms.iter().any(|result| result.fields >= 30));
    for result in &report.results {
        assert_eq!(result.outcome, GenerationOutcome::Ok, "{}", result.name);
        assert!(result.turns >= 1 && result.html_bytes > 0 && result.nodes > 0);
        assert!(
            result.tokens.estimated && result.tokens.input > 0,
            "{}: the heuristic reports no usage, so tokens are estimates",
            result.name
        );
    }
    let printed = report.render();
    assert!(
        printed.contains(&format!(
            "valid page   {n}/{n} (100%)   fell back 0/{n} (0%)",
            n = report.results.len()
        )),
        "{printed}"
    );
    Ok(())
}

fn eval_command(arguments: &[&str]) -> Command {
    let mut command = Command::new(BINARY);
    command
        .arg("eval")
        .args(arguments)
        .current_dir(repository())
        .env_remove("TESSERA_CONFIG")
        .env_remove("TESSERA_MODEL");
    command
}

#[test]
fn tessera_eval_prints_a_row_per_scenario_and_exits_zero() -> anyhow::Result<()> {
    let output = eval_command(&[]).output()?;
    let stdout = String::from_utf8(output.stdout)?;
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let scenarios = std::fs::read_dir(repository().join("tests/quality"))?.count();
    assert!(stdout.starts_with(&format!("tessera eval: {scenarios} cases with heuristic")));
    assert!(stdout.contains("\nemployee-onboarding "), "{stdout}");
    assert!(stdout.contains("\nturns        median 1.0"), "{stdout}");
    Ok(())
}

#[test]
fn tessera_eval_refuses_a_bad_argument_or_setting_in_one_line_with_exit_code_2(
) -> anyhow::Result<()> {
    let output = eval_command(&["--fast"]).output()?;
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr)?;
    assert!(
        stderr.starts_with("tessera eval: unknown argument `--fast`"),
        "{stderr}"
    );
    let output = eval_command(&[])
        .env("TESSERA_MODEL", "skynet:v1")
        .output()?;
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr)?;
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("TESSERA_MODEL"), "{stderr}");
    let missing: PathBuf = repository().join("tests/no-such-folder");
    let output = eval_command(&["--transcripts", &missing.to_string_lossy()]).output()?;
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8(output.stderr)?.contains("no-such-folder"));
    Ok(())
}
