//! Named people (issue 27): assignees with a link each, who answered, N of M approvals, and
//! Decline with a reason — in the store on both engines (racing on two pools, as two processes
//! would) and end to end through the asks API.

use anyhow::Context as _;
use serde_json::{json, Value};
use tessera::{
    config::Secret,
    notify::{NotifyConfig, RecipientAllowlist},
    pages::people::People,
    pages::{
        page::{NewPage, PageStatus},
        people::{Given, Settled},
        token::PageToken,
    },
    startup::Options,
    store::{
        answers::AssigneeAnswered,
        now_ms,
        pages::{NewAssignee, PagePeople},
        Store,
    },
    workflow::yaml::{parse_file, YamlWorkflow},
    workflow::{
        run::{RunId, RunStatus},
        wait_for, workflow, Answer, PageHandle, Prompt, Registry, UiOptions, Unanswered,
    },
};

use crate::{
    asks::{answered_by, assignee_links, page_path, submit, wait_for_ask},
    helpers::{bare_run, on_both_backends, store_contract, Backend, HttpSink, TestApp, TestDb},
};

mod store {
    use super::*;

    store_contract!(
        two_of_three_stay_open_after_one_approval_and_settle_on_the_second,
        declines_settle_only_when_the_approvals_can_no_longer_come,
        later_links_work_beside_the_first_until_a_reissue_ends_them,
    );
}

mod api {
    use super::*;

    on_both_backends!(
        three_assignees_two_required_answer_through_their_own_links,
        a_decline_with_a_reason_ends_the_ask_and_reaches_the_callback,
        an_assignee_outside_the_allowlist_is_refused_naming_them,
        a_page_without_assignees_is_declined_with_its_reason,
        a_yaml_workflow_asks_two_people_and_branches_on_the_outcome,
        a_yaml_workflow_asks_in_two_stages,
        a_rust_workflow_names_assignees_and_hears_a_decline,
    );
}

mod racing {
    #[tokio::test]
    async fn sqlite() -> anyhow::Result<()> {
        let database = crate::helpers::TestDb::sqlite().await?;
        let outcome = super::two_processes_answering_at_once_settle_the_page_once(&database).await;
        database.cleanup().await?;
        outcome
    }

    #[tokio::test]
    async fn postgres() -> anyhow::Result<()> {
        let Some(database) = crate::helpers::TestDb::postgres().await? else {
            return Ok(());
        };
        let outcome = super::two_processes_answering_at_once_settle_the_page_once(&database).await;
        database.cleanup().await?;
        outcome
    }

    #[tokio::test]
    async fn group_sqlite() -> anyhow::Result<()> {
        let database = crate::helpers::TestDb::sqlite().await?;
        let outcome =
            super::two_members_of_one_group_answering_at_once_cast_one_vote(&database).await;
        database.cleanup().await?;
        outcome
    }

    #[tokio::test]
    async fn group_postgres() -> anyhow::Result<()> {
        let Some(database) = crate::helpers::TestDb::postgres().await? else {
            return Ok(());
        };
        let outcome =
            super::two_members_of_one_group_answering_at_once_cast_one_vote(&database).await;
        database.cleanup().await?;
        outcome
    }
}

async fn waiting_run(store: &Store) -> anyhow::Result<RunId> {
    let run = bare_run(store, "approval", RunStatus::Waiting).await?;
    Ok(run.id)
}

/// A page for `count` assignees of whom `required` must approve; their tokens, in order.
async fn assigned_page(
    store: &Store,
    run_id: RunId,
    count: usize,
    required: u32,
) -> anyhow::Result<(tessera::pages::page::PageId, Vec<PageToken>)> {
    assigned_page_in_groups(store, run_id, &vec![None; count], required).await
}

/// A page for one assignee per entry of `groups` (the group each answers for, if any), of which
/// `required` votes must approve; their tokens, in order.
async fn assigned_page_in_groups(
    store: &Store,
    run_id: RunId,
    groups: &[Option<&str>],
    required: u32,
) -> anyhow::Result<(tessera::pages::page::PageId, Vec<PageToken>)> {
    let tokens: Vec<PageToken> = groups.iter().map(|_| PageToken::generate()).collect();
    let assignees = tokens
        .iter()
        .zip(groups)
        .enumerate()
        .map(|(index, (token, group))| NewAssignee {
            email: format!("person{index}@example.com"),
            token_hash: token.hash(),
            group: group.map(str::to_owned),
        })
        .collect();
    let page = store
        .create_page_for(
            &NewPage {
                token_hash: PageToken::generate().hash(),
                run_id: Some(run_id),
                tree: json!({"nodes": {}, "order": []}),
                schema: Some(json!({"type": "object", "properties": {"ok": {"type": "boolean"}}})),
                data: json!({}),
                component_set: None,
                expires_at_ms: now_ms() + 60_000,
            },
            &PagePeople {
                assignees,
                required,
                decline_reason_required: false,
                sign_in_required: false,
                timers: Vec::new(),
                stages: Vec::new(),
            },
        )
        .await?;
    Ok((page.id, tokens))
}

fn settled(outcome: &AssigneeAnswered) -> Option<Settled> {
    match outcome {
        AssigneeAnswered::Recorded { settled, .. } => Some(*settled),
        _ => None,
    }
}

async fn two_of_three_stay_open_after_one_approval_and_settle_on_the_second(
    store: &Store,
) -> anyhow::Result<()> {
    let run_id = waiting_run(store).await?;
    let (page_id, tokens) = assigned_page(store, run_id, 3, 2).await?;
    let approve = |ok: bool| Given::Answer(json!({ "ok": ok }));

    let first = store
        .answer_as_assignee(&tokens[0].hash(), &approve(true), now_ms())
        .await?;
    assert_eq!(settled(&first), Some(Settled::Open));
    assert_eq!(store.page(page_id).await?.status, PageStatus::Open);
    assert_eq!(store.run(run_id).await?.status, RunStatus::Waiting);
    let again = store
        .answer_as_assignee(&tokens[0].hash(), &approve(false), now_ms())
        .await?;
    assert_eq!(
        again,
        AssigneeAnswered::AlreadyAnswered,
        "one answer per person"
    );

    let second = store
        .answer_as_assignee(&tokens[1].hash(), &approve(false), now_ms())
        .await?;
    assert_eq!(settled(&second), Some(Settled::Submitted));
    let page = store.page(page_id).await?;
    assert_eq!(page.status, PageStatus::Submitted);
    assert_eq!(
        page.response,
        Some(json!({"ok": false})),
        "the answer that completed the approvals"
    );
    assert_eq!(store.run(run_id).await?.status, RunStatus::Ready);

    let third = store
        .answer_as_assignee(&tokens[2].hash(), &approve(true), now_ms())
        .await?;
    assert_eq!(third, AssigneeAnswered::Decided);
    let people = store.assignees_of(page_id).await?;
    let answered: Vec<bool> = people
        .iter()
        .map(|person| person.answer.is_some())
        .collect();
    assert_eq!(answered, [true, true, false]);
    assert_eq!(
        people[0]
            .answer
            .as_ref()
            .and_then(|answer| answer.response.clone()),
        Some(json!({"ok": true})),
        "the first person's own answer is kept"
    );
    Ok(())
}

async fn declines_settle_only_when_the_approvals_can_no_longer_come(
    store: &Store,
) -> anyhow::Result<()> {
    let decline = |reason: &str| Given::Decline(Some(reason.to_owned()));
    // Two of three: one approval and one decline leave the third able to decide.
    let run_id = waiting_run(store).await?;
    let (page_id, tokens) = assigned_page(store, run_id, 3, 2).await?;
    let approved = store
        .answer_as_assignee(
            &tokens[0].hash(),
            &Given::Answer(json!({"ok": true})),
            now_ms(),
        )
        .await?;
    assert_eq!(settled(&approved), Some(Settled::Open));
    let one_no = store
        .answer_as_assignee(&tokens[1].hash(), &decline("not yet"), now_ms())
        .await?;
    assert_eq!(settled(&one_no), Some(Settled::Open));
    assert_eq!(store.run(run_id).await?.status, RunStatus::Waiting);
    let two_no = store
        .answer_as_assignee(&tokens[2].hash(), &decline("over budget"), now_ms())
        .await?;
    assert_eq!(settled(&two_no), Some(Settled::Declined));
    let page = store.page(page_id).await?;
    assert_eq!(page.status, PageStatus::Submitted);
    let response = page.response.context("a settled page has a response")?;
    assert_eq!(Unanswered::of(&response), Some(Unanswered::Declined));
    let decline_record = tessera::workflow::declined_by(&response);
    assert_eq!(decline_record.reason.as_deref(), Some("over budget"));
    assert_eq!(decline_record.by.as_deref(), Some("person2@example.com"));
    assert_eq!(store.run(run_id).await?.status, RunStatus::Ready);

    // Everyone must approve: the first decline ends it.
    let run_id = waiting_run(store).await?;
    let (page_id, tokens) = assigned_page(store, run_id, 3, 3).await?;
    let first_no = store
        .answer_as_assignee(&tokens[1].hash(), &Given::Decline(None), now_ms())
        .await?;
    assert_eq!(settled(&first_no), Some(Settled::Declined));
    assert_eq!(store.page(page_id).await?.status, PageStatus::Submitted);
    Ok(())
}

/// A reminder or the inbox gives a person another link: the one in their first mail keeps
/// working beside the newest few, and an explicit reissue ends every earlier one.
async fn later_links_work_beside_the_first_until_a_reissue_ends_them(
    store: &Store,
) -> anyhow::Result<()> {
    let run_id = waiting_run(store).await?;
    let (page_id, tokens) = assigned_page(store, run_id, 2, 2).await?;
    let later: Vec<PageToken> = (0..6).map(|_| PageToken::generate()).collect();
    for (at, token) in later.iter().enumerate() {
        let given = store
            .add_assignee_link(page_id, 1, &token.hash(), now_ms() + i64::try_from(at)?)
            .await?;
        assert!(given, "link {at} given");
    }
    let opens = |token: &PageToken| {
        let hash = token.hash();
        async move {
            match store.assignee_by_token(&hash).await {
                Ok((_, assignee)) => Some(assignee.email),
                Err(_) => None,
            }
        }
    };
    let second = Some("person1@example.com".to_owned());
    assert_eq!(
        opens(&tokens[1]).await,
        second,
        "the first mail's link still works"
    );
    for (at, token) in later.iter().enumerate() {
        let expected = if at >= 2 { second.clone() } else { None };
        assert_eq!(
            opens(token).await,
            expected,
            "later link {at}: only the newest four work"
        );
    }
    // An explicit reissue: a fresh first link, every earlier one ended.
    let fresh = PageToken::generate();
    assert!(
        store
            .reissue_assignee_link(page_id, 1, &fresh.hash())
            .await?
    );
    assert_eq!(opens(&tokens[1]).await, None);
    assert_eq!(opens(&later[5]).await, None);
    assert_eq!(opens(&fresh).await, second);
    // An answer through a later link is that person's, once; then no more links are given.
    let newer = PageToken::generate();
    assert!(
        store
            .add_assignee_link(page_id, 1, &newer.hash(), now_ms())
            .await?
    );
    let given = Given::Answer(json!({"ok": true}));
    let answered = store
        .answer_as_assignee(&newer.hash(), &given, now_ms())
        .await?;
    assert_eq!(settled(&answered), Some(Settled::Open), "{answered:?}");
    let again = store
        .answer_as_assignee(&fresh.hash(), &given, now_ms())
        .await?;
    assert_eq!(again, AssigneeAnswered::AlreadyAnswered);
    let another = PageToken::generate();
    assert!(
        !store
            .add_assignee_link(page_id, 1, &another.hash(), now_ms())
            .await?
    );
    assert_eq!(
        opens(&tokens[0]).await,
        Some("person0@example.com".to_owned())
    );
    Ok(())
}

/// Two people answer at the same moment through two pools on one database, as two server
/// processes would: the page is settled exactly once and nothing is missed, every time.
async fn two_processes_answering_at_once_settle_the_page_once(
    database: &TestDb,
) -> anyhow::Result<()> {
    let other = database.reopen().await?;
    let store = &database.store;
    for round in 0..12 {
        // Both needed (the quorum must not be missed), or either enough (settled only once).
        let required = if round % 2 == 0 { 2 } else { 1 };
        let run_id = waiting_run(store).await?;
        let (page_id, tokens) = assigned_page(store, run_id, 2, required).await?;
        let given = Given::Answer(json!({"ok": true}));
        let (first_hash, second_hash) = (tokens[0].hash(), tokens[1].hash());
        let (first, second) = tokio::join!(
            store.answer_as_assignee(&first_hash, &given, now_ms()),
            other.answer_as_assignee(&second_hash, &given, now_ms()),
        );
        let outcomes = [first?, second?];
        let settling = outcomes
            .iter()
            .filter(|outcome| settled(outcome) == Some(Settled::Submitted))
            .count();
        assert_eq!(settling, 1, "round {round}: {outcomes:?}");
        if required == 2 {
            assert!(
                outcomes.iter().all(|outcome| settled(outcome).is_some()),
                "both answers recorded: {outcomes:?}"
            );
        } else {
            assert!(
                outcomes.contains(&AssigneeAnswered::Decided),
                "the later answer finds it decided: {outcomes:?}"
            );
        }
        assert_eq!(store.page(page_id).await?.status, PageStatus::Submitted);
        assert_eq!(store.run(run_id).await?.status, RunStatus::Ready);
    }
    other.close().await;
    Ok(())
}

/// Two members of one group answer at the same moment through two pools, as two server
/// processes would: the store counts one vote for the group, whichever commits first, so a page
/// that needs two votes stays open until someone outside the group answers.
async fn two_members_of_one_group_answering_at_once_cast_one_vote(
    database: &TestDb,
) -> anyhow::Result<()> {
    let other = database.reopen().await?;
    let store = &database.store;
    for round in 0..8 {
        let run_id = waiting_run(store).await?;
        let groups = [Some("finance"), Some("finance"), None];
        let (page_id, tokens) = assigned_page_in_groups(store, run_id, &groups, 2).await?;
        let given = Given::Answer(json!({"ok": true}));
        let (first_hash, second_hash) = (tokens[0].hash(), tokens[1].hash());
        let (first, second) = tokio::join!(
            store.answer_as_assignee(&first_hash, &given, now_ms()),
            other.answer_as_assignee(&second_hash, &given, now_ms()),
        );
        let outcomes = [first?, second?];
        let recorded = outcomes
            .iter()
            .filter(|outcome| settled(outcome) == Some(Settled::Open))
            .count();
        assert_eq!(
            recorded, 1,
            "round {round}: one vote for the group: {outcomes:?}"
        );
        assert!(
            outcomes.contains(&AssigneeAnswered::AlreadyAnswered),
            "round {round}: the other member finds the group has voted: {outcomes:?}"
        );
        assert_eq!(
            store.page(page_id).await?.status,
            PageStatus::Open,
            "round {round}"
        );
        let third = store
            .answer_as_assignee(&tokens[2].hash(), &given, now_ms())
            .await?;
        assert_eq!(settled(&third), Some(Settled::Submitted), "round {round}");
        assert_eq!(store.run(run_id).await?.status, RunStatus::Ready);
    }
    other.close().await;
    Ok(())
}

/// An app whose asks may name anyone `@example.com`, signing callbacks.
async fn spawn_people_app(backend: Backend) -> anyhow::Result<TestApp> {
    spawn_people_app_calling(backend, None).await
}

/// The people app, admitting `sink` as the receiver of its asks' callbacks.
async fn spawn_people_app_calling(
    backend: Backend,
    sink: Option<&HttpSink>,
) -> anyhow::Result<TestApp> {
    TestApp::builder()
        .backend(backend)
        .config(|config| {
            if let Some(sink) = sink {
                sink.admit_in(config);
            }
            config.notify = NotifyConfig {
                webhook_secret: Some(Secret::new("whsec_people_0123456789abcdef")),
                ask_recipients: RecipientAllowlist {
                    email: vec!["@example.com".into()],
                    ..RecipientAllowlist::default()
                },
                ..NotifyConfig::default()
            };
        })
        .spawn()
        .await
}

fn approval_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"note": {"type": "string", "title": "Note"}},
    })
}

/// Creates an ask; answers its id and each person's page path, by address.
async fn create_assigned(
    app: &TestApp,
    body: &Value,
) -> anyhow::Result<(String, Vec<(String, String)>)> {
    let response = app.api_post("/api/asks", body).await?;
    let status = response.status();
    let created: Value = response.json().await?;
    assert_eq!(status, 201, "{created:#}");
    assert!(
        created["link"].is_null(),
        "no shared link beside the assignees': {created:#}"
    );
    let links = created["links"].as_array().context("links")?;
    let mut paths = Vec::new();
    for link in links {
        let assignee = link["assignee"].as_str().context("assignee")?.to_owned();
        paths.push((assignee, page_path(link["link"].as_str().context("link")?)?));
    }
    Ok((created["id"].as_str().context("an id")?.to_owned(), paths))
}

async fn three_assignees_two_required_answer_through_their_own_links(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = spawn_people_app(backend).await?;
    let (id, paths) = create_assigned(
        &app,
        &json!({"prompt": "Approve the Q3 budget?", "schema": approval_schema(),
                "assignees": ["ana@example.com", "bo@example.com", "cy@example.com"],
                "approvals": {"required": 2}}),
    )
    .await?;
    let people: Vec<&str> = paths.iter().map(|(person, _)| person.as_str()).collect();
    assert_eq!(
        people,
        ["ana@example.com", "bo@example.com", "cy@example.com"]
    );
    assert_ne!(
        paths[0].1, paths[1].1,
        "each person has a link of their own"
    );

    let ana = app.get(&paths[0].1).await?.text().await?;
    assert!(
        ana.contains("For ana@example.com."),
        "the page says whom it is for"
    );
    assert_eq!(
        ana.matches("data-testid=\"decline\"").count(),
        1,
        "one Decline is offered"
    );
    assert!(
        !ana.contains("value=\"cancel\""),
        "nobody cancels for everyone: the page for named people has no Cancel"
    );
    assert_eq!(submit(&app, &paths[0].1, "note=fine").await?.status(), 303);
    let open = app.api_json(&format!("/api/asks/{id}")).await?;
    assert_eq!(open["status"], "waiting", "one approval of two: {open:#}");
    assert_eq!(open["answers"].as_array().map(Vec::len), Some(1));
    assert_eq!(open["answers"][0]["answered_by"], "ana@example.com");
    assert_eq!(open["answers"][0]["outcome"], "submitted");
    assert_eq!(open["answers"][0]["response"], json!({"note": "fine"}));
    assert!(open["answers"][0]["at"]
        .as_str()
        .is_some_and(|at| at.ends_with('Z')));

    // A second POST on the same person's link is refused and changes nothing.
    let again = submit(&app, &paths[0].1, "note=changed").await?;
    assert_eq!(again.status(), 409);

    // One person's link is reissued: theirs only; the earlier one stops working.
    let reissued = app
        .api_post(
            &format!("/api/asks/{id}/reissue"),
            &json!({"assignee": "bo@example.com"}),
        )
        .await?;
    assert_eq!(reissued.status(), 200);
    let reissued: Value = reissued.json().await?;
    let fresh = reissued["links"].as_array().context("links")?;
    assert_eq!(fresh.len(), 1, "{reissued:#}");
    assert_eq!(fresh[0]["assignee"], "bo@example.com");
    let bo = page_path(fresh[0]["link"].as_str().context("link")?)?;
    assert_eq!(app.get(&paths[1].1).await?.status(), 404, "bo's old link");
    assert_eq!(
        app.get(&paths[0].1).await?.status(),
        200,
        "ana's link is untouched"
    );
    let answered_already = app
        .api_post(
            &format!("/api/asks/{id}/reissue"),
            &json!({"assignee": "ana@example.com"}),
        )
        .await?;
    assert_eq!(
        answered_already.status(),
        409,
        "ana answered: no new link for her"
    );

    assert_eq!(submit(&app, &bo, "note=go").await?.status(), 303);
    let done = wait_for_ask(&app, &id, |ask| ask["status"] == "submitted").await?;
    assert_eq!(
        done["response"],
        json!({"note": "go"}),
        "the answer that completed the quorum"
    );
    let by = answered_by(&done)?;
    assert_eq!(by, ["ana@example.com", "bo@example.com"]);
    assert_eq!(done["approvals_required"], 2);

    // The third link now shows the decision and who made it; answering it is refused.
    let cy = app.get(&paths[2].1).await?;
    assert_eq!(cy.status(), 200);
    let cy = cy.text().await?;
    assert!(
        cy.contains("approved by ana@example.com, bo@example.com"),
        "the third link shows the decision: {cy}"
    );
    assert_eq!(submit(&app, &paths[2].1, "note=late").await?.status(), 409);
    let after = app.api_json(&format!("/api/asks/{id}")).await?;
    assert_eq!(after["answers"].as_array().map(Vec::len), Some(2));

    // The run page lists who answered.
    let run_page = app.admin_html(&format!("/runs/{id}")).await?;
    assert!(
        run_page.contains("data-testid=\"page-answers\""),
        "{run_page}"
    );
    assert!(run_page.contains("2 of 3 approvals needed"));
    for person in ["ana@example.com", "bo@example.com"] {
        assert!(run_page.contains(person), "{person} on the run page");
    }
    assert!(run_page.contains("Not answered yet: cy@example.com"));
    app.cleanup().await
}

async fn a_decline_with_a_reason_ends_the_ask_and_reaches_the_callback(
    backend: Backend,
) -> anyhow::Result<()> {
    let sink = HttpSink::start(&[]).await?;
    let app = spawn_people_app_calling(backend, Some(&sink)).await?;
    let (id, paths) = create_assigned(
        &app,
        &json!({"prompt": "Ship the release?", "schema": approval_schema(),
                "assignees": ["ana@example.com", "bo@example.com"],
                "approvals": {"required": 2}, "decline": {"reason": "required"},
                "callback_url": sink.url("/hooks/people")?.as_str()}),
    )
    .await?;
    // A Decline without the reason this ask requires is shown again, naming the box.
    let bare = submit(&app, &paths[1].1, "note=x&_action=decline&_reason=+").await?;
    assert_eq!(bare.status(), 422);
    let html = bare.text().await?;
    assert!(html.contains("Say why you decline"), "{html}");
    assert_eq!(
        app.api_json(&format!("/api/asks/{id}")).await?["status"],
        "waiting"
    );

    let declined = submit(&app, &paths[1].1, "_action=decline&_reason=Not+tested+yet").await?;
    assert_eq!(declined.status(), 303);
    let ask = wait_for_ask(&app, &id, |ask| ask["callback"]["state"] == "delivered").await?;
    assert_eq!(
        ask["status"], "declined",
        "two required, one declined: {ask:#}"
    );
    assert!(ask["response"].is_null());
    assert_eq!(
        ask["answers"],
        json!([{"answered_by": "bo@example.com", "at": ask["answers"][0]["at"], "outcome": "declined", "reason": "Not tested yet"}])
    );
    let delivered: Value = serde_json::from_slice(&sink.seen()[0].body)?;
    assert_eq!(delivered["status"], "declined");
    assert_eq!(delivered["answers"][0]["reason"], "Not tested yet");
    assert_eq!(delivered["answers"][0]["answered_by"], "bo@example.com");

    // Ana's link now shows the ask was declined, and by whom.
    let ana = app.get(&paths[0].1).await?.text().await?;
    assert!(ana.contains("declined by bo@example.com"), "{ana}");
    app.cleanup().await
}

async fn an_assignee_outside_the_allowlist_is_refused_naming_them(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = spawn_people_app(backend).await?;
    let response = app
        .api_post(
            "/api/asks",
            &json!({"prompt": "Approve?", "assignees": ["ana@example.com", "eve@elsewhere.org"]}),
        )
        .await?;
    assert_eq!(response.status(), 422);
    let body: Value = response.json().await?;
    assert_eq!(body["error"]["field"], "assignees[1]");
    assert!(body["error"]["message"]
        .as_str()
        .is_some_and(|message| message.contains("eve@elsewhere.org")));
    app.cleanup().await
}

async fn a_page_without_assignees_is_declined_with_its_reason(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = spawn_people_app(backend).await?;
    let (id, path) = crate::asks::create(
        &app,
        &json!({"prompt": "Approve?", "schema": approval_schema()}),
    )
    .await?;
    let html = app.get(&path).await?.text().await?;
    assert!(
        html.contains("data-testid=\"decline\""),
        "every page that takes an answer offers Decline"
    );
    assert!(
        !html.contains("data-testid=\"page-for\""),
        "an anonymous link is for no one in particular"
    );
    let declined = submit(&app, &path, "_action=decline&_reason=Wrong+quarter").await?;
    assert_eq!(declined.status(), 303);
    let ask = wait_for_ask(&app, &id, |ask| ask["status"] == "declined").await?;
    assert_eq!(ask["answers"][0]["answered_by"], Value::Null);
    assert_eq!(ask["answers"][0]["outcome"], "declined");
    assert_eq!(ask["answers"][0]["reason"], "Wrong quarter");
    let last = &ask["history"][ask["history"]
        .as_array()
        .map_or(0, Vec::len)
        .saturating_sub(1)];
    assert_eq!(
        (&last["event"], &last["detail"], &last["text"]),
        (
            &json!("declined"),
            &json!("Wrong quarter"),
            &json!("The link's holder declined: “Wrong quarter”.")
        ),
        "{:#}",
        ask["history"]
    );
    let receipt = app.get(&path).await?.text().await?;
    assert!(receipt.contains("Declined") && receipt.contains("Wrong quarter"));
    app.cleanup().await
}

/// A release asks two people (the second named by the run's input); both must approve. The
/// wait records how it ended at `/review`, and the branch routes on `/review/status`.
const RELEASE_YAML: &str = r#"
name: release
state: {version: "1.4", second: bo@example.com}
steps:
  - name: ask
    ui:
      prompt: "Ship version {{ version }}?"
      schema: {type: object, properties: {note: {type: string}}}
      assignees: [ana@example.com, "{{ second }}"]
      approvals: {required: 2}
      decline: {reason: required}
  - name: tell
    notify: {title: "Release {{ version }} needs you"}
  - name: answer
    wait: {save: /answer, outcome: /review}
  - name: route
    branch: {on: /review/status, cases: {submitted: ship, declined: hold}}
  - name: ship
    notify: {title: shipped}
    end: true
  - name: hold
    notify: {title: "held"}
"#;

fn release() -> anyhow::Result<YamlWorkflow> {
    Ok(parse_file("release.yaml", "release", RELEASE_YAML)?)
}

/// Each assignee's page path of run `id`'s page, by address (fresh links from the runs API).
async fn assignee_paths(app: &TestApp, id: &str) -> anyhow::Result<Vec<(String, String)>> {
    let issued: Value = app
        .api_post(&format!("/api/runs/{id}/link"), &json!({}))
        .await?
        .json()
        .await?;
    assert!(issued["link"].is_null(), "no shared link: {issued:#}");
    assignee_links(&issued["links"])
}

/// The app with `options`, its assignees allowed anywhere `@example.com`.
async fn spawn_for_example_com(backend: Backend, options: Options) -> anyhow::Result<TestApp> {
    TestApp::builder()
        .backend(backend)
        .config(|config| {
            config.notify.ask_recipients = RecipientAllowlist {
                email: vec!["@example.com".into()],
                ..RecipientAllowlist::default()
            };
        })
        .options(options)
        .spawn()
        .await
}

const STAGED_YAML: &str = r#"
name: staged
state: {second: cy@example.com}
steps:
  - name: ask
    ui:
      prompt: "Approve the offsite?"
      schema: {type: object, properties: {note: {type: string}}}
      approvals:
        stages:
          - {assignees: [ana@example.com]}
          - {assignees: ["{{ second }}"], required: 1}
  - name: answer
    wait: {save: /answer, outcome: /review}
  - name: done
    notify: {title: "offsite {{ review.status }}"}
"#;

/// A YAML `ui` step's stages: the second stage's person (a template over the state) has no link
/// until the first stage is settled, and their answer is the one the run goes on with.
async fn a_yaml_workflow_asks_in_two_stages(backend: Backend) -> anyhow::Result<()> {
    let options = Options {
        yaml_workflows: Some(vec![parse_file("staged.yaml", "staged", STAGED_YAML)?]),
        ..Options::default()
    };
    let app = spawn_for_example_com(backend, options).await?;
    let (id, _) = app
        .start_waiting_run(&json!({"workflow": "staged", "input": {}}))
        .await?;
    let paths = assignee_paths(&app, &id).await?;
    let people: Vec<&str> = paths.iter().map(|(person, _)| person.as_str()).collect();
    assert_eq!(people, ["ana@example.com"], "only the first stage is asked");
    assert_eq!(submit(&app, &paths[0].1, "note=fine").await?.status(), 303);
    assert_eq!(
        app.api_json(&format!("/api/runs/{id}")).await?["status"],
        "waiting",
        "the second stage is still to answer"
    );
    let paths = assignee_paths(&app, &id).await?;
    let second = paths
        .iter()
        .find(|(person, _)| person == "cy@example.com")
        .context("the second stage asks cy once ana has answered")?;
    assert_eq!(submit(&app, &second.1, "note=go").await?.status(), 303);
    let run = app.wait_for_status(&id, "succeeded").await?;
    assert_eq!(run["state"]["review"], json!({"status": "submitted"}));
    assert_eq!(run["state"]["answer"], json!({"note": "go"}));
    app.cleanup().await
}

fn step_names(run: &Value) -> Vec<&str> {
    run["steps"]
        .as_array()
        .map(|steps| {
            steps
                .iter()
                .filter_map(|step| step["name"].as_str())
                .collect()
        })
        .unwrap_or_default()
}

async fn a_yaml_workflow_asks_two_people_and_branches_on_the_outcome(
    backend: Backend,
) -> anyhow::Result<()> {
    let options = Options {
        yaml_workflows: Some(vec![release()?]),
        ..Options::default()
    };
    let app = spawn_for_example_com(backend, options).await?;
    let start = |input: Value| {
        let app = &app;
        async move {
            let run: Value = app
                .api_post("/api/runs", &json!({"workflow": "release", "input": input}))
                .await?
                .json()
                .await?;
            anyhow::Ok(run["id"].as_str().context("a run id")?.to_owned())
        }
    };

    // Both approve: the run ships.
    let id = start(json!({"second": "cy@example.com"})).await?;
    app.wait_for_status(&id, "waiting").await?;
    let paths = assignee_paths(&app, &id).await?;
    let people: Vec<&str> = paths.iter().map(|(person, _)| person.as_str()).collect();
    assert_eq!(
        people,
        ["ana@example.com", "cy@example.com"],
        "the second from the input"
    );
    assert_eq!(submit(&app, &paths[0].1, "note=ok").await?.status(), 303);
    assert_eq!(
        app.api_json(&format!("/api/runs/{id}")).await?["status"],
        "waiting",
        "one of two"
    );
    assert_eq!(submit(&app, &paths[1].1, "note=go").await?.status(), 303);
    let run = app.wait_for_status(&id, "succeeded").await?;
    assert_eq!(run["state"]["review"], json!({"status": "submitted"}));
    assert_eq!(run["state"]["answer"], json!({"note": "go"}));
    assert_eq!(step_names(&run), ["ask", "tell", "answer", "route", "ship"]);

    // One declines with a reason: two are needed, so the run is held.
    let id = start(json!({})).await?;
    app.wait_for_status(&id, "waiting").await?;
    let paths = assignee_paths(&app, &id).await?;
    let declined = submit(
        &app,
        &paths[1].1,
        "_action=decline&_reason=Changelog+missing",
    )
    .await?;
    assert_eq!(declined.status(), 303);
    let run = app.wait_for_status(&id, "succeeded").await?;
    assert_eq!(
        run["state"]["review"],
        json!({"status": "declined", "reason": "Changelog missing", "by": "bo@example.com"})
    );
    assert!(
        run["state"].get("answer").is_none(),
        "a decline is not an answer to save"
    );
    assert_eq!(step_names(&run), ["ask", "tell", "answer", "route", "hold"]);

    // An admin's cancel still cancels: it is not routed down the branch as an answer.
    let id = start(json!({})).await?;
    app.wait_for_status(&id, "waiting").await?;
    let cookie = app.admin_cookie().await?;
    let cancelled = app
        .post_with(&format!("/runs/{id}/cancel"), &cookie)
        .await?;
    assert_eq!(cancelled.status(), 303);
    let run = app.wait_for_status(&id, "cancelled").await?;
    assert_eq!(step_names(&run), ["ask", "tell", "answer"]);

    // An assignee outside the allowlist: a templated one fails the run naming them ...
    let id = start(json!({"second": "eve@elsewhere.org"})).await?;
    let run = app.wait_for_status(&id, "failed").await?;
    assert!(
        run["error"]
            .as_str()
            .is_some_and(|error| error.contains("eve@elsewhere.org")),
        "{run:#}"
    );
    // ... and a literal one is refused when the file is loaded, naming the step and field.
    let literal = parse_file(
        "bad.yaml",
        "bad",
        &RELEASE_YAML.replace("ana@example.com", "eve@elsewhere.org"),
    )?;
    let refused = literal
        .check_assignees(&RecipientAllowlist {
            email: vec!["@example.com".into()],
            ..RecipientAllowlist::default()
        })
        .err()
        .context("refused")?;
    assert_eq!(refused.field, "ui.assignees[0]");
    assert_eq!(refused.step.as_deref(), Some("ask"));
    app.cleanup().await
}

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
struct Release {
    #[serde(default)]
    heard: Vec<String>,
    #[serde(default)]
    links: Vec<String>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, tessera::forms::FormSchema)]
struct Go {
    note: Option<String>,
}

/// The Rust builder's door: a `ui_with` step naming assignees hands the next step each person's
/// own link (no shared one), and a step after the wait hears a decline with its reason.
fn release_workflow() -> anyhow::Result<Registry> {
    Ok(Registry::new().with(
        workflow::<Release>("rust-release")
            .ui_with(
                "Ask",
                Prompt::<Go>::new("Ship it?"),
                UiOptions {
                    people: People::assigned(["ana@example.com", "bo@example.com"])
                        .required(2)
                        .reason_required(),
                    ..UiOptions::default()
                },
            )
            .step_with_page(
                "Send",
                |mut state: Release, page: PageHandle<Go>| async move {
                    assert!(page.link.is_empty(), "no shared link beside the assignees'");
                    state.links = page
                        .assigned
                        .iter()
                        .map(|link| format!("{} {}", link.assignee, link.link))
                        .collect();
                    Ok((state, wait_for(page.webhook)))
                },
            )
            .step_with_answer_in_run(
                "Hear",
                |_run, mut state: Release, answer: Answer<Go>| async move {
                    state.heard.push(match answer {
                        Answer::Declined(decline) => {
                            format!("declined by {:?}: {:?}", decline.by, decline.reason)
                        }
                        other => format!("{other:?}"),
                    });
                    Ok(state)
                },
            )
            .build()?,
    )?)
}

async fn a_rust_workflow_names_assignees_and_hears_a_decline(
    backend: Backend,
) -> anyhow::Result<()> {
    let options = Options {
        workflows: Some(release_workflow()?),
        ..Options::default()
    };
    let app = spawn_for_example_com(backend, options).await?;
    let (id, waiting) = app
        .start_waiting_run(&json!({"workflow": "rust-release", "input": {}}))
        .await?;
    let links = waiting["state"]["links"]
        .as_array()
        .context("links")?
        .clone();
    assert_eq!(links.len(), 2, "{waiting:#}");
    let bo = links[1].as_str().context("a link")?;
    assert!(bo.starts_with("bo@example.com "), "{bo}");
    let path = page_path(bo.split_once(' ').context("address and link")?.1)?;
    let declined = submit(&app, &path, "_action=decline&_reason=Not+today").await?;
    assert_eq!(declined.status(), 303);
    let run = app.wait_for_status(&id, "cancelled").await?;
    assert_eq!(
        run["state"]["heard"],
        json!(["declined by Some(\"bo@example.com\"): Some(\"Not today\")"])
    );
    app.cleanup().await
}
