//! The one error type of path confinement, and the single place where an `io::Error` from a
//! confined operation is turned into it.

use std::io;
use std::path::PathBuf;

/// Why a confined path operation was refused or failed.
///
/// Every `path` field holds the caller's path exactly as given, never a resolved target, so a
/// message can never reveal where a symlink outside the root points or what lies there. Messages
/// escape control characters in paths so a hostile name cannot forge extra lines.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfineError {
    /// The root directory itself could not be opened.
    #[error(
        "cannot open root directory `{}`: check that it exists and is a directory you can read",
        .root.display()
    )]
    RootUnavailable {
        /// The root as configured.
        root: PathBuf,
        /// What the operating system said.
        #[source]
        source: io::Error,
    },
    /// The path contains a NUL byte, which no file name can hold.
    #[error("path `{}` contains a NUL byte; remove it", .path.escape_debug())]
    NulByte {
        /// The path as given.
        path: String,
    },
    /// The path, or a symlink on the way, leads outside the root.
    #[error(
        "`{}` leads outside the root directory; use a path inside it (relative paths are \
         resolved from the root, and symlinks may not point out of it)",
        .path.escape_debug()
    )]
    Escapes {
        /// The path as given.
        path: String,
    },
    /// Nothing exists at the path.
    #[error("`{}` does not exist under the root directory; list the directory to see what is there", .path.escape_debug())]
    NotFound {
        /// The path as given.
        path: String,
    },
    /// Something already exists where a new file was to be created.
    #[error(
        "`{}` already exists; choose another name or ask to overwrite it",
        .path.escape_debug()
    )]
    AlreadyExists {
        /// The path as given.
        path: String,
    },
    /// The path names a directory, FIFO, socket or device where a regular file is needed.
    #[error("`{}` is not a regular file; give the path of a file", .path.escape_debug())]
    NotAFile {
        /// The path as given.
        path: String,
    },
    /// The path, or one of its parents, is not a directory where one is needed.
    #[error(
        "`{}` is not a directory (or one of its parents is a file); give the path of a directory",
        .path.escape_debug()
    )]
    NotADirectory {
        /// The path as given.
        path: String,
    },
    /// The file is larger than the caller's byte limit; nothing was returned.
    #[error(
        "`{}` is larger than the {limit}-byte limit; read a smaller file or raise the limit",
        .path.escape_debug()
    )]
    TooLarge {
        /// The path as given.
        path: String,
        /// The limit in bytes that was exceeded.
        limit: u64,
    },
    /// The file is not valid UTF-8 text.
    #[error("`{}` is not UTF-8 text; it cannot be returned as a string", .path.escape_debug())]
    NotUtf8 {
        /// The path as given.
        path: String,
    },
    /// The whole path is longer than the system accepts (the path itself is left out: it is huge).
    #[error("the path is longer than {limit} bytes; use a shorter path")]
    PathTooLong {
        /// The limit in bytes.
        limit: usize,
    },
    /// One file or directory name in the path is longer than the system accepts.
    #[error(
        "a file or directory name in the path is longer than {limit} bytes; use a shorter name"
    )]
    NameTooLong {
        /// The limit in bytes for one name.
        limit: usize,
    },
    /// Resolving the path followed too many symlinks (a loop, or an absurd chain).
    #[error(
        "`{}` goes through too many symlinks (a loop?); use the path of the real file",
        .path.escape_debug()
    )]
    TooManySymlinks {
        /// The path as given.
        path: String,
    },
    /// A listing would hold more entries than the documented bound.
    #[error(
        "`{}` holds more than {limit} entries; list a subdirectory or list without recursion",
        .path.escape_debug()
    )]
    TooManyEntries {
        /// The directory as given.
        path: String,
        /// The entry bound.
        limit: usize,
    },
    /// A recursive listing would go deeper than the documented bound.
    #[error(
        "`{}` nests directories more than {limit} levels deep; list a deeper subdirectory instead",
        .path.escape_debug()
    )]
    TooDeep {
        /// The directory as given.
        path: String,
        /// The depth bound.
        limit: usize,
    },
    /// Any other operating-system failure (permissions, disk full, …).
    #[error("cannot access `{}`: {source}", .path.escape_debug())]
    Io {
        /// The path as given.
        path: String,
        /// What the operating system said.
        #[source]
        source: io::Error,
    },
}

/// Whether `err` is cap-std refusing a step that would leave the directory handle.
///
/// cap-std reports `openat2`'s `EXDEV` (and its own manual resolver's refusals) as a
/// `PermissionDenied` error that carries no OS error number; a real `EACCES` always carries one.
pub(super) fn is_escape(err: &io::Error) -> bool {
    (err.kind() == io::ErrorKind::PermissionDenied && err.raw_os_error().is_none())
        || err.kind() == io::ErrorKind::CrossesDevices
}

/// Maps an `io::Error` from a confined operation on `path` to the precise variant.
pub(super) fn from_io(path: &str, err: io::Error) -> ConfineError {
    let path = path.to_owned();
    if is_escape(&err) {
        return ConfineError::Escapes { path };
    }
    match err.kind() {
        io::ErrorKind::NotFound => ConfineError::NotFound { path },
        io::ErrorKind::AlreadyExists => ConfineError::AlreadyExists { path },
        io::ErrorKind::NotADirectory => ConfineError::NotADirectory { path },
        io::ErrorKind::IsADirectory => ConfineError::NotAFile { path },
        _ if is_symlink_loop(&err) => ConfineError::TooManySymlinks { path },
        _ => ConfineError::Io { path, source: err },
    }
}

/// Whether `err` is `ELOOP` (`io::ErrorKind::FilesystemLoop` is not stable yet).
pub(super) fn is_symlink_loop(err: &io::Error) -> bool {
    #[cfg(unix)]
    {
        err.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error())
    }
    #[cfg(not(unix))]
    {
        let _ = err;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_escape_control_characters_in_paths() {
        let err = ConfineError::NotFound {
            path: "a\nFAKE LINE".to_owned(),
        };
        assert!(!err.to_string().contains('\n'), "{err}");
    }

    #[test]
    fn cap_std_escape_error_is_told_apart_from_a_real_permission_error() {
        let escape = io::Error::new(io::ErrorKind::PermissionDenied, "a path led outside");
        let eacces = io::Error::from_raw_os_error(13);
        assert!(is_escape(&escape));
        assert!(!is_escape(&eacces));
        assert!(matches!(from_io("x", escape), ConfineError::Escapes { .. }));
        assert!(matches!(from_io("x", eacces), ConfineError::Io { .. }));
    }
}
