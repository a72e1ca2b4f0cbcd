//! The agent loop with scripted models, the heuristic fallback, the page cache, generation records
//! and events on both backends, and the generation API.

use std::time::Duration;

use serde_json::{json, Value};
use tessera::{
    agent::{
        cache::CachedPage,
        events::{EventKind, GenerationEvent},
        generate_page,
        generation::GenerationOutcome,
        tools::AGENT_TOOLS,
        AgentError, CachePolicy, EventSink, GenerationInput, HeuristicModel,
    },
    forms::{validate_form::validate_form, FieldKind, FormField, FormSchema},
    llm::{
        ChatResponse, MalformedArguments, Message, ModelError, ScriptedModel, ScriptedTurn,
        StopReason, ToolCall, Usage,
    },
    store::{now_ms, Store},
};
use tessera_app::catalog::Catalog;
use uuid::Uuid;

use crate::helpers::{header, store_contract, TestApp, TestDb, API_TOKEN};

fn schema() -> FormSchema {
    FormSchema::new(vec![
        FormField::new("note", FieldKind::string()),
        FormField::new("priority", FieldKind::enumeration(["low", "high"])),
    ])
}

fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

/// A turn placing `calls` that reports `input`/`output` tokens.
fn turn(calls: Vec<ToolCall>, input: u64, output: u64) -> ScriptedTurn {
    ScriptedTurn::reply(ChatResponse {
        text: None,
        tool_calls: calls,
        stop_reason: StopReason::ToolUse,
        usage: Usage {
            input_tokens: input,
            output_tokens: output,
        },
    })
}

fn heading_and_form() -> Vec<ToolCall> {
    vec![
        call(
            "t1_heading",
            "Heading",
            json!({"props": {"text": "Triage the ticket", "level": 1}}),
        ),
        call("t1_form", "Form", json!({"props": {}})),
    ]
}

fn note() -> ToolCall {
    note_in("c2")
}

fn note_in(parent: &str) -> ToolCall {
    call(
        "note",
        "TextArea",
        json!({"props": {"name": "note", "label": "Note", "required": true}, "parent": parent}),
    )
}

fn priority_and_submit() -> Vec<ToolCall> {
    priority_and_submit_in("c2")
}

fn priority_and_submit_in(parent: &str) -> Vec<ToolCall> {
    vec![
        call(
            "priority",
            "RadioGroup",
            json!({"props": {"name": "priority", "label": "Priority", "required": true,
                             "options": ["low", "high"]}, "parent": parent}),
        ),
        call(
            "submit",
            "Button",
            json!({"props": {"label": "Save", "kind": "submit"}, "parent": parent}),
        ),
    ]
}

fn finish(id: &str) -> ToolCall {
    call(id, "Finish", json!({}))
}

fn input() -> GenerationInput {
    GenerationInput::new("Triage the ticket. Say how urgent it is.")
        .with_schema(schema())
        .with_data(json!({"ticket": {"id": "T-1", "title": "Printer on fire"}}))
        .with_cache(CachePolicy::Bypass)
}

/// Every tool result the loop sent in `request_index`, by call id.
fn tool_results(model: &ScriptedModel, request_index: usize) -> Vec<(String, Value, bool)> {
    model
        .requests()
        .get(request_index)
        .map(|request| {
            request
                .messages
                .iter()
                .filter_map(|message| match message {
                    Message::ToolResult {
                        call_id,
                        content,
                        is_error,
                        ..
                    } => Some((call_id.clone(), content.clone(), *is_error)),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn a_scripted_model_builds_a_valid_page_in_two_turns() -> anyhow::Result<()> {
    let database = TestDb::sqlite().await?;
    let mut calls = priority_and_submit();
    calls.insert(0, note());
    calls.push(finish("done"));
    let model = ScriptedModel::new(vec![
        turn(heading_and_form(), 1200, 80),
        turn(calls, 1500, 160),
    ])
    .named("triage");
    let generated = generate_page(input(), &model, &database.store, None).await?;
    assert!(generated.report.ok, "{:?}", generated.report.errors);
    let record = &generated.record;
    assert_eq!(record.outcome, GenerationOutcome::Ok);
    assert_eq!(
        (record.provider.as_str(), record.model.as_str()),
        ("scripted", "triage")
    );
    assert_eq!(record.turns, 2);
    assert_eq!((record.tokens_in, record.tokens_out), (2700, 240));
    assert!(!record.cache_hit);
    assert_eq!(record.prompt_hash.len(), 64);
    let turns = &record.transcript["attempts"][0]["transcript"];
    assert_eq!(turns[0]["calls"][1]["result"], json!({"id": "c2"}));
    assert_eq!(turns[1]["calls"][0]["arguments"]["props"]["name"], "note");
    assert_eq!(turns[1]["calls"][3]["result"], json!({"finished": true}));
    assert_eq!(
        generated.tree.nodes.keys().collect::<Vec<_>>(),
        vec!["c1", "c2", "c3", "c4", "c5"]
    );
    let tools: Vec<String> = model.requests()[0]
        .tools
        .iter()
        .map(|tool| tool.name.clone())
        .collect();
    assert_eq!(
        tools.len(),
        Catalog::defaults().specs().len() + AGENT_TOOLS.len()
    );
    assert!(tools.iter().any(|name| name == "ValidateForm"));
    let stored = database.store.generation(record.id).await?;
    assert_eq!(&stored, record);
    database.cleanup().await
}

/// Thirty fields of the common kinds, each with the child node a model writes for it (props
/// only as far as the schema does not fill them in).
fn thirty_fields_with_nodes() -> (FormSchema, Vec<Value>) {
    let mut fields = Vec::new();
    let mut nodes = Vec::new();
    for index in 0..30 {
        let name = format!("field_{index}");
        let label = format!("Field {index}");
        let (kind, node) = match index % 5 {
            0 => (
                FieldKind::string(),
                json!({"component": "Input", "props": {"name": name, "label": label}}),
            ),
            1 => (
                FieldKind::integer(),
                json!({"component": "Input", "props": {"name": name, "label": label}}),
            ),
            2 => (
                FieldKind::Boolean,
                json!({"component": "Checkbox", "props": {"name": name, "label": label}}),
            ),
            3 => (
                FieldKind::enumeration(["low", "high"]),
                json!({"component": "RadioGroup",
                       "props": {"name": name, "label": label, "options": ["low", "high"]}}),
            ),
            _ => (
                FieldKind::string(),
                json!({"component": "TextArea", "props": {"name": name, "label": label}}),
            ),
        };
        fields.push(FormField::new(name, kind));
        nodes.push(node);
    }
    (FormSchema::new(fields), nodes)
}

#[tokio::test]
async fn a_model_places_a_thirty_field_form_in_one_call_and_finishes_in_one_turn(
) -> anyhow::Result<()> {
    let database = TestDb::sqlite().await?;
    let (schema, mut children) = thirty_fields_with_nodes();
    children.push(json!({"component": "Container", "props": {"direction": "row"}, "children": [
        {"component": "Button", "props": {"label": "Save", "kind": "submit"}},
        {"component": "Button", "props": {"label": "Cancel", "kind": "cancel", "variant": "secondary"}}
    ]}));
    let model = ScriptedModel::new(vec![turn(
        vec![
            call(
                "heading",
                "Heading",
                json!({"props": {"text": "Tell us everything", "level": 1}}),
            ),
            call("form", "Form", json!({"props": {}, "children": children})),
            finish("done"),
        ],
        100,
        10,
    )]);
    let input = GenerationInput::new("Tell us everything.")
        .with_schema(schema)
        .with_cache(CachePolicy::Bypass);
    let generated = generate_page(input, &model, &database.store, None).await?;
    assert_eq!(generated.record.outcome, GenerationOutcome::Ok);
    assert_eq!(generated.record.turns, 1);
    assert!(generated.report.ok, "{:?}", generated.report.errors);
    let transcript = &generated.record.transcript["attempts"][0]["transcript"];
    let placed = &transcript[0]["calls"][1]["result"];
    assert_eq!(placed["id"], "c2");
    let field_ids: Vec<&str> = placed["children"]
        .as_array()
        .map(|children| {
            children
                .iter()
                .filter_map(|child| child["id"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(field_ids.len(), 31, "thirty fields and the button row");
    assert_eq!(field_ids.first(), Some(&"c3"));
    assert_eq!(
        placed["children"][30]["children"],
        json!([{"id": "c34"}, {"id": "c35"}])
    );
    let form = &generated.tree.nodes["c2"];
    assert_eq!(form.children, field_ids);
    assert_eq!(
        generated.tree.nodes["c4"].props["type"], "number",
        "completed from the schema"
    );
    let events = database
        .store
        .generation_events(generated.record.id, 0, 100)
        .await?;
    let form_event = events
        .iter()
        .find(|event| event.kind == EventKind::ToolCall && event.payload["node"] == "c2");
    assert_eq!(
        form_event.map(|event| event.payload["inside"].as_array().map_or(0, Vec::len)),
        Some(33)
    );
    database.cleanup().await
}

#[tokio::test]
async fn a_field_placed_outside_the_form_is_moved_in_and_the_page_then_finishes(
) -> anyhow::Result<()> {
    let database = TestDb::sqlite().await?;
    // The typical slip: the Form is placed whole, but one field lands on the top level.
    let first = vec![
        call(
            "heading",
            "Heading",
            json!({"props": {"text": "Triage the ticket", "level": 1}}),
        ),
        call(
            "form",
            "Form",
            json!({"props": {}, "children": [
                {"component": "RadioGroup", "props": {"name": "priority", "label": "Priority",
                                                     "options": ["low", "high"]}},
                {"component": "Button", "props": {"label": "Save"}}
            ]}),
        ),
        call(
            "note",
            "TextArea",
            json!({"props": {"name": "note", "label": "Note"}}),
        ),
        finish("too_soon"),
    ];
    let second = vec![
        call("look", "GetPage", json!({})),
        call(
            "move",
            "MoveComponent",
            json!({"id": "c5", "parent": "c2", "index": 1}),
        ),
        finish("done"),
    ];
    let model = ScriptedModel::new(vec![turn(first, 100, 10), turn(second, 100, 10)]);
    let generated = generate_page(input(), &model, &database.store, None).await?;
    assert_eq!(generated.record.outcome, GenerationOutcome::Ok);
    assert_eq!(generated.record.turns, 2);
    let results = tool_results(&model, 1);
    let (_, refusal, _) = results
        .iter()
        .find(|(id, _, _)| id == "too_soon")
        .ok_or_else(|| anyhow::anyhow!("Finish was not answered"))?;
    let message = refusal["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("[field_outside_form] field `note`"),
        "{message}"
    );
    assert!(
        message.contains("call MoveComponent with {\"id\": \"c5\", \"parent\": \"c2\"}"),
        "{message}"
    );
    // GetPage read the page back before the move: the TextArea on the top level, unindented.
    let transcript = &generated.record.transcript["attempts"][0]["transcript"];
    let page = transcript[1]["calls"][0]["result"]
        .as_str()
        .unwrap_or_default();
    assert!(page.contains("\n  c4 Button "), "{page}");
    assert!(page.contains("\nc5 TextArea "), "{page}");
    assert_eq!(generated.tree.nodes["c2"].children, vec!["c3", "c5", "c4"]);
    assert!(generated.report.ok, "{:?}", generated.report.errors);
    database.cleanup().await
}

#[tokio::test]
async fn a_component_may_not_take_the_name_of_a_new_agent_tool() -> anyhow::Result<()> {
    let database = TestDb::sqlite().await?;
    for reserved in ["MoveComponent", "GetPage"] {
        let mut catalog = Catalog::defaults();
        let mut spec = catalog
            .get("Badge")
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("no Badge"))?;
        spec.name = reserved.to_owned();
        catalog.register(spec);
        let mut request = input();
        request.catalog = catalog;
        let model = ScriptedModel::new(Vec::new());
        let refused = generate_page(request, &model, &database.store, None).await;
        assert!(
            matches!(&refused, Err(AgentError::ReservedToolName(name)) if name == reserved),
            "{reserved}: {:?}",
            refused.err()
        );
        assert!(model.requests().is_empty(), "no model was asked");
    }
    database.cleanup().await
}

#[tokio::test]
async fn a_model_that_stops_early_is_told_what_is_missing_and_fixes_it() -> anyhow::Result<()> {
    let database = TestDb::sqlite().await?;
    let mut early = priority_and_submit();
    early.push(finish("too_soon"));
    let model = ScriptedModel::new(vec![
        turn(heading_and_form(), 100, 10),
        turn(early, 100, 10),
        ScriptedTurn::text("The page is done."),
        turn(vec![note(), finish("now")], 100, 10),
    ]);
    let generated = generate_page(input(), &model, &database.store, None).await?;
    assert_eq!(generated.record.outcome, GenerationOutcome::Ok);
    assert_eq!(generated.record.turns, 4);
    // Finish while `note` was missing: the Finish call itself is answered with what is wrong.
    let finish_reply = tool_results(&model, 2)
        .into_iter()
        .find(|(id, _, _)| id == "too_soon");
    let (_, content, is_error) = finish_reply.ok_or_else(|| anyhow::anyhow!("no Finish reply"))?;
    assert!(is_error);
    assert_eq!(content["error"]["rule"], "not_finished");
    let message = content["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("[missing_field] field `note`"),
        "{message}"
    );
    // A reply without tool calls: code speaks next, naming the field again.
    let last = model.requests()[3].messages.last().cloned();
    let Some(Message::User(follow_up)) = last else {
        anyhow::bail!("expected a follow-up message, got {last:?}");
    };
    assert!(follow_up.contains("field `note`"), "{follow_up}");
    assert!(follow_up.contains("TextArea"), "{follow_up}");
    database.cleanup().await
}

#[tokio::test]
async fn malformed_arguments_are_fed_back_as_a_tool_error_and_repaired() -> anyhow::Result<()> {
    let database = TestDb::sqlite().await?;
    let broken = ToolCall {
        id: "broken".into(),
        name: "Heading".into(),
        arguments: Err(MalformedArguments {
            raw: "{\"props\": {\"text\": \"Triage".into(),
            error: "EOF while parsing a string at line 1 column 27".into(),
        }),
        signature: None,
    };
    // The Heading fails, so the Form becomes c1 and the fields go into c1.
    let mut repaired = vec![call(
        "fixed",
        "Heading",
        json!({"props": {"text": "Triage the ticket", "level": 1}}),
    )];
    repaired.push(note_in("c1"));
    repaired.extend(priority_and_submit_in("c1"));
    repaired.push(finish("done"));
    let model = ScriptedModel::new(vec![
        turn(
            vec![broken, call("form", "Form", json!({"props": {}}))],
            10,
            10,
        ),
        turn(repaired, 10, 10),
    ]);
    let generated = generate_page(input(), &model, &database.store, None).await?;
    assert_eq!(generated.record.outcome, GenerationOutcome::Ok);
    assert_eq!(generated.record.turns, 2);
    let (_, content, is_error) = tool_results(&model, 1)
        .into_iter()
        .find(|(id, _, _)| id == "broken")
        .ok_or_else(|| anyhow::anyhow!("the malformed call was not answered"))?;
    assert!(is_error);
    assert_eq!(content["error"]["rule"], "malformed_arguments");
    assert_eq!(
        content["error"]["message"],
        "arguments are not valid JSON: EOF while parsing a string at line 1 column 27"
    );
    let transcript = &generated.record.transcript["attempts"][0]["transcript"];
    assert_eq!(
        transcript[0]["calls"][0]["arguments"]["malformed"],
        "{\"props\": {\"text\": \"Triage"
    );
    assert_eq!(generated.tree.nodes["c2"].component, "Heading");
    let events = database
        .store
        .generation_events(generated.record.id, 0, 100)
        .await?;
    assert!(events.iter().any(|event| event.kind == EventKind::ToolError
        && event.payload["error"]["rule"] == "malformed_arguments"));
    database.cleanup().await
}

#[tokio::test]
async fn past_max_steps_the_heuristic_page_is_used_and_recorded() -> anyhow::Result<()> {
    let database = TestDb::sqlite().await?;
    let model = ScriptedModel::new(vec![
        turn(heading_and_form(), 300, 30),
        turn(
            vec![call(
                "text",
                "Text",
                json!({"props": {"text": "Still thinking"}}),
            )],
            300,
            30,
        ),
    ]);
    let generated = generate_page(input().with_max_steps(2), &model, &database.store, None).await?;
    let record = &generated.record;
    assert_eq!(record.outcome, GenerationOutcome::FellBack);
    assert_eq!(
        record.turns, 3,
        "two scripted turns, then the heuristic's one turn"
    );
    assert_eq!((record.tokens_in, record.tokens_out), (600, 60));
    assert_eq!(record.transcript["attempts"][0]["end"], "exhausted");
    let last_errors = record.transcript["attempts"][0]["last_errors"].to_string();
    assert!(last_errors.contains("missing_field"), "{last_errors}");
    assert_eq!(
        record.transcript["attempts"][1]["model"],
        "heuristic:heuristic"
    );
    assert_eq!(record.transcript["attempts"][1]["end"], "valid");
    let data = json!({"ticket": {"id": "T-1", "title": "Printer on fire"}});
    let report = validate_form(
        &generated.tree,
        &Catalog::defaults(),
        Some(&schema()),
        &data,
    );
    assert!(report.ok, "{:?}", report.errors);
    let events = database.store.generation_events(record.id, 0, 1000).await?;
    assert!(events.iter().any(|event| event.kind == EventKind::FallBack));
    database.cleanup().await
}

#[tokio::test]
async fn a_model_error_falls_back_to_the_heuristic_page() -> anyhow::Result<()> {
    let database = TestDb::sqlite().await?;
    let model = ScriptedModel::new(vec![ScriptedTurn::error(ModelError::Server {
        status: 503,
        body_excerpt: "overloaded".into(),
    })]);
    let generated = generate_page(input(), &model, &database.store, None).await?;
    assert_eq!(generated.record.outcome, GenerationOutcome::FellBack);
    assert_eq!(
        generated.record.transcript["attempts"][0]["end"],
        "model_error"
    );
    assert_eq!(
        generated.record.transcript["attempts"][0]["error"],
        "provider error 503: overloaded"
    );
    assert!(generated.report.ok);
    let events = database
        .store
        .generation_events(generated.record.id, 0, 1000)
        .await?;
    let kinds: Vec<EventKind> = events.iter().map(|event| event.kind).collect();
    assert_eq!(kinds.first(), Some(&EventKind::Started));
    assert!(kinds.contains(&EventKind::ModelError));
    assert!(kinds.contains(&EventKind::FallBack));
    assert_eq!(kinds.last(), Some(&EventKind::Finished));
    database.cleanup().await
}

fn email_rows(count: usize, subject: &str) -> Value {
    let rows: Vec<Value> = (1..=count)
        .map(|index| json!({"id": format!("m{index}"), "from": "news@example.com", "subject": format!("{subject} {index}")}))
        .collect();
    json!({ "emails": rows })
}

fn archive_schema() -> FormSchema {
    FormSchema::new(vec![FormField::new(
        "archive_ids",
        FieldKind::string_array(),
    )])
}

fn archive_script() -> Vec<ScriptedTurn> {
    vec![
        turn(
            vec![
                call(
                    "h",
                    "Heading",
                    json!({"props": {"text": "Archive emails", "level": 1}}),
                ),
                call("f", "Form", json!({"props": {}})),
            ],
            500,
            50,
        ),
        turn(
            vec![
                call(
                    "t",
                    "Table",
                    json!({"props": {"rows": {"$data": "/emails"},
                                     "selectable": {"name": "archive_ids", "idKey": "id", "label": "Archive"}},
                           "parent": "c2"}),
                ),
                call(
                    "b",
                    "Button",
                    json!({"props": {"label": "Archive"}, "parent": "c2"}),
                ),
                finish("done"),
            ],
            600,
            60,
        ),
    ]
}

#[tokio::test]
async fn a_second_generation_with_new_data_values_reuses_the_cached_page() -> anyhow::Result<()> {
    let database = TestDb::sqlite().await?;
    let first_input = GenerationInput::new("Archive emails")
        .with_schema(archive_schema())
        .with_data(email_rows(3, "Weekly news"));
    let first = generate_page(
        first_input,
        &ScriptedModel::new(archive_script()),
        &database.store,
        None,
    )
    .await?;
    assert!(!first.record.cache_hit);
    let unused = ScriptedModel::new(Vec::new());
    let second_input = GenerationInput::new("Archive emails")
        .with_schema(archive_schema())
        .with_data(email_rows(40, "Invoice"));
    let second = generate_page(second_input, &unused, &database.store, None).await?;
    assert!(unused.requests().is_empty(), "the model must not be called");
    assert!(second.record.cache_hit);
    assert_eq!(second.record.outcome, GenerationOutcome::Ok);
    assert_eq!((second.record.turns, second.record.tokens_in), (0, 0));
    assert_eq!(second.tree, first.tree);
    assert_eq!(
        second.record.transcript["cache"]["source_generation"],
        json!(first.record.id)
    );
    let cached_key = second.record.transcript["cache"]["key"]
        .as_str()
        .unwrap_or_default();
    let cached = database.store.cached_page(cached_key).await?;
    assert_eq!(cached.map(|page| page.hits), Some(1));
    // Opting out calls the model even though a page is cached.
    let bypassing = ScriptedModel::new(archive_script());
    let third = generate_page(
        GenerationInput::new("Archive emails")
            .with_schema(archive_schema())
            .with_data(email_rows(2, "Receipt"))
            .with_cache(CachePolicy::Bypass),
        &bypassing,
        &database.store,
        None,
    )
    .await?;
    assert!(!third.record.cache_hit);
    assert_eq!(bypassing.requests().len(), 2);
    database.cleanup().await
}

#[tokio::test]
async fn a_cached_page_that_no_longer_validates_is_regenerated() -> anyhow::Result<()> {
    let database = TestDb::sqlite().await?;
    let priority = FormSchema::new(vec![FormField::new(
        "priority",
        FieldKind::enumeration(["low", "high"]),
    )]);
    let script = |options: Value| {
        vec![
            turn(
                vec![
                    call(
                        "h",
                        "Heading",
                        json!({"props": {"text": "Pick", "level": 1}}),
                    ),
                    call("f", "Form", json!({"props": {}})),
                ],
                1,
                1,
            ),
            turn(
                vec![
                    call(
                        "r",
                        "RadioGroup",
                        json!({"props": {"name": "priority", "label": "Priority", "required": true,
                                         "options": options}, "parent": "c2"}),
                    ),
                    call(
                        "b",
                        "Button",
                        json!({"props": {"label": "Save"}, "parent": "c2"}),
                    ),
                    finish("done"),
                ],
                1,
                1,
            ),
        ]
    };
    let first = generate_page(
        GenerationInput::new("Pick")
            .with_schema(priority.clone())
            .with_data(json!({"choices": ["low", "high"]})),
        &ScriptedModel::new(script(json!({"$data": "/choices"}))),
        &database.store,
        None,
    )
    .await?;
    assert_eq!(first.record.outcome, GenerationOutcome::Ok);
    // Same shape, but a value the enum does not allow: the cached tree fails ValidateForm.
    let model = ScriptedModel::new(script(json!(["low", "high"])));
    let second = generate_page(
        GenerationInput::new("Pick")
            .with_schema(priority)
            .with_data(json!({"choices": ["low", "urgent"]})),
        &model,
        &database.store,
        None,
    )
    .await?;
    assert!(!second.record.cache_hit);
    assert_eq!(model.requests().len(), 2, "the model was asked again");
    let events = database
        .store
        .generation_events(second.record.id, 0, 100)
        .await?;
    let miss = events
        .iter()
        .find(|event| event.kind == EventKind::CacheMiss);
    assert_eq!(
        miss.map(|event| event.payload["reason"].clone()),
        Some(json!("no_longer_valid"))
    );
    database.cleanup().await
}

fn thirty_fields() -> FormSchema {
    let fields = (0..30)
        .map(|index| {
            let name = format!("field_{index}");
            match index % 6 {
                0 => FormField::new(name, FieldKind::string()),
                1 => FormField::new(name, FieldKind::integer()).optional(),
                2 => FormField::new(name, FieldKind::Boolean),
                3 => FormField::new(
                    name,
                    FieldKind::enumeration(["a", "b", "c", "d", "e", "f", "g"]),
                ),
                4 => FormField::new(name, FieldKind::enum_array(["x", "y"])),
                _ => FormField::new(name, FieldKind::string_array()).optional(),
            }
        })
        .collect();
    FormSchema::new(fields)
}

#[tokio::test]
async fn the_prompt_sent_for_ten_rows_and_ten_thousand_rows_is_the_same_size() -> anyhow::Result<()>
{
    let database = TestDb::sqlite().await?;
    let mut sizes = Vec::new();
    for count in [10, 10_000] {
        let model = ScriptedModel::new(vec![ScriptedTurn::error(ModelError::Timeout)]);
        generate_page(
            GenerationInput::new("Archive emails")
                .with_schema(thirty_fields())
                .with_data(email_rows(count, "Weekly news"))
                .with_cache(CachePolicy::Bypass),
            &model,
            &database.store,
            None,
        )
        .await?;
        let sent = model.requests();
        let user = sent.first().and_then(|request| {
            request.messages.iter().find_map(|message| match message {
                Message::User(text) => Some(text.len()),
                _ => None,
            })
        });
        sizes.push(user.unwrap_or_default());
    }
    // Only the row count's digits differ ("10" vs "10000").
    assert_eq!(sizes[1] - sizes[0], 3, "{sizes:?}");
    assert!(sizes[0] < 16_000, "{sizes:?}");
    database.cleanup().await
}

#[tokio::test]
async fn an_event_sink_sees_each_event_as_it_happens() -> anyhow::Result<()> {
    let database = TestDb::sqlite().await?;
    let (sink, mut receiver) = EventSink::channel();
    let generated = generate_page(
        GenerationInput::new("Show the numbers").with_data(json!({"orders": 3, "refunds": 1})),
        &HeuristicModel::new(),
        &database.store,
        Some(sink),
    )
    .await?;
    let mut seen = Vec::new();
    while let Ok(event) = receiver.try_recv() {
        seen.push(event);
    }
    let stored = database
        .store
        .generation_events(generated.record.id, 0, 100)
        .await?;
    assert_eq!(seen, stored);
    database.cleanup().await
}

store_contract!(
    generation_events_are_read_in_order_after_a_sequence_number,
    recent_generations_are_listed_newest_first,
    a_cached_page_is_replaced_and_counts_its_hits,
    a_generation_leaves_its_record_and_events_in_the_store,
);

fn event(id: Uuid, seq: i64, kind: EventKind) -> GenerationEvent {
    GenerationEvent {
        generation_id: id,
        seq,
        kind,
        payload: json!({"seq": seq, "text": "é <b>"}),
        created_at_ms: 1_700_000_000_000 + seq,
    }
}

async fn generation_events_are_read_in_order_after_a_sequence_number(
    store: &Store,
) -> anyhow::Result<()> {
    let id = Uuid::new_v4();
    let other = Uuid::new_v4();
    store
        .insert_generation_events(&[
            event(id, 1, EventKind::Started),
            event(other, 1, EventKind::Started),
        ])
        .await?;
    store
        .insert_generation_events(&[
            event(id, 2, EventKind::ToolCall),
            event(id, 3, EventKind::Finished),
        ])
        .await?;
    let all = store.generation_events(id, 0, 100).await?;
    assert_eq!(
        all,
        vec![
            event(id, 1, EventKind::Started),
            event(id, 2, EventKind::ToolCall),
            event(id, 3, EventKind::Finished)
        ]
    );
    assert_eq!(store.generation_events(id, 2, 100).await?.len(), 1);
    assert_eq!(store.generation_events(id, 0, 2).await?.len(), 2);
    assert!(store
        .insert_generation_events(&[event(id, 3, EventKind::Finished)])
        .await
        .is_err());
    Ok(())
}

async fn recent_generations_are_listed_newest_first(store: &Store) -> anyhow::Result<()> {
    let mut ids = Vec::new();
    for prompt in ["first", "second", "third"] {
        let generated = generate_page(
            GenerationInput::new(prompt).with_cache(CachePolicy::Bypass),
            &HeuristicModel::new(),
            store,
            None,
        )
        .await?;
        ids.push(generated.record.id);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let listed: Vec<Uuid> = store
        .recent_generations(2)
        .await?
        .into_iter()
        .map(|record| record.id)
        .collect();
    assert_eq!(listed, vec![ids[2], ids[1]]);
    assert_eq!(store.recent_generations(0).await?.len(), 1, "at least one");
    Ok(())
}

async fn a_cached_page_is_replaced_and_counts_its_hits(store: &Store) -> anyhow::Result<()> {
    let page = CachedPage {
        key: "k".repeat(64),
        tree: json!({"nodes": {}, "order": []}),
        // Round-trips through the store: what the literal text owes to the old request.
        provenance: tessera::agent::cache::literals::Provenance {
            prompt: "Show the 3 rows".into(),
            values: std::collections::BTreeMap::from([(
                "3".to_owned(),
                std::collections::BTreeSet::from([
                    tessera::agent::cache::literals::Origin::Prompt,
                    tessera::agent::cache::literals::Origin::Length("/rows".into()),
                ]),
            )]),
        },
        generation_id: Uuid::new_v4(),
        model: "heuristic:heuristic".into(),
        hits: 0,
        created_at_ms: now_ms(),
    };
    assert_eq!(store.cached_page(&page.key).await?, None);
    store.put_cached_page(&page).await?;
    store.record_cache_hit(&page.key, now_ms()).await?;
    store.record_cache_hit(&page.key, now_ms()).await?;
    assert_eq!(
        store
            .cached_page(&page.key)
            .await?
            .map(|stored| stored.hits),
        Some(2)
    );
    let newer = CachedPage {
        tree: json!({"nodes": {"c1": {"component": "Divider"}}, "order": ["c1"]}),
        generation_id: Uuid::new_v4(),
        ..page.clone()
    };
    store.put_cached_page(&newer).await?;
    assert_eq!(store.cached_page(&page.key).await?, Some(newer));
    assert!(store.record_cache_hit("missing", now_ms()).await.is_err());
    Ok(())
}

async fn a_generation_leaves_its_record_and_events_in_the_store(
    store: &Store,
) -> anyhow::Result<()> {
    let input = GenerationInput::new("Archive old emails")
        .with_schema(archive_schema())
        .with_data(email_rows(4, "News"));
    let id = input.id;
    let generated = generate_page(input, &HeuristicModel::new(), store, None).await?;
    assert_eq!(generated.record.id, id);
    let record = store.generation(id).await?;
    assert_eq!(record, generated.record);
    assert_eq!(record.provider, "heuristic");
    assert_eq!(record.turns, 1);
    let events = store.generation_events(id, 0, 1000).await?;
    let seqs: Vec<i64> = events.iter().map(|event| event.seq).collect();
    assert_eq!(seqs, (1..=i64::try_from(events.len())?).collect::<Vec<_>>());
    assert_eq!(
        events.first().map(|event| event.kind),
        Some(EventKind::Started)
    );
    assert_eq!(
        events.last().map(|event| event.kind),
        Some(EventKind::Finished)
    );
    assert_eq!(
        events.last().map(|event| event.payload["outcome"].clone()),
        Some(json!("ok"))
    );
    let placed: Vec<&str> = events
        .iter()
        .filter(|event| event.kind == EventKind::ToolCall)
        .filter_map(|event| event.payload["component"].as_str())
        .collect();
    assert!(
        placed.starts_with(&["Heading", "Text", "Form"]),
        "the heading, the summary line, the form: {placed:?}"
    );
    // The Form came in one call with everything inside it, the row-picking Table too.
    let inside_form: Vec<&str> = events
        .iter()
        .find(|event| event.kind == EventKind::ToolCall && event.payload["component"] == "Form")
        .and_then(|event| event.payload["inside"].as_array())
        .map(|ids| ids.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert!(
        inside_form.iter().any(|id| generated
            .tree
            .nodes
            .get(*id)
            .is_some_and(|node| node.component == "Table")),
        "{inside_form:?}"
    );
    assert!(events
        .iter()
        .any(|event| event.kind == EventKind::Validation && event.payload["ok"] == json!(true)));
    Ok(())
}

// ---- HTTP ----

#[tokio::test]
async fn generating_a_page_needs_the_api_token() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let response = app
        .post_json("/api/pages/generate", &json!({"prompt": "Hello"}))
        .await?;
    assert_eq!(response.status(), 401);
    assert_eq!(app.get("/api/generations").await?.status(), 401);
    Ok(())
}

async fn post_generate(
    app: &crate::helpers::TestApp,
    body: &Value,
) -> anyhow::Result<reqwest::Response> {
    Ok(app
        .client
        .post(app.url("/api/pages/generate"))
        .bearer_auth(API_TOKEN)
        .json(body)
        .send()
        .await?)
}

#[tokio::test]
async fn the_heuristic_generates_a_valid_page_over_http_and_caches_it() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let body = json!({
        "prompt": "Archive old emails. Tick the ones to archive.",
        "schema": {"type": "object", "properties": {
            "archive_ids": {"type": "array", "items": {"type": "string"}},
            "note": {"type": ["string", "null"]},
            "priority": {"type": "string", "enum": ["low", "normal", "high"]}},
            "required": ["priority"]},
        "data": email_rows(5, "News"),
    });
    let response = post_generate(&app, &body).await?;
    assert_eq!(response.status(), 200);
    let generated: Value = response.json().await?;
    assert_eq!(generated["validation"]["ok"], true, "{generated}");
    assert_eq!(generated["generation"]["provider"], "heuristic");
    assert_eq!(generated["generation"]["outcome"], "ok");
    assert_eq!(generated["generation"]["cache_hit"], false);
    assert!(generated["tree"]["nodes"]
        .as_object()
        .is_some_and(|nodes| nodes.len() >= 6));
    let mut again = body.clone();
    again["data"] = email_rows(9, "Invoices");
    let cached: Value = post_generate(&app, &again).await?.json().await?;
    assert_eq!(cached["generation"]["cache_hit"], true);
    assert_eq!(cached["tree"], generated["tree"]);
    let listed: Value = app
        .api_get("/api/generations?limit=5")
        .await?
        .json()
        .await?;
    assert_eq!(listed["generations"].as_array().map(Vec::len), Some(2));
    assert_eq!(listed["generations"][0]["id"], cached["generation"]["id"]);
    Ok(())
}

#[tokio::test]
async fn a_schema_outside_the_subset_is_refused_naming_the_field() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let response = post_generate(
        &app,
        &json!({"prompt": "Split the shipment", "schema": {"type": "object", "properties": {
            "parcels": {"type": "array", "items": {"type": "object", "properties": {
                "contents": {"type": "array", "items": {"type": "object",
                    "properties": {"sku": {"type": "string"}}}}}}}}}}),
    )
    .await?;
    assert_eq!(response.status(), 400);
    let error: Value = response.json().await?;
    assert_eq!(error["error"]["code"], "invalid_schema");
    assert_eq!(error["error"]["field"], "parcels[].contents");
    assert!(error["error"]["message"]
        .as_str()
        .is_some_and(|text| text.contains("a list of records inside a record")));
    Ok(())
}

#[tokio::test]
async fn only_configured_models_may_be_requested() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let refused = post_generate(
        &app,
        &json!({"prompt": "Hi", "model": "openai:gpt-4.1-mini"}),
    )
    .await?;
    assert_eq!(refused.status(), 400);
    let error: Value = refused.json().await?;
    assert_eq!(error["error"]["code"], "unknown_model");
    assert_eq!(error["error"]["field"], "model");
    let allowed = post_generate(&app, &json!({"prompt": "Hi", "model": "heuristic"})).await?;
    assert_eq!(allowed.status(), 200);
    Ok(())
}

#[tokio::test]
async fn a_generation_can_be_followed_live_and_read_back() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let id = Uuid::new_v4();
    // Subscribe first: the stream waits for the generation to start.
    let events_url = app.url(&format!("/api/generations/{id}/events"));
    let subscriber = {
        let client = app.client.clone();
        tokio::spawn(async move {
            let response = client.get(events_url).bearer_auth(API_TOKEN).send().await?;
            anyhow::ensure!(
                header(&response, "content-type") == Some("text/event-stream"),
                "not an event stream"
            );
            Ok::<String, anyhow::Error>(response.text().await?)
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let generated: Value = post_generate(
        &app,
        &json!({"prompt": "Show the numbers", "data": {"orders": 3, "refunds": 1}, "id": id}),
    )
    .await?
    .json()
    .await?;
    assert_eq!(generated["generation"]["id"], json!(id));
    let stream = tokio::time::timeout(Duration::from_secs(20), subscriber).await???;
    let started = stream.find("event: started");
    let placed = stream.find("event: tool_call");
    let finished = stream.find("event: finished");
    assert!(
        started < placed && placed < finished && started.is_some(),
        "{stream}"
    );
    assert!(stream.contains("\"component\":\"Heading\""), "{stream}");
    // Replaying a finished generation ends on its own; Last-Event-ID resumes after an event.
    let replay = app
        .client
        .get(app.url(&format!("/api/generations/{id}/events")))
        .bearer_auth(API_TOKEN)
        .header("Last-Event-ID", "2")
        .send()
        .await?
        .text()
        .await?;
    assert!(!replay.contains("event: started"), "{replay}");
    assert!(replay.contains("event: finished"), "{replay}");
    // Resuming after the last event of a finished generation ends at once, with nothing.
    let resumed = tokio::time::timeout(
        Duration::from_secs(5),
        app.client
            .get(app.url(&format!("/api/generations/{id}/events")))
            .bearer_auth(API_TOKEN)
            .header("Last-Event-ID", "1000")
            .send(),
    )
    .await??
    .text()
    .await?;
    assert!(!resumed.contains("event:"), "{resumed}");
    let record: Value = app
        .api_get(&format!("/api/generations/{id}"))
        .await?
        .json()
        .await?;
    assert_eq!(record, generated["generation"]);
    // An id already used collides with what is stored: 409, as the API's document says.
    let reused = post_generate(&app, &json!({"prompt": "Again", "id": id})).await?;
    assert_eq!(reused.status(), 409);
    let unknown = app.api_get("/api/generations/not-a-uuid").await?;
    assert_eq!(unknown.status(), 404);
    Ok(())
}
