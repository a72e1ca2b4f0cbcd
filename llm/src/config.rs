//! Choosing a model from `TESSERA_MODEL` and the provider settings.
//!
//! [`model_from_spec`] turns `provider:model` into a ready [`ChatModel`] wrapped in
//! [`Retrying`], reading keys and base URLs through a lookup function so tests never touch the
//! process environment. It does no I/O and sends nothing: a missing key is a
//! [`ModelError::BadConfig`] naming the variable, at startup rather than at the first page.
//! `heuristic` is not a provider model; the caller handles it before calling this.
//!
//! The provider settings are part of the server's settings table ([`SETTINGS`], chained into
//! `config::all_settings`), so they are listed by `--help` and may be set in `tessera.toml`;
//! [`ModelSettings`] holds their values as read (environment first, then the file).
//!
//! | spec | env var | `tessera.toml` key | default |
//! |---|---|---|---|
//! | `openai:MODEL` | `OPENAI_API_KEY` | `openai_api_key` | required unless `OPENAI_BASE_URL` is set |
//! | | `OPENAI_BASE_URL` | `openai_base_url` | `https://api.openai.com/v1` (vLLM, llama.cpp, `OpenRouter`, Azure deployment URLs) |
//! | | `OPENAI_API_VERSION` | `openai_api_version` | unset; when set, Azure style: `api-key` header and `?api-version=` |
//! | `ollama:MODEL` | `OLLAMA_BASE_URL` | `ollama_base_url` | `http://localhost:11434/v1` (`/v1` added to a bare host) |
//! | `anthropic:MODEL` | `ANTHROPIC_API_KEY` | `anthropic_api_key` | required |
//! | | `ANTHROPIC_BASE_URL` | `anthropic_base_url` | `https://api.anthropic.com` |
//! | `gemini:MODEL` | `GEMINI_API_KEY` | `gemini_api_key` | required |
//! | | `GEMINI_BASE_URL` | `gemini_base_url` | `https://generativelanguage.googleapis.com` |
//! | all | `TESSERA_MODEL_TIMEOUT_SECS` | `model_timeout_secs` | `60` (per call) |
//! | all | `TESSERA_MODEL_MAX_RETRIES` | `model_max_retries` | `2` (so 3 attempts) |
//!
//! The token limit goes in `max_completion_tokens` for OpenAI and Azure and in `max_tokens`
//! for any other OpenAI-compatible server, which is the field they all understand. An empty
//! variable counts as unset.

use std::{collections::BTreeMap, fmt, sync::Arc, time::Duration};

use super::{
    anthropic::{AnthropicChat, AnthropicConfig, ANTHROPIC_BASE_URL},
    gemini::{GeminiChat, GeminiConfig, GEMINI_BASE_URL},
    model::{ChatModel, ModelError, PageMode, Result},
    openai::{
        check_base_url, MaxTokensField, OpenAiAuth, OpenAiChat, OpenAiConfig, OLLAMA_BASE_URL,
        OPENAI_BASE_URL,
    },
    retry::{ModelCallPolicy, Retrying},
};
use tessera_settings::{Secret, Setting, Sources};

/// Every model provider setting, for `--help` and the `tessera.toml` keys.
pub const SETTINGS: &[Setting] = &[
    Setting {
        env: "OPENAI_API_KEY",
        key: "openai_api_key",
        default: "(unset; openai:MODEL needs it unless OPENAI_BASE_URL is set)",
        help: "API key for openai:MODEL",
        secret: true,
    },
    Setting {
        env: "OPENAI_BASE_URL",
        key: "openai_base_url",
        default: OPENAI_BASE_URL,
        help: "base URL for openai:MODEL: any OpenAI-compatible server (vLLM, llama.cpp, OpenRouter, an Azure deployment URL)",
        secret: false,
    },
    Setting {
        env: "OPENAI_API_VERSION",
        key: "openai_api_version",
        default: "(unset)",
        help: "when set, openai:MODEL talks Azure style: api-key header and ?api-version=",
        secret: false,
    },
    Setting {
        env: "OLLAMA_BASE_URL",
        key: "ollama_base_url",
        default: OLLAMA_BASE_URL,
        help: "base URL for ollama:MODEL (/v1 is added to a bare host)",
        secret: false,
    },
    Setting {
        env: "ANTHROPIC_API_KEY",
        key: "anthropic_api_key",
        default: "(unset; anthropic:MODEL needs it)",
        help: "API key for anthropic:MODEL",
        secret: true,
    },
    Setting {
        env: "ANTHROPIC_BASE_URL",
        key: "anthropic_base_url",
        default: ANTHROPIC_BASE_URL,
        help: "base URL for anthropic:MODEL",
        secret: false,
    },
    Setting {
        env: "GEMINI_API_KEY",
        key: "gemini_api_key",
        default: "(unset; gemini:MODEL needs it)",
        help: "API key for gemini:MODEL",
        secret: true,
    },
    Setting {
        env: "GEMINI_BASE_URL",
        key: "gemini_base_url",
        default: GEMINI_BASE_URL,
        help: "base URL for gemini:MODEL",
        secret: false,
    },
    Setting {
        env: "TESSERA_PAGE_MODE",
        key: "page_mode",
        default: "auto",
        help: "how a model builds a page: auto (the whole page in one schema-constrained answer, the tool loop if the provider refuses the schema), whole (no tool loop) or tools (one tool call per component)",
        secret: false,
    },
    Setting {
        env: "TESSERA_MODEL_TEMPERATURE",
        key: "model_temperature",
        default: "(unset: the provider's default)",
        help: "sampling temperature, 0 to 2, for every model call (0 makes small local models steadier; some hosted reasoning models refuse any value)",
        secret: false,
    },
    Setting {
        env: "TESSERA_MODEL_TIMEOUT_SECS",
        key: "model_timeout_secs",
        default: "60",
        help: "seconds one model call may take (decimals allowed)",
        secret: false,
    },
    Setting {
        env: "TESSERA_MODEL_MAX_RETRIES",
        key: "model_max_retries",
        default: "2",
        help: "retries of a failed model call, 0 to 10 (2 means 3 attempts)",
        secret: false,
    },
];

/// The model provider settings as read: each from the environment, else its `tessera.toml`
/// key. [`ModelSettings::get`] is the lookup [`model_from_spec`] takes.
#[derive(Clone, Default)]
pub struct ModelSettings {
    /// Variable name → (the name an error shows, the raw value).
    values: BTreeMap<&'static str, (String, String)>,
}

impl fmt::Debug for ModelSettings {
    /// Names only: the values include API keys.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.debug_set().entries(self.values.keys()).finish()
    }
}

impl ModelSettings {
    /// The [`SETTINGS`] found in `sources`, the environment winning over the file.
    #[must_use]
    pub fn from_sources(sources: &Sources) -> Self {
        let values = SETTINGS
            .iter()
            .filter_map(|setting| Some((setting.env, sources.lookup(SETTINGS, setting.env)?)))
            .collect();
        Self { values }
    }

    /// The raw value of the variable `env`, if it was set anywhere.
    #[must_use]
    pub fn get(&self, env: &str) -> Option<String> {
        self.values.get(env).map(|(_, value)| value.clone())
    }

    /// How an error names `env`: the variable, and the file key when the value came from the file.
    #[must_use]
    pub fn origin(&self, env: &str) -> String {
        self.values
            .get(env)
            .map_or_else(|| env.to_owned(), |(origin, _)| origin.clone())
    }
}

/// The setting that names the model.
const MODEL_SETTING: &str = "TESSERA_MODEL";
/// The most retries accepted; more only delays the fallback.
const MAX_RETRIES_LIMIT: u32 = 10;

/// Builds the model named by `spec` (`openai:gpt-4.1-mini`, `anthropic:claude-sonnet-4-5`,
/// `gemini:gemini-2.5-flash`, `ollama:llama3.1:8b`), with the timeout and retries from `env`.
///
/// # Errors
/// Returns [`ModelError::BadConfig`] naming the setting when the spec has no provider or model,
/// the provider is unknown, a required key is missing, a base URL is not http(s), or a timeout
/// or retry count does not parse.
pub fn model_from_spec(
    spec: &str,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Arc<dyn ChatModel>> {
    let lookup = |name: &str| env(name).filter(|value| !value.trim().is_empty());
    let Some((provider, model)) = spec.trim().split_once(':') else {
        return Err(ModelError::bad_config(
            MODEL_SETTING,
            format!(
                "`{spec}` is not provider:model (providers: openai, anthropic, gemini, ollama; \
                 `heuristic` needs no provider)"
            ),
        ));
    };
    if model.is_empty() {
        return Err(ModelError::bad_config(
            MODEL_SETTING,
            format!("`{spec}` names no model after `{provider}:`"),
        ));
    }
    let policy = retry_policy(&lookup)?;
    let mode = page_mode(&lookup)?;
    let temperature = temperature(&lookup)?;
    let model: Arc<dyn ChatModel> = match provider {
        "openai" => Arc::new(
            Retrying::new(OpenAiChat::new(openai(model, &lookup)?)?, policy)
                .with_page_mode(mode)
                .with_temperature(temperature),
        ),
        "ollama" => Arc::new(
            Retrying::new(OpenAiChat::new(ollama(model, &lookup)?)?, policy)
                .with_page_mode(mode)
                .with_temperature(temperature),
        ),
        "anthropic" => {
            let api_key = required_key(&lookup, "ANTHROPIC_API_KEY")?;
            let mut config = AnthropicConfig::new(model, api_key);
            if let Some(base_url) = base_url(&lookup, "ANTHROPIC_BASE_URL")? {
                config = config.with_base_url(base_url);
            }
            Arc::new(
                Retrying::new(AnthropicChat::new(config)?, policy)
                    .with_page_mode(mode)
                    .with_temperature(temperature),
            )
        }
        "gemini" => {
            let api_key = required_key(&lookup, "GEMINI_API_KEY")?;
            let mut config = GeminiConfig::new(model, api_key);
            if let Some(base_url) = base_url(&lookup, "GEMINI_BASE_URL")? {
                config = config.with_base_url(base_url);
            }
            Arc::new(
                Retrying::new(GeminiChat::new(config)?, policy)
                    .with_page_mode(mode)
                    .with_temperature(temperature),
            )
        }
        other => {
            return Err(ModelError::bad_config(
                MODEL_SETTING,
                format!("unknown provider `{other}` (known: openai, anthropic, gemini, ollama)"),
            ))
        }
    };
    Ok(model)
}

/// `TESSERA_MODEL_TEMPERATURE`, when set.
fn temperature(lookup: &impl Fn(&str) -> Option<String>) -> Result<Option<f32>> {
    lookup("TESSERA_MODEL_TEMPERATURE")
        .map(|raw| {
            raw.trim()
                .parse::<f32>()
                .ok()
                .filter(|value| (0.0..=2.0).contains(value))
                .ok_or_else(|| {
                    ModelError::bad_config(
                        "TESSERA_MODEL_TEMPERATURE",
                        format!("`{raw}` is not a number from 0 to 2"),
                    )
                })
        })
        .transpose()
}

/// `TESSERA_PAGE_MODE`, when set.
fn page_mode(lookup: &impl Fn(&str) -> Option<String>) -> Result<Option<PageMode>> {
    lookup("TESSERA_PAGE_MODE")
        .map(|raw| PageMode::parse(&raw))
        .transpose()
        .map_err(|reason| ModelError::bad_config("TESSERA_PAGE_MODE", reason))
}

/// The retry policy from `TESSERA_MODEL_TIMEOUT_SECS` and `TESSERA_MODEL_MAX_RETRIES`.
///
/// # Errors
/// Returns [`ModelError::BadConfig`] naming the variable when a value is not a positive number
/// of seconds or a retry count from 0 to 10.
pub fn retry_policy_from_env(env: &impl Fn(&str) -> Option<String>) -> Result<ModelCallPolicy> {
    retry_policy(&|name: &str| env(name).filter(|value| !value.trim().is_empty()))
}

fn retry_policy(lookup: &impl Fn(&str) -> Option<String>) -> Result<ModelCallPolicy> {
    let mut policy = ModelCallPolicy::default();
    if let Some(raw) = lookup("TESSERA_MODEL_TIMEOUT_SECS") {
        let seconds: f64 = raw.trim().parse().map_err(|_| {
            ModelError::bad_config(
                "TESSERA_MODEL_TIMEOUT_SECS",
                format!("`{raw}` is not a number of seconds"),
            )
        })?;
        policy.call_timeout = Duration::try_from_secs_f64(seconds)
            .ok()
            .filter(|timeout| !timeout.is_zero())
            .ok_or_else(|| {
                ModelError::bad_config(
                    "TESSERA_MODEL_TIMEOUT_SECS",
                    format!("`{raw}` must be more than 0 seconds"),
                )
            })?;
    }
    if let Some(raw) = lookup("TESSERA_MODEL_MAX_RETRIES") {
        let retries = raw
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|retries| *retries <= MAX_RETRIES_LIMIT)
            .ok_or_else(|| {
                ModelError::bad_config(
                    "TESSERA_MODEL_MAX_RETRIES",
                    format!("`{raw}` is not a whole number from 0 to {MAX_RETRIES_LIMIT}"),
                )
            })?;
        policy.max_attempts = retries + 1;
    }
    Ok(policy)
}

fn openai(model: &str, lookup: &impl Fn(&str) -> Option<String>) -> Result<OpenAiConfig> {
    let custom_base = base_url(lookup, "OPENAI_BASE_URL")?;
    let api_key = lookup("OPENAI_API_KEY").map(Secret::new);
    let api_version = lookup("OPENAI_API_VERSION");
    if api_key.is_none() && (custom_base.is_none() || api_version.is_some()) {
        return Err(ModelError::bad_config(
            "OPENAI_API_KEY",
            format!(
                "missing: `openai:{model}` needs a key (or set OPENAI_BASE_URL for a server \
                 that needs none)"
            ),
        ));
    }
    let max_tokens_field = if custom_base.is_none() || api_version.is_some() {
        MaxTokensField::MaxCompletionTokens
    } else {
        MaxTokensField::MaxTokens
    };
    let config = OpenAiConfig {
        provider: "openai".into(),
        model: model.to_owned(),
        base_url: custom_base.unwrap_or_else(|| OPENAI_BASE_URL.to_owned()),
        api_key,
        auth: OpenAiAuth::Bearer,
        api_version: None,
        max_tokens_field,
    };
    Ok(match api_version {
        Some(api_version) => config.with_azure_api_version(api_version),
        None => config,
    })
}

fn ollama(model: &str, lookup: &impl Fn(&str) -> Option<String>) -> Result<OpenAiConfig> {
    let mut config = OpenAiConfig::ollama(model);
    if let Some(base_url) = base_url(lookup, "OLLAMA_BASE_URL")? {
        // Ollama's own variables name the bare host; its OpenAI-compatible API is under /v1.
        let bare_host = reqwest::Url::parse(&base_url).is_ok_and(|url| url.path() == "/");
        config = config.with_base_url(if bare_host {
            format!("{}/v1", base_url.trim_end_matches('/'))
        } else {
            base_url
        });
    }
    Ok(config)
}

fn required_key(lookup: &impl Fn(&str) -> Option<String>, setting: &str) -> Result<Secret> {
    lookup(setting)
        .map(Secret::new)
        .ok_or_else(|| ModelError::bad_config(setting, "missing: the provider needs an API key"))
}

fn base_url(lookup: &impl Fn(&str) -> Option<String>, setting: &str) -> Result<Option<String>> {
    let Some(base_url) = lookup(setting) else {
        return Ok(None);
    };
    let base_url = base_url.trim().to_owned();
    check_base_url(&base_url, setting)?;
    Ok(Some(base_url))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect();
        move |name| map.get(name).cloned()
    }

    fn setting_of(outcome: Result<Arc<dyn ChatModel>>) -> Option<String> {
        match outcome {
            Err(ModelError::BadConfig { setting, .. }) => Some(setting),
            _ => None,
        }
    }

    #[test]
    fn each_provider_is_chosen_by_its_prefix() -> anyhow::Result<()> {
        let keys = env(&[
            ("OPENAI_API_KEY", "sk-1"),
            ("ANTHROPIC_API_KEY", "sk-ant-1"),
            ("GEMINI_API_KEY", "AIza1"),
        ]);
        for (spec, name) in [
            ("openai:gpt-4.1-mini", "openai:gpt-4.1-mini"),
            ("anthropic:claude-sonnet-4-5", "anthropic:claude-sonnet-4-5"),
            ("gemini:gemini-2.5-flash", "gemini:gemini-2.5-flash"),
            ("ollama:llama3.1:8b", "ollama:llama3.1:8b"),
        ] {
            assert_eq!(model_from_spec(spec, &keys)?.name().to_string(), name);
        }
        Ok(())
    }

    #[test]
    fn the_page_mode_is_the_providers_unless_the_setting_forces_one() -> anyhow::Result<()> {
        let local = |mode: Option<&str>| {
            let mut pairs = vec![("OPENAI_BASE_URL", "http://127.0.0.1:8089/v1")];
            pairs.extend(mode.map(|mode| ("TESSERA_PAGE_MODE", mode)));
            model_from_spec("openai:qwen", &env(&pairs))
        };
        assert_eq!(local(None)?.page_mode(), PageMode::Auto);
        assert_eq!(local(Some("tools"))?.page_mode(), PageMode::Tools);
        assert_eq!(local(Some("whole"))?.page_mode(), PageMode::Whole);
        let keyed = env(&[("GEMINI_API_KEY", "k"), ("TESSERA_PAGE_MODE", "tools")]);
        assert_eq!(
            model_from_spec("gemini:gemini-2.5-flash", &keyed)?.page_mode(),
            PageMode::Tools
        );
        let cold = env(&[
            ("OPENAI_BASE_URL", "http://127.0.0.1:8089/v1"),
            ("TESSERA_MODEL_TEMPERATURE", "hot"),
        ]);
        assert_eq!(
            setting_of(model_from_spec("openai:qwen", &cold)).as_deref(),
            Some("TESSERA_MODEL_TEMPERATURE")
        );
        let error = local(Some("grammar")).err().map(|error| error.to_string());
        assert_eq!(
            error.as_deref(),
            Some("invalid TESSERA_PAGE_MODE: `grammar` is not auto, whole or tools")
        );
        Ok(())
    }

    #[test]
    fn a_missing_key_names_the_variable() {
        let none = env(&[]);
        assert_eq!(
            setting_of(model_from_spec("openai:gpt-4.1-mini", &none)).as_deref(),
            Some("OPENAI_API_KEY")
        );
        assert_eq!(
            setting_of(model_from_spec("anthropic:claude-sonnet-4-5", &none)).as_deref(),
            Some("ANTHROPIC_API_KEY")
        );
        assert_eq!(
            setting_of(model_from_spec(
                "gemini:gemini-2.5-flash",
                &env(&[("GEMINI_API_KEY", " ")])
            ))
            .as_deref(),
            Some("GEMINI_API_KEY")
        );
    }

    #[test]
    fn a_local_openai_compatible_server_needs_no_key() -> anyhow::Result<()> {
        let local = env(&[("OPENAI_BASE_URL", "http://localhost:8000/v1")]);
        let config = openai("Qwen2.5-7B", &local)?;
        assert!(config.api_key.is_none());
        assert_eq!(config.max_tokens_field, MaxTokensField::MaxTokens);
        assert!(model_from_spec("openai:Qwen2.5-7B", &local).is_ok());
        Ok(())
    }

    #[test]
    fn an_api_version_switches_to_azure_style() -> anyhow::Result<()> {
        let azure = env(&[
            (
                "OPENAI_BASE_URL",
                "https://example.openai.azure.com/openai/deployments/gpt-4o",
            ),
            ("OPENAI_API_KEY", "azure-key"),
            ("OPENAI_API_VERSION", "2024-10-21"),
        ]);
        let config = openai("gpt-4o", &azure)?;
        assert_eq!(config.auth, OpenAiAuth::ApiKeyHeader);
        assert_eq!(config.api_version.as_deref(), Some("2024-10-21"));
        assert_eq!(config.max_tokens_field, MaxTokensField::MaxCompletionTokens);
        Ok(())
    }

    #[test]
    fn ollama_defaults_to_localhost_and_adds_v1_to_a_bare_host() -> anyhow::Result<()> {
        assert_eq!(ollama("llama3.1", &env(&[]))?.base_url, OLLAMA_BASE_URL);
        let remote = env(&[("OLLAMA_BASE_URL", "http://gpu-box:11434/")]);
        assert_eq!(
            ollama("llama3.1", &remote)?.base_url,
            "http://gpu-box:11434/v1"
        );
        Ok(())
    }

    #[test]
    fn bad_specs_and_values_name_the_setting() {
        let keys = env(&[("OPENAI_API_KEY", "sk-1")]);
        for (spec, extra, setting) in [
            ("heuristic", None, MODEL_SETTING),
            ("openai:", None, MODEL_SETTING),
            ("mistral:large", None, MODEL_SETTING),
            (
                "openai:gpt-4.1",
                Some(("OPENAI_BASE_URL", "ftp://x")),
                "OPENAI_BASE_URL",
            ),
            (
                "openai:gpt-4.1",
                Some(("TESSERA_MODEL_TIMEOUT_SECS", "soon")),
                "TESSERA_MODEL_TIMEOUT_SECS",
            ),
            (
                "openai:gpt-4.1",
                Some(("TESSERA_MODEL_TIMEOUT_SECS", "0")),
                "TESSERA_MODEL_TIMEOUT_SECS",
            ),
            (
                "openai:gpt-4.1",
                Some(("TESSERA_MODEL_MAX_RETRIES", "-1")),
                "TESSERA_MODEL_MAX_RETRIES",
            ),
            (
                "openai:gpt-4.1",
                Some(("TESSERA_MODEL_MAX_RETRIES", "99")),
                "TESSERA_MODEL_MAX_RETRIES",
            ),
        ] {
            let lookup = |name: &str| {
                extra
                    .filter(|(key, _)| *key == name)
                    .map(|(_, value)| value.to_owned())
                    .or_else(|| keys(name))
            };
            assert_eq!(
                setting_of(model_from_spec(spec, &lookup)).as_deref(),
                Some(setting),
                "{spec} {extra:?}"
            );
        }
    }

    #[test]
    fn timeout_and_retries_come_from_the_environment() -> anyhow::Result<()> {
        let policy = retry_policy_from_env(&env(&[
            ("TESSERA_MODEL_TIMEOUT_SECS", "12.5"),
            ("TESSERA_MODEL_MAX_RETRIES", "0"),
        ]))?;
        assert_eq!(policy.call_timeout, Duration::from_millis(12_500));
        assert_eq!(policy.max_attempts, 1);
        assert_eq!(
            retry_policy_from_env(&env(&[]))?,
            ModelCallPolicy::default()
        );
        Ok(())
    }

    #[test]
    fn a_bad_config_error_never_shows_the_key() {
        let secret = "sk-very-secret-value";
        let outcome = model_from_spec(
            "openai:gpt-4.1",
            &env(&[("OPENAI_API_KEY", secret), ("OPENAI_BASE_URL", "nope")]),
        );
        let text = outcome
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(text.contains("OPENAI_BASE_URL"));
        assert!(!text.contains(secret));
    }
}
