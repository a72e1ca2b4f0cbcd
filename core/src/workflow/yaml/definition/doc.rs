//! The file as written: the serde shapes a workflow file deserialises into, before any check.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

/// The kinds a step may be, in the order errors list them.
pub(super) const KINDS: [&str; 6] = ["prompt", "ui", "wait", "http", "notify", "branch"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileDoc {
    pub(super) name: Option<String>,
    pub(super) description: Option<String>,
    #[serde(default)]
    pub(super) state: Option<Value>,
    pub(super) steps: Vec<serde_yaml_ng::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StepDoc {
    pub(super) name: String,
    pub(super) next: Option<String>,
    #[serde(default)]
    pub(super) end: bool,
    pub(super) prompt: Option<serde_yaml_ng::Value>,
    pub(super) ui: Option<serde_yaml_ng::Value>,
    pub(super) wait: Option<serde_yaml_ng::Value>,
    pub(super) http: Option<serde_yaml_ng::Value>,
    pub(super) notify: Option<serde_yaml_ng::Value>,
    pub(super) branch: Option<serde_yaml_ng::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PromptDoc {
    pub(super) template: String,
    pub(super) schema: Option<Value>,
    pub(super) save: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct UiDoc {
    pub(super) prompt: String,
    pub(super) schema: Option<Value>,
    pub(super) data: Option<String>,
    #[serde(default)]
    pub(super) components: Vec<String>,
    pub(super) expires_in: Option<String>,
    pub(super) max_steps: Option<u32>,
    #[serde(default)]
    pub(super) assignees: Vec<String>,
    pub(super) approvals: Option<ApprovalsDoc>,
    pub(super) decline: Option<DeclineDoc>,
    /// `required` or `optional` (the default).
    pub(super) sign_in: Option<String>,
    #[serde(default)]
    pub(super) remind_after: Vec<String>,
    pub(super) escalate_after: Option<EscalateDoc>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EscalateDoc {
    pub(super) after: String,
    pub(super) to: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ApprovalsDoc {
    pub(super) required: Option<u32>,
    pub(super) stages: Option<Vec<StageDoc>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StageDoc {
    pub(super) assignees: Vec<String>,
    pub(super) required: Option<u32>,
    pub(super) on_decline: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DeclineDoc {
    pub(super) reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct WaitDoc {
    pub(super) timeout: Option<String>,
    pub(super) on_timeout: Option<String>,
    pub(super) default: Option<Value>,
    pub(super) save: Option<String>,
    pub(super) outcome: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct HttpDoc {
    pub(super) method: String,
    pub(super) url: String,
    pub(super) body: Option<Value>,
    #[serde(default)]
    pub(super) headers: BTreeMap<String, String>,
    pub(super) save: Option<String>,
    pub(super) retry: Option<RetryDoc>,
    pub(super) timeout: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RetryDoc {
    pub(super) attempts: u32,
    pub(super) backoff: Option<String>,
    pub(super) max_backoff: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NotifyDoc {
    pub(super) title: String,
    pub(super) message: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BranchDoc {
    pub(super) on: String,
    pub(super) cases: BTreeMap<String, String>,
    pub(super) default: Option<String>,
}
