//! Every read of the workspace goes through here, confined: notes are opened relative to a
//! handle on `memory/` (a symlink out of it cannot be followed), top-level files relative to the
//! workspace and never through a symlink. Listing skips symlinks altogether. Nothing here writes.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use crate::paths::{MEMORY_DIR, MemoryPath, TOP_LEVEL_FILES, USERS_DIR};

/// Largest memory file we read or index: 4 MiB is far beyond any hand-written note, and keeps a
/// stray dump from filling memory.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// How deep `memory/` is walked; OpenClaw nests imports two or three levels.
const MAX_DEPTH: usize = 16;

/// Size, modification time and inode: what the index compares to notice a changed file (the
/// inode catches a file replaced by a rename with the same size and time). Persisted with the
/// index, so a later process can tell which files changed while no server ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileStamp {
    /// Length in bytes.
    pub len: u64,
    /// Last modification time, when the platform reports one.
    pub modified: Option<SystemTime>,
    /// Inode number (0 where the platform has none).
    pub inode: u64,
}

/// Read-only, confined access to one workspace's memory files.
#[derive(Debug, Clone)]
pub struct MemoryStore {
    root: PathBuf,
}

impl MemoryStore {
    /// A store over the workspace at `root` (opened on each call, so a workspace created or
    /// replaced after start is seen).
    pub fn new(root: PathBuf) -> Self {
        Self { root }
    }

    /// The workspace directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Opens the workspace for a batch of reads (one directory handle for many files).
    pub fn open(&self) -> Result<OpenWorkspace, StoreError> {
        let root = Dir::open_ambient_dir(&self.root, ambient_authority()).map_err(|source| {
            StoreError::Io {
                path: self.root.display().to_string(),
                source,
            }
        })?;
        Ok(OpenWorkspace { root, memory: None })
    }

    /// Reads one memory file (see [`OpenWorkspace::read`]).
    pub fn read(&self, path: &MemoryPath, max_bytes: u64) -> Result<String, StoreError> {
        self.open()?.read(path, max_bytes)
    }

    /// Lists the indexable memory files (see [`OpenWorkspace::list_indexable`]).
    pub fn list_indexable(&self) -> Result<Vec<(MemoryPath, FileStamp)>, StoreError> {
        self.open()?.list_indexable()
    }
}

/// An opened workspace: directory handles that every read is resolved beneath.
#[derive(Debug)]
pub struct OpenWorkspace {
    root: Dir,
    memory: Option<Dir>,
}

impl OpenWorkspace {
    fn memory_dir(&mut self, shown: &str) -> Result<&Dir, StoreError> {
        if self.memory.is_none() {
            // A `memory` symlink is refused even when it points inside the workspace, so reads
            // and listings agree on what memory is.
            refuse_symlink(&self.root, MEMORY_DIR, shown)?;
            self.memory = Some(open_subdir(&self.root, MEMORY_DIR, shown)?);
        }
        self.memory
            .as_ref()
            .ok_or_else(|| StoreError::NotFound(MEMORY_DIR.to_owned()))
    }

    /// Reads a memory file as UTF-8, refusing files over `max_bytes`.
    pub fn read(&mut self, path: &MemoryPath, max_bytes: u64) -> Result<String, StoreError> {
        let shown = path.to_string();
        let file = match path {
            MemoryPath::TopLevel(name) => {
                refuse_symlink(&self.root, name, &shown)?;
                self.root.open(name)
            }
            MemoryPath::Note(rest) => self.memory_dir(&shown)?.open(rest),
            MemoryPath::ProfileUser(profile) => {
                let users = open_subdir(&self.root, USERS_DIR, &shown)?;
                open_subdir(&users, profile, &shown)?.open("USER.md")
            }
        }
        .map_err(|e| classify(e, &shown))?;
        let meta = file.metadata().map_err(|e| classify(e, &shown))?;
        if !meta.is_file() {
            return Err(StoreError::NotAFile(shown));
        }
        if meta.len() > max_bytes {
            return Err(StoreError::TooLarge {
                path: shown,
                len: meta.len(),
                max: max_bytes,
            });
        }
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        file.into_std()
            .take(max_bytes.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| classify(e, &shown))?;
        if bytes.len() as u64 > max_bytes {
            return Err(StoreError::TooLarge {
                path: shown,
                len: bytes.len() as u64,
                max: max_bytes,
            });
        }
        String::from_utf8(bytes).map_err(|_| StoreError::NotUtf8(shown))
    }

    /// Every indexable memory file (`MEMORY.md`, `USER.md`, `DREAMS.md`, `memory/**/*.md`)
    /// with its stamp, in no particular order (a warm start lists 50,000 notes and needs only
    /// the changed ones in order). Symlinks are skipped; a missing `memory/` is empty.
    pub fn list_indexable(&mut self) -> Result<Vec<(MemoryPath, FileStamp)>, StoreError> {
        let mut out = Vec::new();
        for name in TOP_LEVEL_FILES {
            match self.root.symlink_metadata(name) {
                Ok(meta) if meta.is_file() => {
                    out.push((MemoryPath::TopLevel(name), stamp(&meta)));
                }
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(StoreError::Io {
                        path: name.to_owned(),
                        source,
                    });
                }
            }
        }
        if let Ok(meta) = self.root.symlink_metadata(MEMORY_DIR)
            && meta.is_dir()
        {
            let dir = self.memory_dir(MEMORY_DIR)?;
            walk(dir, "", 0, &mut out)?;
        }
        Ok(out)
    }
}

fn walk(
    dir: &Dir,
    prefix: &str,
    depth: usize,
    out: &mut Vec<(MemoryPath, FileStamp)>,
) -> Result<(), StoreError> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    let entries = dir.entries().map_err(|source| StoreError::Io {
        path: format!("{MEMORY_DIR}/{prefix}"),
        source,
    })?;
    let mut notes = Vec::new();
    for entry in entries {
        let Ok(entry) = entry else { continue };
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let rel = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        if kind.is_dir() {
            if let Ok(sub) = entry.open_dir() {
                walk(&sub, &rel, depth + 1, out)?;
            }
        } else if kind.is_file()
            && std::path::Path::new(&name)
                .extension()
                .is_some_and(|ext| ext.eq_ignore_ascii_case("md"))
        {
            notes.push((rel, name));
        }
    }
    stat_notes(dir, notes, out);
    Ok(())
}

/// Notes in one folder from which they are stat'ed on several threads: starting a thread costs
/// tens of microseconds, a stat one to a few, and a warm start is mostly these stats.
const PARALLEL_STAT_MIN: usize = 512;
/// Most threads stat'ing one folder's notes.
const MAX_STAT_THREADS: usize = 4;

/// Stamps `notes` (path under `memory/`, name in `dir`) into `out`, skipping any that is no
/// longer a regular file (a symlink is never followed: the name is one component, stat'ed
/// relative to `dir` without following it).
fn stat_notes(dir: &Dir, notes: Vec<(String, String)>, out: &mut Vec<(MemoryPath, FileStamp)>) {
    let one = |(rel, name): (String, String)| {
        let st =
            rustix::fs::statat(dir, name.as_str(), rustix::fs::AtFlags::SYMLINK_NOFOLLOW).ok()?;
        (rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile)
            .then(|| (MemoryPath::Note(rel), stat_stamp(&st)))
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(MAX_STAT_THREADS);
    if notes.len() < PARALLEL_STAT_MIN || threads < 2 {
        out.extend(notes.into_iter().filter_map(one));
        return;
    }
    let per_thread = notes.len().div_ceil(threads);
    let mut notes = notes.into_iter();
    std::thread::scope(|scope| {
        let parts: Vec<_> = (0..threads)
            .map(|_| {
                let part: Vec<(String, String)> = notes.by_ref().take(per_thread).collect();
                scope.spawn(move || part.into_iter().filter_map(one).collect::<Vec<_>>())
            })
            .collect();
        for part in parts {
            match part.join() {
                Ok(stamped) => out.extend(stamped),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    });
}

/// A note's stamp from `statat` (top-level files get theirs through cap-std, [`stamp`]; each
/// kind of path always from the same one, so stamps compare equal when nothing changed).
fn stat_stamp(st: &rustix::fs::Stat) -> FileStamp {
    let since_epoch = |secs: i64, nanos: Option<u32>| {
        let nanos = nanos?;
        match u64::try_from(secs) {
            Ok(secs) => SystemTime::UNIX_EPOCH.checked_add(Duration::new(secs, nanos)),
            Err(_) => SystemTime::UNIX_EPOCH
                .checked_sub(Duration::from_secs(secs.unsigned_abs()))?
                .checked_add(Duration::from_nanos(u64::from(nanos))),
        }
    };
    FileStamp {
        len: u64::try_from(st.st_size).unwrap_or(0),
        #[expect(
            clippy::useless_conversion,
            reason = "the fields' integer types differ between targets"
        )]
        modified: since_epoch(
            i64::try_from(st.st_mtime).unwrap_or(0),
            u32::try_from(st.st_mtime_nsec).ok(),
        ),
        inode: st.st_ino,
    }
}

fn stamp(meta: &cap_std::fs::Metadata) -> FileStamp {
    FileStamp {
        len: meta.len(),
        modified: meta
            .modified()
            .ok()
            .map(cap_std::time::SystemTime::into_std),
        inode: inode(meta),
    }
}

#[cfg(unix)]
fn inode(meta: &cap_std::fs::Metadata) -> u64 {
    cap_std::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
fn inode(_meta: &cap_std::fs::Metadata) -> u64 {
    0
}

fn open_subdir(parent: &Dir, name: &str, shown: &str) -> Result<Dir, StoreError> {
    parent.open_dir(name).map_err(|e| classify(e, shown))
}

fn refuse_symlink(root: &Dir, name: &str, shown: &str) -> Result<(), StoreError> {
    match root.symlink_metadata(name) {
        Ok(meta) if meta.file_type().is_symlink() => Err(StoreError::Escapes(shown.to_owned())),
        Ok(_) => Ok(()),
        Err(e) => Err(classify(e, shown)),
    }
}

/// Maps an I/O error to what the caller should hear: missing, refused, or something else.
fn classify(err: std::io::Error, shown: &str) -> StoreError {
    match err.kind() {
        std::io::ErrorKind::NotFound => StoreError::NotFound(shown.to_owned()),
        // cap-std reports a path that would leave its directory as PermissionDenied.
        std::io::ErrorKind::PermissionDenied => StoreError::Escapes(shown.to_owned()),
        _ => StoreError::Io {
            path: shown.to_owned(),
            source: err,
        },
    }
}

/// Why a memory file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file does not exist.
    #[error("{0} does not exist in the OpenClaw workspace")]
    NotFound(String),
    /// The path resolves outside its memory folder (a symlink out, or a swapped folder).
    #[error("{0} leads outside the memory folder (a symlink?); refusing to read it")]
    Escapes(String),
    /// A directory or special file where a file was expected.
    #[error("{0} is not a regular file")]
    NotAFile(String),
    /// The file is larger than allowed.
    #[error("{path} is {len} bytes, over the {max}-byte limit")]
    TooLarge {
        /// The memory path.
        path: String,
        /// Its size.
        len: u64,
        /// The limit.
        max: u64,
    },
    /// The file is not UTF-8 text.
    #[error("{0} is not UTF-8 text")]
    NotUtf8(String),
    /// Any other I/O failure.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The memory path or directory.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use pretty_assertions::assert_eq;
    use tempfile::TempDir;

    use super::*;

    fn workspace() -> (TempDir, MemoryStore) {
        let dir = TempDir::new().unwrap();
        std::fs::create_dir_all(dir.path().join("ws/memory/imports")).unwrap();
        std::fs::write(dir.path().join("ws/MEMORY.md"), "# Memory\n- fact\n").unwrap();
        std::fs::write(dir.path().join("ws/memory/2026-01-01.md"), "day one\n").unwrap();
        std::fs::write(dir.path().join("ws/memory/imports/a.md"), "import\n").unwrap();
        std::fs::write(dir.path().join("ws/memory/notes.txt"), "not markdown\n").unwrap();
        std::fs::write(dir.path().join("ws/AGENTS.md"), "agent rules\n").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "root:x:0:0\n").unwrap();
        let store = MemoryStore::new(dir.path().join("ws"));
        (dir, store)
    }

    #[test]
    fn lists_memory_markdown_only() {
        let (_dir, store) = workspace();
        let mut listed: Vec<String> = store
            .list_indexable()
            .unwrap()
            .into_iter()
            .map(|(p, _)| p.to_string())
            .collect();
        listed.sort_unstable();
        assert_eq!(
            listed,
            ["MEMORY.md", "memory/2026-01-01.md", "memory/imports/a.md"]
        );
    }

    #[test]
    fn reads_notes_and_top_level_files() {
        let (_dir, store) = workspace();
        let text = store
            .read(&MemoryPath::Note("2026-01-01.md".into()), MAX_FILE_BYTES)
            .unwrap();
        assert_eq!(text, "day one\n");
        assert!(matches!(
            store.read(&MemoryPath::TopLevel("USER.md"), MAX_FILE_BYTES),
            Err(StoreError::NotFound(_))
        ));
    }

    #[test]
    fn symlinks_out_of_the_memory_folder_are_neither_listed_nor_read() {
        let (dir, store) = workspace();
        let ws = dir.path().join("ws");
        symlink(dir.path().join("secret.txt"), ws.join("memory/leak.md")).unwrap();
        symlink(ws.join("AGENTS.md"), ws.join("memory/agents.md")).unwrap();
        symlink(dir.path(), ws.join("memory/up")).unwrap();
        symlink(dir.path().join("secret.txt"), ws.join("USER.md")).unwrap();
        symlink(ws.join("AGENTS.md"), ws.join("DREAMS.md")).unwrap();

        let listed = store.list_indexable().unwrap();
        assert_eq!(listed.len(), 3, "{listed:?}");
        for path in [
            MemoryPath::Note("leak.md".into()),
            MemoryPath::Note("agents.md".into()),
            MemoryPath::Note("up/secret.txt".into()),
            MemoryPath::TopLevel("USER.md"),
            MemoryPath::TopLevel("DREAMS.md"),
        ] {
            let result = store.read(&path, MAX_FILE_BYTES);
            assert!(
                matches!(result, Err(StoreError::Escapes(_))),
                "{path}: {result:?}"
            );
        }
    }

    #[test]
    fn a_memory_folder_that_is_a_symlink_out_is_refused() {
        let dir = TempDir::new().unwrap();
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        std::fs::create_dir_all(dir.path().join("outside")).unwrap();
        std::fs::write(dir.path().join("outside/x.md"), "secret\n").unwrap();
        symlink(dir.path().join("outside"), dir.path().join("ws/memory")).unwrap();
        let store = MemoryStore::new(dir.path().join("ws"));
        assert_eq!(store.list_indexable().unwrap(), Vec::new());
        assert!(matches!(
            store.read(&MemoryPath::Note("x.md".into()), MAX_FILE_BYTES),
            Err(StoreError::Escapes(_))
        ));
    }

    #[test]
    fn oversized_files_are_refused() {
        let (_dir, store) = workspace();
        let result = store.read(&MemoryPath::TopLevel("MEMORY.md"), 4);
        assert!(
            matches!(result, Err(StoreError::TooLarge { .. })),
            "{result:?}"
        );
    }
}
