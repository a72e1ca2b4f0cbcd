//! The component gallery, the tool definitions a model sees, and the "every field type" page.

use std::collections::BTreeMap;

use axum::{
    body::Bytes,
    extract::{Path, State},
    response::{IntoResponse, Response},
    Json,
};
use http::{header, StatusCode};
use serde_json::Value;
use tessera_app::{
    binding::resolve_props,
    catalog::Catalog,
    components::download::{download_body, DownloadFormat},
    gallery::gallery_page,
    render::{render_tree, FormState, RenderCtx},
    tree::Node,
};

use super::{error::AppError, render::html_document, AppState};
use crate::{
    demo::field_types,
    forms::{FormSchema, Offered},
    pages::submission::{read_submission, Submission},
};

/// `GET /components`: every component rendered from its example, with its tool JSON.
pub async fn gallery(State(state): State<AppState>) -> Response {
    let catalog = state.model_catalog();
    html_document(&state, StatusCode::OK, "Components · Tessera", move || {
        gallery_page(catalog)
    })
    .await
}

/// `GET /api/components`: exactly the tool definitions a model is offered by a `ui` step that
/// names no components of its own.
#[utoipa::path(
    get,
    path = "/api/components",
    tag = "pages",
    responses((status = 200, description = "The tool definitions (`{name, description, parameters}`, parameters a JSON Schema), one per component.", body = Vec<Object>)),
)]
pub async fn tool_definitions(State(state): State<AppState>) -> Json<Vec<Value>> {
    Json(state.model_catalog().tool_definitions())
}

/// `GET /components/download/{file}`: the file a gallery `DownloadLink` example offers.
///
/// # Errors
/// 404 when no example has that node id and format.
pub async fn gallery_download(
    State(state): State<AppState>,
    Path(file): Path<String>,
) -> Result<Response, AppError> {
    let (node_id, extension) = file.rsplit_once('.').ok_or(AppError::NotFound)?;
    let format = DownloadFormat::from_extension(extension).ok_or(AppError::NotFound)?;
    let catalog = state.model_catalog();
    let spec = catalog
        .specs()
        .iter()
        .find(|spec| format!("gallery-{}", spec.name.to_lowercase()) == node_id)
        .ok_or(AppError::NotFound)?;
    let (props, data) = spec.example();
    Ok(download_response(
        &resolve_props(&props, &data),
        format,
        node_id,
    ))
}

/// A download served as an attachment, never rendered inline.
pub fn download_response(props: &Value, format: DownloadFormat, name: &str) -> Response {
    let (content_type, body) = download_body(props, format);
    let disposition = format!("attachment; filename=\"{name}.{}\"", format.extension());
    (
        [
            (header::CONTENT_TYPE, content_type.to_owned()),
            (header::CONTENT_DISPOSITION, disposition),
            (header::CACHE_CONTROL, "no-store".to_owned()),
        ],
        body,
    )
        .into_response()
}

/// `GET /components/try`: the every-field-type form, empty.
///
/// # Errors
/// Only if the built-in demo tree is broken.
pub async fn try_fields(State(state): State<AppState>) -> Result<Response, AppError> {
    try_page(&state, StatusCode::OK, FormState::default(), None).await
}

/// `POST /components/try`: decode and validate; 422 with the person's values, or the decoded JSON.
///
/// # Errors
/// Only if the built-in demo schema or tree is broken.
pub async fn submit_try_fields(
    State(state): State<AppState>,
    body: Bytes,
) -> Result<Response, AppError> {
    let schema = FormSchema::from_json_schema(&field_types::schema())
        .map_err(|error| AppError::Unexpected(anyhow::anyhow!("demo schema: {error}")))?;
    let tree = field_types::tree()
        .map_err(|error| AppError::Unexpected(anyhow::anyhow!("demo tree: {error}")))?;
    let offered = Offered::of_page(&tree, &Catalog::defaults(), &field_types::data());
    match read_submission(&schema, &offered, &body) {
        Submission::Valid(value) => {
            try_page(&state, StatusCode::OK, FormState::default(), Some(value)).await
        }
        Submission::Cancelled => {
            let cancelled = Some(Value::String("cancelled".into()));
            try_page(&state, StatusCode::OK, FormState::default(), cancelled).await
        }
        Submission::Declined(_) => {
            let declined = Some(Value::String("declined".into()));
            try_page(&state, StatusCode::OK, FormState::default(), declined).await
        }
        Submission::Invalid(form) => {
            try_page(&state, StatusCode::UNPROCESSABLE_ENTITY, form, None).await
        }
    }
}

async fn try_page(
    state: &AppState,
    status: StatusCode,
    form: FormState,
    decoded: Option<Value>,
) -> Result<Response, AppError> {
    let mut tree = field_types::tree()
        .map_err(|error| AppError::Unexpected(anyhow::anyhow!("demo tree: {error}")))?;
    if let Some(value) = decoded {
        let pretty = serde_json::to_string_pretty(&value).unwrap_or_default();
        tree.nodes.insert(
            "decoded".into(),
            Node {
                component: "Code".into(),
                props: serde_json::json!({"code": pretty, "language": "json"}),
                children: Vec::new(),
            },
        );
        tree.order.insert(2, "decoded".into());
    }
    let mut ctx = RenderCtx::new(field_types::data());
    ctx.form = form;
    ctx.query = BTreeMap::new();
    Ok(
        html_document(state, status, "Every field type · Tessera", move || {
            render_tree(&tree, &ctx)
        })
        .await,
    )
}

#[cfg(test)]
mod tests {
    use tessera_app::catalog::Catalog;

    use crate::{demo::field_types, forms::validate_form::validate_form, forms::FormSchema};

    #[test]
    fn the_every_field_type_page_passes_validate_form() -> Result<(), Box<dyn std::error::Error>> {
        let schema = FormSchema::from_json_schema(&field_types::schema())?;
        let report = validate_form(
            &field_types::tree()?,
            &Catalog::defaults(),
            Some(&schema),
            &field_types::data(),
        );
        assert!(report.ok, "{:#?}", report.errors);
        Ok(())
    }
}
