//! The real `tessera` binary: configuration errors, `--help`, secrets and graceful shutdown.

use std::{
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use anyhow::{bail, Context as _};

const BINARY: &str = env!("CARGO_BIN_EXE_tessera");

/// A child server binds this port after the test let it go: one below the ephemeral range,
/// which the other tests' `bind(0)` cannot take in between.
/// Waits until the child, started on `TESSERA_ADDR=127.0.0.1:0` with its output going to `log`,
/// says which port it bound; these tests drive a real process from sync code. Binding port 0
/// and reading the answer leaves no gap in which another process could take the port.
#[expect(
    clippy::disallowed_methods,
    reason = "a sync test waiting for a child process, no executor to block"
)]
pub(crate) fn wait_until_listening(
    log: &std::path::Path,
    child: &mut std::process::Child,
) -> anyhow::Result<u16> {
    let started = Instant::now();
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if let Some(port) = crate::process::listening_port(&text) {
            return Ok(port);
        }
        if started.elapsed() > Duration::from_secs(20) || child.try_wait()?.is_some() {
            let _ = child.kill();
            bail!("the server did not start listening: {text}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The `tessera` binary set up to serve from `dir`: no config file, a port the system picks, and
/// its SQLite file `t.db` in `dir`.
pub(crate) fn server_in(dir: &std::path::Path) -> Command {
    let mut command = Command::new(BINARY);
    command
        .current_dir(dir)
        .env_remove("TESSERA_CONFIG")
        .env("TESSERA_ADDR", "127.0.0.1:0")
        .env(
            "DATABASE_URL",
            format!("sqlite://{}", dir.join("t.db").display()),
        );
    command
}

#[test]
fn a_bad_setting_is_one_line_naming_it_and_exit_code_2() -> anyhow::Result<()> {
    let output = Command::new(BINARY)
        .env("TESSERA_ADDR", "localhost")
        .env("TESSERA_CONFIG", "/nonexistent/ok-if-env-wins.toml")
        .output()?;
    // An explicitly named but missing config file is itself a bad setting, reported first.
    assert_eq!(output.status.code(), Some(2));
    let output = Command::new(BINARY)
        .env_remove("TESSERA_CONFIG")
        .env("TESSERA_ADDR", "localhost")
        .current_dir(tempfile::tempdir()?.path())
        .output()?;
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr)?;
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("TESSERA_ADDR"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    Ok(())
}

#[test]
fn a_bad_site_file_stops_the_server_with_one_line_naming_the_file_and_the_field(
) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let site = dir.path().join("shop.yaml");
    std::fs::write(
        &site,
        "openapi: 3.1.0\ninfo: {title: Shop, version: '1'}\npaths: {}\n",
    )?;
    let output = Command::new(BINARY)
        .env_remove("TESSERA_CONFIG")
        .env("TESSERA_ADDR", "127.0.0.1:0")
        .env(
            "DATABASE_URL",
            format!("sqlite://{}", dir.path().join("t.db").display()),
        )
        .env("TESSERA_SITES", &site)
        .current_dir(dir.path())
        .output()?;
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr)?;
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!("site file {}: servers:", site.display())),
        "the line names the file and the field: {stderr}"
    );
    Ok(())
}

#[test]
fn help_lists_every_setting_and_no_secret_values() -> anyhow::Result<()> {
    let output = Command::new(BINARY)
        .arg("--help")
        .env("TESSERA_API_TOKEN", "very-secret-token-value-123")
        .output()?;
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout)?;
    for setting in tessera::config::all_settings() {
        assert!(
            help.contains(&setting.env),
            "{} missing from --help",
            setting.env
        );
    }
    assert!(!help.contains("very-secret-token-value-123"));
    Ok(())
}

#[test]
fn sigterm_shuts_the_server_down_gracefully_without_logging_secrets() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    // Files, not pipes: the debug log (every migration's SQL) outgrows a pipe's buffer before
    // the server listens, and a pipe nobody reads yet would stall it there.
    let output = crate::process::output_to(&dir.path().join("server.log"))?;
    let mut child = server_in(dir.path())
        .env("TESSERA_API_TOKEN", "very-secret-token-value-123")
        .env("TESSERA_LOG", "debug")
        .stdout(output.0)
        .stderr(output.1)
        .spawn()?;
    wait_until_listening(&dir.path().join("server.log"), &mut child)?;
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()?;
    assert!(status.success());
    let exited = child.wait().context("waiting for the server to exit")?;
    assert!(exited.success(), "graceful exit, got {exited:?}");
    let log = std::fs::read_to_string(dir.path().join("server.log"))?;
    assert!(log.contains("shutting down"), "{log}");
    assert!(
        !log.contains("very-secret-token-value-123"),
        "the token leaked into the log"
    );
    Ok(())
}

#[test]
fn the_first_start_prints_a_generated_token_once() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let run_once = |run: &str| -> anyhow::Result<String> {
        let log = dir.path().join(format!("{run}.log"));
        let output = crate::process::output_to(&log)?;
        let mut child = server_in(dir.path())
            .env_remove("TESSERA_API_TOKEN")
            .stdout(output.0)
            .stderr(output.1)
            .spawn()?;
        wait_until_listening(&log, &mut child)?;
        Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()?;
        child.wait()?;
        Ok(std::fs::read_to_string(&log)?)
    };
    let first = run_once("first")?;
    assert!(first.contains("generated API token"), "{first}");
    let second = run_once("second")?;
    assert!(
        !second.contains("generated API token"),
        "shown once only: {second}"
    );
    Ok(())
}

/// A SIGTERM that lands while the server is still starting (its database already created, the
/// token perhaps already hashed and stored) must not kill it before the token is shown.
#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "a sync test waiting for a child process, no executor to block"
)]
fn a_sigterm_during_start_up_still_shows_the_generated_token_and_exits_cleanly(
) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let database = dir.path().join("t.db");
    let mut child = server_in(dir.path())
        .env_remove("TESSERA_API_TOKEN")
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()?;
    let started = Instant::now();
    while !database.exists() {
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            bail!("the server never created its database");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()?;
    let output = child.wait_with_output()?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{:?}: {stderr}", output.status);
    assert!(stderr.contains("generated API token"), "{stderr}");
    Ok(())
}
