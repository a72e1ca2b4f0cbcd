//! The demo items' HTTP handlers under `/demo-api/items`, and the parsing of their input.
//!
//! Thin handlers: parse the query or body into the model's types, call one store method, map the
//! result. Errors are JSON (`{"error": {"code", "message", "field"?}}`) like the rest of the app.
//! A bulk call over [`MAX_BATCH_SIZE`] ids is answered `429 Too Many Requests` with `Retry-After`:
//! the site is `rate-limited`, and the orchestrator must chunk.

use std::collections::BTreeMap;

use axum::{
    body::Bytes,
    extract::{Path, RawQuery, State},
    http::{header, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    Json,
};
use serde::Deserialize;
use serde_json::{json, Value};

use super::{
    model::{
        Item, ItemFilter, ItemId, ItemPatch, ItemStatus, NewItem, Priority, MAX_BATCH_SIZE,
        MAX_PAGE_SIZE,
    },
    DemoItems,
};
use crate::{
    store::{now_ms, StoreError},
    util::dates::{parse_instant, CivilDate},
};

/// What a demo API call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum DemoApiError {
    /// The request is malformed.
    #[error("{message}")]
    BadRequest {
        /// What is wrong.
        message: String,
        /// The offending field.
        field: Option<String>,
    },
    /// No such item.
    #[error("no item with id {0}")]
    NotFound(String),
    /// A bulk call carried more ids than the site accepts at once.
    #[error("a batch may hold at most {max} ids, got {got}; split it and retry")]
    BatchTooLarge {
        /// The limit.
        max: usize,
        /// What was sent.
        got: usize,
    },
    /// Storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl DemoApiError {
    fn bad(field: &str, message: impl Into<String>) -> Self {
        Self::BadRequest {
            message: message.into(),
            field: Some(field.to_owned()),
        }
    }
}

impl IntoResponse for DemoApiError {
    fn into_response(self) -> Response {
        let (status, code, field) = match &self {
            Self::BadRequest { field, .. } => {
                (StatusCode::BAD_REQUEST, "bad_request", field.clone())
            }
            Self::NotFound(_) => (StatusCode::NOT_FOUND, "not_found", None),
            Self::BatchTooLarge { .. } => (StatusCode::TOO_MANY_REQUESTS, "batch_too_large", None),
            Self::Store(StoreError::NotFound) => (StatusCode::NOT_FOUND, "not_found", None),
            Self::Store(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal", None),
        };
        let message = if status == StatusCode::INTERNAL_SERVER_ERROR {
            tracing::error!(error = %self, "demo items request failed");
            "something went wrong on our side".to_owned()
        } else {
            self.to_string()
        };
        let mut body = json!({"error": {"code": code, "message": message}});
        if let Some(field) = field {
            body["error"]["field"] = json!(field);
        }
        let mut response = (status, Json(body)).into_response();
        if status == StatusCode::TOO_MANY_REQUESTS {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}

type Result<T, E = DemoApiError> = std::result::Result<T, E>;

/// Parses a search query string: `status`, `priority`, `updated_after`, `updated_before` (dates
/// or RFC 3339), `q`, `limit` (1–1000, default 1000), `offset`.
///
/// # Errors
/// [`DemoApiError::BadRequest`] naming the parameter that does not parse.
pub fn parse_filter(query: Option<&str>) -> Result<ItemFilter> {
    let mut params = BTreeMap::new();
    for (key, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        params.insert(key.into_owned(), value.into_owned());
    }
    let present = |key: &str| {
        params
            .get(key)
            .map(|value| value.trim())
            .filter(|value| !value.is_empty())
    };
    let instant = |key: &str| {
        present(key)
            .map(|text| {
                parse_instant(text).ok_or_else(|| {
                    DemoApiError::bad(
                        key,
                        format!("{key} must be YYYY-MM-DD or RFC 3339 UTC, got `{text}`"),
                    )
                })
            })
            .transpose()
    };
    let integer = |key: &str, default: i64, range: std::ops::RangeInclusive<i64>| {
        present(key).map_or(Ok(default), |text| {
            text.parse::<i64>()
                .ok()
                .filter(|value| range.contains(value))
                .ok_or_else(|| {
                    DemoApiError::bad(
                        key,
                        format!(
                            "{key} must be an integer in {}..={}, got `{text}`",
                            range.start(),
                            range.end()
                        ),
                    )
                })
        })
    };
    Ok(ItemFilter {
        status: present("status").map(parse_status).transpose()?,
        priority: present("priority").map(parse_priority).transpose()?,
        updated_after_ms: instant("updated_after")?,
        updated_before_ms: instant("updated_before")?,
        text: present("q").map(str::to_owned),
        limit: integer("limit", MAX_PAGE_SIZE, 1..=MAX_PAGE_SIZE)?,
        offset: integer("offset", 0, 0..=i64::MAX)?,
    })
}

fn parse_status(text: &str) -> Result<ItemStatus> {
    ItemStatus::parse(text).ok_or_else(|| {
        DemoApiError::bad(
            "status",
            format!("status must be open, in_progress or completed, got `{text}`"),
        )
    })
}

fn parse_priority(text: &str) -> Result<Priority> {
    Priority::parse(text).ok_or_else(|| {
        DemoApiError::bad(
            "priority",
            format!("priority must be low, medium or high, got `{text}`"),
        )
    })
}

fn parse_json<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T> {
    serde_json::from_slice(body).map_err(|error| DemoApiError::BadRequest {
        message: format!("the body is not the expected JSON: {error}"),
        field: None,
    })
}

/// A patch as sent: every field optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PatchBody {
    title: Option<String>,
    description: Option<String>,
    status: Option<ItemStatus>,
    priority: Option<Priority>,
    assignee: Option<String>,
    due_date: Option<String>,
}

impl PatchBody {
    fn into_patch(self) -> Result<ItemPatch> {
        if let Some(title) = &self.title {
            check_title(title)?;
        }
        Ok(ItemPatch {
            title: self.title.map(|title| title.trim().to_owned()),
            description: self.description,
            status: self.status,
            priority: self.priority,
            assignee: self.assignee,
            due_date: self.due_date.as_deref().map(parse_due_date).transpose()?,
        })
    }
}

fn check_title(title: &str) -> Result<()> {
    let length = title.trim().chars().count();
    if (1..=200).contains(&length) {
        Ok(())
    } else {
        Err(DemoApiError::bad(
            "title",
            "title must have 1 to 200 characters",
        ))
    }
}

fn parse_due_date(text: &str) -> Result<CivilDate> {
    CivilDate::parse(text).ok_or_else(|| {
        DemoApiError::bad(
            "due_date",
            format!("due_date must be YYYY-MM-DD, got `{text}`"),
        )
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BulkUpdateBody {
    ids: Vec<ItemId>,
    title: Option<String>,
    description: Option<String>,
    status: Option<ItemStatus>,
    priority: Option<Priority>,
    assignee: Option<String>,
    due_date: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BulkDeleteBody {
    ids: Vec<ItemId>,
}

fn check_batch(ids: &[ItemId]) -> Result<()> {
    if ids.is_empty() {
        return Err(DemoApiError::bad("ids", "ids must name at least one item"));
    }
    if ids.len() > MAX_BATCH_SIZE {
        return Err(DemoApiError::BatchTooLarge {
            max: MAX_BATCH_SIZE,
            got: ids.len(),
        });
    }
    Ok(())
}

fn missing(requested: &[ItemId], found: &[ItemId]) -> Vec<ItemId> {
    requested
        .iter()
        .filter(|id| !found.contains(id))
        .cloned()
        .collect()
}

/// `GET /demo-api/items`: search with filters.
pub(super) async fn search_items(
    State(demo): State<DemoItems>,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>> {
    let filter = parse_filter(query.as_deref())?;
    demo.ensure_seeded().await?;
    let page = demo.store.search_demo_items(&filter).await?;
    Ok(Json(json!({
        "items": page.items,
        "total": page.total,
        "limit": filter.limit,
        "offset": filter.offset,
    })))
}

/// What a store error about item `id` answers: no such row is a 404 naming the id.
fn item_error(id: &str) -> impl FnOnce(StoreError) -> DemoApiError + '_ {
    move |error| match error {
        StoreError::NotFound => DemoApiError::NotFound(id.to_owned()),
        other => other.into(),
    }
}

/// `GET /demo-api/items/{id}`.
pub(super) async fn get_item(
    State(demo): State<DemoItems>,
    Path(id): Path<String>,
) -> Result<Json<Item>> {
    demo.ensure_seeded().await?;
    let item = demo
        .store
        .demo_item(&ItemId(id.clone()))
        .await
        .map_err(item_error(&id))?;
    Ok(Json(item))
}

/// `POST /demo-api/items`: create.
pub(super) async fn create_item(
    State(demo): State<DemoItems>,
    body: Bytes,
) -> Result<(StatusCode, Json<Item>)> {
    let new_item: NewItem = parse_json(&body)?;
    check_title(&new_item.title)?;
    let now = now_ms();
    let status = new_item.status.unwrap_or(ItemStatus::Open);
    let item = Item {
        id: ItemId::random(),
        title: new_item.title.trim().to_owned(),
        description: new_item.description,
        status,
        priority: new_item.priority.unwrap_or(Priority::Medium),
        assignee: new_item.assignee,
        due_date: new_item
            .due_date
            .as_deref()
            .map(parse_due_date)
            .transpose()?,
        created_at_ms: now,
        updated_at_ms: now,
        completed_at_ms: (status == ItemStatus::Completed).then_some(now),
    };
    demo.ensure_seeded().await?;
    let created = demo.store.create_demo_item(&item).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

/// `PATCH /demo-api/items/{id}`: change some fields.
pub(super) async fn update_item(
    State(demo): State<DemoItems>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Json<Item>> {
    let patch = parse_json::<PatchBody>(&body)?.into_patch()?;
    demo.ensure_seeded().await?;
    let item = demo
        .store
        .update_demo_item(&ItemId(id.clone()), &patch, now_ms())
        .await
        .map_err(item_error(&id))?;
    Ok(Json(item))
}

/// `DELETE /demo-api/items/{id}`.
pub(super) async fn delete_item(
    State(demo): State<DemoItems>,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    demo.ensure_seeded().await?;
    demo.store
        .delete_demo_item(&ItemId(id.clone()))
        .await
        .map_err(item_error(&id))?;
    Ok(Json(json!({"deleted": 1, "ids": [id]})))
}

/// `POST /demo-api/items/bulk-update`: `{ids, status?, priority?, …}`, at most 100 ids.
pub(super) async fn bulk_update(State(demo): State<DemoItems>, body: Bytes) -> Result<Json<Value>> {
    let request: BulkUpdateBody = parse_json(&body)?;
    check_batch(&request.ids)?;
    let patch = PatchBody {
        title: request.title,
        description: request.description,
        status: request.status,
        priority: request.priority,
        assignee: request.assignee,
        due_date: request.due_date,
    }
    .into_patch()?;
    if patch.is_empty() {
        return Err(DemoApiError::BadRequest {
            message: "a bulk update needs at least one field to change".into(),
            field: None,
        });
    }
    demo.ensure_seeded().await?;
    let updated = demo
        .store
        .bulk_update_demo_items(&request.ids, &patch, now_ms())
        .await?;
    let updated_ids: Vec<ItemId> = updated.iter().map(|item| item.id.clone()).collect();
    Ok(Json(json!({
        "updated": updated_ids.len(),
        "ids": updated_ids,
        "missing": missing(&request.ids, &updated_ids),
    })))
}

/// `POST /demo-api/items/bulk-delete`: `{ids}`, at most 100 ids.
pub(super) async fn bulk_delete(State(demo): State<DemoItems>, body: Bytes) -> Result<Json<Value>> {
    let request: BulkDeleteBody = parse_json(&body)?;
    check_batch(&request.ids)?;
    demo.ensure_seeded().await?;
    let deleted = demo.store.bulk_delete_demo_items(&request.ids).await?;
    Ok(Json(json!({
        "deleted": deleted.len(),
        "ids": deleted,
        "missing": missing(&request.ids, &deleted),
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_queries_parse_into_filters() -> Result<()> {
        let filter = parse_filter(Some(
            "status=completed&updated_after=2026-10-01&updated_before=2026-11-01&q=budget&limit=50",
        ))?;
        assert_eq!(filter.status, Some(ItemStatus::Completed));
        assert_eq!(filter.updated_after_ms, parse_instant("2026-10-01"));
        assert_eq!(filter.updated_before_ms, parse_instant("2026-11-01"));
        assert_eq!(filter.text.as_deref(), Some("budget"));
        assert_eq!(filter.limit, 50);
        assert_eq!(parse_filter(None)?.limit, MAX_PAGE_SIZE);
        Ok(())
    }

    #[test]
    fn bad_search_parameters_name_the_parameter() {
        for (query, field) in [
            ("status=finished", "status"),
            ("updated_after=last+week", "updated_after"),
            ("limit=0", "limit"),
            ("limit=5000", "limit"),
            ("priority=urgent", "priority"),
        ] {
            match parse_filter(Some(query)) {
                Err(DemoApiError::BadRequest {
                    field: Some(named), ..
                }) => assert_eq!(named, field, "{query}"),
                other => panic!("{query}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_batch_over_the_limit_is_refused_as_too_many() {
        let ids: Vec<ItemId> = (0..101)
            .map(|index| ItemId(format!("item-{index}")))
            .collect();
        assert!(matches!(
            check_batch(&ids),
            Err(DemoApiError::BatchTooLarge { max: 100, got: 101 })
        ));
        assert!(check_batch(&ids[..100]).is_ok());
        assert!(check_batch(&[]).is_err());
    }
}
