//! Which models a server may generate pages with: the configured one and the heuristic.
//!
//! Built once at startup from `TESSERA_MODEL` (a missing key fails the start, not the first
//! page). A request may name a model, but only one of these two: a caller never makes the server
//! talk to a provider it was not configured for.

use std::{fmt, sync::Arc};

use super::heuristic::{HeuristicModel, HEURISTIC};
use crate::llm::{model_from_spec, ChatModel, ModelError, ModelSettings};

/// The models this server may use.
#[derive(Clone)]
pub struct AllowedModels {
    configured_spec: String,
    configured: Arc<dyn ChatModel>,
    heuristic: Arc<dyn ChatModel>,
}

impl fmt::Debug for AllowedModels {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("AllowedModels")
            .field("configured", &self.configured_spec)
            .finish_non_exhaustive()
    }
}

/// A request named a model this server is not configured for.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("model `{requested}` is not configured here; use one of: {}", allowed.join(", "))]
pub struct UnknownModel {
    /// What was asked for.
    pub requested: String,
    /// What may be asked for.
    pub allowed: Vec<String>,
}

impl AllowedModels {
    /// Only the heuristic model.
    #[must_use]
    pub fn heuristic_only() -> Self {
        let heuristic: Arc<dyn ChatModel> = Arc::new(HeuristicModel::new());
        Self {
            configured_spec: HEURISTIC.to_owned(),
            configured: heuristic.clone(),
            heuristic,
        }
    }

    /// The models for `spec` (`heuristic` or `provider:model`), with the provider `settings`.
    ///
    /// # Errors
    /// [`ModelError::BadConfig`] when the spec or the provider's settings are wrong.
    pub fn from_spec(spec: &str, settings: &ModelSettings) -> Result<Self, ModelError> {
        let spec = spec.trim();
        if spec == HEURISTIC {
            return Ok(Self::heuristic_only());
        }
        Ok(Self::with_model(spec, model_from_spec(spec, settings)?))
    }

    /// The heuristic plus `model`, configured as `spec` (for tests and embedders).
    #[must_use]
    pub fn with_model(spec: &str, model: Arc<dyn ChatModel>) -> Self {
        Self {
            configured_spec: spec.to_owned(),
            configured: model,
            heuristic: Arc::new(HeuristicModel::new()),
        }
    }

    /// The configured model's spec.
    #[must_use]
    pub fn configured_spec(&self) -> &str {
        &self.configured_spec
    }

    /// The model to use: the configured one when `requested` is `None` or names it, the heuristic
    /// when it says `heuristic`.
    ///
    /// # Errors
    /// [`UnknownModel`] for any other name.
    pub fn choose(&self, requested: Option<&str>) -> Result<Arc<dyn ChatModel>, UnknownModel> {
        match requested.map(str::trim) {
            None | Some("") => Ok(self.configured.clone()),
            Some(name) if name == self.configured_spec => Ok(self.configured.clone()),
            Some(HEURISTIC) => Ok(self.heuristic.clone()),
            Some(other) => {
                let mut allowed = vec![HEURISTIC.to_owned()];
                if self.configured_spec != HEURISTIC {
                    allowed.push(self.configured_spec.clone());
                }
                Err(UnknownModel {
                    requested: other.to_owned(),
                    allowed,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ScriptedModel;

    #[test]
    fn only_the_configured_model_and_the_heuristic_may_be_chosen() -> anyhow::Result<()> {
        let models =
            AllowedModels::with_model("openai:gpt-x", Arc::new(ScriptedModel::new(vec![])));
        assert_eq!(models.choose(None)?.name().provider, "scripted");
        assert_eq!(
            models.choose(Some("openai:gpt-x"))?.name().provider,
            "scripted"
        );
        assert_eq!(models.choose(Some("heuristic"))?.name().provider, HEURISTIC);
        let refused = models.choose(Some("anthropic:claude")).err();
        assert_eq!(
            refused.map(|error| error.to_string()).as_deref(),
            Some("model `anthropic:claude` is not configured here; use one of: heuristic, openai:gpt-x")
        );
        let offline = AllowedModels::from_spec("heuristic", &ModelSettings::default())?;
        assert_eq!(offline.choose(None)?.name().provider, HEURISTIC);
        assert!(offline.choose(Some("openai:gpt-x")).is_err());
        assert!(
            AllowedModels::from_spec("openai:gpt-x", &ModelSettings::default()).is_err(),
            "no key"
        );
        Ok(())
    }
}
