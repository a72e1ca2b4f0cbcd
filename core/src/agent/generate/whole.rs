//! The whole page in one answer: the model returns every node at once as one JSON document
//! constrained to the page schema (`agent::page_schema`); code places the nodes through the same
//! tool semantics as the loop (props checks, props completed from the response schema, parent
//! and Form rules) and runs `ValidateForm`. Problems go back once, as a list naming each node by
//! the id the model gave it; the model answers the whole page again. A page that is still not
//! valid after that one repair turn ends the attempt, and the caller falls back.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};
use tessera_app::catalog::Role;

use super::{
    attempt::{Attempt, AttemptEnd},
    setup::Setup,
    MAX_TOKENS,
};
use crate::{
    agent::{
        events::{EventKind, EventLog},
        page_schema::PAGE_SCHEMA_NAME,
        prompt::repair_message,
        tools::{Effect, Workspace},
    },
    forms::validate_form::{destroys, FormReport},
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

    /// The problem of the node the model calls `id` (a `fields` entry: of that field).
    fn at(mut self, id: &str, component: &str) -> Self {
        self.name(id);
        self.component = Some(component.to_owned());
        self
    }

    fn name(&mut self, id: &str) {
        match id.strip_prefix(FIELD_ID) {
            Some(path) => self.field = Some(path.to_owned()),
            None => self.node = Some(id.to_owned()),
        }
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
    /// For an entry of `fields`: the field's path, which decides its place when `parent` does
    /// not name a layout (its object's Fieldset, else the Form).
    field: Option<String>,
}

/// An answer: its `nodes`, and the entries of `fields` that are not `null`, in order.
struct Answer {
    /// The page's title, made its first Heading.
    title: Option<String>,
    nodes: Vec<AnswerNode>,
    fields: Vec<AnswerNode>,
}

/// The answer in `text`, or the problem that stops it being read at all.
fn read_answer(text: &str) -> Result<Answer, Box<Problem>> {
    let trimmed = strip_fence(text.trim());
    let value: Value = serde_json::from_str(trimmed).map_err(|error| {
        Box::new(Problem::new(
            "not_json",
            format!("the answer is not one JSON document ({error})"),
            "Answer with exactly one JSON object {\"nodes\": [...], \"fields\": {...}} and \
             nothing else.",
        ))
    })?;
    let (title, nodes, fields) = match value {
        Value::Object(mut object) => (
            object.remove("title"),
            object.remove("nodes"),
            object.remove("fields"),
        ),
        Value::Array(nodes) => (None, Some(Value::Array(nodes)), None),
        _ => (None, None, None),
    };
    let title = match title {
        Some(Value::String(title)) if !title.trim().is_empty() => Some(title),
        _ => None,
    };
    let Some(Value::Array(nodes)) = nodes else {
        return Err(Box::new(Problem::new(
            "no_nodes",
            "the answer has no \"nodes\" array",
            "Answer {\"nodes\": [{\"id\", \"component\", \"parent\", \"props\"}, ...]}.",
        )));
    };
    let mut read = Vec::with_capacity(nodes.len());
    for (index, node) in nodes.into_iter().enumerate() {
        let Value::Object(fields) = node else {
            return Err(Box::new(Problem::new(
                "invalid_node",
                format!("nodes[{index}] is not an object"),
                "Write each node as {\"id\", \"component\", \"parent\", \"props\"}.",
            )));
        };
        read.push(answer_node(fields, format!("node{}", index + 1), None));
    }
    let mut entries = Vec::new();
    if let Some(Value::Object(fields)) = fields {
        for (path, entry) in fields {
            let Value::Object(entry) = entry else {
                continue;
            };
            let mut node = answer_node(entry, field_id(&path), Some(path.clone()));
            node.id = field_id(&path);
            name_field(&node.component, &mut node.props, &path);
            entries.push(node);
        }
    }
    Ok(Answer {
        title,
        nodes: read,
        fields: entries,
    })
}

/// The id a `fields` entry goes by: its path in a namespace of its own, since models often give
/// a node of `nodes` the field's name too (a heading or a text beside it).
fn field_id(path: &str) -> String {
    format!("{FIELD_ID}{path}")
}

/// Where field ids start; no node id a model writes looks like it matters, since a node's own
/// id is looked up first.
const FIELD_ID: &str = "field:";

fn answer_node(mut fields: Map<String, Value>, id: String, field: Option<String>) -> AnswerNode {
    let mut text = |key: &str| match fields.remove(key) {
        Some(Value::String(text)) if !text.is_empty() => Some(text),
        _ => None,
    };
    let component = text("component").unwrap_or_default();
    let id = text("id").unwrap_or(id);
    let parent = text("parent");
    let props = match fields.remove("props") {
        Some(props) => props,
        None => Value::Object(fields),
    };
    AnswerNode {
        id,
        component,
        parent,
        props: drop_nulls(props),
        field,
    }
}

/// Names a `fields` entry by its key: a table answers through its `selectable`, any other
/// component through `name`.
fn name_field(component: &str, props: &mut Value, path: &str) {
    let Value::Object(props) = props else {
        *props = json!({ "name": path });
        return;
    };
    match props.get_mut("selectable") {
        Some(Value::Object(selectable)) if component == "Table" => {
            selectable.insert("name".to_owned(), json!(path));
        }
        _ => {
            props.insert("name".to_owned(), json!(path));
        }
    }
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

/// A page has one Form; small models write one per section. Past the first, a Form is the
/// section it was meant as: a Card with the same title and description, inside the Form.
fn forms_as_sections(answer: &mut Answer) {
    let mut forms = answer
        .nodes
        .iter_mut()
        .filter(|node| node.component == "Form");
    let first_form = forms.next().map(|form| form.id.clone());
    for section in forms {
        section.component = "Card".to_owned();
        if section.parent.is_none() {
            section.parent.clone_from(&first_form);
        }
    }
}

/// Places the answer `text` in `workspace` and checks the page. Each node is placed exactly as a
/// tool call placing it would be: first the nodes that are not buttons, in answer order and
/// parents first, then the fields in schema order, then the buttons, so the fields come before
/// the Form's buttons whatever order the answer lists them in. Code settles what a reader could
/// not mistake: a node whose parent cannot hold others goes beside that parent, a field
/// without a layout goes in its object's Fieldset or else the Form, a button without one goes
/// in the Form, a Form after the first is a section (a Card) of it, and fields with no Form
/// anywhere get one.
pub fn place_answer(text: &str, workspace: &mut Workspace<'_>) -> Placed {
    let mut answer = match read_answer(text) {
        Ok(answer) => answer,
        Err(problem) => {
            let report = workspace.check();
            return Placed {
                problems: vec![*problem],
                report,
                nodes: 0,
            };
        }
    };
    forms_as_sections(&mut answer);
    let answer = answer;
    let mut placement = Placement::new(&answer);
    placement.echoes = echoes(&answer, workspace.data());
    // The title heads the page unless the answer starts with a heading of its own.
    let starts_with_heading = answer
        .nodes
        .first()
        .is_some_and(|node| node.component == "Heading" && node.parent.is_none());
    if let (Some(title), false) = (&answer.title, starts_with_heading) {
        let heading = ToolCall::new("node_title", "Heading", json!({"text": title, "level": 1}));
        workspace.execute(&heading);
    }
    let (buttons, others): (Vec<&AnswerNode>, Vec<&AnswerNode>) = answer
        .nodes
        .iter()
        .partition(|node| workspace.role_of(&node.component) == Some(Role::Action));
    placement.place_all(workspace, others);
    if !answer.fields.is_empty() && placement.form.is_none() {
        let form = ToolCall::new("node_form", "Form", json!({}));
        if let Effect::Placed { id, .. } = workspace.execute(&form).effect {
            placement.form = Some(id);
        }
    }
    placement.place_all(workspace, answer.fields.iter().collect());
    placement.place_all(workspace, buttons);
    let report = workspace.check();
    let mut problems = placement.problems;
    let model_ids: BTreeMap<&str, &str> = placement
        .placed
        .iter()
        .map(|(model, code)| (code.as_str(), model.as_str()))
        .collect();
    for issue in &report.errors {
        let mut problem = Problem::new(issue.rule, issue.message.clone(), issue.fix.clone());
        if let Some(code_id) = &issue.node {
            problem.name(
                model_ids
                    .get(code_id.as_str())
                    .copied()
                    .unwrap_or(code_id.as_str()),
            );
            problem.component = workspace
                .tree
                .nodes
                .get(code_id)
                .map(|node| node.component.clone());
        }
        if issue.field.is_some() {
            problem.field.clone_from(&issue.field);
        }
        problems.push(problem);
    }
    Placed {
        problems,
        report,
        nodes: placement.placed.len(),
    }
}

/// The events of one placed answer: a `tool_call` per node, as if the loop had placed it, and
/// the `validation` of the whole; true when the page is valid.
fn placement_events(
    log: &mut EventLog<'_>,
    turn: usize,
    workspace: &Workspace<'_>,
    placed: &Placed,
) -> bool {
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
    ok
}

/// The nodes of `answer` that only repeat what a field shows: a Text saying a field's label or
/// name, or showing the field's answer-to-be through a pointer the data lacks
/// (`{{/session/rating}}` for the field `rating`), and a Table of the rows a selecting table
/// of `fields` shows. A small model writes one such Text per field (measured with a 1.5B model on
/// four scenarios of eight) and a selection's rows twice, so the page would say everything twice
/// or fail on a pointer to nothing.
fn echoes(answer: &Answer, data: &Value) -> BTreeSet<String> {
    let plain = |text: &str| {
        text.trim()
            .trim_end_matches([':', '*', ' '])
            .replace('_', " ")
            .to_lowercase()
    };
    let names: BTreeSet<&str> = answer
        .fields
        .iter()
        .filter_map(|field| field.field.as_deref())
        .map(|path| path.rsplit('.').next().unwrap_or(path))
        .collect();
    let labels: BTreeSet<String> = answer
        .fields
        .iter()
        .filter_map(|field| field.props["label"].as_str())
        .chain(names.iter().copied())
        .map(plain)
        .filter(|label| !label.is_empty())
        .collect();
    let shows_a_field = |text: &str| {
        let Some(pointer) = text
            .trim()
            .strip_prefix("{{")
            .and_then(|rest| rest.strip_suffix("}}"))
            .map(str::trim)
        else {
            return false;
        };
        let last = pointer.rsplit(['/', '.']).next().unwrap_or(pointer);
        data.pointer(pointer).is_none() && names.contains(last)
    };
    let selected: BTreeSet<&str> = answer
        .fields
        .iter()
        .filter(|field| field.component == "Table")
        .filter_map(|field| field.props["rows"]["$data"].as_str())
        .collect();
    answer
        .nodes
        .iter()
        .filter(|node| match node.component.as_str() {
            "Text" => node.props["text"]
                .as_str()
                .is_some_and(|text| labels.contains(&plain(text)) || shows_a_field(text)),
            // The same rows as a selecting table: the selection shows them already.
            "Table" => node.props["rows"]["$data"]
                .as_str()
                .is_some_and(|rows| selected.contains(rows)),
            _ => false,
        })
        .map(|node| node.id.clone())
        .collect()
}

/// The bookkeeping of placing one answer.
struct Placement<'a> {
    /// Every id the answer uses, nodes and fields.
    ids: BTreeSet<&'a str>,
    /// The answer's parent of each node, to put a node beside a parent that cannot hold it.
    parents: BTreeMap<&'a str, Option<&'a str>>,
    /// The model's id → code's id, for placed nodes.
    placed: BTreeMap<String, String>,
    /// Nodes refused, by the model's id.
    refused: BTreeSet<String>,
    /// Code's id of the first Form placed.
    form: Option<String>,
    /// Nodes left out, by the model's id: they only repeat what a field shows.
    echoes: BTreeSet<String>,
    problems: Vec<Problem>,
}

impl<'a> Placement<'a> {
    fn new(answer: &'a Answer) -> Self {
        let all = answer.nodes.iter().chain(&answer.fields);
        Self {
            ids: all.clone().map(|node| node.id.as_str()).collect(),
            parents: all
                .map(|node| (node.id.as_str(), node.parent.as_deref()))
                .collect(),
            placed: BTreeMap::new(),
            refused: BTreeSet::new(),
            form: None,
            echoes: BTreeSet::new(),
            problems: Vec::new(),
        }
    }

    /// Places `nodes`, parents first; whatever never gets its parent placed is reported once.
    fn place_all(&mut self, workspace: &mut Workspace<'_>, mut pending: Vec<&'a AnswerNode>) {
        let mut progress = true;
        while progress && !pending.is_empty() {
            progress = false;
            let mut waiting = Vec::new();
            for node in pending {
                if self.echoes.contains(&node.id) {
                    progress = true;
                    continue;
                }
                if self.placed.contains_key(&node.id) || self.refused.contains(&node.id) {
                    if node.field.is_none() {
                        self.problems.push(
                            Problem::new(
                                "duplicate_id",
                                format!("two nodes have the id `{}`", node.id),
                                "Give every node its own id.",
                            )
                            .at(&node.id, &node.component),
                        );
                    }
                    progress = true;
                    continue;
                }
                match self.parent_of(workspace, node) {
                    Parent::Wait => waiting.push(node),
                    Parent::Refused(parent) => {
                        self.refused.insert(node.id.clone());
                        self.problems.push(
                            Problem::new(
                                "parent_refused",
                                format!(
                                    "not placed: its parent `{}` was refused",
                                    parent.trim_start_matches(FIELD_ID)
                                ),
                                "Fix the parent; this node is placed with it.",
                            )
                            .at(&node.id, &node.component),
                        );
                        progress = true;
                    }
                    Parent::At(parent) => {
                        self.place(workspace, node, parent);
                        progress = true;
                    }
                }
            }
            pending = waiting;
        }
        for node in pending {
            self.problems.push(
                Problem::new(
                    "parent_cycle",
                    "not placed: its parents form a cycle",
                    "Make every parent chain end at a node whose parent is null.",
                )
                .at(&node.id, &node.component),
            );
        }
    }

    /// Where `node` goes: code's id of a placed layout, the top level, or not yet.
    fn parent_of(&self, workspace: &Workspace<'_>, node: &AnswerNode) -> Parent {
        let mut parent = node.parent.clone();
        // A parent that cannot hold others: its own parent, and so on up.
        let mut hops = 0;
        while let Some(named) = parent.take() {
            // A node's id first; else a field's (a Fieldset named by its path).
            let id = if self.ids.contains(named.as_str()) {
                named
            } else {
                field_id(&named)
            };
            let id = id.as_str();
            if !self.ids.contains(id) || id == node.id || hops > self.ids.len() {
                break;
            }
            if self.refused.contains(id) {
                return Parent::Refused(id.to_owned());
            }
            if self.echoes.contains(id) {
                parent = self.parents.get(id).copied().flatten().map(str::to_owned);
                hops += 1;
                continue;
            }
            let Some(code_id) = self.placed.get(id) else {
                return Parent::Wait;
            };
            let holds = workspace
                .tree
                .nodes
                .get(code_id)
                .and_then(|placed| workspace.role_of(&placed.component))
                == Some(Role::Layout);
            if holds {
                return Parent::At(Some(code_id.clone()));
            }
            parent = self.parents.get(id).copied().flatten().map(str::to_owned);
            hops += 1;
        }
        let Some(path) = &node.field else {
            // A button belongs to the Form: one left at the top level goes into it.
            if workspace.role_of(&node.component) == Some(Role::Action) {
                return Parent::At(self.form.clone());
            }
            return Parent::At(None);
        };
        // A field without a layout: its object's Fieldset, else the Form.
        if let Some((object, _)) = path.rsplit_once('.') {
            let object = field_id(object);
            if self.refused.contains(&object) {
                return Parent::Refused(object);
            }
            if let Some(code_id) = self.placed.get(&object) {
                return Parent::At(Some(code_id.clone()));
            }
            if self.ids.contains(object.as_str()) {
                return Parent::Wait;
            }
        }
        Parent::At(self.form.clone())
    }

    fn place(&mut self, workspace: &mut Workspace<'_>, node: &AnswerNode, parent: Option<String>) {
        let mut arguments = match &node.props {
            Value::Object(props) => props.clone(),
            _ => Map::new(),
        };
        clamp_numbers(&mut arguments, workspace.props_schema_of(&node.component));
        // A submit button is red exactly when its label says it destroys something: code's
        // call (measured: a 1.5B model styled every submit button danger, or none).
        let kind = arguments.get("kind").and_then(Value::as_str);
        if node.component == "Button" && matches!(kind, None | Some("submit")) {
            let label = arguments
                .get("label")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let variant = if destroys(label) { "danger" } else { "primary" };
            let styled = arguments.get("variant").and_then(Value::as_str);
            if variant == "danger" || styled == Some("danger") {
                arguments.insert("variant".to_owned(), json!(variant));
            }
        }
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
        if let Effect::Placed { id, component, .. } = reply.effect {
            if component == "Form" && self.form.is_none() {
                self.form = Some(id.clone());
            }
            self.placed.insert(node.id.clone(), id);
            return;
        }
        self.refused.insert(node.id.clone());
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
        problem.field = error["field"]
            .as_str()
            .map(str::to_owned)
            .or_else(|| node.field.clone());
        self.problems.push(problem);
    }
}

/// Numeric props brought within their bounds (a TextArea of 1 row gets the fewest allowed): the
/// strict schema cannot carry bounds, and a count of rows is not worth a repair turn.
fn clamp_numbers(props: &mut Map<String, Value>, schema: Option<&Value>) {
    let Some(schema) = schema else {
        return;
    };
    for (name, value) in props.iter_mut() {
        let Some(number) = value.as_f64() else {
            continue;
        };
        let bound = |key: &str| schema["properties"][name][key].as_f64();
        let clamped = match (bound("minimum"), bound("maximum")) {
            (Some(minimum), _) if number < minimum => minimum,
            (_, Some(maximum)) if number > maximum => maximum,
            _ => continue,
        };
        *value = if value.is_f64() {
            json!(clamped)
        } else {
            #[expect(
                clippy::cast_possible_truncation,
                reason = "a bound of an integer prop is a whole number well inside i64"
            )]
            let whole = clamped as i64;
            json!(whole)
        };
    }
}

/// Where a node goes.
enum Parent {
    /// Into this placed layout (code's id), or at the top level.
    At(Option<String>),
    /// Its parent is not placed yet.
    Wait,
    /// Its parent (the model's id) was refused.
    Refused(String),
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
        let Some(response) = attempt.call(model, request, turn, log).await? else {
            break;
        };
        let answer = response.text.clone().unwrap_or_default();
        let mut workspace = Workspace::new(&input.catalog, input.schema.as_ref(), &input.data);
        let placed = place_answer(&answer, &mut workspace);
        let ok = placement_events(log, turn, &workspace, &placed);
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
            let message = repair_message(&placed.problems, &setup.summary)?;
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
