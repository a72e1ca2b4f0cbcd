//! The whole page in one answer: the model returns every node at once as one JSON document
//! constrained to the page schema (`agent::page_schema`); code places the nodes through the same
//! tool semantics as the loop (props checks, props completed from the response schema, parent
//! and Form rules) and runs `ValidateForm`. Problems go back once, as a list naming each node by
//! the id the model gave it; the model answers the whole page again. A page that is still not
//! valid after that one repair turn ends the attempt, and the caller falls back.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

use super::{Attempt, AttemptEnd, Setup, MAX_TOKENS};
use crate::{
    agent::{
        events::{EventKind, EventLog},
        page_schema::PAGE_SCHEMA_NAME,
        prompt::repair_message,
        tools::{Effect, Workspace},
    },
    forms::validate_form::FormReport,
    llm::{ChatModel, ChatRequest, Message, ResponseFormat, ToolCall, Usage},
};

/// Model turns of a whole-page attempt: the answer and one repair.
const TURNS: usize = 2;

/// One thing wrong with an answer, as the model is told it and the record keeps it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Problem {
    /// The rule broken (`invalid_props`, `missing_field`, `not_json`, …).
    pub rule: String,
    /// The node, by the id the model gave it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The node's component.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub component: Option<String>,
    /// The response schema's field concerned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
    /// What to change.
    pub fix: String,
}

impl Problem {
    fn new(rule: &str, message: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            rule: rule.to_owned(),
            node: None,
            component: None,
            field: None,
            message: message.into(),
            fix: fix.into(),
        }
    }

    fn at(mut self, node: &str, component: &str) -> Self {
        self.node = Some(node.to_owned());
        self.component = Some(component.to_owned());
        self
    }
}

/// What placing one answer did.
pub struct Placed {
    /// Everything wrong, placement refusals first, then `ValidateForm`'s errors.
    pub problems: Vec<Problem>,
    /// `ValidateForm`'s report on what was placed.
    pub report: FormReport,
    /// Nodes placed.
    pub nodes: usize,
}

/// One node of an answer, read leniently: `props` may be missing (then the node's other keys
/// are its props), `parent` may be absent.
struct AnswerNode {
    id: String,
    component: String,
    parent: Option<String>,
    props: Value,
}

/// The nodes of an answer, or the problem that stops it being read at all.
fn read_answer(text: &str) -> Result<Vec<AnswerNode>, Problem> {
    let trimmed = strip_fence(text.trim());
    let value: Value = serde_json::from_str(trimmed).map_err(|error| {
        Problem::new(
            "not_json",
            format!("the answer is not one JSON document ({error})"),
            "Answer with exactly one JSON object {\"nodes\": [...]} and nothing else.",
        )
    })?;
    let nodes = match value {
        Value::Object(mut object) => object.remove("nodes"),
        Value::Array(nodes) => Some(Value::Array(nodes)),
        _ => None,
    };
    let Some(Value::Array(nodes)) = nodes else {
        return Err(Problem::new(
            "no_nodes",
            "the answer has no \"nodes\" array",
            "Answer {\"nodes\": [{\"id\", \"component\", \"parent\", \"props\"}, ...]}.",
        ));
    };
    let mut read = Vec::with_capacity(nodes.len());
    for (index, node) in nodes.into_iter().enumerate() {
        let Value::Object(mut fields) = node else {
            return Err(Problem::new(
                "invalid_node",
                format!("nodes[{index}] is not an object"),
                "Write each node as {\"id\", \"component\", \"parent\", \"props\"}.",
            ));
        };
        let text = |fields: &mut Map<String, Value>, key: &str| match fields.remove(key) {
            Some(Value::String(text)) if !text.is_empty() => Some(text),
            _ => None,
        };
        let component = text(&mut fields, "component").unwrap_or_default();
        let id = text(&mut fields, "id").unwrap_or_else(|| format!("node{}", index + 1));
        let parent = text(&mut fields, "parent");
        let props = match fields.remove("props") {
            Some(props) => props,
            None => Value::Object(fields),
        };
        read.push(AnswerNode {
            id,
            component,
            parent,
            props: drop_nulls(props),
        });
    }
    Ok(read)
}

/// A fenced block's content (models without constrained output often fence their JSON).
fn strip_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let body = rest.split_once('\n').map_or(rest, |(_, body)| body);
    body.trim_end().strip_suffix("```").unwrap_or(body).trim()
}

/// Props without their `null`s: the strict schema makes a model write every optional prop, and
/// `null` is how it leaves one out.
fn drop_nulls(value: Value) -> Value {
    match value {
        Value::Object(object) => Value::Object(
            object
                .into_iter()
                .filter(|(_, value)| !value.is_null())
                .map(|(key, value)| (key, drop_nulls(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(drop_nulls).collect()),
        other => other,
    }
}

/// Places the answer `text` in `workspace` node by node, each exactly as a tool call placing it
/// would be, parents before children, and checks the page.
pub fn place_answer(text: &str, workspace: &mut Workspace<'_>) -> Placed {
    let nodes = match read_answer(text) {
        Ok(nodes) => nodes,
        Err(problem) => {
            let report = workspace.check();
            return Placed {
                problems: vec![problem],
                report,
                nodes: 0,
            };
        }
    };
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    let ids: BTreeSet<&str> = nodes.iter().map(|node| node.id.as_str()).collect();
    // The model's id → code's id, for placed nodes; and back, to name nodes in `ValidateForm`'s
    // errors by the model's ids.
    let mut placed: BTreeMap<String, String> = BTreeMap::new();
    let mut pending: Vec<&AnswerNode> = Vec::new();
    for node in &nodes {
        if !seen.insert(node.id.as_str()) {
            problems.push(
                Problem::new(
                    "duplicate_id",
                    format!("two nodes have the id `{}`", node.id),
                    "Give every node its own id.",
                )
                .at(&node.id, &node.component),
            );
            continue;
        }
        match &node.parent {
            Some(parent) if !ids.contains(parent.as_str()) || parent == &node.id => {
                problems.push(
                    Problem::new(
                        "unknown_parent",
                        format!("its parent `{parent}` is not a node of the answer"),
                        "Set parent to the id of a Layout node in the answer, or null.",
                    )
                    .at(&node.id, &node.component),
                );
            }
            _ => pending.push(node),
        }
    }
    // Parents first, in answer order otherwise; whatever never gets its parent placed is
    // reported once with the reason.
    let mut refused: BTreeSet<String> = BTreeSet::new();
    let mut progress = true;
    while progress && !pending.is_empty() {
        progress = false;
        let mut waiting = Vec::new();
        for node in pending {
            let parent = match &node.parent {
                None => None,
                Some(parent) => match placed.get(parent) {
                    Some(code_id) => Some(code_id.clone()),
                    None if refused.contains(parent) => {
                        refused.insert(node.id.clone());
                        problems.push(
                            Problem::new(
                                "parent_refused",
                                format!("not placed: its parent `{parent}` was refused"),
                                "Fix the parent; this node is placed with it.",
                            )
                            .at(&node.id, &node.component),
                        );
                        progress = true;
                        continue;
                    }
                    None => {
                        waiting.push(node);
                        continue;
                    }
                },
            };
            progress = true;
            let mut arguments = match &node.props {
                Value::Object(props) => props.clone(),
                _ => Map::new(),
            };
            // The node's place comes from the answer's `parent`, never from its props.
            arguments.remove("children");
            arguments.remove("parent");
            if let Some(parent) = parent {
                arguments.insert("parent".to_owned(), json!(parent));
            }
            let call = ToolCall::new(
                format!("node_{}", node.id),
                node.component.clone(),
                Value::Object(arguments),
            );
            let reply = workspace.execute(&call);
            match reply.effect {
                Effect::Placed { id, .. } => {
                    placed.insert(node.id.clone(), id);
                }
                _ => {
                    refused.insert(node.id.clone());
                    let error = &reply.content["error"];
                    let text = |key: &str| error[key].as_str().unwrap_or_default().to_owned();
                    let mut problem = Problem::new(
                        error["rule"].as_str().unwrap_or("refused"),
                        if node.component.is_empty() {
                            "the node names no component".to_owned()
                        } else {
                            text("message")
                        },
                        text("fix"),
                    )
                    .at(&node.id, &node.component);
                    problem.field = error["field"].as_str().map(str::to_owned);
                    problems.push(problem);
                }
            }
        }
        pending = waiting;
    }
    for node in pending {
        problems.push(
            Problem::new(
                "parent_cycle",
                "not placed: its parents form a cycle",
                "Make every parent chain end at a node whose parent is null.",
            )
            .at(&node.id, &node.component),
        );
    }
    let report = workspace.check();
    let model_ids: BTreeMap<&str, &str> = placed
        .iter()
        .map(|(model, code)| (code.as_str(), model.as_str()))
        .collect();
    for issue in &report.errors {
        let mut problem = Problem::new(&issue.rule, issue.message.clone(), issue.fix.clone());
        if let Some(code_id) = &issue.node {
            problem.node = Some(
                model_ids
                    .get(code_id.as_str())
                    .map_or_else(|| code_id.clone(), |id| (*id).to_owned()),
            );
            problem.component = workspace
                .tree
                .nodes
                .get(code_id)
                .map(|node| node.component.clone());
        }
        problem.field.clone_from(&issue.field);
        problems.push(problem);
    }
    Placed {
        problems,
        report,
        nodes: placed.len(),
    }
}

/// One model's whole-page attempt: the answer, and at most one repair turn.
pub(super) async fn attempt(
    model: &dyn ChatModel,
    setup: &Setup<'_>,
    log: &mut EventLog<'_>,
) -> Result<Attempt, crate::agent::generate::AgentError> {
    let input = setup.input;
    let format = ResponseFormat {
        name: PAGE_SCHEMA_NAME.to_owned(),
        schema: setup.page_schema().clone(),
    };
    let mut messages = vec![
        Message::system(setup.page_system()?),
        Message::user(setup.user.clone()),
    ];
    let mut attempt = Attempt {
        model: model.name(),
        mode: "whole",
        end: AttemptEnd::Exhausted,
        turns: 0,
        usage: Usage::default(),
        text_tool_calls: 0,
        tree: tessera_app::tree::PageTree::default(),
        report: FormReport::default(),
        transcript: Vec::new(),
    };
    for turn in 1..=TURNS {
        let request = ChatRequest {
            messages: messages.clone(),
            tools: Vec::new(),
            max_tokens: Some(MAX_TOKENS),
            temperature: None,
            response_format: Some(format.clone()),
        };
        let response = match model.chat(request).await {
            Ok(response) => response,
            Err(error) => {
                log.push(
                    EventKind::ModelError,
                    json!({"turn": turn, "model": attempt.model.to_string(), "error": error.to_string()}),
                );
                log.flush().await?;
                attempt.end = AttemptEnd::ModelFailed(error);
                break;
            }
        };
        attempt.turns += 1;
        attempt.usage.input_tokens += response.usage.input_tokens;
        attempt.usage.output_tokens += response.usage.output_tokens;
        let answer = response.text.clone().unwrap_or_default();
        let mut workspace = Workspace::new(&input.catalog, input.schema.as_ref(), &input.data);
        let placed = place_answer(&answer, &mut workspace);
        for (id, node) in &workspace.tree.nodes {
            log.push(
                EventKind::ToolCall,
                json!({"turn": turn, "tool": node.component, "component": node.component, "node": id}),
            );
        }
        let rules: Vec<Value> = placed
            .problems
            .iter()
            .map(|problem| json!({"rule": problem.rule, "field": problem.field, "node": problem.node}))
            .collect();
        let ok = placed.problems.is_empty() && placed.report.ok;
        log.push(
            EventKind::Validation,
            json!({"turn": turn, "source": "whole_page", "ok": ok, "errors": rules,
                   "warnings": placed.report.warnings.len(), "nodes": placed.nodes}),
        );
        attempt.transcript.push(json!({
            "turn": turn,
            "text": response.text,
            "stop_reason": response.stop_reason,
            "usage": response.usage,
            "problems": placed.problems,
        }));
        attempt.report = placed.report;
        attempt.tree = workspace.tree;
        if ok {
            attempt.end = AttemptEnd::Valid;
            log.flush().await?;
            break;
        }
        if turn < TURNS {
            let message = repair_message(&placed.problems)?;
            log.push(
                EventKind::FollowUp,
                json!({"turn": turn, "message": message, "errors": placed.problems}),
            );
            messages.push(Message::assistant(&response));
            messages.push(Message::user(message));
        }
        log.flush().await?;
    }
    Ok(attempt)
}
