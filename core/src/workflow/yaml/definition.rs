//! The YAML workflow file: its format, parsing, and every check made before the server starts.
//!
//! ```yaml
//! name: expense-approval          # optional; the file's stem otherwise
//! description: One claim, one decision.
//! state: {claim: {id: exp-101}}   # the initial state; a run's input is laid over it
//! steps:
//!   - name: review
//!     ui: {prompt: "Approve {{ claim.id }}?", schema: {…}, data: /claim}
//!   - name: decision
//!     wait: {timeout: 3d, on_timeout: cancel, save: /decision}
//!   - name: route
//!     branch: {on: /decision/decision, cases: {approve: pay, reject: done}}
//! ```
//!
//! A `ui` step may name `assignees` (addresses, each a template over the state), with
//! `approvals: {required: N}`, `decline: {reason: required}` and `sign_in: required` (only the
//! assignee, signed in as themselves, answers), as an ask does: each person gets
//! a link of their own, e-mailed by a `notify` step when SMTP is configured. A `wait` with
//! `outcome: /pointer` also hears a Decline, a Cancel and an expiry instead of ending the run:
//! the step after it writes `{"status": "submitted" | "declined" | "cancelled" | "expired",
//! "reason"?, "by"?}` there (a `continue` default counts as submitted), so a `branch` can
//! route on `/pointer/status`; without `outcome`, those end the run cancelled as before.
//!
//! Checked here, each as one [`LoadError`] naming the file, the step and the field: the YAML
//! itself, unknown keys, step names used twice, exactly one kind per step, templates that do
//! not parse or use a variable the state never has, JSON pointers that are malformed or point
//! where neither the initial state nor an earlier step's `save` puts anything, `ui` schemas
//! outside the form subset, unknown components, durations, `wait` timeouts, HTTP methods and
//! retry policies, and `branch` / `next` targets that are unknown or not later steps (a run only
//! moves forward, so a finished step never runs again).

mod doc;
mod known;
mod parse;
mod step_kinds;

use std::{collections::BTreeMap, fmt, time::Duration};

use serde_json::Value;

use crate::{forms::FormSchema, workflow::retry::RetryPolicy};

pub use parse::{load_dir, parse_file};

/// A problem with a workflow file: one line naming the file, the step (when it is in one) and
/// the field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct LoadError {
    /// The file, as found in the directory.
    pub file: String,
    /// The step's name (or `steps[N]` before it has one); `None` outside the steps.
    pub step: Option<String>,
    /// The field, dotted (`ui.schema`, `branch.cases.approve`).
    pub field: String,
    /// What is wrong, on one line.
    pub reason: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "invalid workflow file {}: ", self.file)?;
        if let Some(step) = &self.step {
            write!(formatter, "step `{step}`: ")?;
        }
        write!(formatter, "{}: {}", self.field, one_line(&self.reason))
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A checked workflow file, ready to compile.
#[derive(Clone, Debug)]
pub struct YamlWorkflow {
    /// The workflow's name (unique among all workflows).
    pub name: String,
    /// What it is for.
    pub description: Option<String>,
    /// The file it came from.
    pub file: String,
    /// `sha256:<hex>` of the file's bytes; stored with every run started on it.
    pub digest: String,
    /// The initial state; a run's input is laid over it, key by key.
    pub initial_state: serde_json::Map<String, Value>,
    pub(crate) steps: Vec<Step>,
}

use crate::pages::groups::Groups;

impl YamlWorkflow {
    /// Checks every literal assignee (one without a template) against the operator's allowlist
    /// (`TESSERA_ASK_EMAIL_TO`), at start rather than at the first run; a templated one is
    /// checked when its page is made.
    ///
    /// # Errors
    /// The first address outside it, as one [`LoadError`] naming the step and field.
    pub fn check_assignees(
        &self,
        allowlist: &crate::notify::RecipientAllowlist,
    ) -> Result<(), LoadError> {
        self.check_people(allowlist, &Groups::default())
    }

    /// As [`YamlWorkflow::check_assignees`], where a name without an `@` must be one of the
    /// operator's `groups` (`TESSERA_GROUPS`), whose members need not be within the allowlist.
    ///
    /// # Errors
    /// The first address outside the allowlist or unknown group.
    pub fn check_people(
        &self,
        allowlist: &crate::notify::RecipientAllowlist,
        groups: &Groups,
    ) -> Result<(), LoadError> {
        let refused = |entry: &str| {
            if Groups::is_group_name(entry) {
                (groups.members(entry).is_none())
                    .then(|| format!("`{entry}` is not a group (TESSERA_GROUPS)"))
            } else {
                (!allowlist.allows_email(entry)).then(|| {
                    format!("`{entry}` is not an address pages may name (TESSERA_ASK_EMAIL_TO)")
                })
            }
        };
        for step in &self.steps {
            let StepSpec::Ui(UiSpec {
                assignees,
                escalate,
                stages,
                ..
            }) = &step.kind
            else {
                continue;
            };
            let escalated = escalate.iter().flat_map(|escalation| &escalation.to);
            let literal = assignees
                .iter()
                .enumerate()
                .filter(|(_, entry)| !entry.contains("{{"))
                .map(|(index, entry)| (format!("ui.assignees[{index}]"), entry));
            let escalated = escalated
                .enumerate()
                .map(|(index, entry)| (format!("ui.escalate_after.to[{index}]"), entry));
            let staged = stages.iter().enumerate().flat_map(|(stage, members)| {
                members
                    .assignees
                    .iter()
                    .enumerate()
                    .filter(|(_, entry)| !entry.contains("{{"))
                    .map(move |(index, entry)| {
                        (
                            format!("ui.approvals.stages[{stage}].assignees[{index}]"),
                            entry,
                        )
                    })
            });
            for (field, entry) in literal.chain(escalated).chain(staged) {
                if let Some(reason) = refused(entry) {
                    return Err(LoadError {
                        file: self.file.clone(),
                        step: Some(step.name.clone()),
                        field,
                        reason,
                    });
                }
            }
        }
        Ok(())
    }

    /// Its steps' names, in order.
    #[must_use]
    pub fn step_names(&self) -> Vec<&str> {
        self.steps.iter().map(|step| step.name.as_str()).collect()
    }

    /// Whether an `http` step's URL, as written, is a path on this server under `prefix` (the
    /// demo site's `/demo-api`, which is served only with the demo on).
    #[must_use]
    pub fn calls_own_path(&self, prefix: &str) -> bool {
        self.steps.iter().any(|step| match &step.kind {
            StepSpec::Http(spec) => spec.url.trim_start().starts_with(prefix),
            _ => false,
        })
    }
}

/// One checked step.
#[derive(Clone, Debug)]
pub(crate) struct Step {
    pub name: String,
    pub kind: StepSpec,
    /// Where the run goes after it, when not to the following step.
    pub next: Next,
}

/// A step's own `next` / `end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Next {
    Following,
    Step(usize),
    End,
}

/// What a step does.
#[derive(Clone, Debug)]
pub(crate) enum StepSpec {
    Prompt {
        template: String,
        schema: Option<FormSchema>,
        save: Option<String>,
    },
    Ui(UiSpec),
    Wait {
        timeout: Option<Duration>,
        on_timeout: OnTimeoutSpec,
        save: Option<String>,
        /// Where the step after the wait writes how it ended: `{"status", "reason"?, "by"?}`.
        outcome: Option<String>,
    },
    Http(HttpSpec),
    Notify {
        title: String,
        message: String,
    },
    Branch {
        on: String,
        cases: Vec<(String, usize)>,
        default: Option<usize>,
    },
}

/// A `ui` step: the page to make and whom it asks.
#[derive(Clone, Debug)]
pub(crate) struct UiSpec {
    pub(crate) prompt: String,
    pub(crate) schema: Option<FormSchema>,
    pub(crate) data: Option<String>,
    pub(crate) components: Vec<String>,
    pub(crate) expires_in: Option<Duration>,
    pub(crate) max_steps: Option<u32>,
    /// Assignees' addresses, each a template over the state (a literal is one too).
    pub(crate) assignees: Vec<String>,
    pub(crate) approvals: u32,
    pub(crate) decline_reason_required: bool,
    /// Each assignee must be signed in as themselves to answer.
    pub(crate) sign_in_required: bool,
    /// Seconds after the page is made at which those who have not answered are reminded.
    pub(crate) remind_after: Vec<u64>,
    /// Who else is asked, and when.
    pub(crate) escalate: Option<crate::pages::people::Escalation>,
    /// Ordered stages (their assignees templates too); then `assignees` is empty.
    pub(crate) stages: Vec<crate::pages::people::Stage>,
}

/// What a `wait` does at its timeout.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum OnTimeoutSpec {
    Fail,
    Cancel,
    Continue(Value),
    Decline,
}

/// A checked `http` step.
#[derive(Clone, Debug)]
pub(crate) struct HttpSpec {
    pub method: reqwest::Method,
    pub url: String,
    pub body: Option<Value>,
    pub headers: BTreeMap<String, String>,
    pub save: Option<String>,
    pub retry: RetryPolicy,
    pub timeout: Duration,
}
