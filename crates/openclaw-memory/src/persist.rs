//! Where the index is kept between processes, so that N sessions build it once. One file per
//! workspace in the server's state directory (`OPENCLAW_MEMORY_STATE_DIR`, else
//! `$XDG_STATE_HOME/openclaw-memory`, else `~/.local/state/openclaw-memory`), named by a hash
//! of the canonical workspace path, with a lock file beside it, and two small files that let
//! processes which waited for another's build skip listing the notes ([`CheckMark`]): the last
//! freshness check a build announced (`.check`), and the check the saved file passed with its
//! checksum (`.fresh`).
//!
//! The file is only a cache: whatever goes wrong with it (missing, damaged, from another build,
//! a symlink planted in its place) the index is built from the notes instead. Writes are atomic
//! (a temporary file in the same directory, fsync, rename); the directory is 0700, the files
//! 0600, and the index file is opened without following symlinks. A loaded index is the file
//! mapped into memory and read in place ([`crate::index::mapped`]), so a file is never
//! changed once written: a save always writes a new one and renames it over the old, which
//! leaves other processes' mappings of the old one intact.

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bridge_core::config::EnvLayer;
use rustix::fs::{FlockOperation, OFlags, flock};
use sha2::{Digest, Sha256};

use crate::index::MemoryIndex;
use crate::index::mapped::Backing;
use crate::index::rank::RankOptions;
use crate::index::snapshot::SnapshotError;
use crate::store::MemoryStore;

/// Overrides where the index files are kept.
pub const STATE_DIR_ENV: &str = "OPENCLAW_MEMORY_STATE_DIR";
/// Largest index file used; far above 50,000 notes (~170 MB), and a bound on a planted one.
const MAX_INDEX_BYTES: u64 = 2 * 1024 * 1024 * 1024;
/// How often a process waiting for another's build tries the lock again.
const LOCK_POLL: Duration = Duration::from_millis(10);

/// Why the persisted index could not be used or written.
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    /// No index file yet.
    #[error("no saved memory index yet")]
    Missing,
    /// Something other than a plain file (a symlink, a directory) sits where the index belongs.
    #[error(
        "{0} is not a regular file (a symlink?); refusing it and keeping the index in memory. \
         Remove it to let openclaw-memory save its index again"
    )]
    NotAFile(PathBuf),
    /// The file's content was refused.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// Reading or writing failed.
    #[error(
        "memory index file {path}: {source}; check the permissions of {STATE_DIR_ENV} or its default"
    )]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

impl PersistError {
    fn io(path: &Path, source: impl Into<std::io::Error>) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source: source.into(),
        }
    }
}

/// The saved index of one workspace.
#[derive(Debug, Clone)]
pub struct IndexCache {
    dir: PathBuf,
    file: PathBuf,
    lock: PathBuf,
    /// The number of the last freshness check a build announced ([`IndexCache::announce_check`]).
    check: PathBuf,
    /// The check number of a saved index that was found fresh at it, with that file's checksum.
    fresh: PathBuf,
    /// The canonical workspace root, written into the file and checked on load.
    root: PathBuf,
}

/// Holds the exclusive lock on a workspace's index file until dropped.
#[derive(Debug)]
pub struct CacheLock {
    _file: File,
}

/// The server's state directory: the override, else XDG's state home, else
/// `~/.local/state/openclaw-memory`. `None` without any of them (then the index stays in memory).
pub fn state_dir(env: &EnvLayer) -> Option<PathBuf> {
    if let Some(dir) = env.get(STATE_DIR_ENV) {
        return Some(PathBuf::from(dir));
    }
    // XDG: a relative value is invalid and ignored.
    if let Some(xdg) = env.get("XDG_STATE_HOME").map(Path::new)
        && xdg.is_absolute()
    {
        return Some(xdg.join("openclaw-memory"));
    }
    let home = env.get("HOME")?;
    Some(Path::new(home).join(".local/state/openclaw-memory"))
}

impl IndexCache {
    /// The index file of the workspace at `root` under `state_dir`; `None` when the workspace
    /// path cannot be made canonical.
    pub fn new(state_dir: &Path, root: &Path) -> Option<Self> {
        let root = std::fs::canonicalize(root).ok()?;
        let digest = Sha256::digest(root.as_os_str().as_encoded_bytes());
        let key = digest[..16]
            .iter()
            .fold(String::with_capacity(32), |mut key, b| {
                let _infallible = write!(key, "{b:02x}");
                key
            });
        Some(Self {
            dir: state_dir.to_path_buf(),
            file: state_dir.join(format!("{key}.index")),
            lock: state_dir.join(format!("{key}.lock")),
            check: state_dir.join(format!("{key}.check")),
            fresh: state_dir.join(format!("{key}.fresh")),
            root,
        })
    }

    /// The index file's path.
    pub fn path(&self) -> &Path {
        &self.file
    }

    /// The private directory the index lives in (0700 once [`Self::save`] or [`Self::lock`]
    /// ran).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Creates the state directory (0700) when missing, and tightens it to 0700 when it exists.
    fn ensure_dir(&self) -> Result<(), PersistError> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(|e| PersistError::io(&self.dir, e))?;
        let meta =
            std::fs::symlink_metadata(&self.dir).map_err(|e| PersistError::io(&self.dir, e))?;
        if !meta.is_dir() {
            return Err(PersistError::NotAFile(self.dir.clone()));
        }
        if meta.permissions().mode() & 0o777 != 0o700 {
            std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| PersistError::io(&self.dir, e))?;
        }
        Ok(())
    }

    /// The saved index, mapped and checked (its checksum, then its table), over `store`.
    pub fn load(
        &self,
        store: MemoryStore,
        ranking: RankOptions,
    ) -> Result<MemoryIndex, PersistError> {
        let file = match open_nofollow(&self.file, OFlags::RDONLY) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(PersistError::Missing);
            }
            // ELOOP: the last component is a symlink.
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
                return Err(PersistError::NotAFile(self.file.clone()));
            }
            Err(e) => return Err(PersistError::io(&self.file, e)),
        };
        let meta = file
            .metadata()
            .map_err(|e| PersistError::io(&self.file, e))?;
        if !meta.is_file() {
            return Err(PersistError::NotAFile(self.file.clone()));
        }
        if meta.len() > MAX_INDEX_BYTES {
            return Err(SnapshotError::NotAnIndex.into());
        }
        let started = Instant::now();
        let backing = Arc::new(Backing::map(&file).map_err(|e| PersistError::io(&self.file, e))?);
        let index = MemoryIndex::from_backing(&backing, &self.root, store, ranking)?;
        tracing::debug!(
            bytes = meta.len(),
            open_ms = started.elapsed().as_secs_f64() * 1000.0,
            "memory index file mapped and checked"
        );
        Ok(index)
    }

    /// Writes `index` atomically: a temporary file beside the index (0600), then a rename over
    /// it, so no process ever sees it half-written. There is no fsync: the file is a cache that
    /// every load checks (length, checksum, version, build), so a file a crash left torn is
    /// rebuilt, never searched, and syncing cost 60 of the 100 ms a save takes at 20,000 notes
    /// (which processes waiting for the build also wait for). Refuses to replace anything but a
    /// regular file.
    pub fn save(&self, index: &MemoryIndex) -> Result<(), PersistError> {
        self.ensure_dir()?;
        match std::fs::symlink_metadata(&self.file) {
            Ok(meta) if !meta.is_file() => return Err(PersistError::NotAFile(self.file.clone())),
            _ => {}
        }
        let checksum = self
            .write_atomically(&self.file, |file| {
                index
                    .write_snapshot(&self.root, file)
                    .map_err(std::io::Error::other)
            })
            .map_err(|e| PersistError::io(&self.file, e))?;
        // The check this very file passed (kept beside it: the file holds no such number, so
        // that rebuilding the same notes writes the same bytes).
        if let Some(check) = index.fresh_at_check()
            && let Err(err) = self.write_small(&self.fresh, &format!("{check:016x}{checksum:016x}"))
        {
            tracing::debug!(%err, "could not record the index's freshness check");
        }
        Ok(())
    }

    /// Takes the workspace's exclusive index lock, waiting at most `wait` for another process
    /// that holds it (building or saving). `None` when the wait ran out.
    pub fn lock(&self, wait: Duration) -> Result<Option<CacheLock>, PersistError> {
        self.ensure_dir()?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(OFlags::NOFOLLOW.bits().cast_signed())
            .open(&self.lock)
            .map_err(|e| PersistError::io(&self.lock, e))?;
        let deadline = Instant::now() + wait;
        loop {
            match flock(&file, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return Ok(Some(CacheLock { _file: file })),
                Err(e) if e == rustix::io::Errno::WOULDBLOCK || e == rustix::io::Errno::INTR => {
                    if Instant::now() >= deadline {
                        return Ok(None);
                    }
                    std::thread::sleep(LOCK_POLL);
                }
                Err(e) => return Err(PersistError::io(&self.lock, e)),
            }
        }
    }
}

impl IndexCache {
    /// Waits at most `wait` until no process holds the lock (another's build or save has
    /// ended), without keeping it: true when that happened. Many waiters see it at once.
    pub fn wait_unlocked(&self, wait: Duration) -> bool {
        let Ok(file) = OpenOptions::new()
            .read(true)
            .custom_flags(OFlags::NOFOLLOW.bits().cast_signed())
            .open(&self.lock)
        else {
            return false;
        };
        let deadline = Instant::now() + wait;
        loop {
            if flock(&file, FlockOperation::NonBlockingLockShared).is_ok() {
                let _released = flock(&file, FlockOperation::Unlock);
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(LOCK_POLL);
        }
    }
}

/// What a process about to wait for another's build saw, once its change watch was set up, of
/// the freshness checks builds announce ([`IndexCache::announce_check`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckMark {
    /// No check announced yet, and no saved index.
    Absent,
    /// The number of the last announced check (they count up, under the lock).
    Seen(u64),
    /// Unreadable, or a saved index with no announcement beside it: the waiter lists.
    Unknown,
}

impl CheckMark {
    /// Whether an index found fresh at check `check` leaves this process nothing to list: the
    /// check was announced after this mark was read, so after this process's watch was set
    /// up. The build's own watch saw no change from before its listing until that check, and
    /// this process's watch sees every change from before that check on.
    pub fn covers(self, check: Option<u64>) -> bool {
        match (self, check) {
            (Self::Absent, Some(_)) => true,
            (Self::Seen(seen), Some(check)) => check > seen,
            (Self::Unknown, _) | (_, None) => false,
        }
    }
}

impl IndexCache {
    /// Announces that this process (holding the lock) is about to check whether its just-built
    /// index is still fresh: writes the next check number beside the index (atomically) and
    /// returns it. `None` when it cannot be read or written (then nobody relies on it).
    /// Numbers only grow, so an index checked earlier never passes for one checked later.
    pub fn announce_check(&self) -> Option<u64> {
        let check = match read_small(&self.check) {
            Ok(None) => 1,
            Ok(Some(text)) => parse_hex(&text)?.checked_add(1)?,
            Err(()) => return None,
        };
        match self.write_small(&self.check, &format!("{check:016x}")) {
            Ok(()) => Some(check),
            Err(err) => {
                tracing::debug!(%err, "could not announce the index freshness check");
                None
            }
        }
    }

    /// The last announced check, read now. With none announced but a saved index (written
    /// before announcements, or the announcement deleted), the mark is unknown.
    pub fn check_mark(&self) -> CheckMark {
        match read_small(&self.check) {
            Ok(Some(text)) => parse_hex(&text).map_or(CheckMark::Unknown, CheckMark::Seen),
            Ok(None) if std::fs::symlink_metadata(&self.file).is_err() => CheckMark::Absent,
            Ok(None) | Err(()) => CheckMark::Unknown,
        }
    }

    /// The check at which the index file with `checksum` was found fresh, when recorded.
    pub fn fresh_check(&self, checksum: Option<u64>) -> Option<u64> {
        let text = read_small(&self.fresh).ok()??;
        let check = parse_hex(text.get(..16)?)?;
        (parse_hex(text.get(16..)?) == checksum).then_some(check)
    }

    /// Writes a small state file atomically.
    fn write_small(&self, path: &Path, text: &str) -> std::io::Result<()> {
        self.write_atomically(path, |file| {
            std::io::Write::write_all(file, text.as_bytes())
        })
    }

    /// Writes `path` atomically: `write_to` fills a temporary file beside it (0600, created anew,
    /// never through a symlink, named for this process and a random number), which is then
    /// renamed over `path`; it is removed when anything fails.
    fn write_atomically<T>(
        &self,
        path: &Path,
        write_to: impl FnOnce(&mut File) -> std::io::Result<T>,
    ) -> std::io::Result<T> {
        let tmp = self.dir.join(format!(
            ".{}.{}.{:016x}.tmp",
            path.file_name()
                .map_or_else(Default::default, |n| n.to_string_lossy()),
            std::process::id(),
            fastrand::u64(..)
        ));
        let written = (|| {
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(OFlags::NOFOLLOW.bits().cast_signed())
                .open(&tmp)?;
            let value = write_to(&mut file)?;
            std::fs::rename(&tmp, path)?;
            Ok(value)
        })();
        if written.is_err() {
            let _ignored = std::fs::remove_file(&tmp);
        }
        written
    }
}

/// Sixteen hex digits.
fn parse_hex(text: &str) -> Option<u64> {
    (text.len() == 16)
        .then(|| u64::from_str_radix(text, 16).ok())
        .flatten()
}

/// A small state file's text: `None` when missing, `Err` when unreadable or not a plain file.
fn read_small(path: &Path) -> Result<Option<String>, ()> {
    let mut text = String::new();
    let read = open_nofollow(path, OFlags::RDONLY).and_then(|file| {
        std::io::Read::read_to_string(&mut std::io::Read::take(file, 64), &mut text)
    });
    match read {
        Ok(_) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(_) => Err(()),
    }
}

/// Opens `path` refusing a symlink as its last component (ELOOP).
fn open_nofollow(path: &Path, flags: OFlags) -> std::io::Result<File> {
    let fd = rustix::fs::open(
        path,
        flags | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )?;
    Ok(File::from(fd))
}

#[cfg(test)]
mod tests {
    use tempfile::TempDir;

    use super::*;

    fn indexed(root: &Path) -> MemoryIndex {
        std::fs::create_dir_all(root.join("memory")).unwrap();
        std::fs::write(root.join("MEMORY.md"), "- The router is a MikroTik hAP.\n").unwrap();
        let mut index =
            MemoryIndex::new(MemoryStore::new(root.to_path_buf()), RankOptions::default());
        index.refresh().unwrap();
        index
    }

    /// A workspace indexed, and its index saved in `home/state`.
    struct Saved {
        home: TempDir,
        ws: PathBuf,
        index: MemoryIndex,
        cache: IndexCache,
    }

    fn saved() -> Saved {
        let home = TempDir::new().unwrap();
        let ws = home.path().join("ws");
        let index = indexed(&ws);
        let cache = IndexCache::new(&home.path().join("state"), &ws).unwrap();
        cache.save(&index).unwrap();
        Saved {
            home,
            ws,
            index,
            cache,
        }
    }

    #[test]
    fn saves_with_private_modes_and_loads_back() {
        let home = TempDir::new().unwrap();
        let ws = home.path().join("ws");
        let index = indexed(&ws);
        let state = home.path().join("state/openclaw-memory");
        let cache = IndexCache::new(&state, &ws).unwrap();
        assert!(matches!(
            cache.load(MemoryStore::new(ws.clone()), RankOptions::default()),
            Err(PersistError::Missing)
        ));
        cache.save(&index).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&state), 0o700);
        assert_eq!(mode(cache.path()), 0o600);
        // Nothing but the index (no temporary file left behind).
        let names: Vec<_> = std::fs::read_dir(&state)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        let loaded = cache
            .load(MemoryStore::new(ws), RankOptions::default())
            .unwrap();
        assert_eq!(
            loaded.search("router", 5, None),
            index.search("router", 5, None)
        );
        // The lock file beside it is private too.
        drop(cache.lock(Duration::ZERO).unwrap().unwrap());
        assert_eq!(mode(&cache.lock), 0o600);
    }

    #[test]
    fn a_loaded_index_keeps_answering_after_another_save_replaces_its_file() {
        let Saved {
            home: _home,
            ws,
            cache,
            ..
        } = saved();
        let loaded = cache
            .load(MemoryStore::new(ws.clone()), RankOptions::default())
            .unwrap();
        let before = loaded.search("router", 5, None);
        // Another process saves a changed index over the mapped file.
        std::fs::write(ws.join("MEMORY.md"), "- The router is a Ubiquiti now.\n").unwrap();
        let mut changed = MemoryIndex::new(MemoryStore::new(ws), RankOptions::default());
        changed.refresh().unwrap();
        cache.save(&changed).unwrap();
        assert_eq!(loaded.search("router", 5, None), before);
        assert!(before[0].snippet.contains("MikroTik"), "{before:?}");
    }

    #[test]
    fn an_empty_or_short_index_file_is_refused() {
        let Saved {
            home: _home,
            ws,
            index,
            cache,
        } = saved();
        for len in [0, 7, 60] {
            let bytes = std::fs::read(cache.path()).unwrap();
            std::fs::write(cache.path(), &bytes[..len.min(bytes.len())]).unwrap();
            assert!(matches!(
                cache.load(MemoryStore::new(ws.clone()), RankOptions::default()),
                Err(PersistError::Snapshot(_))
            ));
            cache.save(&index).unwrap();
        }
    }

    #[test]
    fn a_symlink_in_place_of_the_index_is_neither_read_nor_replaced() {
        let Saved {
            home,
            ws,
            index,
            cache,
        } = saved();
        // A valid index elsewhere, linked where ours belongs.
        let elsewhere = home.path().join("planted.index");
        std::fs::rename(cache.path(), &elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, cache.path()).unwrap();
        assert!(matches!(
            cache.load(MemoryStore::new(ws), RankOptions::default()),
            Err(PersistError::NotAFile(_))
        ));
        let before = std::fs::read(&elsewhere).unwrap();
        assert!(matches!(cache.save(&index), Err(PersistError::NotAFile(_))));
        assert!(
            std::fs::symlink_metadata(cache.path())
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&elsewhere).unwrap(), before);
    }

    #[test]
    fn only_a_check_announced_after_the_mark_was_read_covers_the_reader() {
        let home = TempDir::new().unwrap();
        let ws = home.path().join("ws");
        let mut index = indexed(&ws);
        let cache = IndexCache::new(&home.path().join("state"), &ws).unwrap();
        cache.ensure_dir().unwrap();
        let before = cache.check_mark();
        assert_eq!(before, CheckMark::Absent);
        let first = cache.announce_check();
        assert_eq!(first, Some(1));
        assert!(before.covers(first));
        let seen = cache.check_mark();
        assert_eq!(seen, CheckMark::Seen(1));
        assert!(!seen.covers(first), "checked before the mark was read");
        let second = cache.announce_check();
        assert!(seen.covers(second));
        assert!(!seen.covers(None));
        // The number is tied to the very file saved with it.
        index.set_fresh_at_check(second);
        cache.save(&index).unwrap();
        let loaded = cache
            .load(MemoryStore::new(ws), RankOptions::default())
            .unwrap();
        assert_eq!(cache.fresh_check(loaded.loaded_checksum()), second);
        assert_eq!(cache.fresh_check(Some(0)), None);
        // A saved index with no announcement beside it could come from any check.
        std::fs::remove_file(&cache.check).unwrap();
        assert_eq!(cache.check_mark(), CheckMark::Unknown);
    }

    #[test]
    fn a_second_lock_waits_and_then_gives_up() {
        let home = TempDir::new().unwrap();
        let ws = home.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let cache = IndexCache::new(&home.path().join("state"), &ws).unwrap();
        let held = cache.lock(Duration::ZERO).unwrap();
        assert!(held.is_some());
        let started = Instant::now();
        assert!(cache.lock(Duration::from_millis(50)).unwrap().is_none());
        assert!(started.elapsed() >= Duration::from_millis(50));
        drop(held);
        assert!(cache.lock(Duration::ZERO).unwrap().is_some());
    }

    #[test]
    fn the_state_dir_is_the_override_then_xdg_then_home() {
        let env = EnvLayer::from_pairs;
        assert_eq!(
            state_dir(&env(&[
                (STATE_DIR_ENV, "/s"),
                ("XDG_STATE_HOME", "/x"),
                ("HOME", "/h")
            ])),
            Some(PathBuf::from("/s"))
        );
        assert_eq!(
            state_dir(&env(&[("XDG_STATE_HOME", "/x"), ("HOME", "/h")])),
            Some(PathBuf::from("/x/openclaw-memory"))
        );
        assert_eq!(
            state_dir(&env(&[("XDG_STATE_HOME", "rel"), ("HOME", "/h")])),
            Some(PathBuf::from("/h/.local/state/openclaw-memory"))
        );
        assert_eq!(state_dir(&env(&[])), None);
    }
}
