//! The store contract: every test here runs unchanged on SQLite and on PostgreSQL.

use std::sync::Arc;

use serde_json::json;
use tessera_store::{
    now_ms,
    records::{
        component_set::ComponentSet,
        generation::{GenerationOutcome, GenerationRecord},
        page::{NewPage, PageStatus, SubmitOutcome},
        page_cache::CacheLookup,
        run::{NewRun, RunId, RunStatus},
        token::PageToken,
    },
    testing::TestDb,
    DatabaseUrl, Store, StoreError,
};

/// Runs each named contract test (an `async fn(&Store) -> anyhow::Result<()>` here) once on a
/// fresh SQLite database and once on a fresh PostgreSQL database.
macro_rules! store_contract {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $name() -> anyhow::Result<()> {
                    let database = super::TestDb::sqlite().await?;
                    let outcome = super::$name(&database.store).await;
                    database.cleanup().await?;
                    outcome
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test]
                async fn $name() -> anyhow::Result<()> {
                    let Some(database) = super::TestDb::postgres().await? else { return Ok(()) };
                    let outcome = super::$name(&database.store).await;
                    database.cleanup().await?;
                    outcome
                }
            )*
        }
    };
}

store_contract!(
    a_created_run_reads_back_with_its_state,
    an_unknown_run_is_not_found,
    runs_are_counted_by_status,
    a_setting_is_stored_only_once,
    a_generation_record_round_trips,
    a_page_is_found_by_its_token_hash_only,
    a_page_is_submitted_once_and_its_run_made_ready,
    twenty_concurrent_submissions_record_exactly_one,
    an_expired_page_refuses_submission,
    an_unknown_token_submission_is_not_found,
    a_duplicate_token_hash_is_a_conflict,
    a_page_keeps_the_component_set_it_was_made_with,
    a_view_is_given_only_to_an_open_page_and_is_not_its_link,
);

async fn waiting_run(store: &Store) -> anyhow::Result<RunId> {
    let run = store
        .create_run(&NewRun {
            workflow: "email-digest".into(),
            state: json!({"emails": 3}),
            status: RunStatus::Waiting,
        })
        .await?;
    Ok(run.id)
}

fn new_page(token: &PageToken, run_id: Option<RunId>, expires_at_ms: i64) -> NewPage {
    NewPage {
        token_hash: token.hash(),
        run_id,
        tree: json!({"nodes": {}, "order": []}),
        schema: Some(json!({"type": "object", "properties": {"note": {"type": "string"}}})),
        data: json!({"emails": []}),
        component_set: None,
        expires_at_ms,
    }
}

async fn a_page_keeps_the_component_set_it_was_made_with(store: &Store) -> anyhow::Result<()> {
    let set: ComponentSet = [
        ("Form".to_owned(), "built-in".to_owned()),
        ("Heading".to_owned(), "0123456789abcdef".to_owned()),
    ]
    .into_iter()
    .collect();
    let token = PageToken::generate();
    let created = store
        .create_page(&NewPage {
            component_set: Some(set.clone()),
            ..new_page(&token, None, now_ms() + 60_000)
        })
        .await?;
    assert_eq!(created.component_set.as_ref(), Some(&set));
    let read = store.page_by_token(&token.hash()).await?;
    assert_eq!(read.component_set, Some(set));
    let older = PageToken::generate();
    store
        .create_page(&new_page(&older, None, now_ms() + 60_000))
        .await?;
    assert_eq!(
        store.page_by_token(&older.hash()).await?.component_set,
        None
    );
    Ok(())
}

async fn a_created_run_reads_back_with_its_state(store: &Store) -> anyhow::Result<()> {
    let created = store
        .create_run(&NewRun {
            workflow: "email-digest".into(),
            state: json!({"emails": ["a", "b"], "note": "é"}),
            status: RunStatus::Ready,
        })
        .await?;
    let read = store.run(created.id).await?;
    assert_eq!(read, created);
    assert_eq!(read.status, RunStatus::Ready);
    assert_eq!(read.state["emails"], json!(["a", "b"]));
    assert_eq!(read.cursor, 0);
    Ok(())
}

async fn an_unknown_run_is_not_found(store: &Store) -> anyhow::Result<()> {
    assert!(matches!(
        store.run(RunId::new()).await,
        Err(StoreError::NotFound)
    ));
    Ok(())
}

async fn runs_are_counted_by_status(store: &Store) -> anyhow::Result<()> {
    for status in [RunStatus::Ready, RunStatus::Ready, RunStatus::Waiting] {
        store
            .create_run(&NewRun {
                workflow: "w".into(),
                state: json!({}),
                status,
            })
            .await?;
    }
    let counts = store.count_runs_by_status().await?;
    assert_eq!(counts, vec![(RunStatus::Ready, 2), (RunStatus::Waiting, 1)]);
    Ok(())
}

async fn a_setting_is_stored_only_once(store: &Store) -> anyhow::Result<()> {
    assert_eq!(store.setting("k").await?, None);
    assert!(store.put_setting_if_absent("k", "first").await?);
    assert!(!store.put_setting_if_absent("k", "second").await?);
    assert_eq!(store.setting("k").await?.as_deref(), Some("first"));
    Ok(())
}

async fn a_generation_record_round_trips(store: &Store) -> anyhow::Result<()> {
    let record = GenerationRecord {
        id: uuid::Uuid::new_v4(),
        model: "gpt-4.1-mini".into(),
        provider: "openai".into(),
        prompt_hash: "ab".repeat(32),
        outcome: GenerationOutcome::FellBack,
        turns: 4,
        tokens_in: 1200,
        tokens_out: 300,
        latency_ms: 812,
        cache_hit: false,
        cache_lookup: Some(CacheLookup::Stale),
        transcript: json!([{"tool": "Heading", "arguments": {"text": "Hi"}, "result": {"id": "c1"}}]),
        tree: Some(json!({"nodes": {}, "order": []})),
        created_at_ms: now_ms(),
    };
    store.insert_generation(&record).await?;
    assert_eq!(store.generation(record.id).await?, record);
    assert!(matches!(
        store.insert_generation(&record).await,
        Err(StoreError::Conflict(_))
    ));
    Ok(())
}

async fn a_page_is_found_by_its_token_hash_only(store: &Store) -> anyhow::Result<()> {
    let token = PageToken::generate();
    let created = store
        .create_page(&new_page(&token, None, now_ms() + 60_000))
        .await?;
    let found = store.page_by_token(&token.hash()).await?;
    assert_eq!(found, created);
    assert_eq!(found.status, PageStatus::Open);
    assert!(matches!(
        store.page_by_token(&PageToken::generate().hash()).await,
        Err(StoreError::NotFound)
    ));
    Ok(())
}

async fn a_page_is_submitted_once_and_its_run_made_ready(store: &Store) -> anyhow::Result<()> {
    let run_id = waiting_run(store).await?;
    let token = PageToken::generate();
    store
        .create_page(&new_page(&token, Some(run_id), now_ms() + 60_000))
        .await?;
    let first = store
        .submit_page(&token.hash(), &json!({"note": "first"}), now_ms())
        .await?;
    let SubmitOutcome::Submitted(recorded) = first else {
        anyhow::bail!("first submission refused: {first:?}")
    };
    assert_eq!(recorded.run_id, Some(run_id));
    let page = store.page(recorded.page_id).await?;
    assert_eq!(page.status, PageStatus::Submitted);
    assert_eq!(page.submitted_at_ms, Some(recorded.submitted_at_ms));
    assert_eq!(page.response, Some(json!({"note": "first"})));
    assert_eq!(store.run(run_id).await?.status, RunStatus::Ready);
    let second = store
        .submit_page(&token.hash(), &json!({"note": "second"}), now_ms())
        .await?;
    let SubmitOutcome::AlreadySubmitted(receipt) = second else {
        anyhow::bail!("second submission not refused: {second:?}")
    };
    assert_eq!(receipt.response, Some(json!({"note": "first"})));
    Ok(())
}

async fn twenty_concurrent_submissions_record_exactly_one(store: &Store) -> anyhow::Result<()> {
    let run_id = waiting_run(store).await?;
    let token = Arc::new(PageToken::generate());
    store
        .create_page(&new_page(&token, Some(run_id), now_ms() + 60_000))
        .await?;
    let mut tasks = Vec::new();
    for attempt in 0..20 {
        let store = store.clone();
        let token = Arc::clone(&token);
        tasks.push(tokio::spawn(async move {
            store
                .submit_page(&token.hash(), &json!({"note": attempt}), now_ms())
                .await
        }));
    }
    let mut submitted = Vec::new();
    let mut refused = 0;
    for (attempt, task) in tasks.into_iter().enumerate() {
        match task.await?? {
            SubmitOutcome::Submitted(_) => submitted.push(attempt),
            SubmitOutcome::AlreadySubmitted(_) => refused += 1,
            other => anyhow::bail!("unexpected outcome {other:?}"),
        }
    }
    assert_eq!(submitted.len(), 1, "exactly one submission wins");
    assert_eq!(refused, 19);
    let stored = store.page_by_token(&token.hash()).await?;
    assert_eq!(
        stored.response,
        Some(json!({"note": submitted[0]})),
        "the stored response is the winner's"
    );
    assert_eq!(store.run(run_id).await?.status, RunStatus::Ready);
    Ok(())
}

async fn an_expired_page_refuses_submission(store: &Store) -> anyhow::Result<()> {
    let run_id = waiting_run(store).await?;
    let token = PageToken::generate();
    let expires = now_ms() + 1_000;
    store
        .create_page(&new_page(&token, Some(run_id), expires))
        .await?;
    let outcome = store
        .submit_page(&token.hash(), &json!({"note": "late"}), expires + 1)
        .await?;
    assert_eq!(outcome, SubmitOutcome::Expired);
    assert_eq!(
        store.run(run_id).await?.status,
        RunStatus::Waiting,
        "an expired submission must not resume the run"
    );
    assert_eq!(store.page_by_token(&token.hash()).await?.response, None);
    Ok(())
}

async fn an_unknown_token_submission_is_not_found(store: &Store) -> anyhow::Result<()> {
    let outcome = store
        .submit_page(&PageToken::generate().hash(), &json!({}), now_ms())
        .await?;
    assert_eq!(outcome, SubmitOutcome::NotFound);
    Ok(())
}

async fn a_duplicate_token_hash_is_a_conflict(store: &Store) -> anyhow::Result<()> {
    let token = PageToken::generate();
    store
        .create_page(&new_page(&token, None, now_ms() + 60_000))
        .await?;
    let again = store
        .create_page(&new_page(&token, None, now_ms() + 60_000))
        .await;
    assert!(matches!(again, Err(StoreError::Conflict(_))), "{again:?}");
    Ok(())
}

#[tokio::test]
async fn reopening_an_sqlite_file_keeps_its_data_and_migrations() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let url = DatabaseUrl::Sqlite(dir.path().join("again.db").to_string_lossy().into_owned());
    let first = Store::connect(&url).await?;
    let run = first
        .create_run(&NewRun {
            workflow: "w".into(),
            state: json!({"k": 1}),
            status: RunStatus::Ready,
        })
        .await?;
    first.close().await;
    let second = Store::connect(&url).await?;
    assert_eq!(second.run(run.id).await?, run);
    Ok(())
}

async fn a_view_is_given_only_to_an_open_page_and_is_not_its_link(
    store: &Store,
) -> anyhow::Result<()> {
    let run_id = waiting_run(store).await?;
    // Given when the ask starts: it shows nothing until the run makes its page.
    let view = PageToken::generate();
    assert!(store.add_page_view(run_id, &view.hash(), now_ms()).await?);
    assert_eq!(store.page_by_view(&view.hash()).await?, (run_id, None));
    let token = PageToken::generate();
    let page = store
        .create_page(&new_page(&token, Some(run_id), now_ms() + 60_000))
        .await?;
    assert_eq!(
        store.page_by_view(&view.hash()).await?,
        (run_id, Some(page.clone()))
    );
    // The view and the link are two keys: neither opens the page as the other.
    assert!(matches!(
        store.page_by_view(&token.hash()).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.page_by_token(&view.hash()).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.page_by_view(&PageToken::generate().hash()).await,
        Err(StoreError::NotFound)
    ));
    // No run, no view.
    let orphan = PageToken::generate();
    assert!(
        !store
            .add_page_view(RunId::new(), &orphan.hash(), now_ms())
            .await?
    );
    // Once answered, the page takes no new views; the one given still finds it (its receipt).
    let submitted = store
        .submit_page(&token.hash(), &json!({"note": "done"}), now_ms())
        .await?;
    assert!(
        matches!(submitted, SubmitOutcome::Submitted(_)),
        "{submitted:?}"
    );
    let late = PageToken::generate();
    assert!(!store.add_page_view(run_id, &late.hash(), now_ms()).await?);
    assert!(matches!(
        store.page_by_view(&late.hash()).await,
        Err(StoreError::NotFound)
    ));
    let (_, shown) = store.page_by_view(&view.hash()).await?;
    assert_eq!(shown.map(|page| page.status), Some(PageStatus::Submitted));
    Ok(())
}
