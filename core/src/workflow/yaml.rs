//! Declarative workflows: YAML files compiled into the same durable steps as the Rust builder.
//!
//! Every `*.yaml` / `*.yml` file in `TESSERA_WORKFLOWS_DIR` defines one workflow (DESIGN.md §14):
//! steps `prompt`, `ui`, `wait`, `http`, `notify` and `branch`, minijinja templates over the
//! run's state, and state updates by JSON pointer (`save: /decision`). Files are read and
//! checked once at start ([`load_dir`]); the first problem is one [`LoadError`] line naming
//! the file, the step and the field, and the server refuses to start. A checked file compiles
//! ([`YamlWorkflow::compile`]) into a [`Workflow`](super::Workflow) whose steps are ordinary
//! erased steps: the same runner, lease, step transaction and exactly-once submission as a
//! Rust workflow, and the same runs UI. There is no second engine here.
//!
//! - [`definition`]: the file format, parsing and every load-time check;
//! - [`http`]: the `http` step's request, retries and host allowlist;
//! - `steps`: each kind of step as an erased step handler.
//!
//! A run records the SHA-256 digest of the file it started on (`runs.definition_digest`). A run
//! whose file changed between restarts is failed when a runner next claims it, naming both
//! digests, rather than resumed: its cursor and stored outputs index the steps of the old file,
//! which the server no longer has.
//!
//! Errors: loading returns [`LoadError`]; running steps return
//! [`StepError`](super::StepError) like any step.

pub mod definition;
pub mod http;
mod pointer;
mod steps;

pub use definition::{load_dir, parse_file, LoadError, YamlWorkflow};
pub use http::{redirect_policy, HostAllowlist, MAX_RESPONSE_BYTES};

use std::sync::Arc;

use crate::notify::{NotifierFor, Notify};

/// What compiled YAML steps call besides the runner's own services.
#[derive(Clone)]
pub struct YamlServices {
    /// The client `http` steps send with, built with [`redirect_policy`] (redirects within the
    /// called origin only).
    pub client: reqwest::Client,
    /// The hosts `http` steps may call.
    pub hosts: HostAllowlist,
    /// This server's public URL: the base of relative `http` URLs and of run-page links.
    pub public_url: String,
    /// Where `notify` steps send; `None` logs the link's run page instead.
    pub notifier: Option<Arc<dyn Notify>>,
    /// E-mails an assignee their own link (a page with assignees has no shared link for the
    /// channels); `None` e-mails nobody.
    pub assignee_mail: Option<NotifierFor>,
    /// Headers sent only with requests to this server's own origin (the demo site's key), set
    /// over any a file names; never written in a file or logged.
    pub own_headers: reqwest::header::HeaderMap,
}

impl std::fmt::Debug for YamlServices {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("YamlServices")
            .field("hosts", &self.hosts)
            .field("public_url", &self.public_url)
            .field("notifier", &self.notifier.is_some())
            .finish_non_exhaustive()
    }
}
