//! The lexical half of confinement: turns a caller's path string into a normalized path relative
//! to the root without touching the filesystem, and maps absolute paths onto the root
//! component by component (never by string prefix, the bug behind CVE-2025-53110).

use std::path::{Component, Path, PathBuf};

use super::ConfineError;

/// Longest path accepted, in bytes: Linux's `PATH_MAX` (4096, counting the terminating NUL), so
/// any longer path would fail in the kernel anyway; checking first keeps the work per call small.
pub const MAX_PATH_BYTES: usize = 4096;

/// Longest single file or directory name accepted, in bytes: `NAME_MAX` on Linux and macOS.
pub const MAX_NAME_BYTES: usize = 255;

/// Normalizes `user` into a path relative to the root whose absolute spellings are `roots`.
///
/// Checks, in order: NUL bytes, total length, each name's length, then containment. `.` is
/// dropped and `..` removes the previous name; a `..` with nothing left to remove escapes. An
/// absolute path is normalized the same way and accepted only if one of `roots` is a
/// component-wise prefix of it. `~` is an ordinary name. An empty result means the root itself.
pub(super) fn relative_to_roots(user: &str, roots: &[&Path]) -> Result<PathBuf, ConfineError> {
    if user.contains('\0') {
        return Err(ConfineError::NulByte {
            path: user.to_owned(),
        });
    }
    if user.len() >= MAX_PATH_BYTES {
        return Err(ConfineError::PathTooLong {
            limit: MAX_PATH_BYTES - 1,
        });
    }
    let path = Path::new(user);
    if path
        .components()
        .any(|c| c.as_os_str().len() > MAX_NAME_BYTES)
    {
        return Err(ConfineError::NameTooLong {
            limit: MAX_NAME_BYTES,
        });
    }
    let escapes = || ConfineError::Escapes {
        path: user.to_owned(),
    };
    if path.has_root() {
        let absolute = normalize_absolute(path);
        return strip_roots(&absolute, roots).ok_or_else(escapes);
    }
    normalize_relative(path).ok_or_else(escapes)
}

/// Normalizes a relative path lexically; `None` if a `..` climbs above its start (or the path
/// turns out not to be relative after all).
pub(super) fn normalize_relative(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(name) => out.push(name),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// Normalizes an absolute path lexically; `..` at the filesystem root stays there, as the kernel
/// does.
pub(super) fn normalize_absolute(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                // `pop` on `/` alone leaves `/`: the kernel's `/..` is `/` too.
                out.pop();
            }
            Component::Normal(_) | Component::RootDir | Component::Prefix(_) => {
                out.push(component);
            }
        }
    }
    out
}

/// The rest of the normalized absolute `path` below the first of `roots` that is a
/// component-wise prefix of it; `None` if none is (a sibling such as `/x/ws-evil` next to
/// `/x/ws` shares a string prefix but not a component prefix).
pub(super) fn strip_roots(path: &Path, roots: &[&Path]) -> Option<PathBuf> {
    roots
        .iter()
        .find_map(|root| path.strip_prefix(root).ok())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn rel(user: &str) -> Result<PathBuf, ConfineError> {
        relative_to_roots(user, &[Path::new("/srv/ws"), Path::new("/home/u/ws")])
    }

    #[test]
    fn normalizes_dots_inside_the_root() -> anyhow::Result<()> {
        assert_eq!(rel("a/./b/../c.txt")?, PathBuf::from("a/c.txt"));
        assert_eq!(rel("./a//b/")?, PathBuf::from("a/b"));
        assert_eq!(rel("a/..")?, PathBuf::new());
        assert_eq!(rel("")?, PathBuf::new());
        assert_eq!(rel(".")?, PathBuf::new());
        Ok(())
    }

    #[test]
    fn refuses_parent_dirs_that_climb_above_the_root() {
        for user in ["..", "../x", "a/../../x", "a/b/../../..", "./../ws/x"] {
            assert!(
                matches!(rel(user), Err(ConfineError::Escapes { .. })),
                "{user}"
            );
        }
    }

    #[test]
    fn accepts_absolute_paths_only_below_a_root_component_wise() -> anyhow::Result<()> {
        assert_eq!(rel("/srv/ws/a/b.txt")?, PathBuf::from("a/b.txt"));
        assert_eq!(rel("/home/u/ws")?, PathBuf::new());
        assert_eq!(rel("/srv/ws/../ws/a")?, PathBuf::from("a"));
        for user in [
            "/srv/ws-evil/x",
            "/srv/wsx",
            "/srv/ws/../ws-evil/x",
            "/etc/passwd",
            "/",
        ] {
            assert!(
                matches!(rel(user), Err(ConfineError::Escapes { .. })),
                "{user}"
            );
        }
        Ok(())
    }

    #[test]
    fn treats_tilde_and_encoded_dots_as_plain_names() -> anyhow::Result<()> {
        assert_eq!(rel("~")?, PathBuf::from("~"));
        assert_eq!(rel("~/.ssh/id_rsa")?, PathBuf::from("~/.ssh/id_rsa"));
        assert_eq!(rel("..%2f..%2fetc")?, PathBuf::from("..%2f..%2fetc"));
        assert_eq!(rel("..\\x")?, PathBuf::from("..\\x"));
        Ok(())
    }

    #[test]
    fn refuses_nul_bytes_and_oversized_paths() {
        assert!(matches!(rel("a\0b"), Err(ConfineError::NulByte { .. })));
        let long_name = "n".repeat(MAX_NAME_BYTES + 1);
        assert!(matches!(
            rel(&long_name),
            Err(ConfineError::NameTooLong { .. })
        ));
        let long_path = vec!["d"; MAX_PATH_BYTES].join("/");
        assert!(matches!(
            rel(&long_path),
            Err(ConfineError::PathTooLong { .. })
        ));
        assert!(rel(&"n".repeat(MAX_NAME_BYTES)).is_ok());
    }

    #[test]
    fn dot_dot_at_the_filesystem_root_stays_there() {
        assert_eq!(
            normalize_absolute(Path::new("/../../etc/./x")),
            PathBuf::from("/etc/x")
        );
    }
}
