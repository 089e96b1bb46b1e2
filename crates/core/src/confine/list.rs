//! Directory listing under a [`Root`]: walks directory handles opened one from another (so every
//! step stays under the root), never descends through a symlink, and stops at documented bounds
//! so a huge or hostile tree cannot exhaust memory.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use cap_std::fs::Dir;

use super::error::from_io;
use super::{ConfineError, EntryKind, Root, dot_if_empty, kind_of, modified};

/// Most entries one listing returns: 10,000 entries is about a megabyte of results, far more
/// than a model can use in one reply; past it the caller should list a subdirectory.
pub const MAX_LIST_ENTRIES: usize = 10_000;

/// Deepest directory level a recursive listing descends to below the listed directory: real
/// project trees (`node_modules` included) stay well under 32 levels, and the bound also ends a
/// cycle made by renaming directories during the walk.
pub const MAX_LIST_DEPTH: usize = 32;

/// Bounds on one listing; [`Root::list`] uses the defaults, [`MAX_LIST_ENTRIES`] and
/// [`MAX_LIST_DEPTH`]. Exceeding either fails the listing rather than cutting it short silently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListLimits {
    /// Most entries returned.
    pub max_entries: usize,
    /// Deepest level descended to below the listed directory (its own entries are level 0).
    pub max_depth: usize,
}

impl Default for ListLimits {
    fn default() -> Self {
        Self {
            max_entries: MAX_LIST_ENTRIES,
            max_depth: MAX_LIST_DEPTH,
        }
    }
}

/// One entry of a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Path relative to the root, `/`-separated, spelled through the directory as the caller
    /// named it (so it can be passed back to the other calls).
    pub path: String,
    /// What the entry itself is (a symlink is `Symlink`, whatever it points to).
    pub kind: EntryKind,
    /// Size in bytes: the file's for files, the target's for a symlink to a file inside the root,
    /// 0 for everything else.
    pub len: u64,
    /// Last modification time: the entry's own, or the target's for a symlink that resolves
    /// inside the root; `None` if unknown or the link leads out.
    pub modified: Option<SystemTime>,
    /// For a symlink that resolves inside the root, what it points to; `None` for everything
    /// else, links that lead out or dangle included.
    pub target_kind: Option<EntryKind>,
}

/// One directory still to read: its handle, its path as shown, its path without symlinks, and
/// its depth below the listed directory.
struct Pending {
    dir: Dir,
    shown: PathBuf,
    physical: PathBuf,
    depth: usize,
}

/// Lists `rel` (normalized) under `root`; `user` is the caller's spelling, for errors.
pub(super) fn list(
    root: &Root,
    rel: &Path,
    user: &str,
    recursive: bool,
    limits: ListLimits,
) -> Result<Vec<Entry>, ConfineError> {
    let physical = root.resolve(rel, user)?;
    let dir = root
        .inner
        .dir
        .open_dir(dot_if_empty(&physical))
        .map_err(|err| from_io(user, err))?;
    let mut stack = vec![Pending {
        dir,
        shown: rel.to_path_buf(),
        physical,
        depth: 0,
    }];
    let mut entries = Vec::new();
    while let Some(pending) = stack.pop() {
        let read_dir = pending.dir.entries().map_err(|err| from_io(user, err))?;
        for dir_entry in read_dir {
            let dir_entry = dir_entry.map_err(|err| from_io(user, err))?;
            if entries.len() == limits.max_entries {
                return Err(ConfineError::TooManyEntries {
                    path: user.to_owned(),
                    limit: limits.max_entries,
                });
            }
            let name = dir_entry.file_name();
            let shown = pending.shown.join(&name);
            let physical = pending.physical.join(&name);
            // `metadata` on a directory entry does not follow a symlink.
            let meta = dir_entry.metadata().map_err(|err| from_io(user, err))?;
            let kind = kind_of(&meta);
            let mut entry = Entry {
                path: slash_separated(&shown),
                kind,
                len: 0,
                modified: modified(&meta),
                target_kind: None,
            };
            match kind {
                EntryKind::File => entry.len = meta.len(),
                EntryKind::Symlink => describe_target(root, &physical, &mut entry),
                EntryKind::Dir if recursive => {
                    let depth = pending.depth + 1;
                    if depth > limits.max_depth {
                        return Err(ConfineError::TooDeep {
                            path: user.to_owned(),
                            limit: limits.max_depth,
                        });
                    }
                    // Opened from the parent's handle: a directory swapped for a link since
                    // `metadata` is still confined below it.
                    let dir = dir_entry.open_dir().map_err(|err| from_io(user, err))?;
                    stack.push(Pending {
                        dir,
                        shown,
                        physical,
                        depth,
                    });
                }
                EntryKind::Dir | EntryKind::Other => {}
            }
            entries.push(entry);
        }
    }
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(entries)
}

/// Fills in the target of a symlink entry if it resolves inside the root; a link that leads
/// out or dangles keeps no size, time or target kind, so nothing about the outside shows.
fn describe_target(root: &Root, physical: &Path, entry: &mut Entry) {
    entry.modified = None;
    let Ok(target) = root.resolve(physical, &entry.path) else {
        return;
    };
    let Ok(meta) = root.inner.dir.metadata(dot_if_empty(&target)) else {
        return;
    };
    let kind = kind_of(&meta);
    if kind == EntryKind::File {
        entry.len = meta.len();
    }
    entry.modified = modified(&meta);
    entry.target_kind = Some(kind);
}

fn slash_separated(path: &Path) -> String {
    let names: Vec<_> = path.iter().map(|name| name.to_string_lossy()).collect();
    names.join("/")
}
