//! The tool loop: one model's run from an empty page, turn by turn, each tool call executed in
//! order against the page being built, until the model calls `Finish` (or stops calling tools)
//! and `ValidateForm` passes, or the turns run out. Every call and check is an event.

use serde_json::{json, Value};
use tessera_app::tree::PageTree;

use super::{
    attempt::{Attempt, AttemptEnd},
    setup::Setup,
    AgentError, MAX_TOKENS,
};
use crate::{
    agent::{
        events::{EventKind, EventLog},
        prompt::follow_up,
        tools::{Effect, Reply, Workspace, FINISH},
    },
    forms::validate_form::FormReport,
    llm::{adopt_text_tool_calls, ChatModel, ChatRequest, Message, ToolCall, Usage},
};

/// One model's run of the loop, from an empty page.
pub(super) async fn attempt(
    model: &dyn ChatModel,
    setup: &Setup<'_>,
    log: &mut EventLog<'_>,
) -> Result<Attempt, AgentError> {
    let input = setup.input;
    let mut workspace = Workspace::new(&input.catalog, input.schema.as_ref(), &input.data);
    let mut messages = vec![
        Message::system(setup.system.clone()),
        Message::user(setup.user.clone()),
    ];
    let mut attempt = Attempt {
        model: model.name(),
        mode: "tools",
        end: AttemptEnd::Exhausted,
        turns: 0,
        usage: Usage::default(),
        text_tool_calls: 0,
        tree: PageTree::default(),
        report: FormReport::default(),
        transcript: Vec::new(),
    };
    for turn in 1..=input.max_steps {
        let request = ChatRequest {
            messages: messages.clone(),
            tools: setup.tools().to_vec(),
            max_tokens: Some(MAX_TOKENS),
            temperature: None,
            response_format: None,
        };
        let Some(mut response) = attempt.call(model, request, turn, log).await? else {
            break;
        };
        // Small models often write their calls as JSON text; they count as calls of this turn.
        let text_tool_calls =
            adopt_text_tool_calls(&mut response, setup.tools(), &format!("text_{turn}_"));
        attempt.text_tool_calls += text_tool_calls;
        messages.push(Message::assistant(&response));
        let mut calls = Vec::new();
        let mut finish_called = response.tool_calls.is_empty();
        let mut told = false;
        for call in &response.tool_calls {
            let reply = if call.name == FINISH && call.arguments.is_ok() {
                finish_called = true;
                let (reply, refused) = reply_to_finish(&workspace, turn, log)?;
                told |= refused;
                reply
            } else {
                workspace.execute(call)
            };
            call_event(log, turn, &call.id, &call.name, &reply);
            calls.push(call_record(call, &reply));
            messages.push(if reply.is_error {
                Message::tool_error(call, reply.content)
            } else {
                Message::tool_result(call, reply.content)
            });
        }
        attempt.transcript.push(json!({
            "turn": turn,
            "text": response.text,
            "stop_reason": response.stop_reason,
            "usage": response.usage,
            "text_tool_calls": text_tool_calls,
            "calls": calls,
        }));
        let stopped = response.tool_calls.is_empty();
        if finish_called && settle_turn(&workspace, turn, stopped, told, log, &mut messages)? {
            attempt.end = AttemptEnd::Valid;
            log.flush().await?;
            break;
        }
        log.flush().await?;
    }
    attempt.report = workspace.check();
    attempt.tree = workspace.tree;
    Ok(attempt)
}

/// The reply to a well-formed `Finish`: done when `ValidateForm` passes, else refused with what
/// is still wrong (true: the model has been told).
fn reply_to_finish(
    workspace: &Workspace<'_>,
    turn: usize,
    log: &mut EventLog<'_>,
) -> Result<(Reply, bool), AgentError> {
    let report = workspace.check();
    validation_event(log, turn, "finish", &report);
    if report.ok {
        return Ok((
            Reply {
                content: json!({"finished": true}),
                is_error: false,
                effect: Effect::Finish,
            },
            false,
        ));
    }
    let message = follow_up(&report.errors)?;
    log.push(
        EventKind::FollowUp,
        json!({"turn": turn, "message": message, "errors": report.errors}),
    );
    Ok((
        Reply {
            content: json!({"error": {"rule": "not_finished", "message": message,
                                      "errors": report.errors}}),
            is_error: true,
            effect: Effect::Refused,
        },
        true,
    ))
}

/// One call of a turn as the transcript keeps it: its arguments (or the malformed text) and the
/// reply.
fn call_record(call: &ToolCall, reply: &Reply) -> Value {
    json!({
        "id": call.id,
        "tool": call.name,
        "arguments": match &call.arguments {
            Ok(arguments) => arguments.clone(),
            Err(malformed) => json!({"malformed": malformed.raw, "error": malformed.error}),
        },
        "result": reply.content,
        "is_error": reply.is_error,
    })
}

/// The end of a turn in which the model finished or `stopped` calling tools: true when the page
/// is valid; otherwise the model is told what is still wrong, unless its `Finish` was already
/// `told`.
fn settle_turn(
    workspace: &Workspace<'_>,
    turn: usize,
    stopped: bool,
    told: bool,
    log: &mut EventLog<'_>,
    messages: &mut Vec<Message>,
) -> Result<bool, AgentError> {
    let report = workspace.check();
    if report.ok {
        if stopped {
            validation_event(log, turn, "stopped", &report);
        }
        return Ok(true);
    }
    if !told {
        if stopped {
            validation_event(log, turn, "stopped", &report);
        }
        let message = follow_up(&report.errors)?;
        log.push(
            EventKind::FollowUp,
            json!({"turn": turn, "message": message, "errors": report.errors}),
        );
        messages.push(Message::user(message));
    }
    Ok(false)
}

/// A `validation` event: the report's error rules, fields and nodes, and how many warnings.
fn validation_event(log: &mut EventLog<'_>, turn: usize, source: &str, report: &FormReport) {
    let rules: Vec<Value> = report
        .errors
        .iter()
        .map(|issue| json!({"rule": issue.rule, "field": issue.field, "node": issue.node}))
        .collect();
    log.push(
        EventKind::Validation,
        json!({"turn": turn, "source": source, "ok": report.ok, "errors": rules,
               "warnings": report.warnings.len()}),
    );
}

/// The event of one tool call: what it placed, changed or refused.
fn call_event(log: &mut EventLog<'_>, turn: usize, call_id: &str, tool: &str, reply: &Reply) {
    let base = json!({"turn": turn, "call_id": call_id, "tool": tool});
    let (kind, extra) = match &reply.effect {
        Effect::Placed {
            id,
            component,
            inside,
        } if inside.is_empty() => (
            EventKind::ToolCall,
            json!({"component": component, "node": id}),
        ),
        Effect::Placed {
            id,
            component,
            inside,
        } => (
            EventKind::ToolCall,
            json!({"component": component, "node": id, "inside": inside}),
        ),
        Effect::Updated { id } | Effect::Moved { id } => {
            (EventKind::ToolCall, json!({ "node": id }))
        }
        Effect::Read => (EventKind::ToolCall, json!({})),
        Effect::Removed { ids } => (EventKind::ToolCall, json!({ "removed": ids })),
        Effect::Finish => (EventKind::ToolCall, json!({})),
        Effect::Validated(report) => {
            validation_event(log, turn, "tool", report);
            (EventKind::ToolCall, json!({"ok": report.ok}))
        }
        Effect::Refused => (
            EventKind::ToolError,
            json!({"error": reply.content.get("error").cloned().unwrap_or(Value::Null)}),
        ),
    };
    let mut payload = base;
    if let (Some(target), Value::Object(extra)) = (payload.as_object_mut(), extra) {
        target.extend(extra);
    }
    log.push(kind, payload);
}
