//! The SQLite database as a file an operator keeps: `tessera backup` copies a live database
//! consistently, `tessera restore` puts a copy back, and the lock that tells a restore a server
//! still holds the file.
//!
//! The lock is an advisory file lock on `<database>.lock` beside the database: every server on
//! the file holds it shared for its whole life (several processes may share a file), a restore
//! takes it exclusive without waiting. SQLite's own locks cannot say this: in WAL mode an idle
//! server holds none that a `BEGIN EXCLUSIVE` would meet. The operating system drops the lock
//! with its process, so a server killed with SIGKILL does not leave the file claimed.

use std::{
    fs::{File, TryLockError},
    path::{Path, PathBuf},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use sqlx::{
    sqlite::{SqliteConnectOptions, SqliteJournalMode},
    ConnectOptions as _, Connection as _, Row as _,
};

use super::SQLITE_MIGRATIONS;

/// What can stop a backup or a restore; every message names the file at fault.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The database to back up does not exist.
    #[error("there is no database at {0}")]
    NoDatabase(PathBuf),
    /// The backup would overwrite a file.
    #[error("{0} already exists; name a new file")]
    Exists(PathBuf),
    /// A server holds the database, so it cannot be replaced.
    #[error("a running server holds {database} (lock {lock}); stop it first")]
    InUse {
        /// The database.
        database: PathBuf,
        /// Its lock file.
        lock: PathBuf,
    },
    /// The copy to restore is not a sound Tessera database.
    #[error("{path} is not a Tessera database to restore: {reason}")]
    NotABackup {
        /// The copy.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A file operation failed.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// To which file.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// SQLite refused.
    #[error("{path}: {source}")]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// The driver's error.
        source: sqlx::Error,
    },
}

/// The result type of this module.
pub type Result<T, E = FileError> = std::result::Result<T, E>;

fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> FileError + 'a {
    move |source| FileError::Io {
        action,
        path: path.to_owned(),
        source,
    }
}

fn sqlite(path: &Path) -> impl FnOnce(sqlx::Error) -> FileError + '_ {
    move |source| FileError::Sqlite {
        path: path.to_owned(),
        source,
    }
}

/// The lock file beside `database`.
#[must_use]
pub fn lock_path(database: &Path) -> PathBuf {
    let mut name = database.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// A held lock on a database file; released when dropped (or when the process dies).
#[derive(Debug)]
pub struct DatabaseLock {
    _file: File,
}

impl DatabaseLock {
    /// The server's share of the lock on `database`, held while it runs.
    ///
    /// # Errors
    /// [`FileError::InUse`] while a restore replaces the file; [`FileError::Io`] when the lock
    /// file cannot be opened.
    pub fn shared(database: &Path) -> Result<Self> {
        let lock = lock_path(database);
        let file = open_lock(&lock)?;
        match file.try_lock_shared() {
            Ok(()) => Ok(Self { _file: file }),
            Err(TryLockError::WouldBlock) => Err(FileError::InUse {
                database: database.to_owned(),
                lock,
            }),
            Err(TryLockError::Error(error)) => Err(io("locking", &lock)(error)),
        }
    }

    /// The whole lock, or [`FileError::InUse`] at once when a server holds its share.
    fn exclusive(database: &Path) -> Result<Self> {
        let lock = lock_path(database);
        let file = open_lock(&lock)?;
        match file.try_lock() {
            Ok(()) => Ok(Self { _file: file }),
            Err(TryLockError::WouldBlock) => Err(FileError::InUse {
                database: database.to_owned(),
                lock,
            }),
            Err(TryLockError::Error(error)) => Err(io("locking", &lock)(error)),
        }
    }
}

fn open_lock(lock: &Path) -> Result<File> {
    File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(lock)
        .map_err(io("opening the lock file", lock))
}

/// Copies the live database at `database` into the new file `into`, consistent as of one
/// moment: `VACUUM INTO` reads inside one transaction while servers go on writing (in WAL mode
/// they are not blocked). The copy is written beside `into` and renamed, so `into` is never a
/// half-written file, then checked like a restore checks it.
///
/// # Errors
/// [`FileError::NoDatabase`], [`FileError::Exists`], or the failure of the copy or its check.
pub async fn backup(database: &Path, into: &Path) -> Result<u64> {
    if !tokio::fs::try_exists(database).await.unwrap_or(false) {
        return Err(FileError::NoDatabase(database.to_owned()));
    }
    if tokio::fs::try_exists(into).await.unwrap_or(true) {
        return Err(FileError::Exists(into.to_owned()));
    }
    let mut partial = into.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    let _ = tokio::fs::remove_file(&partial).await;
    let mut connection = SqliteConnectOptions::new()
        .filename(database)
        .create_if_missing(false)
        .busy_timeout(Duration::from_secs(30))
        .connect()
        .await
        .map_err(sqlite(database))?;
    sqlx::query("VACUUM INTO ?")
        .bind(partial.to_string_lossy().into_owned())
        .execute(&mut connection)
        .await
        .map_err(sqlite(database))?;
    let _ = connection.close().await;
    check_backup(&partial).await?;
    tokio::fs::rename(&partial, into)
        .await
        .map_err(io("naming the backup", into))?;
    let size = tokio::fs::metadata(into)
        .await
        .map_err(io("reading", into))?
        .len();
    Ok(size)
}

/// Whether `copy` is sound (`PRAGMA integrity_check`) and a Tessera database this version can
/// run: its migrations table lists migrations, all of them known to this build.
///
/// # Errors
/// [`FileError::NotABackup`] saying what is wrong.
pub async fn check_backup(copy: &Path) -> Result<()> {
    let not_a_backup = |reason: String| FileError::NotABackup {
        path: copy.to_owned(),
        reason,
    };
    if !tokio::fs::try_exists(copy).await.unwrap_or(false) {
        return Err(not_a_backup("no such file".into()));
    }
    // Read-only and immutable: checking a copy must not create its -wal/-shm or change it.
    let mut connection = SqliteConnectOptions::new()
        .filename(copy)
        .read_only(true)
        .immutable(true)
        .journal_mode(SqliteJournalMode::Delete)
        .connect()
        .await
        .map_err(|error| not_a_backup(error.to_string()))?;
    let report: Vec<String> = sqlx::query("PRAGMA integrity_check")
        .fetch_all(&mut connection)
        .await
        .map_err(|error| not_a_backup(error.to_string()))?
        .iter()
        .map(|row| row.try_get::<String, _>(0).unwrap_or_default())
        .collect();
    if report != ["ok"] {
        return Err(not_a_backup(format!(
            "integrity check failed: {}",
            report.join("; ")
        )));
    }
    let versions: Vec<i64> =
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success ORDER BY version")
            .fetch_all(&mut connection)
            .await
            .map_err(|_| not_a_backup("it has no Tessera migrations table".into()))?;
    let _ = connection.close().await;
    if versions.is_empty() {
        return Err(not_a_backup("its migrations table is empty".into()));
    }
    let known: Vec<i64> = SQLITE_MIGRATIONS
        .iter()
        .map(|migration| migration.version)
        .collect();
    if let Some(unknown) = versions.iter().find(|version| !known.contains(version)) {
        return Err(not_a_backup(format!(
            "migration {unknown} is not one this version knows (made by a newer Tessera?)"
        )));
    }
    Ok(())
}

/// What a restore did with the database it replaced.
#[derive(Debug)]
pub struct Restored {
    /// Where the replaced database was moved (its `-wal` beside it), if there was one.
    pub previous: Option<PathBuf>,
}

/// Puts the backup `from` in place of the database at `database`, unless a server holds it
/// ([`DatabaseLock`]). The copy is checked first ([`check_backup`]); the database it replaces
/// is kept beside it as `<database>.before-restore-<unix seconds>`, with its `-wal` (which
/// may hold its last commits), so a restore can be undone by hand. The lock is held throughout,
/// so no server starts on a half-restored file.
///
/// # Errors
/// [`FileError::InUse`], [`FileError::NotABackup`], or a file operation's failure.
pub async fn restore(from: &Path, database: &Path) -> Result<Restored> {
    check_backup(from).await?;
    if let (Ok(from_path), Ok(database_path)) = (
        tokio::fs::canonicalize(from).await,
        tokio::fs::canonicalize(database).await,
    ) {
        if from_path == database_path {
            return Err(FileError::NotABackup {
                path: from.to_owned(),
                reason: "it is the database itself".into(),
            });
        }
    }
    let _lock = DatabaseLock::exclusive(database)?;
    let previous = if tokio::fs::try_exists(database).await.unwrap_or(false) {
        let seconds = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_secs());
        let kept = with_suffix(database, &format!(".before-restore-{seconds}"));
        tokio::fs::rename(database, &kept)
            .await
            .map_err(io("moving aside", database))?;
        // The replaced database's WAL goes with it: left here it would be replayed into the
        // restored file. The shared-memory index is rebuilt from the WAL, so it can go.
        let wal = with_suffix(database, "-wal");
        if tokio::fs::try_exists(&wal).await.unwrap_or(false) {
            tokio::fs::rename(&wal, with_suffix(&kept, "-wal"))
                .await
                .map_err(io("moving aside", &wal))?;
        }
        Some(kept)
    } else {
        None
    };
    let _ = tokio::fs::remove_file(with_suffix(database, "-shm")).await;
    let incoming = with_suffix(database, ".restoring");
    tokio::fs::copy(from, &incoming)
        .await
        .map_err(io("copying to", &incoming))?;
    let file = tokio::fs::File::open(&incoming)
        .await
        .map_err(io("opening", &incoming))?;
    file.sync_all().await.map_err(io("syncing", &incoming))?;
    tokio::fs::rename(&incoming, database)
        .await
        .map_err(io("putting in place", database))?;
    Ok(Restored { previous })
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::{lock_path, DatabaseLock, FileError};

    #[test]
    fn a_server_share_of_the_lock_keeps_a_restore_out_and_servers_share_it() -> anyhow::Result<()> {
        let folder = tempfile::tempdir()?;
        let database = folder.path().join("t.db");
        let first = DatabaseLock::shared(&database)?;
        let _second = DatabaseLock::shared(&database)?;
        assert!(matches!(
            DatabaseLock::exclusive(&database),
            Err(FileError::InUse { .. })
        ));
        drop(first);
        drop(_second);
        let restoring = DatabaseLock::exclusive(&database)?;
        assert!(matches!(
            DatabaseLock::shared(&database),
            Err(FileError::InUse { .. })
        ));
        drop(restoring);
        assert!(lock_path(&database).exists());
        Ok(())
    }
}
