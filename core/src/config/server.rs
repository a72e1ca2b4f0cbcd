//! The server's own settings, each declared once: its variable, file key, default, parser and
//! help (the doc comment). `Config::from_sources` reads them and checks what one setting cannot
//! check alone (the public URL's default, the workflow hosts against it, the configured model's
//! provider settings).

use std::{net::SocketAddr, path::PathBuf};

use clap::{ArgAction, Args};
use tessera_settings::{parse, Secret};

use super::DatabaseUrl;
use crate::{net::outbound::OutboundAllow, pages::groups::Groups, telemetry::LogFormat};

/// The server's settings as declared, in the order `--help` lists them.
// Each field's doc comment is its `--help` line, printed as written: no Markdown.
#[allow(clippy::doc_markdown)]
#[derive(Args, Debug)]
pub struct ServerSettings {
    /// address and port to listen on
    #[arg(long = "addr", env = "TESSERA_ADDR", default_value = "127.0.0.1:3000",
          value_parser = socket_addr)]
    pub addr: SocketAddr,
    /// sqlite://FILE (created and migrated) or postgres://USER@HOST:PORT/DB
    #[arg(long = "database_url", env = "DATABASE_URL", default_value = "sqlite://tessera.db",
          hide_env_values = true, value_parser = database_url)]
    pub database_url: DatabaseUrl,
    /// model that generates pages: heuristic, or provider:model
    #[arg(long = "model", env = "TESSERA_MODEL", default_value = "heuristic",
          value_parser = model)]
    pub model: String,
    /// bearer token for /api/*, /runs and /chat, at least 16 characters (unset: generated at
    /// first start, printed once)
    #[arg(long = "api_token", env = "TESSERA_API_TOKEN", hide_env_values = true,
          value_parser = parse::secret(16))]
    pub api_token: Option<Secret>,
    /// password of the admin login for /runs and /chat (stored as an argon2 hash), at least 8
    /// characters (unset: generated at first start, printed once)
    #[arg(long = "admin_password", env = "TESSERA_ADMIN_PASSWORD", hide_env_values = true,
          value_parser = parse::secret(8))]
    pub admin_password: Option<Secret>,
    /// base URL used in page links sent to people (unset: http://<TESSERA_ADDR>)
    #[arg(long = "public_url", env = "TESSERA_PUBLIC_URL", value_parser = public_url)]
    pub public_url: Option<String>,
    /// largest request body accepted, in bytes
    #[arg(long = "body_limit", env = "TESSERA_BODY_LIMIT", default_value = "1048576",
          value_parser = parse::whole(1024..=1 << 30, "bytes"))]
    pub body_limit: u64,
    /// folder with the compiled browser assets (pkg/) to serve instead of those built into the
    /// binary, e.g. a fresh cargo leptos build (unset: the assets built into the binary)
    #[arg(long = "site_root", env = "TESSERA_SITE_ROOT", value_parser = parse::trimmed)]
    pub site_root: Option<String>,
    /// tracing filter, e.g. info or tessera=trace
    #[arg(long = "log", env = "TESSERA_LOG", default_value = "info,tessera=debug",
          value_parser = log_filter)]
    pub log: String,
    /// text (coloured on a terminal) or json (one object per line: time, level, target,
    /// message, request.id and the other span fields)
    #[arg(long = "log_format", env = "TESSERA_LOG_FORMAT", default_value = "text",
          value_parser = |raw: &str| raw.parse::<LogFormat>())]
    pub log_format: LogFormat,
    /// seconds a runner's claim on a run holds without a heartbeat (how long a crashed
    /// process's runs wait)
    #[arg(long = "runner_lease_secs", env = "TESSERA_RUNNER_LEASE_SECS", default_value = "30",
          value_parser = parse::whole(1..=3600, "seconds"))]
    pub runner_lease_secs: u64,
    /// milliseconds between each process's looks for due reminders and escalations of asks
    #[arg(long = "timer_poll_ms", env = "TESSERA_TIMER_POLL_MS", default_value = "1000",
          value_parser = parse::whole(10..=60_000, "milliseconds"))]
    pub timer_poll_ms: u64,
    /// groups an ask may name as one assignee, any member answering for it:
    /// name=address|address;name=address (unset: no groups)
    #[arg(long = "groups", env = "TESSERA_GROUPS", value_parser = Groups::parse)]
    pub groups: Option<Groups>,
    /// crash drills only: registers the crash-drill workflow and appends each step execution
    /// to this file (unset: no drill workflow)
    #[arg(long = "drill_log", env = "TESSERA_DRILL_LOG", value_parser = parse::trimmed)]
    pub drill_log: Option<String>,
    /// folder of YAML workflow files (*.yaml), checked at start: a bad file stops the server
    /// (unset: workflows, if that folder exists)
    #[arg(long = "workflows_dir", env = "TESSERA_WORKFLOWS_DIR", value_parser = folder)]
    pub workflows_dir: Option<PathBuf>,
    /// hosts YAML http steps may call, comma-separated host or host:port; self is this server
    /// (TESSERA_PUBLIC_URL)
    #[arg(
        long = "workflow_http_hosts",
        env = "TESSERA_WORKFLOW_HTTP_HOSTS",
        default_value = "self"
    )]
    pub workflow_http_hosts: String,
    /// serve the demo site: its APIs under /demo-api (writes need the server's demo key), the
    /// chat over them and the YAML workflows that call them
    #[arg(long = "demo", env = "TESSERA_DEMO", default_value = "true", action = ArgAction::Set,
          value_parser = parse::switch)]
    pub demo: bool,
    /// comma-separated site files the chat drives instead of the demo: a manifest, an OpenAPI
    /// 3.0/3.1 document, or a site file naming one (JSON or YAML); a bad file stops the server
    /// (unset: the chat drives the demo site)
    #[arg(long = "sites", env = "TESSERA_SITES", value_delimiter = ',',
          value_parser = parse::trimmed)]
    pub sites: Vec<String>,
    /// a reverse proxy is in front: clients (login limits) are told apart by the last
    /// X-Forwarded-For address it appends; never set it without one, or clients can pick their
    /// own address
    #[arg(long = "behind_proxy", env = "TESSERA_BEHIND_PROXY", default_value = "false",
          action = ArgAction::Set, value_parser = parse::switch)]
    pub behind_proxy: bool,
    /// hosts an ask's callback_url or webhook may reach although they are loopback, private or
    /// otherwise internal, comma-separated host or host:port (unset: public addresses only)
    #[arg(long = "outbound_allow", env = "TESSERA_OUTBOUND_ALLOW",
          value_parser = OutboundAllow::parse)]
    pub outbound_allow: Option<OutboundAllow>,
}

fn socket_addr(raw: &str) -> Result<SocketAddr, String> {
    raw.trim()
        .parse()
        .map_err(|_| format!("`{raw}` is not HOST:PORT, e.g. 127.0.0.1:3000"))
}

/// The reason never echoes the URL: it may carry a password.
fn database_url(raw: &str) -> Result<DatabaseUrl, String> {
    DatabaseUrl::parse(raw.trim())
}

fn model(raw: &str) -> Result<String, String> {
    let raw = raw.trim();
    if raw == "heuristic" || raw == "scripted" {
        return Ok(raw.to_owned());
    }
    match raw.split_once(':') {
        Some((provider, model)) if !model.is_empty() => match provider {
            "openai" | "anthropic" | "gemini" | "ollama" => Ok(raw.to_owned()),
            other => Err(format!(
                "unknown provider `{other}`; use openai, anthropic, gemini, ollama or heuristic"
            )),
        },
        _ => Err(format!(
            "`{raw}` is not `heuristic` or `provider:model`, e.g. openai:gpt-4.1-mini"
        )),
    }
}

/// Links sent to people are built on it: a URL without a host would send them nowhere.
fn public_url(raw: &str) -> Result<String, String> {
    let raw = raw.trim();
    let usable = url::Url::parse(raw).is_ok_and(|url| {
        matches!(url.scheme(), "http" | "https")
            && url.host_str().is_some_and(|host| !host.is_empty())
            && url.query().is_none()
            && url.fragment().is_none()
            && url.username().is_empty()
    });
    if !usable {
        return Err(format!(
            "`{raw}` must be an http:// or https:// URL with a host, and no query, fragment or user"
        ));
    }
    Ok(raw.trim_end_matches('/').to_owned())
}

fn log_filter(raw: &str) -> Result<String, String> {
    tracing_subscriber::EnvFilter::try_new(raw).map_err(|error| error.to_string())?;
    Ok(raw.to_owned())
}

/// A folder someone named must exist, or a typo would silently start the server without the
/// workflows they wrote (the default folder may be absent: no YAML workflows).
fn folder(raw: &str) -> Result<PathBuf, String> {
    let dir = PathBuf::from(raw.trim());
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(format!("`{}` is not a folder", dir.display()))
    }
}
