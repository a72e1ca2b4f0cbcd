//! A chat session's capability scope as stored: which operations (and optional constraints) it
//! may use. The rules that read it against a site's manifest are the chat's (`chat::scope`).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// The operations (and optional constraints) a session may use.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapabilityScope {
    /// Operation names allowed.
    pub operations: BTreeSet<String>,
    /// When set, only operations on these entities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entities: Option<BTreeSet<String>>,
    /// When set, only requests to these hosts (exact host names, `host:port` not needed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<BTreeSet<String>>,
}
