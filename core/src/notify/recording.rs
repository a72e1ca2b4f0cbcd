//! [`RecordingNotifier`]: the fake behind [`Notify`] for tests of code that notifies.
//!
//! Workflow and asks tests want to know *that* a person was told, not to run an ntfy server.
//! This fake keeps every notification it is given and answers with the outcomes it was set up
//! with, so a test can also check how its caller handles a failing channel. It does no I/O.

use std::sync::{Arc, Mutex};

use super::{Channel, ChannelOutcome, Notification, Notify, NotifyError, Report};

/// Records notifications instead of sending them.
#[derive(Clone, Debug, Default)]
pub struct RecordingNotifier {
    sent: Arc<Mutex<Vec<Notification>>>,
    outcomes: Vec<ChannelOutcome>,
}

impl RecordingNotifier {
    /// A fake with no channels: every notification is recorded and the report is empty.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A fake that reports `channel` as failed with `error` on every notification.
    #[must_use]
    pub fn failing(channel: Channel, error: NotifyError) -> Self {
        Self {
            sent: Arc::default(),
            outcomes: vec![ChannelOutcome {
                channel,
                result: Err(error),
            }],
        }
    }

    /// Every notification received so far, oldest first.
    #[must_use]
    pub fn sent(&self) -> Vec<Notification> {
        self.sent
            .lock()
            .map(|sent| sent.clone())
            .unwrap_or_else(|poisoned| poisoned.into_inner().clone())
    }
}

#[async_trait::async_trait]
impl Notify for RecordingNotifier {
    async fn notify(&self, notification: &Notification) -> Report {
        match self.sent.lock() {
            Ok(mut sent) => sent.push(notification.clone()),
            Err(poisoned) => poisoned.into_inner().push(notification.clone()),
        }
        Report {
            outcomes: self.outcomes.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn notifications_are_recorded_in_order() -> anyhow::Result<()> {
        let fake = RecordingNotifier::new();
        let link = url::Url::parse("https://tessera.example/p/1")?;
        let notifier: Arc<dyn Notify> = Arc::new(fake.clone());
        notifier
            .notify(&Notification::new("first", "m", link.clone()))
            .await;
        let report = notifier
            .notify(&Notification::new("second", "m", link))
            .await;
        assert!(report.all_delivered());
        let titles: Vec<String> = fake.sent().into_iter().map(|sent| sent.title).collect();
        assert_eq!(titles, ["first", "second"]);
        Ok(())
    }

    #[tokio::test]
    async fn a_failing_fake_reports_its_failure() -> anyhow::Result<()> {
        let fake = RecordingNotifier::failing(
            Channel::Email,
            NotifyError::Smtp {
                reason: "550 no such user".into(),
            },
        );
        let link = url::Url::parse("https://tessera.example/p/1")?;
        let report = fake.notify(&Notification::new("t", "m", link)).await;
        assert_eq!(report.failures().len(), 1);
        assert_eq!(fake.sent().len(), 1);
        Ok(())
    }
}
