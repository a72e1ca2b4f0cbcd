//! Upgrades, on the real binary and both engines: a database made by the previous release
//! (`tests/data/upgrade`, made by its `make-fixtures.sh`) opens with this binary and migrates; its
//! answered ask reads back as answered, its waiting ask's link still opens and an answer resumes
//! the run to `succeeded`, and `/metrics` counts what the old release counted. A database
//! migrated by a newer Tessera is refused in one line, exit code 2, before anything is touched.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};

use anyhow::{bail, Context as _};
use serde_json::{json, Value};
use tessera::config::DatabaseUrl;

use crate::{
    helpers::{FreshPostgres, API_TOKEN},
    process::{answer, client, PageToAnswer, ServerProcess, BINARY},
};

/// The newest migration of this build: every upgraded database must list it.
const NEWEST_MIGRATION: i64 = 20_261_128_200_000;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/upgrade")
}

/// What `make-fixtures.sh` recorded for `engine`: ids, the waiting ask's path, the old metrics.
fn recorded(engine: &str) -> anyhow::Result<Value> {
    let text = std::fs::read_to_string(fixtures().join("fixture.json"))?;
    let all: Value = serde_json::from_str(&text)?;
    anyhow::ensure!(
        all["api_token"] == API_TOKEN,
        "the fixtures were made with another API token"
    );
    Ok(all[engine].clone())
}

/// `psql`: the one of the newest PostgreSQL server install, as `scripts/with-postgres.sh` picks.
fn psql() -> PathBuf {
    let mut installed: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path().join("bin/psql"))
                .filter(|path| path.exists())
                .collect()
        })
        .unwrap_or_default();
    installed.sort();
    installed.pop().unwrap_or_else(|| PathBuf::from("psql"))
}

async fn api_json(
    client: &reqwest::Client,
    server: &ServerProcess,
    path: &str,
) -> anyhow::Result<Value> {
    let response = client
        .get(server.url(path))
        .bearer_auth(API_TOKEN)
        .send()
        .await?;
    anyhow::ensure!(
        response.status() == 200,
        "GET {path}: {}",
        response.status()
    );
    Ok(response.json().await?)
}

/// The non-zero samples of the gauge `family` in `lines` (Prometheus text).
fn non_zero<'a>(family: &str, lines: impl Iterator<Item = &'a str>) -> BTreeMap<String, f64> {
    let prefix = format!("{family}{{");
    lines
        .filter(|line| line.starts_with(&prefix))
        .filter_map(|line| line.rsplit_once(' '))
        .filter_map(|(series, value)| Some((series.to_owned(), value.parse::<f64>().ok()?)))
        .filter(|(_, value)| *value != 0.0)
        .collect()
}

async fn upgraded_database_serves_what_the_old_release_left(
    engine: &str,
    folder: &Path,
    database_url: &str,
) -> anyhow::Result<()> {
    let old = recorded(engine)?;
    let server = ServerProcess::start(folder, database_url, &[]).await?;
    let client = client()?;

    // The counters the old release computed from the rows, now kept by triggers and filled
    // from those rows by the migration that made them.
    let metrics = client
        .get(server.url("/metrics"))
        .send()
        .await?
        .text()
        .await?;
    let old_metrics = old["metrics"].as_array().context("recorded metrics")?;
    assert_eq!(
        non_zero("tessera_runs", metrics.lines()),
        non_zero("tessera_runs", old_metrics.iter().filter_map(Value::as_str)),
        "{metrics}"
    );
    // The old release had no page gauge: its database holds one answered page and one open.
    assert_eq!(
        non_zero("tessera_pages", metrics.lines()),
        BTreeMap::from([
            ("tessera_pages{status=\"open\"}".to_owned(), 1.0),
            ("tessera_pages{status=\"submitted\"}".to_owned(), 1.0),
        ]),
        "{metrics}"
    );

    let answered_id = old["answered"]["id"].as_str().context("answered id")?;
    let answered = api_json(&client, &server, &format!("/api/asks/{answered_id}")).await?;
    assert_eq!(answered["status"], "submitted", "{answered:#}");
    assert_eq!(
        answered["response"], old["answered"]["response"],
        "{answered:#}"
    );

    let waiting = PageToAnswer {
        id: old["waiting"]["id"]
            .as_str()
            .context("waiting id")?
            .to_owned(),
        path: old["waiting"]["path"]
            .as_str()
            .context("waiting path")?
            .to_owned(),
    };
    let before = api_json(&client, &server, &format!("/api/asks/{}", waiting.id)).await?;
    assert_eq!(before["status"], "waiting", "{before:#}");
    let page = client.get(server.url(&waiting.path)).send().await?;
    assert_eq!(page.status(), 200, "the old link opens");
    let status = answer(&client, &server, &waiting, "approved after the upgrade").await?;
    assert_eq!(status, 303, "the answer is taken");
    let started = Instant::now();
    let run = loop {
        let run = api_json(&client, &server, &format!("/api/runs/{}", waiting.id)).await?;
        if run["status"] == "succeeded" {
            break run;
        }
        if started.elapsed() > Duration::from_secs(20) {
            bail!("the resumed run never succeeded: {run:#}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let after = api_json(&client, &server, &format!("/api/asks/{}", waiting.id)).await?;
    assert_eq!(after["status"], "submitted", "{after:#} {run:#}");
    assert_eq!(
        after["response"],
        json!({"answer": "approved after the upgrade"}),
        "{after:#}"
    );
    server.stop().await
}

/// The versions `_sqlx_migrations` lists as applied.
async fn applied_migrations(database_url: &str) -> anyhow::Result<Vec<i64>> {
    let url = DatabaseUrl::parse(database_url).map_err(anyhow::Error::msg)?;
    tessera_store::testing::applied_migrations(&url).await
}

/// Copies the SQLite fixture into `folder`: the test works on a copy, never on the fixture.
fn copied_sqlite_fixture(folder: &Path) -> anyhow::Result<String> {
    let copy = folder.join("old.db");
    std::fs::copy(fixtures().join("sqlite.db"), &copy)?;
    Ok(format!("sqlite://{}", copy.display()))
}

/// Loads the PostgreSQL fixture into `database` with `psql`, stopping at the first error.
async fn load_postgres_fixture(database: &FreshPostgres) -> anyhow::Result<()> {
    let mut command = Command::new(psql());
    command
        .args(["-q", "-v", "ON_ERROR_STOP=1", "-d", &database.url, "-f"])
        .arg(fixtures().join("postgres.sql"));
    let output = tokio::task::spawn_blocking(move || command.output()).await??;
    anyhow::ensure!(
        output.status.success(),
        "psql: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(())
}

/// Marks `database_url` as migrated by a newer Tessera, then starts the binary on it.
async fn refused(
    folder: &Path,
    database_url: &str,
    future_row: &str,
) -> anyhow::Result<std::process::Output> {
    ServerProcess::start(folder, database_url, &[])
        .await?
        .stop()
        .await?;
    let url = DatabaseUrl::parse(database_url).map_err(anyhow::Error::msg)?;
    tessera_store::testing::execute(&url, future_row).await?;
    let mut command = Command::new(BINARY);
    command
        .current_dir(folder)
        .env_remove("TESSERA_CONFIG")
        .env("TESSERA_ADDR", "127.0.0.1:0")
        .env("DATABASE_URL", database_url)
        .env("TESSERA_API_TOKEN", API_TOKEN)
        .env("TESSERA_ADMIN_PASSWORD", "process-admin-password");
    Ok(tokio::task::spawn_blocking(move || command.output()).await??)
}

fn assert_refused_in_one_line(output: &std::process::Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        "tessera: the database at DATABASE_URL was migrated by a newer Tessera (migration \
         20990101000000 unknown to this build); use that version or restore a backup",
    );
}

mod sqlite {
    use super::*;

    #[tokio::test]
    async fn the_previous_release_s_database_migrates_and_its_waiting_run_resumes(
    ) -> anyhow::Result<()> {
        let folder = tempfile::tempdir()?;
        let url = copied_sqlite_fixture(folder.path())?;
        assert!(!applied_migrations(&url).await?.contains(&NEWEST_MIGRATION));
        upgraded_database_serves_what_the_old_release_left("sqlite", folder.path(), &url).await?;
        assert!(applied_migrations(&url).await?.contains(&NEWEST_MIGRATION));
        Ok(())
    }

    #[tokio::test]
    async fn a_database_from_a_newer_release_is_refused_in_one_line() -> anyhow::Result<()> {
        let folder = tempfile::tempdir()?;
        let url = format!("sqlite://{}", folder.path().join("newer.db").display());
        let output = refused(
            folder.path(),
            &url,
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
             VALUES (20990101000000, 'from a newer release', TRUE, X'00', 0)",
        )
        .await?;
        assert_refused_in_one_line(&output);
        Ok(())
    }
}

mod postgres {
    use super::*;

    #[tokio::test]
    async fn the_previous_release_s_database_migrates_and_its_waiting_run_resumes(
    ) -> anyhow::Result<()> {
        let Some(database) = FreshPostgres::create().await? else {
            return Ok(());
        };
        load_postgres_fixture(&database).await?;
        let folder = tempfile::tempdir()?;
        assert!(!applied_migrations(&database.url)
            .await?
            .contains(&NEWEST_MIGRATION));
        upgraded_database_serves_what_the_old_release_left(
            "postgres",
            folder.path(),
            &database.url,
        )
        .await?;
        assert!(applied_migrations(&database.url)
            .await?
            .contains(&NEWEST_MIGRATION));
        database.drop_database().await
    }

    #[tokio::test]
    async fn a_database_from_a_newer_release_is_refused_in_one_line() -> anyhow::Result<()> {
        let Some(database) = FreshPostgres::create().await? else {
            return Ok(());
        };
        let folder = tempfile::tempdir()?;
        let output = refused(
            folder.path(),
            &database.url,
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
             VALUES (20990101000000, 'from a newer release', TRUE, '\\x00'::bytea, 0)",
        )
        .await?;
        assert_refused_in_one_line(&output);
        database.drop_database().await
    }
}
