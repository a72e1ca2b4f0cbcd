//! The page-quality suite: realistic requests (`tests/quality/*.json`, one self-contained
//! `{name, prompt, schema?, data, expect}` file each) are asked through `POST /api/asks` with the
//! offline heuristic and opened at their link, as a new user would; each page is then read the
//! way a reviewer reads it. `check_templates` says a fixture's prompt is a template that must
//! reach the person rendered (`rendered_texts` shown, no `{{` left); `check_id_selection` says its
//! `pending_id_fields` must be picked from the rows, never typed.

use std::path::{Path, PathBuf};

use anyhow::{ensure, Context as _};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::helpers::TestApp;

/// What a reviewer checks on one page; every key is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    /// Whether the page has a form (display-only requests must not).
    form: Option<bool>,
    /// Whether the page draws a chart (and must not when it was not asked for).
    chart: Option<bool>,
    /// Stat labels that must show.
    #[serde(default)]
    stats: Vec<String>,
    /// Text that must show: computed totals, data, captions.
    #[serde(default)]
    texts: Vec<String>,
    /// Whether the submit button is styled as dangerous.
    danger: Option<bool>,
    /// The submit button's label.
    submit_label: Option<String>,
    /// Part of the one-line summary of what is asked or shown.
    summary: Option<String>,
    /// Form keys that must be on the page.
    #[serde(default)]
    fields: Vec<String>,
    /// Field labels taken from the schema's titles.
    #[serde(default)]
    form_labels: Vec<String>,
    /// Array-of-id fields that must be ticked from the rows, never typed.
    #[serde(default)]
    id_fields: Vec<String>,
    /// The page's HTML must not be larger than this.
    max_html_bytes: Option<usize>,
    /// Whether the prompt is a template that must reach the person rendered.
    #[serde(default)]
    check_templates: bool,
    /// With `check_templates`: the rendered request text.
    #[serde(default)]
    rendered_texts: Vec<String>,
    /// Whether `pending_id_fields` must be picked from the rows.
    #[serde(default)]
    check_id_selection: bool,
    /// With `check_id_selection`: those fields.
    #[serde(default)]
    pending_id_fields: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fixture {
    name: String,
    prompt: String,
    #[serde(default)]
    schema: Option<Value>,
    data: Value,
    expect: Expect,
}

/// Pages larger than this are too heavy for a person on a phone, whatever the fixture says.
const DEFAULT_MAX_HTML_BYTES: usize = 150_000;

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/quality")
}

fn load_fixtures() -> anyhow::Result<Vec<Fixture>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(fixture_dir())?
        .map(|entry| entry.map(|entry| entry.path()))
        .collect::<Result<_, _>>()?;
    paths.retain(|path| {
        path.extension()
            .is_some_and(|extension| extension == "json")
    });
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path)?;
            serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))
        })
        .collect()
}

/// The heuristic's page for `fixture`, as the HTML a person gets: asked through `POST /api/asks`
/// (a display-only ask when the fixture has no schema), then opened at its link.
async fn page_html(app: &TestApp, fixture: &Fixture) -> anyhow::Result<String> {
    let mut ask = json!({"prompt": fixture.prompt, "data": fixture.data});
    match &fixture.schema {
        Some(schema) => ask["schema"] = schema.clone(),
        None => ask["display"] = json!(true),
    }
    let (_, path) = crate::asks::create(app, &ask)
        .await
        .with_context(|| format!("{}: asking", fixture.name))?;
    let page = app.get(&path).await?;
    ensure!(
        page.status() == 200,
        "{}: the page did not open",
        fixture.name
    );
    Ok(page.text().await?)
}

/// Text as Leptos writes it into HTML.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The opening tags that carry `name="<name>"`.
fn tags_named<'a>(html: &'a str, name: &str) -> Vec<&'a str> {
    let needle = format!(" name=\"{name}\"");
    let mut tags = Vec::new();
    let mut rest = html;
    while let Some(found) = rest.find(&needle) {
        let start = rest[..found].rfind('<').unwrap_or(0);
        let end = rest[found..]
            .find('>')
            .map_or(rest.len(), |end| found + end + 1);
        tags.push(&rest[start..end]);
        rest = &rest[end..];
    }
    tags
}

/// The submit buttons (not cancel) and their labels.
fn submit_buttons(html: &str) -> Vec<(&str, &str)> {
    html.match_indices("<button")
        .filter_map(|(start, _)| {
            let tag_end = start + html[start..].find('>')?;
            let tag = &html[start..=tag_end];
            let close = tag_end + html[tag_end..].find("</button>")?;
            let label = html[tag_end + 1..close].trim();
            tag.contains("value=\"submit\"").then_some((tag, label))
        })
        .collect()
}

/// Whether a field named `name` is only ever chosen (tick boxes, radios, options), never typed.
fn chosen_not_typed(html: &str, name: &str) -> Result<(), String> {
    let tags = tags_named(html, name);
    if tags.is_empty() {
        return Err(format!("no field named {name}"));
    }
    match tags.iter().find(|tag| {
        !(tag.contains("type=\"checkbox\"")
            || tag.contains("type=\"radio\"")
            || tag.starts_with("<select"))
    }) {
        Some(tag) => Err(format!("{name} is typed as free text: {tag}")),
        None => Ok(()),
    }
}

/// Whether `name` is a field of ids, by its name (`account_ids`, `postIds`).
fn names_ids(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with("_ids") || lower == "ids" || name.ends_with("Ids")
}

/// Everything a reviewer would object to on `fixture`'s page.
fn review(fixture: &Fixture, html: &str) -> Vec<String> {
    let expect = &fixture.expect;
    let mut problems = Vec::new();
    let mut require = |ok: bool, problem: String| {
        if !ok {
            problems.push(problem);
        }
    };

    let templated = fixture.prompt.contains("{{");
    if !templated || expect.check_templates {
        require(
            !html.contains("{{"),
            "raw template text `{{` on the page".to_owned(),
        );
    }
    if expect.check_templates {
        for text in &expect.rendered_texts {
            require(
                html.contains(&escaped(text)),
                format!("the rendered request `{text}` is missing"),
            );
        }
    }
    let limit = expect.max_html_bytes.unwrap_or(DEFAULT_MAX_HTML_BYTES);
    require(
        html.len() <= limit,
        format!("the page is {} bytes, more than {limit}", html.len()),
    );
    require(
        !html.contains("data-testid=\"node-error\""),
        "a component failed to render".to_owned(),
    );
    if let Some(form) = expect.form {
        require(
            html.contains("data-testid=\"page-form\"") == form,
            format!("a form is expected: {form}"),
        );
    }
    if let Some(chart) = expect.chart {
        let drawn = html.contains("<figure") && html.contains("role=\"img\"");
        require(
            drawn == chart,
            format!("a chart is expected: {chart}, drawn: {drawn}"),
        );
    }
    for label in &expect.stats {
        require(
            html.contains(&format!(">{}</p>", escaped(label))),
            format!("no stat labelled `{label}`"),
        );
    }
    for text in &expect.texts {
        require(
            html.contains(&escaped(text)),
            format!("`{text}` is not shown"),
        );
    }
    if let Some(summary) = &expect.summary {
        require(
            html.contains(&escaped(summary)),
            format!("no summary line with `{summary}`"),
        );
    }
    for field in &expect.fields {
        require(
            !tags_named(html, field).is_empty(),
            format!("no field named `{field}`"),
        );
    }
    for label in &expect.form_labels {
        require(
            html.contains(&escaped(label)),
            format!("the field label `{label}` (a schema title) is missing"),
        );
    }
    let buttons = submit_buttons(html);
    if expect.form == Some(true) {
        require(
            buttons.len() == 1,
            format!("{} submit buttons", buttons.len()),
        );
    }
    if let Some(danger) = expect.danger {
        for (tag, label) in &buttons {
            require(
                tag.contains("bg-red-700") == danger,
                format!("the `{label}` button should be danger: {danger}"),
            );
        }
    }
    if let Some(expected) = &expect.submit_label {
        require(
            buttons.iter().any(|(_, label)| label == expected),
            format!("no `{expected}` button among {buttons:?}"),
        );
    }
    let schema_ids: Vec<String> = fixture
        .schema
        .as_ref()
        .and_then(|schema| schema["properties"].as_object())
        .map(|properties| {
            properties
                .keys()
                .filter(|name| names_ids(name))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let pending = |name: &String| expect.pending_id_fields.contains(name);
    for field in expect.id_fields.iter().chain(&schema_ids) {
        if !pending(field) {
            require(
                chosen_not_typed(html, field).is_ok(),
                format!("free-text id entry for `{field}`"),
            );
        }
    }
    if expect.check_id_selection {
        for field in &expect.pending_id_fields {
            if let Err(problem) = chosen_not_typed(html, field) {
                require(false, problem);
            }
        }
    }
    problems
}

#[tokio::test]
async fn every_quality_request_gets_a_page_a_reviewer_accepts() -> anyhow::Result<()> {
    let fixtures = load_fixtures()?;
    assert!(fixtures.len() >= 20, "only {} fixtures", fixtures.len());
    let app = TestApp::builder().spawn().await?;
    let mut problems = Vec::new();
    for fixture in &fixtures {
        let html = page_html(&app, fixture).await?;
        problems.extend(
            review(fixture, &html)
                .into_iter()
                .map(|problem| format!("{}: {problem}", fixture.name)),
        );
    }
    app.cleanup().await?;
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
    Ok(())
}

#[test]
fn the_review_objects_to_template_text_a_missing_chart_and_a_plain_destructive_button() {
    let fixture = Fixture {
        name: "deactivate".to_owned(),
        prompt: "Deactivate the accounts".to_owned(),
        schema: Some(json!({"type": "object", "properties": {
            "account_ids": {"type": "array", "items": {"type": "string"}}}})),
        data: json!({}),
        expect: Expect {
            chart: Some(true),
            danger: Some(true),
            summary: Some("Please answer:".to_owned()),
            ..Expect::default()
        },
    };
    let page = r#"<h1>Hello {{ name }}</h1><form data-testid="page-form">
        <input type="text" name="account_ids">
        <button type="submit" name="_action" value="submit" class="bg-indigo-700">Deactivate</button></form>"#;
    let problems = review(&fixture, page);
    assert!(
        problems
            .iter()
            .any(|problem| problem.contains("raw template")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|problem| problem.contains("chart")),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|problem| problem.contains("should be danger")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|problem| problem.contains("summary")),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|problem| problem.contains("free-text id entry for `account_ids`")),
        "{problems:?}"
    );
}
