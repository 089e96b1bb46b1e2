//! A client's config file on disk: a missing file reads as empty; a write goes to a temporary
//! file beside it that is renamed over it (so a crash leaves the old or the new file, never half
//! of one), keeps the file's permissions, and first copies the old version to a backup.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Suffix of the backup kept beside a file before each change (`openclaw.json` →
/// `openclaw.json.copilot-bridge.bak`): the version before our latest change.
const BACKUP_SUFFIX: &str = ".copilot-bridge.bak";

/// Why a config file could not be read, understood or written.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// Reading or writing failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What we were doing.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The existing file does not parse; it is never overwritten.
    #[error(
        "{}: {detail}; it was left untouched: fix that line (or move the file away) and run \
         again",
        path.display()
    )]
    Malformed {
        /// The file.
        path: PathBuf,
        /// The parser's message, with the line.
        detail: String,
    },
    /// The file parses, but a key we need to edit holds something other than a table/object.
    #[error(
        "{}: `{key}` is not {expected}; it was left untouched: correct it by hand and run again",
        path.display()
    )]
    Shape {
        /// The file.
        path: PathBuf,
        /// The dotted key.
        key: String,
        /// What it should be ("an object", "a table").
        expected: &'static str,
    },
}

/// Reads `path`; `None` when it does not exist.
pub fn read(path: &Path) -> Result<Option<String>, EditError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(EditError::Io {
            action: "read",
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// The file a write really lands on: a symlinked config is written through the link, so the
/// link stays a link.
fn target(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Copies the current version of `path` (if any) to its backup; returns the backup's path.
fn backup(path: &Path) -> Result<Option<PathBuf>, EditError> {
    if !path.exists() {
        return Ok(None);
    }
    let mut name = path.as_os_str().to_owned();
    name.push(BACKUP_SUFFIX);
    let copy = PathBuf::from(name);
    std::fs::copy(path, &copy).map_err(|source| EditError::Io {
        action: "back up",
        path: path.to_path_buf(),
        source,
    })?;
    Ok(Some(copy))
}

/// Replaces `path` with `text` atomically, after backing up the old version; returns the
/// backup's path when there was an old version.
pub fn write(path: &Path, text: &str) -> Result<Option<PathBuf>, EditError> {
    let path = target(path);
    let io = |action| {
        let path = path.clone();
        move |source| EditError::Io {
            action,
            path,
            source,
        }
    };
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir).map_err(io("create the directory of"))?;
    let saved = backup(&path)?;
    let permissions = std::fs::metadata(&path).map(|m| m.permissions()).ok();
    let mut temp =
        tempfile::NamedTempFile::new_in(dir).map_err(io("create a temporary file for"))?;
    temp.write_all(text.as_bytes())
        .map_err(io("write a temporary file for"))?;
    if let Some(permissions) = permissions {
        temp.as_file()
            .set_permissions(permissions)
            .map_err(io("keep the permissions of"))?;
    }
    temp.as_file().sync_all().map_err(io("flush"))?;
    temp.persist(&path).map_err(|err| EditError::Io {
        action: "replace",
        path: path.clone(),
        source: err.error,
    })?;
    Ok(saved)
}

/// Deletes `path` (after backing it up): what an edit that leaves nothing does, so a file we
/// created is gone again after `unregister`.
pub fn delete(path: &Path) -> Result<Option<PathBuf>, EditError> {
    let path = target(path);
    let saved = backup(&path)?;
    std::fs::remove_file(&path).map_err(|source| EditError::Io {
        action: "remove",
        path: path.clone(),
        source,
    })?;
    Ok(saved)
}

/// A line diff of `before` → `after` for `--print`: the changed middle, with two lines of
/// context on each side (config edits change one contiguous region per entry, so the lines
/// common to both ends are what is left out).
pub fn diff(before: &str, after: &str) -> String {
    const CONTEXT: usize = 2;
    let old: Vec<&str> = before.lines().collect();
    let new: Vec<&str> = after.lines().collect();
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let start = prefix.saturating_sub(CONTEXT);
    let mut out = String::new();
    for line in &old[start..prefix] {
        let _ = writeln!(out, "  {line}");
    }
    for line in &old[prefix..old.len() - suffix] {
        let _ = writeln!(out, "- {line}");
    }
    for line in &new[prefix..new.len() - suffix] {
        let _ = writeln!(out, "+ {line}");
    }
    let end = (old.len() - suffix + CONTEXT).min(old.len());
    for line in &old[old.len() - suffix..end] {
        let _ = writeln!(out, "  {line}");
    }
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn write_is_atomic_keeps_permissions_and_backs_up() -> anyhow::Result<()> {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("config.json");
        std::fs::write(&path, "old")?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
        let saved = write(&path, "new")?;
        assert_eq!(std::fs::read_to_string(&path)?, "new");
        assert_eq!(
            std::fs::metadata(&path)?.permissions().mode() & 0o777,
            0o600
        );
        let saved = saved.expect("a backup of the old version");
        assert_eq!(std::fs::read_to_string(saved)?, "old");
        // Only the file and its backup: no temporary file left behind.
        assert_eq!(std::fs::read_dir(dir.path())?.count(), 2);
        Ok(())
    }

    #[test]
    fn write_goes_through_a_symlink() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let real = dir.path().join("real.json");
        let link = dir.path().join("link.json");
        std::fs::write(&real, "old")?;
        std::os::unix::fs::symlink(&real, &link)?;
        write(&link, "new")?;
        assert!(std::fs::symlink_metadata(&link)?.file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&real)?, "new");
        Ok(())
    }

    #[test]
    fn diff_shows_the_changed_lines_with_context() {
        let before = "a\nb\nc\nd\ne\nf\n";
        let after = "a\nb\nc\nX\ne\nf\n";
        assert_eq!(diff(before, after), "  b\n  c\n- d\n+ X\n  e\n  f\n");
    }
}
