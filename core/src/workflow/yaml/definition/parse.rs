//! Reading workflow files and checking each step, field by field, into a [`YamlWorkflow`].

use std::{path::Path, time::Duration};

use serde_json::Value;
use sha2::{Digest as _, Sha256};
use tessera_app::catalog::Catalog;

use crate::{
    forms::FormSchema,
    pages::people::{Escalation, OnDecline, People, Stage},
    workflow::{retry::RetryPolicy, yaml::pointer},
};

use super::{
    doc::{BranchDoc, FileDoc, HttpDoc, NotifyDoc, PromptDoc, StepDoc, UiDoc, WaitDoc, KINDS},
    known::Known,
    HttpSpec, LoadError, Next, OnTimeoutSpec, Step, StepSpec, YamlWorkflow,
};

/// Reads every `*.yaml` / `*.yml` file in `dir` (sorted by name) and checks it; a missing
/// directory holds no workflows.
///
/// # Errors
/// The first problem found, as one [`LoadError`] line; also two files defining one name.
pub fn load_dir(dir: &Path) -> Result<Vec<YamlWorkflow>, LoadError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => {
            return Err(LoadError {
                file: dir.display().to_string(),
                step: None,
                field: "TESSERA_WORKFLOWS_DIR".into(),
                reason: error.to_string(),
            })
        }
    };
    let mut paths: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "yaml" || extension == "yml")
        })
        .collect();
    paths.sort();
    let mut workflows: Vec<YamlWorkflow> = Vec::new();
    for path in paths {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(&path).map_err(|error| LoadError {
            file: file.clone(),
            step: None,
            field: "file".into(),
            reason: error.to_string(),
        })?;
        let stem = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        let workflow = parse_file(&file, &stem, &text)?;
        if let Some(earlier) = workflows.iter().find(|other| other.name == workflow.name) {
            return Err(LoadError {
                file,
                step: None,
                field: "name".into(),
                reason: format!(
                    "the workflow name `{}` is already defined by {}",
                    workflow.name, earlier.file
                ),
            });
        }
        workflows.push(workflow);
    }
    Ok(workflows)
}

/// Parses and checks one file's text; `stem` names the workflow when the file does not.
///
/// # Errors
/// The first problem found, as one [`LoadError`] line.
pub fn parse_file(file: &str, stem: &str, text: &str) -> Result<YamlWorkflow, LoadError> {
    let error = |step: Option<&str>, field: &str, reason: String| LoadError {
        file: file.to_owned(),
        step: step.map(str::to_owned),
        field: field.to_owned(),
        reason,
    };
    let document: FileDoc = serde_yaml_ng::from_str(text)
        .map_err(|problem| error(None, "yaml", problem.to_string()))?;
    let name = document.name.unwrap_or_else(|| stem.to_owned());
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(error(
            None,
            "name",
            format!("`{name}` must be letters, digits, - and _ only"),
        ));
    }
    let initial_state = match document.state {
        None | Some(Value::Null) => serde_json::Map::new(),
        Some(Value::Object(map)) => map,
        Some(_) => {
            return Err(error(
                None,
                "state",
                "must be a mapping of keys to values".into(),
            ))
        }
    };
    if document.steps.is_empty() {
        return Err(error(
            None,
            "steps",
            "a workflow needs at least one step".into(),
        ));
    }
    // Names first: `branch` and `next` may name any step, and a name used twice is an error
    // however far apart the two are.
    let mut docs = Vec::new();
    for (index, raw) in document.steps.into_iter().enumerate() {
        let label = raw
            .get("name")
            .and_then(serde_yaml_ng::Value::as_str)
            .map_or_else(|| format!("steps[{index}]"), str::to_owned);
        let doc: StepDoc = serde_yaml_ng::from_value(raw)
            .map_err(|problem| error(Some(&label), "step", problem.to_string()))?;
        if doc.name.trim().is_empty() {
            return Err(error(Some(&label), "name", "must not be empty".into()));
        }
        if let Some(earlier) = docs
            .iter()
            .position(|other: &StepDoc| other.name == doc.name)
        {
            return Err(error(
                Some(&doc.name),
                "name",
                format!(
                    "the step name `{}` is used twice (steps {} and {})",
                    doc.name,
                    earlier + 1,
                    index + 1
                ),
            ));
        }
        docs.push(doc);
    }
    let names: Vec<String> = docs.iter().map(|doc| doc.name.clone()).collect();
    let mut known = Known::new(&initial_state);
    let mut steps = Vec::new();
    let mut last_schema: Option<FormSchema> = None;
    for (index, doc) in docs.into_iter().enumerate() {
        let step_name = doc.name.clone();
        let fail = |field: &str, reason: String| error(Some(&step_name), field, reason);
        let target = |field: &str, wanted: &str| -> Result<usize, LoadError> {
            let found = names
                .iter()
                .position(|name| name == wanted)
                .ok_or_else(|| fail(field, format!("no step is named `{wanted}`")))?;
            if found <= index {
                return Err(fail(
                    field,
                    format!("`{wanted}` is not a later step; a run only moves forward"),
                ));
            }
            Ok(found)
        };
        let given: Vec<&str> = KINDS
            .iter()
            .copied()
            .filter(|kind| match *kind {
                "prompt" => doc.prompt.is_some(),
                "ui" => doc.ui.is_some(),
                "wait" => doc.wait.is_some(),
                "http" => doc.http.is_some(),
                "notify" => doc.notify.is_some(),
                _ => doc.branch.is_some(),
            })
            .collect();
        let kind_name = match given.as_slice() {
            [one] => *one,
            [] => return Err(fail("step", format!("needs one of {}", KINDS.join(", ")))),
            many => {
                return Err(fail(
                    "step",
                    format!("has {}; a step does one thing", many.join(" and ")),
                ))
            }
        };
        let next = match (&doc.next, doc.end) {
            (Some(_), true) => return Err(fail("next", "give `next` or `end`, not both".into())),
            (Some(wanted), false) => Next::Step(target("next", wanted)?),
            (None, true) => Next::End,
            (None, false) => Next::Following,
        };
        let body = |kind: &str, value: Option<serde_yaml_ng::Value>| {
            value.ok_or_else(|| fail(kind, "missing".into()))
        };
        let kind = match kind_name {
            "prompt" => {
                let spec: PromptDoc = decode(body("prompt", doc.prompt)?, "prompt", &fail)?;
                known.template(&spec.template, "prompt.template", &fail)?;
                let schema = spec
                    .schema
                    .as_ref()
                    .map(|schema| form_schema(schema, "prompt.schema", &fail))
                    .transpose()?;
                if schema.is_none() && spec.save.is_none() {
                    return Err(fail(
                        "prompt.save",
                        "a prompt without a schema needs `save`: the pointer its text goes to"
                            .into(),
                    ));
                }
                if let Some(save) = &spec.save {
                    check_syntax(save, "prompt.save", &fail)?;
                }
                known.saved(spec.save.as_deref(), schema.as_ref());
                StepSpec::Prompt {
                    template: spec.template,
                    schema,
                    save: spec.save,
                }
            }
            "ui" => {
                let spec: UiDoc = decode(body("ui", doc.ui)?, "ui", &fail)?;
                known.template(&spec.prompt, "ui.prompt", &fail)?;
                let schema = spec
                    .schema
                    .as_ref()
                    .map(|schema| form_schema(schema, "ui.schema", &fail))
                    .transpose()?;
                if let Some(data) = &spec.data {
                    known.read(data, "ui.data", &fail)?;
                }
                let catalog = Catalog::defaults();
                for (position, component) in spec.components.iter().enumerate() {
                    if catalog.get(component).is_none() {
                        return Err(fail(
                            &format!("ui.components[{position}]"),
                            format!("no component is named `{component}`; /components lists them"),
                        ));
                    }
                }
                let expires_in = spec
                    .expires_in
                    .as_deref()
                    .map(|text| duration(text, "ui.expires_in", &fail))
                    .transpose()?;
                let check_assignee = |address: &str, field: &str| -> Result<(), LoadError> {
                    known.template(address, field, &fail)?;
                    // A name without an `@` is a group's, checked against the operator's at start.
                    let group = crate::pages::groups::Groups::is_group_name(address);
                    if !address.contains("{{")
                        && !group
                        && address.parse::<lettre::Address>().is_err()
                    {
                        return Err(fail(field, format!("`{address}` is not an e-mail address")));
                    }
                    Ok(())
                };
                for (position, address) in spec.assignees.iter().enumerate() {
                    check_assignee(address, &format!("ui.assignees[{position}]"))?;
                }
                let (approvals, stage_docs) = match spec.approvals {
                    None => (1, Vec::new()),
                    Some(approvals) => match (approvals.required, approvals.stages) {
                        (_, None) => (approvals.required.unwrap_or(1), Vec::new()),
                        (None, Some(stages)) if spec.assignees.is_empty() => (1, stages),
                        (_, Some(_)) => {
                            return Err(fail(
                                "ui.approvals.stages",
                                "stages name their own assignees and required: drop `assignees` and `approvals.required`".into(),
                            ))
                        }
                    },
                };
                let mut stages = Vec::with_capacity(stage_docs.len());
                for (index, stage) in stage_docs.into_iter().enumerate() {
                    let field = format!("ui.approvals.stages[{index}]");
                    for (position, address) in stage.assignees.iter().enumerate() {
                        check_assignee(address, &format!("{field}.assignees[{position}]"))?;
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
                    stages.push(Stage {
                        assignees: stage.assignees,
                        required: stage.required.unwrap_or(1),
                        on_decline,
                    });
                }
                if !stages.is_empty() {
                    if schema.is_none() {
                        return Err(fail(
                            "ui.approvals.stages",
                            "a page without a schema takes no answer, so it has no one to ask in stages".into(),
                        ));
                    }
                    if let Err((field, reason)) = People::in_stages(stages.clone()).check_stages() {
                        return Err(fail(&format!("ui.{field}"), reason));
                    }
                }
                let first_stage = stages.first();
                if !spec.assignees.is_empty() && schema.is_none() {
                    return Err(fail(
                        "ui.assignees",
                        "a page without a schema takes no answer, so it has no one to assign"
                            .into(),
                    ));
                }
                let remind_after = spec
                    .remind_after
                    .iter()
                    .enumerate()
                    .map(|(index, text)| {
                        duration(text, &format!("ui.remind_after[{index}]"), &fail)
                            .map(|after| after.as_secs())
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let escalate = spec
                    .escalate_after
                    .map(|escalation| {
                        duration(&escalation.after, "ui.escalate_after.after", &fail).map(|after| {
                            Escalation {
                                after_secs: after.as_secs(),
                                to: escalation.to,
                            }
                        })
                    })
                    .transpose()?;
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
                let sign_in_required =
                    match spec.sign_in.as_deref() {
                        None | Some("optional") => false,
                        Some("required") if !people.is_assigned() => return Err(fail(
                            "ui.sign_in",
                            "`required` needs assignees: the signed-in person must be one of them"
                                .into(),
                        )),
                        Some("required") => true,
                        Some(other) => {
                            return Err(fail(
                                "ui.sign_in",
                                format!("`{other}` is not optional or required"),
                            ))
                        }
                    };
                let lifetime = expires_in.unwrap_or(crate::pages::links::DEFAULT_EXPIRY);
                if let Err((field, reason)) = people.check_timers(lifetime.as_secs()) {
                    return Err(fail(&format!("ui.{field}"), reason));
                }
                let decline_reason_required =
                    match spec.decline.and_then(|decline| decline.reason).as_deref() {
                        None | Some("optional") => false,
                        Some("required") => true,
                        Some(other) => {
                            return Err(fail(
                                "ui.decline.reason",
                                format!("`{other}` is not optional or required"),
                            ))
                        }
                    };
                last_schema.clone_from(&schema);
                StepSpec::Ui {
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
                }
            }
            "wait" => {
                if next != Next::Following {
                    return Err(fail(
                        if doc.end { "end" } else { "next" },
                        "a wait resumes at the step after it; put `next` or `end` there".into(),
                    ));
                }
                let spec: WaitDoc = decode(body("wait", doc.wait)?, "wait", &fail)?;
                let timeout = spec
                    .timeout
                    .as_deref()
                    .map(|text| duration(text, "wait.timeout", &fail))
                    .transpose()?;
                let on_timeout =
                    match (spec.on_timeout.as_deref(), spec.default) {
                        (_, Some(_)) if timeout.is_none() => {
                            return Err(fail("wait.default", "needs a `timeout`".into()))
                        }
                        (None | Some("fail"), None) => OnTimeoutSpec::Fail,
                        (Some("cancel"), None) => OnTimeoutSpec::Cancel,
                        (Some("decline"), None) => OnTimeoutSpec::Decline,
                        (Some("continue"), Some(default)) => OnTimeoutSpec::Continue(default),
                        (Some("continue"), None) => return Err(fail(
                            "wait.default",
                            "`on_timeout: continue` needs the `default` answer to continue with"
                                .into(),
                        )),
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
                    check_syntax(save, "wait.save", &fail)?;
                    if index + 1 == names.len() {
                        return Err(fail(
                            "wait.save",
                            "the answer is saved by the step after the wait; add one".into(),
                        ));
                    }
                }
                known.saved(spec.save.as_deref(), last_schema.as_ref());
                if let Some(outcome) = &spec.outcome {
                    check_syntax(outcome, "wait.outcome", &fail)?;
                    if index + 1 == names.len() {
                        return Err(fail(
                            "wait.outcome",
                            "the outcome is written by the step after the wait; add one".into(),
                        ));
                    }
                    known.saved_opaque(Some(outcome));
                }
                StepSpec::Wait {
                    timeout,
                    on_timeout,
                    save: spec.save,
                    outcome: spec.outcome,
                }
            }
            "http" => {
                let spec: HttpDoc = decode(body("http", doc.http)?, "http", &fail)?;
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
                known.template(&spec.url, "http.url", &fail)?;
                for (header, value) in &spec.headers {
                    known.template(value, &format!("http.headers.{header}"), &fail)?;
                }
                if let Some(body) = &spec.body {
                    check_body(body, "http.body", &known, &fail)?;
                }
                let retry = match spec.retry {
                    None => RetryPolicy::default(),
                    Some(retry) => {
                        if !(1..=100).contains(&retry.attempts) {
                            return Err(fail(
                                "http.retry.attempts",
                                "must be from 1 to 100".into(),
                            ));
                        }
                        let mut policy = RetryPolicy::exponential(
                            retry.attempts,
                            retry
                                .backoff
                                .as_deref()
                                .map(|text| duration(text, "http.retry.backoff", &fail))
                                .transpose()?
                                .unwrap_or(Duration::from_secs(1)),
                        );
                        if let Some(text) = retry.max_backoff.as_deref() {
                            policy.max_backoff = duration(text, "http.retry.max_backoff", &fail)?;
                        }
                        policy
                    }
                };
                let timeout = spec
                    .timeout
                    .as_deref()
                    .map(|text| duration(text, "http.timeout", &fail))
                    .transpose()?
                    .unwrap_or(Duration::from_secs(30));
                if let Some(save) = &spec.save {
                    check_syntax(save, "http.save", &fail)?;
                }
                known.saved_opaque(spec.save.as_deref());
                StepSpec::Http(HttpSpec {
                    method,
                    url: spec.url,
                    body: spec.body,
                    headers: spec.headers,
                    save: spec.save,
                    retry,
                    timeout,
                })
            }
            "notify" => {
                let spec: NotifyDoc = decode(body("notify", doc.notify)?, "notify", &fail)?;
                known.template(&spec.title, "notify.title", &fail)?;
                let message = spec
                    .message
                    .unwrap_or_else(|| "Your answer is requested.".to_owned());
                known.template(&message, "notify.message", &fail)?;
                StepSpec::Notify {
                    title: spec.title,
                    message,
                }
            }
            _ => {
                if next != Next::Following {
                    return Err(fail(
                        if doc.end { "end" } else { "next" },
                        "a branch goes where its cases say; give it a `default` instead".into(),
                    ));
                }
                let spec: BranchDoc = decode(body("branch", doc.branch)?, "branch", &fail)?;
                known.read(&spec.on, "branch.on", &fail)?;
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
                StepSpec::Branch {
                    on: spec.on,
                    cases,
                    default,
                }
            }
        };
        steps.push(Step {
            name: doc.name,
            kind,
            next,
        });
    }
    Ok(YamlWorkflow {
        name,
        description: document.description,
        file: file.to_owned(),
        digest: format!("sha256:{}", hex::encode(Sha256::digest(text.as_bytes()))),
        initial_state,
        steps,
    })
}

fn decode<T: serde::de::DeserializeOwned>(
    value: serde_yaml_ng::Value,
    field: &str,
    fail: &dyn Fn(&str, String) -> LoadError,
) -> Result<T, LoadError> {
    serde_yaml_ng::from_value(value).map_err(|problem| fail(field, problem.to_string()))
}

fn form_schema(
    schema: &Value,
    field: &str,
    fail: &dyn Fn(&str, String) -> LoadError,
) -> Result<FormSchema, LoadError> {
    FormSchema::from_json_schema(schema).map_err(|problem| {
        fail(
            field,
            format!("not a form schema (fields of strings, numbers, booleans and enums, lists of them, objects and lists of records, no list of records inside a record): {problem}"),
        )
    })
}

pub(super) fn check_syntax(
    pointer: &str,
    field: &str,
    fail: &dyn Fn(&str, String) -> LoadError,
) -> Result<(), LoadError> {
    if pointer::tokens(pointer).is_none() {
        return Err(fail(
            field,
            format!("`{pointer}` is not a JSON pointer; it starts with /, e.g. /decision"),
        ));
    }
    Ok(())
}

/// Parses `30s`, `5m`, `2h`, `3d` or a number of seconds.
fn duration(
    text: &str,
    field: &str,
    fail: &dyn Fn(&str, String) -> LoadError,
) -> Result<Duration, LoadError> {
    let text = text.trim();
    let (number, unit) = text
        .find(|c: char| !c.is_ascii_digit())
        .map_or((text, ""), |split| text.split_at(split));
    let seconds = match (number.parse::<u64>(), unit) {
        (Ok(count), "" | "s") => Some(count),
        (Ok(count), "m") => count.checked_mul(60),
        (Ok(count), "h") => count.checked_mul(3600),
        (Ok(count), "d") => count.checked_mul(86_400),
        _ => None,
    };
    match seconds {
        Some(seconds) if seconds > 0 => Ok(Duration::from_secs(seconds)),
        _ => Err(fail(
            field,
            format!("`{text}` is not a duration such as 30s, 5m, 2h or 3d"),
        )),
    }
}

/// A body's strings are templates; `{$pointer: /path}` is the state's value there, typed.
fn check_body(
    body: &Value,
    field: &str,
    known: &Known,
    fail: &dyn Fn(&str, String) -> LoadError,
) -> Result<(), LoadError> {
    match body {
        Value::String(template) => known.template(template, field, fail),
        Value::Array(items) => items.iter().enumerate().try_for_each(|(index, item)| {
            check_body(item, &format!("{field}[{index}]"), known, fail)
        }),
        Value::Object(map) => {
            if let Some(pointer) = map.get("$pointer") {
                let Some(pointer) = pointer.as_str().filter(|_| map.len() == 1) else {
                    return Err(fail(
                        &format!("{field}.$pointer"),
                        "`$pointer` stands alone and names a JSON pointer".into(),
                    ));
                };
                return known.read(pointer, &format!("{field}.$pointer"), fail);
            }
            map.iter().try_for_each(|(key, item)| {
                check_body(item, &format!("{field}.{key}"), known, fail)
            })
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<YamlWorkflow, String> {
        parse_file("workflows/bad.yaml", "bad", text).map_err(|error| error.to_string())
    }

    const GOOD: &str = r#"
state: {claim: {id: exp-1, amount: 12.5}}
steps:
  - name: review
    ui:
      prompt: "Approve {{ claim.id }}?"
      data: /claim
      schema:
        type: object
        required: [decision]
        properties:
          decision: {type: string, enum: [approve, reject]}
  - name: decided
    wait: {timeout: 1d, on_timeout: cancel, save: /answer}
  - name: route
    branch: {on: /answer/decision, cases: {approve: pay, reject: done}}
  - name: pay
    http: {method: POST, url: "/demo-api/expenses/{{ claim.id }}/decision", body: {decision: "{{ answer.decision }}", amount: {$pointer: /claim/amount}}}
  - name: done
    notify: {title: "Claim {{ claim.id }} decided"}
"#;

    #[test]
    fn a_good_file_loads_with_its_steps_and_a_digest() -> Result<(), String> {
        let workflow = load(GOOD)?;
        assert_eq!(workflow.name, "bad");
        assert_eq!(
            workflow.step_names(),
            ["review", "decided", "route", "pay", "done"]
        );
        assert!(workflow.digest.starts_with("sha256:"));
        Ok(())
    }

    #[test]
    fn stages_load_in_order_and_exclude_assignees_beside_them() {
        let staged = "      approvals:\n        stages:\n          - {assignees: [ana@example.com]}\n          - {assignees: [finance, \"{{ who }}\"], required: 2, on_decline: continue}\n";
        let text = format!(
            "name: s\nstate: {{who: bo@example.com}}\nsteps:\n  - name: ask\n    ui:\n      prompt: p\n      schema: {{type: object, properties: {{ok: {{type: boolean}}}}}}\n{staged}"
        );
        let workflow = parse_file("s.yaml", "s", &text).map_err(|error| error.to_string());
        let stages = workflow
            .as_ref()
            .map(|workflow| match &workflow.steps[0].kind {
                StepSpec::Ui { stages, .. } => stages.clone(),
                _ => Vec::new(),
            });
        let stages = stages.unwrap_or_default();
        assert_eq!(stages.len(), 2, "{workflow:?}");
        assert_eq!(stages[1].assignees, ["finance", "{{ who }}"]);
        assert_eq!(stages[1].required, 2);
        assert_eq!(stages[1].on_decline, OnDecline::Continue);

        let beside = text.replace(
            "      approvals:",
            "      assignees: [cy@example.com]\n      approvals:",
        );
        let error = parse_file("s.yaml", "s", &beside)
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(error.contains("ui.approvals.stages"), "{error}");
        let bad = text.replace("on_decline: continue", "on_decline: later");
        let error = parse_file("s.yaml", "s", &bad)
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(
            error.contains("ui.approvals.stages[1].on_decline"),
            "{error}"
        );
    }

    #[test]
    fn sign_in_required_needs_assignees_and_one_of_two_words() {
        let with = |extra: &str| {
            GOOD.replace(
                "      data: /claim\n",
                &format!("      data: /claim\n{extra}"),
            )
        };
        assert!(load(&with(
            "      assignees: [ana@example.com]\n      sign_in: required\n"
        ))
        .is_ok());
        assert!(load(&with(
            "      assignees: [ana@example.com]\n      sign_in: optional\n"
        ))
        .is_ok());
        let alone = load(&with("      sign_in: required\n"))
            .err()
            .unwrap_or_default();
        assert!(
            alone.contains("ui.sign_in: `required` needs assignees"),
            "{alone}"
        );
        let other = load(&with(
            "      assignees: [ana@example.com]\n      sign_in: always\n",
        ))
        .err()
        .unwrap_or_default();
        assert!(
            other.contains("ui.sign_in: `always` is not optional or required"),
            "{other}"
        );
    }

    #[test]
    fn a_non_form_schema_under_ui_names_file_step_and_field() {
        let text = GOOD.replace(
            "decision: {type: string, enum: [approve, reject]}",
            // A list inside a record is outside the subset (objects and lists of records are in).
            "decision: {type: array, items: {type: object, properties: {a: {type: array, items: {type: object, properties: {b: {type: string}}}}}}}",
        );
        let error = load(&text).err().unwrap_or_default();
        assert!(
            error.starts_with(
                "invalid workflow file workflows/bad.yaml: step `review`: ui.schema: not a form schema"
            ),
            "{error}"
        );
        assert!(!error.contains('\n'));
    }

    #[test]
    fn an_unknown_pointer_names_file_step_and_field() {
        let text = GOOD.replace("on: /answer/decision", "on: /answer/verdict");
        assert_eq!(
            load(&text).err().as_deref(),
            Some("invalid workflow file workflows/bad.yaml: step `route`: branch.on: unknown pointer `/answer/verdict`: neither the initial `state` nor an earlier step's `save` puts anything there")
        );
    }

    #[test]
    fn a_template_that_does_not_parse_names_file_step_and_field() {
        let text = GOOD.replace("Approve {{ claim.id }}?", "Approve {{ claim.id ?");
        let error = load(&text).err().unwrap_or_default();
        assert!(
            error.starts_with("invalid workflow file workflows/bad.yaml: step `review`: ui.prompt: the template does not parse:"),
            "{error}"
        );
        assert!(!error.contains('\n'));
    }

    #[test]
    fn a_step_name_used_twice_names_file_step_and_field() {
        let text = GOOD.replace("name: pay", "name: review");
        let error = load(&text).err().unwrap_or_default();
        assert_eq!(
            error,
            "invalid workflow file workflows/bad.yaml: step `review`: name: the step name `review` is used twice (steps 1 and 4)"
        );
    }

    #[test]
    fn a_branch_target_must_be_a_later_step() {
        let text = GOOD.replace("reject: done", "reject: review");
        assert_eq!(
            load(&text).err().as_deref(),
            Some("invalid workflow file workflows/bad.yaml: step `route`: branch.cases.reject: `review` is not a later step; a run only moves forward")
        );
    }

    #[test]
    fn a_template_variable_the_state_never_has_is_refused() {
        let text = GOOD.replace(
            "Claim {{ claim.id }} decided",
            "Claim {{ clam.id }} decided",
        );
        assert_eq!(
            load(&text).err().as_deref(),
            Some("invalid workflow file workflows/bad.yaml: step `done`: notify.title: the template uses `clam`, which neither the initial `state` nor an earlier step's `save` provides")
        );
    }

    #[test]
    fn durations_methods_and_kinds_are_checked() {
        let text = GOOD.replace("timeout: 1d", "timeout: soon");
        assert!(load(&text).err().is_some_and(
            |error| error.contains("step `decided`: wait.timeout: `soon` is not a duration")
        ));
        let text = GOOD.replace("method: POST", "method: BREW");
        assert!(load(&text)
            .err()
            .is_some_and(|error| error.contains("step `pay`: http.method: `BREW`")));
        let text = GOOD.replace(
            "  - name: done\n",
            "  - name: done\n    wait: {timeout: 1s}\n",
        );
        assert!(load(&text)
            .err()
            .is_some_and(|error| error.contains("step `done`: step: has wait and notify")));
        assert!(load("steps: [}").err().is_some_and(
            |error| error.starts_with("invalid workflow file workflows/bad.yaml: yaml: ")
        ));
    }
}

#[cfg(test)]
mod shipped {
    use super::*;

    #[test]
    fn the_shipped_examples_load() -> Result<(), LoadError> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../workflows");
        let names: Vec<String> = load_dir(&dir)?
            .into_iter()
            .map(|workflow| workflow.name)
            .collect();
        assert_eq!(names, ["expense-approval", "weekly-digest"]);
        Ok(())
    }
}
