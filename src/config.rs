//! Typed configuration, loaded once in `main`.
//!
//! Every setting has a name, an environment variable, a default and a help line in one table
//! ([`SETTINGS`]), so `tessera --help`, the `tessera.toml` keys and the error messages can never
//! disagree. Precedence: environment, then `tessera.toml` (or the file named by `TESSERA_CONFIG`),
//! then the default. A bad value is one [`ConfigError`] line that names the setting; secrets are
//! [`Secret`] and never printed.
//!
//! | env var | `tessera.toml` key | default |
//! |---|---|---|
//! | `TESSERA_ADDR` | `addr` | `127.0.0.1:3000` |
//! | `DATABASE_URL` | `database_url` | `sqlite://tessera.db` |
//! | `TESSERA_MODEL` | `model` | `heuristic` |
//! | `TESSERA_API_TOKEN` | `api_token` | generated at first start |
//! | `TESSERA_ADMIN_PASSWORD` | `admin_password` | generated at first start |
//! | `TESSERA_PUBLIC_URL` | `public_url` | `http://<addr>` |
//! | `TESSERA_BODY_LIMIT` | `body_limit` | `1048576` |
//! | `TESSERA_SITE_ROOT` | `site_root` | unset (the assets built into the binary) |
//! | `TESSERA_LOG` | `log` | `info,tessera=debug` |
//! | `TESSERA_LOG_FORMAT` | `log_format` | `text` |
//! | `TESSERA_RUNNER_LEASE_SECS` | `runner_lease_secs` | `30` |
//! | `TESSERA_TIMER_POLL_MS` | `timer_poll_ms` | `1000` |
//! | `TESSERA_GROUPS` | `groups` | unset (no groups) |
//! | `TESSERA_DRILL_LOG` | `drill_log` | unset (no drill workflow) |
//! | `TESSERA_WORKFLOWS_DIR` | `workflows_dir` | `workflows` |
//! | `TESSERA_WORKFLOW_HTTP_HOSTS` | `workflow_http_hosts` | `self` |
//! | `TESSERA_DEMO` | `demo` | `true` |
//! | `TESSERA_SITES` | `sites` | unset (the chat drives the demo site) |
//! | `TESSERA_BEHIND_PROXY` | `behind_proxy` | `false` |
//! | `TESSERA_OUTBOUND_ALLOW` | `outbound_allow` | unset (public addresses only) |
//!
//! The notification channels' settings are listed in `notify::config`, the model providers' keys,
//! base URLs, timeout and retries in `llm::config`, the metrics token, session lifetimes and
//! receipt lifetime in [`access`]; [`all_settings`] chains the four tables.

pub mod access;

use std::{
    collections::BTreeMap,
    net::SocketAddr,
    path::{Path, PathBuf},
    time::Duration,
};

pub use tessera_settings::{Secret, Setting, Sources};
pub use tessera_store::DatabaseUrl;

/// The whole configuration of a Tessera server.
#[derive(Clone, Debug)]
pub struct Config {
    /// Address the HTTP server listens on.
    pub addr: SocketAddr,
    /// The database the store uses.
    pub database_url: DatabaseUrl,
    /// The model that generates pages, `provider:model` or `heuristic`.
    pub model: String,
    /// The model providers' keys, base URLs, timeout and retries, as read; the lookup
    /// [`crate::agent::AllowedModels::from_spec`] takes.
    pub model_settings: crate::llm::ModelSettings,
    /// A fixed API token; when absent one is generated at first start.
    pub api_token: Option<Secret>,
    /// The admin login password; when absent one is generated at first start.
    pub admin_password: Option<Secret>,
    /// The URL people reach this server at, used to build page links.
    pub public_url: String,
    /// Largest request body accepted, in bytes.
    pub body_limit: usize,
    /// A folder holding the compiled browser assets (`pkg/`), built by cargo-leptos, served
    /// instead of the copy built into the binary; `None` serves that copy (`http::site`).
    pub site_root: Option<String>,
    /// The tracing filter directive.
    pub log: String,
    /// Text for a terminal or one JSON object per line.
    pub log_format: crate::telemetry::LogFormat,
    /// The notification channels, and the key that signs webhooks and asks callbacks.
    pub notify: crate::notify::NotifyConfig,
    /// How long a runner's claim on a run holds without a heartbeat: after a crash, the runs the
    /// dead process held wait this long before another runner takes them.
    pub runner_lease: Duration,
    /// How often each process looks for due reminders and escalations.
    pub timer_poll: Duration,
    /// The groups an ask may name as one assignee (`pages::groups`).
    pub groups: crate::pages::groups::Groups,
    /// When set, the `crash-drill` workflow is registered and every execution of its steps is
    /// appended to this file (see `demo::drill`); never set in production.
    pub drill_log: Option<PathBuf>,
    /// The folder of declarative workflow files (`*.yaml`), checked at start; `None` loads
    /// none (tests). A missing folder holds no workflows.
    pub workflows_dir: Option<PathBuf>,
    /// The hosts declarative workflows' `http` steps may call, comma-separated `host` or
    /// `host:port`; `self` is this server's public URL.
    pub workflow_http_hosts: String,
    /// Whether the demo site is served: its APIs under `/demo-api`, the chat over them and the
    /// YAML workflows that call them. On by default, so `make run` is a whole demo.
    pub demo: bool,
    /// The site files the chat drives (manifests, OpenAPI documents or site files with an
    /// overlay, `chat::sites`), read and checked by `main` at start; empty drives the demo site.
    pub sites: Vec<PathBuf>,
    /// Whether a reverse proxy is in front: only then is a client told apart by the last address
    /// of `X-Forwarded-For` (which the proxy appends) rather than by the connection's.
    pub behind_proxy: bool,
    /// The hosts an API caller's URLs (an ask's `callback_url` and webhook) may reach although
    /// they are not public: internal receivers the operator vouches for. Empty by default.
    pub outbound_allow: crate::net::outbound::OutboundAllow,
    /// The metrics token, the admin session's lifetimes and how long receipts stay readable.
    pub access: access::AccessConfig,
}

/// The runner lease when `TESSERA_RUNNER_LEASE_SECS` is not set.
pub const DEFAULT_RUNNER_LEASE: Duration = Duration::from_secs(30);

/// How often due reminders and escalations are looked for when `TESSERA_TIMER_POLL_MS` is not set.
pub const DEFAULT_TIMER_POLL: Duration = Duration::from_millis(1000);

/// Every setting, in the order `--help` lists them.
pub const SETTINGS: &[Setting] = &[
    Setting {
        env: "TESSERA_ADDR",
        key: "addr",
        default: "127.0.0.1:3000",
        help: "address and port to listen on",
        secret: false,
    },
    Setting {
        env: "DATABASE_URL",
        key: "database_url",
        default: "sqlite://tessera.db",
        help: "sqlite://FILE (created and migrated) or postgres://USER@HOST:PORT/DB",
        secret: true,
    },
    Setting {
        env: "TESSERA_MODEL",
        key: "model",
        default: "heuristic",
        help: "model that generates pages: heuristic, or provider:model",
        secret: false,
    },
    Setting {
        env: "TESSERA_API_TOKEN",
        key: "api_token",
        default: "(generated at first start, printed once)",
        help: "bearer token for /api/*, /runs and /chat",
        secret: true,
    },
    Setting {
        env: "TESSERA_ADMIN_PASSWORD",
        key: "admin_password",
        default: "(generated at first start, printed once)",
        help: "password of the admin login for /runs and /chat (stored as an argon2 hash)",
        secret: true,
    },
    Setting {
        env: "TESSERA_PUBLIC_URL",
        key: "public_url",
        default: "http://<TESSERA_ADDR>",
        help: "base URL used in page links sent to people",
        secret: false,
    },
    Setting {
        env: "TESSERA_BODY_LIMIT",
        key: "body_limit",
        default: "1048576",
        help: "largest request body accepted, in bytes",
        secret: false,
    },
    Setting {
        env: "TESSERA_SITE_ROOT",
        key: "site_root",
        default: "(unset: the assets built into the binary, else target/site)",
        help: "folder with the compiled browser assets (pkg/) to serve instead of those built into the binary, e.g. a fresh cargo leptos build",
        secret: false,
    },
    Setting {
        env: "TESSERA_LOG",
        key: "log",
        default: "info,tessera=debug",
        help: "tracing filter, e.g. info or tessera=trace",
        secret: false,
    },
    Setting {
        env: "TESSERA_LOG_FORMAT",
        key: "log_format",
        default: "text",
        help: "text (coloured on a terminal) or json (one object per line: time, level, target, message, request.id and the other span fields)",
        secret: false,
    },
    Setting {
        env: "TESSERA_RUNNER_LEASE_SECS",
        key: "runner_lease_secs",
        default: "30",
        help: "seconds a runner's claim on a run holds without a heartbeat (how long a crashed process's runs wait)",
        secret: false,
    },
    Setting {
        env: "TESSERA_TIMER_POLL_MS",
        key: "timer_poll_ms",
        default: "1000",
        help: "milliseconds between each process's looks for due reminders and escalations of asks",
        secret: false,
    },
    Setting {
        env: "TESSERA_GROUPS",
        key: "groups",
        default: "(unset: no groups)",
        help: "groups an ask may name as one assignee, any member answering for it: name=address|address;name=address",
        secret: false,
    },
    Setting {
        env: "TESSERA_DRILL_LOG",
        key: "drill_log",
        default: "(unset: no drill workflow)",
        help: "crash drills only: registers the crash-drill workflow and appends each step execution to this file",
        secret: false,
    },
    Setting {
        env: "TESSERA_WORKFLOWS_DIR",
        key: "workflows_dir",
        default: "workflows",
        help: "folder of YAML workflow files (*.yaml), checked at start: a bad file stops the server",
        secret: false,
    },
    Setting {
        env: "TESSERA_WORKFLOW_HTTP_HOSTS",
        key: "workflow_http_hosts",
        default: "self",
        help: "hosts YAML http steps may call, comma-separated host or host:port; self is this server (TESSERA_PUBLIC_URL)",
        secret: false,
    },
    Setting {
        env: "TESSERA_DEMO",
        key: "demo",
        default: "true",
        help: "serve the demo site: its APIs under /demo-api (writes need the server's demo key), the chat over them and the YAML workflows that call them",
        secret: false,
    },
    Setting {
        env: "TESSERA_SITES",
        key: "sites",
        default: "(unset: the chat drives the demo site)",
        help: "comma-separated site files the chat drives instead of the demo: a manifest, an OpenAPI 3.0/3.1 document, or a site file naming one (JSON or YAML); a bad file stops the server",
        secret: false,
    },
    Setting {
        env: "TESSERA_BEHIND_PROXY",
        key: "behind_proxy",
        default: "false",
        help: "a reverse proxy is in front: clients (login limits) are told apart by the last X-Forwarded-For address it appends; never set it without one, or clients can pick their own address",
        secret: false,
    },
    Setting {
        env: "TESSERA_OUTBOUND_ALLOW",
        key: "outbound_allow",
        default: "(unset: public addresses only)",
        help: "hosts an ask's callback_url or webhook may reach although they are loopback, private or otherwise internal, comma-separated host or host:port",
        secret: false,
    },
    Setting {
        env: "TESSERA_CONFIG",
        key: "-",
        default: "tessera.toml",
        help: "optional TOML file with the keys above (missing file is fine)",
        secret: false,
    },
];

/// Every setting of every part of the server: the core ones above, then the model providers
/// (`llm::config::SETTINGS`), the notification channels (`notify::config::SETTINGS`) and access
/// ([`access::SETTINGS`]). `--help`, the environment reader and the file's key check use this.
pub fn all_settings() -> impl Iterator<Item = &'static Setting> {
    SETTINGS
        .iter()
        .chain(crate::llm::config::SETTINGS.iter())
        .chain(crate::notify::config::SETTINGS.iter())
        .chain(access::SETTINGS.iter())
}

/// A configuration problem, always naming the setting.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    /// A setting had a value that does not parse.
    #[error("invalid {setting}: {reason}")]
    Invalid {
        /// The environment variable (or file key) at fault.
        setting: String,
        /// Why it was rejected; never contains a secret's value.
        reason: String,
    },
    /// The configuration file could not be read or parsed.
    #[error("invalid TESSERA_CONFIG file {path}: {reason}")]
    File {
        /// The file.
        path: String,
        /// What went wrong.
        reason: String,
    },
}

/// Reads the process environment and the configuration file it names (if that exists).
///
/// # Errors
/// Returns [`ConfigError::File`] when the file exists but is not valid TOML of scalars.
pub fn sources_from_process() -> Result<Sources, ConfigError> {
    let env: BTreeMap<String, String> = all_settings()
        .filter_map(|setting| {
            std::env::var(setting.env)
                .ok()
                .map(|value| (setting.env.to_owned(), value))
        })
        .collect();
    let path = env.get("TESSERA_CONFIG").cloned();
    let explicit = path.is_some();
    let path = path.unwrap_or_else(|| "tessera.toml".to_owned());
    let file = match std::fs::read_to_string(Path::new(&path)) {
        Ok(text) => parse_file(&path, &text)?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound && !explicit => BTreeMap::new(),
        Err(error) => {
            return Err(ConfigError::File {
                path,
                reason: error.to_string(),
            })
        }
    };
    Ok(Sources { env, file })
}

fn parse_file(path: &str, text: &str) -> Result<BTreeMap<String, String>, ConfigError> {
    let table: toml::Table = text
        .parse()
        .map_err(|error: toml::de::Error| ConfigError::File {
            path: path.to_owned(),
            reason: error.message().to_owned(),
        })?;
    let mut values = BTreeMap::new();
    for (key, value) in table {
        if !all_settings().any(|setting| setting.key == key) {
            return Err(ConfigError::File {
                path: path.to_owned(),
                reason: format!("unknown key `{key}`"),
            });
        }
        let text = match value {
            toml::Value::String(text) => text,
            toml::Value::Integer(number) => number.to_string(),
            toml::Value::Boolean(flag) => flag.to_string(),
            other => {
                return Err(ConfigError::File {
                    path: path.to_owned(),
                    reason: format!(
                        "`{key}` must be a string or number, not {}",
                        other.type_str()
                    ),
                })
            }
        };
        values.insert(key, text);
    }
    Ok(values)
}

impl Config {
    /// Builds the configuration from raw sources, applying defaults.
    ///
    /// # Errors
    /// Returns the first invalid setting as a [`ConfigError::Invalid`] naming it.
    pub fn from_sources(sources: &Sources) -> Result<Self, ConfigError> {
        let lookup = |env: &str| sources.lookup(SETTINGS, env);
        let invalid = |setting: String, reason: String| ConfigError::Invalid { setting, reason };

        let addr = match lookup("TESSERA_ADDR") {
            Some((name, raw)) => raw.parse::<SocketAddr>().map_err(|_| {
                invalid(
                    name,
                    format!("`{raw}` is not HOST:PORT, e.g. 127.0.0.1:3000"),
                )
            })?,
            None => SocketAddr::from(([127, 0, 0, 1], 3000)),
        };
        let database_url = match lookup("DATABASE_URL") {
            // The reason never echoes the URL: it may carry a password.
            Some((name, raw)) => {
                DatabaseUrl::parse(&raw).map_err(|reason| invalid(name, reason))?
            }
            None => DatabaseUrl::Sqlite("tessera.db".to_owned()),
        };
        let model = match lookup("TESSERA_MODEL") {
            Some((name, raw)) => parse_model(&raw).map_err(|reason| invalid(name, reason))?,
            None => "heuristic".to_owned(),
        };
        let model_settings = crate::llm::ModelSettings::from_sources(sources);
        // Built once here and dropped (no I/O) so that a missing key or a bad base URL, timeout
        // or retry count of the configured provider stops the start with one line naming it.
        if model.contains(':') {
            crate::llm::model_from_spec(&model, &|name| model_settings.get(name)).map_err(
                |error| match error {
                    crate::llm::ModelError::BadConfig { setting, reason } => {
                        invalid(model_settings.origin(&setting), reason)
                    }
                    other => invalid("TESSERA_MODEL".to_owned(), other.to_string()),
                },
            )?;
        }
        let api_token = match lookup("TESSERA_API_TOKEN") {
            Some((name, raw)) if raw.trim().len() < 16 => {
                return Err(invalid(name, "must be at least 16 characters".to_owned()));
            }
            Some((_, raw)) => Some(Secret::new(raw.trim())),
            None => None,
        };
        let admin_password = match lookup("TESSERA_ADMIN_PASSWORD") {
            Some((name, raw)) if raw.chars().count() < 8 => {
                return Err(invalid(name, "must be at least 8 characters".to_owned()));
            }
            Some((_, raw)) => Some(Secret::new(raw)),
            None => None,
        };
        let public_url = match lookup("TESSERA_PUBLIC_URL") {
            Some((name, raw)) => {
                // Links sent to people are built on it: a URL without a host would send them nowhere.
                let usable = url::Url::parse(&raw).is_ok_and(|url| {
                    matches!(url.scheme(), "http" | "https")
                        && url.host_str().is_some_and(|host| !host.is_empty())
                        && url.query().is_none()
                        && url.fragment().is_none()
                        && url.username().is_empty()
                });
                if !usable {
                    return Err(invalid(
                        name,
                        format!(
                            "`{raw}` must be an http:// or https:// URL with a host, and no query, fragment or user"
                        ),
                    ));
                }
                raw.trim_end_matches('/').to_owned()
            }
            None => format!("http://{addr}"),
        };
        let body_limit = match lookup("TESSERA_BODY_LIMIT") {
            Some((name, raw)) => match raw.parse::<usize>() {
                Ok(limit) if limit >= 1024 => limit,
                _ => {
                    return Err(invalid(
                        name,
                        format!("`{raw}` must be a whole number of bytes, at least 1024"),
                    ))
                }
            },
            None => 1024 * 1024,
        };
        let site_root = lookup("TESSERA_SITE_ROOT")
            .map(|(_, raw)| raw.trim().to_owned())
            .filter(|raw| !raw.is_empty());
        let log =
            lookup("TESSERA_LOG").map_or_else(|| "info,tessera=debug".to_owned(), |(_, raw)| raw);
        if let Some((name, raw)) = lookup("TESSERA_LOG") {
            tracing_subscriber::EnvFilter::try_new(&raw)
                .map_err(|error| invalid(name, error.to_string()))?;
        }
        let log_format = match lookup("TESSERA_LOG_FORMAT") {
            Some((name, raw)) => raw.parse().map_err(|reason| invalid(name, reason))?,
            None => crate::telemetry::LogFormat::Text,
        };
        let notify =
            crate::notify::NotifyConfig::from_sources(sources).map_err(|error| match error {
                crate::notify::NotifyError::BadConfig { setting, reason } => {
                    invalid(setting, reason)
                }
                other => invalid("notifications".to_owned(), other.to_string()),
            })?;
        let runner_lease = match lookup("TESSERA_RUNNER_LEASE_SECS") {
            Some((name, raw)) => match raw.trim().parse::<u64>() {
                Ok(seconds) if (1..=3600).contains(&seconds) => Duration::from_secs(seconds),
                _ => {
                    return Err(invalid(
                        name,
                        format!("`{raw}` must be a whole number of seconds from 1 to 3600"),
                    ))
                }
            },
            None => DEFAULT_RUNNER_LEASE,
        };
        let timer_poll = match lookup("TESSERA_TIMER_POLL_MS") {
            Some((name, raw)) => match raw.trim().parse::<u64>() {
                Ok(millis) if (10..=60_000).contains(&millis) => Duration::from_millis(millis),
                _ => {
                    return Err(invalid(
                        name,
                        format!("`{raw}` must be a whole number of milliseconds from 10 to 60000"),
                    ))
                }
            },
            None => DEFAULT_TIMER_POLL,
        };
        let groups = match lookup("TESSERA_GROUPS") {
            Some((name, raw)) => {
                crate::pages::groups::Groups::parse(&raw).map_err(|reason| invalid(name, reason))?
            }
            None => crate::pages::groups::Groups::default(),
        };
        let drill_log = lookup("TESSERA_DRILL_LOG")
            .map(|(_, raw)| raw.trim().to_owned())
            .filter(|raw| !raw.is_empty())
            .map(PathBuf::from);
        // The default folder may be absent (no YAML workflows); a folder someone named must exist,
        // or a typo would silently start the server without the workflows they wrote.
        let workflows_dir = match lookup("TESSERA_WORKFLOWS_DIR") {
            Some((name, raw)) => {
                let dir = PathBuf::from(raw.trim());
                if !dir.is_dir() {
                    return Err(invalid(
                        name,
                        format!("`{}` is not a folder", dir.display()),
                    ));
                }
                dir
            }
            None => PathBuf::from("workflows"),
        };
        let workflows_dir = Some(workflows_dir);
        let workflow_http_hosts = match lookup("TESSERA_WORKFLOW_HTTP_HOSTS") {
            Some((name, raw)) => {
                crate::workflow::yaml::HostAllowlist::parse(&raw, &public_url)
                    .map_err(|reason| invalid(name, reason))?;
                raw
            }
            None => "self".to_owned(),
        };
        let demo = match lookup("TESSERA_DEMO") {
            Some((name, raw)) => parse_switch(&raw).map_err(|reason| invalid(name, reason))?,
            None => true,
        };
        let sites = lookup("TESSERA_SITES")
            .map(|(_, raw)| {
                raw.split(',')
                    .map(str::trim)
                    .filter(|path| !path.is_empty())
                    .map(PathBuf::from)
                    .collect()
            })
            .unwrap_or_default();
        let behind_proxy = match lookup("TESSERA_BEHIND_PROXY") {
            Some((name, raw)) => parse_switch(&raw).map_err(|reason| invalid(name, reason))?,
            None => false,
        };
        let outbound_allow = match lookup("TESSERA_OUTBOUND_ALLOW") {
            Some((name, raw)) => crate::net::outbound::OutboundAllow::parse(&raw)
                .map_err(|reason| invalid(name, reason))?,
            None => crate::net::outbound::OutboundAllow::default(),
        };
        let access = access::AccessConfig::from_sources(sources)?;
        Ok(Self {
            addr,
            database_url,
            model,
            model_settings,
            api_token,
            admin_password,
            public_url,
            body_limit,
            site_root,
            log,
            log_format,
            notify,
            runner_lease,
            timer_poll,
            groups,
            drill_log,
            workflows_dir,
            workflow_http_hosts,
            demo,
            sites,
            behind_proxy,
            outbound_allow,
            access,
        })
    }

    /// A configuration for tests: SQLite at `database_url`, port 0, nothing read from the environment.
    #[must_use]
    pub fn for_tests(database_url: DatabaseUrl) -> Self {
        Self {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            database_url,
            model: "heuristic".to_owned(),
            model_settings: crate::llm::ModelSettings::default(),
            api_token: Some(Secret::new("test-token-0123456789abcdef")),
            admin_password: Some(Secret::new("test-admin-password")),
            public_url: "http://127.0.0.1".to_owned(),
            body_limit: 1024 * 1024,
            site_root: None,
            log: "warn".to_owned(),
            log_format: crate::telemetry::LogFormat::Text,
            notify: crate::notify::NotifyConfig::default(),
            runner_lease: DEFAULT_RUNNER_LEASE,
            // Tests wait on reminders of a second or two: a tenth of that is plenty.
            timer_poll: Duration::from_millis(100),
            groups: crate::pages::groups::Groups::default(),
            drill_log: None,
            workflows_dir: None,
            workflow_http_hosts: "self".to_owned(),
            demo: true,
            sites: Vec::new(),
            behind_proxy: false,
            outbound_allow: crate::net::outbound::OutboundAllow::default(),
            access: access::AccessConfig::default(),
        }
    }
}

/// An on/off setting: `true`/`false`, `1`/`0`, `yes`/`no` or `on`/`off`, any case.
fn parse_switch(raw: &str) -> Result<bool, String> {
    match raw.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(format!("`{raw}` is not true or false")),
    }
}

fn parse_model(raw: &str) -> Result<String, String> {
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

/// The text of `tessera --help`: every setting with its default; secrets show no value.
#[must_use]
pub fn help_text() -> String {
    let mut text = String::from(
        "tessera — server-rendered generative UI\n\nUsage: tessera [--help | --version]\n\
         \x20      tessera eval [--scenarios DIR] [--transcripts DIR] [--json]   (see tessera eval --help)\n\
         \x20      tessera backup FILE    copy the live SQLite database into FILE (PostgreSQL: pg_dump)\n\
         \x20      tessera restore FILE   put a backup in place of the SQLite database, servers stopped\n\n\
         Settings (environment variable, else the tessera.toml key, else the default):\n\n",
    );
    for setting in all_settings() {
        let secret = if setting.secret {
            " [secret: never logged]"
        } else {
            ""
        };
        text.push_str(&format!(
            "  {:<20} {}{}\n  {:<20} file key: {}, default: {}\n\n",
            setting.env, setting.help, secret, "", setting.key, setting.default
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources(env: &[(&str, &str)], file: &[(&str, &str)]) -> Sources {
        Sources {
            env: env
                .iter()
                .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
                .collect(),
            file: file
                .iter()
                .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
                .collect(),
        }
    }

    #[test]
    fn defaults_run_on_sqlite_with_the_heuristic_model() -> Result<(), ConfigError> {
        let config = Config::from_sources(&Sources::default())?;
        assert_eq!(config.addr.to_string(), "127.0.0.1:3000");
        assert_eq!(
            config.database_url,
            DatabaseUrl::Sqlite("tessera.db".into())
        );
        assert_eq!(config.model, "heuristic");
        assert_eq!(config.public_url, "http://127.0.0.1:3000");
        assert!(config.api_token.is_none());
        Ok(())
    }

    #[test]
    fn a_public_url_without_a_host_is_refused_naming_the_setting() {
        for bad in [
            "https://",
            "ftp://example.com",
            "https://example.com/?x=1",
            "example.com",
        ] {
            let error = Config::from_sources(&sources(&[("TESSERA_PUBLIC_URL", bad)], &[]))
                .err()
                .map(|error| error.to_string())
                .unwrap_or_default();
            assert!(error.contains("TESSERA_PUBLIC_URL"), "{bad}: {error}");
        }
        let config = Config::from_sources(&sources(
            &[("TESSERA_PUBLIC_URL", "https://tessera.example.com/base/")],
            &[],
        ));
        assert_eq!(
            config.map(|config| config.public_url).ok().as_deref(),
            Some("https://tessera.example.com/base")
        );
    }

    #[test]
    fn environment_wins_over_the_file() -> Result<(), ConfigError> {
        let config = Config::from_sources(&sources(
            &[
                ("TESSERA_ADDR", "0.0.0.0:8080"),
                ("OPENAI_API_KEY", "sk-test"),
            ],
            &[("addr", "127.0.0.1:9000"), ("model", "openai:gpt-4.1-mini")],
        ))?;
        assert_eq!(config.addr.to_string(), "0.0.0.0:8080");
        assert_eq!(config.model, "openai:gpt-4.1-mini");
        Ok(())
    }

    #[test]
    fn a_bad_address_names_the_setting() {
        let error = Config::from_sources(&sources(&[("TESSERA_ADDR", "nowhere")], &[])).err();
        assert_eq!(
            error.map(|error| error.to_string()),
            Some(
                "invalid TESSERA_ADDR: `nowhere` is not HOST:PORT, e.g. 127.0.0.1:3000".to_owned()
            )
        );
    }

    #[test]
    fn a_bad_file_value_names_env_and_key() {
        let error = Config::from_sources(&sources(&[], &[("body_limit", "lots")]))
            .err()
            .map(|error| error.to_string());
        assert!(error.is_some_and(
            |text| text.starts_with("invalid TESSERA_BODY_LIMIT (tessera.toml `body_limit`)")
        ));
    }

    #[test]
    fn a_bad_database_url_never_echoes_the_value() {
        let error = Config::from_sources(&sources(
            &[("DATABASE_URL", "mysql://root:hunter2@db/x")],
            &[],
        ))
        .err()
        .map(|error| error.to_string());
        let text = error.unwrap_or_default();
        assert!(text.starts_with("invalid DATABASE_URL"), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
    }

    #[test]
    fn secrets_are_hidden_from_debug_output() -> Result<(), ConfigError> {
        let config = Config::from_sources(&sources(
            &[
                ("TESSERA_API_TOKEN", "super-secret-token-value"),
                ("DATABASE_URL", "postgres://u:pw-XYZ@h/db"),
            ],
            &[],
        ))?;
        let printed = format!("{config:?}");
        assert!(!printed.contains("super-secret-token-value"), "{printed}");
        assert!(!printed.contains("pw-XYZ"), "{printed}");
        Ok(())
    }

    #[test]
    fn the_runner_lease_is_whole_seconds_and_the_drill_is_off_by_default() -> Result<(), ConfigError>
    {
        let config = Config::from_sources(&Sources::default())?;
        assert_eq!(config.runner_lease, Duration::from_secs(30));
        assert!(config.drill_log.is_none());
        let config = Config::from_sources(&sources(
            &[("TESSERA_RUNNER_LEASE_SECS", "2")],
            &[("drill_log", "/tmp/drill.log")],
        ))?;
        assert_eq!(config.runner_lease, Duration::from_secs(2));
        assert_eq!(config.drill_log, Some(PathBuf::from("/tmp/drill.log")));
        let error = Config::from_sources(&sources(&[("TESSERA_RUNNER_LEASE_SECS", "0")], &[]))
            .err()
            .map(|error| error.to_string());
        assert!(error.is_some_and(|text| text.starts_with("invalid TESSERA_RUNNER_LEASE_SECS")));
        Ok(())
    }

    #[test]
    fn yaml_workflows_load_from_workflows_and_may_call_this_server_by_default(
    ) -> Result<(), ConfigError> {
        let config = Config::from_sources(&Sources::default())?;
        assert_eq!(config.workflows_dir, Some(PathBuf::from("workflows")));
        let error = Config::from_sources(&sources(
            &[("TESSERA_WORKFLOWS_DIR", "/nonexistent/workflwos")],
            &[],
        ))
        .err()
        .map(|error| error.to_string());
        assert_eq!(
            error.as_deref(),
            Some("invalid TESSERA_WORKFLOWS_DIR: `/nonexistent/workflwos` is not a folder")
        );
        assert_eq!(config.workflow_http_hosts, "self");
        let error = Config::from_sources(&sources(
            &[("TESSERA_WORKFLOW_HTTP_HOSTS", "api.example.com, http://x/y")],
            &[],
        ))
        .err()
        .map(|error| error.to_string());
        assert_eq!(
            error.as_deref(),
            Some("invalid TESSERA_WORKFLOW_HTTP_HOSTS: `http://x/y` is not a host or host:port")
        );
        Ok(())
    }

    #[test]
    fn the_demo_is_on_and_no_proxy_is_trusted_unless_said_otherwise() -> Result<(), ConfigError> {
        let config = Config::from_sources(&Sources::default())?;
        assert!(config.demo);
        assert!(!config.behind_proxy);
        let config = Config::from_sources(&sources(
            &[("TESSERA_DEMO", "off")],
            &[("behind_proxy", "true")],
        ))?;
        assert!(!config.demo);
        assert!(config.behind_proxy);
        let error = Config::from_sources(&sources(&[("TESSERA_BEHIND_PROXY", "maybe")], &[]))
            .err()
            .map(|error| error.to_string());
        assert_eq!(
            error.as_deref(),
            Some("invalid TESSERA_BEHIND_PROXY: `maybe` is not true or false")
        );
        Ok(())
    }

    #[test]
    fn logs_are_text_unless_json_is_asked_and_the_built_in_site_is_served_unless_a_folder_is_named(
    ) -> Result<(), ConfigError> {
        use crate::telemetry::LogFormat;
        let config = Config::from_sources(&Sources::default())?;
        assert_eq!(config.log_format, LogFormat::Text);
        assert_eq!(config.site_root, None);
        let config = Config::from_sources(&sources(
            &[("TESSERA_SITE_ROOT", "target/site")],
            &[("log_format", "JSON")],
        ))?;
        assert_eq!(config.log_format, LogFormat::Json);
        assert_eq!(config.site_root.as_deref(), Some("target/site"));
        let error = Config::from_sources(&sources(&[("TESSERA_LOG_FORMAT", "yaml")], &[]))
            .err()
            .map(|error| error.to_string());
        assert_eq!(
            error.as_deref(),
            Some("invalid TESSERA_LOG_FORMAT: `yaml` is not text or json")
        );
        Ok(())
    }

    #[test]
    fn outbound_requests_reach_public_addresses_only_unless_a_host_is_listed() -> anyhow::Result<()>
    {
        let loopback = url::Url::parse("http://127.0.0.1:8080/hook")?;
        let config = Config::from_sources(&Sources::default())?;
        assert!(!config.outbound_allow.admits(&loopback));
        let config = Config::from_sources(&sources(&[], &[("outbound_allow", "127.0.0.1:8080")]))?;
        assert!(config.outbound_allow.admits(&loopback));
        let error = Config::from_sources(&sources(
            &[("TESSERA_OUTBOUND_ALLOW", "http://127.0.0.1/")],
            &[],
        ))
        .err()
        .map(|error| error.to_string());
        assert_eq!(
            error.as_deref(),
            Some("invalid TESSERA_OUTBOUND_ALLOW: `http://127.0.0.1/` is not a host or host:port")
        );
        Ok(())
    }

    #[test]
    fn unknown_providers_are_rejected() {
        let error = Config::from_sources(&sources(&[("TESSERA_MODEL", "skynet:v1")], &[]))
            .err()
            .map(|error| error.to_string());
        assert_eq!(error.as_deref(), Some("invalid TESSERA_MODEL: unknown provider `skynet`; use openai, anthropic, gemini, ollama or heuristic"));
    }

    #[test]
    fn unknown_file_keys_are_rejected() {
        let error = parse_file("tessera.toml", "adress = \"x\"")
            .err()
            .map(|error| error.to_string());
        assert_eq!(
            error.as_deref(),
            Some("invalid TESSERA_CONFIG file tessera.toml: unknown key `adress`")
        );
    }

    #[test]
    fn model_settings_come_from_tessera_toml_unless_the_environment_sets_them() -> anyhow::Result<()>
    {
        let config = Config::from_sources(&sources(
            &[("TESSERA_MODEL_MAX_RETRIES", "0")],
            &[
                ("model", "openai:qwen2.5"),
                ("openai_base_url", "http://localhost:8000/v1"),
                ("model_max_retries", "5"),
            ],
        ))?;
        let settings = &config.model_settings;
        assert_eq!(
            settings.get("OPENAI_BASE_URL").as_deref(),
            Some("http://localhost:8000/v1")
        );
        assert_eq!(
            settings.get("TESSERA_MODEL_MAX_RETRIES").as_deref(),
            Some("0")
        );
        assert_eq!(settings.get("OPENAI_API_KEY"), None);
        // A local server needs no key: the file's base URL is what lets this model build.
        let models =
            crate::agent::AllowedModels::from_spec(&config.model, &|name| settings.get(name))?;
        assert_eq!(models.configured_spec(), "openai:qwen2.5");
        Ok(())
    }

    #[test]
    fn a_bad_model_setting_is_one_line_naming_the_variable_and_the_file_key() {
        let error = Config::from_sources(&sources(
            &[("OPENAI_API_KEY", "sk-secret-value-1")],
            &[("model", "openai:gpt-4.1"), ("model_timeout_secs", "soon")],
        ))
        .err()
        .map(|error| error.to_string());
        assert_eq!(
            error.as_deref(),
            Some("invalid TESSERA_MODEL_TIMEOUT_SECS (tessera.toml `model_timeout_secs`): `soon` is not a number of seconds")
        );
        let error = Config::from_sources(&sources(&[("TESSERA_MODEL", "anthropic:claude")], &[]))
            .err()
            .map(|error| error.to_string());
        assert_eq!(
            error.as_deref(),
            Some("invalid ANTHROPIC_API_KEY: missing: the provider needs an API key")
        );
    }

    #[test]
    fn model_settings_are_read_only_for_a_provider_model_and_keys_never_print(
    ) -> Result<(), ConfigError> {
        // The heuristic needs no provider, so provider settings are not judged (as before they
        // moved into the table).
        let config = Config::from_sources(&sources(&[], &[("model_timeout_secs", "soon")]))?;
        assert_eq!(config.model, "heuristic");
        let config = Config::from_sources(&sources(
            &[("GEMINI_API_KEY", "AIza-very-secret-key")],
            &[("model", "gemini:gemini-2.5-flash")],
        ))?;
        let printed = format!("{config:?}");
        assert!(!printed.contains("AIza-very-secret-key"), "{printed}");
        assert!(printed.contains("GEMINI_API_KEY"), "{printed}");
        Ok(())
    }

    #[test]
    fn help_lists_every_setting_with_its_default() {
        let help = help_text();
        for setting in all_settings() {
            assert!(help.contains(setting.env), "{} missing", setting.env);
            assert!(
                help.contains(&format!("file key: {},", setting.key)),
                "{} file key missing",
                setting.env
            );
            assert!(
                help.contains(setting.default),
                "{} default missing",
                setting.env
            );
        }
        for provider_setting in [
            "OPENAI_API_KEY",
            "GEMINI_BASE_URL",
            "TESSERA_MODEL_TIMEOUT_SECS",
        ] {
            assert!(
                help.contains(provider_setting),
                "{provider_setting} missing"
            );
        }
    }
}
