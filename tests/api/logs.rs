//! `TESSERA_LOG_FORMAT=json` on the real binary: every line is one JSON object with `time`,
//! `level`, `target` and `message`; a request's lines carry its request id; neither a page token
//! nor the API token is written.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::{
    helpers::API_TOKEN,
    process::{answer, ask, client, ServerProcess},
};

#[tokio::test]
async fn json_logs_are_one_object_per_line_with_the_request_id_and_no_secret() -> anyhow::Result<()>
{
    let folder = tempfile::tempdir()?;
    let database = format!("sqlite://{}", folder.path().join("logs.db").display());
    let server = ServerProcess::start(
        folder.path(),
        &database,
        &[("TESSERA_LOG_FORMAT", "json"), ("TESSERA_LOG", "debug")],
    )
    .await?;
    let client = client()?;
    let page = ask(&client, &server, "the JSON log").await?;
    let token = page.path.trim_start_matches("/p/").to_owned();
    let response = client
        .get(server.url(&page.path))
        .header("x-request-id", "req-json-log-1")
        .send()
        .await?;
    assert_eq!(response.status(), 200);
    assert_eq!(answer(&client, &server, &page, "yes").await?, 303);
    let log = server.log_text();
    server.stop().await?;

    let mut lines = 0;
    let mut request_lines = BTreeSet::new();
    for line in log.lines().filter(|line| !line.trim().is_empty()) {
        let object: Value = serde_json::from_str(line)
            .map_err(|error| anyhow::anyhow!("not one JSON object ({error}): {line}"))?;
        for key in ["time", "level", "target", "message"] {
            assert!(object.get(key).is_some(), "`{key}` missing: {line}");
        }
        if object["request.id"] == "req-json-log-1" {
            request_lines.insert(object["message"].as_str().unwrap_or_default().to_owned());
            assert_eq!(object["http.path"], "/p/:token", "{line}");
        }
        lines += 1;
    }
    assert!(lines > 5, "too few lines: {log}");
    // The trace layer's start and end of the request, both under its id.
    assert!(request_lines.len() >= 2, "{request_lines:?} in {log}");
    assert!(!log.contains(&token), "a page token was logged: {log}");
    assert!(!log.contains(API_TOKEN), "the API token was logged: {log}");
    Ok(())
}
