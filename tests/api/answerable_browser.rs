//! The two-way answerability proof as a property: for random schemas in the subset and random
//! valid answers, the page the heuristic builds, and pages built by random tool sequences that
//! pass `ValidateForm`, accept the answer the way a browser sends it. The page is rendered to
//! HTML, its controls are read back with an HTML parser, filled as a person would, checked with a
//! browser's own constraint validation (`required`, `type`, `step`, `min`/`max`, `minlength`/
//! `maxlength` in UTF-16 units, `pattern`, the options offered), url-encoded in tree order and
//! decoded by the real decoder, which must give back exactly the answer.

use leptos::prelude::*;
use proptest::{collection::vec, prelude::*, sample::subsequence};
use regex::Regex;
use scraper::{ElementRef, Html, Selector};
use serde_json::{json, Map, Value};
use tessera_app::{
    catalog::Catalog,
    render::{render_tree, RenderCtx},
    tree::PageTree,
};

use tessera::{
    agent::tools::Workspace,
    forms::{
        decode_and_validate, validate::is_multiple_of, FieldKind, FormField, FormSchema,
        StringFormat,
    },
    llm::ToolCall,
};

/// A field, the answer for it (`None`: left empty), and how a random "model" places it.
#[derive(Clone, Debug)]
struct Case {
    field: FormField,
    answer: Option<Value>,
}

fn text() -> impl Strategy<Value = String> {
    "[a-zA-Zé😀][a-zA-Z0-9 éü😀]{0,10}"
}

fn string_case() -> BoxedStrategy<(FieldKind, Value)> {
    prop_oneof![
        (text(), any::<bool>()).prop_map(|(text, limited)| {
            let length = text.chars().count() as u64;
            let kind = FieldKind::String {
                format: None,
                min_length: limited.then_some(1),
                max_length: limited.then_some(length + 2),
                pattern: None,
            };
            (kind, Value::String(text))
        }),
        "[a-z0-9.+_-]{1,8}@[a-z0-9]{1,8}(\\.[a-z]{2,4}){1,2}"
            .prop_map(|email| (format_kind(StringFormat::Email), Value::String(email))),
        "(19[0-9]{2}|20[0-9]{2})-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])"
            .prop_map(|date| (format_kind(StringFormat::Date), Value::String(date))),
        "https://[a-z]{1,10}\\.(com|org)(/[a-z0-9]{1,6}){0,2}"
            .prop_map(|url| (format_kind(StringFormat::Url), Value::String(url))),
    ]
    .boxed()
}

fn format_kind(format: StringFormat) -> FieldKind {
    FieldKind::String {
        format: Some(format),
        min_length: None,
        max_length: None,
        pattern: None,
    }
}

fn number_case() -> BoxedStrategy<(FieldKind, Value)> {
    (
        prop_oneof![
            Just(None),
            Just(Some(0.5)),
            Just(Some(0.25)),
            Just(Some(0.1))
        ],
        -2000_i64..2000,
        any::<bool>(),
        any::<bool>(),
        0_u32..4,
    )
        .prop_map(|(step, units, bounded, exclusive, decimals)| {
            let value = match step {
                Some(step) => (units as f64 * step * 1e6).round() / 1e6,
                None => units as f64 / 10_f64.powi(decimals as i32),
            };
            let (minimum, maximum) = if bounded {
                (Some(value - 3.3), Some(value + 7.1))
            } else {
                (None, None)
            };
            let kind = FieldKind::Number {
                minimum: if exclusive { None } else { minimum },
                maximum,
                exclusive_minimum: if exclusive { minimum } else { None },
                exclusive_maximum: None,
                multiple_of: step,
            };
            (kind, json!(value))
        })
        .boxed()
}

fn integer_case() -> BoxedStrategy<(FieldKind, Value)> {
    (
        prop_oneof![Just(None), Just(Some(2_u64)), Just(Some(5))],
        -500_i64..500,
        any::<bool>(),
    )
        .prop_map(|(step, units, bounded)| {
            let value = units * step.map_or(1, |step| step as i64);
            let kind = FieldKind::Integer {
                minimum: bounded.then_some(value - 7),
                maximum: bounded.then_some(value + 3),
                multiple_of: step,
            };
            (kind, json!(value))
        })
        .boxed()
}

fn options() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::btree_set("[a-z][a-z_ ]{0,6}", 1..6)
        .prop_map(|options| options.into_iter().collect())
}

fn choice_case() -> BoxedStrategy<(FieldKind, Value)> {
    prop_oneof![
        options()
            .prop_flat_map(|options| {
                let count = options.len();
                (Just(options), 0..count)
            })
            .prop_map(|(options, index)| {
                let chosen = json!(options[index]);
                (FieldKind::Enum { options }, chosen)
            }),
        options()
            .prop_flat_map(|options| {
                let count = options.len();
                (Just(options.clone()), subsequence(options, 0..=count))
            })
            .prop_flat_map(|(options, chosen)| {
                let most = chosen.len() as u64;
                (Just(options), Just(chosen), 0..=most)
            })
            .prop_map(|(options, chosen, fewest)| {
                let kind = FieldKind::EnumArray {
                    options,
                    min_items: Some(fewest),
                    max_items: None,
                    unique_items: true,
                };
                (kind, json!(chosen))
            }),
        (vec("[a-zA-Z0-9][a-zA-Z0-9 ]{0,8}", 0..=3), 0_u64..=3).prop_map(|(items, fewest)| {
            let kind = FieldKind::StringArray {
                min_items: Some(fewest.min(items.len() as u64)),
                max_items: Some(5),
                unique_items: false,
                item_min_length: None,
                item_max_length: Some(12),
                item_pattern: None,
                item_format: None,
            };
            (kind, json!(items))
        }),
        any::<bool>().prop_map(|checked| (FieldKind::Boolean, json!(checked))),
    ]
    .boxed()
}

fn cases() -> impl Strategy<Value = Vec<Case>> {
    let entry = (
        prop_oneof![string_case(), number_case(), integer_case(), choice_case()],
        any::<bool>(),
        any::<bool>(),
        proptest::option::of("[A-Z][a-z ]{2,12}"),
        any::<bool>(),
    );
    vec(entry, 1..5).prop_map(|entries| {
        entries
            .into_iter()
            .enumerate()
            .map(
                |(index, ((kind, value), required, filled, title, with_default))| {
                    let required =
                        required || kind.is_array() || matches!(kind, FieldKind::Boolean);
                    let mut field = FormField::new(format!("f{index}"), kind);
                    field.required = required;
                    field.title = title;
                    if with_default {
                        field.default = Some(value.clone());
                        field.examples = vec![value.clone()];
                    }
                    let answer = (required || filled).then_some(value);
                    Case { field, answer }
                },
            )
            .collect()
    })
}

/// Builds the heuristic's page for `schema`.
fn heuristic_page(schema: &FormSchema, data: &Value) -> Result<PageTree, String> {
    tessera::agent::heuristic::page_for("Answer these questions.", Some(schema), data)
}

/// How a random "model" writes a field's component: which component and which props it sets
/// itself (the rest is completed from the schema).
#[derive(Clone, Debug)]
struct Placement {
    pick: usize,
    set_required: Option<bool>,
    step: Option<Value>,
    bounds: Option<(f64, f64)>,
    max_length: Option<u32>,
    pattern: bool,
    plain_type: bool,
}

fn placement() -> impl Strategy<Value = Placement> {
    (
        0_usize..4,
        proptest::option::weighted(0.2, any::<bool>()),
        proptest::option::weighted(
            0.3,
            prop_oneof![
                Just(json!(1)),
                Just(json!(0.01)),
                Just(json!("any")),
                Just(json!(0.05))
            ],
        ),
        proptest::option::weighted(0.15, (-10.0_f64..10.0, 0.0_f64..20.0)),
        proptest::option::weighted(0.2, 1_u32..40),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(pick, set_required, step, bounds, max_length, pattern, plain_type)| Placement {
                pick,
                set_required,
                step,
                bounds: bounds.map(|(low, width)| (low, low + width)),
                max_length,
                pattern: pattern && max_length.is_some_and(|length| length % 3 == 0),
                plain_type,
            },
        )
}

fn component_call(field: &FormField, place: &Placement, form: &str, index: usize) -> ToolCall {
    let mut props = Map::new();
    props.insert("name".into(), json!(field.name));
    props.insert("label".into(), json!(format!("Question {index}")));
    if let Some(required) = place.set_required {
        props.insert("required".into(), json!(required));
    }
    let component = match &field.kind {
        FieldKind::Boolean => "Checkbox",
        FieldKind::Enum { options } | FieldKind::EnumArray { options, .. } => {
            props.insert("options".into(), json!(options));
            match (field.kind.is_array(), place.pick % 2) {
                (false, 0) => "RadioGroup",
                (false, _) => "Select",
                (true, 0) => "CheckboxGroup",
                (true, _) => {
                    props.insert("multiple".into(), json!(true));
                    "Select"
                }
            }
        }
        FieldKind::StringArray { .. } => "MultiTextInput",
        // The flat generator never makes structure; nested schemas have their own placements.
        FieldKind::Object { .. } => "Fieldset",
        FieldKind::RecordList { .. } => "RecordList",
        FieldKind::Number { .. } | FieldKind::Integer { .. } => {
            props.insert("type".into(), json!("number"));
            if let Some(step) = &place.step {
                props.insert("step".into(), step.clone());
            }
            if let Some((low, high)) = place.bounds {
                props.insert("min".into(), json!(low));
                props.insert("max".into(), json!(high));
            }
            "Input"
        }
        FieldKind::String { .. } => {
            if place.plain_type {
                props.insert("type".into(), json!("text"));
            }
            if let Some(length) = place.max_length {
                props.insert("maxLength".into(), json!(length));
            }
            if place.pattern {
                props.insert("pattern".into(), json!("[a-z].*"));
            }
            if place.pick == 3 && !place.plain_type {
                "TextArea"
            } else {
                "Input"
            }
        }
    };
    ToolCall::new(
        format!("call{index}"),
        component,
        json!({"props": Value::Object(props), "parent": form}),
    )
}

/// A page from random tool calls, if it passes `ValidateForm`.
fn random_page(schema: &FormSchema, places: &[Placement]) -> Option<PageTree> {
    let catalog = Catalog::defaults();
    let data = json!({});
    let mut workspace = Workspace::new(&catalog, Some(schema), &data);
    workspace.execute(&ToolCall::new(
        "h",
        "Heading",
        json!({"props": {"text": "Questions", "level": 1}}),
    ));
    workspace.execute(&ToolCall::new("f", "Form", json!({"props": {}})));
    let form = workspace.tree.top_level().last()?.to_string();
    for (index, field) in schema.fields.iter().enumerate() {
        let place = places.get(index)?;
        workspace.execute(&component_call(field, place, &form, index));
    }
    workspace.execute(&ToolCall::new(
        "b",
        "Button",
        json!({"props": {"label": "Send", "kind": "submit"}, "parent": form}),
    ));
    workspace.check().ok.then_some(workspace.tree)
}

fn render(tree: &PageTree, data: &Value) -> String {
    render_with_records(tree, data, &[])
}

/// Renders the page as it shows after the person added records until each list in `counts` has
/// its count: adding is navigation, which renders the page again with `_count.<list>` raised.
fn render_with_records(tree: &PageTree, data: &Value, counts: &[(String, usize)]) -> String {
    let mut ctx = RenderCtx::new(data.clone());
    ctx.csrf_token = Some("token".into());
    for (list, count) in counts {
        ctx.form
            .values
            .insert(format!("_count.{list}"), vec![count.to_string()]);
    }
    Owner::new().with(|| render_tree(tree, &ctx).to_html())
}

fn selector(css: &str) -> Result<Selector, String> {
    Selector::parse(css).map_err(|error| format!("{css}: {error}"))
}

/// One successful control's state after the person filled the form.
struct Filled<'a> {
    element: ElementRef<'a>,
    /// The values it sends (several for a multiple select), none when unchecked.
    sends: Vec<String>,
}

fn attr<'a>(element: &ElementRef<'a>, name: &str) -> Option<&'a str> {
    element.value().attr(name)
}

fn utf16_len(text: &str) -> usize {
    text.encode_utf16().count()
}

fn email_ok(text: &str) -> bool {
    // The HTML standard's "valid email address".
    Regex::new(r"^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$")
        .is_ok_and(|pattern| pattern.is_match(text))
}

/// A valid date string (what a date picker produces): `YYYY-MM-DD`, a real day.
fn date_ok(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    let [year, month, day] = parts.as_slice() else {
        return false;
    };
    let (Ok(year), Ok(month), Ok(day)) = (
        year.parse::<u32>(),
        month.parse::<u32>(),
        day.parse::<u32>(),
    ) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    year >= 1 && (1..=days).contains(&day)
}

/// What a browser's constraint validation says about a text-like input with `value`.
fn input_problem(element: &ElementRef<'_>, value: &str) -> Option<String> {
    let kind = attr(element, "type").unwrap_or("text");
    let name = attr(element, "name").unwrap_or_default();
    if value.is_empty() {
        return attr(element, "required").map(|_| format!("{name}: required but empty"));
    }
    if let Some(longest) = attr(element, "maxlength").and_then(|text| text.parse::<usize>().ok()) {
        if utf16_len(value) > longest {
            return Some(format!(
                "{name}: {value:?} is longer than maxlength {longest}"
            ));
        }
    }
    if let Some(shortest) = attr(element, "minlength").and_then(|text| text.parse::<usize>().ok()) {
        if utf16_len(value) < shortest {
            return Some(format!(
                "{name}: {value:?} is shorter than minlength {shortest}"
            ));
        }
    }
    if let Some(pattern) = attr(element, "pattern") {
        let whole = Regex::new(&format!("^(?:{pattern})$")).ok()?;
        if !whole.is_match(value) {
            return Some(format!(
                "{name}: {value:?} does not match pattern {pattern}"
            ));
        }
    }
    match kind {
        "email" if !email_ok(value) => Some(format!("{name}: {value:?} is not an email")),
        "url" if url::Url::parse(value).is_err() => Some(format!("{name}: {value:?} is not a URL")),
        "date" if !date_ok(value) => Some(format!("{name}: {value:?} is not a date")),
        "number" => {
            let number: f64 = value.parse().ok()?;
            let bound = |key: &str| attr(element, key).and_then(|text| text.parse::<f64>().ok());
            if bound("min").is_some_and(|low| number < low) {
                return Some(format!("{name}: {value} is below min"));
            }
            if bound("max").is_some_and(|high| number > high) {
                return Some(format!("{name}: {value} is above max"));
            }
            let step = match attr(element, "step") {
                Some("any") => return None,
                Some(text) => text
                    .parse::<f64>()
                    .ok()
                    .filter(|step| *step > 0.0)
                    .unwrap_or(1.0),
                None => 1.0,
            };
            let base = bound("min").or_else(|| bound("value")).unwrap_or(0.0);
            (!is_multiple_of(number - base, step))
                .then(|| format!("{name}: {value} is off the step {step} from {base}"))
        }
        _ => None,
    }
}

/// The text a person types for `value`.
fn typed(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Fills the form in `html` with `answers` and returns the body a browser would send, or the
/// reason the browser refuses to submit.
fn fill_and_submit(html: &str, answers: &Map<String, Value>) -> Result<String, String> {
    let document = Html::parse_document(html);
    let form = document
        .select(&selector("form")?)
        .next()
        .ok_or("the page has no form")?;
    let mut filled: Vec<Filled<'_>> = Vec::new();
    let mut problems = Vec::new();
    let mut used_rows: Map<String, Value> = Map::new();
    for element in form.select(&selector("input, textarea, select")?) {
        // A `<template>`'s content is inert: a browser neither shows nor submits it.
        let in_template = element.ancestors().any(|ancestor| {
            ancestor
                .value()
                .as_element()
                .is_some_and(|parent| parent.name() == "template")
        });
        if in_template {
            continue;
        }
        let name = attr(&element, "name").unwrap_or_default().to_owned();
        let answer = answers.get(&name);
        match element.value().name() {
            "select" => {
                let offered: Vec<String> = element
                    .select(&selector("option")?)
                    .filter_map(|option| attr(&option, "value").map(str::to_owned))
                    .collect();
                let chosen: Vec<String> = match answer {
                    Some(Value::Array(items)) => items.iter().map(typed).collect(),
                    Some(value) => vec![typed(value)],
                    None => Vec::new(),
                };
                if let Some(missing) = chosen.iter().find(|value| !offered.contains(value)) {
                    problems.push(format!("{name}: no option {missing:?}"));
                }
                if chosen.is_empty() && attr(&element, "required").is_some() {
                    problems.push(format!("{name}: required select left empty"));
                }
                let sends = if chosen.is_empty() && attr(&element, "multiple").is_none() {
                    vec![String::new()]
                } else {
                    chosen
                };
                filled.push(Filled { element, sends });
            }
            "textarea" => {
                let value = answer.map(typed).unwrap_or_default();
                if let Some(problem) = input_problem(&element, &value) {
                    problems.push(problem);
                }
                filled.push(Filled {
                    element,
                    sends: vec![value.replace('\n', "\r\n")],
                });
            }
            _ => {
                let kind = attr(&element, "type").unwrap_or("text");
                let own = attr(&element, "value").unwrap_or("on").to_owned();
                match kind {
                    "hidden" => filled.push(Filled {
                        element,
                        sends: vec![own],
                    }),
                    "checkbox" | "radio" => {
                        let ticked = match answer {
                            Some(Value::Bool(checked)) => *checked,
                            Some(Value::Array(items)) => {
                                items.iter().any(|item| typed(item) == own)
                            }
                            Some(value) => typed(value) == own,
                            None => false,
                        };
                        if kind == "checkbox" && attr(&element, "required").is_some() && !ticked {
                            problems.push(format!("{name}: a required box left unticked"));
                        }
                        filled.push(Filled {
                            element,
                            sends: if ticked { vec![own] } else { Vec::new() },
                        });
                    }
                    "submit" | "button" => {}
                    _ => {
                        // Several inputs of one name (MultiTextInput rows) take the items in turn.
                        let value = match answer {
                            Some(Value::Array(items)) => {
                                let used = used_rows.entry(name.clone()).or_insert(json!(0));
                                let index = used.as_u64().unwrap_or(0) as usize;
                                *used = json!(index + 1);
                                items.get(index).map(typed).unwrap_or_default()
                            }
                            Some(value) => typed(value),
                            None => String::new(),
                        };
                        let required_elsewhere = value.is_empty()
                            && matches!(answer, Some(Value::Array(items)) if !items.is_empty());
                        if !required_elsewhere {
                            if let Some(problem) = input_problem(&element, &value) {
                                problems.push(problem);
                            }
                        }
                        filled.push(Filled {
                            element,
                            sends: vec![value],
                        });
                    }
                }
            }
        }
    }
    // A required radio group needs one ticked; every row of a list must have been available.
    for (name, answer) in answers {
        if let Value::Array(items) = answer {
            let rows = used_rows.get(name).and_then(Value::as_u64);
            if let Some(rows) = rows {
                if (rows as usize) < items.len() {
                    problems.push(format!("{name}: {} entries but {rows} rows", items.len()));
                }
            }
        }
    }
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    let mut body = form_urlencoded::Serializer::new(String::new());
    for control in &filled {
        let name = attr(&control.element, "name").unwrap_or_default();
        if name.is_empty() || attr(&control.element, "disabled").is_some() {
            continue;
        }
        for value in &control.sends {
            body.append_pair(name, value);
        }
    }
    Ok(body.finish())
}

/// The object the run must receive for `cases`.
fn expected(cases: &[Case]) -> (FormSchema, Map<String, Value>) {
    let schema = FormSchema::new(cases.iter().map(|case| case.field.clone()).collect());
    let answers = cases
        .iter()
        .filter_map(|case| {
            case.answer
                .clone()
                .map(|answer| (case.field.name.clone(), answer))
        })
        .collect();
    (schema, answers)
}

fn check_page(
    tree: &PageTree,
    schema: &FormSchema,
    answers: &Map<String, Value>,
) -> Result<(), TestCaseError> {
    let html = render(tree, &json!({}));
    let body = fill_and_submit(&html, answers).map_err(|problem| {
        TestCaseError::fail(format!("the browser refuses: {problem}\n{html}"))
    })?;
    let decoded = decode_and_validate(schema, body.as_bytes());
    prop_assert_eq!(
        decoded,
        Ok(Value::Object(answers.clone())),
        "body: {}",
        body
    );
    Ok(())
}

/// A schema with structure and an answer for it: the flat `cases`, a required object `group`
/// whose members are `members`, and a list `items` of `records` records whose fields are
/// `columns` (each record with its own values of the column's kind).
#[derive(Clone, Debug)]
struct NestedCase {
    cases: Vec<Case>,
    members: Vec<Case>,
    columns: Vec<FieldKind>,
    records: Vec<Vec<Value>>,
}

fn nested_cases() -> impl Strategy<Value = NestedCase> {
    let column = prop_oneof![string_case(), number_case(), integer_case(), choice_case()];
    (
        cases(),
        cases(),
        vec(column, 1..4),
        0_usize..4,
        vec(any::<proptest::sample::Index>(), 12),
    )
        .prop_map(|(cases, members, columns, count, picks)| {
            // Every record repeats its column's value but for a text column of its own, so the
            // records differ and their order is checked.
            // A list column in a record shows one box more than its entries, at least two
            // (`RecordList`'s view), so a blank record takes two entries without a round trip.
            let columns: Vec<(FieldKind, Value)> = columns
                .into_iter()
                .map(|(kind, value)| match (&kind, value) {
                    (FieldKind::StringArray { min_items, .. }, Value::Array(mut items)) => {
                        items.truncate(2);
                        let fewest = min_items.map(|fewest| fewest.min(items.len() as u64));
                        let mut kind = kind.clone();
                        if let FieldKind::StringArray { min_items, .. } = &mut kind {
                            *min_items = fewest;
                        }
                        (kind, Value::Array(items))
                    }
                    (_, value) => (kind, value),
                })
                .collect();
            let mut kinds: Vec<FieldKind> = columns.iter().map(|(kind, _)| kind.clone()).collect();
            kinds.push(FieldKind::string());
            let records = (0..count)
                .map(|index| {
                    let mut values: Vec<Value> =
                        columns.iter().map(|(_, value)| value.clone()).collect();
                    let pick = picks[index % picks.len()].index(1000);
                    values.push(json!(format!("record {index} {pick}")));
                    values
                })
                .collect();
            NestedCase {
                cases,
                members,
                columns: kinds,
                records,
            }
        })
}

impl NestedCase {
    /// The schema, the nested answer, and the answer by control path (what a person types where).
    fn expected(&self) -> (FormSchema, Map<String, Value>, Map<String, Value>) {
        let (mut schema, mut answers) = expected(&self.cases);
        let mut by_path = answers.clone();
        let (group, group_answer) = expected(&self.members);
        for (name, value) in &group_answer {
            by_path.insert(format!("group.{name}"), value.clone());
        }
        schema.fields.push(FormField::new(
            "group",
            FieldKind::Object {
                fields: group.fields,
            },
        ));
        answers.insert("group".into(), Value::Object(group_answer));
        let columns: Vec<FormField> = self
            .columns
            .iter()
            .enumerate()
            .map(|(index, kind)| FormField::new(format!("c{index}"), kind.clone()))
            .collect();
        let mut records = Vec::new();
        for (index, values) in self.records.iter().enumerate() {
            let mut record = Map::new();
            for (column, value) in columns.iter().zip(values) {
                by_path.insert(format!("items[{index}].{}", column.name), value.clone());
                record.insert(column.name.clone(), value.clone());
            }
            records.push(Value::Object(record));
        }
        schema.fields.push(FormField::new(
            "items",
            FieldKind::RecordList {
                fields: columns,
                min_items: None,
                max_items: Some(8),
            },
        ));
        answers.insert("items".into(), Value::Array(records));
        (schema, answers, by_path)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn the_heuristic_page_accepts_every_valid_nested_answer_through_a_browser(case in nested_cases()) {
        let (schema, answers, by_path) = case.expected();
        let tree = heuristic_page(&schema, &json!({})).map_err(TestCaseError::fail)?;
        let report = tessera::forms::validate_form::validate_form(&tree, &Catalog::defaults(), Some(&schema), &json!({}));
        prop_assert!(report.ok, "{:#?}", report.errors);
        let html = render_with_records(&tree, &json!({}), &[("items".to_owned(), case.records.len())]);
        let body = fill_and_submit(&html, &by_path).map_err(|problem| {
            TestCaseError::fail(format!("the browser refuses: {problem}\n{html}"))
        })?;
        let decoded = decode_and_validate(&schema, body.as_bytes());
        prop_assert_eq!(decoded, Ok(Value::Object(answers)), "body: {}", body);
    }
}

proptest! {
    // Random placements often break a rule on purpose (a whole step for cents, a required box):
    // those pages fail ValidateForm and are skipped, so allow many rejects.
    #![proptest_config(ProptestConfig {
        max_global_rejects: 20_000,
        ..ProptestConfig::with_cases(96)
    })]

    #[test]
    fn the_heuristic_page_accepts_every_valid_answer_through_a_browser(cases in cases()) {
        let (schema, answers) = expected(&cases);
        let tree = heuristic_page(&schema, &json!({})).map_err(TestCaseError::fail)?;
        let report = tessera::forms::validate_form::validate_form(&tree, &Catalog::defaults(), Some(&schema), &json!({}));
        prop_assert!(report.ok, "{:#?}", report.errors);
        check_page(&tree, &schema, &answers)?;
    }

    #[test]
    fn any_page_validate_form_passes_accepts_every_valid_answer(
        cases in cases(),
        places in vec(placement(), 5),
    ) {
        let (schema, answers) = expected(&cases);
        let tree = random_page(&schema, &places);
        prop_assume!(tree.is_some());
        if let Some(tree) = tree {
            check_page(&tree, &schema, &answers)?;
        }
    }
}
