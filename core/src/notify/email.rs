//! E-mail over SMTP with `lettre`: the notification's title as the subject, its message and
//! link as a plain-text body with a small HTML alternative.
//!
//! Three transports, chosen by `TESSERA_SMTP_TLS`: `starttls` (the default, port 587: plain
//! connect, then STARTTLS is *required*, so no credentials or mail ever cross in clear text),
//! `tls` (port 465, TLS from the first byte) and `none` (port 25, clear text: for a relay on
//! the same host or a test sink only). Certificates are checked against the webpki roots with
//! rustls. One connection is opened per message: notifications are rare, and a pool would
//! keep idle connections that servers drop anyway. Nothing is retried here; an SMTP server
//! queues and retries delivery itself once it has accepted the message.

use std::{fmt, str::FromStr, time::Duration};

use lettre::{
    message::{Mailbox, MultiPart},
    transport::smtp::authentication::Credentials,
    AsyncSmtpTransport, AsyncTransport as _, Message, Tokio1Executor,
};
use tessera_app::escape::escape_attribute;

use super::{Channel, Notification, NotifyError};
use tessera_settings::Secret;

/// How the SMTP connection is protected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SmtpTls {
    /// Clear text throughout; only for a local relay or a test sink.
    None,
    /// Connect in clear, then require STARTTLS before anything else is sent.
    #[default]
    StartTls,
    /// TLS from the first byte (SMTPS).
    Tls,
}

impl SmtpTls {
    /// The usual port: 25 for `none`, 587 for `starttls`, 465 for `tls`.
    #[must_use]
    pub fn default_port(self) -> u16 {
        match self {
            Self::None => 25,
            Self::StartTls => 587,
            Self::Tls => 465,
        }
    }
}

impl FromStr for SmtpTls {
    type Err = NotifyError;

    fn from_str(raw: &str) -> Result<Self, NotifyError> {
        match raw.trim().to_ascii_lowercase().as_str() {
            "none" => Ok(Self::None),
            "starttls" => Ok(Self::StartTls),
            "tls" => Ok(Self::Tls),
            _ => Err(NotifyError::bad_config(
                "TESSERA_SMTP_TLS",
                format!("`{raw}` is not none, starttls or tls"),
            )),
        }
    }
}

/// A user name and password for SMTP AUTH.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SmtpLogin {
    /// The user name.
    pub username: String,
    /// The password.
    pub password: Secret,
}

/// Where and how to send e-mail, and to whom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmailConfig {
    /// The SMTP server's host name (also the name its certificate must carry).
    pub host: String,
    /// The SMTP port.
    pub port: u16,
    /// How the connection is protected.
    pub tls: SmtpTls,
    /// The login, when the server wants one.
    pub login: Option<SmtpLogin>,
    /// The sender, e.g. `Tessera <tessera@example.com>`.
    pub from: Mailbox,
    /// The recipients; at least one.
    pub to: Vec<Mailbox>,
}

/// Sends notifications as e-mail through one SMTP server.
#[derive(Clone)]
pub struct EmailSender {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    to: Vec<Mailbox>,
}

impl fmt::Debug for EmailSender {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("EmailSender")
            .field("from", &self.from)
            .field("to", &self.to)
            .finish_non_exhaustive()
    }
}

impl EmailSender {
    /// A sender for `config` whose SMTP commands give up after `timeout`.
    ///
    /// # Errors
    /// Returns [`NotifyError::BadConfig`] naming `TESSERA_NOTIFY_EMAIL_TO` when there is no
    /// recipient, or `TESSERA_SMTP_HOST` when TLS cannot be set up for that host name.
    pub fn new(config: EmailConfig, timeout: Duration) -> Result<Self, NotifyError> {
        if config.to.is_empty() {
            return Err(NotifyError::bad_config(
                "TESSERA_NOTIFY_EMAIL_TO",
                "names no recipient",
            ));
        }
        let tls_error = |error: lettre::transport::smtp::Error| {
            NotifyError::bad_config("TESSERA_SMTP_HOST", error.to_string())
        };
        let mut builder = match config.tls {
            SmtpTls::None => AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&config.host),
            SmtpTls::StartTls => AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(&config.host)
                .map_err(tls_error)?,
            SmtpTls::Tls => {
                AsyncSmtpTransport::<Tokio1Executor>::relay(&config.host).map_err(tls_error)?
            }
        }
        .port(config.port)
        .timeout(Some(timeout));
        if let Some(login) = config.login {
            builder = builder.credentials(Credentials::new(
                login.username,
                login.password.expose().to_owned(),
            ));
        }
        Ok(Self {
            transport: builder.build(),
            from: config.from,
            to: config.to,
        })
    }

    /// Sends `notification` to every recipient in one message.
    ///
    /// # Errors
    /// Returns [`NotifyError::Message`] when lettre cannot build the message and
    /// [`NotifyError::Smtp`] when the server cannot be reached or refuses it.
    pub async fn send(&self, notification: &Notification) -> Result<(), NotifyError> {
        let message = self.message(notification)?;
        self.transport
            .send(message)
            .await
            .map_err(|error| NotifyError::Smtp {
                reason: describe(&error),
            })?;
        Ok(())
    }

    fn message(&self, notification: &Notification) -> Result<Message, NotifyError> {
        let mut builder = Message::builder()
            .from(self.from.clone())
            .subject(one_line(&notification.title));
        if let Some(message_id) = &notification.message_id {
            builder = builder.message_id(Some(format!("<{message_id}>")));
        }
        for recipient in &self.to {
            builder = builder.to(recipient.clone());
        }
        builder
            .multipart(MultiPart::alternative_plain_html(
                plain_body(notification),
                html_body(notification),
            ))
            .map_err(|error| NotifyError::Message {
                channel: Channel::Email,
                reason: error.to_string(),
            })
    }
}

/// The message, a blank line and the link on a line of its own, so every mail client can
/// open it.
fn plain_body(notification: &Notification) -> String {
    format!(
        "{}\n\nOpen the page:\n{}\n",
        notification.message.trim_end(),
        notification.link
    )
}

fn html_body(notification: &Notification) -> String {
    let paragraphs: String = notification
        .message
        .trim()
        .split("\n\n")
        .map(|paragraph| {
            format!(
                "<p>{}</p>",
                escape_attribute(paragraph).replace('\n', "<br>")
            )
        })
        .collect();
    let link = escape_attribute(notification.link.as_str());
    format!(
        "<!doctype html><html><body>{paragraphs}<p><a href=\"{link}\">Open the page</a></p>\
         <p style=\"color:#666;font-size:small\">{link}</p></body></html>"
    )
}

/// A subject on one line: line breaks would end the header.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// lettre's error and its causes on one line.
fn describe(error: &lettre::transport::smtp::Error) -> String {
    crate::util::causes::on_one_line(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notification() -> anyhow::Result<Notification> {
        Ok(Notification::new(
            "Sort <your> inbox",
            "Forty e-mails wait.\n\nPick the ones to archive & add a note.",
            url::Url::parse("https://tessera.example/p/tok?x=1&y=2")?,
        ))
    }

    #[test]
    fn tls_modes_parse_and_pick_their_usual_ports() -> Result<(), NotifyError> {
        assert_eq!("none".parse::<SmtpTls>()?.default_port(), 25);
        assert_eq!("STARTTLS".parse::<SmtpTls>()?.default_port(), 587);
        assert_eq!("tls".parse::<SmtpTls>()?.default_port(), 465);
        let error = "ssl"
            .parse::<SmtpTls>()
            .err()
            .map(|error| error.to_string());
        assert_eq!(
            error.as_deref(),
            Some("invalid TESSERA_SMTP_TLS: `ssl` is not none, starttls or tls")
        );
        Ok(())
    }

    #[test]
    fn the_plain_body_ends_with_the_link_on_its_own_line() -> anyhow::Result<()> {
        let body = plain_body(&notification()?);
        assert!(body.starts_with("Forty e-mails wait."));
        assert!(
            body.ends_with("\nhttps://tessera.example/p/tok?x=1&y=2\n"),
            "{body}"
        );
        Ok(())
    }

    #[test]
    fn the_html_body_escapes_text_and_links() -> anyhow::Result<()> {
        let html = html_body(&notification()?);
        assert!(
            html.contains("<p>Pick the ones to archive &amp; add a note.</p>"),
            "{html}"
        );
        assert!(
            html.contains("href=\"https://tessera.example/p/tok?x=1&amp;y=2\""),
            "{html}"
        );
        Ok(())
    }

    #[test]
    fn subjects_stay_on_one_line() {
        assert_eq!(one_line("a\r\nBcc: x@example.com"), "a Bcc: x@example.com");
    }

    #[test]
    fn a_sender_needs_a_recipient() -> anyhow::Result<()> {
        let config = EmailConfig {
            host: "localhost".into(),
            port: 25,
            tls: SmtpTls::None,
            login: None,
            from: "Tessera <tessera@example.com>".parse()?,
            to: Vec::new(),
        };
        let error = EmailSender::new(config, Duration::from_secs(1))
            .err()
            .map(|error| error.to_string());
        assert_eq!(
            error.as_deref(),
            Some("invalid TESSERA_NOTIFY_EMAIL_TO: names no recipient")
        );
        Ok(())
    }

    #[test]
    fn the_message_carries_subject_sender_and_recipients() -> anyhow::Result<()> {
        let config = EmailConfig {
            host: "localhost".into(),
            port: 25,
            tls: SmtpTls::None,
            login: Some(SmtpLogin {
                username: "user".into(),
                password: Secret::new("smtp-password"),
            }),
            from: "Tessera <tessera@example.com>".parse()?,
            to: vec!["ada@example.com".parse()?, "bob@example.com".parse()?],
        };
        let sender = EmailSender::new(config, Duration::from_secs(1))?;
        assert!(!format!("{sender:?}").contains("smtp-password"));
        let formatted = String::from_utf8(sender.message(&notification()?)?.formatted())?;
        assert!(
            formatted.contains("Subject: Sort <your> inbox"),
            "{formatted}"
        );
        assert!(
            formatted.contains("From: Tessera <tessera@example.com>"),
            "{formatted}"
        );
        assert!(formatted.contains("ada@example.com"), "{formatted}");
        assert!(formatted.contains("bob@example.com"), "{formatted}");
        assert!(formatted.contains("multipart/alternative"), "{formatted}");
        Ok(())
    }
}
