//! The audit log: one JSON line per hook event in `<dir>/audit-YYYY-MM-DD.jsonl` (UTC date),
//! written by a single writer task, flushed per entry and drained on shutdown. It is not
//! tracing: it is a record of decisions that a failed write must not silently lose.
//!
//! Each entry is stamped, redacted, truncated and encoded by the caller of
//! [`AuditLog::record`] (so that work runs in parallel), then queued to the writer over a
//! bounded channel. `record` waits for room when the queue is full instead of dropping the
//! entry or growing without limit: with a healthy disk that wait is microseconds, and with a
//! stalled disk the server slows down rather than acting unaudited or filling memory.

mod entry;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

pub use self::entry::{AuditEntry, Hook, MAX_ENTRY_BYTES, MAX_NAME_BYTES};
use self::writer::Message;

/// Entries queued for the writer before [`AuditLog::record`] waits: 1024 lines of at most
/// 64 KiB bound the queue to 64 MiB in the worst case (a few hundred KiB in practice), and
/// absorb far larger bursts than an agent produces (the 64-writer test needs no more).
pub const CHANNEL_CAPACITY: usize = 1024;

/// The file an audit log writes on `date`: `<dir>/audit-YYYY-MM-DD.jsonl`.
pub fn file_path(dir: &Path, date: chrono::NaiveDate) -> PathBuf {
    writer::file_path(dir, date)
}

/// Errors of the audit log.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The audit directory could not be created or narrowed to mode 0700.
    #[error(
        "cannot create the audit directory {} with mode 0700: check the permissions of its \
         parent, or choose another directory with --audit-dir / COPILOT_AUDIT_LOG_DIR",
        dir.display()
    )]
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Today's audit file could not be opened for appending.
    #[error(
        "cannot open the audit file {} for appending: check that it is a regular file you own, \
         or choose another directory with --audit-dir / COPILOT_AUDIT_LOG_DIR",
        path.display()
    )]
    Open {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// [`AuditLog::open`] was called outside a tokio runtime.
    #[error("the audit log must be opened inside a tokio runtime (it spawns its writer task)")]
    NoRuntime,
    /// An entry could not be encoded as JSON.
    #[error("cannot encode an audit entry as JSON")]
    Encode(#[source] serde_json::Error),
    /// An entry was recorded after shutdown; it was not written.
    #[error("the audit log in {} is shut down; the entry was not written", dir.display())]
    Closed {
        /// The audit directory.
        dir: PathBuf,
    },
    /// Entries could not be written (reported by [`AuditLog::shutdown`]).
    #[error(
        "{failed} audit entries could not be written to {}: check free space and permissions \
         of the audit directory",
        path.display()
    )]
    Write {
        /// The file of the first failure.
        path: PathBuf,
        /// How many entries were lost.
        failed: u64,
        /// The first error.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// The writer task panicked or was aborted, so entries may be missing.
    #[error("the audit writer task ended unexpectedly; entries recorded since may be missing")]
    WriterGone,
}

/// A handle to an audit log; clones share the same writer. [`AuditLog::disabled`] records
/// nothing.
#[derive(Debug, Clone)]
pub struct AuditLog {
    inner: Option<Arc<Inner>>,
}

#[derive(Debug)]
struct Inner {
    dir: PathBuf,
    server: String,
    sender: mpsc::Sender<Message>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

impl AuditLog {
    /// Opens the audit log in `dir` for `server`: creates `dir` with mode 0700 (narrowing an
    /// existing one), opens today's file with mode 0600, and spawns the writer task. Must be
    /// called inside a tokio runtime.
    pub fn open(dir: &Path, server: &str) -> Result<AuditLog, AuditError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| AuditError::NoRuntime)?;
        create_private_dir(dir).map_err(|source| AuditError::CreateDir {
            dir: dir.to_owned(),
            source,
        })?;
        let today = Utc::now().date_naive();
        let path = writer::file_path(dir, today);
        let file = writer::open_file(&path).map_err(|source| AuditError::Open { path, source })?;

        let (sender, receiver) = mpsc::channel(CHANNEL_CAPACITY);
        let writer_dir = dir.to_owned();
        let handle =
            runtime.spawn_blocking(move || writer::run(receiver, writer_dir, Some((today, file))));
        Ok(AuditLog {
            inner: Some(Arc::new(Inner {
                dir: dir.to_owned(),
                server: server.to_owned(),
                sender,
                writer: Mutex::new(Some(handle)),
            })),
        })
    }

    /// A log that records nothing (auditing switched off).
    pub fn disabled() -> AuditLog {
        AuditLog { inner: None }
    }

    /// Whether entries are written anywhere.
    pub fn is_enabled(&self) -> bool {
        self.inner.is_some()
    }

    /// The audit directory, when enabled.
    pub fn dir(&self) -> Option<&Path> {
        self.inner.as_ref().map(|inner| inner.dir.as_path())
    }

    /// Records one entry: stamps `ts` (now, UTC) and `server`, redacts and truncates `input`,
    /// `output` and `reason`, and queues the line. Waits only while the queue is full. Fails
    /// after [`AuditLog::shutdown`]; write failures are reported by `shutdown`.
    pub async fn record(&self, entry: AuditEntry) -> Result<(), AuditError> {
        self.record_at(entry, Utc::now()).await
    }

    async fn record_at(&self, entry: AuditEntry, now: DateTime<Utc>) -> Result<(), AuditError> {
        let Some(inner) = &self.inner else {
            return Ok(());
        };
        let bytes = entry
            .into_line(&inner.server, now)
            .map_err(AuditError::Encode)?;
        let message = Message::Line {
            date: now.date_naive(),
            bytes,
        };
        inner
            .sender
            .send(message)
            .await
            .map_err(|_| AuditError::Closed {
                dir: inner.dir.clone(),
            })
    }

    /// Writes every entry recorded so far, syncs the file and stops the writer; later
    /// [`AuditLog::record`] calls fail. Reports entries that could not be written. Calling it
    /// again returns `Ok(())`.
    pub async fn shutdown(&self) -> Result<(), AuditError> {
        let Some(inner) = &self.inner else {
            return Ok(());
        };
        let (reply, answer) = oneshot::channel();
        if inner.sender.send(Message::Shutdown(reply)).await.is_err() {
            // Already shut down; the first call reported the outcome.
            return Ok(());
        }
        let result = answer.await;
        let handle = crate::sync::lock(&inner.writer).take();
        if let Some(handle) = handle
            && handle.await.is_err()
        {
            return Err(AuditError::WriterGone);
        }
        match result {
            Ok(Ok(())) => Ok(()),
            Ok(Err(failure)) => Err(AuditError::Write {
                path: failure.path,
                failed: failure.failed,
                source: failure.source,
            }),
            Err(_) => Err(AuditError::WriterGone),
        }
    }
}

/// Creates `dir` (and missing parents) with mode 0700, and narrows an existing `dir` that
/// others can read or enter.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        builder.mode(0o700);
        builder.create(dir)?;
        let metadata = std::fs::metadata(dir)?;
        if metadata.permissions().mode() & 0o077 != 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
        Ok(())
    }
    #[cfg(not(unix))]
    builder.create(dir)
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn read_lines(path: &Path) -> anyhow::Result<Vec<AuditEntry>> {
        let text = std::fs::read_to_string(path)?;
        text.lines()
            .map(|line| Ok(serde_json::from_str(line)?))
            .collect()
    }

    #[cfg(unix)]
    fn mode(path: &Path) -> anyhow::Result<u32> {
        use std::os::unix::fs::PermissionsExt;
        Ok(std::fs::metadata(path)?.permissions().mode() & 0o777)
    }

    #[tokio::test]
    async fn records_land_in_todays_file_stamped_with_server_and_time() -> anyhow::Result<()> {
        let home = tempfile::tempdir()?;
        let dir = home.path().join("a/b/audit");
        let log = AuditLog::open(&dir, "openclaw-memory")?;
        let before = Utc::now();
        let mut entry = AuditEntry::new(Hook::Pre, "openclaw_memory_search");
        entry.input = Some(json!({"query": "deploy"}));
        entry.depth = 2;
        log.record(entry.clone()).await?;
        log.shutdown().await?;

        let entries = read_lines(&file_path(&dir, before.date_naive()))
            .or_else(|_| read_lines(&file_path(&dir, Utc::now().date_naive())))?;
        assert_eq!(entries.len(), 1);
        let written = &entries[0];
        let ts = DateTime::parse_from_rfc3339(&written.ts)?;
        assert!(written.ts.ends_with('Z'), "{}", written.ts);
        assert!(ts >= before - chrono::Duration::milliseconds(1) && ts <= Utc::now());
        let expected = AuditEntry {
            ts: written.ts.clone(),
            server: "openclaw-memory".to_owned(),
            ..entry
        };
        assert_eq!(written, &expected);
        Ok(())
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn directory_is_0700_and_files_are_0600_even_if_they_existed_wider() -> anyhow::Result<()>
    {
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir()?;
        let dir = home.path().join("audit");
        std::fs::create_dir(&dir)?;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))?;
        let today = file_path(&dir, Utc::now().date_naive());
        std::fs::write(&today, "")?;
        std::fs::set_permissions(&today, std::fs::Permissions::from_mode(0o644))?;

        let log = AuditLog::open(&dir, "s")?;
        log.shutdown().await?;
        assert_eq!(mode(&dir)?, 0o700);
        assert_eq!(mode(&today)?, 0o600);

        let fresh = home.path().join("fresh/audit");
        let log = AuditLog::open(&fresh, "s")?;
        log.shutdown().await?;
        assert_eq!(mode(&fresh)?, 0o700);
        assert_eq!(mode(&file_path(&fresh, Utc::now().date_naive()))?, 0o600);
        Ok(())
    }

    #[tokio::test]
    async fn entries_go_to_the_file_of_their_utc_date() -> anyhow::Result<()> {
        let home = tempfile::tempdir()?;
        let log = AuditLog::open(home.path(), "s")?;
        let late = Utc.with_ymd_and_hms(2031, 12, 31, 23, 59, 59).single();
        let early = Utc.with_ymd_and_hms(2032, 1, 1, 0, 0, 1).single();
        let (Some(late), Some(early)) = (late, early) else {
            anyhow::bail!("bad test dates");
        };
        log.record_at(AuditEntry::new(Hook::Pre, "a"), late).await?;
        log.record_at(AuditEntry::new(Hook::Pre, "b"), early)
            .await?;
        log.record_at(AuditEntry::new(Hook::Post, "c"), late)
            .await?;
        log.shutdown().await?;

        let first = read_lines(&home.path().join("audit-2031-12-31.jsonl"))?;
        let second = read_lines(&home.path().join("audit-2032-01-01.jsonl"))?;
        let tools = |entries: &[AuditEntry]| -> Vec<String> {
            entries.iter().map(|e| e.tool.clone()).collect()
        };
        assert_eq!(tools(&first), ["a", "c"]);
        assert_eq!(tools(&second), ["b"]);
        assert_eq!(second[0].ts, "2032-01-01T00:00:01.000Z");
        Ok(())
    }

    #[tokio::test]
    async fn recording_after_shutdown_fails_and_shutdown_twice_is_fine() -> anyhow::Result<()> {
        let home = tempfile::tempdir()?;
        let log = AuditLog::open(home.path(), "s")?;
        let clone = log.clone();
        log.shutdown().await?;
        let err = clone
            .record(AuditEntry::new(Hook::Pre, "late"))
            .await
            .unwrap_err();
        assert!(matches!(err, AuditError::Closed { .. }), "{err:?}");
        clone.shutdown().await?;
        Ok(())
    }

    #[tokio::test]
    async fn failed_writes_are_reported_by_shutdown() -> anyhow::Result<()> {
        let home = tempfile::tempdir()?;
        let log = AuditLog::open(home.path(), "s")?;
        // A directory where tomorrow's file should be: every entry for that date fails.
        let blocked = Utc.with_ymd_and_hms(2040, 2, 2, 12, 0, 0).single();
        let Some(blocked) = blocked else {
            anyhow::bail!("bad test date");
        };
        std::fs::create_dir(home.path().join("audit-2040-02-02.jsonl"))?;
        log.record_at(AuditEntry::new(Hook::Pre, "x"), blocked)
            .await?;
        log.record_at(AuditEntry::new(Hook::Pre, "y"), blocked)
            .await?;
        log.record(AuditEntry::new(Hook::Pre, "fine")).await?;
        let err = log.shutdown().await.unwrap_err();
        match &err {
            AuditError::Write { path, failed, .. } => {
                assert_eq!(path, &home.path().join("audit-2040-02-02.jsonl"));
                assert_eq!(*failed, 2);
            }
            other => panic!("{other:?}"),
        }
        assert!(
            err.to_string()
                .starts_with("2 audit entries could not be written")
        );
        // The entry for a good date was still written.
        let today = read_lines(&file_path(home.path(), Utc::now().date_naive()))?;
        assert_eq!(today.len(), 1);
        Ok(())
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn symlinked_audit_files_are_refused() -> anyhow::Result<()> {
        let home = tempfile::tempdir()?;
        let target = home.path().join("elsewhere");
        std::fs::write(&target, "")?;
        let dir = home.path().join("audit");
        std::fs::create_dir(&dir)?;
        std::os::unix::fs::symlink(&target, file_path(&dir, Utc::now().date_naive()))?;
        let err = AuditLog::open(&dir, "s").unwrap_err();
        assert!(matches!(err, AuditError::Open { .. }), "{err:?}");
        Ok(())
    }

    #[tokio::test]
    async fn disabled_log_records_nothing() -> anyhow::Result<()> {
        let log = AuditLog::disabled();
        assert!(!log.is_enabled());
        log.record(AuditEntry::new(Hook::Pre, "x")).await?;
        log.shutdown().await?;
        Ok(())
    }

    #[test]
    fn opening_outside_a_runtime_is_an_error() -> anyhow::Result<()> {
        let home = tempfile::tempdir()?;
        let err = AuditLog::open(home.path(), "s").unwrap_err();
        assert!(matches!(err, AuditError::NoRuntime), "{err:?}");
        Ok(())
    }

    #[test]
    fn an_uncreatable_directory_is_an_error_naming_it() -> anyhow::Result<()> {
        let home = tempfile::tempdir()?;
        let file = home.path().join("file");
        std::fs::write(&file, "")?;
        let runtime = tokio::runtime::Builder::new_current_thread().build()?;
        let dir = file.join("audit");
        let err = runtime
            .block_on(async { AuditLog::open(&dir, "s") })
            .unwrap_err();
        assert!(matches!(&err, AuditError::CreateDir { dir: d, .. } if *d == dir));
        assert!(err.to_string().contains(&dir.display().to_string()));
        Ok(())
    }
}
