//! What a person sees on `/chat`: a read's result as a generated table that pages and sorts by
//! plain links over the rows stored with the turn (the site is not asked again), a long list cut
//! and said so, CSV and JSON downloads of the stored rows; an update's approval saying per item
//! `old → new` and in one line, with the tool and the hash only under Details. On SQLite and on
//! PostgreSQL.

use anyhow::Context as _;
use tessera::demo::items::{
    model::{Item, ItemFilter, ItemId, ItemStatus},
    seed::seed_items,
    DemoItems,
};
use tessera::store::{now_ms, Store};

use crate::{
    chat_ui::csv_download,
    helpers::{header, on_both_backends, Backend, TestApp},
};

on_both_backends!(
    a_read_is_a_table_that_pages_and_sorts_over_the_rows_stored_with_the_turn,
    a_long_read_is_cut_says_so_and_downloads_the_stored_rows,
    asking_how_many_by_a_field_shows_counts_computed_from_the_rows,
    an_update_approval_says_old_to_new_per_item_and_in_one_line,
);

/// Every `item-NNNN` id the page shows, in page order (each once).
fn shown_ids(html: &str) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for part in html.split("item-").skip(1) {
        let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
        if digits.len() == 4 {
            let id = format!("item-{digits}");
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    ids
}

/// The first `href` whose value contains every one of `parts`, unescaped.
fn link_with(html: &str, parts: &[&str]) -> Option<String> {
    html.split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(|href| href.replace("&amp;", "&"))
        .find(|href| parts.iter().all(|part| href.contains(part)))
}

async fn open_items(store: &Store) -> anyhow::Result<Vec<Item>> {
    Ok(store
        .search_demo_items(&ItemFilter {
            status: Some(ItemStatus::Open),
            limit: 1000,
            ..ItemFilter::default()
        })
        .await?
        .items)
}

async fn chat(app: &TestApp, cookie: &str, query: &str) -> anyhow::Result<String> {
    let response = app.get_with(&format!("/chat{query}"), cookie).await?;
    anyhow::ensure!(
        response.status() == 200,
        "GET /chat{query}: {}",
        response.status()
    );
    Ok(response.text().await?)
}

async fn a_read_is_a_table_that_pages_and_sorts_over_the_rows_stored_with_the_turn(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    DemoItems::new(app.store.clone()).ensure_seeded().await?;
    let open = open_items(&app.store).await?;
    assert!(open.len() > 25, "the seed has more open items than a page");
    let cookie = app.admin_cookie().await?;
    let sent = app
        .post_form("/chat", &cookie, "text=show+me+the+open+items".to_owned())
        .await?;
    assert_eq!(sent.status(), 303);

    let html = chat(&app, &cookie, "").await?;
    assert!(html.contains("data-testid=\"read-view\""), "{html}");
    let first_page = shown_ids(&html);
    assert_eq!(first_page.len(), 25, "one page of rows: {first_page:?}");
    let open_ids: Vec<String> = open.iter().map(|item| item.id.0.clone()).collect();
    assert!(first_page.iter().all(|id| open_ids.contains(id)));
    assert!(
        html.contains("Show me the open items"),
        "the view is headed by the request"
    );

    // The site changes (every open item deleted): paging shows the rows stored with the turn.
    let ids: Vec<ItemId> = open.iter().map(|item| item.id.clone()).collect();
    app.store.bulk_delete_demo_items(&ids).await?;
    let next = link_with(&html, &["page="]).context("a next-page link")?;
    assert!(next.starts_with("?page=v"), "{next}");
    let second = chat(&app, &cookie, &next).await?;
    let second_page = shown_ids(&second);
    assert_eq!(second_page.len(), 25, "{second_page:?}");
    assert!(second_page
        .iter()
        .all(|id| open_ids.contains(id) && !first_page.contains(id)));

    // Sorting by title is a link too, over the same stored rows.
    let sort = link_with(&html, &["sort=", ".title"]).context("a sort link on the title")?;
    let sorted = chat(&app, &cookie, &sort).await?;
    let mut titles: Vec<(String, String)> = open
        .iter()
        .map(|item| (item.title.to_lowercase(), item.id.0.clone()))
        .collect();
    titles.sort();
    let first_title = &titles[0].0;
    let shown = shown_ids(&sorted);
    let first_shown = open
        .iter()
        .find(|item| Some(&item.id.0) == shown.first())
        .context("a row")?;
    assert_eq!(&first_shown.title.to_lowercase(), first_title, "{sort}");
    app.cleanup().await?;
    Ok(())
}

async fn a_long_read_is_cut_says_so_and_downloads_the_stored_rows(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    // 1250 items: the site returns at most 1000, the chat keeps 500 of them.
    let seed = seed_items(now_ms());
    let mut items: Vec<Item> = Vec::new();
    for _ in 0..5 {
        for item in &seed {
            let mut item = item.clone();
            item.id = ItemId(format!("item-{:04}", items.len() + 1));
            items.push(item);
        }
    }
    app.store.seed_demo_items(&items).await?;
    let cookie = app.admin_cookie().await?;
    app.post_form(
        "/chat",
        &cookie,
        "text=%2Ftool+searchItems+--limit+1000".to_owned(),
    )
    .await?;
    let html = chat(&app, &cookie, "").await?;
    assert!(html.contains("data-testid=\"read-view\""), "{html}");
    assert!(
        html.contains("The site returned 1000 items; only the first 500 are kept"),
        "{html}"
    );
    assert!(html.contains("The site says 1250 items match"), "{html}");

    let csv_link = link_with(&html, &["/chat/reads/", ".csv"]).context("a CSV link")?;
    let csv = app.get_with(&csv_link, &cookie).await?;
    let body = csv_download(csv, "searchItems").await?;
    let mut lines = body.lines();
    let first_line = lines.next().unwrap_or_default().to_owned();
    assert!(
        first_line.starts_with("id,title,status,priority"),
        "{first_line}"
    );
    assert_eq!(lines.count(), 500, "the stored rows, no more");

    let json_link = link_with(&html, &["/chat/reads/", ".json"]).context("a JSON link")?;
    let json = app.get_with(&json_link, &cookie).await?;
    assert_eq!(header(&json, "content-type"), Some("application/json"));
    let rows: Vec<serde_json::Value> = json.json().await?;
    assert_eq!(rows.len(), 500);
    assert!(
        rows[0]["description"].is_string(),
        "as the site sent it: {}",
        rows[0]
    );

    // Another admin browser has its own chat session: not its rows.
    let other = app.admin_cookie().await?;
    assert_eq!(app.get_with(&csv_link, &other).await?.status(), 404);
    app.cleanup().await?;
    Ok(())
}

async fn asking_how_many_by_a_field_shows_counts_computed_from_the_rows(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    DemoItems::new(app.store.clone()).ensure_seeded().await?;
    let open = open_items(&app.store).await?;
    let cookie = app.admin_cookie().await?;
    app.post_form(
        "/chat",
        &cookie,
        "text=show+me+the+open+items%2C+how+many+grouped+by+priority%2C+with+a+chart".to_owned(),
    )
    .await?;
    let html = chat(&app, &cookie, "").await?;
    assert!(html.contains("data-testid=\"read-view\""), "{html}");
    // The number is code's count of the stored rows, and the chart counts them per priority.
    assert!(
        html.contains(&format!(">{}</p>", open.len())),
        "a stat with the count: {html}"
    );
    assert!(html.contains("Items per priority"), "a chart: {html}");
    for priority in ["low", "medium", "high"] {
        let count = open
            .iter()
            .filter(|item| item.priority.as_str() == priority)
            .count();
        assert!(
            html.contains(&format!("<td>{priority}</td><td>{count}</td>"))
                || html.contains(&format!(">{priority}</td><td class=\"px-3 py-2 align-top text-sm text-slate-800 dark:text-slate-200\">{count}</td>")),
            "{priority}: {count} in {html}"
        );
    }
    app.cleanup().await?;
    Ok(())
}

async fn an_update_approval_says_old_to_new_per_item_and_in_one_line(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    DemoItems::new(app.store.clone()).ensure_seeded().await?;
    let low_open = open_items(&app.store)
        .await?
        .into_iter()
        .filter(|item| item.priority.as_str() == "low")
        .count();
    let cookie = app.admin_cookie().await?;
    app.post_form(
        "/chat",
        &cookie,
        "text=set+all+open+low+priority+items+to+medium+priority".to_owned(),
    )
    .await?;
    let html = chat(&app, &cookie, "").await?;
    assert!(
        html.contains(&format!(
            "Set priority to medium on {low_open} items (now low)"
        )),
        "{html}"
    );
    assert_eq!(
        html.matches("low → medium").count(),
        low_open,
        "one cell per item"
    );
    // The tool and the hash are only inside the collapsed Details.
    let details_start = html
        .find("data-testid=\"approval-details\"")
        .context("Details")?;
    let card_start = html
        .find("data-testid=\"pending-approval\"")
        .context("the card")?;
    let before_details = &html[card_start..details_start];
    assert!(
        !before_details.contains("bulkUpdateItems"),
        "{before_details}"
    );
    assert!(!before_details.contains('`'));
    assert!(html[details_start..].contains("bulkUpdateItems"));
    app.cleanup().await?;
    Ok(())
}
