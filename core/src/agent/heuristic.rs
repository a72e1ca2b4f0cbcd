//! The `heuristic` model: a deterministic, offline [`ChatModel`] that builds a good page through
//! the same tools as any other model.
//!
//! It is the default when no provider is configured and the fallback when a model fails
//! (DESIGN.md §6), so it must always produce a page that passes `ValidateForm` for every schema
//! in the form subset (the property test at the bottom checks exactly that). It reads what a
//! model reads: the user prompt, in the layout `prompt.rs` renders and
//! [`crate::agent::prompt::parse_user_prompt`] reads back (the request, the response schema, the
//! data summary), and the tool results of its own earlier calls. It answers with tool calls the
//! loop executes and checks like anyone else's:
//!
//! one turn: a level-1 Heading from the request's first sentence, the rest of the request as
//! Text, headline numbers as Stats (in a row Container), other top-level values as KeyValue, one
//! KeyValue section per nested record, a Table (or List, for arrays of single values) per array
//! bound with `{"$data": …}`, and the Form placed whole in one call with its `children`: one field
//! per schema field (enum → `RadioGroup` up to 5 options, else Select; boolean → Checkbox; array of
//! enum → `CheckboxGroup`; array of string → a selectable Table when the field names the rows' ids
//! (one `DecisionTable` for several such fields over the same rows), else `MultiTextInput`;
//! numbers → Input type number; strings → Input of the format's type, or `TextArea` when the name
//! or description hints at long text), then the submit and cancel Buttons; then `Finish`, in the
//! same turn.
//!
//! Display-only pages (no schema) get no Form. It never improvises beyond that: a page that a
//! later check finds wrong is answered with `Finish` again, and the loop's limits apply.
//!
//! What the request's words ask to see (totals, a chart, top N, groups, a destructive action)
//! and the summary line under the heading come from [`cues`]; their numbers are computed
//! bindings, evaluated from the data at render time.

mod cues;

mod fields;
pub(crate) use fields::is_prose;
mod plan;
mod records;
mod rows;
mod text;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use super::{prompt::parse_user_prompt, tools::FINISH};
use crate::llm::{
    ChatModel, ChatRequest, ChatResponse, Message, ModelName, StopReason, ToolCall, Usage,
};
use fields::field_component;
use plan::{columns, plan_page};
use rows::{row_pick_component, row_picks};
use text::{clip, literal, split_prompt, submit_button, word_forms, words};

/// The provider and model name the heuristic reports.
pub const HEURISTIC: &str = "heuristic";

/// Enums with at most this many options get a `RadioGroup`, longer ones a Select.
pub const RADIO_LIMIT: usize = 5;
/// Columns shown per table.
const MAX_COLUMNS: usize = 6;
/// Display tables longer than this are paged.
const PAGE_ABOVE: usize = 50;
/// Rows per page of a paged display table.
const PAGE_SIZE: u64 = 25;
/// Arrays and nested records shown, at most.
const MAX_SECTIONS: usize = 8;
/// Labelled values per `KeyValue`.
const MAX_FACTS: usize = 12;
/// Stats side by side, at most.
const MAX_STATS: usize = 6;

/// The offline model. Cheap to create; holds nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct HeuristicModel;

impl HeuristicModel {
    /// The heuristic model.
    #[must_use]
    pub fn new() -> Self {
        Self
    }

    /// The next turn for `request`: the whole logic, synchronous and pure.
    #[must_use]
    pub fn respond(&self, request: &ChatRequest) -> ChatResponse {
        let parsed = request.messages.iter().find_map(|message| match message {
            Message::User(text) => parse_user_prompt(text),
            _ => None,
        });
        let Some(parsed) = parsed else {
            return ChatResponse::text(
                "The heuristic model only builds pages from the application's page prompt.",
            );
        };
        let offered: BTreeSet<&str> = request
            .tools
            .iter()
            .map(|tool| tool.name.as_str())
            .collect();
        let plan = plan_page(&parsed, &offered);
        let turn = request
            .messages
            .iter()
            .filter(|message| matches!(message, Message::Assistant { .. }))
            .count();
        let mut calls = Vec::new();
        if turn == 0 {
            for (index, node) in plan.top.iter().enumerate() {
                let children = node
                    .slot_id
                    .and_then(|slot| plan.inside.get(slot))
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                calls.push(component_call(
                    format!("heuristic_0_{index}"),
                    node,
                    children,
                ));
            }
        }
        calls.push(finish_call(turn));
        ChatResponse {
            text: None,
            tool_calls: calls,
            stop_reason: StopReason::ToolUse,
            usage: Usage::default(),
        }
    }
}

#[async_trait::async_trait]
impl ChatModel for HeuristicModel {
    fn name(&self) -> ModelName {
        ModelName::new(HEURISTIC, HEURISTIC)
    }

    async fn chat(&self, request: ChatRequest) -> crate::llm::model::Result<ChatResponse> {
        Ok(self.respond(&request))
    }
}

/// The heuristic's page for a request, built through the tool semantics as the loop would (for
/// tests that need a known-good page, here and in `tests/api/answerable_browser.rs`).
///
/// # Errors
/// What went wrong, when a prompt does not render or the heuristic does not finish.
pub fn page_for(
    prompt: &str,
    schema: Option<&crate::forms::FormSchema>,
    data: &serde_json::Value,
) -> Result<tessera_app::tree::PageTree, String> {
    use super::{
        prompt::{system_prompt, user_prompt},
        summary::DataSummary,
        tools::{tool_definitions, Workspace, FINISH},
    };
    use crate::llm::Message;
    let catalog = tessera_app::catalog::Catalog::defaults();
    let summary = DataSummary::of(data);
    let text = |error: minijinja::Error| error.to_string();
    let mut request = ChatRequest {
        messages: vec![
            Message::system(system_prompt(schema.is_some()).map_err(text)?),
            Message::user(user_prompt(prompt, schema, &summary).map_err(text)?),
        ],
        tools: tool_definitions(&catalog),
        ..ChatRequest::default()
    };
    let mut workspace = Workspace::new(&catalog, schema, data);
    for _ in 0..4 {
        let response = HeuristicModel.respond(&request);
        request.messages.push(Message::assistant(&response));
        let mut finished = response.tool_calls.is_empty();
        for call in &response.tool_calls {
            let reply = workspace.execute(call);
            finished |= call.name == FINISH;
            request
                .messages
                .push(Message::tool_result(call, reply.content));
        }
        if finished {
            return Ok(workspace.tree);
        }
    }
    Err("the heuristic did not finish".into())
}

/// The call placing `node` with `children` inside it, in one call, in the flat shape the tools
/// offer: the props are the arguments, a child is `{"component", …its props}`.
fn component_call(id: String, node: &Planned, children: &[Planned]) -> ToolCall {
    let mut arguments = node.props.clone();
    if !children.is_empty() {
        arguments["children"] = children.iter().map(flat_node).collect();
    }
    ToolCall::new(id, node.component, arguments)
}

/// A child node as a call's `children` entry: `{"component", …its props, "children"?}`.
fn flat_node(node: &Planned) -> Value {
    let mut flat = node.props.clone();
    flat["component"] = json!(node.component);
    if !node.children.is_empty() {
        flat["children"] = node.children.iter().map(flat_node).collect();
    }
    flat
}

fn finish_call(turn: usize) -> ToolCall {
    ToolCall::new(format!("heuristic_{turn}_finish"), FINISH, json!({}))
}

/// One component to place.
#[derive(Clone, Debug, PartialEq)]
struct Planned {
    component: &'static str,
    props: Value,
    /// For layouts placed with children: the slot (key of [`Plan::inside`]) that holds them.
    slot_id: Option<&'static str>,
    /// Children placed with the node itself (a Fieldset's members), nested alike.
    children: Vec<Planned>,
}

impl Planned {
    fn new(component: &'static str, props: Value) -> Self {
        Self {
            component,
            props,
            slot_id: None,
            children: Vec::new(),
        }
    }
}

/// The whole page: top-level nodes in order, and the children of each slot (`form`, `stats`).
#[derive(Debug, Default)]
struct Plan {
    top: Vec<Planned>,
    inside: BTreeMap<&'static str, Vec<Planned>>,
}

const FORM_SLOT: &str = "form";
const STATS_SLOT: &str = "stats";

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;
    use tessera_app::{catalog::Catalog, tree::PageTree};

    use super::*;
    use crate::{
        agent::{
            prompt::{system_prompt, user_prompt_for},
            summary::DataSummary,
            tools::{tool_definitions, Workspace},
        },
        forms::{validate_form::FormReport, FieldKind, FormField, FormSchema, StringFormat},
    };

    /// Drives the heuristic through the real tools without a store: the loop's core, synchronously.
    pub(super) fn build(
        prompt: &str,
        schema: Option<&FormSchema>,
        data: &Value,
    ) -> anyhow::Result<(PageTree, FormReport, usize)> {
        build_for(prompt, schema, data, false)
    }

    fn build_for(
        prompt: &str,
        schema: Option<&FormSchema>,
        data: &Value,
        for_assignees: bool,
    ) -> anyhow::Result<(PageTree, FormReport, usize)> {
        let catalog = Catalog::defaults();
        let summary = DataSummary::of(data);
        let mut request = ChatRequest {
            messages: vec![
                Message::system(system_prompt(schema.is_some())?),
                Message::user(user_prompt_for(prompt, schema, &summary, for_assignees)?),
            ],
            tools: tool_definitions(&catalog),
            ..ChatRequest::default()
        };
        let mut workspace = Workspace::new(&catalog, schema, data);
        for turn in 1..=4 {
            let response = HeuristicModel.respond(&request);
            request.messages.push(Message::assistant(&response));
            let mut finished = response.tool_calls.is_empty();
            for call in &response.tool_calls {
                let reply = workspace.execute(call);
                anyhow::ensure!(
                    !reply.is_error,
                    "{} was refused: {}",
                    call.name,
                    reply.content
                );
                finished |= call.name == FINISH;
                request.messages.push(if reply.is_error {
                    Message::tool_error(call, reply.content)
                } else {
                    Message::tool_result(call, reply.content)
                });
            }
            if finished {
                let report = workspace.check();
                return Ok((workspace.tree, report, turn));
            }
        }
        anyhow::bail!("the heuristic did not finish in 4 turns")
    }

    /// [`build`] for one of the hand-written [`cases`].
    fn build_case(
        (prompt, schema_json, data): &(&str, Option<Value>, Value),
    ) -> anyhow::Result<(PageTree, FormReport, usize)> {
        let schema = schema_json.clone().map(parse_schema).transpose()?;
        build(prompt, schema.as_ref(), data)
    }

    #[expect(clippy::needless_pass_by_value, reason = "used with Option::map")]
    fn parse_schema(value: Value) -> anyhow::Result<FormSchema> {
        Ok(FormSchema::from_json_schema(&value)?)
    }

    fn component_of<'a>(tree: &'a PageTree, field: &str) -> Option<&'a str> {
        tree.nodes.values().find_map(|node| {
            let name = node.props.get("name").or_else(|| {
                node.props
                    .get("selectable")
                    .and_then(|select| select.get("name"))
            });
            let a_choice = node.props["choices"]
                .as_array()
                .is_some_and(|choices| choices.iter().any(|choice| choice["name"] == field));
            (name.and_then(Value::as_str) == Some(field) || a_choice)
                .then_some(node.component.as_str())
        })
    }

    fn components(tree: &PageTree) -> Vec<&str> {
        tree.document_order()
            .into_iter()
            .filter_map(|id| tree.nodes.get(id).map(|node| node.component.as_str()))
            .collect()
    }

    fn emails(count: usize) -> Value {
        let rows: Vec<Value> = (1..=count)
            .map(|index| json!({"id": format!("m{index}"), "from": "news@example.com", "subject": format!("Issue {index}"), "date": "2023-01-04"}))
            .collect();
        json!({ "emails": rows })
    }

    /// Twenty-two hand-written requests: (prompt, schema, data).
    fn cases() -> Vec<(&'static str, Option<Value>, Value)> {
        vec![
            (
                "Archive old emails. Tick the ones to archive.",
                Some(json!({"type": "object", "properties": {
                "archive_ids": {"type": "array", "items": {"type": "string"}, "description": "ids of the emails to archive"},
                "note": {"type": ["string", "null"]},
                "priority": {"type": "string", "enum": ["low", "normal", "high"]}}, "required": ["archive_ids", "priority"]})),
                emails(5),
            ),
            (
                "Choose a country",
                Some(json!({"type": "object", "properties": {
                "country": {"type": "string", "enum": ["fr", "de", "it", "es", "pt", "nl", "be"]}}, "required": ["country"]})),
                json!({}),
            ),
            (
                "Register for the event",
                Some(json!({"type": "object", "properties": {
                "email": {"type": "string", "format": "email"}, "website": {"type": ["string", "null"], "format": "uri"},
                "birthday": {"type": "string", "format": "date"}, "arrival": {"type": ["string", "null"], "format": "date-time"},
                "guests": {"type": "integer", "minimum": 0, "maximum": 4}, "newsletter": {"type": "boolean"}},
                "required": ["email", "birthday", "guests"]})),
                json!({"event": {"name": "RustConf", "city": "Montreal", "seats": 120}}),
            ),
            (
                "Rate the support you got.",
                Some(json!({"type": "object", "properties": {
                "score": {"type": "number", "minimum": 0.5, "maximum": 5}, "comment": {"type": "string", "maxLength": 2000}},
                "required": ["score"]})),
                json!({"ticket": "T-42"}),
            ),
            (
                "Tag these photos",
                Some(json!({"type": "object", "properties": {
                "tags": {"type": "array", "items": {"type": "string", "enum": ["family", "work", "travel"]}, "minItems": 1}},
                "required": ["tags"]})),
                json!({"photos": ["a.jpg", "b.jpg"]}),
            ),
            (
                "List the people to invite",
                Some(json!({"type": "object", "properties": {
                "invitees": {"type": "array", "items": {"type": "string", "format": "email"}, "minItems": 2, "maxItems": 10}}})),
                json!({}),
            ),
            (
                "Show this month's numbers",
                None,
                json!({"revenue": 1204.5, "orders": 87, "refunds": 3, "currency": "EUR"}),
            ),
            (
                "Deployment status",
                None,
                json!({"service": {"name": "api", "version": "1.4.2", "healthy": true}, "events": [{"at": "10:00", "what": "deployed"}, {"at": "10:05", "what": "healthy"}]}),
            ),
            (
                "Delete stale branches.",
                Some(json!({"type": "object", "properties": {
                "branch_ids": {"type": "array", "items": {"type": "string"}}, "confirm": {"type": "boolean"}}})),
                json!({"branches": [{"id": "b1", "name": "old-feature", "age_days": 300}, {"id": "b2", "name": "spike", "age_days": 200}]}),
            ),
            (
                "Approve the expense report",
                Some(json!({"type": "object", "properties": {
                "decision": {"type": "string", "enum": ["approve", "reject"]}, "reason": {"type": ["string", "null"]}}, "required": ["decision"]})),
                json!({"report": {"employee": "Ada", "total": 412.3, "lines": 7}, "lines": [{"what": "Hotel", "amount": 300}, {"what": "Train", "amount": 112.3}]}),
            ),
            (
                "Which languages do you speak?",
                Some(json!({"type": "object", "properties": {
                "languages": {"type": "array", "items": {"type": "string", "enum": ["en", "fr", "de", "es", "it", "nl", "pl", "pt", "sv", "fi", "da", "no"]}}}})),
                json!([]),
            ),
            (
                "Pick a time slot",
                Some(json!({"type": "object", "properties": {
                "slot": {"type": ["string", "null"], "enum": ["9:00", "10:00", "11:00", null]}}})),
                json!({"slots": ["9:00", "10:00", "11:00"]}),
            ),
            (
                "Enter your password",
                Some(json!({"type": "object", "properties": {
                "password": {"type": "string", "minLength": 12}}, "required": ["password"]})),
                json!(null),
            ),
            (
                "Describe the bug",
                Some(json!({"type": "object", "properties": {
                "title": {"type": "string", "maxLength": 80}, "details": {"type": "string", "description": "What happened, in detail"},
                "severity": {"type": "string", "enum": ["S1", "S2", "S3", "S4", "S5", "S6"]}}, "required": ["title", "details", "severity"]})),
                json!({}),
            ),
            (
                "Assign reviewers",
                Some(json!({"type": "object", "properties": {
                "reviewer_ids": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "the user ids of the reviewers"}}})),
                json!({"users": [{"user_id": "u1", "name": "Ada"}, {"user_id": "u2", "name": "Grace"}], "pull_request": {"title": "Fix it", "number": 12}}),
            ),
            (
                "Confirm the order.",
                Some(json!({"type": "object", "properties": {}})),
                json!({"order": {"id": "o-1", "total": 99.5}, "items": [{"sku": "A", "qty": 1}]}),
            ),
            (
                "A page with {{/not_there}} placeholders in its text",
                Some(json!({"type": "object", "properties": {
                "answer": {"type": "string", "title": "Answer for {{/x}}"}}, "required": ["answer"]})),
                json!({"x": 1}),
            ),
            (
                "",
                Some(json!({"type": "object", "properties": {"ok": {"type": "boolean"}}})),
                json!({}),
            ),
            (
                "Nested data",
                None,
                json!({"a": {"b": {"c": {"d": {"e": 1}}}}, "matrix": [[1, 2], [3, 4]], "empty": [], "mixed": [1, "two", null]}),
            ),
            (
                "Book a room",
                Some(json!({"type": "object", "properties": {
                "room": {"type": "string", "enum": ["small"]}, "people": {"type": "integer", "minimum": 1},
                "budget": {"type": ["number", "null"], "exclusiveMinimum": 0}, "notes": {"type": ["string", "null"]}},
                "required": ["room", "people"]})),
                json!({"rooms": [{"code": "R1", "size": 4}, {"code": "R2", "size": 10}]}),
            ),
            (
                "Review the large table",
                Some(json!({"type": "object", "properties": {
                "ids": {"type": "array", "items": {"type": "string"}}}})),
                emails(120),
            ),
            (
                "Label every email. Use the labels you need.",
                Some(json!({"type": "object", "properties": {
                "labels": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
                "urgent_ids": {"type": "array", "items": {"type": "string"}, "description": "emails that are urgent"},
                "weekday": {"type": "string", "enum": ["mon", "tue", "wed", "thu", "fri"]}},
                "required": ["weekday"]})),
                emails(3),
            ),
        ]
    }

    #[test]
    fn the_heuristic_builds_a_valid_page_for_every_hand_written_case() -> anyhow::Result<()> {
        let cases = cases();
        assert!(cases.len() >= 20);
        for (prompt, schema_json, data) in cases {
            let schema = schema_json.map(parse_schema).transpose()?;
            let (tree, report, turns) = build(prompt, schema.as_ref(), &data)?;
            assert!(report.ok, "{prompt}: {:#?}\n{tree:#?}", report.errors);
            assert_eq!(
                turns, 1,
                "{prompt}: the whole page, Form included, in one turn"
            );
            assert_eq!(components(&tree).first(), Some(&"Heading"), "{prompt}");
            assert!(
                !report
                    .warnings
                    .iter()
                    .any(|issue| issue.rule == "heading_order"),
                "{prompt}: {:?}",
                report.warnings
            );
            assert_eq!(
                components(&tree).contains(&"Form"),
                schema.is_some(),
                "{prompt}"
            );
        }
        Ok(())
    }

    #[test]
    fn short_enums_get_radios_long_ones_a_select_and_notes_a_textarea() -> anyhow::Result<()> {
        let cases = cases();
        let (tree, _, _) = build_case(&cases[0])?;
        assert_eq!(component_of(&tree, "priority"), Some("RadioGroup"));
        assert_eq!(component_of(&tree, "note"), Some("TextArea"));
        assert_eq!(component_of(&tree, "archive_ids"), Some("Table"));
        let selectable = tree
            .nodes
            .values()
            .find(|node| node.props.get("selectable").is_some())
            .map(|node| node.props.clone())
            .unwrap_or_default();
        assert_eq!(selectable["rows"], json!({"$data": "/emails"}));
        assert_eq!(selectable["selectable"]["idKey"], "id");
        let (tree, _, _) = build_case(&cases[1])?;
        assert_eq!(component_of(&tree, "country"), Some("Select"));
        Ok(())
    }

    #[test]
    fn each_field_type_gets_its_component_with_the_schema_rules() -> anyhow::Result<()> {
        let cases = cases();
        let (tree, _, _) = build_case(&cases[2])?;
        let props = |field: &str| {
            tree.nodes
                .values()
                .find(|node| node.props.get("name").and_then(Value::as_str) == Some(field))
                .map(|node| node.props.clone())
                .unwrap_or_default()
        };
        assert_eq!(props("email")["type"], "email");
        assert_eq!(props("email")["required"], true);
        assert_eq!(props("website")["type"], "url");
        assert_eq!(props("website")["required"], false);
        assert_eq!(props("birthday")["type"], "date");
        assert_eq!(props("guests")["type"], "number");
        assert_eq!(
            (
                props("guests")["min"].clone(),
                props("guests")["max"].clone(),
                props("guests")["step"].clone()
            ),
            (json!(0), json!(4), json!(1))
        );
        assert_eq!(component_of(&tree, "newsletter"), Some("Checkbox"));
        assert_eq!(props("guests")["label"], "Guests");
        let (tree, _, _) = build_case(&cases[4])?;
        assert_eq!(component_of(&tree, "tags"), Some("CheckboxGroup"));
        assert!(
            components(&tree).contains(&"List"),
            "photos are a list of strings"
        );
        let (tree, _, _) = build_case(&cases[5])?;
        assert_eq!(component_of(&tree, "invitees"), Some("MultiTextInput"));
        Ok(())
    }

    #[test]
    fn display_pages_show_stats_facts_records_and_tables_without_a_form() -> anyhow::Result<()> {
        let cases = cases();
        let (prompt, _, data) = &cases[6];
        let (tree, report, turns) = build(prompt, None, data)?;
        assert!(report.ok);
        assert_eq!(turns, 1, "the stats row is placed with its Stats inside");
        assert_eq!(
            components(&tree),
            vec![
                "Heading",
                "Text",
                "Container",
                "Stat",
                "Stat",
                "Stat",
                "KeyValue"
            ]
        );
        let (prompt, _, data) = &cases[7];
        let (tree, _, turns) = build(prompt, None, data)?;
        assert_eq!(turns, 1);
        let mut placed = components(&tree);
        assert_eq!(placed.first(), Some(&"Heading"));
        placed.sort_unstable();
        assert_eq!(
            placed,
            vec!["Heading", "Heading", "KeyValue", "Table", "Text"]
        );
        Ok(())
    }

    #[test]
    fn the_submit_button_takes_the_requests_verb_and_destruction_is_danger() -> anyhow::Result<()> {
        assert_eq!(
            submit_button("Archive old emails"),
            ("Archive".to_owned(), "primary")
        );
        assert_eq!(
            submit_button("Delete stale branches"),
            ("Delete".to_owned(), "danger")
        );
        assert_eq!(
            submit_button("Choose a country"),
            ("Confirm".to_owned(), "primary")
        );
        assert_eq!(
            submit_button("Which languages?"),
            ("Submit".to_owned(), "primary")
        );
        let cases = cases();
        let (tree, report, _) = build_case(&cases[8])?;
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
        let buttons: Vec<Value> = tree
            .nodes
            .values()
            .filter(|node| node.component == "Button")
            .map(|node| node.props.clone())
            .collect();
        assert!(
            buttons.contains(&json!({"label": "Delete", "variant": "danger", "kind": "submit"}))
        );
        assert!(
            buttons.contains(&json!({"label": "Cancel", "variant": "secondary", "kind": "cancel"}))
        );
        Ok(())
    }

    #[test]
    fn a_page_for_named_people_offers_decline_and_no_cancel_and_passes() -> anyhow::Result<()> {
        let schema = parse_schema(json!({"type": "object", "properties": {
            "note": {"type": "string", "title": "Note"}}}))?;
        let (tree, report, _) = build_for(
            "Approve the Q3 budget?",
            Some(&schema),
            &json!({"total": 1200}),
            true,
        )?;
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        let kinds: Vec<&str> = tree
            .nodes
            .values()
            .filter(|node| node.component == "Button")
            .filter_map(|node| node.props["kind"].as_str())
            .collect();
        assert!(
            kinds.contains(&"submit") && kinds.contains(&"decline"),
            "{kinds:?}"
        );
        assert!(!kinds.contains(&"cancel"), "{kinds:?}");
        assert!(tree.offers_decline());
        Ok(())
    }

    #[test]
    fn ten_thousand_selectable_rows_are_placed_and_checked_quickly() -> anyhow::Result<()> {
        let schema = parse_schema(json!({"type": "object", "properties": {
            "archive_ids": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
            "required": ["archive_ids"]}))?;
        let started = std::time::Instant::now();
        let (tree, report, _) = build("Archive emails", Some(&schema), &emails(10_000))?;
        assert!(report.ok, "{:?}", report.errors);
        assert_eq!(component_of(&tree, "archive_ids"), Some("Table"));
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
        Ok(())
    }

    #[test]
    fn two_id_arrays_over_the_same_rows_become_one_decision_table() -> anyhow::Result<()> {
        let schema = parse_schema(json!({"type": "object", "properties": {
            "approved_ids": {"type": "array", "items": {"type": "string"}, "description": "ids from /claims"},
            "rejected_ids": {"type": "array", "items": {"type": "string"}, "description": "ids from /claims"}
        }}))?;
        let data = json!({"claims": [
            {"id": "CLM-1", "amount": 120, "reason": "Taxi"},
            {"id": "CLM-2", "amount": 40, "reason": "Lunch"}
        ]});
        let (tree, report, _) = build("Review these claims.", Some(&schema), &data)?;
        assert!(report.ok, "{:?}", report.errors);
        assert_eq!(component_of(&tree, "approved_ids"), Some("DecisionTable"));
        assert_eq!(component_of(&tree, "rejected_ids"), Some("DecisionTable"));
        let placed = components(&tree);
        assert_eq!(
            placed
                .iter()
                .filter(|name| **name == "DecisionTable")
                .count(),
            1
        );
        assert!(!placed.contains(&"MultiTextInput"), "{placed:?}");
        let decision = tree
            .nodes
            .values()
            .find(|node| node.component == "DecisionTable");
        let labels: Vec<&str> = decision
            .and_then(|node| node.props["choices"].as_array())
            .map(|choices| choices.iter().filter_map(|c| c["label"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(labels, ["Approved", "Rejected"]);
        Ok(())
    }

    fn node_named<'t>(tree: &'t PageTree, name: &str) -> Option<&'t tessera_app::tree::Node> {
        tree.nodes
            .values()
            .find(|node| node.props["name"].as_str() == Some(name))
    }

    #[test]
    fn a_list_of_records_in_the_data_becomes_a_bound_table_correcting_what_the_request_names(
    ) -> anyhow::Result<()> {
        let schema = parse_schema(json!({"type": "object", "properties": {
            "line_items": {"type": "array", "title": "Line items", "items": {"type": "object",
                "properties": {
                    "sku": {"type": "string", "title": "SKU"},
                    "quantity": {"type": "integer", "minimum": 1},
                    "unit_price": {"type": "number", "minimum": 0, "multipleOf": 0.01}
                }, "required": ["sku", "quantity", "unit_price"]}}
        }, "required": ["line_items"]}))?;
        let data = json!({"invoice": "INV-2231", "items": [
            {"sku": "A-100", "quantity": 10, "unit_price": 4.5},
            {"sku": "B-220", "quantity": 2, "unit_price": 61.0}
        ]});
        let (tree, _report, _) = build(
            "The scanner read the line items of invoice INV-2231. Correct any quantity or unit price.",
            Some(&schema),
            &data,
        )?;
        let list =
            node_named(&tree, "line_items").map(|node| (node.component.as_str(), &node.props));
        let Some(("RecordList", props)) = list else {
            panic!("no RecordList: {tree:?}");
        };
        assert_eq!(props["rows"], json!({"$data": "/items"}));
        assert_eq!(props["key"], json!("sku"));
        let columns = props["columns"].as_array().cloned().unwrap_or_default();
        let read_only: Vec<bool> = columns
            .iter()
            .map(|column| column["read_only"] == json!(true))
            .collect();
        assert_eq!(read_only, [true, false, false], "{columns:?}");
        assert_eq!(columns[2]["step"], json!(0.01));
        assert_eq!(columns[1]["min"], json!(1));
        // The list shows the rows: no second table of the same rows.
        assert!(
            !components(&tree).contains(&"Table"),
            "{:?}",
            components(&tree)
        );
        Ok(())
    }

    #[test]
    fn an_object_becomes_a_fieldset_with_controls_named_by_path() -> anyhow::Result<()> {
        let schema = parse_schema(json!({"type": "object", "properties": {
            "address": {"type": "object", "title": "Delivery address", "properties": {
                "street": {"type": "string"},
                "postal_code": {"type": "string", "pattern": "^[0-9]{5}$"},
                "city": {"type": "string"},
                "geo": {"type": "object", "title": "Coordinates", "properties": {
                    "lat": {"type": "number"}, "lon": {"type": "number"}}}
            }, "required": ["street", "city"]}
        }, "required": ["address"]}))?;
        let (tree, _report, _) = build(
            "Enter the corrected delivery address.",
            Some(&schema),
            &json!({}),
        )?;
        let fieldset = node_named(&tree, "address");
        assert_eq!(
            fieldset.map(|node| node.component.as_str()),
            Some("Fieldset")
        );
        assert_eq!(
            fieldset.map(|node| node.props["legend"].clone()),
            Some(json!("Delivery address"))
        );
        assert_eq!(
            node_named(&tree, "address.city").map(|node| node.component.as_str()),
            Some("Input")
        );
        assert_eq!(
            node_named(&tree, "address.geo").map(|node| node.component.as_str()),
            Some("Fieldset")
        );
        assert_eq!(
            node_named(&tree, "address.geo.lat").map(|node| node.props["type"].clone()),
            Some(json!("number"))
        );
        Ok(())
    }

    #[test]
    fn per_row_decisions_with_a_reason_become_a_bound_list_with_a_choice_per_row(
    ) -> anyhow::Result<()> {
        let schema = parse_schema(json!({"type": "object", "properties": {
            "decisions": {"type": "array", "items": {"type": "object", "properties": {
                "id": {"type": "string"},
                "decision": {"type": "string", "enum": ["approve", "reject"]},
                "reason": {"type": "string"}
            }, "required": ["id", "decision"]}}
        }, "required": ["decisions"]}))?;
        let data = json!({"claims": [
            {"id": "CLM-1", "amount": 120, "note": "Taxi"},
            {"id": "CLM-2", "amount": 40, "note": "Lunch"}
        ]});
        let (tree, _report, _) = build(
            "Decide on each claim; give a reason for each rejection.",
            Some(&schema),
            &data,
        )?;
        let Some(list) = node_named(&tree, "decisions") else {
            panic!("no list: {tree:?}");
        };
        assert_eq!(list.component, "RecordList");
        assert_eq!(list.props["rows"], json!({"$data": "/claims"}));
        assert_eq!(list.props["columns"][0]["read_only"], json!(true));
        assert_eq!(list.props["columns"][1]["input"], json!("radio"));
        assert_eq!(list.props["columns"][2]["input"], json!("text"));
        // The claims' own columns stay in view beside the decisions.
        assert!(
            components(&tree).contains(&"Table"),
            "{:?}",
            components(&tree)
        );
        Ok(())
    }

    #[test]
    fn a_selection_with_max_items_says_its_limit() -> anyhow::Result<()> {
        let schema = parse_schema(json!({"type": "object", "properties": {
            "deactivate_ids": {"type": "array", "items": {"type": "string"}, "maxItems": 500}
        }}))?;
        let users: Vec<Value> = (1..=60)
            .map(|n| json!({"id": format!("u{n}"), "name": format!("User {n}")}))
            .collect();
        let (tree, report, _) =
            build("Deactivate users.", Some(&schema), &json!({"users": users}))?;
        assert!(report.ok, "{:?}", report.errors);
        let table = tree.nodes.values().find(|node| node.component == "Table");
        assert_eq!(
            table.map(|node| node.props["selectable"]["maxItems"].clone()),
            Some(json!(500))
        );
        Ok(())
    }

    #[test]
    fn headings_come_from_the_first_sentence() {
        assert_eq!(
            split_prompt("Please archive old emails. They are older than a year."),
            (
                "Archive old emails".to_owned(),
                "They are older than a year.".to_owned()
            )
        );
        assert_eq!(
            split_prompt("Ready? Go"),
            ("Ready?".to_owned(), "Go".to_owned())
        );
        assert_eq!(
            split_prompt("Version 1.4 is out"),
            ("Version 1.4 is out".to_owned(), String::new())
        );
        let (long, _) = split_prompt(&"word ".repeat(40));
        assert!(long.chars().count() <= 81 && long.ends_with('…'), "{long}");
    }

    #[test]
    fn a_selectable_table_needs_a_field_that_names_the_row_ids() -> anyhow::Result<()> {
        let cases = cases();
        let (tree, report, _) = build_case(&cases[21])?;
        assert!(report.ok);
        assert_eq!(component_of(&tree, "labels"), Some("MultiTextInput"));
        assert_eq!(component_of(&tree, "urgent_ids"), Some("Table"));
        let (tree, _, _) = build_case(&cases[14])?;
        assert_eq!(component_of(&tree, "reviewer_ids"), Some("Table"));
        Ok(())
    }

    fn field_kind() -> impl Strategy<Value = FieldKind> {
        let option = "[a-z][a-z0-9_]{0,8}|[A-Z]{1,4}|[a-z]{1,3} [0-9]{1,2}";
        let options = proptest::collection::btree_set(option, 1..=10)
            .prop_map(|set| set.into_iter().collect::<Vec<String>>());
        let items = (
            proptest::option::of(0_u64..4),
            proptest::option::of(0_u64..60),
        )
            .prop_map(|(low, high)| match (low, high) {
                (Some(low), Some(high)) if high < low => (Some(high), Some(low)),
                other => other,
            });
        let format = proptest::option::of(proptest::sample::select(StringFormat::ALL.to_vec()));
        prop_oneof![
            (
                format,
                proptest::option::of(0_u64..10),
                proptest::option::of(10_u64..400)
            )
                .prop_map(|(format, min_length, max_length)| FieldKind::String {
                    format,
                    min_length,
                    max_length,
                    pattern: None
                }),
            (
                proptest::option::of(-1e6_f64..0.0),
                proptest::option::of(0.0_f64..1e6)
            )
                .prop_map(|(minimum, maximum)| FieldKind::Number {
                    multiple_of: None,
                    minimum,
                    maximum,
                    exclusive_minimum: None,
                    exclusive_maximum: None
                }),
            (
                proptest::option::of(-100_i64..0),
                proptest::option::of(0_i64..1000)
            )
                .prop_map(|(minimum, maximum)| FieldKind::Integer {
                    multiple_of: None,
                    minimum,
                    maximum
                }),
            Just(FieldKind::Boolean),
            options
                .clone()
                .prop_map(|options| FieldKind::Enum { options }),
            (items.clone(), any::<bool>()).prop_map(|((min_items, max_items), unique_items)| {
                FieldKind::StringArray {
                    min_items,
                    max_items,
                    unique_items,
                    item_min_length: None,
                    item_max_length: None,
                    item_pattern: None,
                    item_format: None,
                }
            }),
            (options, items, any::<bool>()).prop_map(
                // Loading refuses more minItems than options (a form sends each option once).
                |(options, (min_items, max_items), unique_items)| FieldKind::EnumArray {
                    min_items: min_items.map(|fewest| fewest.min(options.len() as u64)),
                    options,
                    max_items,
                    unique_items,
                }
            ),
        ]
    }

    fn field() -> impl Strategy<Value = FormField> {
        let name = "[a-z][a-z0-9]{0,6}(_(ids|id|note|reason|email|count|tags)){0,1}";
        (
            name,
            field_kind(),
            any::<bool>(),
            proptest::option::of("[A-Za-z ]{1,20}"),
            proptest::option::of("[a-z ]{0,30}"),
        )
            .prop_map(|(name, kind, required, title, description)| FormField {
                name,
                title,
                description,
                default: None,
                examples: Vec::new(),
                required,
                kind,
            })
    }

    fn form_schema() -> impl Strategy<Value = FormSchema> {
        proptest::collection::vec(field(), 0..12).prop_map(|fields| {
            let mut seen = BTreeSet::new();
            FormSchema::new(
                fields
                    .into_iter()
                    .filter(|field| seen.insert(field.name.clone()))
                    .collect(),
            )
        })
    }

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i32>().prop_map(|number| json!(number)),
            (-1e9_f64..1e9).prop_map(|number| json!(number)),
            "[a-zA-Z0-9 {}/<>]{0,12}".prop_map(Value::String),
        ]
    }

    fn data() -> impl Strategy<Value = Value> {
        let row = proptest::collection::btree_map("(id|name|[a-z]{1,6})", leaf(), 0..6)
            .prop_map(|map| Value::Object(map.into_iter().collect()));
        let rows = proptest::collection::vec(row, 0..8).prop_map(Value::Array);
        let scalars = proptest::collection::vec(leaf(), 0..6).prop_map(Value::Array);
        let node = prop_oneof![leaf(), rows, scalars];
        let record = proptest::collection::btree_map("[a-z_]{1,8}", node.clone(), 0..5)
            .prop_map(|map| Value::Object(map.into_iter().collect()));
        prop_oneof![
            leaf(),
            proptest::collection::btree_map("[a-z_/~]{1,10}", prop_oneof![node, record], 0..8)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
            proptest::collection::vec(leaf(), 0..4).prop_map(Value::Array),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn the_heuristic_page_passes_validate_form_for_any_schema_and_data(
            schema in form_schema(),
            data in data(),
            prompt in "[A-Za-z ]{0,30}(\\. [A-Za-z ]{0,30})?",
            has_schema in any::<bool>(),
        ) {
            let schema = has_schema.then_some(schema);
            let outcome = build(&prompt, schema.as_ref(), &data);
            prop_assert!(outcome.is_ok(), "{:?}", outcome.err());
            if let Ok((tree, report, _)) = outcome {
                prop_assert!(report.ok, "{:#?}\n{:#?}", report.errors, tree);
            }
        }
    }
}
