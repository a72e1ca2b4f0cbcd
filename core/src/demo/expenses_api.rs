//! The demo expenses API under `/demo-api/expenses`: somebody else's web API that the YAML
//! `expense-approval` example posts its decision to.
//!
//! | route | what |
//! |---|---|
//! | `GET /demo-api/expenses` | the claims, each with its decision once made |
//! | `GET /demo-api/expenses/{id}` | one claim |
//! | `POST /demo-api/expenses/{id}/decision` | `{decision: approve\|reject, reason}` → 200 the claim with it |
//!
//! A decision is recorded once per claim. A repeat carrying the same `Idempotency-Key` (a
//! workflow step re-run after a crash) gets the same 200; another decision is a 409. Like a
//! third-party service it keeps its decisions in its own memory, so they last until the process
//! stops; nothing of Tessera's reads them.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex, PoisonError},
};

use axum::{
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    routing::{get, post},
    Json, Router,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::expenses::{claims, Claim};
use crate::store::now_ms;

/// A decision on one claim.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClaimDecision {
    /// `approve` or `reject`.
    pub decision: String,
    /// Why.
    pub reason: String,
    /// When it was recorded, unix ms.
    pub decided_at_ms: i64,
    /// The `Idempotency-Key` it came with, if any.
    #[serde(skip)]
    key: Option<String>,
}

/// The API's memory: decisions by claim id.
#[derive(Clone, Debug, Default)]
pub struct ExpensesApi {
    decisions: Arc<Mutex<BTreeMap<String, ClaimDecision>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DecisionBody {
    decision: String,
    #[serde(default)]
    reason: String,
}

type Answer = (StatusCode, Json<Value>);

fn problem(status: StatusCode, message: &str) -> Answer {
    (status, Json(json!({"error": {"message": message}})))
}

impl ExpensesApi {
    fn view(&self, claim: &Claim) -> Value {
        let decisions = self
            .decisions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        json!({"claim": claim, "decision": decisions.get(&claim.id)})
    }
}

async fn list_claims(State(api): State<ExpensesApi>) -> Json<Value> {
    Json(Value::Array(
        claims().iter().map(|claim| api.view(claim)).collect(),
    ))
}

async fn get_claim(State(api): State<ExpensesApi>, Path(id): Path<String>) -> Answer {
    match claims().iter().find(|claim| claim.id == id) {
        Some(claim) => (StatusCode::OK, Json(api.view(claim))),
        None => problem(StatusCode::NOT_FOUND, "no such claim"),
    }
}

async fn decide(
    State(api): State<ExpensesApi>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Result<Json<DecisionBody>, axum::extract::rejection::JsonRejection>,
) -> Answer {
    let Some(claim) = claims().into_iter().find(|claim| claim.id == id) else {
        return problem(StatusCode::NOT_FOUND, "no such claim");
    };
    let Ok(Json(body)) = body else {
        return problem(
            StatusCode::UNPROCESSABLE_ENTITY,
            "the body must be {\"decision\": \"approve\" or \"reject\", \"reason\": \"…\"}",
        );
    };
    if !matches!(body.decision.as_str(), "approve" | "reject") {
        return problem(
            StatusCode::UNPROCESSABLE_ENTITY,
            "decision must be approve or reject",
        );
    }
    let key = headers
        .get("idempotency-key")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    {
        let mut decisions = api.decisions.lock().unwrap_or_else(PoisonError::into_inner);
        match decisions.get(&claim.id) {
            Some(earlier) if key.is_some() && earlier.key == key => {}
            Some(_) => return problem(StatusCode::CONFLICT, "this claim is already decided"),
            None => {
                decisions.insert(
                    claim.id.clone(),
                    ClaimDecision {
                        decision: body.decision,
                        reason: body.reason,
                        decided_at_ms: now_ms(),
                        key,
                    },
                );
            }
        }
    }
    (StatusCode::OK, Json(api.view(&claim)))
}

/// The `/demo-api/expenses` routes, with a fresh memory.
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/demo-api/expenses", get(list_claims))
        .route("/demo-api/expenses/{id}", get(get_claim))
        .route("/demo-api/expenses/{id}/decision", post(decide))
        .with_state(ExpensesApi::default())
}
