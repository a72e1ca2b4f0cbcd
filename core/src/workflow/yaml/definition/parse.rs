//! Reading workflow files and checking each step, field by field, into a [`YamlWorkflow`].

use std::{path::Path, time::Duration};

use serde_json::Value;
use sha2::{Digest as _, Sha256};

use crate::{forms::FormSchema, workflow::yaml::pointer};

use super::{
    doc::{FileDoc, StepDoc, KINDS},
    known::Known,
    step_kinds::{self, Fail},
    LoadError, Next, Step, StepSpec, YamlWorkflow,
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
    let docs = named_steps(document.steps, &error)?;
    let names: Vec<String> = docs.iter().map(|doc| doc.name.clone()).collect();
    let mut known = Known::new(&initial_state);
    let mut steps = Vec::new();
    let mut last_schema: Option<FormSchema> = None;
    for (index, doc) in docs.into_iter().enumerate() {
        let step = check_step(doc, index, &names, &mut known, last_schema.as_ref(), &error)?;
        if let StepSpec::Ui(ui) = &step.kind {
            last_schema.clone_from(&ui.schema);
        }
        steps.push(step);
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

/// How a file reports a problem: the step (when in one), the field and what is wrong.
type FileError<'a> = &'a dyn Fn(Option<&str>, &str, String) -> LoadError;

/// The steps with their names checked, before any step's fields: `branch` and `next` may name
/// any step, and a name used twice is an error however far apart the two are.
fn named_steps(
    raw_steps: Vec<serde_yaml_ng::Value>,
    error: FileError<'_>,
) -> Result<Vec<StepDoc>, LoadError> {
    let mut docs: Vec<StepDoc> = Vec::with_capacity(raw_steps.len());
    for (index, raw) in raw_steps.into_iter().enumerate() {
        let label = raw
            .get("name")
            .and_then(serde_yaml_ng::Value::as_str)
            .map_or_else(|| format!("steps[{index}]"), str::to_owned);
        let doc: StepDoc = serde_yaml_ng::from_value(raw)
            .map_err(|problem| error(Some(&label), "step", problem.to_string()))?;
        if doc.name.trim().is_empty() {
            return Err(error(Some(&label), "name", "must not be empty".into()));
        }
        if let Some(earlier) = docs.iter().position(|other| other.name == doc.name) {
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
    Ok(docs)
}

/// Step `index` of the file whose steps are `names`: its one kind, where it goes next and the
/// kind's fields. `known` is what the state holds before it and gains what it saves;
/// `last_schema` is the answer of the page a wait would wait on.
fn check_step(
    doc: StepDoc,
    index: usize,
    names: &[String],
    known: &mut Known,
    last_schema: Option<&FormSchema>,
    error: FileError<'_>,
) -> Result<Step, LoadError> {
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
    let kind_name = kind_of(&doc, &fail)?;
    let next = match (&doc.next, doc.end) {
        (Some(_), true) => return Err(fail("next", "give `next` or `end`, not both".into())),
        (Some(wanted), false) => Next::Step(target("next", wanted)?),
        (None, true) => Next::End,
        (None, false) => Next::Following,
    };
    let goes_on = |why: &str| {
        if next == Next::Following {
            Ok(())
        } else {
            Err(fail(if doc.end { "end" } else { "next" }, why.into()))
        }
    };
    let body = |kind: &str, value: Option<serde_yaml_ng::Value>| {
        value.ok_or_else(|| fail(kind, "missing".into()))
    };
    let kind = match kind_name {
        "prompt" => step_kinds::prompt(body("prompt", doc.prompt)?, known, &fail)?,
        "ui" => step_kinds::ui(body("ui", doc.ui)?, known, &fail)?,
        "wait" => {
            goes_on("a wait resumes at the step after it; put `next` or `end` there")?;
            let is_last = index + 1 == names.len();
            step_kinds::wait(body("wait", doc.wait)?, is_last, last_schema, known, &fail)?
        }
        "http" => step_kinds::http(body("http", doc.http)?, known, &fail)?,
        "notify" => step_kinds::notify(body("notify", doc.notify)?, known, &fail)?,
        _ => {
            goes_on("a branch goes where its cases say; give it a `default` instead")?;
            step_kinds::branch(body("branch", doc.branch)?, known, &fail, &target)?
        }
    };
    Ok(Step {
        name: doc.name,
        kind,
        next,
    })
}

/// The one kind a step gives.
fn kind_of(doc: &StepDoc, fail: Fail<'_>) -> Result<&'static str, LoadError> {
    let given: Vec<&'static str> = KINDS
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
    match given.as_slice() {
        [one] => Ok(*one),
        [] => Err(fail("step", format!("needs one of {}", KINDS.join(", ")))),
        many => Err(fail(
            "step",
            format!("has {}; a step does one thing", many.join(" and ")),
        )),
    }
}

pub(super) fn decode<T: serde::de::DeserializeOwned>(
    value: serde_yaml_ng::Value,
    field: &str,
    fail: &dyn Fn(&str, String) -> LoadError,
) -> Result<T, LoadError> {
    serde_yaml_ng::from_value(value).map_err(|problem| fail(field, problem.to_string()))
}

pub(super) fn form_schema(
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
pub(super) fn duration(
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
pub(super) fn check_body(
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
    use crate::pages::people::OnDecline;

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
                StepSpec::Ui(ui) => ui.stages.clone(),
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
