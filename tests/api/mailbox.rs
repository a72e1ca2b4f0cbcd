//! A real SMTP server for tests that read what was delivered: aiosmtpd (installed by
//! `scripts/setup.sh --test` into `.tools/py`) running `tests/support/mailbox.py`.

use std::{
    io::{BufRead as _, BufReader},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use anyhow::{bail, Context as _};
use serde::Deserialize;

/// One message as the server received it.
#[derive(Debug, Clone, Deserialize)]
pub struct Delivered {
    pub mail_from: String,
    pub rcpt_to: Vec<String>,
    /// The whole message: headers, a blank line, the body.
    pub data: String,
}

impl Delivered {
    /// The value of the first header called `name` (case-insensitive), unfolded.
    pub fn header(&self, name: &str) -> Option<String> {
        let head = self.data.split("\r\n\r\n").next().unwrap_or_default();
        let head = head.split("\n\n").next().unwrap_or_default();
        let mut lines = head.lines().peekable();
        while let Some(line) = lines.next() {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            if key.eq_ignore_ascii_case(name) {
                let mut value = value.trim().to_owned();
                while let Some(next) = lines.peek().filter(|l| l.starts_with([' ', '\t'])) {
                    value.push(' ');
                    value.push_str(next.trim());
                    lines.next();
                }
                return Some(value);
            }
        }
        None
    }

    /// The message with quoted-printable soft line breaks joined and `=3D` read as `=`, so a
    /// long link in a text part reads whole.
    pub fn text(&self) -> String {
        self.data
            .replace("=\r\n", "")
            .replace("=\n", "")
            .replace("=3D", "=")
    }

    /// The first `http(s)://…` link in the message whose path starts with `path`.
    pub fn link_to(&self, path: &str) -> Option<String> {
        let text = self.text();
        text.match_indices("http")
            .map(|(start, _)| {
                let rest = &text[start..];
                let end = rest
                    .find(|c: char| c.is_whitespace() || matches!(c, '"' | '<' | '>'))
                    .unwrap_or(rest.len());
                &rest[..end]
            })
            .find(|link| url::Url::parse(link).is_ok_and(|url| url.path().starts_with(path)))
            .map(str::to_owned)
    }

    /// The first page link (`…/p/<token>`) in the message, its quoted-printable soft breaks
    /// undone.
    pub fn page_path(&self) -> Option<String> {
        let text = self.text();
        let start = text.find("/p/")?;
        let token: String = text[start + 3..]
            .chars()
            .take_while(char::is_ascii_hexdigit)
            .collect();
        (token.len() == 48).then(|| format!("/p/{token}"))
    }

    pub fn is_to(&self, address: &str) -> bool {
        self.rcpt_to
            .iter()
            .any(|to| to.eq_ignore_ascii_case(address))
    }
}

/// The running server; killed when dropped.
pub struct Mailbox {
    child: Child,
    port: u16,
    out: PathBuf,
    _dir: tempfile::TempDir,
}

impl Mailbox {
    pub async fn start() -> anyhow::Result<Self> {
        let port = 0;
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let python = root.join(".tools/py/bin/python");
        if !python.exists() {
            bail!(
                "{} is missing: run `scripts/setup.sh --test` (it installs aiosmtpd)",
                python.display()
            );
        }
        let dir = tempfile::tempdir()?;
        let out = dir.path().join("mail.jsonl");
        let mut child = Command::new(&python)
            .arg(root.join("tests/support/mailbox.py"))
            .arg(&out)
            .arg(port.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting tests/support/mailbox.py")?;
        let stdout = child.stdout.take().context("the mailbox's stdout")?;
        let port = tokio::task::spawn_blocking(move || -> anyhow::Result<u16> {
            let mut line = String::new();
            BufReader::new(stdout).read_line(&mut line)?;
            line.trim()
                .strip_prefix("listening ")
                .and_then(|port| port.parse().ok())
                .with_context(|| format!("the mailbox said {line:?}, not `listening PORT`"))
        })
        .await??;
        Ok(Self {
            child,
            port,
            out,
            _dir: dir,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The environment that makes a `tessera` process send its mail here (plain SMTP on
    /// loopback), with `ask_email_to` as `TESSERA_ASK_EMAIL_TO`.
    pub fn settings(&self, ask_email_to: &str) -> Vec<(&'static str, String)> {
        vec![
            ("TESSERA_SMTP_HOST", "127.0.0.1".to_owned()),
            ("TESSERA_SMTP_PORT", self.port.to_string()),
            ("TESSERA_SMTP_TLS", "none".to_owned()),
            (
                "TESSERA_SMTP_FROM",
                "Tessera <tessera@example.com>".to_owned(),
            ),
            ("TESSERA_NOTIFY_EMAIL_TO", "ops@example.com".to_owned()),
            ("TESSERA_ASK_EMAIL_TO", ask_email_to.to_owned()),
        ]
    }

    /// The same, for an app configured in code.
    pub fn notify_config(
        &self,
        ask_email_to: &str,
    ) -> anyhow::Result<tessera::notify::NotifyConfig> {
        use tessera::notify::{EmailConfig, NotifyConfig, RecipientAllowlist, SmtpTls};
        Ok(NotifyConfig {
            email: Some(EmailConfig {
                host: "127.0.0.1".to_owned(),
                port: self.port,
                tls: SmtpTls::None,
                login: None,
                from: "Tessera <tessera@example.com>".parse()?,
                to: vec!["ops@example.com".parse()?],
            }),
            ask_recipients: RecipientAllowlist {
                email: vec![ask_email_to.to_owned()],
                ..RecipientAllowlist::default()
            },
            ..NotifyConfig::default()
        })
    }

    /// Every message delivered so far, oldest first.
    pub fn messages(&self) -> anyhow::Result<Vec<Delivered>> {
        let text = std::fs::read_to_string(&self.out).unwrap_or_default();
        text.lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str(line).context("a mailbox line"))
            .collect()
    }

    /// Waits until `wanted` holds for the messages delivered so far, or fails after `within`.
    pub async fn wait_until(
        &self,
        within: Duration,
        wanted: impl Fn(&[Delivered]) -> bool,
    ) -> anyhow::Result<Vec<Delivered>> {
        let deadline = Instant::now() + within;
        loop {
            let messages = self.messages()?;
            if wanted(&messages) {
                return Ok(messages);
            }
            if Instant::now() >= deadline {
                bail!(
                    "the mailbox did not get the expected mail within {within:?}; it holds {} message(s): {:#?}",
                    messages.len(),
                    messages.iter().map(|m| (&m.rcpt_to, m.header("Subject"))).collect::<Vec<_>>()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Mailbox {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn a_message_sent_over_smtp_is_read_back_with_its_headers() -> anyhow::Result<()> {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
    let mailbox = Mailbox::start().await?;
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", mailbox.port())).await?;
    let (read, mut write) = stream.into_split();
    let mut lines = tokio::io::BufReader::new(read).lines();
    let mut expect = async |code: &str| -> anyhow::Result<()> {
        let line = lines.next_line().await?.context("the server hung up")?;
        anyhow::ensure!(line.starts_with(code), "wanted {code}, got {line}");
        Ok(())
    };
    expect("220").await?;
    for (command, code) in [
        ("HELO test\r\n", "250"),
        ("MAIL FROM:<a@example.com>\r\n", "250"),
        ("RCPT TO:<b@example.com>\r\n", "250"),
        ("DATA\r\n", "354"),
        (
            "Subject: Hello\r\n long line\r\nMessage-ID: <1@example.com>\r\n\r\nBody\r\n.\r\n",
            "250",
        ),
    ] {
        write.write_all(command.as_bytes()).await?;
        expect(code).await?;
    }
    let messages = mailbox
        .wait_until(Duration::from_secs(5), |m| m.len() == 1)
        .await?;
    assert!(messages[0].is_to("b@example.com"));
    assert_eq!(messages[0].mail_from, "a@example.com");
    assert_eq!(
        messages[0].header("subject").as_deref(),
        Some("Hello long line")
    );
    assert_eq!(
        messages[0].header("Message-ID").as_deref(),
        Some("<1@example.com>")
    );
    Ok(())
}
