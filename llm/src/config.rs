//! Choosing a model from `TESSERA_MODEL` and the provider settings.
//!
//! [`model_from_spec`] turns `provider:model` into a ready [`ChatModel`] wrapped in
//! [`Retrying`], with the keys and base URLs of [`ModelSettings`] (read from the sources `main`
//! gathered, or from a lookup in tests, never from the process environment here). It does no I/O and sends nothing: a missing key is a
//! [`ModelError::BadConfig`] naming the variable, at startup rather than at the first page.
//! `heuristic` is not a provider model; the caller handles it before calling this.
//!
//! The provider settings are declared once ([`ProviderSettings`], chained into
//! `config::all_settings`), so they are listed by `--help` and may be set in `tessera.toml`;
//! [`ModelSettings`] holds their values as read (environment first, then the file) and parsed:
//! a bad value stops the start when a provider model is configured (the heuristic reads none).
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

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use clap::Args;

use super::{
    anthropic::{AnthropicChat, ANTHROPIC_BASE_URL},
    gemini::{GeminiChat, GEMINI_BASE_URL},
    hosted::HostedConfig,
    model::{ChatModel, ModelError, PageMode, Result},
    openai::{
        check_base_url, MaxTokensField, OpenAiAuth, OpenAiChat, OpenAiConfig, OPENAI_BASE_URL,
    },
    retry::{ModelCallPolicy, Retrying},
};
use tessera_settings::{parse, settings_of, Invalid, Secret, Sources};

/// Every model provider setting as declared, for `--help`, the `tessera.toml` keys and
/// [`model_from_spec`]. None has a default value: an unset one leaves the provider's own.
// Each field's doc comment is its `--help` line, printed as written: no Markdown.
#[allow(clippy::doc_markdown)]
#[derive(Args, Clone, Debug, Default)]
pub struct ProviderSettings {
    /// API key for openai:MODEL (needed unless OPENAI_BASE_URL is set)
    #[arg(long = "openai_api_key", env = "OPENAI_API_KEY", hide_env_values = true,
          value_parser = parse::secret(1))]
    openai_api_key: Option<Secret>,
    /// base URL for openai:MODEL: any OpenAI-compatible server (vLLM, llama.cpp, OpenRouter,
    /// an Azure deployment URL) (unset: https://api.openai.com/v1)
    #[arg(long = "openai_base_url", env = "OPENAI_BASE_URL", value_parser = base_url)]
    openai_base_url: Option<String>,
    /// when set, openai:MODEL talks Azure style: api-key header and ?api-version=
    #[arg(long = "openai_api_version", env = "OPENAI_API_VERSION",
          value_parser = parse::trimmed)]
    openai_api_version: Option<String>,
    /// base URL for ollama:MODEL (/v1 is added to a bare host) (unset:
    /// http://localhost:11434/v1)
    #[arg(long = "ollama_base_url", env = "OLLAMA_BASE_URL", value_parser = base_url)]
    ollama_base_url: Option<String>,
    /// API key for anthropic:MODEL (which needs it)
    #[arg(long = "anthropic_api_key", env = "ANTHROPIC_API_KEY", hide_env_values = true,
          value_parser = parse::secret(1))]
    anthropic_api_key: Option<Secret>,
    /// base URL for anthropic:MODEL (unset: https://api.anthropic.com)
    #[arg(long = "anthropic_base_url", env = "ANTHROPIC_BASE_URL", value_parser = base_url)]
    anthropic_base_url: Option<String>,
    /// API key for gemini:MODEL (which needs it)
    #[arg(long = "gemini_api_key", env = "GEMINI_API_KEY", hide_env_values = true,
          value_parser = parse::secret(1))]
    gemini_api_key: Option<Secret>,
    /// base URL for gemini:MODEL (unset: https://generativelanguage.googleapis.com)
    #[arg(long = "gemini_base_url", env = "GEMINI_BASE_URL", value_parser = base_url)]
    gemini_base_url: Option<String>,
    /// how a model builds a page: auto (the whole page in one schema-constrained answer, the
    /// tool loop if the provider refuses the schema), whole (no tool loop) or tools (one tool
    /// call per component) (unset: auto)
    #[arg(long = "page_mode", env = "TESSERA_PAGE_MODE", value_parser = PageMode::parse)]
    page_mode: Option<PageMode>,
    /// sampling temperature, 0 to 2, for every model call (0 makes small local models
    /// steadier; some hosted reasoning models refuse any value) (unset: the provider's default)
    #[arg(long = "model_temperature", env = "TESSERA_MODEL_TEMPERATURE",
          value_parser = temperature)]
    model_temperature: Option<f32>,
    /// seconds one model call may take (decimals allowed) (unset: 60)
    #[arg(long = "model_timeout_secs", env = "TESSERA_MODEL_TIMEOUT_SECS",
          value_parser = call_timeout)]
    model_timeout_secs: Option<Duration>,
    /// retries of a failed model call, 0 to 10 (2 means 3 attempts; more only delays the
    /// fallback) (unset: 2)
    #[arg(long = "model_max_retries", env = "TESSERA_MODEL_MAX_RETRIES",
          value_parser = parse::whole(0..=10, ""))]
    model_max_retries: Option<u64>,
}

/// The model provider settings as read, with the name each one's errors give (the variable,
/// and the file key when the value came from the file); what [`model_from_spec`] takes.
#[derive(Clone, Debug, Default)]
pub struct ModelSettings {
    values: ProviderSettings,
    /// Variable → the name an error shows, for the settings that were set.
    names: BTreeMap<String, String>,
}

impl ModelSettings {
    /// The provider settings in `sources`, the environment winning over the file.
    ///
    /// # Errors
    /// The first value a setting refuses, naming it.
    pub fn from_sources(sources: &Sources) -> std::result::Result<Self, Invalid> {
        let names = settings_of::<ProviderSettings>()
            .into_iter()
            .filter_map(|setting| {
                Some((
                    setting.env.clone(),
                    sources.value(&setting.env, &setting.key)?.0,
                ))
            })
            .collect();
        Ok(Self {
            values: sources.read()?,
            names,
        })
    }

    /// The provider settings `lookup` answers by variable name (tests and embedders).
    ///
    /// # Errors
    /// [`ModelError::BadConfig`] naming the first value a setting refuses.
    pub fn from_lookup(lookup: &impl Fn(&str) -> Option<String>) -> Result<Self> {
        Self::from_sources(&Sources::from_lookup::<ProviderSettings>(lookup))
            .map_err(|invalid| ModelError::bad_config(invalid.setting, invalid.reason))
    }

    /// The timeout and retries of every model call.
    #[must_use]
    pub fn call_policy(&self) -> ModelCallPolicy {
        self.values.retry_policy()
    }

    /// How an error names `env`: the variable, and the file key when the value came from the file.
    #[must_use]
    pub fn origin(&self, env: &str) -> String {
        self.names
            .get(env)
            .map_or_else(|| env.to_owned(), Clone::clone)
    }
}

/// The setting that names the model.
const MODEL_SETTING: &str = "TESSERA_MODEL";

/// Builds the model named by `spec` (`openai:gpt-4.1-mini`, `anthropic:claude-sonnet-4-5`,
/// `gemini:gemini-2.5-flash`, `ollama:llama3.1:8b`), with the timeout and retries from `env`.
///
/// # Errors
/// Returns [`ModelError::BadConfig`] naming the setting when the spec has no provider or model,
/// the provider is unknown, a required key is missing, a base URL is not http(s), or a timeout
/// or retry count does not parse.
pub fn model_from_spec(spec: &str, settings: &ModelSettings) -> Result<Arc<dyn ChatModel>> {
    let values = &settings.values;
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
    Ok(match provider {
        "openai" => wrapped(OpenAiChat::new(openai(model, values)?)?, values),
        "ollama" => wrapped(OpenAiChat::new(ollama(model, values))?, values),
        "anthropic" => {
            let api_key = required_key(values.anthropic_api_key.as_ref(), "ANTHROPIC_API_KEY")?;
            let base_url = values.anthropic_base_url.as_deref();
            let config = HostedConfig::new(model, base_url.unwrap_or(ANTHROPIC_BASE_URL), api_key);
            wrapped(AnthropicChat::new(config)?, values)
        }
        "gemini" => {
            let api_key = required_key(values.gemini_api_key.as_ref(), "GEMINI_API_KEY")?;
            let base_url = values.gemini_base_url.as_deref();
            let config = HostedConfig::new(model, base_url.unwrap_or(GEMINI_BASE_URL), api_key);
            wrapped(GeminiChat::new(config)?, values)
        }
        other => {
            return Err(ModelError::bad_config(
                MODEL_SETTING,
                format!("unknown provider `{other}` (known: openai, anthropic, gemini, ollama)"),
            ))
        }
    })
}

/// `model` behind the retries, page mode and temperature `values` set.
fn wrapped<M: ChatModel + 'static>(model: M, values: &ProviderSettings) -> Arc<dyn ChatModel> {
    Arc::new(
        Retrying::new(model, values.retry_policy())
            .with_page_mode(values.page_mode)
            .with_temperature(values.model_temperature),
    )
}

impl ProviderSettings {
    /// The retry policy: the default's, with the timeout and retries these settings set.
    fn retry_policy(&self) -> ModelCallPolicy {
        let mut policy = ModelCallPolicy::default();
        if let Some(timeout) = self.model_timeout_secs {
            policy.call_timeout = timeout;
        }
        if let Some(retries) = self.model_max_retries {
            policy.max_attempts = u32::try_from(retries).unwrap_or(0).saturating_add(1);
        }
        policy
    }
}

fn temperature(raw: &str) -> std::result::Result<f32, String> {
    raw.trim()
        .parse::<f32>()
        .ok()
        .filter(|value| (0.0..=2.0).contains(value))
        .ok_or_else(|| format!("`{raw}` is not a number from 0 to 2"))
}

fn call_timeout(raw: &str) -> std::result::Result<Duration, String> {
    let seconds: f64 = raw
        .trim()
        .parse()
        .map_err(|_| format!("`{raw}` is not a number of seconds"))?;
    Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|timeout| !timeout.is_zero())
        .ok_or_else(|| format!("`{raw}` must be more than 0 seconds"))
}

fn base_url(raw: &str) -> std::result::Result<String, String> {
    let base_url = raw.trim().to_owned();
    check_base_url(&base_url, "").map_err(|error| match error {
        ModelError::BadConfig { reason, .. } => reason,
        other => other.to_string(),
    })?;
    Ok(base_url)
}

fn openai(model: &str, values: &ProviderSettings) -> Result<OpenAiConfig> {
    let custom_base = values.openai_base_url.clone();
    let api_key = values.openai_api_key.clone();
    let api_version = values.openai_api_version.clone();
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

fn ollama(model: &str, values: &ProviderSettings) -> OpenAiConfig {
    let config = OpenAiConfig::ollama(model);
    match &values.ollama_base_url {
        Some(base_url) => {
            // Ollama's own variables name the bare host; its OpenAI-compatible API is under /v1.
            let bare_host = reqwest::Url::parse(base_url).is_ok_and(|url| url.path() == "/");
            config.with_base_url(if bare_host {
                format!("{}/v1", base_url.trim_end_matches('/'))
            } else {
                base_url.clone()
            })
        }
        None => config,
    }
}

fn required_key(key: Option<&Secret>, setting: &str) -> Result<Secret> {
    key.cloned()
        .ok_or_else(|| ModelError::bad_config(setting, "missing: the provider needs an API key"))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::openai::OLLAMA_BASE_URL;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect();
        move |name| map.get(name).cloned()
    }

    /// The model `spec` names with the settings `lookup` answers, as `main` builds it.
    fn from_env(
        spec: &str,
        lookup: &impl Fn(&str) -> Option<String>,
    ) -> Result<Arc<dyn ChatModel>> {
        model_from_spec(spec, &ModelSettings::from_lookup(lookup)?)
    }

    fn values(lookup: &impl Fn(&str) -> Option<String>) -> Result<ProviderSettings> {
        Ok(ModelSettings::from_lookup(lookup)?.values)
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
            assert_eq!(from_env(spec, &keys)?.name().to_string(), name);
        }
        Ok(())
    }

    #[test]
    fn the_page_mode_is_the_providers_unless_the_setting_forces_one() -> anyhow::Result<()> {
        let local = |mode: Option<&str>| {
            let mut pairs = vec![("OPENAI_BASE_URL", "http://127.0.0.1:8089/v1")];
            pairs.extend(mode.map(|mode| ("TESSERA_PAGE_MODE", mode)));
            from_env("openai:qwen", &env(&pairs))
        };
        assert_eq!(local(None)?.page_mode(), PageMode::Auto);
        assert_eq!(local(Some("tools"))?.page_mode(), PageMode::Tools);
        assert_eq!(local(Some("whole"))?.page_mode(), PageMode::Whole);
        let keyed = env(&[("GEMINI_API_KEY", "k"), ("TESSERA_PAGE_MODE", "tools")]);
        assert_eq!(
            from_env("gemini:gemini-2.5-flash", &keyed)?.page_mode(),
            PageMode::Tools
        );
        let cold = env(&[
            ("OPENAI_BASE_URL", "http://127.0.0.1:8089/v1"),
            ("TESSERA_MODEL_TEMPERATURE", "hot"),
        ]);
        assert_eq!(
            setting_of(from_env("openai:qwen", &cold)).as_deref(),
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
            setting_of(from_env("openai:gpt-4.1-mini", &none)).as_deref(),
            Some("OPENAI_API_KEY")
        );
        assert_eq!(
            setting_of(from_env("anthropic:claude-sonnet-4-5", &none)).as_deref(),
            Some("ANTHROPIC_API_KEY")
        );
        assert_eq!(
            setting_of(from_env(
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
        let config = openai("Qwen2.5-7B", &values(&local)?)?;
        assert!(config.api_key.is_none());
        assert_eq!(config.max_tokens_field, MaxTokensField::MaxTokens);
        assert!(from_env("openai:Qwen2.5-7B", &local).is_ok());
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
        let config = openai("gpt-4o", &values(&azure)?)?;
        assert_eq!(config.auth, OpenAiAuth::ApiKeyHeader);
        assert_eq!(config.api_version.as_deref(), Some("2024-10-21"));
        assert_eq!(config.max_tokens_field, MaxTokensField::MaxCompletionTokens);
        Ok(())
    }

    #[test]
    fn ollama_defaults_to_localhost_and_adds_v1_to_a_bare_host() -> anyhow::Result<()> {
        assert_eq!(
            ollama("llama3.1", &values(&env(&[]))?).base_url,
            OLLAMA_BASE_URL
        );
        let remote = env(&[("OLLAMA_BASE_URL", "http://gpu-box:11434/")]);
        assert_eq!(
            ollama("llama3.1", &values(&remote)?).base_url,
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
                setting_of(from_env(spec, &lookup)).as_deref(),
                Some(setting),
                "{spec} {extra:?}"
            );
        }
    }

    #[test]
    fn timeout_and_retries_come_from_the_environment() -> anyhow::Result<()> {
        let policy = values(&env(&[
            ("TESSERA_MODEL_TIMEOUT_SECS", "12.5"),
            ("TESSERA_MODEL_MAX_RETRIES", "0"),
        ]))?
        .retry_policy();
        assert_eq!(policy.call_timeout, Duration::from_millis(12_500));
        assert_eq!(policy.max_attempts, 1);
        assert_eq!(
            values(&env(&[]))?.retry_policy(),
            ModelCallPolicy::default()
        );
        Ok(())
    }

    #[test]
    fn a_bad_config_error_never_shows_the_key() {
        let secret = "sk-very-secret-value";
        let outcome = from_env(
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
