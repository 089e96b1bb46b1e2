//! The freshness scan of a warm start, begun on a thread of its own before the saved index is
//! checked, so that the `stat` of every note (most of a warm start) overlaps the checksum and
//! the table decode instead of following them. Started only when a saved index exists: a cold
//! start lists the notes as part of its build, and a scan racing the build for the same cores
//! would only slow it.

use std::path::Path;
use std::thread::JoinHandle;

use crate::paths::MemoryPath;
use crate::persist::{CheckMark, IndexCache};
use crate::store::{FileStamp, MemoryStore, StoreError};
use crate::watch::ChangeWatch;

/// Every indexable note with its stamp, as [`MemoryStore::list_indexable`] gives them.
pub type Listing = Vec<(MemoryPath, FileStamp)>;

/// The change watch, and maybe a listing taken after it was set up.
#[derive(Debug)]
pub enum EarlyScan {
    /// Watching and listing on a thread.
    Running(JoinHandle<(ChangeWatch, Result<Listing, StoreError>)>),
    /// Not started: the caller watches and lists itself.
    Idle(ChangeWatch),
    /// Watching already (set up before looking for another process's build); the caller
    /// lists unless that build was found fresh after this ([`CheckMark::covers`]).
    Watching(ChangeWatch),
}

impl EarlyScan {
    /// Sets up the watch of `root` and lists its notes on a thread when `saved_index` exists
    /// as a regular file; otherwise does nothing yet.
    pub fn start(mut watch: ChangeWatch, store: &MemoryStore, saved_index: &Path) -> Self {
        let saved = std::fs::symlink_metadata(saved_index).is_ok_and(|m| m.is_file());
        if !saved {
            return Self::Idle(watch);
        }
        let store = store.clone();
        let spawned = std::thread::Builder::new()
            .name("memory-scan".to_owned())
            .spawn(move || {
                // Watch first, so a change made during the listing triggers the next scan.
                watch.watch(store.root());
                let listing = store.list_indexable();
                (watch, listing)
            });
        match spawned {
            Ok(handle) => Self::Running(handle),
            Err(err) => {
                tracing::debug!(%err, "no thread for an early scan; scanning after the load");
                Self::Idle(ChangeWatch::new())
            }
        }
    }

    /// Sets up the watch now, before trying the lock and maybe waiting for another process's
    /// build, and reads the last freshness check builds announced. The mark is unknown when
    /// the watch does not work (no inotify) or a listing is already running.
    pub fn watching(self, root: &Path, cache: &IndexCache) -> (Self, CheckMark) {
        match self {
            Self::Idle(mut watch) => {
                watch.watch(root);
                let mark = if watch.is_live() {
                    cache.check_mark()
                } else {
                    CheckMark::Unknown
                };
                (Self::Watching(watch), mark)
            }
            other @ (Self::Running(_) | Self::Watching(_)) => (other, CheckMark::Unknown),
        }
    }

    /// The watch, set up on `root`, and the listing when the thread took one (`None`: the
    /// caller lists). A listing that failed is dropped: the caller lists again and reports.
    pub fn finish(self, root: &Path) -> (ChangeWatch, Option<Listing>) {
        match self {
            Self::Running(handle) => {
                if let Ok((watch, listing)) = handle.join() {
                    return (watch, listing.ok());
                }
                let mut watch = ChangeWatch::new();
                watch.watch(root);
                (watch, None)
            }
            Self::Idle(mut watch) => {
                watch.watch(root);
                (watch, None)
            }
            Self::Watching(watch) => (watch, None),
        }
    }
}
