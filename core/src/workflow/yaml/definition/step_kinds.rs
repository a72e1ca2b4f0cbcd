//! Each kind of step, its fields checked into the [`StepSpec`] the run executes.
//!
//! A function per kind; each takes the step's `fail`, which names the file, the step and the
//! field, and checks its fields in a fixed order, so a file with several problems always reports
//! the same first one.

use std::time::Duration;

use tessera_app::catalog::Catalog;

use crate::{
    forms::FormSchema,
    pages::{
        groups::Groups,
        links::DEFAULT_EXPIRY,
        people::{Escalation, OnDecline, People, Stage},
    },
    workflow::retry::RetryPolicy,
};

use super::{
    doc::{
        ApprovalsDoc, BranchDoc, EscalateDoc, HttpDoc, NotifyDoc, PromptDoc, RetryDoc, StageDoc,
        UiDoc, WaitDoc,
    },
    known::Known,
    parse::{check_body, check_syntax, decode, duration, form_schema},
    HttpSpec, LoadError, OnTimeoutSpec, StepSpec, UiSpec,
};

/// How a step reports a problem: the field, dotted, and what is wrong.
pub(super) type Fail<'a> = &'a dyn Fn(&str, String) -> LoadError;

pub(super) fn prompt(
    value: serde_yaml_ng::Value,
    known: &mut Known,
    fail: Fail<'_>,
) -> Result<StepSpec, LoadError> {
    let spec: PromptDoc = decode(value, "prompt", fail)?;
    known.template(&spec.template, "prompt.template", fail)?;
    let schema = schema_at(spec.schema.as_ref(), "prompt.schema", fail)?;
    if schema.is_none() && spec.save.is_none() {
        return Err(fail(
            "prompt.save",
            "a prompt without a schema needs `save`: the pointer its text goes to".into(),
        ));
    }
    if let Some(save) = &spec.save {
        check_syntax(save, "prompt.save", fail)?;
    }
    known.saved(spec.save.as_deref(), schema.as_ref());
    Ok(StepSpec::Prompt {
        template: spec.template,
        schema,
        save: spec.save,
    })
}

pub(super) fn ui(
    value: serde_yaml_ng::Value,
    known: &Known,
    fail: Fail<'_>,
) -> Result<StepSpec, LoadError> {
    let spec: UiDoc = decode(value, "ui", fail)?;
    known.template(&spec.prompt, "ui.prompt", fail)?;
    let schema = schema_at(spec.schema.as_ref(), "ui.schema", fail)?;
    if let Some(data) = &spec.data {
        known.read(data, "ui.data", fail)?;
    }
    check_components(&spec.components, fail)?;
    let expires_in = duration_at(spec.expires_in.as_deref(), "ui.expires_in", fail)?;
    for (position, address) in spec.assignees.iter().enumerate() {
        check_assignee(address, &format!("ui.assignees[{position}]"), known, fail)?;
    }
    let answered = schema.is_some();
    let (approvals, stages) =
        approval_stages(spec.approvals, &spec.assignees, answered, known, fail)?;
    if !spec.assignees.is_empty() && !answered {
        return Err(fail(
            "ui.assignees",
            "a page without a schema takes no answer, so it has no one to assign".into(),
        ));
    }
    let (remind_after, escalate) = timers(&spec.remind_after, spec.escalate_after, fail)?;
    let first_stage = stages.first();
    let people = People {
        assignees: first_stage
            .map_or_else(|| spec.assignees.clone(), |stage| stage.assignees.clone()),
        required: first_stage.map_or(approvals, |stage| stage.required),
        decline_reason_required: false,
        sign_in_required: false,
        remind_after: remind_after.clone(),
        escalate: escalate.clone(),
        stages: stages.clone(),
    };
    if let Err(reason) = people.check() {
        return Err(fail("ui.approvals.required", reason));
    }
    let sign_in_required = optional_or_required(spec.sign_in.as_deref(), "ui.sign_in", fail)?;
    if sign_in_required && !people.is_assigned() {
        return Err(fail(
            "ui.sign_in",
            "`required` needs assignees: the signed-in person must be one of them".into(),
        ));
    }
    if let Err((field, reason)) =
        people.check_timers(expires_in.unwrap_or(DEFAULT_EXPIRY).as_secs())
    {
        return Err(fail(&format!("ui.{field}"), reason));
    }
    let decline_reason = spec.decline.and_then(|decline| decline.reason);
    let decline_reason_required =
        optional_or_required(decline_reason.as_deref(), "ui.decline.reason", fail)?;
    Ok(StepSpec::Ui(UiSpec {
        prompt: spec.prompt,
        schema,
        data: spec.data,
        components: spec.components,
        expires_in,
        max_steps: spec.max_steps,
        assignees: spec.assignees,
        approvals,
        decline_reason_required,
        sign_in_required,
        remind_after,
        escalate,
        stages,
    }))
}

/// An assignee: an e-mail address, a group's name (no `@`; checked against the operator's
/// groups at start) or a template that renders to one.
fn check_assignee(
    address: &str,
    field: &str,
    known: &Known,
    fail: Fail<'_>,
) -> Result<(), LoadError> {
    known.template(address, field, fail)?;
    if !address.contains("{{")
        && !Groups::is_group_name(address)
        && address.parse::<lettre::Address>().is_err()
    {
        return Err(fail(field, format!("`{address}` is not an e-mail address")));
    }
    Ok(())
}

/// The components a page may use, each one the catalog has.
fn check_components(components: &[String], fail: Fail<'_>) -> Result<(), LoadError> {
    let catalog = Catalog::defaults();
    for (position, component) in components.iter().enumerate() {
        if catalog.get(component).is_none() {
            return Err(fail(
                &format!("ui.components[{position}]"),
                format!("no component is named `{component}`; /components lists them"),
            ));
        }
    }
    Ok(())
}

/// How many approvals the page needs, and its stages when it has them: stages name their own
/// assignees and counts, so they stand instead of the page's; only a page that takes an answer
/// (`answered`) has anyone to ask in stages.
fn approval_stages(
    approvals: Option<ApprovalsDoc>,
    assignees: &[String],
    answered: bool,
    known: &Known,
    fail: Fail<'_>,
) -> Result<(u32, Vec<Stage>), LoadError> {
    let (required, stage_docs) = match approvals {
        None => (1, Vec::new()),
        Some(approvals) => match (approvals.required, approvals.stages) {
            (_, None) => (approvals.required.unwrap_or(1), Vec::new()),
            (None, Some(stages)) if assignees.is_empty() => (1, stages),
            (_, Some(_)) => {
                return Err(fail(
                    "ui.approvals.stages",
                    "stages name their own assignees and required: drop `assignees` and `approvals.required`".into(),
                ))
            }
        },
    };
    let stages = stage_docs
        .into_iter()
        .enumerate()
        .map(|(index, stage)| {
            approval_stage(stage, &format!("ui.approvals.stages[{index}]"), known, fail)
        })
        .collect::<Result<Vec<_>, _>>()?;
    if !stages.is_empty() {
        if !answered {
            return Err(fail(
                "ui.approvals.stages",
                "a page without a schema takes no answer, so it has no one to ask in stages".into(),
            ));
        }
        if let Err((field, reason)) = People::in_stages(stages.clone()).check_stages() {
            return Err(fail(&format!("ui.{field}"), reason));
        }
    }
    Ok((required, stages))
}

fn approval_stage(
    stage: StageDoc,
    field: &str,
    known: &Known,
    fail: Fail<'_>,
) -> Result<Stage, LoadError> {
    for (position, address) in stage.assignees.iter().enumerate() {
        check_assignee(
            address,
            &format!("{field}.assignees[{position}]"),
            known,
            fail,
        )?;
    }
    let on_decline = match stage.on_decline.as_deref() {
        None | Some("settle") => OnDecline::Settle,
        Some("continue") => OnDecline::Continue,
        Some(other) => {
            return Err(fail(
                &format!("{field}.on_decline"),
                format!("`{other}` is not settle or continue"),
            ))
        }
    };
    Ok(Stage {
        assignees: stage.assignees,
        required: stage.required.unwrap_or(1),
        on_decline,
    })
}

/// The reminders' delays, in seconds, and the escalation.
fn timers(
    remind_after: &[String],
    escalate_after: Option<EscalateDoc>,
    fail: Fail<'_>,
) -> Result<(Vec<u64>, Option<Escalation>), LoadError> {
    let reminders = remind_after
        .iter()
        .enumerate()
        .map(|(index, text)| {
            duration(text, &format!("ui.remind_after[{index}]"), fail).map(|after| after.as_secs())
        })
        .collect::<Result<Vec<_>, _>>()?;
    let escalate = escalate_after
        .map(|escalation| {
            duration(&escalation.after, "ui.escalate_after.after", fail).map(|after| Escalation {
                after_secs: after.as_secs(),
                to: escalation.to,
            })
        })
        .transpose()?;
    Ok((reminders, escalate))
}

/// `optional` (the default) or `required`.
fn optional_or_required(
    value: Option<&str>,
    field: &str,
    fail: Fail<'_>,
) -> Result<bool, LoadError> {
    match value {
        None | Some("optional") => Ok(false),
        Some("required") => Ok(true),
        Some(other) => Err(fail(
            field,
            format!("`{other}` is not optional or required"),
        )),
    }
}

/// A wait; `is_last` when no step follows it to save its answer, `answer` the schema of the
/// page it waits on.
pub(super) fn wait(
    value: serde_yaml_ng::Value,
    is_last: bool,
    answer: Option<&FormSchema>,
    known: &mut Known,
    fail: Fail<'_>,
) -> Result<StepSpec, LoadError> {
    let spec: WaitDoc = decode(value, "wait", fail)?;
    let timeout = duration_at(spec.timeout.as_deref(), "wait.timeout", fail)?;
    let on_timeout = match (spec.on_timeout.as_deref(), spec.default) {
        (_, Some(_)) if timeout.is_none() => {
            return Err(fail("wait.default", "needs a `timeout`".into()))
        }
        (None | Some("fail"), None) => OnTimeoutSpec::Fail,
        (Some("cancel"), None) => OnTimeoutSpec::Cancel,
        (Some("decline"), None) => OnTimeoutSpec::Decline,
        (Some("continue"), Some(default)) => OnTimeoutSpec::Continue(default),
        (Some("continue"), None) => {
            return Err(fail(
                "wait.default",
                "`on_timeout: continue` needs the `default` answer to continue with".into(),
            ))
        }
        (Some("fail" | "cancel" | "decline") | None, Some(_)) => {
            return Err(fail(
                "wait.default",
                "a default answer is only used with `on_timeout: continue`".into(),
            ))
        }
        (Some(other), _) => {
            return Err(fail(
                "wait.on_timeout",
                format!("`{other}` is not fail, cancel, continue or decline"),
            ))
        }
    };
    if spec.on_timeout.is_some() && timeout.is_none() {
        return Err(fail("wait.on_timeout", "needs a `timeout`".into()));
    }
    if let Some(save) = &spec.save {
        check_syntax(save, "wait.save", fail)?;
        if is_last {
            return Err(fail(
                "wait.save",
                "the answer is saved by the step after the wait; add one".into(),
            ));
        }
    }
    known.saved(spec.save.as_deref(), answer);
    if let Some(outcome) = &spec.outcome {
        check_syntax(outcome, "wait.outcome", fail)?;
        if is_last {
            return Err(fail(
                "wait.outcome",
                "the outcome is written by the step after the wait; add one".into(),
            ));
        }
        known.saved_opaque(Some(outcome));
    }
    Ok(StepSpec::Wait {
        timeout,
        on_timeout,
        save: spec.save,
        outcome: spec.outcome,
    })
}

pub(super) fn http(
    value: serde_yaml_ng::Value,
    known: &mut Known,
    fail: Fail<'_>,
) -> Result<StepSpec, LoadError> {
    let spec: HttpDoc = decode(value, "http", fail)?;
    let method = match spec.method.to_ascii_uppercase().as_str() {
        "GET" => reqwest::Method::GET,
        "POST" => reqwest::Method::POST,
        "PUT" => reqwest::Method::PUT,
        "PATCH" => reqwest::Method::PATCH,
        "DELETE" => reqwest::Method::DELETE,
        other => {
            return Err(fail(
                "http.method",
                format!("`{other}` is not GET, POST, PUT, PATCH or DELETE"),
            ))
        }
    };
    known.template(&spec.url, "http.url", fail)?;
    for (header, value) in &spec.headers {
        known.template(value, &format!("http.headers.{header}"), fail)?;
    }
    if let Some(body) = &spec.body {
        check_body(body, "http.body", known, fail)?;
    }
    let retry = spec
        .retry
        .as_ref()
        .map(|retry| retry_policy(retry, fail))
        .transpose()?
        .unwrap_or_default();
    let timeout = duration_at(spec.timeout.as_deref(), "http.timeout", fail)?
        .unwrap_or(Duration::from_secs(30));
    if let Some(save) = &spec.save {
        check_syntax(save, "http.save", fail)?;
    }
    known.saved_opaque(spec.save.as_deref());
    Ok(StepSpec::Http(HttpSpec {
        method,
        url: spec.url,
        body: spec.body,
        headers: spec.headers,
        save: spec.save,
        retry,
        timeout,
    }))
}

fn retry_policy(retry: &RetryDoc, fail: Fail<'_>) -> Result<RetryPolicy, LoadError> {
    if !(1..=100).contains(&retry.attempts) {
        return Err(fail("http.retry.attempts", "must be from 1 to 100".into()));
    }
    let backoff = duration_at(retry.backoff.as_deref(), "http.retry.backoff", fail)?
        .unwrap_or(Duration::from_secs(1));
    let mut policy = RetryPolicy::exponential(retry.attempts, backoff);
    if let Some(text) = retry.max_backoff.as_deref() {
        policy.max_backoff = duration(text, "http.retry.max_backoff", fail)?;
    }
    Ok(policy)
}

pub(super) fn notify(
    value: serde_yaml_ng::Value,
    known: &Known,
    fail: Fail<'_>,
) -> Result<StepSpec, LoadError> {
    let spec: NotifyDoc = decode(value, "notify", fail)?;
    known.template(&spec.title, "notify.title", fail)?;
    let message = spec
        .message
        .unwrap_or_else(|| "Your answer is requested.".to_owned());
    known.template(&message, "notify.message", fail)?;
    Ok(StepSpec::Notify {
        title: spec.title,
        message,
    })
}

/// A branch; `target` finds the later step a case or the default names.
pub(super) fn branch(
    value: serde_yaml_ng::Value,
    known: &Known,
    fail: Fail<'_>,
    target: &dyn Fn(&str, &str) -> Result<usize, LoadError>,
) -> Result<StepSpec, LoadError> {
    let spec: BranchDoc = decode(value, "branch", fail)?;
    known.read(&spec.on, "branch.on", fail)?;
    if spec.cases.is_empty() {
        return Err(fail("branch.cases", "needs at least one case".into()));
    }
    let mut cases = Vec::new();
    for (value, wanted) in &spec.cases {
        cases.push((
            value.clone(),
            target(&format!("branch.cases.{value}"), wanted)?,
        ));
    }
    let default = spec
        .default
        .as_deref()
        .map(|wanted| target("branch.default", wanted))
        .transpose()?;
    Ok(StepSpec::Branch {
        on: spec.on,
        cases,
        default,
    })
}

/// The schema a step names, when it names one.
fn schema_at(
    schema: Option<&serde_json::Value>,
    field: &str,
    fail: Fail<'_>,
) -> Result<Option<FormSchema>, LoadError> {
    schema
        .map(|schema| form_schema(schema, field, fail))
        .transpose()
}

/// The duration a step gives, when it gives one.
fn duration_at(
    text: Option<&str>,
    field: &str,
    fail: Fail<'_>,
) -> Result<Option<Duration>, LoadError> {
    text.map(|text| duration(text, field, fail)).transpose()
}
