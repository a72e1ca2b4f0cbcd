//! The background task that fires reminders and escalations (DESIGN.md §15) and mails what
//! they give people, in every server process.
//!
//! Each tick fires a bounded batch of due timers (each exactly once: `store::timers`) and sends
//! a bounded batch of the mail fired timers hold, then finishes it. Mail is sent at least once:
//! a process that dies between sending and finishing leaves the mail to the next one, which
//! sends it with the same `Message-ID` (`<timer id>.<n>.tessera@<public host>`).

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{
    history::{EventKind, NewEvent},
    links::page_link,
    token::PageToken,
};
use crate::{
    notify::{AskRecipients, Notification, NotifierFor, NotifyError},
    store::{
        now_ms,
        timers::{LeasedMail, TimerKind},
        Store, StoreError,
    },
};

/// Timers fired, and fired timers' mail sent, per tick at most.
const BATCH: i64 = 50;
/// How often a fired timer's mail is tried before it is given up (with a warning).
const MAX_SEND_ATTEMPTS: i64 = 10;

/// Fires due timers and sends their mail.
#[derive(Clone)]
pub struct TimerWorker {
    store: Store,
    public_url: String,
    notifier_for: NotifierFor,
    poll: Duration,
    lease: Duration,
}

impl TimerWorker {
    /// A worker over `store`, linking under `public_url`, mailing through `notifier_for`,
    /// looking for due timers every `poll`, holding a fired timer's mail for `lease` while it
    /// sends it (another process sends it again after that).
    #[must_use]
    pub fn new(
        store: Store,
        public_url: impl Into<String>,
        notifier_for: NotifierFor,
        poll: Duration,
        lease: Duration,
    ) -> Self {
        Self {
            store,
            public_url: public_url.into(),
            notifier_for,
            poll,
            lease,
        }
    }

    /// Ticks every `poll` until `shutdown`.
    pub fn spawn(self, shutdown: CancellationToken) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            loop {
                if let Err(error) = self.tick(now_ms()).await {
                    tracing::warn!(error = %error, "firing reminders and escalations failed; trying again");
                }
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    () = tokio::time::sleep(self.poll) => {}
                }
            }
        })
    }

    /// Fires the timers due at `now` and sends the mail of fired timers.
    ///
    /// # Errors
    /// Database failures (what was done before stays done).
    pub async fn tick(&self, now: i64) -> Result<(), StoreError> {
        for timer_id in self.store.due_timers(now, BATCH).await? {
            self.store.fire_timer(&timer_id, now).await?;
        }
        let lease_ms = i64::try_from(self.lease.as_millis()).unwrap_or(i64::MAX / 2);
        for leased in self.store.claim_outbox(now, lease_ms, BATCH).await? {
            self.send(&leased).await?;
        }
        Ok(())
    }

    async fn send(&self, leased: &LeasedMail) -> Result<(), StoreError> {
        let host = url::Url::parse(&self.public_url)
            .ok()
            .and_then(|url| url.host_str().map(str::to_owned))
            .unwrap_or_else(|| "localhost".to_owned());
        let (title, message) = match leased.kind {
            TimerKind::Remind => (
                "Reminder: your answer is requested",
                "You have not answered yet. This link replaces the one sent to you before.",
            ),
            TimerKind::Escalate => (
                "Your answer is requested",
                "You are asked too: the people asked first have not settled it yet.",
            ),
            TimerKind::Stage => (
                "Your answer is requested",
                "The stage before yours is settled: it is your turn to answer.",
            ),
        };
        let mut notified = Vec::new();
        let mut failed = false;
        for (index, mail) in leased.mails.iter().enumerate() {
            let Some(token) = PageToken::parse(&mail.token) else {
                continue;
            };
            let Ok(link) = url::Url::parse(&page_link(&self.public_url, &token)) else {
                continue;
            };
            let recipient = AskRecipients {
                email: vec![mail.to.clone()],
                ..AskRecipients::default()
            };
            let notifier = match (self.notifier_for)(&recipient) {
                Ok(notifier) => notifier,
                Err(NotifyError::BadConfig { .. }) => {
                    tracing::debug!(
                        "no SMTP server configured: reminders and escalations are not e-mailed"
                    );
                    continue;
                }
                Err(error) => {
                    tracing::warn!(error = %error, "a reminder or escalation cannot be e-mailed");
                    continue;
                }
            };
            let notification = Notification::new(title, message, link)
                .with_message_id(format!("{}.{index}.tessera@{host}", leased.timer_id));
            let report = notifier.notify(&notification).await;
            if report.all_delivered() && !report.delivered().is_empty() {
                notified.push(
                    NewEvent::new(EventKind::Notified)
                        .by(mail.to.clone())
                        .detail("e-mail"),
                );
            } else {
                for (channel, error) in report.failures() {
                    tracing::warn!(notify.channel = ?channel, error = %error, "a reminder or escalation was not delivered");
                }
                failed = true;
            }
        }
        if failed && leased.attempts < MAX_SEND_ATTEMPTS {
            // Left fired: once the lease runs out the whole mail goes again, same Message-IDs.
            return Ok(());
        }
        if failed {
            tracing::warn!(timer.id = %leased.timer_id, "a reminder or escalation's mail was given up after {MAX_SEND_ATTEMPTS} attempts");
        }
        self.store
            .finish_outbox(&leased.timer_id, leased.page_id, &notified, now_ms())
            .await?;
        Ok(())
    }
}
