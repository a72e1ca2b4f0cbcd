//! Typed configuration, loaded once in `main`.
//!
//! Every setting is declared once, as a field of a `clap::Args` struct ([`ServerSettings`] and
//! one per layer): its environment variable, `tessera.toml` key, default, parser and help, so
//! `tessera --help`, the file's keys and the error messages can never disagree
//! (`tessera_settings`). Precedence: environment, then `tessera.toml` (or the file named by
//! `TESSERA_CONFIG`), then the default; an empty value is unset. A bad value is one
//! [`ConfigError`] line that names the setting; secrets are [`Secret`] and never printed.
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
mod server;

use std::{
    collections::BTreeMap,
    net::SocketAddr,
    path::{Path, PathBuf},
    time::Duration,
};

pub use server::ServerSettings;
pub use tessera_settings::{settings_of, Invalid, Secret, Setting, Sources};
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

/// `TESSERA_CONFIG`: read before the file it names, so it is no setting of the file's.
const CONFIG_FILE: &str = "TESSERA_CONFIG";

/// Every setting of every part of the server, as declared: the server's own
/// ([`ServerSettings`]), then the model providers' (`llm::ProviderSettings`), the
/// notification channels' (`notify::config::NotifySettings`) and access ([`access::AccessSettings`]).
/// `--help`, the environment reader and the file's key check use this.
#[must_use]
pub fn all_settings() -> Vec<Setting> {
    let mut settings = settings_of::<ServerSettings>();
    settings.extend(settings_of::<crate::llm::ProviderSettings>());
    settings.extend(settings_of::<crate::notify::config::NotifySettings>());
    settings.extend(settings_of::<access::AccessSettings>());
    settings
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

impl From<Invalid> for ConfigError {
    fn from(Invalid { setting, reason }: Invalid) -> Self {
        Self::Invalid { setting, reason }
    }
}

/// Reads the process environment and the configuration file it names (if that exists).
///
/// # Errors
/// Returns [`ConfigError::File`] when the file exists but is not valid TOML of scalars.
pub fn sources_from_process() -> Result<Sources, ConfigError> {
    let env: BTreeMap<String, String> = all_settings()
        .into_iter()
        .map(|setting| setting.env)
        .chain([CONFIG_FILE.to_owned()])
        .filter_map(|name| std::env::var(&name).ok().map(|value| (name, value)))
        .collect();
    let path = env.get(CONFIG_FILE).cloned();
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
    let settings = all_settings();
    let mut values = BTreeMap::new();
    for (key, value) in table {
        if !settings.iter().any(|setting| setting.key == key) {
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
        let invalid = |setting: &str, reason: String| ConfigError::Invalid {
            setting: setting.to_owned(),
            reason,
        };
        let settings: ServerSettings = sources.read()?;
        // The heuristic needs no provider, so provider settings are read (and judged) only
        // for a provider model.
        let model_settings = if settings.model.contains(':') {
            crate::llm::ModelSettings::from_sources(sources)?
        } else {
            crate::llm::ModelSettings::default()
        };
        // Built once here and dropped (no I/O) so that a missing key of the configured
        // provider stops the start with one line naming it.
        if settings.model.contains(':') {
            crate::llm::model_from_spec(&settings.model, &model_settings).map_err(|error| {
                match error {
                    crate::llm::ModelError::BadConfig { setting, reason } => {
                        invalid(&model_settings.origin(&setting), reason)
                    }
                    other => invalid("TESSERA_MODEL", other.to_string()),
                }
            })?;
        }
        let public_url = settings
            .public_url
            .unwrap_or_else(|| format!("http://{}", settings.addr));
        crate::workflow::yaml::HostAllowlist::parse(&settings.workflow_http_hosts, &public_url)
            .map_err(|reason| {
                let name = sources
                    .value("TESSERA_WORKFLOW_HTTP_HOSTS", "workflow_http_hosts")
                    .map_or_else(
                        || "TESSERA_WORKFLOW_HTTP_HOSTS".to_owned(),
                        |(name, _)| name,
                    );
                invalid(&name, reason)
            })?;
        let notify =
            crate::notify::NotifyConfig::from_sources(sources).map_err(|error| match error {
                crate::notify::NotifyError::BadConfig { setting, reason } => {
                    invalid(&setting, reason)
                }
                other => invalid("notifications", other.to_string()),
            })?;
        Ok(Self {
            addr: settings.addr,
            database_url: settings.database_url,
            model: settings.model,
            model_settings,
            api_token: settings.api_token,
            admin_password: settings.admin_password,
            public_url,
            body_limit: usize::try_from(settings.body_limit).unwrap_or(usize::MAX),
            site_root: settings.site_root,
            log: settings.log,
            log_format: settings.log_format,
            notify,
            runner_lease: Duration::from_secs(settings.runner_lease_secs),
            timer_poll: Duration::from_millis(settings.timer_poll_ms),
            groups: settings.groups.unwrap_or_default(),
            drill_log: settings.drill_log.map(PathBuf::from),
            workflows_dir: Some(
                settings
                    .workflows_dir
                    .unwrap_or_else(|| PathBuf::from("workflows")),
            ),
            workflow_http_hosts: settings.workflow_http_hosts,
            demo: settings.demo,
            sites: settings
                .sites
                .into_iter()
                .filter(|site| !site.is_empty())
                .map(PathBuf::from)
                .collect(),
            behind_proxy: settings.behind_proxy,
            outbound_allow: settings.outbound_allow.unwrap_or_default(),
            access: access::AccessConfig::from_sources(sources)?,
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
        let default = setting
            .default
            .map_or_else(String::new, |default| format!(", default: {default}"));
        text.push_str(&format!(
            "  {:<20} {}{}\n  {:<20} file key: {}{}\n\n",
            setting.env, setting.help, secret, "", setting.key, default
        ));
    }
    text.push_str(&format!(
        "  {CONFIG_FILE:<20} optional TOML file with the keys above (missing file is fine)\n  {:<20} default: tessera.toml\n",
        ""
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources(env: &[(&str, &str)], file: &[(&str, &str)]) -> Sources {
        Sources::from_pairs(env, file)
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
            settings.origin("OPENAI_BASE_URL"),
            "OPENAI_BASE_URL (tessera.toml `openai_base_url`)"
        );
        assert_eq!(
            settings.origin("TESSERA_MODEL_MAX_RETRIES"),
            "TESSERA_MODEL_MAX_RETRIES"
        );
        assert_eq!(
            settings.call_policy().max_attempts,
            1,
            "the environment's 0 retries"
        );
        // A local server needs no key: the file's base URL is what lets this model build.
        let models = crate::agent::AllowedModels::from_spec(&config.model, settings)?;
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
            assert!(help.contains(&setting.env), "{} missing", setting.env);
            assert!(help.contains(&setting.help), "{} help missing", setting.env);
            let key_line = match &setting.default {
                Some(default) => format!("file key: {}, default: {default}\n", setting.key),
                None => format!("file key: {}\n", setting.key),
            };
            assert!(
                help.contains(&key_line),
                "{} file key or default missing",
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
