//! Pages: storing generated pages and the exactly-once submission.
//!
//! A submission is one statement on both engines: a conditional `UPDATE pages … RETURNING`
//! that flips `open → submitted` only while the page is open and not expired. The
//! `pages_submitted_readies_run` trigger (migration `20261127700000`) runs inside that statement
//! and makes the waiting run `ready` (and, on PostgreSQL, sends the one `NOTIFY` that wakes
//! runners in every process), so answer and resumption commit together with no transaction of
//! several statements around them. The statement returns only what it wrote; the caller
//! already holds the page it validated against. Only a refused submission reads the page again,
//! to say why.

use super::{
    begin_write, decode_json, decode_parsed, decode_uuid, now_ms, timers::NewTimer, Result, Store,
    StoreError,
};
use crate::{
    records::run::RunId,
    records::{
        groups::Member,
        history::{EventKind, NewEvent},
        page::{NewPage, Page, PageId, PageStatus, Recorded, SubmitOutcome},
        people::OnDecline,
        token::TokenHash,
    },
};

pub(super) const COLUMNS: &str =
    "id, run_id, status, tree, schema, data, component_set, response, created_at, \
     expires_at, submitted_at, approvals_required, decline_reason_required, sign_in_required";

#[derive(sqlx::FromRow)]
pub(super) struct PageRow {
    id: String,
    run_id: Option<String>,
    status: String,
    tree: String,
    schema: Option<String>,
    data: String,
    component_set: Option<String>,
    response: Option<String>,
    created_at: i64,
    expires_at: i64,
    submitted_at: Option<i64>,
    approvals_required: Option<i64>,
    decline_reason_required: bool,
    sign_in_required: bool,
}

impl TryFrom<PageRow> for Page {
    type Error = StoreError;

    fn try_from(row: PageRow) -> Result<Self> {
        Ok(Self {
            id: PageId(decode_uuid("pages.id", &row.id)?),
            run_id: row
                .run_id
                .as_deref()
                .map(|id| decode_uuid("pages.run_id", id).map(RunId))
                .transpose()?,
            status: decode_parsed("pages.status", &row.status, PageStatus::parse)?,
            tree: decode_json("pages.tree", &row.tree)?,
            schema: row
                .schema
                .as_deref()
                .map(|schema| decode_json("pages.schema", schema))
                .transpose()?,
            data: decode_json("pages.data", &row.data)?,
            component_set: row
                .component_set
                .as_deref()
                .map(|set| {
                    decode_json("pages.component_set", set).and_then(|value| {
                        serde_json::from_value(value).map_err(|error| StoreError::Corrupt {
                            column: "pages.component_set",
                            reason: error.to_string(),
                        })
                    })
                })
                .transpose()?,
            response: row
                .response
                .as_deref()
                .map(|response| decode_json("pages.response", response))
                .transpose()?,
            created_at_ms: row.created_at,
            expires_at_ms: row.expires_at,
            submitted_at_ms: row.submitted_at,
            approvals_required: row.approvals_required,
            decline_reason_required: row.decline_reason_required,
            sign_in_required: row.sign_in_required,
        })
    }
}

/// Turns the row found after a failed conditional update into the reason it failed.
fn classify_refusal(row: Option<PageRow>, now: i64) -> Result<SubmitOutcome> {
    let Some(row) = row else {
        return Ok(SubmitOutcome::NotFound);
    };
    let page = Page::try_from(row)?;
    Ok(match page.status {
        PageStatus::Submitted => SubmitOutcome::AlreadySubmitted(Box::new(page)),
        PageStatus::Revoked => SubmitOutcome::Revoked,
        PageStatus::Open if page.is_expired(now) => SubmitOutcome::Expired,
        // Open and not expired yet the update matched nothing: only a racing clock can do this.
        PageStatus::Open => {
            return Err(StoreError::Conflict(
                "page changed during submission".into(),
            ))
        }
    })
}

impl Store {
    /// Stores a page with one anonymous link.
    ///
    /// # Errors
    /// [`StoreError::Conflict`] if the token hash is already used.
    pub async fn create_page(&self, new_page: &NewPage) -> Result<Page> {
        self.create_page_for(new_page, &PagePeople::default()).await
    }

    /// Stores a page answered by `people`: with assignees, one row per person holding their
    /// link's token hash, in the same transaction as the page (whose own `token_hash` then
    /// opens nothing anyone was given).
    ///
    /// # Errors
    /// [`StoreError::Conflict`] if a token hash is already used or an address is named twice.
    pub async fn create_page_for(&self, new_page: &NewPage, people: &PagePeople) -> Result<Page> {
        let id = PageId::new();
        let now = now_ms();
        let sql = format!(
            "INSERT INTO pages (id, token_hash, run_id, status, tree, schema, data, component_set, \
             created_at, expires_at, approvals_required, decline_reason_required, sign_in_required) \
             VALUES ($1, $2, $3, 'open', $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING {COLUMNS}"
        );
        let approvals_required = (!people.assignees.is_empty()).then(|| i64::from(people.required));
        let row: PageRow = on_pool!(self, |pool| {
            let mut transaction = begin_write(pool).await?;
            let row: PageRow = sqlx::query_as(&sql)
                .bind(id.to_string())
                .bind(&new_page.token_hash.0)
                .bind(new_page.run_id.map(|run_id| run_id.to_string()))
                .bind(new_page.tree.to_string())
                .bind(new_page.schema.as_ref().map(ToString::to_string))
                .bind(new_page.data.to_string())
                .bind(
                    new_page
                        .component_set
                        .as_ref()
                        .map(|set| set.to_json().to_string()),
                )
                .bind(now)
                .bind(new_page.expires_at_ms)
                .bind(approvals_required)
                .bind(people.decline_reason_required)
                .bind(people.sign_in_required)
                .fetch_one(&mut *transaction)
                .await?;
            for (position, assignee) in people.assignees.iter().enumerate() {
                sqlx::query(
                    "INSERT INTO page_assignees (page_id, position, assignee, token_hash, \
                     assignee_group) VALUES ($1, $2, $3, $4, $5)",
                )
                .bind(id.to_string())
                .bind(i64::try_from(position).unwrap_or(i64::MAX))
                .bind(&assignee.email)
                .bind(&assignee.token_hash.0)
                .bind(&assignee.group)
                .execute(&mut *transaction)
                .await?;
            }
            super::timers::insert_timers!(transaction, id.to_string(), &people.timers);
            for (index, stage) in people.stages.iter().enumerate() {
                let members =
                    serde_json::to_string(&stage.members).map_err(|error| StoreError::Corrupt {
                        column: "page_stages.members",
                        reason: error.to_string(),
                    })?;
                sqlx::query(
                    "INSERT INTO page_stages (page_id, stage, required, on_decline, members, \
                     started_at) VALUES ($1, $2, $3, $4, $5, $6)",
                )
                .bind(id.to_string())
                .bind(i64::try_from(index).unwrap_or(i64::MAX))
                .bind(i64::from(stage.required))
                .bind(stage.on_decline.as_str())
                .bind(members)
                .bind((index == 0).then_some(now))
                .execute(&mut *transaction)
                .await?;
            }
            let asked = asked_in_words(&people.assignees);
            let created = NewEvent {
                detail: (!asked.is_empty()).then_some(asked),
                ..NewEvent::new(EventKind::Created)
            };
            insert_event!(id, now, &created)
                .execute(&mut *transaction)
                .await?;
            transaction.commit().await?;
            row
        });
        row.try_into()
    }

    /// Finds the page behind a link.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when no page has this token.
    pub async fn page_by_token(&self, token_hash: &TokenHash) -> Result<Page> {
        let sql = format!("SELECT {COLUMNS} FROM pages WHERE token_hash = $1");
        let row: Option<PageRow> = on_pool!(self, |pool| {
            sqlx::query_as(&sql)
                .bind(&token_hash.0)
                .fetch_optional(pool)
                .await?
        });
        row.ok_or(StoreError::NotFound)?.try_into()
    }

    /// Records a person's response, exactly once per page.
    ///
    /// In one statement: the page goes `open → submitted` only if it is still open and not
    /// expired at `now`, the response is stored, and the waiting run (if any) becomes `ready`.
    /// Every other attempt gets the reason it was refused.
    ///
    /// # Errors
    /// Database failures; the transaction is rolled back and nothing changes.
    pub async fn submit_page(
        &self,
        token_hash: &TokenHash,
        response: &serde_json::Value,
        now: i64,
    ) -> Result<SubmitOutcome> {
        self.submit(PageKey::Token(token_hash), response, now).await
    }

    /// [`Store::submit_page`] by the page's id, for code that resolves a page on the person's
    /// behalf (cancelling a waiting run through its page); the same once-only rules apply.
    ///
    /// # Errors
    /// As [`Store::submit_page`].
    pub async fn answer_page(
        &self,
        id: PageId,
        response: &serde_json::Value,
        now: i64,
    ) -> Result<SubmitOutcome> {
        self.submit(PageKey::Id(id), response, now).await
    }

    async fn submit(
        &self,
        key: PageKey<'_>,
        response: &serde_json::Value,
        now: i64,
    ) -> Result<SubmitOutcome> {
        // One statement, so SQLite takes its write lock at the start (as `BEGIN IMMEDIATE`
        // would) and PostgreSQL's row lock makes a concurrent submitter wait, re-check
        // `status = 'open'` after the first commits, and match nothing.
        let sql = format!(
            "UPDATE pages SET status = 'submitted', response = $1, submitted_at = $2 \
             WHERE {column} = $3 AND status = 'open' AND expires_at > $2 RETURNING id, run_id",
            column = key.column()
        );
        let written: Option<(String, Option<String>)> = on_pool!(self, |pool| {
            sqlx::query_as(&sql)
                .bind(response.to_string())
                .bind(now)
                .bind(key.value())
                .fetch_optional(pool)
                .await?
        });
        if let Some((id, run_id)) = written {
            return Ok(SubmitOutcome::Submitted(Recorded {
                page_id: PageId(decode_uuid("pages.id", &id)?),
                run_id: run_id
                    .as_deref()
                    .map(|id| decode_uuid("pages.run_id", id).map(RunId))
                    .transpose()?,
                submitted_at_ms: now,
            }));
        }
        let sql = format!(
            "SELECT {COLUMNS} FROM pages WHERE {column} = $1",
            column = key.column()
        );
        let current: Option<PageRow> = on_pool!(self, |pool| {
            sqlx::query_as(&sql)
                .bind(key.value())
                .fetch_optional(pool)
                .await?
        });
        classify_refusal(current, now)
    }

    /// Reads a page by id.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when no page has this id.
    pub async fn page(&self, id: PageId) -> Result<Page> {
        let sql = format!("SELECT {COLUMNS} FROM pages WHERE id = $1");
        let row: Option<PageRow> = on_pool!(self, |pool| {
            sqlx::query_as(&sql)
                .bind(id.to_string())
                .fetch_optional(pool)
                .await?
        });
        row.ok_or(StoreError::NotFound)?.try_into()
    }

    /// The pages a run made, newest first.
    ///
    /// # Errors
    /// Database failures.
    pub async fn pages_of_run(&self, run_id: RunId) -> Result<Vec<Page>> {
        let sql = format!("SELECT {COLUMNS} FROM pages WHERE run_id = $1 ORDER BY created_at DESC");
        let rows: Vec<PageRow> = on_pool!(self, |pool| {
            sqlx::query_as(&sql)
                .bind(run_id.to_string())
                .fetch_all(pool)
                .await?
        });
        rows.into_iter().map(Page::try_from).collect()
    }

    /// Changes an open page: revoke it, move its expiry, or give it a new link (token hash).
    /// Only an open page changes; the outcome says whether it did.
    ///
    /// # Errors
    /// Database failures; [`StoreError::Conflict`] if a new token hash is already used.
    pub async fn change_open_page(&self, id: PageId, change: &PageChange) -> Result<bool> {
        Ok(on_pool!(self, |pool| {
            let mut transaction = begin_write(pool).await?;
            let query = match change {
                PageChange::Revoke => sqlx::query(
                    "UPDATE pages SET status = 'revoked' WHERE id = $1 AND status = 'open'",
                )
                .bind(id.to_string()),
                PageChange::Extend(expires_at) => sqlx::query(
                    "UPDATE pages SET expires_at = $1 WHERE id = $2 AND status = 'open'",
                )
                .bind(*expires_at)
                .bind(id.to_string()),
                PageChange::Reissue(hash) => sqlx::query(
                    "UPDATE pages SET token_hash = $1 WHERE id = $2 AND status = 'open'",
                )
                .bind(hash.0.clone())
                .bind(id.to_string()),
            };
            let changed = query.execute(&mut *transaction).await?.rows_affected() == 1;
            if let (true, PageChange::Extend(expires_at)) = (changed, change) {
                // A run waiting on this page with a deadline waits as long as its link lives.
                sqlx::query(
                    "UPDATE runs SET wait_deadline = $1 \
                     WHERE wait_page_id = $2 AND status = 'waiting' AND wait_deadline IS NOT NULL",
                )
                .bind(*expires_at)
                .bind(id.to_string())
                .execute(&mut *transaction)
                .await?;
            }
            transaction.commit().await?;
            changed
        }))
    }
}

/// Who a page asks, for its history: `ana@example.com, finance (ann@example.com, bob@example.com)`.
fn asked_in_words(assignees: &[NewAssignee]) -> String {
    let mut parts: Vec<(Option<&str>, Vec<&str>)> = Vec::new();
    for assignee in assignees {
        match (assignee.group.as_deref(), parts.last_mut()) {
            (Some(group), Some((Some(last), members))) if *last == group => {
                members.push(&assignee.email);
            }
            (group, _) => parts.push((group, vec![&assignee.email])),
        }
    }
    parts
        .iter()
        .map(|(group, members)| match group {
            Some(group) => format!("{group} ({})", members.join(", ")),
            None => members.join(", "),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Who answers a new page (see `pages::people`): no assignees for one anonymous link.
#[derive(Clone, Debug)]
pub struct PagePeople {
    /// One per person: their address and their link's token hash.
    pub assignees: Vec<NewAssignee>,
    /// Approvals that settle the page (used only with assignees).
    pub required: u32,
    /// Whether a Decline must say why.
    pub decline_reason_required: bool,
    /// Whether only the signed-in assignee may answer through their link.
    pub sign_in_required: bool,
    /// Its reminders and escalation, made with it.
    pub timers: Vec<NewTimer>,
    /// Its stages, when its people are asked in turn (the first stage's members are
    /// `assignees`); empty otherwise.
    pub stages: Vec<NewStage>,
}

/// One stage of a new page's approvals.
#[derive(Clone, Debug)]
pub struct NewStage {
    /// Approvals that settle it.
    pub required: u32,
    /// What its declines do.
    pub on_decline: OnDecline,
    /// Whom it asks.
    pub members: Vec<Member>,
}

impl Default for PagePeople {
    fn default() -> Self {
        Self {
            assignees: Vec::new(),
            required: 1,
            decline_reason_required: false,
            sign_in_required: false,
            timers: Vec::new(),
            stages: Vec::new(),
        }
    }
}

/// One assignee of a new page.
#[derive(Clone, Debug)]
pub struct NewAssignee {
    /// Their e-mail address.
    pub email: String,
    /// The hash of their link's token.
    pub token_hash: TokenHash,
    /// The group they answer for, when they were asked as one of its members.
    pub group: Option<String>,
}

/// How a submission names its page.
#[derive(Clone, Copy)]
enum PageKey<'a> {
    /// By its link (the person's POST).
    Token(&'a TokenHash),
    /// By its id (code acting for the person).
    Id(PageId),
}

impl PageKey<'_> {
    fn column(self) -> &'static str {
        match self {
            Self::Token(_) => "token_hash",
            Self::Id(_) => "id",
        }
    }

    fn value(self) -> String {
        match self {
            Self::Token(hash) => hash.0.clone(),
            Self::Id(id) => id.to_string(),
        }
    }
}

/// An author's change to a waiting page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PageChange {
    /// Withdraw the link: it answers 410 from now on.
    Revoke,
    /// Move the expiry to this instant (unix ms).
    Extend(i64),
    /// Replace the link: the old token stops working, the new one (by its hash) works.
    Reissue(TokenHash),
}
