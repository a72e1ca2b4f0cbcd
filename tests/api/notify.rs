//! Notifications through the public API, against real local sinks started by each test: an
//! axum listener that records every request (standing in for ntfy and a webhook receiver) and
//! a small SMTP server on a tokio listener that records every message.

use std::{
    collections::HashMap,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use anyhow::Context as _;
use tessera::{
    config::Secret,
    notify::{
        verify, Channel, DeliveryPolicy, EmailConfig, EmailSender, Notification, Notifier,
        NotifyConfig, NotifyError, NtfyClient, NtfyConfig, Priority, SigningKey, SigningPurpose,
        SmtpTls, WebhookSender,
    },
};
use tokio::{
    io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader},
    net::TcpListener,
};

use crate::helpers::{HttpSink, Seen};

const SECRET: &str = "whsec_test_0123456789abcdef";

/// The notification webhook's key under [`SECRET`].
fn key() -> SigningKey {
    SigningKey::derive(&Secret::new(SECRET), SigningPurpose::Notification)
}

/// One message as the SMTP sink received it.
#[derive(Clone, Debug, Default)]
struct Mail {
    mail_from: String,
    rcpt_to: Vec<String>,
    data: String,
}

/// A tokio listener speaking just enough SMTP (no TLS, no AUTH) to take messages.
struct SmtpSink {
    address: SocketAddr,
    mails: Arc<Mutex<Vec<Mail>>>,
}

impl SmtpSink {
    async fn start() -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let mails = Arc::new(Mutex::new(Vec::new()));
        let recorded = mails.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let recorded = recorded.clone();
                tokio::spawn(async move { smtp_session(stream, recorded).await });
            }
        });
        Ok(Self { address, mails })
    }

    fn mails(&self) -> Vec<Mail> {
        self.mails
            .lock()
            .map(|mails| mails.clone())
            .unwrap_or_default()
    }
}

async fn smtp_session(
    stream: tokio::net::TcpStream,
    mails: Arc<Mutex<Vec<Mail>>>,
) -> std::io::Result<()> {
    let (reader, mut writer) = stream.into_split();
    let mut reader = BufReader::new(reader);
    writer.write_all(b"220 sink.test ESMTP ready\r\n").await?;
    let mut mail = Mail::default();
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        let command = line.trim_end().to_ascii_uppercase();
        let reply: &[u8] = if command.starts_with("EHLO") {
            b"250-sink.test\r\n250 8BITMIME\r\n"
        } else if command.starts_with("HELO") {
            b"250 sink.test\r\n"
        } else if command.starts_with("MAIL FROM:") {
            mail = Mail {
                mail_from: line.trim_end()["MAIL FROM:".len()..].to_owned(),
                ..Mail::default()
            };
            b"250 OK\r\n"
        } else if command.starts_with("RCPT TO:") {
            mail.rcpt_to
                .push(line.trim_end()["RCPT TO:".len()..].to_owned());
            b"250 OK\r\n"
        } else if command == "DATA" {
            writer.write_all(b"354 end with <CRLF>.<CRLF>\r\n").await?;
            let mut data = String::new();
            loop {
                line.clear();
                if reader.read_line(&mut line).await? == 0 {
                    return Ok(());
                }
                if line == ".\r\n" {
                    break;
                }
                data.push_str(&line);
            }
            mail.data = data;
            if let Ok(mut mails) = mails.lock() {
                mails.push(std::mem::take(&mut mail));
            }
            b"250 OK queued\r\n"
        } else if command == "QUIT" {
            writer.write_all(b"221 bye\r\n").await?;
            return Ok(());
        } else {
            // RSET, NOOP and anything else a client may send between messages.
            b"250 OK\r\n"
        };
        writer.write_all(reply).await?;
    }
}

fn quick_policy(max_attempts: u32) -> DeliveryPolicy {
    DeliveryPolicy {
        max_attempts,
        base_delay: Duration::from_millis(2),
        max_delay: Duration::from_millis(20),
        attempt_timeout: Duration::from_secs(5),
    }
}

fn notification(link: &str) -> anyhow::Result<Notification> {
    Ok(Notification::new(
        "Your inbox needs you",
        "Forty e-mails are waiting to be sorted.",
        url::Url::parse(link)?,
    )
    .with_priority(Priority::High)
    .with_tags(["inbox", "email"]))
}

const LINK: &str = "http://127.0.0.1:3000/p/tok_0123456789abcdef";

fn timestamp_of(seen: &Seen) -> anyhow::Result<u64> {
    Ok(seen
        .header("x-tessera-timestamp")
        .context("no X-Tessera-Timestamp")?
        .parse()?)
}

#[tokio::test]
async fn ntfy_receives_title_click_priority_tags_token_and_message() -> anyhow::Result<()> {
    let sink = HttpSink::start(&[]).await?;
    let config = NtfyConfig::new(
        sink.url("/tessera-test")?.as_str(),
        Some(Secret::new("tk_ntfy_token")),
    )?;
    let client = NtfyClient::new(config, Duration::from_secs(5))?;

    client.publish(&notification(LINK)?).await?;

    let seen = sink.seen();
    assert_eq!(seen.len(), 1);
    let request = &seen[0];
    assert_eq!(request.path, "/tessera-test");
    assert_eq!(request.header("title"), Some("Your inbox needs you"));
    assert_eq!(request.header("click"), Some(LINK));
    assert_eq!(request.header("priority"), Some("4"));
    assert_eq!(request.header("tags"), Some("inbox,email"));
    assert_eq!(
        request.header("authorization"),
        Some("Bearer tk_ntfy_token")
    );
    assert_eq!(
        request.body.as_ref(),
        b"Forty e-mails are waiting to be sorted."
    );
    Ok(())
}

#[tokio::test]
async fn ntfy_without_a_token_sends_no_authorization() -> anyhow::Result<()> {
    let sink = HttpSink::start(&[]).await?;
    let config = NtfyConfig::new(sink.url("/open-topic")?.as_str(), None)?;
    let client = NtfyClient::new(config, Duration::from_secs(5))?;
    client
        .publish(&Notification::new("Hi", "There", url::Url::parse(LINK)?))
        .await?;
    let seen = sink.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].header("authorization"), None);
    assert_eq!(seen[0].header("tags"), None);
    assert_eq!(seen[0].header("priority"), Some("3"));
    Ok(())
}

#[tokio::test]
async fn an_ntfy_rejection_is_an_error_naming_the_status() -> anyhow::Result<()> {
    let sink = HttpSink::start(&[403]).await?;
    let config = NtfyConfig::new(sink.url("/locked")?.as_str(), None)?;
    let client = NtfyClient::new(config, Duration::from_secs(5))?;
    let error = client
        .publish(&notification(LINK)?)
        .await
        .err()
        .context("a 403 was accepted")?;
    assert!(
        matches!(
            error,
            NotifyError::Status {
                channel: Channel::Ntfy,
                status: 403,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("403"), "{error}");
    assert_eq!(sink.seen().len(), 1);
    Ok(())
}

#[tokio::test]
async fn a_webhook_signature_verifies_and_a_tampered_body_does_not() -> anyhow::Result<()> {
    let sink = HttpSink::start(&[]).await?;
    let sender = WebhookSender::new(key(), quick_policy(3))?;

    let delivery = sender
        .send_json(&sink.url("/hook")?, &notification(LINK)?)
        .await?;

    let seen = sink.seen();
    assert_eq!(seen.len(), 1);
    let request = &seen[0];
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(
        request.header("x-tessera-delivery"),
        Some(delivery.id.to_string().as_str())
    );
    let signature = request
        .header("x-tessera-signature")
        .context("no X-Tessera-Signature")?;
    let timestamp = timestamp_of(request)?;
    let secret = key();
    assert!(verify(&secret, signature, timestamp, &request.body));

    let mut tampered = request.body.to_vec();
    tampered.extend_from_slice(b" ");
    assert!(!verify(&secret, signature, timestamp, &tampered));
    assert!(!verify(&secret, signature, timestamp + 1, &request.body));
    assert!(!verify(
        &SigningKey::derive(
            &Secret::new("some-other-secret-value"),
            SigningPurpose::Notification
        ),
        signature,
        timestamp,
        &request.body
    ));

    let json: serde_json::Value = serde_json::from_slice(&request.body)?;
    assert_eq!(json["title"], "Your inbox needs you");
    assert_eq!(json["link"], LINK);
    assert_eq!(json["priority"], "high");
    assert_eq!((delivery.attempts, delivery.status), (1, 200));
    Ok(())
}

#[tokio::test]
async fn a_webhook_is_retried_after_a_500_with_the_same_delivery_id() -> anyhow::Result<()> {
    let sink = HttpSink::start(&[500, 200]).await?;
    let sender = WebhookSender::new(key(), quick_policy(5))?;

    let delivery = sender
        .send_json(&sink.url("/hook")?, &serde_json::json!({"answer": 42}))
        .await?;

    let seen = sink.seen();
    assert_eq!(seen.len(), 2, "one 500, then one 200");
    assert_eq!(delivery.attempts, 2);
    let ids: Vec<Option<&str>> = seen
        .iter()
        .map(|request| request.header("x-tessera-delivery"))
        .collect();
    let expected = delivery.id.to_string();
    assert_eq!(ids, [Some(expected.as_str()), Some(expected.as_str())]);
    for request in &seen {
        let signature = request.header("x-tessera-signature").unwrap_or_default();
        assert!(verify(
            &key(),
            signature,
            timestamp_of(request)?,
            &request.body
        ));
        assert_eq!(request.body.as_ref(), br#"{"answer":42}"#);
    }
    Ok(())
}

#[tokio::test]
async fn a_429_and_a_503_are_retried_too() -> anyhow::Result<()> {
    let sink = HttpSink::start(&[429, 503, 204]).await?;
    let sender = WebhookSender::new(key(), quick_policy(5))?;
    let delivery = sender
        .send_json(&sink.url("/hook")?, &serde_json::json!({}))
        .await?;
    assert_eq!((delivery.attempts, delivery.status), (3, 204));
    assert_eq!(sink.seen().len(), 3);
    Ok(())
}

#[tokio::test]
async fn a_webhook_answered_400_is_not_retried() -> anyhow::Result<()> {
    let sink = HttpSink::start(&[400, 200]).await?;
    let sender = WebhookSender::new(key(), quick_policy(5))?;

    let outcome = sender
        .send_json(&sink.url("/hook")?, &serde_json::json!({"answer": 42}))
        .await;

    assert!(
        matches!(
            outcome,
            Err(NotifyError::Status {
                channel: Channel::Webhook,
                status: 400,
                ..
            })
        ),
        "{outcome:?}"
    );
    assert_eq!(sink.seen().len(), 1);
    Ok(())
}

#[tokio::test]
async fn a_webhook_that_never_acknowledges_gives_up_after_the_configured_attempts(
) -> anyhow::Result<()> {
    let sink = HttpSink::start(&[503, 503, 503, 503]).await?;
    let sender = WebhookSender::new(key(), quick_policy(3))?;
    let outcome = sender
        .send_json(&sink.url("/hook")?, &serde_json::json!({}))
        .await;
    let Err(NotifyError::GaveUp { attempts, last, .. }) = outcome else {
        anyhow::bail!("expected GaveUp, got {outcome:?}");
    };
    assert_eq!(attempts, 3);
    assert!(matches!(*last, NotifyError::Status { status: 503, .. }));
    assert_eq!(sink.seen().len(), 3);
    Ok(())
}

#[tokio::test]
async fn a_webhook_to_a_closed_port_is_retried_as_a_network_error() -> anyhow::Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    drop(listener);
    let sender = WebhookSender::new(key(), quick_policy(2))?;
    let url = url::Url::parse(&format!("http://{address}/hook"))?;
    let outcome = sender.send_json(&url, &serde_json::json!({})).await;
    let Err(NotifyError::GaveUp { attempts, last, .. }) = outcome else {
        anyhow::bail!("expected GaveUp, got {outcome:?}");
    };
    assert_eq!(attempts, 2);
    assert!(
        matches!(
            *last,
            NotifyError::Transport {
                channel: Channel::Webhook,
                ..
            }
        ),
        "{last:?}"
    );
    Ok(())
}

#[tokio::test]
async fn an_email_reaches_the_smtp_sink_with_subject_recipient_and_link() -> anyhow::Result<()> {
    let sink = SmtpSink::start().await?;
    let sender = EmailSender::new(
        EmailConfig {
            host: sink.address.ip().to_string(),
            port: sink.address.port(),
            tls: SmtpTls::None,
            login: None,
            from: "Tessera <tessera@example.com>".parse()?,
            to: vec!["Ada <ada@example.com>".parse()?],
        },
        Duration::from_secs(5),
    )?;

    sender.send(&notification(LINK)?).await?;

    let mails = sink.mails();
    assert_eq!(mails.len(), 1);
    let mail = &mails[0];
    assert_eq!(mail.mail_from, "<tessera@example.com>");
    assert_eq!(mail.rcpt_to, ["<ada@example.com>"]);
    assert!(
        mail.data.contains("Subject: Your inbox needs you\r\n"),
        "{}",
        mail.data
    );
    assert!(
        mail.data.contains("To: Ada <ada@example.com>"),
        "{}",
        mail.data
    );
    assert!(
        mail.data
            .contains("Forty e-mails are waiting to be sorted."),
        "{}",
        mail.data
    );
    assert!(mail.data.contains(LINK), "{}", mail.data);
    assert!(mail.data.contains("text/html"), "{}", mail.data);
    Ok(())
}

#[tokio::test]
async fn the_notifier_reports_each_channel_and_one_failure_does_not_stop_the_others(
) -> anyhow::Result<()> {
    let ntfy = HttpSink::start(&[500]).await?;
    let webhook = HttpSink::start(&[]).await?;
    let smtp = SmtpSink::start().await?;
    let settings: HashMap<&str, String> = HashMap::from([
        ("TESSERA_NTFY_URL", ntfy.url("/tessera")?.to_string()),
        ("TESSERA_WEBHOOK_URL", webhook.url("/hook")?.to_string()),
        ("TESSERA_WEBHOOK_SECRET", SECRET.to_owned()),
        ("TESSERA_WEBHOOK_BASE_DELAY_MS", "1".to_owned()),
        ("TESSERA_SMTP_HOST", smtp.address.ip().to_string()),
        ("TESSERA_SMTP_PORT", smtp.address.port().to_string()),
        ("TESSERA_SMTP_TLS", "none".to_owned()),
        ("TESSERA_SMTP_FROM", "tessera@example.com".to_owned()),
        ("TESSERA_NOTIFY_EMAIL_TO", "ada@example.com".to_owned()),
        ("TESSERA_NOTIFY_TIMEOUT_SECS", "5".to_owned()),
    ]);
    let config = NotifyConfig::from_lookup(&|name: &str| settings.get(name).cloned())?;
    let notifier = Notifier::from_config(&config)?;
    assert_eq!(
        notifier.channels(),
        [Channel::Ntfy, Channel::Webhook, Channel::Email]
    );

    let report = notifier.send(&notification(LINK)?).await;

    assert!(!report.all_delivered());
    assert_eq!(report.delivered(), [Channel::Webhook, Channel::Email]);
    let failures = report.failures();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].0, Channel::Ntfy);
    assert!(matches!(
        failures[0].1,
        NotifyError::Status { status: 500, .. }
    ));
    assert_eq!(ntfy.seen().len(), 1, "ntfy is not retried");
    assert_eq!(webhook.seen().len(), 1);
    assert_eq!(smtp.mails().len(), 1);
    Ok(())
}
