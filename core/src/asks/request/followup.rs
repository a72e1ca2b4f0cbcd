//! The bodies of the requests that act on an ask already started: `POST /api/asks/{id}/extend`
//! and `POST /api/asks/{id}/reissue`.

use std::time::Duration;

use serde_json::Value;

use super::{deadline::parse_expires_in, AskError, AskRequest};

/// Checks the body of `POST /api/asks/{id}/extend`: `{"expires_in": seconds}`, required, in the
/// range `POST /api/asks` accepts.
///
/// # Errors
/// [`AskError::Invalid`] naming the field at fault.
pub fn parse_extension(request: AskRequest) -> Result<Duration, AskError> {
    let Value::Object(mut body) = request.0 else {
        return Err(AskError::invalid(
            "body",
            "the body must be a JSON object such as {\"expires_in\": 86400}",
        ));
    };
    if let Some(unknown) = body.keys().find(|key| key.as_str() != "expires_in") {
        return Err(AskError::invalid(
            unknown.clone(),
            format!("unknown field `{unknown}`; the only field is expires_in"),
        ));
    }
    match body.remove("expires_in") {
        None | Some(Value::Null) => Err(AskError::invalid(
            "expires_in",
            "is required: seconds from now until the link expires",
        )),
        value => parse_expires_in(value),
    }
}

/// Checks the body of `POST /api/asks/{id}/reissue`: none (or `{}`) for every link the ask
/// still waits on, or `{"assignee": "a@example.com"}` for one person's.
///
/// # Errors
/// [`AskError::Invalid`] naming the field at fault.
pub fn parse_reissue(request: Option<AskRequest>) -> Result<Option<String>, AskError> {
    // `null` is no body, as the document's optional body allows.
    let Some(AskRequest(body)) = request.filter(|AskRequest(body)| !body.is_null()) else {
        return Ok(None);
    };
    let Value::Object(mut body) = body else {
        return Err(AskError::invalid(
            "body",
            "the body must be empty or a JSON object such as {\"assignee\": \"a@example.com\"}",
        ));
    };
    if let Some(unknown) = body.keys().find(|key| key.as_str() != "assignee") {
        return Err(AskError::invalid(
            unknown.clone(),
            format!("unknown field `{unknown}`; the only field is assignee"),
        ));
    }
    match body.remove("assignee") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(assignee)) => Ok(Some(assignee.trim().to_owned())),
        Some(_) => Err(AskError::invalid("assignee", "must be an e-mail address")),
    }
}
