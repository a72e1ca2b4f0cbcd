//! The chat's messages between processes: PostgreSQL `LISTEN`/`NOTIFY` behind the facade.
//!
//! A message (a chat event or a stop, encoded by `chat::events`) is a row of `chat_bus`; the
//! insert's statement sends one `NOTIFY` on [`CHAT_BUS_CHANNEL`] with `"<seq> <origin>"`, because a
//! payload is capped at 8000 bytes (sent at the insert's commit) and a reply or a preview is not. [`Store::listen_chat`] reads
//! the rows other origins announce and hands them over in order; after a lost connection it
//! reads what was published meanwhile. Rows older than [`KEEP_MS`] are deleted as new ones come.
//! SQLite serves one process, so there nothing is published and nobody listens.

use std::time::Duration;

use sqlx::postgres::PgListener;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{decode_uuid, now_ms, Result, Store};
use crate::records::chat::session::SessionId;

/// The channel that says "a chat message was published".
pub const CHAT_BUS_CHANNEL: &str = "tessera_chat";

/// How long a published message is kept for listeners that reconnect.
pub const KEEP_MS: i64 = 60_000;

/// How long a listener waits before connecting again after losing its connection.
const RECONNECT_WAIT: Duration = Duration::from_secs(1);

/// A message another process published.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BusMessage {
    /// The session it concerns.
    pub session_id: SessionId,
    /// Its body, as the publisher encoded it.
    pub body: String,
}

impl Store {
    /// Whether messages published here reach other processes (PostgreSQL).
    #[must_use]
    pub fn has_chat_bus(&self) -> bool {
        matches!(self, Self::Postgres(_))
    }

    /// Publishes `body` about `session_id` from `origin` to every other process; nothing on
    /// SQLite.
    ///
    /// # Errors
    /// Database failures.
    pub async fn publish_chat(
        &self,
        origin: &str,
        session_id: SessionId,
        body: &str,
    ) -> Result<()> {
        let Self::Postgres(pool) = self else {
            return Ok(());
        };
        let now = now_ms();
        // One transaction: the NOTIFY is sent at commit, when listeners can read the row.
        let mut transaction = pool.begin().await?;
        let (seq,): (i64,) = sqlx::query_as(
            "INSERT INTO chat_bus (origin, session_id, body, created_at) VALUES ($1, $2, $3, $4) \
             RETURNING seq",
        )
        .bind(origin)
        .bind(session_id.to_string())
        .bind(body)
        .bind(now)
        .fetch_one(&mut *transaction)
        .await?;
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(CHAT_BUS_CHANNEL)
            .bind(format!("{seq} {origin}"))
            .execute(&mut *transaction)
            .await?;
        transaction.commit().await?;
        if seq % 64 == 0 {
            sqlx::query("DELETE FROM chat_bus WHERE created_at < $1")
                .bind(now - KEEP_MS)
                .execute(pool)
                .await?;
        }
        Ok(())
    }

    /// Messages other origins than `me` publish from now on, in order, until `shutdown`; `None` on
    /// SQLite. Returns once listening (or once the first attempt failed: the listening task then
    /// reconnects by itself, and logs what it cannot read).
    pub async fn listen_chat(
        &self,
        me: String,
        shutdown: CancellationToken,
    ) -> Option<mpsc::Receiver<BusMessage>> {
        let Self::Postgres(pool) = self else {
            return None;
        };
        let (sender, receiver) = mpsc::channel(1024);
        let mut last_seen = None;
        let first = match connect(pool, &mut last_seen).await {
            Ok(listener) => Some(listener),
            Err(error) => {
                tracing::warn!(error = %error, "cannot LISTEN for chat messages; retrying");
                None
            }
        };
        tokio::spawn(postgres_listen(
            pool.clone(),
            me,
            sender,
            shutdown,
            first,
            last_seen,
        ));
        Some(receiver)
    }
}

type Row = (i64, String, String, String);

async fn postgres_listen(
    pool: sqlx::PgPool,
    me: String,
    sender: mpsc::Sender<BusMessage>,
    shutdown: CancellationToken,
    mut listener: Option<PgListener>,
    mut last_seen: Option<i64>,
) {
    while !shutdown.is_cancelled() {
        let connected = match listener.take() {
            Some(listener) => Ok(listener),
            None => connect(&pool, &mut last_seen).await,
        };
        let listened = match connected {
            Ok(listener) => listen(listener, &pool, &me, &sender, &shutdown, &mut last_seen).await,
            Err(error) => Err(error),
        };
        match listened {
            Ok(()) => return,
            Err(error) => {
                tracing::warn!(error = %error, "the chat LISTEN connection failed; reconnecting");
            }
        }
        tokio::select! {
            () = tokio::time::sleep(RECONNECT_WAIT) => {}
            () = shutdown.cancelled() => return,
        }
    }
}

/// A listener on [`CHAT_BUS_CHANNEL`]; the first one also notes where the table ends now.
async fn connect(pool: &sqlx::PgPool, last_seen: &mut Option<i64>) -> Result<PgListener> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen(CHAT_BUS_CHANNEL).await?;
    if last_seen.is_none() {
        let (newest,): (Option<i64>,) = sqlx::query_as("SELECT MAX(seq) FROM chat_bus")
            .fetch_one(pool)
            .await?;
        *last_seen = Some(newest.unwrap_or(0));
    }
    Ok(listener)
}

/// Listens until `shutdown` (`Ok`) or a database failure (`Err`, to reconnect).
async fn listen(
    mut listener: PgListener,
    pool: &sqlx::PgPool,
    me: &str,
    sender: &mpsc::Sender<BusMessage>,
    shutdown: &CancellationToken,
    last_seen: &mut Option<i64>,
) -> Result<()> {
    // Listening now: what was published while we were not is in the table.
    let missed: Vec<Row> =
        match *last_seen {
            Some(seq) => sqlx::query_as(
                "SELECT seq, origin, session_id, body FROM chat_bus WHERE seq > $1 ORDER BY seq",
            )
            .bind(seq)
            .fetch_all(pool)
            .await?,
            None => Vec::new(),
        };
    for row in missed {
        if !deliver(row, me, sender, last_seen).await {
            return Ok(());
        }
    }
    loop {
        let notification = tokio::select! {
            received = listener.recv() => received?,
            () = shutdown.cancelled() => return Ok(()),
        };
        let mut parts = notification.payload().splitn(2, ' ');
        let seq = parts.next().and_then(|seq| seq.parse::<i64>().ok());
        let origin = parts.next().unwrap_or_default();
        let Some(seq) = seq else {
            tracing::warn!(
                payload = notification.payload(),
                "an unreadable chat NOTIFY"
            );
            continue;
        };
        if origin == me {
            *last_seen = Some(last_seen.map_or(seq, |seen| seen.max(seq)));
            continue;
        }
        let row: Option<Row> =
            sqlx::query_as("SELECT seq, origin, session_id, body FROM chat_bus WHERE seq = $1")
                .bind(seq)
                .fetch_optional(pool)
                .await?;
        if let Some(row) = row {
            if !deliver(row, me, sender, last_seen).await {
                return Ok(());
            }
        }
    }
}

/// Hands a row to the receiver unless `me` wrote it; `false` when the receiver is gone.
async fn deliver(
    (seq, origin, session_id, body): Row,
    me: &str,
    sender: &mpsc::Sender<BusMessage>,
    last_seen: &mut Option<i64>,
) -> bool {
    *last_seen = Some(last_seen.map_or(seq, |seen| seen.max(seq)));
    if origin == me {
        return true;
    }
    match decode_uuid("chat_bus.session_id", &session_id) {
        Ok(id) => sender
            .send(BusMessage {
                session_id: SessionId(id),
                body,
            })
            .await
            .is_ok(),
        Err(error) => {
            tracing::warn!(error = %error, chat_bus.seq = seq, "an unreadable chat message");
            true
        }
    }
}
