//! A person's sign-in links (`sign_in_links`, migration `20261129200000`) and what a signed-in
//! person sees: whether an address may sign in, and their inbox (`page_assignees`, by address).
//!
//! Addresses are compared without case: they are stored as the ask named them, and looked up
//! through the index on `lower(assignee)`.

use super::{decode_json, decode_parsed, decode_uuid, Result, Store};
use crate::records::{
    inbox::{InboxEntry, InboxState},
    page::{PageId, PageStatus},
    people::Outcome,
    token::TokenHash,
};

#[derive(sqlx::FromRow)]
struct InboxRow {
    page_id: String,
    position: i64,
    status: String,
    tree: String,
    created_at: i64,
    expires_at: i64,
    outcome: Option<String>,
    answered_at: Option<i64>,
    workflow: Option<String>,
}

impl InboxRow {
    fn into_entry(self, now_ms: i64) -> Result<InboxEntry> {
        let status = decode_parsed("pages.status", &self.status, PageStatus::parse)?;
        let outcome = self
            .outcome
            .as_deref()
            .map(|text| decode_parsed("page_assignees.outcome", text, Outcome::parse))
            .transpose()?;
        let state = match (outcome, self.answered_at) {
            (Some(outcome), Some(at_ms)) => InboxState::Answered { outcome, at_ms },
            _ => match status {
                PageStatus::Submitted => InboxState::Decided,
                PageStatus::Revoked => InboxState::Withdrawn,
                PageStatus::Open if self.expires_at <= now_ms => InboxState::Expired,
                PageStatus::Open => InboxState::Open,
            },
        };
        Ok(InboxEntry {
            page_id: PageId(decode_uuid("page_assignees.page_id", &self.page_id)?),
            position: self.position,
            workflow: self.workflow,
            tree: decode_json("pages.tree", &self.tree)?,
            created_at_ms: self.created_at,
            expires_at_ms: self.expires_at,
            state,
        })
    }
}

impl Store {
    /// Stores a sign-in link for `email` by its token's hash, usable until `expires_at_ms`.
    ///
    /// # Errors
    /// Database failures; [`StoreError::Conflict`](crate::StoreError::Conflict) if the hash is
    /// already used.
    pub async fn create_sign_in_link(
        &self,
        token_hash: &TokenHash,
        email: &str,
        now_ms: i64,
        expires_at_ms: i64,
    ) -> Result<()> {
        on_pool!(self, |pool| {
            sqlx::query(
                "INSERT INTO sign_in_links (token_hash, email, created_at, expires_at) \
                 VALUES ($1, $2, $3, $4)",
            )
            .bind(&token_hash.0)
            .bind(email)
            .bind(now_ms)
            .bind(expires_at_ms)
            .execute(pool)
            .await?;
        });
        Ok(())
    }

    /// The address a sign-in link is for, if it is unused and unexpired at `now_ms`. Never
    /// writes: opening the link only shows the button that uses it.
    ///
    /// # Errors
    /// Database failures.
    pub async fn sign_in_link_email(
        &self,
        token_hash: &TokenHash,
        now_ms: i64,
    ) -> Result<Option<String>> {
        Ok(on_pool!(self, |pool| {
            sqlx::query_scalar(
                "SELECT email FROM sign_in_links \
                 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2",
            )
            .bind(&token_hash.0)
            .bind(now_ms)
            .fetch_optional(pool)
            .await?
        }))
    }

    /// Uses a sign-in link: the address it is for, if it was unused and unexpired at `now_ms`;
    /// then it is used. One statement checks and marks it, so it signs in once.
    ///
    /// # Errors
    /// Database failures.
    pub async fn consume_sign_in_link(
        &self,
        token_hash: &TokenHash,
        now_ms: i64,
    ) -> Result<Option<String>> {
        Ok(on_pool!(self, |pool| {
            sqlx::query_scalar(
                "UPDATE sign_in_links SET used_at = $2 \
                 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING email",
            )
            .bind(&token_hash.0)
            .bind(now_ms)
            .fetch_optional(pool)
            .await?
        }))
    }

    /// Forgets sign-in links that expired before `before_ms`.
    ///
    /// # Errors
    /// Database failures.
    pub async fn delete_expired_sign_in_links(&self, before_ms: i64) -> Result<u64> {
        Ok(on_pool!(self, |pool| {
            sqlx::query("DELETE FROM sign_in_links WHERE expires_at < $1")
                .bind(before_ms)
                .execute(pool)
                .await?
                .rows_affected()
        }))
    }

    /// Whether `email` is an assignee of any ask, answered or not.
    ///
    /// # Errors
    /// Database failures.
    pub async fn is_assignee_anywhere(&self, email: &str) -> Result<bool> {
        let found: Option<i64> = on_pool!(self, |pool| {
            sqlx::query_scalar(
                "SELECT CAST(1 AS BIGINT) FROM page_assignees WHERE lower(assignee) = $1 LIMIT 1",
            )
            .bind(email.to_lowercase())
            .fetch_optional(pool)
            .await?
        });
        Ok(found.is_some())
    }

    /// `email`'s asks, as assignee: the ones still waiting for their answer first (oldest
    /// deadline first), then the rest (newest first); `limit` from `offset`.
    ///
    /// # Errors
    /// Database failures.
    pub async fn inbox(
        &self,
        email: &str,
        now_ms: i64,
        limit: i64,
        offset: i64,
    ) -> Result<Vec<InboxEntry>> {
        let rows: Vec<InboxRow> = on_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT a.page_id, a.position, p.status, p.tree, p.created_at, p.expires_at, \
                        a.outcome, a.answered_at, r.workflow \
                 FROM page_assignees a \
                 JOIN pages p ON p.id = a.page_id \
                 LEFT JOIN runs r ON r.id = p.run_id \
                 WHERE lower(a.assignee) = $1 \
                 ORDER BY CASE WHEN a.outcome IS NULL AND p.status = 'open' AND p.expires_at > $2 \
                               THEN 0 ELSE 1 END, \
                          CASE WHEN a.outcome IS NULL AND p.status = 'open' AND p.expires_at > $2 \
                               THEN p.expires_at ELSE -p.created_at END, \
                          a.page_id \
                 LIMIT $3 OFFSET $4",
            )
            .bind(email.to_lowercase())
            .bind(now_ms)
            .bind(limit)
            .bind(offset)
            .fetch_all(pool)
            .await?
        });
        rows.into_iter().map(|row| row.into_entry(now_ms)).collect()
    }

    /// The position of `email` among page `page_id`'s assignees, if they are one.
    ///
    /// # Errors
    /// Database failures.
    pub async fn assignee_position(&self, page_id: PageId, email: &str) -> Result<Option<i64>> {
        Ok(on_pool!(self, |pool| {
            sqlx::query_scalar(
                "SELECT position FROM page_assignees WHERE page_id = $1 AND lower(assignee) = $2",
            )
            .bind(page_id.to_string())
            .bind(email.to_lowercase())
            .fetch_optional(pool)
            .await?
        }))
    }
}
