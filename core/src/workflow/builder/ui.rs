//! `ui` steps: a page asked of the runner's page factory, from a template or the run's state.

use std::sync::Arc;

use serde_json::Value;

use crate::{
    forms::FormSchema,
    workflow::{
        page::{PageRequest, UiOptions},
        prompt::Template,
        step::{StepError, StepOutput, StepResult},
    },
};

use super::{fatal, Handler, StepContext, StepDef, StepDone, StepKind};

/// What a state-driven `ui` step asks for, worked out from the run's state when it runs (see
/// [`WorkflowBuilder::ui_from_state`](super::WorkflowBuilder::ui_from_state)).
#[derive(Clone, Debug)]
pub struct DynamicPage {
    /// The prompt, used as written (not a template: callers' text may contain `{{`).
    pub prompt: String,
    /// The template `prompt` was rendered from, if the caller rendered one: the page cache keys
    /// on it, so pages differing only in interpolated values share a cached tree.
    pub template: Option<String>,
    /// The response schema; `None` for a display-only page.
    pub schema: Option<FormSchema>,
    /// The page's data.
    pub data: Value,
    /// Per-page options (expiry, components, model); `data` is ignored here.
    pub options: UiOptions,
}

pub(super) fn ui_step(
    name: String,
    template: Template,
    schema: Option<FormSchema>,
    options: UiOptions,
) -> StepDef {
    let template_for_step = template.clone();
    let components = options.components.clone();
    let handler: Handler = Arc::new(move |context, state, _input| {
        let template = template_for_step.clone();
        let schema = schema.clone();
        let options = options.clone();
        Box::pin(async move {
            let prompt = template
                .render(&state)
                .map_err(|error| fatal("the prompt does not render", error))?;
            let data = match options.data.as_deref() {
                None => state.clone(),
                Some(pointer) => state.pointer(pointer).cloned().ok_or_else(|| {
                    StepError::fatal(anyhow::anyhow!(
                        "the data selector {pointer} matches nothing in the state"
                    ))
                })?,
            };
            let page = DynamicPage {
                prompt,
                template: Some(template.source().to_owned()),
                schema,
                data,
                options,
            };
            make_page(&context, state, page).await
        })
    });
    StepDef {
        name,
        kind: StepKind::Ui,
        retry: None,
        template: Some(template),
        handler,
        takes_unanswered: false,
        continues_unanswered: false,
        components,
    }
}

/// Asks the runner's page factory for `page` and hands its handle to the next step: the one
/// path every kind of `ui` step takes.
pub(crate) async fn make_page(
    context: &StepContext,
    state: Value,
    page: DynamicPage,
) -> StepResult<StepDone> {
    let factory = context.services.page_factory.clone().ok_or_else(|| {
        StepError::fatal(anyhow::anyhow!(
            "the runner has no page factory for ui steps"
        ))
    })?;
    let DynamicPage {
        prompt,
        template,
        schema,
        data,
        mut options,
    } = page;
    if options.components.is_empty() {
        options.components.clone_from(&context.services.components);
    }
    // A component chosen from the state at run time must still be one the server can render
    // when the person opens the link, possibly after a restart: the page records this very spec.
    if let Some(unknown) = options
        .components
        .iter()
        .find(|spec| !context.services.known_components.contains(spec))
    {
        return Err(StepError::fatal(anyhow::anyhow!(
            "component {} is not in the runner's page catalog, so its page could not be served: \
             register it with the runner (`RunnerBuilder::components`, `Options::components`)",
            unknown.name
        )));
    }
    if options.model.is_none() {
        options.model.clone_from(&context.services.model_spec);
    }
    let has_form = schema.is_some();
    let mut page = factory
        .create_page(PageRequest {
            run_id: context.run_id,
            step_index: context.step_index,
            step_name: context.step_name.clone(),
            attempt: context.attempt,
            prompt,
            template,
            schema,
            data,
            options,
        })
        .await?;
    if !has_form {
        page.webhook = None;
    }
    // The stored output drops the link; the next step finds it here (see `working_links`).
    context.services.links.put(page.page_id, page.links());
    Ok(StepDone {
        state,
        output: StepOutput::Page { page },
        goto: None,
    })
}
