//! Rendering tests over every default component: examples, expected markup, form state and escaping.

use std::collections::BTreeMap;

use leptos::prelude::*;
use serde_json::{json, Value};

use super::render_example;
use crate::binding::resolve_props;
use crate::catalog::{Catalog, Role};
use crate::render::{render_tree, FormState, RenderCtx};
use crate::tree::PageTree;

fn render(tree: &Value, ctx: &RenderCtx) -> Result<String, serde_json::Error> {
    let tree: PageTree = serde_json::from_value(tree.clone())?;
    Ok(Owner::new().with(|| render_tree(&tree, ctx).to_html()))
}

fn single(component: &str, props: Value) -> Value {
    let mut tree = json!({"nodes": {"c1": {"component": component}}, "order": ["c1"]});
    tree["nodes"]["c1"]["props"] = props;
    tree
}

#[test]
fn every_example_renders_without_an_error_box() -> Result<(), String> {
    for spec in Catalog::defaults().specs() {
        let html = render_example(&spec.name)?;
        assert!(!html.contains("node-error"), "{}: {html}", spec.name);
        assert!(html.len() > 60, "{}: {html}", spec.name);
    }
    Ok(())
}

#[test]
fn every_default_component_renders_its_expected_elements() -> Result<(), String> {
    let expected: &[(&str, &[&str])] = &[
        (
            "Form",
            &[
                "<form",
                "method=\"post\"",
                "action=\"/p/token\"",
                "name=\"_csrf\"",
                "value=\"csrf-token-value\"",
                "Archive old emails",
                "Child content",
            ],
        ),
        (
            "Input",
            &[
                "<label for=\"t-ex\"",
                "id=\"t-ex\"",
                "type=\"email\"",
                "required",
                "value=\"ada@example.com\"",
                "aria-describedby=\"t-ex-help\"",
                "id=\"t-ex-help\"",
            ],
        ),
        (
            "TextArea",
            &[
                "<textarea",
                "rows=\"4\"",
                "maxlength=\"500\"",
                "<label for=\"t-ex\"",
            ],
        ),
        (
            "Checkbox",
            &[
                "type=\"checkbox\"",
                "checked",
                "<label for=\"t-ex\"",
                "value=\"true\"",
            ],
        ),
        (
            "Select",
            &[
                "<select",
                "<option value=\"old\" selected",
                "Receipts",
                "<option value=\"Misc\"",
                "required",
            ],
        ),
        (
            "RadioGroup",
            &[
                "<fieldset",
                "<legend",
                "type=\"radio\"",
                "id=\"t-ex-1\"",
                "<label for=\"t-ex-1\"",
                "checked",
            ],
        ),
        (
            "CheckboxGroup",
            &[
                "<fieldset",
                "type=\"checkbox\"",
                "name=\"labels\"",
                "value=\"family\"",
            ],
        ),
        (
            "MultiTextInput",
            &[
                "<leptos-island",
                "name=\"cc\"",
                "Add another",
                "disabled",
                "<label for=\"t-ex\"",
            ],
        ),
        (
            "Button",
            &[
                "<button",
                "type=\"submit\"",
                "name=\"_action\"",
                "value=\"submit\"",
                "Archive selected",
            ],
        ),
        ("Text", &["<p", "3 emails are older than a year"]),
        ("Heading", &["<h1", "Inbox clean-up for Ada"]),
        ("Container", &["flex-row", "Child content"]),
        (
            "Card",
            &[
                "<section",
                "aria-labelledby=\"t-ex-title\"",
                "Summary",
                "Child content",
            ],
        ),
        (
            "Table",
            &[
                "<table",
                "<caption",
                "<th scope=\"col\"",
                "Weekly news",
                "name=\"archive\"",
                "value=\"m2\"",
                "href=\"?dir=asc&amp;sort=ex.from\"",
                "Select news@example.com",
            ],
        ),
        (
            "DecisionTable",
            &[
                "<fieldset",
                "<legend",
                "Decide on each claim",
                "type=\"radio\"",
                "name=\"_decide:t-ex:CLM-2\"",
                "value=\"rejected_ids\"",
                "Approve: CLM-1",
                "No decision",
            ],
        ),
        ("List", &["<ul", "<li>Billing</li>"]),
        (
            "KeyValue",
            &["<dl", "<dt", "Mailbox", "ada@example.com", "2023-01-04"],
        ),
        ("Alert", &["role=\"alert\"", "Archiving is final"]),
        ("Badge", &["Ready", "rounded-full"]),
        ("Stat", &["1,204", "Emails to archive", "+2 since Monday"]),
        (
            "ProgressBar",
            &[
                "<progress",
                "value=\"40\"",
                "max=\"120\"",
                "33%",
                "<label for=\"t-ex\"",
            ],
        ),
        (
            "Chart",
            &[
                "<svg",
                "role=\"img\"",
                "aria-labelledby=\"t-ex-title t-ex-desc\"",
                "<desc",
                "<rect",
                "Highest: Mar at 143",
                "class=\"sr-only\"",
                "Jan",
            ],
        ),
        (
            "DownloadLink",
            &[
                "href=\"/p/token/download/ex.csv\"",
                "download=\"emails.csv\"",
                "CSV, 2 rows",
            ],
        ),
        (
            "Link",
            &[
                "href=\"https://mail.example.com/settings\"",
                "rel=\"noopener noreferrer\"",
                "target=\"_blank\"",
            ],
        ),
        (
            "Image",
            &[
                "<img",
                "src=\"data:image/svg+xml;base64,",
                "alt=\"A blue square, the team's logo\"",
                "<figcaption",
            ],
        ),
        ("Divider", &["<hr"]),
        (
            "Fieldset",
            &[
                "<fieldset",
                "<legend",
                "Delivery address",
                "Where the parcel goes.",
                "Child content",
            ],
        ),
        (
            "RecordList",
            &[
                "name=\"line_items[1].quantity\"",
                "name=\"_count.line_items\" value=\"3\"",
                "type=\"hidden\" name=\"line_items[0].sku\" value=\"A-100\"",
                "data-testid=\"read-only\"",
            ],
        ),
        (
            "Details",
            &[
                "<details",
                "<summary",
                "How were these emails chosen?",
                "Child content",
            ],
        ),
        ("Timeline", &["<ol", "Fetched 3 emails", "2024-03-01 09:00"]),
        (
            "Code",
            &["<pre", "<code>", "fetched 3 emails", "tabindex=\"0\""],
        ),
    ];
    assert_eq!(expected.len(), Catalog::defaults().specs().len());
    for (name, fragments) in expected {
        let html = render_example(name)?;
        for fragment in *fragments {
            assert!(html.contains(fragment), "{name} lacks {fragment}: {html}");
        }
    }
    Ok(())
}

#[test]
fn every_field_has_a_label_pointing_at_an_existing_id() -> Result<(), String> {
    for spec in Catalog::defaults()
        .specs()
        .iter()
        .filter(|spec| spec.role == Role::Field)
    {
        let html = render_example(&spec.name)?;
        let has_label = html.contains("<label for=\"t-ex") || html.contains("<legend");
        assert!(has_label, "{}: {html}", spec.name);
        let mut rest = html.as_str();
        while let Some(start) = rest.find("for=\"") {
            let after = &rest[start + 5..];
            let end = after.find('"').unwrap_or(0);
            let target = &after[..end];
            assert!(
                html.contains(&format!("id=\"{target}\"")),
                "{}: label for {target} has no element",
                spec.name
            );
            rest = &after[end..];
        }
    }
    Ok(())
}

#[test]
fn fields_are_refilled_and_show_their_errors_after_a_rejected_submission(
) -> Result<(), serde_json::Error> {
    let tree = json!({
        "nodes": {
            "f": {"component": "Form", "children": ["age", "tags", "kind", "notes", "pass"]},
            "age": {"component": "Input", "props": {"name": "age", "label": "Age", "type": "number", "value": 30, "help": "Whole years."}},
            "tags": {"component": "CheckboxGroup", "props": {"name": "tags", "label": "Tags", "options": ["a", "b", "c"], "values": ["a"]}},
            "kind": {"component": "Select", "props": {"name": "kind", "label": "Kind", "options": ["x", "y"], "value": "x"}},
            "notes": {"component": "MultiTextInput", "props": {"name": "notes", "label": "Notes"}},
            "pass": {"component": "Input", "props": {"name": "pass", "label": "Password", "type": "password"}}
        },
        "order": ["f"]
    });
    let mut ctx = RenderCtx::new(json!({}));
    ctx.form = FormState {
        values: BTreeMap::from([
            ("age".to_owned(), vec!["abc".to_owned()]),
            ("tags".to_owned(), vec!["b".to_owned(), "c".to_owned()]),
            ("kind".to_owned(), vec!["y".to_owned()]),
            (
                "notes".to_owned(),
                vec!["first".to_owned(), String::new(), "second".to_owned()],
            ),
            ("pass".to_owned(), vec!["hunter2".to_owned()]),
        ]),
        errors: BTreeMap::from([("age".to_owned(), "Enter a whole number".to_owned())]),
        form_error: Some("Please correct the marked fields.".to_owned()),
    };
    let html = render(&tree, &ctx)?;
    assert!(html.contains("value=\"abc\""), "{html}");
    assert!(!html.contains("value=\"30\""), "{html}");
    assert!(html.contains("Enter a whole number"), "{html}");
    assert!(html.contains("aria-invalid=\"true\""), "{html}");
    assert!(
        html.contains("aria-describedby=\"t-age-error t-age-help\""),
        "{html}"
    );
    assert!(html.contains("id=\"t-age-error\""), "{html}");
    assert!(html.contains("Please correct the marked fields."), "{html}");
    assert!(html.contains("value=\"b\" checked"), "{html}");
    assert!(!html.contains("value=\"a\" checked"), "{html}");
    assert!(html.contains("<option value=\"y\" selected"), "{html}");
    assert!(
        html.contains("value=\"first\"") && html.contains("value=\"second\""),
        "{html}"
    );
    assert!(
        !html.contains("hunter2"),
        "passwords are never re-filled: {html}"
    );
    Ok(())
}

#[test]
fn an_unticked_checkbox_stays_unticked_after_a_submission() -> Result<(), serde_json::Error> {
    let tree = single(
        "Checkbox",
        json!({"name": "notify", "label": "Notify", "checked": true}),
    );
    let mut ctx = RenderCtx::new(json!({}));
    ctx.form.errors.insert("other".to_owned(), "x".to_owned());
    let html = render(&tree, &ctx)?;
    assert!(!html.contains("checked"), "{html}");
    Ok(())
}

#[test]
fn a_cancel_button_submits_the_cancel_action_without_validation() -> Result<(), serde_json::Error> {
    let html = render(
        &single(
            "Button",
            json!({"label": "No thanks", "kind": "cancel", "variant": "secondary"}),
        ),
        &RenderCtx::new(json!({})),
    )?;
    assert!(html.contains("name=\"_action\" value=\"cancel\""), "{html}");
    assert!(html.contains("formnovalidate"), "{html}");
    Ok(())
}

#[test]
fn tables_sort_and_page_from_the_query() -> Result<(), serde_json::Error> {
    let tree = single(
        "Table",
        json!({"rows": {"$data": "/rows"}, "columns": [{"key": "n", "label": "N"}], "pageSize": 2}),
    );
    let data = json!({"rows": [{"n": 3}, {"n": 10}, {"n": 1}, {"n": 2}, {"n": 7}]});
    let mut ctx = RenderCtx::new(data);
    ctx.query = BTreeMap::from([
        ("sort".to_owned(), "c1.n".to_owned()),
        ("dir".to_owned(), "desc".to_owned()),
        ("page".to_owned(), "c1.2".to_owned()),
        ("tab".to_owned(), "x".to_owned()),
    ]);
    let html = render(&tree, &ctx)?;
    let cells: Vec<&str> = html
        .split("<td")
        .skip(1)
        .map(|cell| {
            cell.split('>')
                .nth(1)
                .unwrap_or("")
                .trim_end_matches("</td")
        })
        .collect();
    assert_eq!(cells, vec!["3", "2"], "{html}");
    assert!(html.contains("aria-sort=\"descending\""), "{html}");
    assert!(html.contains("Page 2 of 3"), "{html}");
    assert!(
        html.contains("href=\"?dir=desc&amp;page=c1.1&amp;sort=c1.n&amp;tab=x\""),
        "{html}"
    );
    assert!(
        html.contains("href=\"?dir=desc&amp;page=c1.3&amp;sort=c1.n&amp;tab=x\""),
        "{html}"
    );
    assert!(
        html.contains("href=\"?dir=asc&amp;sort=c1.n&amp;tab=x\""),
        "{html}"
    );
    Ok(())
}

#[test]
fn a_table_without_rows_says_so() -> Result<(), serde_json::Error> {
    let html = render(
        &single(
            "Table",
            json!({"rows": {"$data": "/missing"}, "columns": [{"key": "a", "label": "A"}]}),
        ),
        &RenderCtx::new(json!({})),
    )?;
    assert!(html.contains("No rows"), "{html}");
    assert!(!html.contains("node-error"), "{html}");
    assert!(html.contains("<thead"), "its named columns head it: {html}");
    Ok(())
}

#[test]
fn a_table_with_neither_rows_nor_columns_has_no_empty_header_row() -> Result<(), serde_json::Error>
{
    // HTML requires a cell in every header row; with no columns to name there is no header.
    let html = render(
        &single("Table", json!({"rows": {"$data": "/archived"}})),
        &RenderCtx::new(json!({"archived": []})),
    )?;
    assert!(html.contains("No rows"), "{html}");
    assert!(!html.contains("<thead"), "{html}");
    Ok(())
}

#[test]
fn data_components_show_empty_states_when_their_binding_points_nowhere(
) -> Result<(), serde_json::Error> {
    let cases = [
        (
            "List",
            json!({"items": {"$data": "/x"}}),
            "Nothing to show.",
        ),
        ("KeyValue", json!({"items": {"$data": "/x"}}), "No details."),
        (
            "Timeline",
            json!({"events": {"$data": "/x"}}),
            "No events yet.",
        ),
        (
            "Chart",
            json!({"title": "T", "data": {"$data": "/x"}}),
            "No data to chart.",
        ),
        (
            "ProgressBar",
            json!({"label": "L", "value": {"$data": "/x"}}),
            "In progress",
        ),
        (
            "DownloadLink",
            json!({"label": "L", "data": {"$data": "/x"}}),
            "CSV, 0 rows",
        ),
        (
            "Stat",
            json!({"label": "L", "value": {"$data": "/x"}}),
            "\u{2014}",
        ),
    ];
    let mut ctx = RenderCtx::new(json!({}));
    ctx.download_base = Some("/d".to_owned());
    for (component, props, text) in cases {
        let html = render(&single(component, props), &ctx)?;
        assert!(html.contains(text), "{component}: {html}");
        assert!(!html.contains("node-error"), "{component}: {html}");
    }
    Ok(())
}

#[test]
fn a_line_chart_draws_a_polyline() -> Result<(), serde_json::Error> {
    let html = render(
        &single(
            "Chart",
            json!({"kind": "line", "title": "Trend", "data": [{"label": "a", "value": 1}, {"label": "b", "value": 4}]}),
        ),
        &RenderCtx::new(json!({})),
    )?;
    assert!(html.contains("<polyline"), "{html}");
    assert!(html.contains("<circle"), "{html}");
    Ok(())
}

#[test]
fn unsafe_links_and_images_render_as_text() -> Result<(), serde_json::Error> {
    let ctx = RenderCtx::new(json!({}));
    let link = render(
        &single(
            "Link",
            json!({"href": " JavaScript:alert(1)", "label": "Click"}),
        ),
        &ctx,
    )?;
    assert!(!link.contains("href"), "{link}");
    assert!(link.contains("Click"), "{link}");
    let image = render(
        &single(
            "Image",
            json!({"src": "javascript:alert(1)", "alt": "A cat"}),
        ),
        &ctx,
    )?;
    assert!(!image.contains("<img"), "{image}");
    assert!(image.contains("Image not shown: A cat"), "{image}");
    let relative = render(
        &single("Link", json!({"href": "/runs", "label": "Runs"})),
        &ctx,
    )?;
    assert!(
        relative.contains("href=\"/runs\"") && !relative.contains("target"),
        "{relative}"
    );
    Ok(())
}

#[test]
fn download_links_need_a_download_base() -> Result<(), serde_json::Error> {
    let html = render(
        &single(
            "DownloadLink",
            json!({"label": "Get it", "format": "json", "data": []}),
        ),
        &RenderCtx::new(json!({})),
    )?;
    assert!(!html.contains("<a"), "{html}");
    assert!(html.contains("download not available"), "{html}");
    Ok(())
}

// ---- Escaping -------------------------------------------------------------------------------

const PROP_PAYLOADS: [&str; 4] = [
    "<script>alert(1)</script>",
    "javascript:alert(1)",
    "\" onmouseover=\"x",
    "{{ not a pointer }} {{",
];
const DATA_PAYLOADS: [&str; 4] = [
    "<script>alert(1)</script>",
    "javascript:alert(1)",
    "\" onmouseover=\"x",
    "{{/secret}}",
];

/// Paths (as JSON pointers) of every string leaf of `value`.
fn string_paths(value: &Value, path: &str, paths: &mut Vec<String>) {
    match value {
        Value::String(_) => paths.push(path.to_owned()),
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                string_paths(item, &format!("{path}/{index}"), paths);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                if key != "$data" {
                    string_paths(
                        item,
                        &format!("{path}/{}", key.replace('~', "~0").replace('/', "~1")),
                        paths,
                    );
                }
            }
        }
        _ => {}
    }
}

/// A small HTML tokenizer good enough for our own output: checks every start tag's attributes.
fn check_markup(html: &str) -> Result<(), String> {
    if html.to_ascii_lowercase().contains("<script") {
        return Err("script tag".to_owned());
    }
    let bytes = html.as_bytes();
    let mut index = 0;
    while let Some(offset) = html[index..].find('<') {
        let start = index + offset;
        let rest = &html[start + 1..];
        if rest.starts_with('!') || rest.starts_with('/') {
            index = start + 1 + rest.find('>').unwrap_or(rest.len());
            continue;
        }
        let name_end = rest
            .find(|character: char| {
                character.is_whitespace() || character == '>' || character == '/'
            })
            .unwrap_or(rest.len());
        let tag = &rest[..name_end];
        if tag.is_empty()
            || !tag
                .chars()
                .all(|character| character.is_ascii_alphanumeric() || character == '-')
        {
            return Err(format!("odd tag {tag:?}"));
        }
        let mut position = start + 1 + name_end;
        loop {
            while position < bytes.len() && bytes[position].is_ascii_whitespace() {
                position += 1;
            }
            if position >= bytes.len() || bytes[position] == b'>' || bytes[position] == b'/' {
                break;
            }
            let attribute_start = position;
            while position < bytes.len() && !matches!(bytes[position], b'=' | b'>' | b' ' | b'/') {
                position += 1;
            }
            let attribute = html[attribute_start..position].to_ascii_lowercase();
            if attribute.starts_with("on") {
                return Err(format!("event handler attribute {attribute}"));
            }
            if attribute.contains('"') || attribute.contains('\'') {
                return Err(format!("broken attribute {attribute}"));
            }
            if position < bytes.len() && bytes[position] == b'=' {
                position += 1;
                if bytes.get(position) != Some(&b'"') {
                    return Err(format!("unquoted value of {attribute}"));
                }
                let value_end = html[position + 1..]
                    .find('"')
                    .map_or(bytes.len(), |end| position + 1 + end);
                let value = html[position + 1..value_end].trim().to_ascii_lowercase();
                if matches!(attribute.as_str(), "href" | "src" | "action" | "formaction")
                    && value.starts_with("javascript:")
                {
                    return Err(format!("javascript URL in {attribute}"));
                }
                position = value_end + 1;
            }
        }
        index = position.min(bytes.len());
        if index >= bytes.len() {
            break;
        }
    }
    Ok(())
}

fn assert_safe_markup(html: &str, context: &str) {
    if let Err(problem) = check_markup(html) {
        panic!("{context}: {problem} in {html}");
    }
}

#[test]
fn hostile_text_in_every_prop_and_data_cell_is_escaped() -> Result<(), serde_json::Error> {
    let catalog = Catalog::defaults();
    for spec in catalog.specs() {
        for (payload_index, (prop_payload, data_payload)) in
            PROP_PAYLOADS.iter().zip(DATA_PAYLOADS).enumerate()
        {
            let (mut props, example_data) = spec.example();
            let mut data = example_data.clone();
            // Every data cell gets the payload (made unique so option values stay distinct).
            let mut data_paths = Vec::new();
            string_paths(&data, "", &mut data_paths);
            for (index, path) in data_paths.iter().enumerate() {
                if let Some(cell) = data.pointer_mut(path) {
                    *cell = Value::String(format!("{data_payload}{index}"));
                }
            }
            data["secret"] = json!("LEAKED-SECRET");
            // Every string prop that still validates with the payload gets it.
            let mut prop_paths = Vec::new();
            string_paths(&props, "", &mut prop_paths);
            let mut replaced = 0;
            for (index, path) in prop_paths.iter().enumerate() {
                // Keys that name data columns are not shown; hostile ones only blank the output.
                if path.ends_with("Key") || path.ends_with("/key") {
                    continue;
                }
                let mut attempt = props.clone();
                if let Some(leaf) = attempt.pointer_mut(path) {
                    *leaf = Value::String(format!("{prop_payload}{index}"));
                }
                if (spec.validate)(&resolve_props(&attempt, &data)).is_ok() {
                    props = attempt;
                    replaced += 1;
                }
            }
            let tree =
                json!({"nodes": {"x": {"component": spec.name, "props": props}}, "order": ["x"]});
            let mut ctx = RenderCtx::new(data);
            ctx.download_base = Some("/d".to_owned());
            ctx.form
                .errors
                .insert("field".to_owned(), (*prop_payload).to_owned());
            let html = render(&tree, &ctx)?;
            let context = format!(
                "{} with payload {payload_index} ({replaced} props replaced)",
                spec.name
            );
            assert_safe_markup(&html, &context);
            assert!(
                !html.contains("LEAKED-SECRET"),
                "{context}: data was expanded: {html}"
            );
            if payload_index == 0 && replaced > 0 {
                assert!(
                    html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
                    "{context}: payload not shown literally: {html}"
                );
            }
        }
    }
    Ok(())
}

#[test]
fn hostile_field_names_and_errors_are_escaped() -> Result<(), serde_json::Error> {
    let mut ctx = RenderCtx::new(json!({}));
    let name = "a\" onfocus=\"alert(1)";
    ctx.form
        .errors
        .insert(name.to_owned(), "<script>alert(2)</script>".to_owned());
    ctx.form.values.insert(
        name.to_owned(),
        vec!["\"><script>alert(3)</script>".to_owned()],
    );
    ctx.csrf_token = Some("\"><script>".to_owned());
    ctx.action = Some("javascript:alert(4)\" x=\"".to_owned());
    let tree = json!({"nodes": {
        "f": {"component": "Form", "children": ["i", "t"]},
        "i": {"component": "Input", "props": {"name": name, "label": "L"}},
        "t": {"component": "TextArea", "props": {"name": "t", "label": "</textarea><script>alert(5)</script>", "value": "</textarea><script>"}}
    }, "order": ["f"]});
    let html = render(&tree, &ctx)?;
    let without_action = html.replace("action=\"javascript:alert(4)&quot; x=&quot;\"", "");
    assert_safe_markup(&without_action, "form");
    assert!(
        html.contains("&lt;script&gt;alert(2)&lt;/script&gt;"),
        "{html}"
    );
    // Exactly one level of escaping inside the textarea: the browser shows the literal text.
    assert!(
        html.contains("\n&lt;/textarea&gt;&lt;script&gt;</textarea>"),
        "{html}"
    );
    assert!(!html.contains("&amp;lt;"), "{html}");
    Ok(())
}

#[test]
fn the_escaping_checker_catches_what_it_should() {
    let caught = |html: &str| check_markup(html).is_err();
    assert!(caught("<p>hi</p><script>x</script>"));
    assert!(caught("<a href=\"javascript:alert(1)\">x</a>"));
    assert!(caught("<div class=\"\" onmouseover=\"x\">y</div>"));
    assert!(caught("<div class=x>y</div>"));
    assert!(!caught(
        "<div class=\"a\" data-x=\"&quot; onmouseover=&quot;\">\" onmouseover=\"x</div><!--c-->"
    ));
}

fn many_rows(count: usize) -> Value {
    let rows: Vec<Value> = (1..=count)
        .map(|n| json!({"id": format!("r{n}"), "name": format!("Row {n}")}))
        .collect();
    json!({ "rows": rows })
}

#[test]
fn a_large_selection_shows_one_page_and_carries_ticks_from_other_pages(
) -> Result<(), serde_json::Error> {
    let mut ctx = RenderCtx::new(many_rows(120));
    ctx.form
        .values
        .insert("pick".to_owned(), vec!["r2".to_owned(), "r99".to_owned()]);
    ctx.query = BTreeMap::from([("t.page".to_owned(), "2".to_owned())]);
    let tree = json!({"nodes": {
        "f": {"component": "Form", "children": ["t"]},
        "t": {"component": "Table", "props": {"rows": {"$data": "/rows"},
              "selectable": {"name": "pick", "idKey": "id", "label": "Pick rows"}}}
    }, "order": ["f"]});
    let html = render(&tree, &ctx)?;
    assert_eq!(html.matches("type=\"checkbox\"").count(), 50, "{html}");
    // Page 2 shows r51..r100: r99 is a ticked box, r2 rides along hidden.
    assert!(html.contains("value=\"r99\" checked"), "{html}");
    assert!(
        html.contains("<input type=\"hidden\" name=\"pick\" value=\"r2\">"),
        "{html}"
    );
    assert!(html.contains("name=\"_t.t.q\""), "a search box");
    assert!(html.contains("name=\"_nav\""), "paging buttons in the form");
    assert!(
        !html.contains("href=\"?page="),
        "no paging links that drop ticks"
    );
    Ok(())
}

#[test]
fn a_decision_table_checks_each_rows_choice_and_carries_the_others() -> Result<(), serde_json::Error>
{
    let mut ctx = RenderCtx::new(many_rows(60));
    ctx.form
        .values
        .insert("yes".to_owned(), vec!["r1".to_owned()]);
    ctx.form
        .values
        .insert("no".to_owned(), vec!["r55".to_owned()]);
    let tree = json!({"nodes": {
        "f": {"component": "Form", "children": ["d"]},
        "d": {"component": "DecisionTable", "props": {"label": "Decide", "rows": {"$data": "/rows"},
              "idKey": "id", "choices": [{"name": "yes", "label": "Yes"}, {"name": "no", "label": "No"}]}}
    }, "order": ["f"]});
    let html = render(&tree, &ctx)?;
    assert!(
        html.contains("name=\"_decide:t-d:r1\" value=\"yes\" checked"),
        "{html}"
    );
    assert!(
        html.contains("name=\"_decide:t-d:r2\" value=\"\" checked"),
        "undecided rows start on No decision: {html}"
    );
    assert!(
        html.contains("<input type=\"hidden\" name=\"_decide:t-d:r55\" value=\"no\">"),
        "{html}"
    );
    assert!(html.contains("Yes: 1 · No: 1"), "{html}");
    Ok(())
}

#[test]
fn a_refused_id_the_page_never_offered_is_not_carried_into_the_next_submission(
) -> Result<(), serde_json::Error> {
    // After a 422 naming "NEVER-1", the page shows the person's values again; the crafted id has
    // no row, so it must not ride along hidden (the next submission would be refused again with
    // nothing the person could untick), and it must not be counted.
    let mut ctx = RenderCtx::new(many_rows(60));
    ctx.form.values.insert(
        "pick".to_owned(),
        vec!["r2".to_owned(), "r55".to_owned(), "NEVER-1".to_owned()],
    );
    ctx.form.values.insert(
        "yes".to_owned(),
        vec!["r1".to_owned(), "NEVER-2".to_owned()],
    );
    let tree = json!({"nodes": {
        "f": {"component": "Form", "children": ["t", "d"]},
        "t": {"component": "Table", "props": {"rows": {"$data": "/rows"},
              "selectable": {"name": "pick", "idKey": "id", "label": "Pick rows"}}},
        "d": {"component": "DecisionTable", "props": {"label": "Decide", "rows": {"$data": "/rows"},
              "idKey": "id", "choices": [{"name": "yes", "label": "Yes"}, {"name": "no", "label": "No"}]}}
    }, "order": ["f"]});
    let html = render(&tree, &ctx)?;
    assert!(
        html.contains("<input type=\"hidden\" name=\"pick\" value=\"r55\">"),
        "an offered tick on another page still rides along: {html}"
    );
    assert!(!html.contains("NEVER-1"), "{html}");
    assert!(!html.contains("NEVER-2"), "{html}");
    assert!(html.contains("2 selected"), "{html}");
    assert!(html.contains("Yes: 1 · No: 0"), "{html}");
    Ok(())
}

#[test]
fn long_cells_are_cut_with_the_whole_text_one_click_away() -> Result<(), serde_json::Error> {
    let long = "word ".repeat(40);
    let ctx = RenderCtx::new(json!({"rows": [{"text": long}]}));
    let html = render(&single("Table", json!({"rows": {"$data": "/rows"}})), &ctx)?;
    assert!(html.contains("<details"), "{html}");
    assert!(html.contains('…'), "{html}");
    assert!(html.contains(long.trim_end()), "{html}");
    Ok(())
}

#[test]
fn bound_rows_render_as_the_same_rows_written_in_the_props() -> Result<(), serde_json::Error> {
    let rows = json!([{"name": "Ada <3", "size": 3}, {"name": "Bo", "size": 12}]);
    let mut ctx = RenderCtx::new(json!({"rows": rows, "name": "Ada"}));
    ctx.download_base = Some("/downloads".to_owned());
    let cases = [
        ("Table", "rows", json!({"caption": "People"})),
        (
            "DecisionTable",
            "rows",
            json!({"label": "Decide", "idKey": "name",
                   "choices": [{"name": "keep", "label": "Keep"}, {"name": "drop", "label": "Drop"}]}),
        ),
        ("DownloadLink", "data", json!({"label": "Download"})),
    ];
    for (component, prop, mut props) in cases {
        props[prop] = rows.clone();
        let literal = render(&single(component, props.clone()), &ctx)?;
        props[prop] = json!({"$data": "/rows"});
        let bound = render(&single(component, props.clone()), &ctx)?;
        assert_eq!(literal, bound, "{component}");
        assert!(!bound.contains("node-error"), "{component}: {bound}");
        // A binding to something that is not a list is refused as before, not shown as empty.
        props[prop] = json!({"$data": "/name"});
        let wrong = render(&single(component, props), &ctx)?;
        if component == "DownloadLink" {
            assert!(bound.contains("CSV, 2 rows"), "{bound}");
            assert!(!wrong.contains("rows"), "{wrong}");
        } else {
            assert!(wrong.contains("node-error"), "{component}: {wrong}");
        }
    }
    Ok(())
}
