//! Reminders and escalations (`ask_timers`, migration `20261129100000`): durable timers whose
//! state changes exactly once and whose mail goes out at least once.
//!
//! [`Store::fire_timer`] moves one due timer `pending → fired` with a conditional UPDATE inside
//! the transaction that applies it, holding the page's lock as an answer does (`FOR UPDATE` on
//! PostgreSQL, SQLite's write lock): a reminder gives everyone who has not answered a fresh
//! link, an escalation adds its people with links of their own, both record the history, and
//! the mail to send (the fresh links) goes into the timer's `outbox`. Two processes firing the
//! same timer queue on that lock; the second finds it fired and does nothing.
//!
//! Sending is separate: [`Store::claim_outbox`] leases a fired timer's mail for a while, the
//! caller sends it, and [`Store::finish_outbox`] marks it `done` and clears the links. A process
//! that dies before finishing leaves the timer `fired`; once the lease runs out another sends the
//! same mail again, and its fixed `Message-ID` (from the timer) makes the repeat recognisable.

use serde::{Deserialize, Serialize};

use super::{
    answers::{INSERT_LATER_LINK, MAX_LATER_LINKS, PRUNE_LATER_LINKS},
    begin_write, decode_uuid, Result, Store, StoreError,
};
use crate::records::{
    groups::Member,
    history::{EventKind, NewEvent},
    page::PageId,
    token::PageToken,
};

/// What a timer does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimerKind {
    /// Mails everyone who has not answered a fresh link.
    Remind,
    /// Asks more people.
    Escalate,
    /// Asks the next stage's people (born fired, by the answer that settled the stage before).
    Stage,
}

impl TimerKind {
    /// The stored spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Remind => "remind",
            Self::Escalate => "escalate",
            Self::Stage => "stage",
        }
    }

    fn parse(text: &str) -> Result<Self> {
        match text {
            "remind" => Ok(Self::Remind),
            "escalate" => Ok(Self::Escalate),
            "stage" => Ok(Self::Stage),
            other => Err(StoreError::Corrupt {
                column: "ask_timers.kind",
                reason: other.to_owned(),
            }),
        }
    }
}

/// A timer made with its page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewTimer {
    /// What it does.
    pub kind: TimerKind,
    /// When it is due, unix ms.
    pub due_at_ms: i64,
    /// Whom an escalation adds (empty for a reminder), groups' members with their group.
    pub to: Vec<Member>,
}

/// One message a fired timer sends: a person's fresh link. It holds their secret token, so it
/// is kept only until the mail is out.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutgoingMail {
    /// Their address.
    pub to: String,
    /// The token of their fresh link.
    pub token: String,
}

impl std::fmt::Debug for OutgoingMail {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("OutgoingMail")
            .field("to", &self.to)
            .field("token", &"***")
            .finish()
    }
}

/// A fired timer's mail, leased to one sender.
#[derive(Clone, Debug)]
pub struct LeasedMail {
    /// The timer.
    pub timer_id: String,
    /// Its page.
    pub page_id: PageId,
    /// What it did.
    pub kind: TimerKind,
    /// The messages, in a fixed order (their index is part of each `Message-ID`).
    pub mails: Vec<OutgoingMail>,
    /// How many times this mail has been leased, this time included.
    pub attempts: i64,
}

/// What [`Store::fire_timer`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fired {
    /// This call applied the timer (and filled its outbox, if anyone is to be mailed).
    Applied,
    /// The page was no longer open: the timer is done, nothing changed.
    Moot,
    /// Another call fired it before: nothing changed.
    AlreadyFired,
}

/// Inserts `timers` for page `page_id` in `transaction`.
macro_rules! insert_timers {
    ($transaction:expr, $page_id:expr, $timers:expr) => {
        for timer in $timers {
            let targets =
                serde_json::to_string(&timer.to).map_err(|error| StoreError::Corrupt {
                    column: "ask_timers.targets",
                    reason: error.to_string(),
                })?;
            sqlx::query(
                "INSERT INTO ask_timers (id, page_id, kind, due_at, targets) \
                 VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(uuid::Uuid::new_v4().to_string())
            .bind($page_id)
            .bind(timer.kind.as_str())
            .bind(timer.due_at_ms)
            .bind(targets)
            .execute(&mut *$transaction)
            .await?;
        }
    };
}
pub(crate) use insert_timers;

impl Store {
    /// The ids of up to `limit` timers due at `now` and not fired yet, earliest first.
    ///
    /// # Errors
    /// Database failures.
    pub async fn due_timers(&self, now: i64, limit: i64) -> Result<Vec<String>> {
        Ok(on_pool!(self, |pool| {
            sqlx::query_scalar(
                "SELECT id FROM ask_timers WHERE state = 'pending' AND due_at <= $1 \
                 ORDER BY due_at LIMIT $2",
            )
            .bind(now)
            .bind(limit)
            .fetch_all(pool)
            .await?
        }))
    }

    /// Applies timer `timer_id` once (see the module doc).
    ///
    /// # Errors
    /// Database failures; the transaction is rolled back and nothing changes.
    pub async fn fire_timer(&self, timer_id: &str, now: i64) -> Result<Fired> {
        let lock = match self {
            Self::Sqlite(_) => "",
            Self::Postgres(_) => " FOR UPDATE",
        };
        on_pool!(self, |pool| {
            let mut transaction = begin_write(pool).await?;
            let timer: Option<(String, String, String)> = sqlx::query_as(
                "SELECT page_id, kind, targets FROM ask_timers WHERE id = $1 AND state = 'pending'",
            )
            .bind(timer_id)
            .fetch_optional(&mut *transaction)
            .await?;
            let Some((page_id, kind, targets)) = timer else {
                return Ok(Fired::AlreadyFired);
            };
            let kind = TimerKind::parse(&kind)?;
            // Answers to this page queue on the same lock, so "who has not answered" is exact.
            let page: Option<(String, i64)> = sqlx::query_as(&format!(
                "SELECT status, expires_at FROM pages WHERE id = $1{lock}"
            ))
            .bind(&page_id)
            .fetch_optional(&mut *transaction)
            .await?;
            let open =
                page.is_some_and(|(status, expires_at)| status == "open" && expires_at > now);
            let claimed = sqlx::query(
                "UPDATE ask_timers SET state = 'fired', fired_at = $1 \
                 WHERE id = $2 AND state = 'pending'",
            )
            .bind(now)
            .bind(timer_id)
            .execute(&mut *transaction)
            .await?
            .rows_affected();
            if claimed == 0 {
                return Ok(Fired::AlreadyFired);
            }
            let mut mails = Vec::new();
            let mut events = Vec::new();
            if open {
                match kind {
                    TimerKind::Stage => {}
                    TimerKind::Remind => {
                        let waiting: Vec<(i64, String)> = sqlx::query_as(
                            "SELECT position, assignee FROM page_assignees \
                             WHERE page_id = $1 AND outcome IS NULL AND stage = \
                             (SELECT COALESCE(MAX(stage), 0) FROM page_stages \
                              WHERE page_id = $1 AND started_at IS NOT NULL) \
                             ORDER BY position",
                        )
                        .bind(&page_id)
                        .fetch_all(&mut *transaction)
                        .await?;
                        for (position, assignee) in waiting {
                            // Only the hash of a link is kept, so a reminder carries a fresh one;
                            // the link in the first mail keeps working beside it.
                            let token = PageToken::generate();
                            sqlx::query(INSERT_LATER_LINK)
                                .bind(&token.hash().0)
                                .bind(&page_id)
                                .bind(position)
                                .bind(now)
                                .execute(&mut *transaction)
                                .await?;
                            sqlx::query(PRUNE_LATER_LINKS)
                                .bind(&page_id)
                                .bind(position)
                                .bind(MAX_LATER_LINKS)
                                .execute(&mut *transaction)
                                .await?;
                            events.push(NewEvent::new(EventKind::Reminded).by(assignee.clone()));
                            mails.push(OutgoingMail {
                                to: assignee,
                                token: token.as_str().to_owned(),
                            });
                        }
                    }
                    TimerKind::Escalate => {
                        let to: Vec<Member> = serde_json::from_str(&targets).map_err(|error| {
                            StoreError::Corrupt {
                                column: "ask_timers.targets",
                                reason: error.to_string(),
                            }
                        })?;
                        for Member {
                            email: address,
                            group,
                        } in to
                        {
                            let taken: Option<i64> = sqlx::query_scalar(
                                "SELECT position FROM page_assignees \
                                 WHERE page_id = $1 AND LOWER(assignee) = LOWER($2)",
                            )
                            .bind(&page_id)
                            .bind(&address)
                            .fetch_optional(&mut *transaction)
                            .await?;
                            if taken.is_some() {
                                continue;
                            }
                            let token = PageToken::generate();
                            sqlx::query(
                                "INSERT INTO page_assignees \
                                 (page_id, position, assignee, token_hash, assignee_group, stage) \
                                 SELECT $1, COALESCE(MAX(position), -1) + 1, $2, $3, $4, \
                                 (SELECT COALESCE(MAX(stage), 0) FROM page_stages \
                                  WHERE page_id = $1 AND started_at IS NOT NULL) \
                                 FROM page_assignees WHERE page_id = $1",
                            )
                            .bind(&page_id)
                            .bind(&address)
                            .bind(&token.hash().0)
                            .bind(&group)
                            .execute(&mut *transaction)
                            .await?;
                            events.push(NewEvent::new(EventKind::Escalated).by(address.clone()));
                            mails.push(OutgoingMail {
                                to: address,
                                token: token.as_str().to_owned(),
                            });
                        }
                    }
                }
            }
            if mails.is_empty() {
                sqlx::query("UPDATE ask_timers SET state = 'done' WHERE id = $1")
                    .bind(timer_id)
                    .execute(&mut *transaction)
                    .await?;
            } else {
                let outbox =
                    serde_json::to_string(&mails).map_err(|error| StoreError::Corrupt {
                        column: "ask_timers.outbox",
                        reason: error.to_string(),
                    })?;
                sqlx::query("UPDATE ask_timers SET outbox = $1 WHERE id = $2")
                    .bind(outbox)
                    .bind(timer_id)
                    .execute(&mut *transaction)
                    .await?;
            }
            for event in &events {
                insert_event!(page_id, now, event)
                    .execute(&mut *transaction)
                    .await?;
            }
            transaction.commit().await?;
            Ok(if open { Fired::Applied } else { Fired::Moot })
        })
    }

    /// Leases up to `limit` fired timers' mail to the caller until `now + lease_ms`: mail no
    /// other caller holds a lease on.
    ///
    /// # Errors
    /// Database failures; [`StoreError::Corrupt`] for an outbox that does not decode.
    pub async fn claim_outbox(
        &self,
        now: i64,
        lease_ms: i64,
        limit: i64,
    ) -> Result<Vec<LeasedMail>> {
        let free = "state = 'fired' AND (send_lease_until IS NULL OR send_lease_until <= $1)";
        let rows: Vec<(String, String, String, Option<String>, i64)> = on_pool!(self, |pool| {
            let ids: Vec<String> = sqlx::query_scalar(&format!(
                "SELECT id FROM ask_timers WHERE {free} ORDER BY fired_at LIMIT $2"
            ))
            .bind(now)
            .bind(limit)
            .fetch_all(pool)
            .await?;
            let mut leased = Vec::new();
            for id in ids {
                // Conditional: of two processes leasing the same mail, one gets it.
                let row: Option<(String, String, String, Option<String>, i64)> =
                    sqlx::query_as(&format!(
                        "UPDATE ask_timers SET send_lease_until = $2, \
                         send_attempts = send_attempts + 1 WHERE id = $3 AND {free} \
                         RETURNING id, page_id, kind, outbox, send_attempts"
                    ))
                    .bind(now)
                    .bind(now.saturating_add(lease_ms))
                    .bind(&id)
                    .fetch_optional(pool)
                    .await?;
                leased.extend(row);
            }
            leased
        });
        rows.into_iter()
            .map(|(timer_id, page_id, kind, outbox, attempts)| {
                let mails = match outbox {
                    Some(text) => {
                        serde_json::from_str(&text).map_err(|error| StoreError::Corrupt {
                            column: "ask_timers.outbox",
                            reason: error.to_string(),
                        })?
                    }
                    None => Vec::new(),
                };
                Ok(LeasedMail {
                    timer_id,
                    page_id: PageId(decode_uuid("ask_timers.page_id", &page_id)?),
                    kind: TimerKind::parse(&kind)?,
                    mails,
                    attempts,
                })
            })
            .collect()
    }

    /// Marks timer `timer_id`'s mail sent (its links are forgotten) and records `events` in its
    /// page's history, once: whether this call did it.
    ///
    /// # Errors
    /// Database failures.
    pub async fn finish_outbox(
        &self,
        timer_id: &str,
        page_id: PageId,
        events: &[NewEvent],
        now: i64,
    ) -> Result<bool> {
        on_pool!(self, |pool| {
            let mut transaction = begin_write(pool).await?;
            let done = sqlx::query(
                "UPDATE ask_timers SET state = 'done', outbox = NULL \
                 WHERE id = $1 AND state = 'fired'",
            )
            .bind(timer_id)
            .execute(&mut *transaction)
            .await?
            .rows_affected();
            if done == 0 {
                return Ok(false);
            }
            for event in events {
                insert_event!(page_id, now, &event)
                    .execute(&mut *transaction)
                    .await?;
            }
            transaction.commit().await?;
            Ok(true)
        })
    }
}
