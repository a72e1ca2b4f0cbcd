//! Each kind of YAML step as an erased step handler, the same kind the Rust builder makes.
//!
//! State travels as the run's JSON object, laid over the file's initial `state`. A page travels
//! like a Rust `ui` step's: the `ui` step hands its [`PageHandle`] on, and every step that is
//! not a `wait` hands it on again, so `ui → notify → wait` sends the page's link and waits on
//! the page. The answer a `wait` resumes with reaches the step after it (as in the runner), which
//! writes it at the wait's `save` pointer before doing its own work.

use std::sync::Arc;

use serde_json::{Map, Value};
use tessera_app::catalog::Catalog;

use super::{
    definition::{HttpSpec, Next, OnTimeoutSpec, StepSpec, UiSpec, YamlWorkflow},
    http, pointer, YamlServices,
};
use crate::{
    forms::{validate::validate, FormSchema},
    notify::Notification,
    pages::{
        links::PageLinks,
        people::{email_assignees, People, Stage},
    },
    workflow::{
        builder::{
            ask_for_answer, ask_model, make_page, no_answer, working_links, Goto, Handler,
            StepContext, StepDef, StepDone, StepKind, WorkflowDef,
        },
        page::UiOptions,
        prompt::Prompt,
        retry::RetryPolicy,
        step::{
            declined_by, wait_for, OnTimeout, PageHandle, StepError, StepOutput, StepResult,
            Unanswered,
        },
        DynamicPage, Then as _, Workflow, WorkflowError,
    },
};

/// A compiled workflow's steps share the checked file and the services.
struct Compiled {
    workflow: YamlWorkflow,
    services: YamlServices,
}

fn fatal(what: impl std::fmt::Display) -> StepError {
    StepError::fatal(anyhow::anyhow!("{what}"))
}

fn render(template: &str, state: &Value, what: &str) -> StepResult<String> {
    Prompt::<()>::new(template)
        .into_template()
        .render(state)
        .map_err(|error| fatal(format!("{what} does not render: {error:#}")))
}

/// Renders an `http` step's URL: the values it prints are percent-encoded.
fn render_url(template: &str, state: &Value) -> StepResult<String> {
    Prompt::<()>::new(template)
        .into_template()
        .render_url(state)
        .map_err(|error| fatal(format!("the URL does not render: {error:#}")))
}

impl YamlWorkflow {
    /// Compiles the checked file into a workflow the registry and runner take like any other.
    ///
    /// # Errors
    /// [`WorkflowError::Invalid`] only if the file was not checked (a bug).
    pub fn compile(&self, services: &YamlServices) -> Result<Workflow<Value>, WorkflowError> {
        let compiled = Arc::new(Compiled {
            workflow: self.clone(),
            services: services.clone(),
        });
        let steps = self
            .steps
            .iter()
            .enumerate()
            .map(|(index, step)| StepDef {
                name: step.name.clone(),
                kind: match step.kind {
                    StepSpec::Ui { .. } => StepKind::Ui,
                    StepSpec::Prompt { .. } => StepKind::Prompt,
                    _ => StepKind::Code,
                },
                retry: match &step.kind {
                    StepSpec::Http(spec) => Some(spec.retry),
                    _ => None,
                },
                template: None,
                handler: handler(Arc::clone(&compiled), index),
                // The step after a wait with `outcome` hears how it ended, answered or not, and
                // the run goes on from it.
                takes_unanswered: after_outcome_wait(&self.steps, index),
                continues_unanswered: after_outcome_wait(&self.steps, index),
                components: Vec::new(),
            })
            .collect();
        Workflow::from_definition(WorkflowDef {
            name: self.name.clone(),
            steps,
            default_retry: RetryPolicy::default(),
            check_state: |state| {
                serde_json::from_value::<Map<String, Value>>(state.clone()).map(|_| ())
            },
            digest: Some(self.digest.clone()),
        })
    }
}

/// Whether step `index` follows a wait that records its `outcome`.
fn after_outcome_wait(steps: &[super::definition::Step], index: usize) -> bool {
    index
        .checked_sub(1)
        .and_then(|previous| steps.get(previous))
        .is_some_and(|previous| {
            matches!(
                previous.kind,
                StepSpec::Wait {
                    outcome: Some(_),
                    ..
                }
            )
        })
}

fn handler(compiled: Arc<Compiled>, index: usize) -> Handler {
    Arc::new(move |context, state, input| {
        let compiled = Arc::clone(&compiled);
        Box::pin(async move { compiled.run(index, context, state, input).await })
    })
}

impl Compiled {
    async fn run(
        &self,
        index: usize,
        context: StepContext,
        state: Value,
        input: Value,
    ) -> StepResult<StepDone> {
        let step = self
            .workflow
            .steps
            .get(index)
            .ok_or_else(|| fatal(format!("the workflow has no step {index}")))?;
        let mut state = self.with_initial_state(state)?;
        let previous = context
            .previous_index
            .and_then(|previous| usize::try_from(previous).ok())
            .and_then(|previous| self.workflow.steps.get(previous));
        let page = take_input(previous.map(|previous| &previous.kind), &mut state, input)?;
        let handed_on = |page: Option<PageHandle>| {
            page.map_or(StepOutput::None, |page| StepOutput::Page { page })
        };
        let mut goto = match step.next {
            Next::Following => None,
            Next::Step(target) => Some(Goto::Step(target)),
            Next::End => Some(Goto::End),
        };
        let output = match &step.kind {
            StepSpec::Ui(ui) => {
                let request = page_request(ui, &state)?;
                let done = make_page(&context, state, request).await?;
                return Ok(StepDone { goto, ..done });
            }
            StepSpec::Notify { title, message } => {
                self.notify(&context, &state, title, message, page.as_ref())
                    .await?;
                handed_on(page)
            }
            StepSpec::Wait {
                timeout,
                on_timeout,
                ..
            } => wait_output(page, *timeout, on_timeout)?,
            StepSpec::Http(spec) => {
                let response = self.http(&context, &state, spec).await?;
                if let Some(save) = &spec.save {
                    pointer::set(&mut state, save, response).map_err(fatal)?;
                }
                handed_on(page)
            }
            StepSpec::Branch { on, cases, default } => {
                goto = Some(Goto::Step(branch_target(&state, on, cases, *default)?));
                handed_on(page)
            }
            StepSpec::Prompt {
                template,
                schema,
                save,
            } => {
                let answer = prompt(&context, &state, template, schema.as_ref()).await?;
                save_answer(&mut state, save.as_deref(), answer)?;
                handed_on(page)
            }
        };
        Ok(StepDone {
            state,
            output,
            goto,
        })
    }

    /// The run's state with the file's initial `state` under it: a key the run lacks takes the
    /// file's value, so a run started with `{}` from the runs page has the example data.
    fn with_initial_state(&self, state: Value) -> StepResult<Value> {
        let Value::Object(mut map) = state else {
            return Err(fatal("the run's state is not a JSON object"));
        };
        for (key, value) in &self.workflow.initial_state {
            map.entry(key.clone()).or_insert_with(|| value.clone());
        }
        Ok(Value::Object(map))
    }

    async fn notify(
        &self,
        context: &StepContext,
        state: &Value,
        title: &str,
        message: &str,
        page: Option<&PageHandle>,
    ) -> StepResult<()> {
        let title = render(title, state, "the title")?;
        let message = render(message, state, "the message")?;
        let run_page = format!(
            "{}/runs/{}",
            self.services.public_url.trim_end_matches('/'),
            context.run_id
        );
        let links = match page {
            Some(page) => Some(working_links(context, page.page_id).await?),
            None => None,
        };
        if let (Some(links), Some(mail)) = (&links, &self.services.assignee_mail) {
            // Each person's own link goes to that person only; the channels get the run page.
            let _reached = email_assignees(mail, links.assigned()).await;
        }
        let link = links
            .as_ref()
            .and_then(PageLinks::shared)
            .map_or_else(|| run_page.clone(), str::to_owned);
        let Some(notifier) = &self.services.notifier else {
            tracing::info!(run.id = %context.run_id, run.page = %run_page, notify.title = %title, "no notification channel is configured; the run's page has the link");
            return Ok(());
        };
        let url = url::Url::parse(&link)
            .map_err(|error| fatal(format!("the link does not parse: {error}")))?;
        let report = notifier
            .notify(&Notification::new(title, message, url))
            .await;
        for (channel, error) in report.failures() {
            // A failed notification never fails the step: the link is also on the run's page.
            tracing::warn!(notify.channel = ?channel, error = %error, "notification failed");
        }
        Ok(())
    }

    async fn http(
        &self,
        context: &StepContext,
        state: &Value,
        spec: &HttpSpec,
    ) -> StepResult<Value> {
        let rendered = render_url(&spec.url, state)?;
        let url = http::resolve(&rendered, &self.services.public_url)?;
        if !self.services.hosts.allows(&url) {
            return Err(fatal(format!(
                "the host of {} is not allowed: add it to TESSERA_WORKFLOW_HTTP_HOSTS",
                url.origin().ascii_serialization()
            )));
        }
        let own_origin = http::is_own_origin(&url, &self.services.public_url);
        let mut request = self
            .services
            .client
            .request(spec.method.clone(), url)
            .timeout(spec.timeout)
            .header(
                "Idempotency-Key",
                format!("{}/{}", context.run_id, context.step_name),
            );
        for (header, value) in &spec.headers {
            request = request.header(header.as_str(), render(value, state, "a header")?);
        }
        if own_origin {
            request = request.headers(self.services.own_headers.clone());
        }
        if let Some(body) = &spec.body {
            request = request.json(&body_value(body, state)?);
        }
        http::send(request).await
    }
}

/// How a wait ended, as a wait's `outcome` records it for a `branch`.
fn outcome_of(unanswered: Option<Unanswered>, input: &Value) -> Value {
    match unanswered {
        None => serde_json::json!({"status": "submitted"}),
        Some(Unanswered::Cancelled) => serde_json::json!({"status": "cancelled"}),
        Some(Unanswered::Expired) => serde_json::json!({"status": "expired"}),
        Some(Unanswered::Declined) => {
            let decline = declined_by(input);
            let mut outcome = serde_json::json!({"status": "declined"});
            if let Some(reason) = decline.reason {
                outcome["reason"] = Value::String(reason);
            }
            if let Some(by) = decline.by {
                outcome["by"] = Value::String(by);
            }
            outcome
        }
    }
}

/// The request body: strings rendered as templates, `{$pointer: …}` replaced by the state's value.
fn body_value(body: &Value, state: &Value) -> StepResult<Value> {
    Ok(match body {
        Value::String(template) => Value::String(render(template, state, "the body")?),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| body_value(item, state))
                .collect::<StepResult<_>>()?,
        ),
        Value::Object(map) => match map.get("$pointer").and_then(Value::as_str) {
            Some(pointer) => state.pointer(pointer).cloned().ok_or_else(|| {
                fatal(format!(
                    "the body's pointer {pointer} matches nothing in the state"
                ))
            })?,
            None => Value::Object(
                map.iter()
                    .map(|(key, item)| Ok((key.clone(), body_value(item, state)?)))
                    .collect::<StepResult<_>>()?,
            ),
        },
        other => other.clone(),
    })
}

/// A model step: the reply's text, or with a schema an answer checked against it.
async fn prompt(
    context: &StepContext,
    state: &Value,
    template: &str,
    schema: Option<&FormSchema>,
) -> StepResult<Value> {
    let prompt = render(template, state, "the prompt")?;
    let Some(schema) = schema else {
        let reply = ask_model(context, prompt, Vec::new()).await?;
        return Ok(Value::String(reply.text.unwrap_or_default()));
    };
    let answer = ask_for_answer(context, prompt, schema.to_json_schema()).await?;
    let Some(Value::Object(fields)) = answer else {
        return Err(no_answer());
    };
    validate(schema, &fields).map_err(|errors| {
        let listed: Vec<String> = errors
            .iter()
            .map(|(field, message)| format!("{field}: {message}"))
            .collect();
        StepError::retryable(anyhow::anyhow!(
            "the model's answer does not fit the schema: {}",
            listed.join("; ")
        ))
    })?;
    Ok(Value::Object(fields))
}

/// What the step before hands this one: after a wait, its answer (or how it ended) is written
/// into `state`; after a `ui` step, the page it made comes back to be waited on or announced.
fn take_input(
    previous: Option<&StepSpec>,
    state: &mut Value,
    input: Value,
) -> StepResult<Option<PageHandle>> {
    match previous {
        Some(StepSpec::Wait { save, outcome, .. }) => {
            let unanswered = Unanswered::of(&input);
            if let Some(outcome) = outcome {
                pointer::set(state, outcome, outcome_of(unanswered, &input)).map_err(fatal)?;
            }
            // A marker is not an answer; and an answer nobody saves is dropped, never
            // mistaken for a page.
            if let (Some(save), None) = (save, unanswered) {
                pointer::set(state, save, input).map_err(fatal)?;
            }
            Ok(None)
        }
        _ if input.get("page_id").is_some() => serde_json::from_value(input)
            .map_err(|error| fatal(format!("the page handed on does not decode: {error}"))),
        _ => Ok(None),
    }
}

/// The page a `ui` step asks for: its prompt, assignees and stages rendered over `state`.
fn page_request(ui: &UiSpec, state: &Value) -> StepResult<DynamicPage> {
    let rendered = |addresses: &[String]| -> StepResult<Vec<String>> {
        addresses
            .iter()
            .map(|address| render(address, state, "an assignee"))
            .map(|address| address.map(|address| address.trim().to_owned()))
            .collect()
    };
    let stages = ui
        .stages
        .iter()
        .map(|stage| {
            Ok(Stage {
                assignees: rendered(&stage.assignees)?,
                ..stage.clone()
            })
        })
        .collect::<StepResult<Vec<_>>>()?;
    let people = People {
        decline_reason_required: ui.decline_reason_required,
        sign_in_required: ui.sign_in_required,
        remind_after: ui.remind_after.clone(),
        escalate: ui.escalate.clone(),
        ..if stages.is_empty() {
            People {
                assignees: rendered(&ui.assignees)?,
                required: ui.approvals,
                ..People::default()
            }
        } else {
            People::in_stages(stages)
        }
    };
    let prompt = render(&ui.prompt, state, "the prompt")?;
    let data = match &ui.data {
        None => state.clone(),
        Some(pointer) => state.pointer(pointer).cloned().ok_or_else(|| {
            fatal(format!(
                "the data pointer {pointer} matches nothing in the state"
            ))
        })?,
    };
    let catalog = Catalog::defaults();
    let options = UiOptions {
        components: ui
            .components
            .iter()
            .filter_map(|name| catalog.get(name).cloned())
            .collect(),
        max_steps: ui.max_steps,
        expires_in: ui.expires_in,
        model: None,
        data: None,
        people,
        ..UiOptions::default()
    };
    Ok(DynamicPage {
        prompt,
        // The cache keys on the template, so runs that differ only in state share a page.
        template: Some(ui.prompt.clone()),
        schema: ui.schema.clone(),
        data,
        options,
    })
}

/// A wait on the page handed on, or on its timeout alone.
fn wait_output(
    page: Option<PageHandle>,
    timeout: Option<std::time::Duration>,
    on_timeout: &OnTimeoutSpec,
) -> StepResult<StepOutput> {
    let token = page.and_then(|page| page.webhook);
    if token.is_none() && timeout.is_none() {
        return Err(fatal(
            "nothing to wait for: no page with a form came before this wait, and it has no timeout",
        ));
    }
    let mut wait = wait_for(token);
    if let Some(timeout) = timeout {
        let then = match on_timeout {
            OnTimeoutSpec::Fail => OnTimeout::Fail,
            OnTimeoutSpec::Cancel => OnTimeout::Cancel,
            OnTimeoutSpec::Decline => OnTimeout::Decline,
            OnTimeoutSpec::Continue(default) => OnTimeout::Continue(default.clone()),
        };
        wait = wait.timeout(timeout, then);
    }
    wait.into_output()
}

/// The step a branch goes to: the case naming the value at `on`, else its default.
fn branch_target(
    state: &Value,
    on: &str,
    cases: &[(String, usize)],
    default: Option<usize>,
) -> StepResult<usize> {
    let value = state.pointer(on);
    let key = match value {
        Some(Value::String(text)) => Some(text.clone()),
        Some(Value::Bool(flag)) => Some(flag.to_string()),
        Some(Value::Number(number)) => Some(number.to_string()),
        _ => None,
    };
    key.as_ref()
        .and_then(|key| cases.iter().find(|(case, _)| case == key))
        .map(|(_, target)| *target)
        .or(default)
        .ok_or_else(|| {
            fatal(format!(
                "no case of the branch matches {} at {on}, and it has no default",
                value.map_or_else(|| "nothing".to_owned(), Value::to_string)
            ))
        })
}

/// A prompt's answer written into the state: at `save`, or, without one, an object's fields
/// each at the top.
fn save_answer(state: &mut Value, save: Option<&str>, answer: Value) -> StepResult<()> {
    match (save, answer) {
        (Some(save), answer) => pointer::set(state, save, answer).map_err(fatal)?,
        (None, Value::Object(fields)) => {
            for (key, value) in fields {
                let at = format!("/{}", key.replace('~', "~0").replace('/', "~1"));
                pointer::set(state, &at, value).map_err(fatal)?;
            }
        }
        (None, _) => {}
    }
    Ok(())
}
