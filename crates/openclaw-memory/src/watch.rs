//! Event-driven freshness for the index: an inotify watch on the workspace root and every
//! directory under `memory/`, drained without blocking before each search. When nothing changed
//! the search skips the per-file freshness scan (5,000 `stat`s cost ~12 ms); when anything did,
//! or when the watch cannot be trusted (no inotify, watch limit reached, queue overflow), the
//! full scan runs as before. Events a write produced are queued by the kernel before the write
//! returns, so a note written a moment before a search is never missed.
//!
//! The watch only signals "look again"; it reads no file content, and every read still goes
//! through the confined store.

use std::path::Path;

use crate::paths::MEMORY_DIR;

/// Bytes for one non-blocking read of the event queue; several reads drain a longer queue.
#[cfg(target_os = "linux")]
const EVENT_BUFFER_BYTES: usize = 4096;
/// Directories watched under `memory/` at most; beyond that the watch gives up and every search
/// scans, rather than silently missing changes.
#[cfg(target_os = "linux")]
const MAX_WATCHED_DIRS: usize = 4096;

/// Whether the workspace may have changed since the index was last refreshed.
#[derive(Debug)]
pub struct ChangeWatch {
    #[cfg(target_os = "linux")]
    inotify: Option<inotify::Inotify>,
    /// True once watches cover the tree that the last refresh scanned.
    primed: bool,
}

impl ChangeWatch {
    /// A watch that has seen nothing yet (the first search always scans).
    pub fn new() -> Self {
        Self {
            #[cfg(target_os = "linux")]
            inotify: inotify::Inotify::init()
                .inspect_err(|e| tracing::debug!(%e, "no inotify; every search scans"))
                .ok(),
            primed: false,
        }
    }

    /// Whether the watch is set up and working: a change under the workspace from now on
    /// makes [`Self::needs_scan`] true.
    pub fn is_live(&self) -> bool {
        #[cfg(target_os = "linux")]
        {
            self.primed && self.inotify.is_some()
        }
        #[cfg(not(target_os = "linux"))]
        false
    }

    /// Makes the next [`Self::needs_scan`] true (the index lost what the watch had covered).
    pub fn rescan(&mut self) {
        self.primed = false;
    }

    /// Drains pending events; true when a scan is needed.
    pub fn needs_scan(&mut self) -> bool {
        if !self.primed {
            return true;
        }
        #[cfg(target_os = "linux")]
        {
            let Some(inotify) = self.inotify.as_mut() else {
                return true;
            };
            let mut buffer = [0_u8; EVENT_BUFFER_BYTES];
            let mut changed = false;
            loop {
                match inotify.read_events(&mut buffer) {
                    Ok(events) => {
                        if events.count() == 0 {
                            break;
                        }
                        changed = true;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) => {
                        tracing::debug!(%e, "inotify failed; every search scans from now on");
                        self.inotify = None;
                        return true;
                    }
                }
            }
            changed
        }
        #[cfg(not(target_os = "linux"))]
        true
    }

    /// Watches `root` and every directory under `root/memory` (symlinks are not followed).
    /// Call before the scan it covers, so changes made during the scan are seen next time.
    pub fn watch(&mut self, root: &Path) {
        #[cfg(target_os = "linux")]
        {
            use inotify::WatchMask;
            let Some(inotify) = self.inotify.as_mut() else {
                return;
            };
            let mask = WatchMask::CREATE
                | WatchMask::DELETE
                | WatchMask::MODIFY
                | WatchMask::CLOSE_WRITE
                | WatchMask::MOVED_FROM
                | WatchMask::MOVED_TO
                | WatchMask::ATTRIB
                | WatchMask::DELETE_SELF
                | WatchMask::MOVE_SELF
                | WatchMask::DONT_FOLLOW
                | WatchMask::ONLYDIR;
            let mut pending = vec![root.to_path_buf(), root.join(MEMORY_DIR)];
            let mut watched = 0;
            while let Some(dir) = pending.pop() {
                // A missing directory is fine: the root's CREATE event will show it appearing.
                if inotify.watches().add(&dir, mask).is_err() {
                    continue;
                }
                watched += 1;
                if watched > MAX_WATCHED_DIRS {
                    tracing::debug!("too many memory directories to watch; every search scans");
                    self.inotify = None;
                    self.primed = false;
                    return;
                }
                if dir == root || !may_have_subdirs(&dir) {
                    continue;
                }
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    continue;
                };
                pending.extend(
                    entries
                        .flatten()
                        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                        .map(|e| e.path()),
                );
            }
        }
        self.primed = true;
    }
}

/// Whether `dir` may hold directories: false only when its link count says it holds none (a
/// directory's links are its entry, its `.` and each subdirectory's `..` on ext4, xfs and
/// tmpfs). Saves reading a `memory/` of 50,000 notes at every start just to find no folder;
/// file systems that do not count links that way (btrfs reports 1) are read.
#[cfg(target_os = "linux")]
fn may_have_subdirs(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(dir).map_or(true, |meta| meta.nlink() != 2)
}

impl Default for ChangeWatch {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn writes_deletes_and_new_directories_are_seen_before_the_next_search() -> anyhow::Result<()> {
        let dir = tempfile::TempDir::new()?;
        let root = dir.path();
        std::fs::create_dir_all(root.join("memory"))?;
        let mut watch = ChangeWatch::new();
        assert!(watch.needs_scan(), "the first search scans");
        watch.watch(root);
        assert!(!watch.needs_scan(), "nothing changed");

        std::fs::write(root.join("memory/a.md"), "a")?;
        assert!(watch.needs_scan(), "a new note");
        watch.watch(root);
        assert!(!watch.needs_scan());

        std::fs::create_dir(root.join("memory/sub"))?;
        assert!(watch.needs_scan(), "a new directory");
        watch.watch(root);
        std::fs::write(root.join("memory/sub/b.md"), "b")?;
        assert!(watch.needs_scan(), "a note in the new directory");
        watch.watch(root);

        std::fs::write(root.join("MEMORY.md"), "m")?;
        assert!(watch.needs_scan(), "MEMORY.md");
        watch.watch(root);
        std::fs::remove_file(root.join("memory/a.md"))?;
        assert!(watch.needs_scan(), "a deleted note");
        watch.watch(root);
        assert!(!watch.needs_scan());
        Ok(())
    }
}
