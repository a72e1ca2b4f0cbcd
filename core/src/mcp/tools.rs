//! The tools' definitions as `tools/list` shows them: names, descriptions written for a model,
//! input schemas and output schemas.
//!
//! The input schemas describe what [`super::arguments`] and `crate::asks::request` accept; they
//! are documentation for the client and its model, not the check (the server checks every
//! field itself and answers a wrong one with a tool error naming it). The output schema is an
//! ask as `GET /api/asks/{id}` shows it.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{json, Value};

use super::arguments::MAX_WAIT;
use crate::asks::{
    request::{MAX_EXPIRES_IN, MAX_PROMPT_CHARS, MIN_EXPIRES_IN},
    AskStatus,
};

/// Creates an ask and hands over the link (or the answer).
pub const ASK_PERSON: &str = "ask_person";
/// Reads an ask, optionally waiting for its answer.
pub const GET_ANSWER: &str = "get_answer";
/// Cancels an ask.
pub const CANCEL_ASK: &str = "cancel_ask";
/// Lists the newest asks.
pub const LIST_ASKS: &str = "list_asks";
/// For an MCP App's view only: the page it shows now.
pub const SHOW_PAGE: &str = "show_page";
/// For an MCP App's view only: sends what the person entered.
pub const SUBMIT_ANSWER: &str = "submit_answer";

/// Whether `name` is one of the server's tools (the view's own included), without building their
/// definitions.
#[must_use]
pub fn is_known(name: &str) -> bool {
    [
        ASK_PERSON,
        GET_ANSWER,
        CANCEL_ASK,
        LIST_ASKS,
        SHOW_PAGE,
        SUBMIT_ANSWER,
    ]
    .contains(&name)
}

/// Every tool for a client that renders MCP Apps (`apps`) or not, in the order `tools/list`
/// shows them. For one that does, `ask_person` shows the page inline, and two tools only its
/// view calls follow; a client that does not sees exactly [`definitions`].
#[must_use]
pub fn definitions_for(apps: bool) -> Vec<Tool> {
    let mut tools = definitions();
    if !apps {
        return tools;
    }
    if let Some(ask) = tools.first_mut() {
        ask.description = Some(ASK_PERSON_INLINE_DESCRIPTION.into());
        ask.meta = Some(super::apps::tool_meta_with_view());
    }
    let shown = Arc::new(object(json!({
        "type": "object",
        "properties": {"status": {"type": "string", "enum": ["open", "preparing", "submitted", "invalid", "navigated", "closed"]}},
        "required": ["status"],
    })));
    let view = json!({"type": "string", "minLength": 1, "maxLength": 128, "description": "The view's capability, from `_meta[\"tessera/page\"].view`."});
    tools.push(
        Tool::new(
            SHOW_PAGE,
            "For the page's view: the page as it is now (the form, or the receipt once answered), in `_meta[\"tessera/page\"].html`.",
            object(json!({
                "type": "object",
                "properties": {
                    "view": view,
                    "query": {"type": "string", "maxLength": super::inline::MAX_QUERY_BYTES, "description": "A table's page or sort on a page without a form, as its link's query."},
                },
                "required": ["view"],
                "additionalProperties": false,
            })),
        )
        .with_title("Show the page")
        .with_raw_output_schema(shown.clone())
        .with_annotations(ToolAnnotations::new().read_only(true).open_world(false))
        .with_meta(super::apps::tool_meta_app_only()),
    );
    tools.push(
        Tool::new(
            SUBMIT_ANSWER,
            "For the page's view: sends the person's form, exactly as their browser would post it to the page's link, with the button they pressed. Answers `status` and the page to show next in `_meta[\"tessera/page\"].html`.",
            object(json!({
                "type": "object",
                "properties": {
                    "view": view,
                    "body": {"type": "string", "description": "The form as application/x-www-form-urlencoded, including the pressed button's name and value."},
                },
                "required": ["view", "body"],
                "additionalProperties": false,
            })),
        )
        .with_title("Send the person's answer")
        .with_raw_output_schema(shown)
        .with_annotations(
            ToolAnnotations::new()
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(false),
        )
        .with_meta(super::apps::tool_meta_app_only()),
    );
    tools
}

/// Every tool for a client that does not render MCP Apps, in the order `tools/list` shows them.
#[must_use]
pub fn definitions() -> Vec<Tool> {
    let ask = Arc::new(object(ask_output_schema()));
    vec![
        Tool::new(ASK_PERSON, ASK_PERSON_DESCRIPTION, object(ask_person_input()))
            .with_title("Ask a person")
            .with_raw_output_schema(ask.clone())
            .with_annotations(
                ToolAnnotations::new()
                    .read_only(false)
                    .destructive(false)
                    .idempotent(false)
                    .open_world(true),
            ),
        Tool::new(
            GET_ANSWER,
            "Read an ask made with ask_person: its status and, once the person submitted, the typed answer in `response`. With `wait_seconds`, wait up to that long for the answer first (progress notifications while waiting). Never returns the link.",
            object(json!({
                "type": "object",
                "properties": {
                    "ask_id": {"type": "string", "description": "The id ask_person answered."},
                    "wait_seconds": wait_seconds("Wait up to this many seconds for the answer; 0 (the default) reads it at once."),
                },
                "required": ["ask_id"],
                "additionalProperties": false,
            })),
        )
        .with_title("Get a person's answer")
        .with_raw_output_schema(ask.clone())
        .with_annotations(ToolAnnotations::new().read_only(true).open_world(false)),
        Tool::new(
            CANCEL_ASK,
            "Cancel an ask that is still waiting: its link stops working and it ends `cancelled`. Fails once the ask is answered, expired or cancelled.",
            object(json!({
                "type": "object",
                "properties": {
                    "ask_id": {"type": "string", "description": "The id ask_person answered."},
                },
                "required": ["ask_id"],
                "additionalProperties": false,
            })),
        )
        .with_title("Cancel an ask")
        .with_raw_output_schema(ask)
        .with_annotations(
            ToolAnnotations::new()
                .read_only(false)
                .destructive(true)
                .idempotent(false)
                .open_world(false),
        ),
        Tool::new(
            LIST_ASKS,
            "List the newest asks (at most 100), newest first, each with its prompt and status; only those in `status` when given.",
            object(json!({
                "type": "object",
                "properties": {
                    "status": {"type": "string", "enum": statuses(), "description": "Only asks in this status."},
                },
                "additionalProperties": false,
            })),
        )
        .with_title("List asks")
        .with_raw_output_schema(Arc::new(object(list_output_schema())))
        .with_annotations(ToolAnnotations::new().read_only(true).open_world(false)),
    ]
}

const ASK_PERSON_DESCRIPTION: &str = "Ask a person a question through a generated web page and get their typed answer. \
The page is a form built for `schema` (a JSON Schema of fields: string, number, integer, boolean, enum, arrays of strings or enums, objects shown as fieldsets, and arrays of objects shown as editable lists of records, which may start from rows of `data`; a list of records inside a record is refused) showing `data`; \
the person opens a single-use link, answers, and the answer is validated against the schema. \
Returns the ask's id and status `waiting` with the link to give the person (the link is shown only in this result), \
or, when the answer arrives within `wait_seconds`, status `submitted` and the typed answer in `response`. \
With `elicit: \"url\"` and a client that can open URLs for elicitation, the link is sent to the person as a URL-mode elicitation and the call waits for the answer; declining it declines the ask. \
With `assignees` (e-mail addresses the server allows), each person gets a link of their own, returned in `links` (no shared `link`), and `approvals.required` of them must approve; the ask is `declined` once too many decline. \
Every page also offers Decline with a reason. Read it later with get_answer: `answers` lists who answered, when, and what.";

const ASK_PERSON_INLINE_DESCRIPTION: &str = "Ask a person a question through a generated page shown inline in this conversation, and get their typed answer. \
The page is a form built for `schema` (a JSON Schema of fields: string, number, integer, boolean, enum, arrays of strings or enums, objects shown as fieldsets, and arrays of objects shown as editable lists of records, which may start from rows of `data`; a list of records inside a record is refused) showing `data`. \
The call returns at once with the ask's id and status `waiting` while the person answers the page in the conversation; read the answer with get_answer (with `wait_seconds` to wait for it): `response` is the typed answer, validated against the schema. \
The person may also Decline with a reason. \
With `assignees` (e-mail addresses the server allows), the page is not shown here: each person gets a link of their own, returned in `links`, and `approvals.required` of them must approve.";

fn ask_person_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "prompt": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_PROMPT_CHARS,
                "description": "What to ask the person. A minijinja template rendered over `data`, e.g. \"Approve {{ claims | length }} claims?\".",
            },
            "schema": {
                "type": "object",
                "description": "The answer's JSON Schema, in the form subset: an object whose properties are string, number, integer, boolean, enum, or arrays of string or enum (title, description, default, min/max, pattern and format allowed). Default: one required free-text field `answer`.",
            },
            "data": {"description": "JSON the page shows (tables, figures) and the prompt may refer to."},
            "display": {"type": "boolean", "description": "A page with no form, readable until it expires (takes no schema)."},
            "expires_in": {
                "type": "integer",
                "minimum": MIN_EXPIRES_IN.as_secs(),
                "maximum": MAX_EXPIRES_IN.as_secs(),
                "description": "Seconds until the link expires (default 7 days).",
            },
            "notify": {
                "type": ["boolean", "object"],
                "description": "true: send the link through the server's notification channels; or recipients such as {\"email\": [\"a@example.com\"]}, within the operator's allowlist.",
            },
            "callback_url": {"type": "string", "description": "An http(s) URL the server POSTs the answer to, signed."},
            "assignees": {
                "type": "array",
                "items": {"type": "string"},
                "description": "The people who answer, by e-mail address (within the operator's allowlist) or the name of an operator-defined group (one vote any member gives): each person gets a link of their own. Cannot be combined with notify or elicit.",
            },
            "remind_after": {
                "type": "array",
                "items": {"type": "integer", "minimum": 1},
                "maxItems": 10,
                "description": "With assignees: seconds after the ask at which everyone who has not answered is e-mailed a fresh link.",
            },
            "escalate_after": {
                "type": "object",
                "properties": {
                    "after": {"type": "integer", "minimum": 1, "description": "Seconds after the ask."},
                    "to": {"type": "array", "items": {"type": "string"}, "description": "Addresses or groups asked too if the ask is still open then."},
                },
                "required": ["after", "to"],
                "additionalProperties": false,
            },
            "on_timeout": {
                "type": "string",
                "enum": ["cancel", "fail", "continue", "decline"],
                "description": "What the deadline (expires_in) does if the ask is still open: cancel (reported as expired, the default), fail, continue with `default`, decline.",
            },
            "default": {"type": "object", "description": "With on_timeout continue: the answer to go on with, checked against the schema."},
            "approvals": {
                "type": "object",
                "properties": {"required": {"type": "integer", "minimum": 1, "description": "How many assignees must approve (default 1)."}},
                "required": ["required"],
                "additionalProperties": false,
            },
            "decline": {
                "type": "object",
                "properties": {"reason": {"type": "string", "enum": ["optional", "required"], "description": "Whether a Decline must say why (default optional)."}},
                "additionalProperties": false,
            },
            "sign_in": {
                "type": "string",
                "enum": ["optional", "required"],
                "description": "\"required\": each assignee must sign in (by an e-mailed link) as themselves before answering, so answered_by is a signed-in identity. Needs assignees (default optional).",
            },
            "wait_seconds": wait_seconds("Wait up to this many seconds for the answer before returning (progress notifications while waiting); 0 (the default) returns the link at once. With elicit, the default is 300."),
            "elicit": {
                "type": "string",
                "enum": ["url"],
                "description": "\"url\": send the link as a URL-mode elicitation when the client supports it, then wait for the answer; otherwise the link is returned.",
            },
        },
        "required": ["prompt"],
        "additionalProperties": false,
    })
}

fn wait_seconds(description: &str) -> Value {
    json!({"type": "integer", "minimum": 0, "maximum": MAX_WAIT.as_secs(), "description": description})
}

fn statuses() -> Vec<&'static str> {
    AskStatus::ALL
        .iter()
        .map(|status| status.as_str())
        .collect()
}

/// The properties of an ask as the tools answer it (`AskView`).
fn ask_properties() -> Value {
    json!({
        "id": {"type": "string", "description": "The ask's id."},
        "status": {"type": "string", "enum": statuses()},
        "link": {"type": ["string", "null"], "description": "The page's link: only in the ask_person result that created it, while the ask waits; null for an ask with assignees."},
        "links": {"type": "array", "items": {"type": "object", "properties": {"assignee": {"type": "string"}, "link": {"type": "string"}}}, "description": "For an ask with assignees: each person's own link, only in the ask_person result that created it."},
        "assignees": {"type": "array", "items": {"type": "string"}, "description": "The people the ask is for."},
        "approvals_required": {"type": "integer", "description": "With assignees: how many must approve."},
        "answers": {
            "type": "array",
            "description": "Every answer given, oldest first, one per person: outcome submitted (with response) or declined (with reason).",
            "items": {"type": "object", "properties": {
                "answered_by": {"type": ["string", "null"], "description": "The assignee; null for the ask's one link."},
                "at": {"type": "string", "description": "When, RFC 3339 UTC."},
                "outcome": {"type": "string", "enum": ["submitted", "declined"]},
                "response": {"description": "The typed answer, when submitted."},
                "reason": {"type": ["string", "null"], "description": "Why they declined, when they said."},
            }},
        },
        "expires_at_ms": {"type": ["integer", "null"], "description": "When the link expires, unix ms."},
        "response": {"description": "The typed answer, once submitted; null before."},
        "submitted_at_ms": {"type": ["integer", "null"]},
        "error": {"type": ["string", "null"], "description": "Why the ask failed."},
        "callback": {"type": ["object", "null"], "description": "The callback's delivery, when the ask has a callback_url."},
    })
}

fn ask_output_schema() -> Value {
    json!({
        "type": "object",
        "properties": ask_properties(),
        "required": ["id", "status"],
    })
}

fn list_output_schema() -> Value {
    let mut item = ask_properties();
    if let Some(properties) = item.as_object_mut() {
        properties.insert(
            "prompt".to_owned(),
            json!({"type": "string", "description": "What the person is asked."}),
        );
    }
    json!({
        "type": "object",
        "properties": {
            "asks": {
                "type": "array",
                "items": {"type": "object", "properties": item, "required": ["id", "status", "prompt"]},
            },
        },
        "required": ["asks"],
    })
}

/// `value` as a JSON object (empty when it is not one).
pub(super) fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_takes_an_object_and_refuses_unknown_fields() {
        let tools = definitions();
        let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
        assert_eq!(names, [ASK_PERSON, GET_ANSWER, CANCEL_ASK, LIST_ASKS]);
        let every = definitions_for(true);
        assert!(every.iter().all(|tool| is_known(&tool.name)));
        assert!(!is_known("ask_persons"));
        for tool in &tools {
            assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
            assert_eq!(
                tool.input_schema["additionalProperties"], false,
                "{}",
                tool.name
            );
            assert!(tool.output_schema.is_some(), "{}", tool.name);
        }
    }
}
