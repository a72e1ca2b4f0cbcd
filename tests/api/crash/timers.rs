//! The crash drill for reminders, escalations and approval stages (issue 31): the real binary
//! is killed with SIGKILL at random moments while asks with two reminders, an escalation and two
//! stages wait and their first stage is answered, then restarted on the same database. At the
//! end no change of state was lost or applied twice: each ask started its second stage once,
//! escalated once, reminded each person at most once per reminder, and every one of those
//! changes reached its person by mail at least once, with exactly one `Message-ID` per change
//! (a resend after a kill repeats it). SQLite and PostgreSQL, one process at a time.
//!
//! The seed is printed; `TESSERA_CRASH_SEED=<n>` replays the same choices.

use std::time::{Duration, Instant};

use anyhow::Context as _;
use rand::{rngs::StdRng, Rng as _, SeedableRng as _};
use serde_json::json;

use crate::{
    asks::page_path,
    helpers::{on_both_backends, Backend},
    mailbox::{Delivered, Mailbox},
    timers::{Database, Server},
};

/// Asks driven through kills.
const ASKS: usize = 4;
/// How long the kills go on.
const KILLING: Duration = Duration::from_secs(7);

on_both_backends!(reminders_escalations_and_stages_survive_kills_once_each);

fn address(role: &str, index: usize) -> String {
    format!("{role}{index}@example.com")
}

/// The link in the newest mail to `to` (a reminder replaces the link sent before).
fn newest_link(mailbox: &Mailbox, to: &str) -> anyhow::Result<Option<String>> {
    Ok(mailbox
        .messages()?
        .iter()
        .rev()
        .filter(|message| message.is_to(to))
        .find_map(Delivered::page_path))
}

/// The Message-IDs of the mails to `to` whose subject starts with `subject`, once each.
fn message_ids(messages: &[Delivered], to: &str, subject: &str) -> Vec<String> {
    let mut ids: Vec<String> = messages
        .iter()
        .filter(|message| {
            message.is_to(to)
                && message
                    .header("Subject")
                    .is_some_and(|found| found.starts_with(subject))
        })
        .filter_map(|message| message.header("Message-ID"))
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

async fn reminders_escalations_and_stages_survive_kills_once_each(
    backend: Backend,
) -> anyhow::Result<()> {
    let Some(database) = Database::create(backend).await? else {
        return Ok(());
    };
    let seed = super::crash_seed("crash::timers");
    let mut rng = StdRng::seed_from_u64(seed);
    let mailbox = Mailbox::start().await?;
    let mut server = Server::new(database.url.clone(), mailbox.settings("@example.com"))?;
    server.start().await?;

    let mut asks = Vec::new();
    for index in 0..ASKS {
        let (status, created) = server
            .post_ask(&json!({
                "prompt": format!("Approve item {index}?"),
                "schema": {"type": "object", "properties": {"note": {"type": "string"}}},
                "approvals": {"stages": [
                    {"assignees": [address("first", index)], "required": 1},
                    {"assignees": [address("second", index)], "required": 1}]},
                "remind_after": [1, 3],
                "escalate_after": {"after": 4, "to": [address("extra", index)]},
                "expires_in": 300,
            }))
            .await?;
        anyhow::ensure!(status == 201, "{created:#}");
        let link = created["links"][0]["link"]
            .as_str()
            .context("the first stage's link")?;
        asks.push((
            created["id"].as_str().context("id")?.to_owned(),
            page_path(link)?,
        ));
    }

    // Kills at random moments; between them, the first stage's people answer (each once: a
    // POST whose reply was lost to a kill answers 409 when tried again).
    let started = Instant::now();
    let mut answered = [false; ASKS];
    let mut kills = 0;
    while started.elapsed() < KILLING {
        let until = Instant::now() + Duration::from_millis(rng.gen_range(300..1200));
        while Instant::now() < until {
            let waiting: Vec<usize> = (0..ASKS).filter(|index| !answered[*index]).collect();
            if let Some(&index) = waiting.get(rng.gen_range(0..waiting.len().max(1))) {
                let path = newest_link(&mailbox, &address("first", index))?
                    .unwrap_or_else(|| asks[index].1.clone());
                // A 404 is a link a reminder replaced meanwhile: the next try takes the new one.
                if let Ok(status) = server.answer(&path, "note=ok").await {
                    answered[index] = matches!(status, 303 | 409);
                }
            }
            tokio::time::sleep(Duration::from_millis(rng.gen_range(50..400))).await;
        }
        server.kill()?;
        kills += 1;
        server.start().await?;
    }
    for (index, (_, first_link)) in asks.iter().enumerate() {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !answered[index] {
            let path = newest_link(&mailbox, &address("first", index))?
                .unwrap_or_else(|| first_link.clone());
            let status = server.answer(&path, "note=ok").await?;
            answered[index] = matches!(status, 303 | 409);
            anyhow::ensure!(
                answered[index] || Instant::now() < deadline,
                "answering ask {index}: {status}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    eprintln!("crash::timers: {kills} kills");

    // Every fired timer's mail goes out within a lease (2 s) of the last kill.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut settled = true;
        for (index, (id, _)) in asks.iter().enumerate() {
            let ask = server.ask(id).await?;
            let history = ask["history"].as_array().cloned().unwrap_or_default();
            let count = |event: &str, who: &str| {
                history
                    .iter()
                    .filter(|entry| entry["event"] == event && entry["who"] == who)
                    .count()
            };
            let stages = history
                .iter()
                .filter(|entry| entry["event"] == "stage_started")
                .count();
            let messages = mailbox.messages()?;
            let second = address("second", index);
            let extra = address("extra", index);
            let first = address("first", index);
            // Applied once each, whatever the kills.
            assert!(
                stages <= 1,
                "ask {index}: stage 2 started {stages} times: {ask:#}"
            );
            assert!(count("escalated", &extra) <= 1, "ask {index}: {ask:#}");
            // Two reminders: nobody is reminded more often.
            assert!(count("reminded", &first) <= 2 && count("reminded", &second) <= 2);
            // One Message-ID per change that mails someone, never more.
            let reminded = count("reminded", &first) + count("reminded", &second);
            let reminder_ids = message_ids(&messages, &first, "Reminder").len()
                + message_ids(&messages, &second, "Reminder").len();
            assert!(
                reminder_ids <= reminded,
                "ask {index}: a reminder mail without its change"
            );
            let asked_second = message_ids(&messages, &second, "Your answer").len();
            assert!(
                asked_second <= stages,
                "ask {index}: {asked_second} stage mails"
            );
            let asked_extra = message_ids(&messages, &extra, "Your answer").len();
            assert!(asked_extra <= count("escalated", &extra));
            // Nothing lost: once the drill is over every change happened and was mailed.
            settled &= stages == 1
                && count("escalated", &extra) == 1
                && reminder_ids == reminded
                && asked_second == 1
                && asked_extra == 1;
        }
        if settled {
            break;
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "the changes or their mail did not all arrive (seed {seed})"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    drop(server);
    database.drop_database().await
}
