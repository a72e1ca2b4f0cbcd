//! `tessera backup` and `tessera restore` on the real binary and a live SQLite database: a
//! backup taken while pages are being answered from several tasks holds every page answered
//! before it started, as submitted; a restore is refused while a server holds the database and
//! accepted once it stopped, and the restored server serves the answered pages. On PostgreSQL
//! both commands point to `pg_dump`/`pg_restore` and exit 2.

use std::{
    path::Path,
    process::{Command, Output},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use anyhow::{bail, Context as _};
use serde_json::{json, Value};

use crate::{
    helpers::API_TOKEN,
    process::{answer, ask, client, ServerProcess, BINARY},
};

/// Settings for every server here: runs claimed by a process that stopped are taken over fast.
const SETTINGS: &[(&str, &str)] = &[("TESSERA_RUNNER_LEASE_SECS", "2")];

/// Runs `tessera <arguments>` against `database_url` off the executor.
async fn tessera(folder: &Path, database_url: &str, arguments: &[&str]) -> anyhow::Result<Output> {
    let mut command = Command::new(BINARY);
    command
        .current_dir(folder)
        .env_remove("TESSERA_CONFIG")
        .env("DATABASE_URL", database_url)
        .args(arguments);
    Ok(tokio::task::spawn_blocking(move || command.output()).await??)
}

/// One answered page: what was submitted, and when the ask was made and the answer taken.
struct Answered {
    id: String,
    text: String,
    asked: Instant,
    taken: Instant,
}

/// Asks and answers pages one after another until `stop`, recording each answer taken.
async fn answer_pages(
    server: Arc<ServerProcess>,
    worker: usize,
    answered: Arc<Mutex<Vec<Answered>>>,
    stop: tokio_util::sync::CancellationToken,
) -> anyhow::Result<()> {
    let client = client()?;
    let mut index = 0;
    while !stop.is_cancelled() {
        let asked = Instant::now();
        let page = ask(&client, &server, &format!("claim {worker}-{index}")).await?;
        let text = format!("approved by worker {worker}, page {index}");
        let status = answer(&client, &server, &page, &text).await?;
        anyhow::ensure!(status == 303, "the answer was not taken: {status}");
        let taken = Instant::now();
        answered
            .lock()
            .map_err(|_| anyhow::anyhow!("poisoned"))?
            .push(Answered {
                id: page.id,
                text,
                asked,
                taken,
            });
        index += 1;
    }
    Ok(())
}

async fn ask_json(
    client: &reqwest::Client,
    server: &ServerProcess,
    id: &str,
) -> anyhow::Result<(u16, Value)> {
    let response = client
        .get(server.url(&format!("/api/asks/{id}")))
        .bearer_auth(API_TOKEN)
        .send()
        .await?;
    let status = response.status().as_u16();
    Ok((status, response.json().await.unwrap_or(Value::Null)))
}

#[tokio::test]
async fn a_backup_taken_while_pages_are_answered_holds_them_and_restores_once_the_server_stopped(
) -> anyhow::Result<()> {
    let folder = tempfile::tempdir()?;
    let database_url = format!("sqlite://{}", folder.path().join("live.db").display());
    let copy = folder.path().join("copy.db");
    let server = Arc::new(ServerProcess::start(folder.path(), &database_url, SETTINGS).await?);
    let answered = Arc::new(Mutex::new(Vec::new()));
    let stop = tokio_util::sync::CancellationToken::new();
    let workers: Vec<_> = (0..4)
        .map(|worker| {
            tokio::spawn(answer_pages(
                server.clone(),
                worker,
                answered.clone(),
                stop.clone(),
            ))
        })
        .collect();
    let started = Instant::now();
    while answered
        .lock()
        .map_err(|_| anyhow::anyhow!("poisoned"))?
        .len()
        < 20
    {
        if started.elapsed() > Duration::from_secs(60) {
            bail!("pages are not being answered: {}", server.log_text());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let backup_started = Instant::now();
    let backup = tessera(
        folder.path(),
        &database_url,
        &["backup", &copy.to_string_lossy()],
    )
    .await?;
    let backup_ended = Instant::now();
    assert!(
        backup.status.success(),
        "backup failed: {}",
        String::from_utf8_lossy(&backup.stderr)
    );
    // Answers go on after the backup, so the restore below must really bring back the copy.
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.cancel();
    for worker in workers {
        worker.await??;
    }
    let answered = std::mem::take(&mut *answered.lock().map_err(|_| anyhow::anyhow!("poisoned"))?);
    let before: Vec<&Answered> = answered
        .iter()
        .filter(|page| page.taken <= backup_started)
        .collect();
    let after: Vec<&Answered> = answered
        .iter()
        .filter(|page| page.asked >= backup_ended)
        .collect();
    assert!(
        before.len() >= 20,
        "{} answered before the backup",
        before.len()
    );
    assert!(!after.is_empty(), "nothing was asked after the backup");

    let refused = tessera(
        folder.path(),
        &database_url,
        &["restore", &copy.to_string_lossy()],
    )
    .await?;
    assert!(
        !refused.status.success(),
        "a restore under a running server must be refused"
    );
    let refusal = String::from_utf8_lossy(&refused.stderr);
    assert!(refusal.contains("running server"), "{refusal}");
    let server = Arc::into_inner(server).context("the workers are done")?;
    server.stop().await?;

    let restored = tessera(
        folder.path(),
        &database_url,
        &["restore", &copy.to_string_lossy()],
    )
    .await?;
    assert!(
        restored.status.success(),
        "restore failed: {}",
        String::from_utf8_lossy(&restored.stderr)
    );
    let server = ServerProcess::start(folder.path(), &database_url, SETTINGS).await?;
    let client = client()?;
    for page in &before {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let (status, ask) = ask_json(&client, &server, &page.id).await?;
            assert_eq!(
                status, 200,
                "ask {} is missing from the restored database",
                page.id
            );
            if ask["status"] == "submitted" {
                assert_eq!(ask["response"], json!({"answer": page.text}), "{ask:#}");
                break;
            }
            if Instant::now() > deadline {
                bail!("ask {} never resumed after the restore: {ask:#}", page.id);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    for page in &after {
        let (status, _) = ask_json(&client, &server, &page.id).await?;
        assert_eq!(status, 404, "ask {} was made after the backup", page.id);
    }
    server.stop().await
}

#[tokio::test]
async fn a_restore_refuses_a_file_that_is_not_a_tessera_database() -> anyhow::Result<()> {
    let folder = tempfile::tempdir()?;
    let database_url = format!("sqlite://{}", folder.path().join("live.db").display());
    let not_a_backup = folder.path().join("notes.db");
    std::fs::write(&not_a_backup, "not a database at all")?;
    let output = tessera(
        folder.path(),
        &database_url,
        &["restore", &not_a_backup.to_string_lossy()],
    )
    .await?;
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("is not a Tessera database"), "{stderr}");
    assert!(
        !folder.path().join("live.db").exists(),
        "nothing was put in place"
    );
    Ok(())
}

#[tokio::test]
async fn on_postgres_backup_and_restore_point_to_pg_dump_and_exit_2() -> anyhow::Result<()> {
    let folder = tempfile::tempdir()?;
    let database_url = "postgres://tessera:secret-password@127.0.0.1:5432/tessera";
    for (command, tool) in [("backup", "pg_dump"), ("restore", "pg_restore")] {
        let output = tessera(folder.path(), database_url, &[command, "copy.dump"]).await?;
        assert_eq!(output.status.code(), Some(2), "{command}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(tool), "{stderr}");
        assert!(!stderr.contains("secret-password"), "{stderr}");
    }
    Ok(())
}
