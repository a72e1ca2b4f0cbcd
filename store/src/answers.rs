//! Named people's links and answers (`page_assignees`, migration `20261128200000`).
//!
//! One person's answer is one transaction: the page's row is locked (`FOR UPDATE` on PostgreSQL;
//! on SQLite `BEGIN IMMEDIATE` holds the database's write lock), the person's row takes their
//! answer only if it has none, the page's answers are counted, and when they settle it
//! ([`Tally::settles`]) the page goes `open → submitted` in the same transaction — so the
//! `pages_submitted_readies_run` trigger makes the run ready exactly once, by the answer that
//! settled it. Two people answering at once on two processes queue on the page's lock; the
//! second counts the first's answer, so the quorum is neither reached twice nor missed.
//!
//! A person may hold several working links (`assignee_links`, migration `20261130500000`): the
//! first, in `page_assignees.token_hash`, and the [`MAX_LATER_LINKS`] newest a reminder or the
//! inbox gave them since. [`BY_TOKEN`] finds the person behind any of them.

use super::timers::OutgoingMail;
use super::{
    begin_write, decode_json, decode_parsed, decode_uuid,
    pages::{PageRow, COLUMNS},
    Result, Store, StoreError,
};
use crate::{
    records::{
        groups::Member,
        history::{EventKind, NewEvent},
        page::{Page, PageId, PageStatus},
        people::{AnswerRecord, Assignee, Given, Outcome, Settled, Tally},
        token::{PageToken, TokenHash},
    },
    records::{
        run::RunId,
        unanswered::{declined_response, Decline},
    },
};

/// How many later links (reminders, the inbox's "Answer") keep working beside the first.
pub const MAX_LATER_LINKS: i64 = 4;

/// The condition on `page_assignees` that picks the person whose link hashes to `$1`: their
/// first link or a later one.
pub(super) const BY_TOKEN: &str = "(page_id, position) IN (\
     SELECT page_id, position FROM page_assignees WHERE token_hash = $1 \
     UNION ALL SELECT page_id, position FROM assignee_links WHERE token_hash = $1)";

/// Gives person `$3` (position) of page `$2` the later link `$1` at `$4`, if they have not
/// answered and the page is open; [`PRUNE_LATER_LINKS`] then keeps the newest few.
pub(super) const INSERT_LATER_LINK: &str = "INSERT INTO assignee_links \
     (token_hash, page_id, position, created_at) \
     SELECT $1, $2, $3, $4 WHERE EXISTS (SELECT 1 FROM page_assignees a JOIN pages p ON p.id = a.page_id \
     WHERE a.page_id = $2 AND a.position = $3 AND a.outcome IS NULL AND p.status = 'open')";

/// Keeps the [`MAX_LATER_LINKS`] newest later links of person `$2` of page `$1`.
pub(super) const PRUNE_LATER_LINKS: &str = "DELETE FROM assignee_links \
     WHERE page_id = $1 AND position = $2 AND token_hash NOT IN (\
     SELECT token_hash FROM assignee_links WHERE page_id = $1 AND position = $2 \
     ORDER BY created_at DESC, token_hash LIMIT $3)";

#[derive(sqlx::FromRow)]
struct AssigneeRow {
    position: i64,
    assignee: String,
    outcome: Option<String>,
    response: Option<String>,
    reason: Option<String>,
    answered_at: Option<i64>,
    assignee_group: Option<String>,
    stage: i64,
}

impl TryFrom<AssigneeRow> for Assignee {
    type Error = StoreError;

    fn try_from(row: AssigneeRow) -> Result<Self> {
        let answer = match (row.outcome.as_deref(), row.answered_at) {
            (Some(outcome), Some(at_ms)) => {
                let outcome = decode_parsed("page_assignees.outcome", outcome, Outcome::parse)?;
                Some(AnswerRecord {
                    answered_by: Some(row.assignee.clone()),
                    at_ms,
                    outcome,
                    response: row
                        .response
                        .as_deref()
                        .map(|text| decode_json("page_assignees.response", text))
                        .transpose()?,
                    reason: row.reason,
                })
            }
            _ => None,
        };
        Ok(Self {
            position: row.position,
            email: row.assignee,
            group: row.assignee_group,
            stage: row.stage,
            answer,
        })
    }
}

/// An assignee's row with its page's id.
#[derive(sqlx::FromRow)]
struct PageIdOf {
    page_id: String,
    #[sqlx(flatten)]
    row: AssigneeRow,
}

impl From<PageIdOf> for AssigneeRow {
    fn from(found: PageIdOf) -> Self {
        found.row
    }
}

/// What came of one assignee's answer.
#[derive(Clone, Debug, PartialEq)]
pub enum AssigneeAnswered {
    /// Recorded. `settled` says whether this answer settled the page (and so made its run
    /// ready): exactly one answer per page ever gets `Submitted` or `Declined` here.
    Recorded {
        /// The page answered.
        page_id: PageId,
        /// Its run, if any.
        run_id: Option<RunId>,
        /// Where this answer left the page.
        settled: Settled,
        /// When (unix ms).
        at_ms: i64,
    },
    /// This person answered before: nothing changed.
    AlreadyAnswered,
    /// The page was settled (or cancelled) before this answer: nothing changed.
    Decided,
    /// The link expired.
    Expired,
    /// The link was withdrawn.
    Revoked,
    /// No assignee has this link.
    NotFound,
}

const ASSIGNEE_COLUMNS: &str =
    "position, assignee, outcome, response, reason, answered_at, assignee_group, stage";

impl Store {
    /// The page and the assignee behind a person's link.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when no assignee has this link.
    pub async fn assignee_by_token(&self, token_hash: &TokenHash) -> Result<(Page, Assignee)> {
        let sql =
            format!("SELECT page_id, {ASSIGNEE_COLUMNS} FROM page_assignees WHERE {BY_TOKEN}");
        let found: Option<(String, AssigneeRow)> = on_pool!(self, |pool| {
            sqlx::query_as::<_, PageIdOf>(&sql)
                .bind(&token_hash.0)
                .fetch_optional(pool)
                .await?
                .map(|row| (row.page_id.clone(), row.into()))
        });
        let (page_id, row) = found.ok_or(StoreError::NotFound)?;
        let page = self
            .page(PageId(decode_uuid("page_assignees.page_id", &page_id)?))
            .await?;
        Ok((page, row.try_into()?))
    }

    /// A page's assignees in the order the ask named them, with their answers; empty for a
    /// page with one anonymous link.
    ///
    /// # Errors
    /// Database failures.
    pub async fn assignees_of(&self, page_id: PageId) -> Result<Vec<Assignee>> {
        let sql = format!(
            "SELECT {ASSIGNEE_COLUMNS} FROM page_assignees WHERE page_id = $1 ORDER BY position"
        );
        let rows: Vec<AssigneeRow> = on_pool!(self, |pool| {
            sqlx::query_as(&sql)
                .bind(page_id.to_string())
                .fetch_all(pool)
                .await?
        });
        rows.into_iter().map(Assignee::try_from).collect()
    }

    /// Records the answer `given` through the assignee link `token_hash`, once per person, and
    /// settles the page in the same transaction when the answers now decide it (see the module
    /// doc).
    ///
    /// # Errors
    /// Database failures; the transaction is rolled back and nothing changes.
    pub async fn answer_as_assignee(
        &self,
        token_hash: &TokenHash,
        given: &Given,
        now: i64,
    ) -> Result<AssigneeAnswered> {
        let lock = match self {
            Self::Sqlite(_) => "",
            Self::Postgres(_) => " FOR UPDATE",
        };
        let (response, reason) = match given {
            Given::Answer(value) => (Some(value.to_string()), None),
            Given::Decline(reason) => (None, reason.clone()),
        };
        on_pool!(self, |pool| {
            let mut transaction = begin_write(pool).await?;
            let found: Option<(String, i64, String, Option<String>, i64)> =
                sqlx::query_as(&format!(
                    "SELECT page_id, position, assignee, assignee_group, stage \
                     FROM page_assignees WHERE {BY_TOKEN}"
                ))
                .bind(&token_hash.0)
                .fetch_optional(&mut *transaction)
                .await?;
            let Some((page_id, position, assignee, group, their_stage)) = found else {
                return Ok(AssigneeAnswered::NotFound);
            };
            // Every answer to this page queues here, so the count below sees every answer
            // committed before this one.
            let page: PageRow =
                sqlx::query_as(&format!("SELECT {COLUMNS} FROM pages WHERE id = $1{lock}"))
                    .bind(&page_id)
                    .fetch_one(&mut *transaction)
                    .await?;
            let page = Page::try_from(page)?;
            match page.status {
                PageStatus::Submitted => return Ok(AssigneeAnswered::Decided),
                PageStatus::Revoked => return Ok(AssigneeAnswered::Revoked),
                PageStatus::Open if page.is_expired(now) => return Ok(AssigneeAnswered::Expired),
                PageStatus::Open => {}
            }
            // With stages, only the stage under way takes answers: an earlier one is settled.
            let stage: Option<(i64, i64, String)> = sqlx::query_as(
                "SELECT stage, required, on_decline FROM page_stages \
                 WHERE page_id = $1 AND started_at IS NOT NULL ORDER BY stage DESC LIMIT 1",
            )
            .bind(&page_id)
            .fetch_optional(&mut *transaction)
            .await?;
            if stage
                .as_ref()
                .is_some_and(|(current, _, _)| *current != their_stage)
            {
                return Ok(AssigneeAnswered::Decided);
            }
            if let Some(group) = &group {
                // A group has one vote: its first member's answer, counted under the page's lock.
                let voted: Option<i64> = sqlx::query_scalar(
                    "SELECT position FROM page_assignees \
                     WHERE page_id = $1 AND assignee_group = $2 AND outcome IS NOT NULL",
                )
                .bind(&page_id)
                .bind(group)
                .fetch_optional(&mut *transaction)
                .await?;
                if voted.is_some() {
                    return Ok(AssigneeAnswered::AlreadyAnswered);
                }
            }
            let written = sqlx::query(
                "UPDATE page_assignees SET outcome = $1, response = $2, reason = $3, \
                 answered_at = $4 WHERE page_id = $5 AND position = $6 AND outcome IS NULL",
            )
            .bind(given.outcome().as_str())
            .bind(response)
            .bind(reason.clone())
            .bind(now)
            .bind(&page_id)
            .bind(position)
            .execute(&mut *transaction)
            .await?
            .rows_affected();
            if written == 0 {
                return Ok(AssigneeAnswered::AlreadyAnswered);
            }
            let answered = NewEvent {
                kind: match given {
                    Given::Answer(_) => EventKind::Answered,
                    Given::Decline(_) => EventKind::Declined,
                },
                who: Some(assignee.clone()),
                detail: reason.clone(),
            };
            insert_event!(page_id, now, &answered)
                .execute(&mut *transaction)
                .await?;
            let (assignees, approvals, declines): (i64, i64, i64) = sqlx::query_as(
                // One vote per person asked alone and one per group, however many members.
                "SELECT CAST(COUNT(DISTINCT COALESCE('g:' || assignee_group, 'p:' || assignee)) AS BIGINT), \
                 CAST(COUNT(DISTINCT CASE WHEN outcome = 'submitted' \
                     THEN COALESCE('g:' || assignee_group, 'p:' || assignee) END) AS BIGINT), \
                 CAST(COUNT(DISTINCT CASE WHEN outcome = 'declined' \
                     THEN COALESCE('g:' || assignee_group, 'p:' || assignee) END) AS BIGINT) \
                 FROM page_assignees WHERE page_id = $1 AND stage = $2",
            )
            .bind(&page_id)
            .bind(their_stage)
            .fetch_one(&mut *transaction)
            .await?;
            let count = |value: i64| u32::try_from(value).unwrap_or(u32::MAX);
            let required = match &stage {
                Some((_, required, _)) => *required,
                None => page.approvals_required.unwrap_or(1),
            };
            let tally = Tally {
                assignees: count(assignees),
                required: count(required),
                approvals: count(approvals),
                declines: count(declines),
            };
            let mut settled = tally.settles();
            let goes_on = match (&stage, settled) {
                (Some(_), Settled::Submitted) => true,
                (Some((_, _, on_decline)), Settled::Declined) => on_decline == "continue",
                _ => false,
            };
            if goes_on {
                let next = their_stage + 1;
                let members: Option<String> = sqlx::query_scalar(
                    "SELECT members FROM page_stages WHERE page_id = $1 AND stage = $2",
                )
                .bind(&page_id)
                .bind(next)
                .fetch_optional(&mut *transaction)
                .await?;
                if let Some(members) = members {
                    let members: Vec<Member> =
                        serde_json::from_str(&members).map_err(|error| StoreError::Corrupt {
                            column: "page_stages.members",
                            reason: error.to_string(),
                        })?;
                    let mut mails = Vec::new();
                    for member in members {
                        // Their links are made now: a later stage's people hold nothing before.
                        let token = PageToken::generate();
                        sqlx::query(
                            "INSERT INTO page_assignees \
                             (page_id, position, assignee, token_hash, assignee_group, stage) \
                             SELECT $1, COALESCE(MAX(position), -1) + 1, $2, $3, $4, $5 \
                             FROM page_assignees WHERE page_id = $1",
                        )
                        .bind(&page_id)
                        .bind(&member.email)
                        .bind(&token.hash().0)
                        .bind(&member.group)
                        .bind(next)
                        .execute(&mut *transaction)
                        .await?;
                        mails.push(OutgoingMail {
                            to: member.email,
                            token: token.as_str().to_owned(),
                        });
                    }
                    sqlx::query(
                        "UPDATE page_stages SET started_at = $1 WHERE page_id = $2 AND stage = $3",
                    )
                    .bind(now)
                    .bind(&page_id)
                    .bind(next)
                    .execute(&mut *transaction)
                    .await?;
                    // The page says what settles the stage under way.
                    sqlx::query(
                        "UPDATE pages SET approvals_required = \
                         (SELECT required FROM page_stages WHERE page_id = $1 AND stage = $2) \
                         WHERE id = $1",
                    )
                    .bind(&page_id)
                    .bind(next)
                    .execute(&mut *transaction)
                    .await?;
                    let started =
                        NewEvent::new(EventKind::StageStarted).detail((next + 1).to_string());
                    insert_event!(page_id, now, &started)
                        .execute(&mut *transaction)
                        .await?;
                    // The timers' outbox sends their links, at least once, like an escalation's.
                    let outbox =
                        serde_json::to_string(&mails).map_err(|error| StoreError::Corrupt {
                            column: "ask_timers.outbox",
                            reason: error.to_string(),
                        })?;
                    sqlx::query(
                        "INSERT INTO ask_timers (id, page_id, kind, due_at, state, fired_at, outbox) \
                         VALUES ($1, $2, 'stage', $3, 'fired', $3, $4)",
                    )
                    .bind(uuid::Uuid::new_v4().to_string())
                    .bind(&page_id)
                    .bind(now)
                    .bind(outbox)
                    .execute(&mut *transaction)
                    .await?;
                    settled = Settled::Open;
                }
            }
            let settling_response = match (settled, given) {
                (Settled::Open, _) => None,
                (Settled::Submitted, Given::Answer(value)) => Some(value.clone()),
                // Only a decline can make the declines decide, only an approval the approvals.
                (Settled::Submitted | Settled::Declined, _) => Some(declined_response(&Decline {
                    reason,
                    by: Some(assignee),
                })),
            };
            if let Some(settling_response) = settling_response {
                // The page's row is locked and open: this is the one flip, and the trigger
                // readies the run inside it.
                sqlx::query(
                    "UPDATE pages SET status = 'submitted', response = $1, submitted_at = $2 \
                     WHERE id = $3 AND status = 'open'",
                )
                .bind(settling_response.to_string())
                .bind(now)
                .bind(&page_id)
                .execute(&mut *transaction)
                .await?;
            }
            transaction.commit().await?;
            Ok(AssigneeAnswered::Recorded {
                page_id: page.id,
                run_id: page.run_id,
                settled,
                at_ms: now,
            })
        })
    }

    /// Gives assignee `position` of open page `page_id` a new first link (by its token's hash),
    /// if they have not answered; every earlier link of theirs stops working (an explicit
    /// reissue: the caller fears a link went astray). Whether it changed.
    ///
    /// # Errors
    /// Database failures; [`StoreError::Conflict`] if the hash is already used.
    pub async fn reissue_assignee_link(
        &self,
        page_id: PageId,
        position: i64,
        token_hash: &TokenHash,
    ) -> Result<bool> {
        on_pool!(self, |pool| {
            let mut transaction = begin_write(pool).await?;
            let changed = sqlx::query(
                "UPDATE page_assignees SET token_hash = $1 \
                 WHERE page_id = $2 AND position = $3 AND outcome IS NULL \
                 AND EXISTS (SELECT 1 FROM pages WHERE id = $2 AND status = 'open')",
            )
            .bind(&token_hash.0)
            .bind(page_id.to_string())
            .bind(position)
            .execute(&mut *transaction)
            .await?
            .rows_affected()
                == 1;
            if changed {
                sqlx::query("DELETE FROM assignee_links WHERE page_id = $1 AND position = $2")
                    .bind(page_id.to_string())
                    .bind(position)
                    .execute(&mut *transaction)
                    .await?;
            }
            transaction.commit().await?;
            Ok(changed)
        })
    }

    /// Gives assignee `position` of open page `page_id` one more link, if they have not
    /// answered, keeping their first and the [`MAX_LATER_LINKS`] newest (this one included)
    /// working. Whether it was given.
    ///
    /// # Errors
    /// Database failures; [`StoreError::Conflict`] if the hash is already used.
    pub async fn add_assignee_link(
        &self,
        page_id: PageId,
        position: i64,
        token_hash: &TokenHash,
        now: i64,
    ) -> Result<bool> {
        on_pool!(self, |pool| {
            let mut transaction = begin_write(pool).await?;
            let added = sqlx::query(INSERT_LATER_LINK)
                .bind(&token_hash.0)
                .bind(page_id.to_string())
                .bind(position)
                .bind(now)
                .execute(&mut *transaction)
                .await?
                .rows_affected()
                == 1;
            sqlx::query(PRUNE_LATER_LINKS)
                .bind(page_id.to_string())
                .bind(position)
                .bind(MAX_LATER_LINKS)
                .execute(&mut *transaction)
                .await?;
            transaction.commit().await?;
            Ok(added)
        })
    }
}
