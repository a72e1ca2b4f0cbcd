//! The API's OpenAPI document (`GET /api/openapi.json`) kept true: it lists exactly the routes
//! `/api/*` serves, the API's real answers validate against its response schemas on both
//! engines, and Schemathesis's property-based checks find nothing against the real binary.

use std::{collections::BTreeSet, process::Command};

use anyhow::{ensure, Context as _};
use serde_json::{json, Value};

use crate::{
    binary::wait_until_listening,
    helpers::{header, on_both_backends, Backend, TestApp, API_TOKEN},
};

/// The document as served, without credentials.
async fn document(app: &TestApp) -> anyhow::Result<Value> {
    let response = app.client.get(app.url("/api/openapi.json")).send().await?;
    ensure!(response.status() == 200, "{}", response.status());
    Ok(response.json().await?)
}

/// Every `(METHOD, path)` the document lists.
fn operations(document: &Value) -> BTreeSet<(String, String)> {
    let mut operations = BTreeSet::new();
    for (path, item) in document["paths"].as_object().into_iter().flatten() {
        for method in ["get", "post", "put", "patch", "delete"] {
            if item.get(method).is_some() {
                operations.insert((method.to_uppercase(), path.clone()));
            }
        }
    }
    operations
}

/// `path` with each `{parameter}` replaced by a fresh UUID.
fn concrete(path: &str) -> String {
    let mut concrete = String::new();
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        concrete.push_str(&rest[..open]);
        let close = rest[open..]
            .find('}')
            .map_or(rest.len(), |close| open + close + 1);
        concrete.push_str(&uuid::Uuid::new_v4().to_string());
        rest = &rest[close..];
    }
    concrete.push_str(rest);
    concrete
}

#[tokio::test]
async fn the_document_lists_exactly_the_operations_the_api_serves() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let document = document(&app).await?;
    assert_eq!(document["openapi"], "3.1.0");
    assert!(
        document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer",
        "the bearer token is described: {:#}",
        document["components"]["securitySchemes"]
    );
    let operations = operations(&document);
    for expected in [
        ("POST", "/api/asks"),
        ("GET", "/api/runs"),
        (
            "POST",
            "/api/chat/sessions/{id}/confirmations/{confirmation}",
        ),
        ("GET", "/api/openapi.json"),
    ] {
        let expected = (expected.0.to_owned(), expected.1.to_owned());
        assert!(operations.contains(&expected), "{expected:?} is documented");
    }
    // Each documented operation is served: with the token, never the site's HTML 404 nor a 405.
    for (method, path) in &operations {
        let url = app.url(&concrete(path));
        let request = match method.as_str() {
            "GET" => app.client.get(url),
            _ => app.client.post(url).json(&json!({})),
        };
        let response = request.bearer_auth(API_TOKEN).send().await?;
        let content_type = header(&response, "content-type")
            .unwrap_or_default()
            .to_owned();
        assert_ne!(response.status(), 405, "{method} {path} is routed");
        assert!(
            !content_type.starts_with("text/html"),
            "{method} {path} reached the API, not the site's 404 ({})",
            response.status()
        );
    }
    // And nothing else: every `/api` route is registered through `routes!`, which documents it
    // as it routes it; a plain `.route("/api…")` would serve an undocumented path.
    let sources = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut undocumented = Vec::new();
    for file in rust_files(&sources)? {
        // Whitespace removed, so a call rustfmt spread over lines is found too.
        let text: String = std::fs::read_to_string(&file)?
            .chars()
            .filter(|character| !character.is_whitespace())
            .collect();
        if text.contains(".route(\"/api") {
            undocumented.push(file.display().to_string());
        }
    }
    assert!(
        undocumented.is_empty(),
        "`/api` routes added outside `routes!` (so missing from the document) in {undocumented:?}"
    );
    // What is undocumented is not served under `/api`.
    for (method, path) in [("GET", "/api/nothing-here"), ("DELETE", "/api/runs")] {
        let request = app
            .client
            .request(method.parse()?, app.url(path))
            .bearer_auth(API_TOKEN);
        let status = request.send().await?.status();
        assert!(
            status == 404 || status == 405,
            "{method} {path} is not served: {status}"
        );
    }
    app.cleanup().await
}

fn rust_files(dir: &std::path::Path) -> anyhow::Result<Vec<std::path::PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            files.extend(rust_files(&path)?);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            files.push(path);
        }
    }
    Ok(files)
}

/// Checks API answers against the document's response schemas (JSON Schema 2020-12, as
/// OpenAPI 3.1 writes them), resolving `$ref`s within the served document.
struct Conformance {
    document: Value,
    app: TestApp,
    checked: BTreeSet<(String, String, u16)>,
}

impl Conformance {
    /// Sends `method path` (with `body` as JSON when given) with the token, checks that its
    /// status is documented for that operation and that its JSON body validates against the
    /// documented schema, and answers the body.
    async fn call(
        &mut self,
        method: &str,
        template: &str,
        path: &str,
        body: Option<Value>,
    ) -> anyhow::Result<(u16, Value)> {
        let mut request = self
            .app
            .client
            .request(method.parse()?, self.app.url(path))
            .bearer_auth(API_TOKEN);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await?;
        let status = response.status().as_u16();
        let text = response.text().await?;
        let body: Value = serde_json::from_str(&text)
            .with_context(|| format!("{method} {path} answered {status} with no JSON: {text}"))?;
        self.check(method, template, status, &body)
            .with_context(|| format!("{method} {path} answered {status} {body:#}"))?;
        self.checked
            .insert((method.to_owned(), template.to_owned(), status));
        Ok((status, body))
    }

    /// [`Self::call`], and the answer must have status `expected`.
    async fn expect(
        &mut self,
        expected: u16,
        method: &str,
        template: &str,
        path: &str,
        body: Option<Value>,
    ) -> anyhow::Result<Value> {
        let (status, answer) = self.call(method, template, path, body).await?;
        ensure!(
            status == expected,
            "{method} {path} answered {status}, not {expected}: {answer:#}"
        );
        Ok(answer)
    }

    fn check(&self, method: &str, template: &str, status: u16, body: &Value) -> anyhow::Result<()> {
        let operation = &self.document["paths"][template][method.to_lowercase()];
        ensure!(
            operation.is_object(),
            "{method} {template} is not documented"
        );
        let response = &operation["responses"][status.to_string()];
        ensure!(response.is_object(), "status {status} is not documented");
        let schema = &response["content"]["application/json"]["schema"];
        ensure!(schema.is_object(), "no JSON schema for {status}");
        let mut rooted = schema.clone();
        rooted["components"] = self.document["components"].clone();
        let validator = jsonschema::draft202012::new(&rooted)
            .map_err(|error| anyhow::anyhow!("the documented schema does not compile: {error}"))?;
        let problems: Vec<String> = validator
            .iter_errors(body)
            .map(|error| format!("{} at {}", error, error.instance_path()))
            .collect();
        ensure!(problems.is_empty(), "breaks the document: {problems:#?}");
        Ok(())
    }
}

async fn real_answers_validate_against_the_document(backend: Backend) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let document = document(&app).await?;
    let mut api = Conformance {
        document,
        app,
        checked: BTreeSet::new(),
    };
    api.call("GET", "/api/status", "/api/status", None).await?;
    api.call("GET", "/api/components", "/api/components", None)
        .await?;

    // Runs: start, list, read, link, and the errors.
    let run = api
        .expect(
            201,
            "POST",
            "/api/runs",
            "/api/runs",
            Some(json!({"workflow": "email-digest"})),
        )
        .await?;
    let run_id = run["id"].as_str().context("a run id")?.to_owned();
    let waiting = api.app.wait_for_status(&run_id, "waiting").await?;
    api.check("GET", "/api/runs/{id}", 200, &waiting)?;
    api.expect(
        201,
        "POST",
        "/api/runs/{id}/link",
        &format!("/api/runs/{run_id}/link"),
        None,
    )
    .await?;
    api.call("GET", "/api/runs", "/api/runs?status=waiting&limit=5", None)
        .await?;
    api.expect(400, "GET", "/api/runs", "/api/runs?status=nope", None)
        .await?;
    api.expect(
        400,
        "POST",
        "/api/runs",
        "/api/runs",
        Some(json!({"workflow": "nope"})),
    )
    .await?;
    let unknown = uuid::Uuid::new_v4();
    api.expect(
        404,
        "GET",
        "/api/runs/{id}",
        &format!("/api/runs/{unknown}"),
        None,
    )
    .await?;

    // Asks: create, read, extend, reissue, cancel, and the errors.
    let ask = api
        .expect(
            201,
            "POST",
            "/api/asks",
            "/api/asks",
            Some(json!({"prompt": "Approve the budget?", "expires_in": 3600})),
        )
        .await?;
    let ask_id = ask["id"].as_str().context("an ask id")?.to_owned();
    let one_ask = format!("/api/asks/{ask_id}");
    api.call("GET", "/api/asks/{id}", &one_ask, None).await?;
    // Each action on the ask, in order. JSON Schema's `integer`, as documented, includes a zero
    // fraction (7200.0 seconds is a whole number); the optional body may be `null`, which is no
    // body; a second cancel conflicts.
    for (action, body, expected) in [
        ("extend", Some(json!({"expires_in": 7200})), 200),
        ("extend", Some(json!({"expires_in": 7200.0})), 200),
        ("reissue", None, 200),
        ("reissue", Some(Value::Null), 200),
        ("cancel", None, 200),
        ("cancel", None, 409),
    ] {
        let template = format!("/api/asks/{{id}}/{action}");
        let path = format!("{one_ask}/{action}");
        api.expect(expected, "POST", &template, &path, body).await?;
    }
    api.expect(
        422,
        "POST",
        "/api/asks",
        "/api/asks",
        Some(json!({"prompt": "", "expires_in": 5})),
    )
    .await?;
    api.expect(
        404,
        "GET",
        "/api/asks/{id}",
        &format!("/api/asks/{unknown}"),
        None,
    )
    .await?;

    // Pages: preview, generate, the generation records.
    let tree = json!({"root": {"id": "r", "type": "Text", "props": {"text": "Hello"}}});
    api.expect(
        200,
        "POST",
        "/api/pages/preview",
        "/api/pages/preview",
        Some(json!({"tree": tree})),
    )
    .await?;
    api.expect(
        400,
        "POST",
        "/api/pages/preview",
        "/api/pages/preview",
        Some(json!({"tree": 5})),
    )
    .await?;
    let generated = api
        .expect(
            200,
            "POST",
            "/api/pages/generate",
            "/api/pages/generate",
            Some(json!({"prompt": "Pick a colour", "model": "heuristic"})),
        )
        .await?;
    let generation = generated["generation"]["id"]
        .as_str()
        .context("a generation id")?
        .to_owned();
    api.call(
        "GET",
        "/api/generations/{id}",
        &format!("/api/generations/{generation}"),
        None,
    )
    .await?;
    api.call("GET", "/api/generations", "/api/generations?limit=3", None)
        .await?;
    // A query that does not parse is a JSON 400.
    api.expect(
        400,
        "GET",
        "/api/generations",
        "/api/generations?limit=many",
        None,
    )
    .await?;

    // Chat: a session, a turn, its view and tools.
    let session = api
        .expect(
            200,
            "POST",
            "/api/chat/sessions",
            "/api/chat/sessions",
            None,
        )
        .await?;
    let session = session["id"].as_str().context("a session id")?.to_owned();
    let one_session = format!("/api/chat/sessions/{session}");
    api.expect(
        200,
        "POST",
        "/api/chat/sessions/{id}/turns",
        &format!("{one_session}/turns"),
        Some(json!({"text": "show items where status is open"})),
    )
    .await?;
    api.call("GET", "/api/chat/sessions/{id}", &one_session, None)
        .await?;
    api.call(
        "GET",
        "/api/chat/sessions/{id}/tools",
        &format!("{one_session}/tools"),
        None,
    )
    .await?;

    // Errors answered before any handler: no token, and a body not labelled JSON.
    let response = api
        .app
        .client
        .get(api.app.url("/api/status"))
        .send()
        .await?;
    let status = response.status().as_u16();
    api.check("GET", "/api/status", status, &response.json().await?)?;
    assert_eq!(status, 401);
    let response = api
        .app
        .client
        .post(api.app.url("/api/asks"))
        .bearer_auth(API_TOKEN)
        .header("content-type", "text/plain")
        .body("{}")
        .send()
        .await?;
    let status = response.status().as_u16();
    api.check("POST", "/api/asks", status, &response.json().await?)?;
    assert_eq!(status, 415);

    let documented = operations(&api.document).len();
    let exercised: BTreeSet<_> = api
        .checked
        .iter()
        .map(|(method, path, _)| (method.clone(), path.clone()))
        .collect();
    // Streams and the two chat decisions need a live generation or a pending confirmation; the
    // Schemathesis run covers their error answers.
    assert!(
        exercised.len() + 5 >= documented,
        "exercised {} of {documented} operations: {exercised:?}",
        exercised.len()
    );
    api.app.cleanup().await
}

on_both_backends!(real_answers_validate_against_the_document);

/// The Schemathesis executable of the test tools (`scripts/setup.sh --test`).
fn schemathesis() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/py/bin/schemathesis")
}

/// The fixed Schemathesis run: every operation, every check, a fixed seed, a bounded number
/// of examples. `TESSERA_SKIP_SCHEMATHESIS=1` skips it where the tool is not installed.
#[test]
fn schemathesis_finds_no_server_error_and_no_answer_that_breaks_the_document() -> anyhow::Result<()>
{
    if std::env::var_os("TESSERA_SKIP_SCHEMATHESIS").is_some_and(|value| value == "1") {
        return Ok(());
    }
    let tool = schemathesis();
    ensure!(
        tool.exists(),
        "{} is missing: run scripts/setup.sh --test (or set TESSERA_SKIP_SCHEMATHESIS=1)",
        tool.display()
    );
    let dir = tempfile::tempdir()?;
    let token = "schemathesis-token-0123456789";
    let log = dir.path().join("server.log");
    let output = crate::process::output_to(&log)?;
    let mut server = crate::binary::server_in(dir.path())
        .env("TESSERA_API_TOKEN", token)
        .env("TESSERA_MODEL", "heuristic")
        // Warnings, and the line that says which port it bound.
        .env("TESSERA_LOG", "warn,tessera=info")
        .stdout(output.0)
        .stderr(output.1)
        .spawn()?;
    let port = wait_until_listening(&log, &mut server)?;
    let config = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemathesis.toml");
    let output = Command::new(&tool)
        .current_dir(dir.path())
        .arg("--config-file")
        .arg(config)
        .args(SCHEMATHESIS_ARGS)
        .arg(format!("http://127.0.0.1:{port}/api/openapi.json"))
        .args(["--url", &format!("http://127.0.0.1:{port}")])
        .args(["--header", &format!("Authorization: Bearer {token}")])
        .env("SCHEMATHESIS_HOOKS", "")
        .env("NO_COLOR", "1")
        .output()
        .context("running schemathesis")?;
    let _ = server.kill();
    let _ = server.wait();
    let server_log = std::fs::read_to_string(&log).unwrap_or_default();
    let report = String::from_utf8_lossy(&output.stdout);
    // The summary (operations, test cases, failures) is the run's record; cargo shows it with
    // --nocapture.
    eprintln!("{report}");
    assert!(
        output.status.success(),
        "schemathesis failed:\n{report}\n{}\nserver log:\n{server_log}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(())
}

/// The run's settings: all checks, both positive and negative data, deterministic generation
/// (the same requests every run; Schemathesis then uses no seed), and few enough examples per
/// operation that it takes about a minute. The stateful phase is off: the document declares no
/// links between operations.
const SCHEMATHESIS_ARGS: &[&str] = &[
    "run",
    "--checks",
    "all",
    "--mode",
    "all",
    "--max-examples",
    "15",
    "--generation-deterministic",
    "--workers",
    "1",
    "--request-timeout",
    "30",
    "--phases",
    "examples,coverage,fuzzing",
];
