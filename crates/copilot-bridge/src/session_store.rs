//! The session store: which Copilot sessions the bridge opened, for which working directory and
//! task, so a `sessionId` can be continued after the bridge restarts (`session/load`). Kept in
//! `<state dir>/sessions.json`, written atomically with mode 0600; records older than
//! [`STALE_AFTER`] are dropped.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A session unused for this long is forgotten: the CLI may have pruned it, and a day-old
/// conversation is rarely what a caller means to continue.
pub const STALE_AFTER: Duration = Duration::from_hours(24);

/// Longest task summary kept per record, in characters: enough to seed a replacement session.
pub const SUMMARY_CHARS: usize = 500;

/// One recorded session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRecord {
    /// The agent's session id.
    pub session_id: String,
    /// The working directory the session runs in.
    pub working_dir: PathBuf,
    /// A short summary of the task (the first prompt, cut to [`SUMMARY_CHARS`]).
    pub task_summary: String,
    /// When the session was opened.
    pub created: DateTime<Utc>,
    /// When it was last used.
    pub last_activity: DateTime<Utc>,
    /// The model, when one was chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    sessions: Vec<SessionRecord>,
}

/// Why the store could not be saved.
#[derive(Debug, thiserror::Error)]
#[error("cannot save the session store {path}: {source}; check that the directory is writable")]
pub struct SessionStoreError {
    path: PathBuf,
    #[source]
    source: std::io::Error,
}

/// The session store. Blocking I/O: call from `spawn_blocking` in async code.
#[derive(Debug)]
pub struct SessionStore {
    path: PathBuf,
    records: BTreeMap<String, SessionRecord>,
}

impl SessionStore {
    /// Loads `<state_dir>/sessions.json`. A missing file is an empty store; an unreadable or
    /// corrupt one is logged and set aside (renamed `.corrupt`) so one bad write never locks the
    /// bridge out of its sessions.
    pub fn load(state_dir: &Path, now: DateTime<Utc>) -> Self {
        let path = state_dir.join("sessions.json");
        let records = match std::fs::read(&path) {
            Ok(bytes) => match serde_json::from_slice::<File>(&bytes) {
                Ok(file) => file
                    .sessions
                    .into_iter()
                    .map(|r| (r.session_id.clone(), r))
                    .collect(),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "session store is corrupt; starting empty");
                    let _ = std::fs::rename(&path, path.with_extension("json.corrupt"));
                    BTreeMap::new()
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot read the session store; starting empty");
                BTreeMap::new()
            }
        };
        let mut store = Self { path, records };
        store.prune(now);
        store
    }

    /// The record of `session_id`, if known and not stale.
    pub fn get(&self, session_id: &str) -> Option<&SessionRecord> {
        self.records.get(session_id)
    }

    /// Every record, most recently used first.
    pub fn list(&self) -> Vec<&SessionRecord> {
        let mut records: Vec<_> = self.records.values().collect();
        records.sort_by_key(|r| std::cmp::Reverse(r.last_activity));
        records
    }

    /// Records a new session (or replaces the record of the same id).
    pub fn insert(&mut self, mut record: SessionRecord) {
        record.task_summary = summarize(&record.task_summary);
        self.records.insert(record.session_id.clone(), record);
    }

    /// Marks `session_id` as used at `now`; returns whether it was known.
    pub fn touch(&mut self, session_id: &str, now: DateTime<Utc>) -> bool {
        self.records
            .get_mut(session_id)
            .map(|r| r.last_activity = now)
            .is_some()
    }

    /// Drops records unused for longer than [`STALE_AFTER`].
    pub fn prune(&mut self, now: DateTime<Utc>) {
        let stale = chrono::Duration::from_std(STALE_AFTER).unwrap_or(chrono::Duration::MAX);
        self.records.retain(|_, r| now - r.last_activity <= stale);
    }

    /// Writes the store atomically: a temporary file (mode 0600) in the same directory, synced,
    /// then renamed over the old one. The directory is created with mode 0700.
    pub fn save(&self) -> Result<(), SessionStoreError> {
        let err = |source| SessionStoreError {
            path: self.path.clone(),
            source,
        };
        let dir = self.path.parent().unwrap_or_else(|| Path::new("."));
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(err)?;
        let file = File {
            sessions: self.list().into_iter().cloned().collect(),
        };
        let bytes = serde_json::to_vec_pretty(&file).map_err(|e| err(e.into()))?;
        let temp = dir.join(format!(".sessions.json.{}.tmp", std::process::id()));
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temp)
            .map_err(err)?;
        // An existing temp file from a crashed run keeps its old mode: set it explicitly.
        out.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(err)?;
        out.write_all(&bytes).map_err(err)?;
        out.sync_all().map_err(err)?;
        std::fs::rename(&temp, &self.path).map_err(err)
    }
}

/// The first [`SUMMARY_CHARS`] characters of a task, on one line.
pub fn summarize(task: &str) -> String {
    let one_line = task.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(SUMMARY_CHARS) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn record(id: &str, at: DateTime<Utc>) -> SessionRecord {
        SessionRecord {
            session_id: id.to_owned(),
            working_dir: PathBuf::from("/ws"),
            task_summary: "fix   the\nbuild".to_owned(),
            created: at,
            last_activity: at,
            model: None,
        }
    }

    #[test]
    fn saved_records_load_back_and_the_file_is_private() -> anyhow::Result<()> {
        let dir = tempfile::TempDir::new()?;
        let state = dir.path().join("state");
        let now = Utc::now();
        let mut store = SessionStore::load(&state, now);
        store.insert(record("s1", now));
        store.save()?;
        let mode = std::fs::metadata(state.join("sessions.json"))?
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(
            std::fs::metadata(&state)?.permissions().mode() & 0o777,
            0o700
        );
        let loaded = SessionStore::load(&state, now);
        let mut expected = record("s1", now);
        expected.task_summary = "fix the build".to_owned();
        assert_eq!(loaded.get("s1"), Some(&expected));
        Ok(())
    }

    #[test]
    fn stale_records_are_dropped_and_touch_keeps_them_fresh() {
        let dir = std::path::Path::new("/nonexistent-state-dir");
        let now = Utc::now();
        let old = now - chrono::Duration::hours(25);
        let mut store = SessionStore::load(dir, now);
        store.insert(record("old", old));
        store.insert(record("kept", old));
        assert!(store.touch("kept", now));
        store.prune(now);
        assert!(store.get("old").is_none());
        assert!(store.get("kept").is_some());
        assert!(!store.touch("missing", now));
    }

    #[test]
    fn a_corrupt_store_is_set_aside_not_fatal() -> anyhow::Result<()> {
        let dir = tempfile::TempDir::new()?;
        std::fs::write(dir.path().join("sessions.json"), "{not json")?;
        let store = SessionStore::load(dir.path(), Utc::now());
        assert!(store.list().is_empty());
        assert!(dir.path().join("sessions.json.corrupt").exists());
        Ok(())
    }

    #[test]
    fn summaries_are_one_short_line() {
        assert_eq!(summarize("a\n\tb  c"), "a b c");
        let long = "é".repeat(SUMMARY_CHARS + 10);
        assert_eq!(summarize(&long).chars().count(), SUMMARY_CHARS + 1);
    }
}
