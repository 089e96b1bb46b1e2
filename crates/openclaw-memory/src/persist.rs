//! Where the index is kept between processes, so that N sessions build it once. One file per
//! workspace in the server's state directory (`OPENCLAW_MEMORY_STATE_DIR`, else
//! `$XDG_STATE_HOME/openclaw-memory`, else `~/.local/state/openclaw-memory`), named by a hash
//! of the canonical workspace path, with a lock file beside it.
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
            root,
        })
    }

    /// The index file's path.
    pub fn path(&self) -> &Path {
        &self.file
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

    /// Writes `index` atomically: a temporary file beside the index (0600), fsync, rename, and
    /// fsync of the directory. Refuses to replace anything but a regular file.
    pub fn save(&self, index: &MemoryIndex) -> Result<(), PersistError> {
        self.ensure_dir()?;
        match std::fs::symlink_metadata(&self.file) {
            Ok(meta) if !meta.is_file() => return Err(PersistError::NotAFile(self.file.clone())),
            _ => {}
        }
        let tmp = self.dir.join(format!(
            ".{}.{}.{:016x}.tmp",
            self.file
                .file_name()
                .map_or_else(Default::default, |n| n.to_string_lossy()),
            std::process::id(),
            fastrand::u64(..)
        ));
        let written = (|| -> std::io::Result<()> {
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(OFlags::NOFOLLOW.bits().cast_signed())
                .open(&tmp)?;
            index
                .write_snapshot(&self.root, &mut file)
                .map_err(std::io::Error::other)?;
            file.sync_all()?;
            std::fs::rename(&tmp, &self.file)?;
            File::open(&self.dir)?.sync_all()
        })();
        if let Err(e) = written {
            let _ignored = std::fs::remove_file(&tmp);
            return Err(PersistError::io(&self.file, e));
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
        let home = TempDir::new().unwrap();
        let ws = home.path().join("ws");
        let index = indexed(&ws);
        let cache = IndexCache::new(&home.path().join("state"), &ws).unwrap();
        cache.save(&index).unwrap();
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
        let home = TempDir::new().unwrap();
        let ws = home.path().join("ws");
        let index = indexed(&ws);
        let cache = IndexCache::new(&home.path().join("state"), &ws).unwrap();
        cache.save(&index).unwrap();
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
        let home = TempDir::new().unwrap();
        let ws = home.path().join("ws");
        let index = indexed(&ws);
        let state = home.path().join("state");
        let cache = IndexCache::new(&state, &ws).unwrap();
        cache.save(&index).unwrap();
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
        let env = |pairs: &[(&str, &str)]| {
            EnvLayer::from_maps(
                pairs
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
                Vec::new(),
            )
        };
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
