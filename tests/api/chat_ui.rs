//! The chat page at `/chat` as a browser without JavaScript uses it: log in, send a turn, see the
//! execution header, the preview table and the pending approval, reload, approve, see the result.
//! Nothing is deleted before the approval. The app runs on a port known before it starts so the
//! chat's executor reaches the app's own `/demo-api`.

use anyhow::Context as _;
use tessera::{
    demo::items::{
        model::{ItemFilter, ItemStatus},
        DemoItems,
    },
    store::Store,
};

use crate::helpers::{header, TestApp, FROM_ANOTHER_SITE};

pub(crate) async fn completed_count(store: &Store) -> anyhow::Result<usize> {
    let page = store
        .search_demo_items(&ItemFilter {
            status: Some(ItemStatus::Completed),
            limit: 1000,
            ..ItemFilter::default()
        })
        .await?;
    Ok(page.items.len())
}

/// Checks that `response` is a CSV download named after `operation` (`operation-….csv`), and
/// answers the file.
pub(crate) async fn csv_download(
    response: reqwest::Response,
    operation: &str,
) -> anyhow::Result<String> {
    assert_eq!(response.status(), 200);
    assert_eq!(
        header(&response, "content-type"),
        Some("text/csv; charset=utf-8")
    );
    let disposition = header(&response, "content-disposition").unwrap_or_default();
    assert!(
        disposition.starts_with(&format!("attachment; filename=\"{operation}-"))
            && disposition.ends_with(".csv\""),
        "{disposition}"
    );
    Ok(response.text().await?)
}

/// An app with the demo items seeded, and the admin's session cookie.
pub(crate) async fn seeded_app() -> anyhow::Result<(TestApp, String)> {
    let app = TestApp::builder().spawn().await?;
    DemoItems::new(app.store.clone()).ensure_seeded().await?;
    let cookie = app.admin_cookie().await?;
    Ok((app, cookie))
}

/// The admin asks the chat page to delete last month's completed items; answers the page that
/// then waits for the approval.
pub(crate) async fn ask_to_delete_last_months_completed(
    app: &TestApp,
    cookie: &str,
) -> anyhow::Result<String> {
    app.post_form(
        "/chat",
        cookie,
        "text=delete+all+completed+items+from+last+month",
    )
    .await?;
    Ok(app.get_with("/chat", cookie).await?.text().await?)
}

pub(crate) fn approval_action(html: &str) -> Option<String> {
    html.split("action=\"/chat/approvals/")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .map(|id| format!("/chat/approvals/{id}"))
}

#[tokio::test]
async fn chat_needs_the_admin_session() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let response = app.get_with("/chat", "").await?;
    assert_eq!(response.status(), 303);
    let location = header(&response, "location").unwrap_or_default();
    assert!(location.starts_with("/login?next=%2Fchat"), "{location}");
    Ok(())
}

#[tokio::test]
async fn a_cross_site_turn_is_refused() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let cookie = app.admin_cookie().await?;
    let response = app
        .post_form_with(
            "/chat",
            &cookie,
            "text=delete+all+completed+items+from+last+month",
            &FROM_ANOTHER_SITE,
        )
        .await?;
    assert_eq!(response.status(), 403);
    Ok(())
}

#[tokio::test]
async fn deleting_completed_items_previews_waits_for_approval_and_survives_reload(
) -> anyhow::Result<()> {
    let (app, cookie) = seeded_app().await?;

    let empty = app.get_with("/chat", &cookie).await?;
    assert_eq!(empty.status(), 200);
    let html = empty.text().await?;
    assert!(
        html.contains("for=\"chat-message\""),
        "the message box has a label"
    );
    assert!(html.contains("Manual tools"));
    assert!(
        html.contains("searchItems"),
        "the manual tools panel lists the operations"
    );

    let before = completed_count(&app.store).await?;
    let sent = app
        .post_form(
            "/chat",
            &cookie,
            "text=delete+all+completed+items+from+last+month".to_owned(),
        )
        .await?;
    assert_eq!(sent.status(), 303);
    assert_eq!(header(&sent, "location"), Some("/chat"));
    assert_eq!(
        completed_count(&app.store).await?,
        before,
        "nothing is deleted before the approval"
    );

    let html = app.get_with("/chat", &cookie).await?.text().await?;
    assert!(html.contains("data-testid=\"execution-header\""));
    assert!(html.contains("searchItems"));
    assert!(html.contains("data-testid=\"confirm-view\""));
    assert!(html.contains("data-testid=\"pending-approval\""));
    assert!(html.contains("bulkDeleteItems"));
    let rows = html.matches("name=\"ids\"").count();
    assert!(rows > 0, "the preview shows the items");
    assert!(
        html.contains(&format!("Delete {rows} item")),
        "a danger confirm with the count"
    );
    assert!(html.contains("bg-red-700"), "danger styling");

    // A reload (a new GET) still shows it: it lives in the store.
    let again = app.get_with("/chat", &cookie).await?.text().await?;
    let action = approval_action(&again).context("the approval survives a reload")?;
    assert_eq!(completed_count(&app.store).await?, before);

    let approved = app
        .post_form(&action, &cookie, "decision=approve".to_owned())
        .await?;
    assert_eq!(approved.status(), 303);
    assert_eq!(completed_count(&app.store).await?, before - rows);

    let html = app.get_with("/chat", &cookie).await?.text().await?;
    assert!(
        html.contains(&format!("Deleted {rows} items.")),
        "the result"
    );
    assert!(!html.contains("data-testid=\"pending-approval\""));
    assert!(html.contains("data-status=\"succeeded\""));

    // Approving twice is shown, not a crash.
    let twice = app
        .post_form(&action, &cookie, "decision=approve".to_owned())
        .await?;
    assert_eq!(twice.status(), 303);
    assert_eq!(completed_count(&app.store).await?, before - rows);
    Ok(())
}

#[tokio::test]
async fn denying_sends_nothing() -> anyhow::Result<()> {
    let (app, cookie) = seeded_app().await?;
    let before = completed_count(&app.store).await?;
    let html = ask_to_delete_last_months_completed(&app, &cookie).await?;
    let action = approval_action(&html).context("no pending approval")?;
    let denied = app
        .post_form(&action, &cookie, "decision=deny".to_owned())
        .await?;
    assert_eq!(denied.status(), 303);
    assert_eq!(completed_count(&app.store).await?, before);
    let html = app.get_with("/chat", &cookie).await?.text().await?;
    assert!(!html.contains("data-testid=\"pending-approval\""));
    Ok(())
}

#[tokio::test]
async fn history_and_a_pending_approval_survive_a_restart() -> anyhow::Result<()> {
    let (app, cookie) = seeded_app().await?;
    let before = completed_count(&app.store).await?;
    let html = ask_to_delete_last_months_completed(&app, &cookie).await?;
    let action = approval_action(&html).context("no pending approval")?;

    let restarted = TestApp::builder().dir(app.stop().await?).spawn().await?;
    let html = restarted.get_with("/chat", &cookie).await?.text().await?;
    assert!(
        html.contains("delete all completed items from last month"),
        "the history survives"
    );
    assert_eq!(
        approval_action(&html),
        Some(action.clone()),
        "so does the approval"
    );
    let approved = restarted
        .post_form(&action, &cookie, "decision=approve".to_owned())
        .await?;
    assert_eq!(approved.status(), 303);
    assert!(completed_count(&restarted.store).await? < before);
    Ok(())
}

/// The ids the confirm view offers, in table order.
fn offered_ids(html: &str) -> Vec<String> {
    html.split("name=\"ids\"")
        .skip(1)
        .filter_map(|rest| rest.split("value=\"").nth(1))
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn the_confirm_form_approves_only_the_ticked_items_and_refuses_an_empty_selection(
) -> anyhow::Result<()> {
    let (app, cookie) = seeded_app().await?;
    let before = completed_count(&app.store).await?;
    let html = ask_to_delete_last_months_completed(&app, &cookie).await?;
    let action = approval_action(&html).context("no pending approval")?;
    let offered = offered_ids(&html);
    anyhow::ensure!(offered.len() >= 2, "the preview offers {offered:?}");
    assert!(html.contains("value=\"operation\""), "the scope choice");
    assert!(html.contains("value=\"session\""));

    // Nothing ticked: the page comes back (422) with a message, the approval still there.
    let empty = app
        .post_form(&action, &cookie, "_action=submit&scope=once".to_owned())
        .await?;
    assert_eq!(empty.status(), 422);
    let page = empty.text().await?;
    assert!(page.contains("Tick at least one item"), "{page}");
    assert_eq!(offered_ids(&page).len(), offered.len());
    assert_eq!(
        page.matches(" checked").count(),
        1,
        "the person's answer is kept: no item ticked, scope `once`"
    );
    assert_eq!(completed_count(&app.store).await?, before);

    // An id the preview never showed is refused the same way.
    let outsider = app
        .post_form(
            &action,
            &cookie,
            "_action=submit&scope=once&ids=item-9999".to_owned(),
        )
        .await?;
    assert_eq!(outsider.status(), 422);
    assert_eq!(completed_count(&app.store).await?, before);

    // Two ticked: exactly two are deleted.
    let body = format!(
        "_action=submit&scope=once&ids={}&ids={}",
        offered[0], offered[1]
    );
    let approved = app.post_form(&action, &cookie, body).await?;
    assert_eq!(approved.status(), 303);
    assert_eq!(completed_count(&app.store).await?, before - 2);
    let html = app.get_with("/chat", &cookie).await?.text().await?;
    assert!(
        html.contains("narrowed by the person to 2 of"),
        "the header says so"
    );
    assert!(html.contains("data-testid=\"result-view\""));
    Ok(())
}

#[tokio::test]
async fn the_result_view_offers_csv_and_json_downloads_of_every_item() -> anyhow::Result<()> {
    let (app, cookie) = seeded_app().await?;
    let html = ask_to_delete_last_months_completed(&app, &cookie).await?;
    let action = approval_action(&html).context("no pending approval")?;
    let offered = offered_ids(&html);
    let approved = app
        .post_form(
            &action,
            &cookie,
            "_action=submit&scope=once".to_owned()
                + &offered
                    .iter()
                    .map(|id| format!("&ids={id}"))
                    .collect::<String>(),
        )
        .await?;
    assert_eq!(approved.status(), 303);
    let html = app.get_with("/chat", &cookie).await?.text().await?;
    assert!(html.contains("data-testid=\"result-view\""), "{html}");
    let link = html
        .split("href=\"/chat/results/")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .context("a download link")?;
    let csv = app
        .get_with(&format!("/chat/results/{link}/download.csv"), &cookie)
        .await?;
    let body = csv_download(csv, "bulkDeleteItems").await?;
    let mut lines = body.lines();
    assert_eq!(lines.next(), Some("id,title,status,error"));
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), offered.len(), "one row per item: {body}");
    for id in &offered {
        assert!(
            rows.iter()
                .any(|row| row.starts_with(&format!("{id},")) && row.contains(",succeeded,")),
            "{id} in {body}"
        );
    }
    let json = app
        .get_with(&format!("/chat/results/{link}/download.json"), &cookie)
        .await?;
    assert_eq!(header(&json, "content-type"), Some("application/json"));
    let items: Vec<serde_json::Value> = json.json().await?;
    assert_eq!(items.len(), offered.len());
    assert!(items.iter().all(|item| item["status"] == "succeeded"));

    // Another admin browser has its own chat session: not its result.
    let other = app.admin_cookie().await?;
    let elsewhere = app
        .get_with(&format!("/chat/results/{link}/download.csv"), &other)
        .await?;
    assert_eq!(elsewhere.status(), 404);
    // Logged out: the login page.
    let anonymous = app
        .get_with(&format!("/chat/results/{link}/download.csv"), "")
        .await?;
    assert_eq!(anonymous.status(), 303);
    Ok(())
}

#[tokio::test]
async fn deny_in_the_confirm_form_sends_nothing() -> anyhow::Result<()> {
    let (app, cookie) = seeded_app().await?;
    let before = completed_count(&app.store).await?;
    let html = ask_to_delete_last_months_completed(&app, &cookie).await?;
    let action = approval_action(&html).context("no pending approval")?;
    let ids: String = offered_ids(&html)
        .iter()
        .map(|id| format!("&ids={id}"))
        .collect();
    let denied = app
        .post_form(&action, &cookie, format!("_action=cancel&scope=once{ids}"))
        .await?;
    assert_eq!(denied.status(), 303);
    assert_eq!(completed_count(&app.store).await?, before);
    let html = app.get_with("/chat", &cookie).await?.text().await?;
    assert!(!html.contains("data-testid=\"pending-approval\""));
    assert!(html.contains("data-status=\"declined\""));
    Ok(())
}
