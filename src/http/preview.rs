//! Previewing a page tree: the JSON API and the author's preview page (admins only: it renders
//! whatever tree and data it is given, so strangers may not make the server do it).
//!
//! Reading and checking the tree and rendering it run off the async workers within the render
//! deadline, and both are bounded by the render budget.

use axum::{extract::State, response::Response};
use http::StatusCode;
use leptos::prelude::*;
use serde::Serialize;
use serde_json::Value;
use tessera_app::{
    preview::{PreviewBoxes, PreviewOutcome, PreviewReport, ReportLine},
    render::{render_tree, BudgetWatch, RenderCtx},
};

use super::{
    error::{AppError, ErrorBody},
    extract::{Form, Json},
    render::{fragment_html, html_document, RENDER_DEADLINE},
    AppState,
};
use crate::{
    demo::field_types,
    forms::validate_form::FormReport,
    pages::preview::{preview, PreviewError, PreviewInput},
    util::blocking::{within_deadline, BlockingError},
};

impl From<PreviewError> for AppError {
    fn from(error: PreviewError) -> Self {
        match error {
            PreviewError::OverBudget(over) => over.into(),
            other => Self::BadRequest {
                code: "invalid_preview",
                field: Some(other.field().to_owned()),
                message: other.to_string(),
            },
        }
    }
}

/// The answer of `POST /api/pages/preview`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct PreviewAnswer {
    /// The page's HTML fragment, as a person would see it.
    pub html: String,
    /// `ValidateForm`'s report of the tree against the schema.
    pub validation: FormReport,
}

/// `POST /api/pages/preview`: `{tree, schema?, data?}` → `{html, validation}`.
///
/// # Errors
/// 400 naming `tree` or `schema` when they cannot be read; 422 `render_budget` when the page
/// would cost more than the render budget; 503 past the render deadline.
#[utoipa::path(
    post,
    path = "/api/pages/preview",
    tag = "pages",
    request_body = PreviewInput,
    responses(
        (status = 200, description = "The rendered page and its `ValidateForm` report.", body = PreviewAnswer),
        (status = 400, description = "The body, `tree` or `schema` cannot be read (`invalid_body`, `invalid_preview` naming the field).", body = ErrorBody),
        (status = 422, description = "The page would cost more than the render budget (`render_budget`).", body = ErrorBody),
        (status = 503, description = "Rendering ran past its deadline.", body = ErrorBody),
    ),
)]
pub async fn preview_api(
    State(state): State<AppState>,
    Json(input): Json<PreviewInput>,
) -> Result<Json<PreviewAnswer>, AppError> {
    let catalog = state.page_catalog();
    let (checked, catalog) =
        within_deadline(RENDER_DEADLINE, move || (preview(&catalog, input), catalog)).await?;
    let checked = checked?;
    let mut ctx = RenderCtx::new(checked.data);
    ctx.catalog = catalog;
    let tree = checked.tree;
    let html = fragment_html(move || render_tree(&tree, &ctx)).await?;
    Ok(Json(PreviewAnswer {
        html,
        validation: checked.report,
    }))
}

/// `GET /preview` (admin): the editor, filled with the every-field-type example.
pub async fn preview_page(State(state): State<AppState>) -> Response {
    let pretty = |value: &Value| serde_json::to_string_pretty(value).unwrap_or_default();
    let tree = field_types::tree()
        .ok()
        .and_then(|tree| serde_json::to_value(tree).ok())
        .unwrap_or(Value::Null);
    let inputs = PreviewBoxes {
        tree: pretty(&tree),
        schema: pretty(&field_types::schema()),
        data: pretty(&field_types::data()),
    };
    editor(&state, StatusCode::OK, inputs, None).await
}

/// `POST /preview` (admin): render the pasted tree beside its `ValidateForm` report.
pub async fn submit_preview_page(
    State(state): State<AppState>,
    Form(inputs): Form<PreviewBoxes>,
) -> Response {
    let catalog = state.page_catalog();
    let pasted = inputs.clone();
    let checked = within_deadline(RENDER_DEADLINE, move || {
        let checked = PreviewInput::from_pasted(&pasted.tree, &pasted.schema, &pasted.data)
            .and_then(|input| preview(&catalog, input).map_err(|error| error.to_string()))?;
        match rendered_over_budget(&catalog, &checked) {
            Some(over) => Err(over.to_string()),
            None => Ok(checked),
        }
    })
    .await;
    let (status, outcome) = match checked {
        Ok(Ok(checked)) => (StatusCode::OK, Ok(checked)),
        Ok(Err(message)) => (StatusCode::UNPROCESSABLE_ENTITY, Err(message)),
        // The editor comes back with the author's text and says what happened, in the page.
        Err(BlockingError::TimedOut(deadline)) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Err(format!(
                "checking the tree took longer than {} seconds; try a smaller one",
                deadline.as_secs()
            )),
        ),
        Err(BlockingError::Failed(error)) => {
            tracing::error!(error = %error, "checking a pasted tree failed");
            let message = "something went wrong on our side".to_owned();
            (StatusCode::INTERNAL_SERVER_ERROR, Err(message))
        }
    };
    editor(&state, status, inputs, Some(outcome)).await
}

/// Whether rendering the checked tree goes over its budget (table rows are only counted as they
/// are written). Rendered once here, so an overrun is the editor again with the author's text and
/// a message (422), not the whole editor replaced by the error page `html_document` shows for a
/// document over budget. The render is itself bounded by the budget.
fn rendered_over_budget(
    catalog: &tessera_app::catalog::Catalog,
    checked: &crate::pages::preview::Preview,
) -> Option<tessera_app::render::OverBudget> {
    Owner::new().with(|| {
        let watch = BudgetWatch::provide();
        let mut ctx = RenderCtx::new(checked.data.clone());
        ctx.catalog = catalog.clone();
        let _html = render_tree(&checked.tree, &ctx).to_html();
        watch.overrun()
    })
}

async fn editor(
    state: &AppState,
    status: StatusCode,
    boxes: PreviewBoxes,
    result: Option<Result<crate::pages::preview::Preview, String>>,
) -> Response {
    let catalog = state.page_catalog();
    html_document(state, status, "Preview a page · Tessera", move || {
        let outcome = match result {
            None => PreviewOutcome::NotYet,
            Some(Err(message)) => PreviewOutcome::Refused(message),
            Some(Ok(checked)) => {
                let mut ctx = RenderCtx::new(checked.data);
                ctx.catalog = catalog;
                PreviewOutcome::Rendered {
                    report: report_lines(checked.report),
                    page: render_tree(&checked.tree, &ctx),
                }
            }
        };
        tessera_app::preview::preview_page(&boxes, outcome)
    })
    .await
}

/// ValidateForm's report in the words the preview page shows: errors, then warnings.
fn report_lines(report: FormReport) -> PreviewReport {
    let lines = report
        .errors
        .into_iter()
        .map(|issue| ("error", issue))
        .chain(report.warnings.into_iter().map(|issue| ("warning", issue)))
        .map(|(severity, issue)| ReportLine {
            severity,
            rule: issue.rule,
            place: [
                issue.node.map(|node| format!("node {node}")),
                issue.field.map(|field| format!("field {field}")),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", "),
            message: issue.message,
            fix: issue.fix,
        })
        .collect();
    PreviewReport {
        ok: report.ok,
        lines,
    }
}
