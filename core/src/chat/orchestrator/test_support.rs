//! Test support for the orchestrator's unit tests: an orchestrator over a fresh SQLite file and
//! the demo items site (served on a loopback port), driven by a scripted model.

use std::{sync::Arc, time::Duration};

use serde_json::Value;
use tempfile::TempDir;
use url::Url;

use super::{Orchestrator, OrchestratorParts, SessionModels};
use crate::chat::scope::ScopeRules as _;
use crate::{
    chat::{
        http_executor::{ExecutorConfig, HttpExecutor},
        manifest::Manifest,
        scope::CapabilityScope,
        session::ChatSession,
    },
    config::DatabaseUrl,
    llm::{ScriptedModel, ScriptedTurn, ToolCall},
    store::{now_ms, Store},
};

/// An orchestrator with its own database and demo site; both go away when it is dropped.
pub(in crate::chat) struct Fixture {
    pub(in crate::chat) orchestrator: Orchestrator,
    pub(in crate::chat) model: ScriptedModel,
    _folder: TempDir,
}

impl Fixture {
    /// A fresh orchestrator whose model answers with `turns`, scoped to the whole demo manifest.
    pub(in crate::chat) async fn new(turns: Vec<ScriptedTurn>) -> anyhow::Result<Self> {
        let manifest = Arc::new(Manifest::from_json(crate::demo::items::MANIFEST_JSON)?);
        Self::with_scope(turns, CapabilityScope::all_of(&manifest)).await
    }

    /// As [`Self::new`], with `allowlist` as the server's allowlist.
    pub(super) async fn with_scope(
        turns: Vec<ScriptedTurn>,
        allowlist: CapabilityScope,
    ) -> anyhow::Result<Self> {
        let folder = tempfile::tempdir()?;
        let path = folder.path().join("chat.db");
        let store =
            Store::connect(&DatabaseUrl::Sqlite(path.to_string_lossy().into_owned())).await?;
        let site = crate::demo::items::routes::<()>(store.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        tokio::spawn(async move { axum::serve(listener, site).await });
        let manifest = Arc::new(Manifest::from_json(crate::demo::items::MANIFEST_JSON)?);
        let executor = HttpExecutor::new(
            &manifest,
            Url::parse(&format!("http://{address}/demo-api"))?,
            ExecutorConfig {
                timeout: Duration::from_secs(10),
                max_retries: 2,
                base_backoff: Duration::from_millis(5),
                max_retry_wait: Duration::from_millis(50),
            },
            &|_| None,
        )?;
        let model = ScriptedModel::new(turns);
        let orchestrator = Orchestrator::new(OrchestratorParts {
            store,
            manifest,
            executor,
            models: SessionModels::only("scripted", Arc::new(model.clone())),
            allowlist,
            clock: Arc::new(now_ms),
            max_model_turns: 4,
        });
        Ok(Self {
            orchestrator,
            model,
            _folder: folder,
        })
    }

    /// A new session with the whole allowlist and the default model.
    pub(super) async fn session(&self) -> anyhow::Result<ChatSession> {
        Ok(self.orchestrator.create_session(None, None).await?)
    }
}

/// The model's turn that proposes one call.
pub(super) fn call(id: &str, name: &str, arguments: Value) -> ScriptedTurn {
    ScriptedTurn::tool_calls(vec![ToolCall::new(id, name, arguments)])
}
