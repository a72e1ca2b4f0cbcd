//! A real `tessera` process started the way an operator starts it — from a folder of its own,
//! settings in the environment — for the tests of what an operator sees: its log, its backups,
//! its embedded site.

use std::{
    fs::File,
    path::{Path, PathBuf},
    process::{Child, Command},
    time::{Duration, Instant},
};

use anyhow::{bail, Context as _};
use serde_json::{json, Value};

use crate::helpers::API_TOKEN;

pub const BINARY: &str = env!("CARGO_BIN_EXE_tessera");

/// Where a child's stdout and stderr both go: `log`, appended to, so neither overwrites what the
/// other wrote.
pub fn output_to(log: &Path) -> std::io::Result<(File, File)> {
    let open = || File::options().create(true).append(true).open(log);
    Ok((open()?, open()?))
}

/// The port a server's log says it listens on (its `listening` line, text or JSON), if it said.
pub fn listening_port(log: &str) -> Option<u16> {
    let line = log.lines().find(|line| line.contains("listening"))?;
    let plain = strip_ansi(line);
    let (_, after) = plain.split_once("127.0.0.1:")?;
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|port| *port != 0)
}

/// `text` without terminal colour codes (`ESC [ … m`).
fn strip_ansi(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for code in chars.by_ref() {
                if code == 'm' {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    plain
}

/// A server process; dropping it kills it (also when a test panics).
pub struct ServerProcess {
    child: Child,
    pub base: String,
    pub log: PathBuf,
}

impl ServerProcess {
    /// Starts the binary in `folder` on `database_url` with `settings` on top of a minimal
    /// environment (no `TESSERA_SITE_ROOT`, no config file), and waits for `/readyz`.
    pub async fn start(
        folder: &Path,
        database_url: &str,
        settings: &[(&str, &str)],
    ) -> anyhow::Result<Self> {
        let log = tempfile::Builder::new()
            .prefix("server-")
            .suffix(".log")
            .tempfile_in(folder)?
            .into_temp_path()
            .keep()?;
        let output = output_to(&log)?;
        let mut command = Command::new(BINARY);
        command
            .current_dir(folder)
            .env_remove("TESSERA_SITE_ROOT")
            .env_remove("TESSERA_LOG_FORMAT")
            .env_remove("TESSERA_CONFIG")
            // Port 0, then the port it says it bound: no gap for another process to take it.
            .env("TESSERA_ADDR", "127.0.0.1:0")
            .env("DATABASE_URL", database_url)
            .env("TESSERA_API_TOKEN", API_TOKEN)
            .env("TESSERA_ADMIN_PASSWORD", "process-admin-password")
            .env("TESSERA_LOG", "info")
            .stdout(output.0)
            .stderr(output.1);
        for (name, value) in settings {
            command.env(name, value);
        }
        let mut child = command.spawn().context("starting tessera")?;
        let started = Instant::now();
        let port = loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if let Some(port) = listening_port(&text) {
                break port;
            }
            if started.elapsed() > Duration::from_secs(30) || child.try_wait()?.is_some() {
                let _ = child.kill();
                bail!("the server never said where it listens: {text}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let server = Self {
            child,
            base: format!("http://127.0.0.1:{port}"),
            log,
        };
        server.wait_ready().await?;
        Ok(server)
    }

    async fn wait_ready(&self) -> anyhow::Result<()> {
        let client = reqwest::Client::new();
        let started = Instant::now();
        loop {
            if let Ok(response) = client.get(format!("{}/readyz", self.base)).send().await {
                if response.status().is_success() {
                    return Ok(());
                }
            }
            if started.elapsed() > Duration::from_secs(30) {
                bail!("the server never got ready: {}", self.log_text());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Everything the process wrote to stdout and stderr so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGTERM, then waits for a graceful exit.
    pub async fn stop(mut self) -> anyhow::Result<()> {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()?;
        anyhow::ensure!(status.success(), "kill -TERM failed");
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait()? {
                anyhow::ensure!(status.success(), "exit {status}: {}", self.log_text());
                return Ok(());
            }
            if started.elapsed() > Duration::from_secs(20) {
                bail!("the server did not stop: {}", self.log_text());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An ask made over the API: its id and its page's path (`/p/<token>`).
pub struct PageToAnswer {
    pub id: String,
    pub path: String,
}

/// `POST /api/asks` with the default one-field schema.
pub async fn ask(
    client: &reqwest::Client,
    server: &ServerProcess,
    label: &str,
) -> anyhow::Result<PageToAnswer> {
    let response = client
        .post(server.url("/api/asks"))
        .bearer_auth(API_TOKEN)
        .json(&json!({"prompt": "Approve {{ label }}?", "data": {"label": label}}))
        .send()
        .await?;
    let status = response.status();
    let body: Value = response.json().await?;
    anyhow::ensure!(status.as_u16() == 201, "POST /api/asks: {status} {body}");
    let id = body["id"].as_str().context("an ask's id")?.to_owned();
    let path = body["link"]
        .as_str()
        .and_then(|link| link.split_once("/p/"))
        .map(|(_, token)| format!("/p/{token}"))
        .context("an ask's link")?;
    Ok(PageToAnswer { id, path })
}

/// Reads the page and posts `answer` with its CSRF token; the status of the post (303 when taken).
pub async fn answer(
    client: &reqwest::Client,
    server: &ServerProcess,
    page: &PageToAnswer,
    answer: &str,
) -> anyhow::Result<u16> {
    let html = client
        .get(server.url(&page.path))
        .send()
        .await?
        .text()
        .await?;
    let csrf = crate::helpers::csrf_of(&html);
    anyhow::ensure!(!csrf.is_empty(), "the page has a CSRF field");
    let encoded: String = form_urlencoded::byte_serialize(answer.as_bytes()).collect();
    let response = client
        .post(server.url(&page.path))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("_csrf={csrf}&answer={encoded}"))
        .send()
        .await?;
    Ok(response.status().as_u16())
}

/// A client that does not follow redirects, so a submission's 303 is seen.
pub fn client() -> anyhow::Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?)
}
