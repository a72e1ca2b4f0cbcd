//! The whole page in one constrained answer: the request a model gets, the one repair turn, the
//! fallbacks (the tool loop when a provider refuses the schema, the heuristic when the answer
//! stays wrong), on a real SQLite store.

use serde_json::{json, Value};
use tessera::{
    agent::{generate_page, generation::GenerationOutcome, CachePolicy, GenerationInput},
    forms::{FieldKind, FormField, FormSchema},
    llm::{ModelError, PageMode, ScriptedModel, ScriptedTurn, ToolCall},
};

use crate::helpers::TestDb;

fn input() -> GenerationInput {
    let schema = FormSchema::new(vec![
        FormField::new("note", FieldKind::string()),
        FormField::new("priority", FieldKind::enumeration(["low", "high"])),
    ]);
    GenerationInput::new("Triage the ticket. Say how urgent it is.")
        .with_schema(schema)
        .with_data(json!({"ticket": {"id": "T-1", "title": "Printer on fire"}}))
        .with_cache(CachePolicy::Bypass)
        .with_mode(PageMode::Auto)
}

fn node(id: &str, component: &str, parent: Option<&str>, props: Value) -> Value {
    let mut node = json!({"id": id, "component": component, "parent": parent});
    node["props"] = props;
    node
}

/// A complete, valid answer, written as a strict model writes it (every optional prop null).
fn good_answer() -> Value {
    json!({
        "title": "Triage the ticket",
        "nodes": [
            node("title", "Heading", None, json!({"text": "Triage {{/ticket/title}}", "level": null})),
            node("form", "Form", None, json!({"title": null, "description": null})),
            node("save", "Button", Some("form"), json!({"label": "Save", "variant": null, "kind": "submit"})),
        ],
        "fields": {
            "note": {"component": "TextArea", "parent": null,
                     "props": {"label": "Note", "rows": null}},
            "priority": {"component": "RadioGroup", "parent": "form",
                         "props": {"label": "Priority", "options": ["low", "high"]}},
        },
    })
}

/// The outline of the page a model answering `answer_text` once gets, which must be valid
/// without a repair turn or a fallback.
async fn valid_outline(answer_text: &Value, database: &TestDb) -> anyhow::Result<String> {
    let model = ScriptedModel::new(vec![answer(answer_text)]);
    let generated = generate_page(input(), &model, &database.store, None).await?;
    anyhow::ensure!(
        generated.record.outcome == GenerationOutcome::Ok && generated.record.turns == 1,
        "{:#}",
        generated.record.transcript
    );
    Ok(generated.tree.outline())
}

fn answer(answer: &Value) -> ScriptedTurn {
    ScriptedTurn::text(answer.to_string())
}

#[tokio::test]
async fn a_constrained_answer_builds_the_page_in_one_turn() -> anyhow::Result<()> {
    let database = TestDb::sqlite().await?;
    let model = ScriptedModel::new(vec![answer(&good_answer())]);
    let generated = generate_page(input(), &model, &database.store, None).await?;
    let record = &generated.record;
    assert_eq!(record.outcome, GenerationOutcome::Ok);
    assert_eq!(record.turns, 1);
    assert_eq!(record.transcript["attempts"][0]["mode"], "whole");
    let outline = generated.tree.outline();
    assert!(
        outline.contains("RadioGroup") && outline.contains("TextArea"),
        "{outline}"
    );
    // The request: no tools, the page schema by name, strict-shaped, naming only this form's
    // fields; the system prompt says what to place for each field.
    let request = &model.requests()[0];
    assert!(request.tools.is_empty());
    let format = request
        .response_format
        .as_ref()
        .ok_or_else(|| anyhow::anyhow!("no schema"))?;
    assert_eq!(format.name, "tessera_page");
    assert_eq!(format.schema["additionalProperties"], json!(false));
    let text = serde_json::to_string(&format.schema)?;
    assert!(text.contains("\"priority\"") && !text.contains("\"Marquee\""));
    let system = serde_json::to_string(&request.messages[0])?;
    assert!(
        system.contains("priority, required: RadioGroup with options \\\"low\\\", \\\"high\\\""),
        "{system}"
    );
    database.cleanup().await
}

#[tokio::test]
async fn an_answer_with_problems_gets_one_repair_turn_naming_each_node() -> anyhow::Result<()> {
    let database = TestDb::sqlite().await?;
    let mut broken = good_answer();
    // No submit button, and a choice that does not offer every value of the field.
    broken["nodes"].as_array_mut().map(Vec::pop);
    broken["fields"]["priority"]["props"]["options"] = json!(["low"]);
    let model = ScriptedModel::new(vec![answer(&broken), answer(&good_answer())]);
    let generated = generate_page(input(), &model, &database.store, None).await?;
    assert_eq!(generated.record.outcome, GenerationOutcome::Ok);
    assert_eq!(generated.record.turns, 2);
    let requests = model.requests();
    let repair = serde_json::to_string(
        requests[1]
            .messages
            .last()
            .ok_or_else(|| anyhow::anyhow!("none"))?,
    )?;
    assert!(repair.contains("node `form` (Form)"), "{repair}");
    assert!(repair.contains("field `priority`"), "{repair}");
    assert!(
        repair.contains("\\n- ["),
        "each problem on its own line: {repair}"
    );
    assert!(repair.contains("whole corrected page"), "{repair}");
    // The model's first answer is replayed before the repair.
    assert_eq!(requests[1].messages.len(), 4);
    let problems = &generated.record.transcript["attempts"][0]["transcript"][0]["problems"];
    assert!(problems
        .as_array()
        .is_some_and(|problems| !problems.is_empty()));
    database.cleanup().await
}

#[tokio::test]
async fn an_answer_still_wrong_after_the_repair_falls_back_to_the_heuristic() -> anyhow::Result<()>
{
    let database = TestDb::sqlite().await?;
    let model = ScriptedModel::new(vec![
        ScriptedTurn::text("<tools><function>Form</function></tools>"),
        answer(&json!({
            "nodes": [node("x", "Heading", None, json!({"text": "Hi", "level": null}))],
            "fields": {"note": null, "priority": null},
        })),
    ]);
    let generated = generate_page(input(), &model, &database.store, None).await?;
    let record = &generated.record;
    assert_eq!(record.outcome, GenerationOutcome::FellBack);
    assert!(generated.report.ok);
    let attempts = &record.transcript["attempts"];
    assert_eq!(attempts[0]["mode"], "whole");
    assert_eq!(
        attempts[0]["transcript"][0]["problems"][0]["rule"],
        "not_json"
    );
    assert_eq!(attempts[1]["model"], "heuristic:heuristic");
    assert_eq!(model.remaining_turns(), 0, "no third turn");
    database.cleanup().await
}

#[tokio::test]
async fn a_provider_refusing_the_schema_builds_the_page_by_tool_calls() -> anyhow::Result<()> {
    let database = TestDb::sqlite().await?;
    let place =
        |id: &str, component: &str, arguments: Value| ToolCall::new(id, component, arguments);
    let model = ScriptedModel::new(vec![
        ScriptedTurn::error(ModelError::Rejected {
            status: 400,
            body_excerpt: "response_format json_schema is not supported".into(),
        }),
        ScriptedTurn::tool_calls(vec![
            place(
                "form",
                "Form",
                json!({"children": [
                    {"component": "TextArea", "name": "note", "label": "Note"},
                    {"component": "RadioGroup", "name": "priority", "label": "Priority", "options": ["low", "high"]},
                    {"component": "Button", "label": "Save", "kind": "submit"}
                ]}),
            ),
            place("done", "Finish", json!({})),
        ]),
    ]);
    let generated = generate_page(input(), &model, &database.store, None).await?;
    let record = &generated.record;
    assert_eq!(
        record.outcome,
        GenerationOutcome::Ok,
        "{:#}",
        record.transcript
    );
    let attempts = &record.transcript["attempts"];
    assert_eq!(
        (attempts[0]["mode"].as_str(), attempts[0]["end"].as_str()),
        (Some("whole"), Some("model_error"))
    );
    assert_eq!(attempts[1]["mode"], "tools");
    assert!(!model.requests()[1].tools.is_empty());
    assert!(model.requests()[1].response_format.is_none());

    // Forced to whole pages, a refusal goes straight to the heuristic.
    let model = ScriptedModel::new(vec![ScriptedTurn::error(ModelError::Rejected {
        status: 400,
        body_excerpt: "no".into(),
    })]);
    let generated = generate_page(
        input().with_mode(PageMode::Whole),
        &model,
        &database.store,
        None,
    )
    .await?;
    assert_eq!(generated.record.outcome, GenerationOutcome::FellBack);
    assert_eq!(
        generated.record.transcript["attempts"][1]["model"],
        "heuristic:heuristic"
    );
    database.cleanup().await
}

#[tokio::test]
async fn a_node_named_like_a_field_and_a_parent_that_holds_nothing_are_settled_by_code(
) -> anyhow::Result<()> {
    let database = TestDb::sqlite().await?;
    // As a 1.5B model answered: a text node called like the field, the field's parent that text,
    // and no Form at all.
    let answer_text = json!({
        "title": "Triage",
        "nodes": [
            node("priority", "Text", None, json!({"text": "How urgent is it?", "muted": true})),
            node("save", "Button", None, json!({"label": "Save", "variant": null, "kind": "submit"})),
        ],
        "fields": {
            "note": {"component": "Input", "parent": "nowhere", "props": {"label": "Note", "type": null}},
            "priority": {"component": "Select", "parent": "priority",
                         "props": {"label": "Priority", "options": ["low", "high"],
                                   "multiple": null, "placeholder": null}},
        },
    });
    let outline = valid_outline(&answer_text, &database).await?;
    let lines: Vec<&str> = outline.lines().collect();
    assert!(
        lines[0].contains("Heading") && lines[0].contains("Triage"),
        "{outline}"
    );
    assert!(lines[1].contains("Text"), "{outline}");
    // Code made the Form; the fields and then the button went into it.
    assert!(lines[2].contains("Form"), "{outline}");
    assert!(
        lines[3].contains("Input") && lines[4].contains("Select"),
        "{outline}"
    );
    assert!(
        lines[5].contains("Button") && lines[5].starts_with("  "),
        "{outline}"
    );
    database.cleanup().await
}

#[tokio::test]
async fn a_form_per_section_becomes_sections_of_one_form() -> anyhow::Result<()> {
    let database = TestDb::sqlite().await?;
    // As a 1.5B model answered a bug report: each field in a Form of its own, nested.
    let answer_text = json!({
        "title": "Triage",
        "nodes": [
            node("note", "Form", None, json!({"title": "Note", "description": null})),
            node("priority", "Form", Some("note"), json!({"title": "Priority", "description": null})),
            node("save", "Button", Some("priority"), json!({"label": "Save", "variant": null, "kind": "submit"})),
        ],
        "fields": {
            "note": {"component": "TextArea", "parent": "note", "props": {"label": "Note", "rows": 1}},
            "priority": {"component": "RadioGroup", "parent": "priority",
                         "props": {"label": "Priority", "options": ["low", "high"]}},
        },
    });
    let outline = valid_outline(&answer_text, &database).await?;
    assert_eq!(outline.matches(" Form").count(), 1, "{outline}");
    assert!(
        outline.contains("Card {\"title\":\"Priority\"}"),
        "{outline}"
    );
    // One row is fewer than a TextArea has: code gives it the fewest allowed.
    assert!(outline.contains("\"rows\":2"), "{outline}");
    database.cleanup().await
}

#[tokio::test]
async fn a_text_repeating_a_field_label_is_left_out_and_its_field_still_placed(
) -> anyhow::Result<()> {
    let database = TestDb::sqlite().await?;
    // As a 1.5B model answered a registration form and a rating: a Text per field saying its
    // label or showing it through a made-up pointer, in a section, each field's parent that Text.
    let answer_text = json!({
        "title": "Triage",
        "nodes": [
            node("form", "Form", None, json!({"title": null, "description": null})),
            node("details", "Card", Some("form"), json!({"title": "Details", "description": null})),
            node("note_label", "Text", Some("details"), json!({"text": "Note:", "muted": false})),
            node("priority", "Text", Some("details"), json!({"text": "priority", "muted": false})),
            node("hint", "Text", Some("details"), json!({"text": "Printers first.", "muted": true})),
            node("note_value", "Text", Some("details"), json!({"text": "{{/ticket/note}}", "muted": true})),
            node("title", "Text", Some("details"), json!({"text": "{{/ticket/title}}", "muted": true})),
            node("save", "Button", Some("form"), json!({"label": "Save", "variant": "danger", "kind": "submit"})),
        ],
        "fields": {
            "note": {"component": "Input", "parent": "note_label", "props": {"label": "Note", "type": null}},
            "priority": {"component": "Select", "parent": "priority",
                         "props": {"label": "How urgent", "options": ["low", "high"],
                                   "multiple": null, "placeholder": null}},
        },
    });
    let outline = valid_outline(&answer_text, &database).await?;
    // Left out: the labels, and the field's answer-to-be shown through a pointer to nothing;
    // kept: the hint and the data's own title.
    assert_eq!(outline.matches(" Text ").count(), 2, "{outline}");
    assert!(outline.contains("Printers first."), "{outline}");
    assert!(outline.contains("{{/ticket/title}}"), "{outline}");
    // Saving destroys nothing: not styled as danger.
    assert!(
        outline.contains(r#""label":"Save","variant":"primary""#),
        "{outline}"
    );
    // The fields sit where their labels were: in the section.
    let lines: Vec<&str> = outline.lines().collect();
    let card = lines
        .iter()
        .position(|line| line.contains("Card"))
        .unwrap_or(usize::MAX);
    for field in ["Input", "Select"] {
        let line = lines
            .iter()
            .position(|line| line.contains(field))
            .unwrap_or(0);
        assert!(line > card && lines[line].starts_with("    "), "{outline}");
    }
    database.cleanup().await
}

#[tokio::test]
async fn a_table_showing_the_rows_a_selection_shows_is_left_out() -> anyhow::Result<()> {
    let database = TestDb::sqlite().await?;
    let schema = FormSchema::new(vec![FormField::new(
        "branch_ids",
        FieldKind::string_array(),
    )]);
    let input = GenerationInput::new("Pick the stale branches to delete.")
        .with_schema(schema)
        .with_data(json!({"branches": [{"id": "old-ui", "author": "Ada"},
                                       {"id": "spike", "author": "Lin"}]}))
        .with_cache(CachePolicy::Bypass)
        .with_mode(PageMode::Auto);
    let columns = json!([{"key": "id", "label": "Branch"}, {"key": "author", "label": "Author"}]);
    // As a 1.5B model answered: the rows once to show them, once to select them.
    let answer_text = json!({
        "title": "Stale branches",
        "nodes": [
            node("form", "Form", None, json!({"title": null, "description": null})),
            node("shown", "Table", Some("form"), json!({"columns": columns,
                "rows": {"$data": "/branches"}, "caption": "Branches"})),
            node("go", "Button", Some("form"), json!({"label": "Delete", "variant": "primary", "kind": "submit"})),
        ],
        "fields": {
            "branch_ids": {"component": "Table", "parent": null,
                "props": {"columns": columns, "rows": {"$data": "/branches"}, "caption": "Delete",
                          "selectable": {"idKey": "id", "label": "Delete", "required": null, "maxItems": null}}},
        },
    });
    let model = ScriptedModel::new(vec![answer(&answer_text)]);
    let generated = generate_page(input, &model, &database.store, None).await?;
    assert_eq!(generated.record.outcome, GenerationOutcome::Ok);
    let outline = generated.tree.outline();
    assert_eq!(outline.matches(" Table ").count(), 1, "{outline}");
    assert!(outline.contains("selectable"), "{outline}");
    // Deleting is dangerous whatever the model styled it.
    assert!(
        outline.contains(r#"{"label":"Delete","variant":"danger","kind":"submit"}"#),
        "{outline}"
    );
    database.cleanup().await
}
