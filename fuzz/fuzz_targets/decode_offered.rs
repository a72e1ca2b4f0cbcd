//! The page submission decoder with a page's offered sets: arbitrary `x-www-form-urlencoded` bodies
//! against one fixed schema and page (a `requireAll` decision table, a selectable table with more
//! rows than a page, a Select with bound options, a RadioGroup, free text and a number).
//!
//! It must never panic, and every answer it accepts must validate against the schema and name only
//! what the page offers: no id or choice outside the rows and options, no row under both decision
//! arrays, no undecided row. The oracle below is written from the data, not from `Offered`.

#![no_main]

use std::{collections::HashSet, sync::LazyLock};

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use tessera::{
    forms::{validate, FormSchema, Offered},
    pages::submission::{read_fields, Submission},
};
use tessera_app::{catalog::Catalog, tree::PageTree};

const CLAIMS: usize = 5;
/// More than a table page (50), so some offered rows are never shown at first.
const EMAILS: usize = 60;
const TEAMS: [&str; 3] = ["Ops", "Sales", "R&D"];

struct Page {
    schema: FormSchema,
    offered: Offered,
}

static PAGE: LazyLock<Page> = LazyLock::new(|| {
    let schema = FormSchema::from_json_schema(&json!({"type": "object", "properties": {
        "approved_ids": {"type": "array", "items": {"type": "string"}},
        "rejected_ids": {"type": "array", "items": {"type": "string"}},
        "archive": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
        "team": {"type": "string"},
        "priority": {"type": "string", "enum": ["low", "high"]},
        "note": {"type": "string", "maxLength": 40},
        "count": {"type": "integer", "minimum": 0}
    }, "required": ["priority"]}))
    .expect("the fixed schema loads");
    let tree: PageTree = serde_json::from_value(json!({"nodes": {
        "f": {"component": "Form", "props": {}, "children": ["d", "t", "s", "r", "n", "c", "go"]},
        "d": {"component": "DecisionTable", "props": {
            "label": "Claims", "rows": {"$data": "/claims"}, "idKey": "id", "requireAll": true,
            "choices": [{"name": "approved_ids", "label": "Approve"}, {"name": "rejected_ids", "label": "Reject"}]}},
        "t": {"component": "Table", "props": {"rows": {"$data": "/emails"},
            "selectable": {"name": "archive", "idKey": "id", "label": "Emails to archive", "maxItems": 10}}},
        "s": {"component": "Select", "props": {"name": "team", "label": "Team", "options": {"$data": "/teams"}}},
        "r": {"component": "RadioGroup", "props": {"name": "priority", "label": "Priority", "required": true,
            "options": [{"value": "low", "label": "Low"}, {"value": "high", "label": "High"}]}},
        "n": {"component": "TextArea", "props": {"name": "note", "label": "Note"}},
        "c": {"component": "Input", "props": {"name": "count", "label": "Count", "type": "number"}},
        "go": {"component": "Button", "props": {"label": "Send", "kind": "submit"}}
    }}))
    .expect("the fixed tree reads");
    let offered = Offered::of_page(&tree, &Catalog::defaults(), &data());
    Page { schema, offered }
});

fn claim(n: usize) -> String {
    format!("C{n}")
}

fn email(n: usize) -> String {
    format!("m{n}")
}

fn data() -> Value {
    json!({
        "claims": (1..=CLAIMS).map(|n| json!({"id": claim(n), "amount": n})).collect::<Vec<_>>(),
        "emails": (1..=EMAILS).map(|n| json!({"id": email(n), "subject": format!("Mail {n}")})).collect::<Vec<_>>(),
        "teams": TEAMS,
    })
}

fn strings<'a>(answer: &'a serde_json::Map<String, Value>, field: &str) -> Vec<&'a str> {
    match answer.get(field) {
        Some(Value::String(text)) => vec![text.as_str()],
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        Some(other) => panic!("{field} decoded to {other}"),
        None => Vec::new(),
    }
}

fuzz_target!(|body: &[u8]| {
    let page = &*PAGE;
    let Submission::Valid(answer) = read_fields(&page.schema, &page.offered, body) else {
        return;
    };
    let Value::Object(answer) = &answer else {
        panic!("an accepted answer is an object: {answer}");
    };
    assert!(
        validate(&page.schema, answer).is_ok(),
        "accepted but invalid: {answer:?}"
    );
    let claims: HashSet<String> = (1..=CLAIMS).map(claim).collect();
    let emails: HashSet<String> = (1..=EMAILS).map(email).collect();
    let approved = strings(answer, "approved_ids");
    let rejected = strings(answer, "rejected_ids");
    for id in approved.iter().chain(&rejected) {
        assert!(claims.contains(*id), "a claim never offered: {id:?}");
    }
    for id in &approved {
        assert!(!rejected.contains(id), "{id:?} is approved and rejected");
    }
    for id in &claims {
        assert!(
            approved.contains(&id.as_str()) || rejected.contains(&id.as_str()),
            "{id} undecided under requireAll"
        );
    }
    for id in strings(answer, "archive") {
        assert!(emails.contains(id), "an email never offered: {id:?}");
    }
    for team in strings(answer, "team") {
        assert!(TEAMS.contains(&team), "a team never offered: {team:?}");
    }
    for priority in strings(answer, "priority") {
        assert!(
            ["low", "high"].contains(&priority),
            "a priority never offered: {priority:?}"
        );
    }
});
