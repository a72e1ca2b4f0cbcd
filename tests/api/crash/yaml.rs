//! The reduced crash drill for YAML workflows: the real binary runs a YAML workflow (page, notify,
//! wait, an `http` step to a local API, branch) and is killed with SIGKILL at random moments
//! around starts and submissions, then restarted. At the end every run succeeded with exactly the
//! answer that was accepted for it, each step committed once, and the `http` step's calls all
//! carried the run's one idempotency key with that answer. SQLite, one process.
//!
//! The seed is printed; `TESSERA_CRASH_SEED=<n>` replays the same choices.

use std::{
    path::PathBuf,
    process::{Child, Command, Stdio},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use anyhow::{bail, Context as _};
use axum::{extract::State, http::HeaderMap, routing::post, Json, Router};
use rand::{rngs::StdRng, Rng as _, SeedableRng as _};
use serde_json::{json, Value};

use super::{BINARY, LEASE_SECS};
use crate::helpers::{csrf_of, restartable_port, API_TOKEN};

/// Runs driven through kills.
const RUNS: usize = 8;

type Calls = Arc<Mutex<Vec<(String, Value)>>>;

/// A local API that takes a while to answer (so kills land mid-call), recording every call.
async fn slow_api() -> anyhow::Result<(u16, Calls)> {
    let calls: Calls = Arc::default();
    let app = Router::new()
        .route(
            "/record/{tag}",
            post(
                |State(calls): State<Calls>, headers: HeaderMap, Json(body): Json<Value>| async move {
                    let key = headers
                        .get("idempotency-key")
                        .and_then(|value| value.to_str().ok())
                        .unwrap_or_default()
                        .to_owned();
                    calls
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push((key, body));
                    tokio::time::sleep(Duration::from_millis(150)).await;
                    Json(json!({"recorded": true}))
                },
            ),
        )
        .with_state(Arc::clone(&calls));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok((port, calls))
}

fn workflow_file(api_port: u16) -> String {
    format!(
        r#"
name: yaml-drill
state: {{tag: none}}
steps:
  - name: ask
    ui:
      prompt: "Answer drill {{{{ tag }}}}"
      schema: {{type: object, required: [answer], properties: {{answer: {{type: string}}}}}}
  - name: send
    notify: {{title: "drill {{{{ tag }}}}"}}
  - name: answer
    wait: {{save: /reply}}
  - name: record
    http:
      method: POST
      url: "http://127.0.0.1:{api_port}/record/{{{{ tag }}}}"
      body: {{answer: "{{{{ reply.answer }}}}"}}
      retry: {{attempts: 30, backoff: 1s, max_backoff: 2s}}
      save: /recorded
  - name: route
    branch: {{on: /recorded/status, cases: {{"200": finish}}}}
  - name: finish
    notify: {{title: "done {{{{ tag }}}}"}}
"#
    )
}

struct Server {
    binary: PathBuf,
    dir: PathBuf,
    port: u16,
    api_port: u16,
    child: Option<Child>,
    /// SIGKILLs so far.
    kills: usize,
}

impl Server {
    fn start(&mut self) -> anyhow::Result<()> {
        if self.child.is_some() {
            return Ok(());
        }
        let child = Command::new(&self.binary)
            .current_dir(&self.dir)
            .env_clear()
            .env("TESSERA_ADDR", format!("127.0.0.1:{}", self.port))
            .env(
                "TESSERA_PUBLIC_URL",
                format!("http://127.0.0.1:{}", self.port),
            )
            .env(
                "DATABASE_URL",
                format!("sqlite://{}", self.dir.join("drill.db").display()),
            )
            .env("TESSERA_API_TOKEN", API_TOKEN)
            .env("TESSERA_RUNNER_LEASE_SECS", LEASE_SECS)
            .env(
                "TESSERA_WORKFLOW_HTTP_HOSTS",
                format!("self,127.0.0.1:{}", self.api_port),
            )
            .env("TESSERA_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting the tessera binary")?;
        self.child = Some(child);
        Ok(())
    }

    fn kill(&mut self) -> anyhow::Result<()> {
        if let Some(mut child) = self.child.take() {
            child.kill()?;
            child.wait()?;
            self.kills += 1;
        }
        Ok(())
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.kill();
    }
}

/// Sends until the server answers (it may be starting up); `None` after 30 s.
async fn send(request: impl Fn() -> reqwest::RequestBuilder) -> Option<reqwest::Response> {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(30) {
        if let Ok(response) = request().send().await {
            return Some(response);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}

async fn run_json(client: &reqwest::Client, server: &Server, id: &str) -> anyhow::Result<Value> {
    let url = server.url(&format!("/api/runs/{id}"));
    let response = send(|| client.get(&url).bearer_auth(API_TOKEN))
        .await
        .context("the server never answered")?;
    Ok(response.json().await?)
}

/// Submits `answer` to the page run `id` waits on, once a submission is accepted (303) or the
/// run no longer waits (an earlier submission was accepted before a kill cut the answer off).
async fn answer(
    client: &reqwest::Client,
    server: &mut Server,
    rng: &mut StdRng,
    id: &str,
    answer: &str,
) -> anyhow::Result<()> {
    let started = Instant::now();
    loop {
        if started.elapsed() > Duration::from_secs(90) {
            bail!("run {id} never took its answer");
        }
        let run = run_json(client, server, id).await?;
        match run["status"].as_str() {
            Some("waiting") => {}
            Some("ready" | "running") => {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
            _ => return Ok(()),
        }
        let url = server.url(&format!("/api/runs/{id}/link"));
        let Some(response) =
            send(|| client.post(&url).bearer_auth(API_TOKEN).json(&json!({}))).await
        else {
            continue;
        };
        let Some(link) = response.json::<Value>().await?["link"]
            .as_str()
            .map(str::to_owned)
        else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let path = link
            .split_once("/p/")
            .map(|(_, token)| format!("/p/{token}"));
        let path = path.context("a page link")?;
        let html = client.get(server.url(&path)).send().await?.text().await?;
        let csrf = csrf_of(&html);
        let kill_after = rng.gen_range(0..250);
        let submission = client
            .post(server.url(&path))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("_csrf={csrf}&answer={answer}"))
            .send();
        let submitted = tokio::select! {
            sent = submission => sent.ok().map(|response| response.status().as_u16()),
            () = tokio::time::sleep(Duration::from_millis(kill_after)) => None,
        };
        if rng.gen_bool(0.7) {
            // Kill mid-submission, or right after it was accepted, or while the run resumes.
            server.kill()?;
            server.start()?;
        }
        if submitted == Some(303) {
            return Ok(());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_yaml_workflow_survives_kill_9_with_every_answer_taken_once() -> anyhow::Result<()> {
    let seed = super::crash_seed("YAML crash drill");
    let mut rng = StdRng::seed_from_u64(seed);
    let dir = tempfile::tempdir()?;
    // A copy: the shared target directory's binary may be rebuilt during the drill.
    let binary = dir.path().join("tessera");
    std::fs::copy(BINARY, &binary)?;
    let (api_port, calls) = slow_api().await?;
    std::fs::create_dir(dir.path().join("workflows"))?;
    std::fs::write(
        dir.path().join("workflows/yaml-drill.yaml"),
        workflow_file(api_port),
    )?;
    let port = restartable_port()?;
    let mut server = Server {
        binary,
        dir: dir.path().to_path_buf(),
        port,
        api_port,
        child: None,
        kills: 0,
    };
    server.start()?;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(10))
        .build()?;
    let mut runs = Vec::new();
    for index in 0..RUNS {
        let url = server.url("/api/runs");
        let body = json!({"workflow": "yaml-drill", "input": {"tag": format!("r{index}")}});
        let response = send(|| client.post(&url).bearer_auth(API_TOKEN).json(&body))
            .await
            .context("starting a run")?;
        let run: Value = response.json().await?;
        let id = run["id"].as_str().context("a run id")?.to_owned();
        if rng.gen_bool(0.5) {
            // Kill while the page is being made or its link sent.
            tokio::time::sleep(Duration::from_millis(rng.gen_range(0..300))).await;
            server.kill()?;
            server.start()?;
        }
        let given = format!("a{index}");
        answer(&client, &mut server, &mut rng, &id, &given).await?;
        runs.push((id, given));
    }
    // One more restart while the last runs finish their http and notify steps.
    tokio::time::sleep(Duration::from_millis(rng.gen_range(0..300))).await;
    server.kill()?;
    server.start()?;
    let started = Instant::now();
    for (id, given) in &runs {
        let run = loop {
            let run = run_json(&client, &server, id).await?;
            if run["status"] == "succeeded" {
                break run;
            }
            if started.elapsed() > Duration::from_secs(90) || run["status"] == "failed" {
                bail!("run {id} did not succeed: {run:#}");
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        assert_eq!(run["state"]["reply"], json!({"answer": given}), "{run:#}");
        let steps: Vec<(i64, String, String)> = run["steps"]
            .as_array()
            .context("steps")?
            .iter()
            .map(|step| {
                (
                    step["index"].as_i64().unwrap_or(-1),
                    step["name"].as_str().unwrap_or_default().to_owned(),
                    step["status"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        let names: Vec<&str> = steps.iter().map(|(_, name, _)| name.as_str()).collect();
        assert_eq!(
            names,
            ["ask", "send", "answer", "record", "route", "finish"],
            "one row per step"
        );
        assert!(
            steps.iter().all(|(_, _, status)| status == "succeeded"),
            "{steps:?}"
        );
        let calls = calls
            .lock()
            .map_err(|_| anyhow::anyhow!("poisoned"))?
            .clone();
        let mine: Vec<&(String, Value)> = calls
            .iter()
            .filter(|(key, _)| key == &format!("{id}/record"))
            .collect();
        assert!(
            !mine.is_empty(),
            "the http step called the API for run {id}"
        );
        assert!(mine
            .iter()
            .all(|(_, body)| body == &json!({"answer": given})));
    }
    eprintln!(
        "YAML crash drill: {RUNS} runs, {} kills, seed {seed}",
        server.kills
    );
    assert!(server.kills >= RUNS / 2, "the drill killed the server");
    Ok(())
}
