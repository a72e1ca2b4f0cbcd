//! A page answered through a view an MCP host holds: the same decoding, validation and
//! exactly-once recording as a POST to the page's link, on a real SQLite store.

use serde_json::json;
use tessera::{
    pages::{
        component_set::UnknownComponent,
        lifecycle::{open_view, submit_view, Opened, Submitted, Viewed},
        page::{NewPage, Page, PageStatus},
        token::PageToken,
    },
    store::{now_ms, Store},
    workflow::run::RunStatus,
};
use tessera_app::catalog::Catalog;

use crate::helpers::{bare_run, TestDb};

const RECEIPTS: std::time::Duration = std::time::Duration::from_secs(3600);

fn catalog(_page: &Page) -> Result<Catalog, UnknownComponent> {
    Ok(Catalog::defaults())
}

/// An open page asking for a note of at least three characters, with a view; its link's token.
async fn page_with_view(store: &Store) -> anyhow::Result<(Page, PageToken, PageToken)> {
    let run = bare_run(store, "notes", RunStatus::Waiting).await?;
    let token = PageToken::generate();
    let page = store
        .create_page(&NewPage {
            token_hash: token.hash(),
            run_id: Some(run.id),
            tree: json!({"nodes": {
                "f": {"component": "Form", "props": {}, "children": ["n", "go"]},
                "n": {"component": "Input", "props": {"name": "note", "label": "Note", "required": true}},
                "go": {"component": "Button", "props": {"label": "Save"}}
            }, "order": ["f"]}),
            schema: Some(json!({"type": "object", "required": ["note"],
                "properties": {"note": {"type": "string", "minLength": 3}}})),
            data: json!({}),
            component_set: None,
            expires_at_ms: now_ms() + 60_000,
        })
        .await?;
    let view = PageToken::generate();
    anyhow::ensure!(store.add_page_view(run.id, &view.hash(), now_ms()).await?);
    Ok((page, token, view))
}

#[tokio::test]
async fn a_view_answers_its_page_once_after_a_wrong_value_kept_for_correction() -> anyhow::Result<()>
{
    let database = TestDb::sqlite().await?;
    let store = &database.store;
    let (page, _token, view) = page_with_view(store).await?;
    let submit = |body: &'static str| {
        submit_view(
            store,
            &catalog,
            view.as_str(),
            body.as_bytes(),
            now_ms(),
            RECEIPTS,
        )
    };
    // Too short: the page again with the person's value, nothing recorded.
    match submit("note=hi").await? {
        Submitted::Invalid(_, form) => {
            assert_eq!(form.values.get("note"), Some(&vec!["hi".to_owned()]));
            assert!(!form.errors.is_empty());
        }
        other => anyhow::bail!("expected the page again, got {other:?}"),
    }
    assert_eq!(store.page(page.id).await?.status, PageStatus::Open);
    // Right: recorded, and the run may go on.
    assert!(matches!(
        submit("note=hello").await?,
        Submitted::Accepted(_)
    ));
    let answered = store.page(page.id).await?;
    assert_eq!(answered.status, PageStatus::Submitted);
    assert_eq!(answered.response, Some(json!({"note": "hello"})));
    // Once: a second submission gets the receipt, the first answer stands.
    assert!(matches!(
        submit("note=again").await?,
        Submitted::AlreadySubmitted(_)
    ));
    assert_eq!(
        store.page(page.id).await?.response,
        Some(json!({"note": "hello"}))
    );
    assert!(matches!(
        open_view(store, view.as_str(), now_ms(), RECEIPTS).await?,
        Viewed::Page(opened) if matches!(*opened, Opened::Receipt(_))
    ));
    database.cleanup().await
}

#[tokio::test]
async fn only_the_view_itself_reaches_the_page() -> anyhow::Result<()> {
    let database = TestDb::sqlite().await?;
    let store = &database.store;
    let (page, token, _view) = page_with_view(store).await?;
    for stranger in [
        token.as_str().to_owned(),
        PageToken::generate().as_str().to_owned(),
        "not-a-view".to_owned(),
        String::new(),
    ] {
        let submitted = submit_view(
            store,
            &catalog,
            &stranger,
            b"note=hello",
            now_ms(),
            RECEIPTS,
        )
        .await?;
        assert!(
            matches!(submitted, Submitted::NotFound),
            "{stranger}: {submitted:?}"
        );
    }
    assert_eq!(store.page(page.id).await?.status, PageStatus::Open);
    database.cleanup().await
}

#[tokio::test]
async fn a_view_given_before_its_page_waits_for_it_and_says_when_it_never_comes(
) -> anyhow::Result<()> {
    let database = TestDb::sqlite().await?;
    let store = &database.store;
    let mut views = Vec::new();
    for _ in 0..2 {
        let run = bare_run(store, "notes", RunStatus::Running).await?;
        let view = PageToken::generate();
        anyhow::ensure!(store.add_page_view(run.id, &view.hash(), now_ms()).await?);
        views.push((run, view));
    }
    assert_eq!(
        open_view(store, views[0].1.as_str(), now_ms(), RECEIPTS).await?,
        Viewed::Preparing
    );
    // A submission before any form was shown reaches nothing.
    let early = submit_view(
        store,
        &catalog,
        views[0].1.as_str(),
        b"note=hello",
        now_ms(),
        RECEIPTS,
    )
    .await?;
    assert!(matches!(early, Submitted::NotFound), "{early:?}");
    // The second run is cancelled before making its page: its view says so instead of waiting.
    store.cancel_run(views[1].0.id, now_ms()).await?;
    assert_eq!(
        open_view(store, views[1].1.as_str(), now_ms(), RECEIPTS).await?,
        Viewed::Unmade
    );
    database.cleanup().await
}
