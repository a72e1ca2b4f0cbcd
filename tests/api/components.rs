//! The gallery, the tool definitions API, the preview API and page and the every-field-type page.

use serde_json::{json, Map, Value};

use crate::helpers::{header, quoted_after, TestApp, API_TOKEN};

#[tokio::test]
async fn the_gallery_renders_every_component_with_its_tool_json() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    // The gallery is the admin's: a stranger is sent to log in.
    assert_eq!(app.get("/components").await?.status(), 303);
    let response = app
        .get_with("/components", &app.admin_cookie().await?)
        .await?;
    assert_eq!(response.status(), 200);
    let html = response.text().await?;
    assert_eq!(html.matches("data-testid=\"gallery-entry\"").count(), 31);
    for name in [
        "Form",
        "Input",
        "Table",
        "Chart",
        "DownloadLink",
        "Timeline",
        "Code",
        "MultiTextInput",
    ] {
        assert!(
            html.contains(&format!("data-component=\"{name}\"")),
            "{name} missing"
        );
    }
    assert!(html.contains("Tool definition (JSON)"));
    assert!(
        !html.contains("role=\"alert\" data-testid=\"node-error\""),
        "an example failed to render"
    );
    Ok(())
}

#[tokio::test]
async fn the_tool_definitions_need_the_token_and_list_every_component() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    assert_eq!(app.get("/api/components").await?.status(), 401);
    let tools: Vec<Value> = app.api_get("/api/components").await?.json().await?;
    assert_eq!(tools.len(), 31);
    let mut names: Vec<&str> = tools
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), 31, "tool names are unique");
    for tool in &tools {
        assert_eq!(tool["parameters"]["type"], "object", "{tool}");
        assert!(
            tool["description"]
                .as_str()
                .is_some_and(|text| text.len() > 20),
            "{tool}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn the_preview_api_renders_and_validates_a_tree() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let body = json!({
        "tree": {"nodes": {
            "h": {"component": "Heading", "props": {"text": "Hello {{/name}}", "level": 1}},
            "f": {"component": "Form", "props": {}, "children": ["n"]},
            "n": {"component": "Input", "props": {"name": "note", "label": "Note"}}
        }},
        "schema": {"type": "object", "properties": {"note": {"type": "string"}, "ok": {"type": "boolean"}}},
        "data": {"name": "<b>Ada</b>"}
    });
    let response = app.api_post("/api/pages/preview", &body).await?;
    assert_eq!(response.status(), 200);
    let result: Value = response.json().await?;
    let html = result["html"].as_str().unwrap_or_default();
    assert!(html.contains("Hello &lt;b&gt;Ada&lt;/b&gt;"), "{html}");
    assert_eq!(result["validation"]["ok"], false);
    let rules: Vec<&str> = result["validation"]["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|issue| issue["rule"].as_str())
        .collect();
    assert!(rules.contains(&"missing_field"), "{rules:?}");
    assert!(rules.contains(&"no_submit_button"), "{rules:?}");
    Ok(())
}

#[tokio::test]
async fn the_preview_api_names_a_schema_outside_the_subset() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let body = json!({"tree": {"nodes": {}}, "schema": {"type": "object", "properties": {"address": {"type": "object"}}}});
    let response = app.api_post("/api/pages/preview", &body).await?;
    assert_eq!(response.status(), 400);
    let error: Value = response.json().await?;
    assert_eq!(error["error"]["field"], "schema");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("address"),
        "{error}"
    );
    Ok(())
}

/// A preview body: `tables` Tables (with `pageSize` when given) all bound to one array of `rows`
/// rows, the shape of the attack that made a 17 KB body into a 5.9 MB page.
fn many_tables_over_one_array(tables: usize, rows: usize, page_size: Option<u32>) -> Value {
    let mut nodes = Map::new();
    for table in 0..tables {
        let mut props = json!({"rows": {"$data": "/rows"}});
        if let Some(size) = page_size {
            props["pageSize"] = json!(size);
        }
        nodes.insert(
            format!("t{table}"),
            json!({"component": "Table", "props": props}),
        );
    }
    let rows: Vec<Value> = (0..rows)
        .map(|row| json!({"id": row, "name": format!("Row {row}")}))
        .collect();
    json!({"tree": {"nodes": nodes}, "data": {"rows": rows}})
}

/// An app that takes bodies of a few megabytes, so the budget, not the body limit, is what
/// answers.
async fn app_taking_big_bodies() -> anyhow::Result<TestApp> {
    TestApp::builder()
        .config(|config| config.body_limit = 4 * 1024 * 1024)
        .spawn()
        .await
}

async fn preview_api(app: &TestApp, body: &Value) -> anyhow::Result<(u16, Value)> {
    let response = app.api_post("/api/pages/preview", body).await?;
    Ok((response.status().as_u16(), response.json().await?))
}

#[tokio::test]
async fn twenty_tables_over_one_big_array_show_one_page_of_rows_each() -> anyhow::Result<()> {
    let app = app_taking_big_bodies().await?;
    let (status, result) = preview_api(&app, &many_tables_over_one_array(20, 2_000, None)).await?;
    assert_eq!(status, 200, "{result}");
    let html = result["html"].as_str().unwrap_or_default();
    let rows = html.matches("<tr class=\"border-t").count();
    assert_eq!(rows, 20 * 50, "each table shows its first page of 50 rows");
    assert!(html.len() < 1024 * 1024, "{} bytes", html.len());
    assert_eq!(
        html.matches("Page 1 of 40").count(),
        20,
        "each table has a pager"
    );
    Ok(())
}

#[tokio::test]
async fn a_preview_over_the_row_budget_is_422_naming_the_budget() -> anyhow::Result<()> {
    let app = app_taking_big_bodies().await?;
    // 20 tables of 500 rows a page: 10,000 rows written, twice the budget.
    let body = many_tables_over_one_array(20, 2_000, Some(500));
    let (status, result) = preview_api(&app, &body).await?;
    assert_eq!(status, 422, "{result}");
    assert_eq!(result["error"]["code"], "render_budget", "{result}");
    let message = result["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("render budget `rows`"), "{message}");
    Ok(())
}

#[tokio::test]
async fn a_text_repeating_big_data_is_refused_before_it_is_built() -> anyhow::Result<()> {
    let app = app_taking_big_bodies().await?;
    // 40 KB of tree asking for 5,000 copies of 4 KB: 20 MB of text.
    let text = "{{/big}}".repeat(5_000);
    let body = json!({
        "tree": {"nodes": {"t": {"component": "Text", "props": {"text": text}}}},
        "data": {"big": "x".repeat(4 * 1024)}
    });
    let (status, result) = preview_api(&app, &body).await?;
    assert_eq!(status, 422, "{}", result["error"]);
    assert_eq!(result["error"]["code"], "render_budget");
    let message = result["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("render budget `bytes`"), "{message}");
    Ok(())
}

#[tokio::test]
async fn the_preview_page_is_for_the_admin_only() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let shown = app.get("/preview").await?;
    assert_eq!(shown.status(), 303);
    let location = header(&shown, "location").unwrap_or_default();
    assert_eq!(location, "/login?next=%2Fpreview");

    let tree = r#"{"nodes": {"h": {"component": "Heading", "props": {"text": "Rendered for you", "level": 1}}}}"#;
    let form = format!("tree={}&schema=&data=", urlencode(tree));
    let anonymous = app.post_form("/preview", "", form.clone()).await?;
    assert_eq!(anonymous.status(), 303, "a stranger's tree is not rendered");
    assert!(!anonymous.text().await?.contains("Rendered for you"));

    let cookie = app.admin_cookie().await?;
    let admin = app.post_form("/preview", &cookie, form).await?;
    assert_eq!(admin.status(), 200);
    assert!(admin.text().await?.contains("Rendered for you"));
    Ok(())
}

#[tokio::test]
async fn a_preview_over_the_row_budget_keeps_the_authors_text_and_names_the_budget(
) -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    // 101 tables of 50 rows a page: 5,050 rows, over the 5,000 a page may write.
    let nodes: serde_json::Map<String, serde_json::Value> = (0..101)
        .map(|index| {
            let node =
                serde_json::json!({"component": "Table", "props": {"rows": {"$data": "/rows"}}});
            (format!("t{index}"), node)
        })
        .collect();
    let tree = serde_json::json!({ "nodes": nodes }).to_string();
    let rows: Vec<serde_json::Value> = (0..60)
        .map(|index| serde_json::json!({"id": index, "name": format!("Row {index}")}))
        .collect();
    let data = serde_json::json!({ "rows": rows }).to_string();
    let form = format!(
        "tree={}&schema=&data={}",
        urlencode(&tree),
        urlencode(&data)
    );
    let cookie = app.admin_cookie().await?;
    let response = app.post_form("/preview", &cookie, form).await?;
    assert_eq!(response.status(), 422);
    let html = response.text().await?;
    assert!(html.contains("render budget `rows`"), "{html}");
    assert!(
        html.contains("data-testid=\"preview-error\""),
        "the editor, not an error page: {html}"
    );
    assert!(
        html.contains("t100"),
        "the pasted tree is still in its box: {html}"
    );
    Ok(())
}

fn urlencode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

#[tokio::test]
async fn a_valid_submission_of_every_field_type_decodes_to_typed_json() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let form = "full_name=Ada+Lovelace&email=ada%40example.com&age=36&budget=12.5&website=&start_date=2026-02-01\
                &passphrase=&bio=Line+one%0D%0ALine+two&subscribe=on&plan=pro&country=fr&topics=billing&topics=security\
                &languages=en&languages=fr&aliases=Countess&aliases=&invoices=inv-1&invoices=inv-3";
    let response = app
        .client
        .post(app.url("/components/try"))
        .bearer_auth(API_TOKEN)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await?;
    assert_eq!(response.status(), 200);
    let html = response.text().await?;
    for fragment in [
        "\"age\": 36",
        "\"budget\": 12.5",
        "\"subscribe\": true",
        "Line one\\nLine two",
        "\"inv-3\"",
    ] {
        assert!(html.contains(fragment), "missing {fragment}");
    }
    assert!(
        !html.contains("\"website\":"),
        "an empty optional field is absent"
    );
    Ok(())
}

#[tokio::test]
async fn a_wrong_value_rerenders_with_the_persons_values_and_a_message() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let form = "full_name=Ada&email=not-an-email&age=12&start_date=2026-02-01&plan=pro&country=fr&invoices=inv-2&bio=keep+this";
    let response = app
        .client
        .post(app.url("/components/try"))
        .bearer_auth(API_TOKEN)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await?;
    assert_eq!(response.status(), 422);
    let html = response.text().await?;
    assert!(
        html.contains("value=\"not-an-email\""),
        "the wrong value is kept"
    );
    assert!(
        html.contains("keep this</textarea>"),
        "other values are kept"
    );
    assert!(html.contains("aria-invalid=\"true\""));
    assert!(html.contains("fields need your attention"));
    Ok(())
}

#[tokio::test]
async fn gallery_downloads_are_built_server_side_as_attachments() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let admin = app.admin_cookie().await?;
    let html = app.get_with("/components", &admin).await?.text().await?;
    let href = quoted_after(&html, "href=\"/components/download/");
    assert!(!href.is_empty(), "the DownloadLink example links a file");
    let response = app
        .get_with(&format!("/components/download/{href}"), &admin)
        .await?;
    assert_eq!(response.status(), 200);
    let disposition = header(&response, "content-disposition")
        .unwrap_or_default()
        .to_owned();
    assert!(disposition.starts_with("attachment"), "{disposition}");
    assert!(!response.text().await?.is_empty());
    assert_eq!(
        app.get_with("/components/download/nothing.csv", &admin)
            .await?
            .status(),
        404
    );
    Ok(())
}
