//! Sites from configuration: an OpenAPI document of our own served by a local axum site that
//! counts what reaches it, and GitHub's official document (trimmed, `tests/data/github`) served
//! by Prism in its validating mode, which answers 422 to any request the document does not allow.
//! The chat is built exactly as `TESSERA_SITES` builds it (`chat::sites`, `sites_orchestrator`).
//! Every chat test runs on SQLite and on PostgreSQL.

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use anyhow::{bail, ensure, Context as _};
use axum::{extract::Request, response::IntoResponse, Json, Router};
use serde_json::{json, Value};
use tessera::{
    agent::{AllowedModels, HeuristicModel},
    chat::{
        header::CallStatus,
        setup::{sites_orchestrator, sites_orchestrator_with_env},
        sites::load_site,
        views::{confirm_data, session_views},
        Orchestrator,
    },
    llm::{ScriptedModel, ScriptedTurn, ToolCall},
    store::Store,
};
use url::Url;

use crate::{
    chat::{approve_once, first_turn},
    helpers::store_contract,
};

store_contract!(
    a_manual_delete_on_an_openapi_site_asks_before_anything_reaches_it,
    a_site_file_s_credential_reaches_the_site_as_a_header_and_nowhere_else,
    two_sites_at_once_keep_unique_names_and_prefix_shared_ones,
    on_the_full_github_document_the_model_searches_and_is_offered_only_what_it_found,
    the_offline_model_points_to_the_manual_tools_on_another_site,
    github_through_prism_lists_closes_twelve_after_one_approval_and_adds_a_label,
);

fn data(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(path)
}

/// A notes site on port 0 answering every request with JSON and recording it, and the
/// credential header each request carried.
struct NotesSite {
    origin: Url,
    requests: Arc<Mutex<Vec<(String, String)>>>,
    keys: Arc<Mutex<Vec<Option<String>>>>,
    shutdown: tokio_util::sync::CancellationToken,
}

impl Drop for NotesSite {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

impl NotesSite {
    async fn start() -> anyhow::Result<Self> {
        let requests: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
        let keys: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
        let log = requests.clone();
        let key_log = keys.clone();
        let app = Router::new().fallback(move |request: Request| {
            let log = log.clone();
            let key_log = key_log.clone();
            async move {
                let method = request.method().to_string();
                let path = request.uri().path().to_owned();
                key_log
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(
                        request
                            .headers()
                            .get("x-notes-key")
                            .and_then(|value| value.to_str().ok())
                            .map(str::to_owned),
                    );
                log.lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push((method.clone(), path));
                match method.as_str() {
                    "GET" => {
                        Json(json!([{"id": 3, "text": "buy milk", "tag": "home"}])).into_response()
                    }
                    "DELETE" => axum::http::StatusCode::NO_CONTENT.into_response(),
                    _ => Json(json!({"id": 3, "text": "changed"})).into_response(),
                }
            }
        });
        let (address, shutdown) = crate::helpers::serve_on_loopback(app).await?;
        Ok(Self {
            origin: Url::parse(&format!("http://{address}"))?,
            requests,
            keys,
            shutdown,
        })
    }

    fn requests(&self) -> Vec<(String, String)> {
        self.requests
            .lock()
            .map(|log| log.clone())
            .unwrap_or_default()
    }
}

fn notes_chat(store: &Store, site: &NotesSite) -> anyhow::Result<Orchestrator> {
    let manifest = load_site(&data("sites/notes.yaml"), &|_| true)?;
    Ok(sites_orchestrator(
        store.clone(),
        vec![manifest],
        &site.origin,
        &AllowedModels::heuristic_only(),
    )?)
}

async fn a_manual_delete_on_an_openapi_site_asks_before_anything_reaches_it(
    store: &Store,
) -> anyhow::Result<()> {
    let site = NotesSite::start().await?;
    let chat = notes_chat(store, &site)?;
    let (session, asked) = first_turn(&chat, "/tool deleteNote --noteId 3").await?;
    let [approval] = asked.pending_approvals.as_slice() else {
        bail!("the delete asks for one approval: {}", asked.reply);
    };
    assert_eq!(approval.operation, "deleteNote");
    assert!(
        site.requests().is_empty(),
        "nothing reaches the site before the approval: {:?}",
        site.requests()
    );

    let done = approve_once(&chat, session.id, approval.confirmation_id).await?;
    assert_eq!(
        site.requests(),
        vec![("DELETE".to_owned(), "/notes-api/notes/3".to_owned())],
        "the relative server URL resolved against the site, the path parameter filled: {}",
        done.reply
    );
    assert!(
        done.header
            .steps
            .iter()
            .any(|step| step.operation == "deleteNote" && step.status == CallStatus::Succeeded),
        "{}",
        done.reply
    );
    Ok(())
}

async fn a_site_file_s_credential_reaches_the_site_as_a_header_and_nowhere_else(
    store: &Store,
) -> anyhow::Result<()> {
    const SECRET: &str = "notes-secret-0123456789";
    let site = NotesSite::start().await?;
    let env = |name: &str| (name == "TESSERA_TEST_NOTES_KEY").then(|| SECRET.to_owned());
    let manifest = load_site(&data("sites/notes-site.yaml"), &|name| env(name).is_some())?;
    assert_eq!(manifest.site, "notebook");
    assert!(
        manifest.operation("getNote").is_none(),
        "excluded by the site file"
    );
    let chat = sites_orchestrator_with_env(
        store.clone(),
        vec![manifest],
        &site.origin,
        &AllowedModels::heuristic_only(),
        &env,
    )?;
    let (session, outcome) = first_turn(&chat, "/tool listNotes --tag home").await?;
    assert_eq!(
        site.requests(),
        vec![("GET".to_owned(), "/notes-api/notes".to_owned())],
        "{}",
        outcome.reply
    );
    let keys = site
        .keys
        .lock()
        .map(|keys| keys.clone())
        .unwrap_or_default();
    assert_eq!(keys, vec![Some(SECRET.to_owned())]);
    let view = chat.session_view(session.id).await?;
    let stored = serde_json::to_string(&view)?;
    assert!(!stored.contains(SECRET), "the credential is never stored");
    assert!(!outcome.reply.contains(SECRET));
    Ok(())
}

async fn two_sites_at_once_keep_unique_names_and_prefix_shared_ones(
    store: &Store,
) -> anyhow::Result<()> {
    const SECRET: &str = "notes-secret-0123456789";
    let site = NotesSite::start().await?;
    let env = |name: &str| (name == "TESSERA_TEST_NOTES_KEY").then(|| SECRET.to_owned());
    // The same document twice: the site file leaves `getNote` out, so only that name is unique.
    let sites = tessera::chat::sites::load_sites(
        &[data("sites/notes.yaml"), data("sites/notes-site.yaml")],
        &|name| env(name).is_some(),
    )?;
    let chat = sites_orchestrator_with_env(
        store.clone(),
        sites,
        &site.origin,
        &AllowedModels::heuristic_only(),
        &env,
    )?;
    let (session, unique) = first_turn(&chat, "/tool getNote --noteId 3").await?;
    assert_eq!(
        site.requests(),
        vec![("GET".to_owned(), "/notes-api/notes/3".to_owned())],
        "{}",
        unique.reply
    );
    let shared = chat.handle_turn(session.id, "/tool listNotes").await?;
    assert!(
        shared.narrative.contains("notes_listNotes")
            && shared.narrative.contains("notebook_listNotes"),
        "{}",
        shared.narrative
    );
    let qualified = chat
        .handle_turn(session.id, "/tool notebook_listNotes")
        .await?;
    assert_eq!(site.requests().len(), 2, "{}", qualified.reply);
    let keys = site
        .keys
        .lock()
        .map(|keys| keys.clone())
        .unwrap_or_default();
    assert_eq!(
        keys,
        vec![None, Some(SECRET.to_owned())],
        "each site's credential goes to its own operations only"
    );
    Ok(())
}

async fn the_offline_model_points_to_the_manual_tools_on_another_site(
    store: &Store,
) -> anyhow::Result<()> {
    let site = NotesSite::start().await?;
    let chat = notes_chat(store, &site)?;
    let (_, outcome) = first_turn(&chat, "archive everything older than a year").await?;
    let reply = &outcome.narrative;
    assert!(reply.contains("No language model"), "{reply}");
    assert!(reply.contains("/tools"), "{reply}");
    assert!(
        reply.contains("/tool listNotes"),
        "a real tool of this site, spelled out: {reply}"
    );
    assert!(
        !reply.contains("items"),
        "no demo words on another site: {reply}"
    );
    assert!(site.requests().is_empty());
    Ok(())
}

fn full_github_document() -> anyhow::Result<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/tools/node_modules/@octokit/openapi/generated/api.github.com.json");
    ensure!(
        path.exists(),
        "{} is missing: run `scripts/setup.sh --test`",
        path.display()
    );
    Ok(path)
}

async fn on_the_full_github_document_the_model_searches_and_is_offered_only_what_it_found(
    store: &Store,
) -> anyhow::Result<()> {
    use tessera::chat::offer::{FIND_OPERATIONS, OFFER_BUDGET_BYTES};

    let site = NotesSite::start().await?;
    let mut manifest = load_site(&full_github_document()?, &|_| true)?;
    manifest.base_url = site.origin.to_string();
    let model = ScriptedModel::new(vec![
        ScriptedTurn::tool_calls(vec![ToolCall::new(
            "find",
            FIND_OPERATIONS,
            json!({"query": "get an issue"}),
        )]),
        ScriptedTurn::tool_calls(vec![github_call(
            "get",
            "issues_get",
            json!({"issue_number": 5}),
        )]),
        ScriptedTurn::text("Issue 5 is open."),
    ]);
    let chat = sites_orchestrator(
        store.clone(),
        vec![manifest],
        &site.origin,
        &AllowedModels::with_model("scripted", Arc::new(model.clone())),
    )?;
    let (_, outcome) = first_turn(&chat, "is issue 5 still open?").await?;

    let requests = model.requests();
    assert_eq!(requests.len(), 3, "{}", outcome.reply);
    let offered = |index: usize| -> Vec<String> {
        requests[index]
            .tools
            .iter()
            .map(|tool| tool.name.clone())
            .collect()
    };
    assert_eq!(
        offered(0),
        vec![FIND_OPERATIONS.to_owned()],
        "not the whole API"
    );
    assert!(
        offered(1).contains(&"issues_get".to_owned()),
        "{:?}",
        offered(1)
    );
    assert!(
        offered(1).len() <= 9,
        "only what the search found: {:?}",
        offered(1)
    );
    for request in &requests {
        let bytes = serde_json::to_string(&request.tools)?.len();
        assert!(
            bytes <= OFFER_BUDGET_BYTES,
            "{bytes} bytes of tools in one model call"
        );
    }
    assert_eq!(
        site.requests(),
        vec![(
            "GET".to_owned(),
            "/repos/octo-org/octo-repo/issues/5".to_owned()
        )],
        "{}",
        outcome.reply
    );
    Ok(())
}

/// Prism serving a document in its validating mode, its log (one `[HTTP SERVER]` line per
/// request received) in a file.
struct Prism {
    child: std::process::Child,
    port: u16,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Prism {
    async fn start(document: &Path) -> anyhow::Result<Self> {
        let binary = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/tools/node_modules/@stoplight/prism-cli/dist/index.js");
        ensure!(
            binary.exists(),
            "{} is missing: run `scripts/setup.sh --test` (it installs Prism into tests/tools)",
            binary.display()
        );
        let port = crate::helpers::restartable_port()?;
        let dir = tempfile::tempdir()?;
        let log = dir.path().join("prism.log");
        let child = std::process::Command::new("node")
            .arg(&binary)
            .args([
                "mock",
                "--errors",
                "-h",
                "127.0.0.1",
                "-p",
                &port.to_string(),
            ])
            .arg(document)
            .stdout(std::fs::File::create(&log)?)
            .stderr(Stdio::null())
            .spawn()
            .context("starting Prism")?;
        let started = Instant::now();
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            if started.elapsed() > Duration::from_secs(60) {
                bail!(
                    "Prism did not listen on port {port}: {}",
                    std::fs::read_to_string(&log)?
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(Self {
            child,
            port,
            log,
            _dir: dir,
        })
    }

    /// The requests Prism received with `method` (lower case, as it logs them).
    fn received(&self, method: &str) -> anyhow::Result<usize> {
        let log = std::fs::read_to_string(&self.log)?;
        Ok(log
            .lines()
            .filter(|line| line.contains(&format!("[HTTP SERVER] {method} ")))
            .count())
    }

    /// Whether Prism rejected any request as breaking the document.
    fn violations(&self) -> anyhow::Result<Vec<String>> {
        let log = std::fs::read_to_string(&self.log)?;
        Ok(log
            .lines()
            // A 422 status, not the digits inside a path (`/issues/422` is a generated id).
            .filter(|line| {
                line.contains("Violation")
                    || line
                        .split(|c: char| !c.is_ascii_alphanumeric() && c != '/')
                        .any(|token| token == "422")
            })
            .map(str::to_owned)
            .collect())
    }
}

impl Drop for Prism {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn github_call(id: &str, name: &str, arguments: Value) -> ToolCall {
    let mut arguments = arguments;
    arguments["owner"] = json!("octo-org");
    arguments["repo"] = json!("octo-repo");
    ToolCall::new(id, name, arguments)
}

async fn github_through_prism_lists_closes_twelve_after_one_approval_and_adds_a_label(
    store: &Store,
) -> anyhow::Result<()> {
    use tessera::chat::offer::{FIND_OPERATIONS, OFFER_BUDGET_BYTES};

    let document = data("github/issues-and-labels.json");
    let prism = Prism::start(&document).await?;
    let manifest = load_site(&document, &|_| true)?;
    let origin = Url::parse(&format!("http://127.0.0.1:{}", prism.port))?;
    let mut manifest = manifest;
    // The document's server is api.github.com; the site file's `base_url` does this in use.
    manifest.base_url = origin.to_string();
    assert_eq!(
        manifest
            .operation("issues_list-for-repo")
            .map(|operation| operation.row_id_field()),
        Some("number"),
        "a listed issue is matched to `issue_number` by its `number`"
    );
    // Prism answers every list with the document's example: issue 1347, open. The model closes
    // it and eleven issues no read has shown.
    let closes: Vec<ToolCall> = [1347]
        .into_iter()
        .chain(1..=11)
        .map(|number| {
            github_call(
                &format!("close{number}"),
                "issues_update",
                json!({"issue_number": number, "state": "closed"}),
            )
        })
        .collect();
    // Fourteen of GitHub's operations take more than the 12 KB offer: the model searches first.
    let search = |id: &str, query: &str| {
        ScriptedTurn::tool_calls(vec![ToolCall::new(
            id,
            FIND_OPERATIONS,
            json!({"query": query}),
        )])
    };
    let model = ScriptedModel::new(vec![
        search("find1", "list issues"),
        ScriptedTurn::tool_calls(vec![github_call(
            "list",
            "issues_list-for-repo",
            json!({"state": "open"}),
        )]),
        ScriptedTurn::text("Here are the open issues."),
        // A new request: the model reads the issues again in this thread (the list is still
        // offered: it called it), finds how to update one, then closes them.
        ScriptedTurn::tool_calls(vec![github_call(
            "relist",
            "issues_list-for-repo",
            json!({"state": "open"}),
        )]),
        search("find2", "update an issue"),
        ScriptedTurn::tool_calls(closes),
        ScriptedTurn::text("Closed all twelve."),
        search("find3", "add labels to an issue"),
        ScriptedTurn::tool_calls(vec![github_call(
            "label",
            "issues_add-labels",
            json!({"issue_number": 7, "body": {"labels": ["bug"]}}),
        )]),
        ScriptedTurn::text("Labelled issue 7 as a bug."),
    ]);
    let chat = sites_orchestrator(
        store.clone(),
        vec![manifest.clone()],
        &origin,
        &AllowedModels::with_model("scripted", Arc::new(model.clone())),
    )?;
    let (session, listed) = first_turn(&chat, "list the open issues").await?;
    assert!(
        listed
            .header
            .steps
            .iter()
            .any(|step| step.operation == "issues_list-for-repo"
                && step.status == CallStatus::Succeeded),
        "{}",
        listed.reply
    );
    assert_eq!(prism.received("get")?, 1);
    // What the person sees of the list: a table of the issues Prism returned, built by the same
    // generation as pages (the offline model places it here) from the rows stored with the turn.
    let view = chat.session_view(session.id).await?;
    let views = session_views(store, &HeuristicModel::new(), &manifest, &view).await?;
    let [read] = views.reads.values().collect::<Vec<_>>()[..] else {
        bail!("one read view for the list: {:?}", views.reads.keys());
    };
    let table = read
        .tree
        .nodes
        .values()
        .find(|node| node.component == "Table")
        .context("the read view has a table")?;
    assert!(
        read.data.to_string().contains("1347"),
        "the table's rows hold the listed issue: {}",
        read.data
    );
    assert!(
        table.props.to_string().contains("$data"),
        "the table is bound to the stored rows: {}",
        table.props
    );
    assert_eq!(
        prism.received("get")?,
        1,
        "the view did not ask the site again"
    );

    let asked = chat
        .handle_turn(session.id, "close these 12 issues")
        .await?;
    let [approval] = asked.pending_approvals.as_slice() else {
        bail!("one approval for the twelve closes: {}", asked.reply);
    };
    assert_eq!(approval.operation, "issues_update");
    assert_eq!(approval.preview.count, 12, "{}", asked.reply);
    assert_eq!(prism.received("get")?, 2, "the read before the closes ran");
    assert_eq!(
        prism.received("patch")?,
        0,
        "nothing is closed before the approval"
    );
    let shown = confirm_data(approval, &manifest, manifest.operation("issues_update"));
    let items = shown["items"].as_array().context("the approval's items")?;
    assert_eq!(items.len(), 12, "{shown}");
    let state_of = |number: &str| {
        items
            .iter()
            .find(|item| item["id"] == number)
            .map(|item| item["state"].clone())
    };
    assert_eq!(
        state_of("1347"),
        Some(json!("open → closed")),
        "the listed issue shows its state from the list: {shown}"
    );
    assert_eq!(
        state_of("5"),
        Some(json!("→ closed")),
        "an issue no read showed: only the new state: {shown}"
    );

    let closed = approve_once(&chat, session.id, approval.confirmation_id).await?;
    assert_eq!(prism.received("patch")?, 12, "{}", closed.reply);
    let succeeded = closed
        .header
        .steps
        .iter()
        .filter(|step| step.operation == "issues_update" && step.status == CallStatus::Succeeded)
        .count();
    assert_eq!(succeeded, 12, "{}", closed.reply);

    let labelled = chat
        .handle_turn(session.id, "add the bug label to issue 7")
        .await?;
    assert!(
        labelled
            .header
            .steps
            .iter()
            .any(|step| step.operation == "issues_add-labels"
                && step.status == CallStatus::Succeeded),
        "{}",
        labelled.reply
    );
    assert_eq!(prism.received("post")?, 1);
    assert_eq!(
        prism.violations()?,
        Vec::<String>::new(),
        "every request the chat sent keeps to GitHub's document"
    );
    // Each operation the model called had been offered to it, and no offer passed the budget.
    let requests = model.requests();
    let called = [
        None,
        Some("issues_list-for-repo"),
        None,
        Some("issues_list-for-repo"),
        None,
        Some("issues_update"),
        None,
        None,
        Some("issues_add-labels"),
        None,
    ];
    assert_eq!(requests.len(), called.len());
    for (request, called) in requests.iter().zip(called) {
        let offered: Vec<&str> = request
            .tools
            .iter()
            .map(|tool| tool.name.as_str())
            .collect();
        assert!(offered.contains(&FIND_OPERATIONS), "{offered:?}");
        if let Some(name) = called {
            assert!(offered.contains(&name), "{name} was offered: {offered:?}");
        }
        let bytes = serde_json::to_string(&request.tools)?.len();
        assert!(
            bytes <= OFFER_BUDGET_BYTES,
            "{bytes} bytes of tools in one model call"
        );
    }
    Ok(())
}

/// Prism itself rejects a request that breaks the document, so the test above would notice one.
#[tokio::test]
async fn prism_rejects_a_request_that_breaks_the_document() -> anyhow::Result<()> {
    let prism = Prism::start(&data("github/issues-and-labels.json")).await?;
    let response = reqwest::Client::new()
        .patch(format!(
            "http://127.0.0.1:{}/repos/o/r/issues/3",
            prism.port
        ))
        .json(&json!({"state": "shut"}))
        .send()
        .await?;
    assert_eq!(response.status().as_u16(), 422);
    Ok(())
}

/// The full GitHub document (about a thousand operations) imports, and the model is offered the
/// search tool and what it found, within the per-turn budget.
#[test]
fn the_full_github_document_is_offered_within_twelve_kilobytes() -> anyhow::Result<()> {
    use tessera::chat::offer::{find, offer, offer_bytes, FIND_OPERATIONS, OFFER_BUDGET_BYTES};
    use tessera::llm::Message;

    let manifest = load_site(&full_github_document()?, &|_| true)?;
    assert!(
        manifest.operations().len() > 900,
        "{}",
        manifest.operations().len()
    );
    let operations: Vec<_> = manifest.operations().iter().collect();
    let first = offer(&manifest, &operations, &[]);
    assert_eq!(first.len(), 1);
    let mut history = Vec::new();
    for (index, query) in [
        "close issue",
        "add labels to an issue",
        "list pull requests",
        "create a repository webhook",
    ]
    .iter()
    .enumerate()
    {
        let call = ToolCall::new(
            format!("f{index}"),
            FIND_OPERATIONS,
            json!({"query": query}),
        );
        history.push(Message::Assistant {
            text: None,
            tool_calls: vec![call.clone()],
        });
        history.push(Message::tool_result(&call, find(&operations, query)));
        let offered = offer(&manifest, &operations, &history);
        let bytes = offer_bytes(&offered);
        assert!(bytes <= OFFER_BUDGET_BYTES, "{bytes} bytes after `{query}`");
        assert!(offered.len() > 1, "something found for `{query}`");
        let json = serde_json::to_string(&offered)?;
        assert!(
            json.len() <= OFFER_BUDGET_BYTES + 1024,
            "{} bytes of JSON",
            json.len()
        );
    }
    let found = find(&operations, "update an issue");
    let names: Vec<&str> = found["operations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|operation| operation["name"].as_str())
        .collect();
    assert!(names.contains(&"issues_update"), "{names:?}");
    Ok(())
}
