//! Path confinement: every file operation the servers do on a user-supplied path goes through a
//! [`Root`], which opens it relative to a directory handle so nothing outside the root can be
//! read, listed or written, not even through a symlink swapped in during the call.
//!
//! How a path is handled:
//! 1. **Lexically** ([`Root::relative`]): NUL bytes and oversized paths are refused, `.` and `..`
//!    are resolved on the string (a `..` above the root is refused), and an absolute path is
//!    accepted only if the root is a component-wise prefix of it. `~` is an ordinary name.
//! 2. **Through the handle**: the relative path is opened with cap-std, which on Linux uses
//!    `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)` (and a component-by-component
//!    `O_NOFOLLOW` walk on kernels without it). The kernel refuses any step out of the root at
//!    the moment of the open, so there is no check-then-open window to race.
//! 3. **Symlinks**: links that stay inside work. When the kernel refuses a path, the links on it
//!    are read through the handle and judged by their text alone (a relative link may not climb
//!    above the root; an absolute one must name a place under it), then the result is opened
//!    through the handle again. That is how absolute links back into the root work, and why a
//!    link that leads out gets [`ConfineError::Escapes`] without anything outside being touched.
//!
//! Writes never modify an existing inode in place: a new file is created exclusively
//! (`O_CREAT | O_EXCL`, which also refuses to follow a symlink at the final name) inside its
//! parent's handle, and a replacement is written to a temporary file in the same directory and
//! renamed over the old name.
//!
//! **Hard links.** A hard link is another name for the same inode, not a pointer, so nothing can
//! tell an "outside" file hard-linked into the root from one that was always there; reading it
//! is allowed. The root never creates hard links, and because writes replace by rename, writing
//! to a hard-linked name gives that name a new inode and leaves the other names' content as it
//! was. Refusing `nlink > 1` was rejected: pnpm stores and `git clone --local` hard-link ordinary
//! project files, and on Linux `fs.protected_hardlinks` already stops people linking files they
//! could not read themselves.
//!
//! **Limits of the guarantee.** Mount points inside the root are crossed like directories
//! (`RESOLVE_BENEATH` does not stop at them): what is mounted inside the root is the
//! administrator's choice. Where `openat2` is missing or blocked (old kernels, some seccomp
//! profiles) cap-std falls back to its own walk with `O_NOFOLLOW` at each step, which keeps the
//! same confinement at some speed cost.
//!
//! **Special files.** FIFOs, sockets and devices are never read or written: their type is checked
//! before opening and again on the opened handle, and reads open with `O_NONBLOCK` so a FIFO
//! swapped in between cannot block the call.

mod error;
mod lexical;
mod list;
mod resolve;

use std::io::{self, Read as _, Write as _};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, Metadata, OpenOptions};

pub use self::error::ConfineError;
use self::error::from_io;
pub use self::lexical::{MAX_NAME_BYTES, MAX_PATH_BYTES};
pub use self::list::{Entry, ListLimits, MAX_LIST_DEPTH, MAX_LIST_ENTRIES};
pub use self::resolve::MAX_SYMLINK_HOPS;

/// Prefix of the temporary files [`Root::replace`] writes before renaming them into place; a
/// leading dot keeps them out of most listings if a crash leaves one behind.
pub const TEMP_FILE_PREFIX: &str = ".bridge-tmp-";

/// Tries at finding an unused temporary name before giving up; names carry the process id and a
/// counter, so a collision means a leftover from an earlier process with the same id.
const TEMP_NAME_ATTEMPTS: u32 = 16;

/// Distinguishes temporary files of concurrent replacements in this process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A directory that user-supplied paths are confined to.
///
/// Cheap to clone (the handle is shared). All methods are blocking: call them from
/// `tokio::task::spawn_blocking` in async code.
#[derive(Debug, Clone)]
pub struct Root {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    dir: Dir,
    /// The canonical absolute path, resolved once at open.
    path: PathBuf,
    /// The absolute path as configured, when it differs from `path` (the root reached through a
    /// symlink, say) and has no `..`, so absolute paths spelled that way are recognized too.
    alias: Option<PathBuf>,
}

/// What kind of filesystem object an entry or path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (only ever reported for list entries; other calls follow links).
    Symlink,
    /// A FIFO, socket or device: never read or written.
    Other,
}

/// Metadata of a path, after following symlinks that stay inside the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInfo {
    /// File, directory or other (never `Symlink`: links are followed).
    pub kind: EntryKind,
    /// Size in bytes as the filesystem reports it.
    pub len: u64,
    /// Last modification time, if the filesystem records one.
    pub modified: Option<SystemTime>,
}

impl Root {
    /// Opens `path` as the root: canonicalized once, then held open as a directory handle that
    /// all later operations are relative to.
    pub fn open(path: &Path) -> Result<Self, ConfineError> {
        let unavailable = |source| ConfineError::RootUnavailable {
            root: path.to_path_buf(),
            source,
        };
        let canonical = std::fs::canonicalize(path).map_err(unavailable)?;
        let dir = Dir::open_ambient_dir(&canonical, ambient_authority()).map_err(unavailable)?;
        let alias = std::path::absolute(path)
            .ok()
            .filter(|given| !given.components().any(|c| c == Component::ParentDir))
            .map(|given| lexical::normalize_absolute(&given))
            .filter(|given| *given != canonical);
        Ok(Self {
            inner: Arc::new(Inner {
                dir,
                path: canonical,
                alias,
            }),
        })
    }

    /// The canonical absolute path of the root.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The normalized path of `user_path` relative to the root (empty for the root itself).
    ///
    /// Purely lexical: `.` and `..` are resolved on the string, a `..` above the root is
    /// [`ConfineError::Escapes`], an absolute path must lie under the root (compared component
    /// by component, so `/x/ws-evil` is not under `/x/ws`), and `~` is just a name. Symlinks are
    /// not looked at here; the other methods confine them when opening.
    pub fn relative(&self, user_path: &str) -> Result<PathBuf, ConfineError> {
        lexical::relative_to_roots(user_path, &self.roots())
    }

    /// Reads a whole regular file of at most `max_bytes` bytes.
    ///
    /// A larger file is [`ConfineError::TooLarge`] naming the limit, and nothing is returned: a
    /// silent prefix would look like the whole file. Directories, FIFOs, sockets and devices are
    /// [`ConfineError::NotAFile`].
    pub fn read(&self, user_path: &str, max_bytes: u64) -> Result<Vec<u8>, ConfineError> {
        let rel = self.relative(user_path)?;
        let too_large = || ConfineError::TooLarge {
            path: user_path.to_owned(),
            limit: max_bytes,
        };
        // Look before opening, so a device or FIFO that is simply there is never opened.
        let meta = self.follow(&rel, user_path, |p| self.inner.dir.metadata(p))?;
        ensure_regular_file(&meta, user_path)?;
        let mut options = OpenOptions::new();
        options.read(true);
        nonblocking(&mut options);
        let file = self.follow(&rel, user_path, |p| self.inner.dir.open_with(p, &options))?;
        // Look again at what was actually opened: the name may have changed in between.
        let meta = file.metadata().map_err(|err| from_io(user_path, err))?;
        ensure_regular_file(&meta, user_path)?;
        if meta.len() > max_bytes {
            return Err(too_large());
        }
        let expected = usize::try_from(meta.len()).unwrap_or(0);
        let mut bytes = Vec::with_capacity(expected);
        // One byte past the limit tells a file that grew since the stat from one that fits.
        file.take(max_bytes.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|err| from_io(user_path, err))?;
        if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > max_bytes {
            return Err(too_large());
        }
        Ok(bytes)
    }

    /// Reads a whole UTF-8 text file of at most `max_bytes` bytes, as [`Root::read`] does;
    /// invalid UTF-8 is [`ConfineError::NotUtf8`].
    pub fn read_to_string(&self, user_path: &str, max_bytes: u64) -> Result<String, ConfineError> {
        let bytes = self.read(user_path, max_bytes)?;
        String::from_utf8(bytes).map_err(|_| ConfineError::NotUtf8 {
            path: user_path.to_owned(),
        })
    }

    /// Kind, size and modification time of `user_path`, following symlinks that stay inside.
    pub fn metadata(&self, user_path: &str) -> Result<FileInfo, ConfineError> {
        let rel = self.relative(user_path)?;
        let meta = self.follow(&rel, user_path, |p| self.inner.dir.metadata(p))?;
        Ok(file_info(&meta))
    }

    /// Creates a new file holding `contents`; fails with [`ConfineError::AlreadyExists`] if the
    /// name is taken (by anything, a dangling symlink included).
    ///
    /// Missing parent directories are created inside the root, each through the handle. The file
    /// is created with `O_CREAT | O_EXCL` in its parent's handle, so no symlink is followed at
    /// the final name. If writing fails the partial file is removed.
    pub fn create_new(&self, user_path: &str, contents: &[u8]) -> Result<(), ConfineError> {
        let rel = self.relative(user_path)?;
        let (parent, name) = split_file_name(&rel, user_path)?;
        let parent = self.resolve(parent, user_path)?;
        let parent_dir = self.open_dir_creating(&parent, user_path)?;
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        let mut file = parent_dir
            .open_with(name, &options)
            .map_err(|err| from_io(user_path, err))?;
        if let Err(err) = file.write_all(contents) {
            drop(file);
            // Best effort: the write error is the one worth reporting.
            let _ = parent_dir.remove_file(name);
            return Err(from_io(user_path, err));
        }
        Ok(())
    }

    /// Writes `contents` to `user_path`, replacing the file if it exists and creating it (and
    /// missing parents) if not.
    ///
    /// The content goes to a temporary file in the same directory, is synced, and is renamed
    /// over the old name, so readers see the old or the new file and never a mix. A symlink
    /// that stays inside is followed, so the file it points to is replaced and the link kept;
    /// one that leads out is [`ConfineError::Escapes`]. An existing file's permissions are kept.
    pub fn replace(&self, user_path: &str, contents: &[u8]) -> Result<(), ConfineError> {
        let rel = self.relative(user_path)?;
        split_file_name(&rel, user_path)?;
        let target = self.resolve(&rel, user_path)?;
        let (parent, name) = split_file_name(&target, user_path)?;
        let parent_dir = self.open_dir_creating(parent, user_path)?;
        let permissions = match parent_dir.symlink_metadata(name) {
            Ok(meta) if meta.is_file() => Some(meta.permissions()),
            // Swapped in since `resolve`: renaming replaces the link itself, nothing it points at.
            Ok(meta) if meta.file_type().is_symlink() => None,
            Ok(_) => {
                return Err(ConfineError::NotAFile {
                    path: user_path.to_owned(),
                });
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound => None,
            Err(err) => return Err(from_io(user_path, err)),
        };
        let (temp_name, mut file) = create_temp_file(&parent_dir, user_path)?;
        let written = file
            .write_all(contents)
            .and_then(|()| match permissions {
                Some(permissions) => file.set_permissions(permissions),
                None => Ok(()),
            })
            .and_then(|()| file.sync_all())
            .and_then(|()| {
                drop(file);
                parent_dir.rename(&temp_name, &parent_dir, name)
            });
        if let Err(err) = written {
            // Best effort: the write or rename error is the one worth reporting.
            let _ = parent_dir.remove_file(&temp_name);
            return Err(from_io(user_path, err));
        }
        Ok(())
    }

    /// Writes `contents` to `user_path`: [`Root::replace`] when `overwrite` is set, otherwise
    /// [`Root::create_new`].
    pub fn write(
        &self,
        user_path: &str,
        contents: &[u8],
        overwrite: bool,
    ) -> Result<(), ConfineError> {
        if overwrite {
            self.replace(user_path, contents)
        } else {
            self.create_new(user_path, contents)
        }
    }

    /// Lists the directory `user_dir` (empty or `.` for the root), recursively if asked.
    ///
    /// Entries are sorted by path, which is relative to the root and `/`-separated (names that
    /// are not UTF-8 are shown with replacement characters). Symlinks are reported as
    /// [`EntryKind::Symlink`] and never descended into; one that resolves inside the root
    /// carries its target's kind, size and time, one that leads out or dangles carries none.
    /// At most [`MAX_LIST_ENTRIES`] entries and [`MAX_LIST_DEPTH`] levels: beyond that the
    /// listing fails rather than silently cutting the tree short.
    pub fn list(&self, user_dir: &str, recursive: bool) -> Result<Vec<Entry>, ConfineError> {
        self.list_with_limits(user_dir, recursive, ListLimits::default())
    }

    /// [`Root::list`] with other bounds, for callers that want a smaller (or larger) listing.
    pub fn list_with_limits(
        &self,
        user_dir: &str,
        recursive: bool,
        limits: ListLimits,
    ) -> Result<Vec<Entry>, ConfineError> {
        let rel = self.relative(user_dir)?;
        list::list(self, &rel, user_dir, recursive, limits)
    }

    fn roots(&self) -> Vec<&Path> {
        let mut roots = vec![self.inner.path.as_path()];
        roots.extend(self.inner.alias.as_deref());
        roots
    }

    /// Resolves the symlinks on `rel` by their text, through the handle (see `resolve`).
    fn resolve(&self, rel: &Path, user_path: &str) -> Result<PathBuf, ConfineError> {
        resolve::resolve(&self.inner.dir, &self.roots(), rel, user_path)
    }

    /// Runs `op` on `rel` through the handle; if the kernel refuses because a step would leave
    /// the root, resolves the symlinks by hand and runs `op` once more on the result, so links
    /// that merely look like escapes to the kernel (absolute ones pointing inside) still work.
    fn follow<T>(
        &self,
        rel: &Path,
        user_path: &str,
        op: impl Fn(&Path) -> io::Result<T>,
    ) -> Result<T, ConfineError> {
        match op(dot_if_empty(rel)) {
            Ok(value) => Ok(value),
            Err(err) if error::is_escape(&err) || error::is_symlink_loop(&err) => {
                let resolved = self.resolve(rel, user_path)?;
                op(dot_if_empty(&resolved)).map_err(|err| from_io(user_path, err))
            }
            Err(err) => Err(from_io(user_path, err)),
        }
    }

    /// Opens the directory at the symlink-free `rel`, creating it and its missing parents first.
    fn open_dir_creating(&self, rel: &Path, user_path: &str) -> Result<Dir, ConfineError> {
        let dir = &self.inner.dir;
        let at = dot_if_empty(rel);
        match dir.open_dir(at) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => dir
                .create_dir_all(at)
                .and_then(|()| dir.open_dir(at))
                .map_err(|err| from_io(user_path, err)),
            opened => opened.map_err(|err| from_io(user_path, err)),
        }
    }
}

/// Splits a normalized relative path into its parent and final name; the root itself has no
/// name and is not a file.
fn split_file_name<'a>(
    rel: &'a Path,
    user_path: &str,
) -> Result<(&'a Path, &'a std::ffi::OsStr), ConfineError> {
    match (rel.parent(), rel.file_name()) {
        (Some(parent), Some(name)) => Ok((parent, name)),
        _ => Err(ConfineError::NotAFile {
            path: user_path.to_owned(),
        }),
    }
}

/// cap-std wants `.` rather than an empty path for the directory itself.
fn dot_if_empty(rel: &Path) -> &Path {
    if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    }
}

fn ensure_regular_file(meta: &Metadata, user_path: &str) -> Result<(), ConfineError> {
    if meta.is_file() {
        Ok(())
    } else {
        Err(ConfineError::NotAFile {
            path: user_path.to_owned(),
        })
    }
}

fn file_info(meta: &Metadata) -> FileInfo {
    FileInfo {
        kind: kind_of(meta),
        len: meta.len(),
        modified: modified(meta),
    }
}

fn kind_of(meta: &Metadata) -> EntryKind {
    let file_type = meta.file_type();
    if file_type.is_symlink() {
        EntryKind::Symlink
    } else if file_type.is_dir() {
        EntryKind::Dir
    } else if file_type.is_file() {
        EntryKind::File
    } else {
        EntryKind::Other
    }
}

fn modified(meta: &Metadata) -> Option<SystemTime> {
    meta.modified()
        .ok()
        .map(cap_std::time::SystemTime::into_std)
}

/// Opening a FIFO for reading blocks until a writer appears; `O_NONBLOCK` makes the open return
/// at once (and has no effect on regular files), so the type check after opening can refuse it.
#[cfg(unix)]
fn nonblocking(options: &mut OpenOptions) {
    use cap_std::fs::OpenOptionsExt as _;
    let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
    options.custom_flags(flags.bits().cast_signed());
}

#[cfg(not(unix))]
fn nonblocking(_options: &mut OpenOptions) {}

/// Creates a fresh temporary file next to the file being replaced.
fn create_temp_file(dir: &Dir, user_path: &str) -> Result<(String, File), ConfineError> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    let mut last_err = None;
    for _ in 0..TEMP_NAME_ATTEMPTS {
        let counter = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = format!("{TEMP_FILE_PREFIX}{}-{counter}", std::process::id());
        match dir.open_with(&name, &options) {
            Ok(file) => return Ok((name, file)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => last_err = Some(err),
            Err(err) => return Err(from_io(user_path, err)),
        }
    }
    let source = last_err.unwrap_or_else(|| io::Error::from(io::ErrorKind::AlreadyExists));
    Err(ConfineError::Io {
        path: user_path.to_owned(),
        source,
    })
}
