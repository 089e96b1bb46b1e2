//! Lexical path checks for the policy: normalizing `.` and `..` without touching the filesystem
//! and deciding, component by component, whether a path lies inside a root. (Opening files
//! safely, symlinks included, is `confine`'s job; the policy only judges the request.)

use std::path::{Component, Path, PathBuf};

/// Why a path could not be judged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PathProblem {
    /// The path contains a NUL byte, which no filesystem call accepts: a forged path.
    #[error("path {0:?} contains a NUL byte")]
    Nul(PathBuf),
    /// A relative path with no workspace to resolve it against.
    #[error("path {0:?} is relative and no workspace is known to resolve it against")]
    RelativeWithoutBase(PathBuf),
    /// The workspace itself is not absolute.
    #[error("the workspace {0:?} is not an absolute path")]
    RelativeBase(PathBuf),
}

/// Resolves `path` against `base` (when relative) and removes `.` and `..` lexically; `..` at
/// the root stays at the root, as the kernel does.
pub(crate) fn normalize(path: &Path, base: Option<&Path>) -> Result<PathBuf, PathProblem> {
    if path.as_os_str().as_encoded_bytes().contains(&0) {
        return Err(PathProblem::Nul(path.to_owned()));
    }
    let joined = if path.is_absolute() {
        path.to_owned()
    } else {
        match base {
            Some(base) if base.is_absolute() => base.join(path),
            Some(base) => return Err(PathProblem::RelativeBase(base.to_owned())),
            None => return Err(PathProblem::RelativeWithoutBase(path.to_owned())),
        }
    };
    let mut out = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::Prefix(prefix) => out.push(prefix.as_os_str()),
            Component::RootDir => out.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                // `pop` refuses to remove the root, which is the clamping we want.
                out.pop();
            }
            Component::Normal(name) => out.push(name),
        }
    }
    Ok(out)
}

/// Normalizes an absolute root (workspace or extra root) for containment checks.
pub(crate) fn normalize_root(root: &Path) -> Result<PathBuf, PathProblem> {
    if !root.is_absolute() {
        return Err(PathProblem::RelativeBase(root.to_owned()));
    }
    normalize(root, None)
}

/// Whether normalized `path` is `root` or below it, compared component by component, so
/// `/ws-evil` is not inside `/ws`.
pub(crate) fn is_inside(path: &Path, root: &Path) -> bool {
    path.starts_with(root)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn dots_are_resolved_lexically() -> anyhow::Result<()> {
        let ws = Path::new("/ws");
        let cases = [
            ("a/b", "/ws/a/b"),
            ("./a/./b/", "/ws/a/b"),
            ("a/../b", "/ws/b"),
            ("../ws-evil/x", "/ws-evil/x"),
            ("../../../../etc/passwd", "/etc/passwd"),
            ("/ws/a/../../etc", "/etc"),
            ("/../..", "/"),
            ("/ws//a", "/ws/a"),
        ];
        for (input, expected) in cases {
            assert_eq!(
                normalize(Path::new(input), Some(ws))?,
                PathBuf::from(expected),
                "{input}"
            );
        }
        Ok(())
    }

    #[test]
    fn containment_is_component_wise() -> anyhow::Result<()> {
        let ws = Path::new("/ws");
        assert!(is_inside(&normalize(Path::new("/ws"), None)?, ws));
        assert!(is_inside(&normalize(Path::new("/ws/a/b"), None)?, ws));
        assert!(!is_inside(&normalize(Path::new("/ws-evil"), None)?, ws));
        assert!(!is_inside(&normalize(Path::new("/wsx/a"), None)?, ws));
        assert!(!is_inside(&normalize(Path::new("/ws/../etc"), None)?, ws));
        assert!(!is_inside(&normalize(Path::new("/"), None)?, ws));
        Ok(())
    }

    #[test]
    fn unjudgeable_paths_are_errors() {
        assert_eq!(
            normalize(Path::new("a\0b"), Some(Path::new("/ws"))),
            Err(PathProblem::Nul(PathBuf::from("a\0b")))
        );
        assert_eq!(
            normalize(Path::new("a"), None),
            Err(PathProblem::RelativeWithoutBase(PathBuf::from("a")))
        );
        assert_eq!(
            normalize(Path::new("a"), Some(Path::new("ws"))),
            Err(PathProblem::RelativeBase(PathBuf::from("ws")))
        );
        assert_eq!(
            normalize_root(Path::new("ws")),
            Err(PathProblem::RelativeBase(PathBuf::from("ws")))
        );
    }
}
