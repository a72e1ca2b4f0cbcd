//! The chat over the demo items site: its manifest, the site's own key on every call, and the
//! server allowlist of every operation, built with the chat's pieces (`chat::setup`).

use std::sync::Arc;

use url::Url;

use super::access::{DemoApiKey, DEMO_KEY_HEADER};
use crate::{
    agent::AllowedModels,
    chat::{
        http_executor::{ExecutorConfig, HttpExecutor},
        manifest::Manifest,
        orchestrator::{OrchestratorParts, DEFAULT_MAX_MODEL_TURNS},
        setup::{chat_models, resolve_base_url, SetupError},
        CapabilityScope, Orchestrator, ScopeRules as _,
    },
    store::{now_ms, Store},
};

/// The orchestrator of the demo items site: its manifest, its base URL resolved against
/// `self_origin` (the app's own address), the server allowlist of every operation; every call
/// carries `demo_key`, without which the site refuses writes.
///
/// # Errors
/// [`SetupError`] when the manifest or the base URL is wrong.
pub fn demo_orchestrator(
    store: Store,
    self_origin: &Url,
    models: &AllowedModels,
    demo_key: &DemoApiKey,
) -> Result<Orchestrator, SetupError> {
    let manifest = Arc::new(Manifest::from_json(super::items::MANIFEST_JSON)?);
    let base_url = resolve_base_url(&manifest.base_url, self_origin)?;
    let executor = HttpExecutor::new(&manifest, base_url, ExecutorConfig::default(), &|name| {
        std::env::var(name).ok()
    })?
    .with_site_header(DEMO_KEY_HEADER, demo_key.secret().clone());
    let clock: crate::chat::orchestrator::Clock = Arc::new(now_ms);
    Ok(Orchestrator::new(OrchestratorParts {
        store,
        allowlist: CapabilityScope::all_of(&manifest),
        models: chat_models(models, manifest.clone(), clock.clone()),
        manifest,
        executor,
        clock,
        max_model_turns: DEFAULT_MAX_MODEL_TURNS,
    }))
}
