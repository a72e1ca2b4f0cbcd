//! Building the chat over the configured sites (`TESSERA_SITES`, read by [`super::sites`]):
//! their manifest, executor and models, into one [`Orchestrator`]; the demo's own site is wired
//! by `demo::chat_site` with the same pieces.
//!
//! Called once at startup (`startup.rs`); the HTTP edge only receives the orchestrator built
//! here (`http/chat_api.rs`, `http/chat.rs`).

use std::{collections::BTreeSet, sync::Arc};

use url::Url;

use super::{
    calendar::CivilDate,
    http_executor::{CallError, EnvLookup, ExecutorConfig, HttpExecutor},
    manifest::{Manifest, ManifestError},
    orchestrator::{OrchestratorParts, SessionModels, DEFAULT_MAX_MODEL_TURNS},
    planner::{Planner, PLANNER_MODEL},
    Orchestrator,
};
use crate::{
    agent::AllowedModels,
    chat::scope::ScopeRules as _,
    store::{now_ms, Store},
};

/// Why the chat could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The manifest contradicts itself.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// The executor cannot be built (a missing auth secret).
    #[error(transparent)]
    Executor(#[from] CallError),
    /// The site's base URL does not parse.
    #[error("bad site base URL: {0}")]
    BaseUrl(String),
}

/// The models a chat session may use: the offline planner as `heuristic`, plus the configured
/// provider model (the default) when there is one.
#[must_use]
pub fn chat_models(
    models: &AllowedModels,
    manifest: Arc<Manifest>,
    clock: super::orchestrator::Clock,
) -> SessionModels {
    let planner = Planner::new(manifest, Arc::new(move || CivilDate::from_unix_ms(clock())));
    let offline = SessionModels::only(PLANNER_MODEL, Arc::new(planner));
    let spec = models.configured_spec();
    if spec == PLANNER_MODEL {
        return offline;
    }
    match models.choose(None) {
        Ok(model) => offline.with_default(spec, model),
        Err(_) => offline,
    }
}

/// The orchestrator of the configured sites, merged into one manifest ([`Manifest::merge`]):
/// each site's base URL resolved against `self_origin` when relative, its credentials read from
/// the environment now, and the server allowlist every operation of every site, reaching only
/// the configured sites' hosts (loopback included: the operator named them).
///
/// # Errors
/// [`SetupError`] when a base URL does not parse, two sites clash, or a credential is missing.
pub fn sites_orchestrator(
    store: Store,
    sites: Vec<Manifest>,
    self_origin: &Url,
    models: &AllowedModels,
) -> Result<Orchestrator, SetupError> {
    sites_orchestrator_with_env(store, sites, self_origin, models, &|name| {
        std::env::var(name).ok()
    })
}

/// [`sites_orchestrator`] reading credentials through `env` rather than the process
/// environment (tests hand theirs in).
///
/// # Errors
/// As [`sites_orchestrator`].
pub fn sites_orchestrator_with_env(
    store: Store,
    sites: Vec<Manifest>,
    self_origin: &Url,
    models: &AllowedModels,
    env: EnvLookup<'_>,
) -> Result<Orchestrator, SetupError> {
    let mut resolved = Vec::with_capacity(sites.len());
    for mut site in sites {
        site.base_url = resolve_base_url(&site.base_url, self_origin)?.to_string();
        resolved.push(site);
    }
    let manifest = Arc::new(Manifest::merge(resolved)?);
    let base_url = resolve_base_url(&manifest.base_url, self_origin)?;
    let mut hosts = BTreeSet::new();
    for operation in manifest.operations() {
        let url = match &operation.http.base_url {
            Some(url) => resolve_base_url(url, self_origin)?,
            None => base_url.clone(),
        };
        if let Some(host) = url.host_str() {
            hosts.insert(host.to_owned());
        }
    }
    let executor = HttpExecutor::new(&manifest, base_url, ExecutorConfig::default(), env)?;
    let clock: super::orchestrator::Clock = Arc::new(now_ms);
    let mut allowlist = super::CapabilityScope::all_of(&manifest);
    allowlist.hosts = Some(hosts);
    Ok(Orchestrator::new(OrchestratorParts {
        store,
        allowlist,
        models: chat_models(models, manifest.clone(), clock.clone()),
        manifest,
        executor,
        clock,
        max_model_turns: DEFAULT_MAX_MODEL_TURNS,
    }))
}

/// A manifest base URL: absolute as is, or relative (`/demo-api`) to `self_origin`.
///
/// # Errors
/// [`SetupError::BaseUrl`] when neither parses.
pub fn resolve_base_url(base_url: &str, self_origin: &Url) -> Result<Url, SetupError> {
    match Url::parse(base_url) {
        Ok(url) => Ok(url),
        Err(url::ParseError::RelativeUrlWithoutBase) => self_origin
            .join(base_url)
            .map_err(|error| SetupError::BaseUrl(format!("{base_url}: {error}"))),
        Err(error) => Err(SetupError::BaseUrl(format!("{base_url}: {error}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_base_urls_resolve_against_the_app() -> Result<(), Box<dyn std::error::Error>> {
        let origin = Url::parse("http://127.0.0.1:3000")?;
        assert_eq!(
            resolve_base_url("/demo-api", &origin)?.as_str(),
            "http://127.0.0.1:3000/demo-api"
        );
        assert_eq!(
            resolve_base_url("https://api.example.com/v1", &origin)?.as_str(),
            "https://api.example.com/v1"
        );
        Ok(())
    }
}
