//! What an ask's caller is told about a callback that did not get through: the receiver's status
//! or one fixed reason, never the receiver's words.
//!
//! `callback.last_error` in `GET /api/asks/{id}` is read by whoever created the ask, and the
//! callback URL is theirs to choose. Were the receiver's reply body or the transport's own
//! message ("connection refused" against "timed out") shown there, an ask would be a way to read
//! pages and scan ports of hosts only the server can reach. So every network failure is one
//! reason, "could not deliver"; a reply is its status only; a URL refused when sent (its name
//! now resolves to an internal address) says so. The details go to the server's log at `debug`.

use std::fmt;

use crate::notify::NotifyError;

/// Why a callback attempt failed, as its caller may see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Undelivered {
    /// The receiver answered with this status (not 2xx).
    Answered(u16),
    /// The receiver was not reached or did not answer in time (or anything else went wrong).
    NotDelivered,
    /// The URL's host now resolves to an address that is not public.
    NotPublic,
}

const ANSWERED: &str = "the receiver answered ";
const NOT_DELIVERED: &str = "could not deliver";
const NOT_PUBLIC: &str =
    "not sent: the callback URL does not resolve to public addresses only (TESSERA_OUTBOUND_ALLOW)";

impl fmt::Display for Undelivered {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Answered(status) => write!(formatter, "{ANSWERED}{status}"),
            Self::NotDelivered => formatter.write_str(NOT_DELIVERED),
            Self::NotPublic => formatter.write_str(NOT_PUBLIC),
        }
    }
}

impl Undelivered {
    /// The caller's view of a delivery error.
    #[must_use]
    pub fn of(error: &NotifyError) -> Self {
        match error {
            NotifyError::Status { status, .. } => Self::Answered(*status),
            NotifyError::Refused { .. } => Self::NotPublic,
            NotifyError::GaveUp { last, .. } => Self::of(last),
            _ => Self::NotDelivered,
        }
    }

    /// The caller's view of a callback step's stored error: the stored text when it is one of
    /// the fixed reasons, else "could not deliver" (errors stored before this rule, a step that
    /// ended abnormally), so no stored text reaches the caller unread.
    #[must_use]
    pub fn shown(stored: &str) -> String {
        let known = match stored {
            NOT_PUBLIC => Self::NotPublic,
            _ => stored
                .strip_prefix(ANSWERED)
                .and_then(|status| status.parse().ok())
                .map_or(Self::NotDelivered, Self::Answered),
        };
        known.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::Channel;

    #[test]
    fn only_a_status_or_a_fixed_reason_is_shown() {
        let answered = NotifyError::Status {
            channel: Channel::Webhook,
            status: 500,
            body_excerpt: "secret internal page".into(),
        };
        assert_eq!(
            Undelivered::of(&answered).to_string(),
            "the receiver answered 500"
        );
        for transport in ["connection refused", "operation timed out"] {
            let error = NotifyError::Transport {
                channel: Channel::Webhook,
                reason: transport.into(),
            };
            assert_eq!(Undelivered::of(&error).to_string(), "could not deliver");
        }
        assert_eq!(
            Undelivered::shown("the receiver answered 503"),
            "the receiver answered 503"
        );
        assert_eq!(
            Undelivered::shown("webhook answered HTTP 500: secret internal page"),
            "could not deliver"
        );
        assert_eq!(
            Undelivered::shown("the receiver answered 500: secret"),
            "could not deliver"
        );
        assert_eq!(
            Undelivered::shown(&Undelivered::NotPublic.to_string()),
            Undelivered::NotPublic.to_string()
        );
    }
}
