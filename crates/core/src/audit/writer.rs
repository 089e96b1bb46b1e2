//! The single writer of the audit files: appends each line with one `write(2)` to
//! `<dir>/audit-YYYY-MM-DD.jsonl` (mode 0600, `O_APPEND`), switches files when the UTC date of
//! the entries changes, and remembers failures so shutdown can report them.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::NaiveDate;
use tokio::sync::{mpsc, oneshot};

/// A message to the writer.
#[derive(Debug)]
pub(super) enum Message {
    /// One encoded line for the file of `date`.
    Line {
        /// The UTC date the entry was recorded on.
        date: NaiveDate,
        /// The line, newline included.
        bytes: Vec<u8>,
    },
    /// Write everything queued, close the channel, sync and report.
    Shutdown(oneshot::Sender<Result<(), WriteFailure>>),
}

/// Entries that could not be written: how many, where, and the first error.
#[derive(Debug, Clone)]
pub(super) struct WriteFailure {
    pub(super) path: PathBuf,
    pub(super) failed: u64,
    pub(super) source: Arc<std::io::Error>,
}

/// `<dir>/audit-YYYY-MM-DD.jsonl`.
pub(super) fn file_path(dir: &Path, date: NaiveDate) -> PathBuf {
    dir.join(format!("audit-{}.jsonl", date.format("%Y-%m-%d")))
}

/// Opens (creating if needed) the audit file at `path` for appending, readable by its owner only.
/// Refuses symlinks and anything that is not a regular file, and narrows a file that is readable
/// by others to 0600.
pub(super) fn open_file(path: &Path) -> std::io::Result<File> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(std::io::Error::other(
            "the audit file is a symbolic link; remove it so the log can create a regular file",
        ));
    }
    let mut options = OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(std::io::Error::other(
            "the audit path is not a regular file; remove it so the log can create one",
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if metadata.permissions().mode() & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
    }
    Ok(file)
}

/// The writer's state between lines.
struct Writer {
    dir: PathBuf,
    current: Option<(NaiveDate, File)>,
    failure: Option<WriteFailure>,
    /// A failed write to the current file may have left part of a line there.
    torn: bool,
}

impl Writer {
    fn write(&mut self, date: NaiveDate, bytes: &[u8]) {
        if let Err(error) = self.try_write(date, bytes) {
            let path = file_path(&self.dir, date);
            tracing::error!(path = %path.display(), %error, "cannot write audit entry");
            match &mut self.failure {
                Some(failure) => failure.failed += 1,
                None => {
                    self.failure = Some(WriteFailure {
                        path,
                        failed: 1,
                        source: Arc::new(error),
                    });
                }
            }
        }
    }

    fn try_write(&mut self, date: NaiveDate, bytes: &[u8]) -> std::io::Result<()> {
        let file = match &mut self.current {
            Some((current, file)) if *current == date => file,
            _ => {
                self.current = None;
                self.torn = false;
                let file = open_file(&file_path(&self.dir, date))?;
                &mut self.current.insert((date, file)).1
            }
        };
        let written = if self.torn {
            let mut buffer = Vec::with_capacity(bytes.len() + 1);
            buffer.push(b'\n');
            buffer.extend_from_slice(bytes);
            file.write_all(&buffer)
        } else {
            file.write_all(bytes)
        };
        // An unbuffered `File`: the line is with the kernel once `write_all` returns. After a
        // failure part of the line may be in the file, so the next line starts a fresh one.
        self.torn = written.is_err();
        written
    }

    /// Syncs the current file and hands back the failures seen.
    fn finish(&mut self) -> Result<(), WriteFailure> {
        if let Some((date, file)) = &self.current
            && let Err(error) = file.sync_data()
        {
            let path = file_path(&self.dir, *date);
            tracing::error!(path = %path.display(), %error, "cannot sync audit file");
            self.failure.get_or_insert(WriteFailure {
                path,
                failed: 0,
                source: Arc::new(error),
            });
        }
        self.current = None;
        match self.failure.take() {
            Some(failure) => Err(failure),
            None => Ok(()),
        }
    }
}

/// Runs the writer until shutdown (or until every sender is gone): a blocking loop, run on
/// tokio's blocking pool so plain `std::fs` writes cost no context switch per line.
pub(super) fn run(
    mut receiver: mpsc::Receiver<Message>,
    dir: PathBuf,
    first: Option<(NaiveDate, File)>,
) {
    let mut writer = Writer {
        dir,
        current: first,
        failure: None,
        torn: false,
    };
    let mut waiting = Vec::new();
    while let Some(message) = receiver.blocking_recv() {
        match message {
            Message::Line { date, bytes } => writer.write(date, &bytes),
            Message::Shutdown(reply) => {
                waiting.push(reply);
                // No new entries from here on; everything already sent is still written.
                receiver.close();
            }
        }
    }
    let result = writer.finish();
    if waiting.is_empty()
        && let Err(failure) = &result
    {
        tracing::error!(
            path = %failure.path.display(),
            failed = failure.failed,
            error = %failure.source,
            "audit log dropped without shutdown after failed writes"
        );
    }
    for reply in waiting {
        // A caller that stopped waiting does not need the answer.
        let _ = reply.send(result.clone());
    }
}
