//! Symlink resolution inside the root: reads each link through the root's directory handle and
//! decides from the link's text alone whether it stays inside, so nothing outside is ever
//! looked at. Used where the kernel's `RESOLVE_BENEATH` is stricter than we want (absolute links
//! that point back inside the root) and to tell a link that leads out from other failures.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

use cap_std::fs::Dir;

use super::ConfineError;
use super::error::{from_io, is_escape};
use super::lexical::{normalize_absolute, strip_roots};

/// Most symlinks followed while resolving one path: Linux's own limit (`MAXSYMLINKS`, 40), so a
/// chain the kernel would follow is followed here too and a loop ends quickly.
pub const MAX_SYMLINK_HOPS: usize = 40;

/// One step still to take while resolving.
enum Step {
    Up,
    Name(OsString),
}

/// Resolves every symlink in the normalized relative path `rel`, the last one included.
///
/// Returns a relative path that contained no symlinks when it was checked; the caller must still
/// open it through the handle (cap-std), so a link swapped in afterwards is confined by the
/// kernel rather than trusted. Absolute link targets count as inside only when one of `roots` is
/// a component-wise prefix of them. Once a name is missing the rest is joined lexically. `user`
/// is the caller's path, used for errors only.
pub(super) fn resolve(
    dir: &Dir,
    roots: &[&Path],
    rel: &Path,
    user: &str,
) -> Result<PathBuf, ConfineError> {
    let escapes = || ConfineError::Escapes {
        path: user.to_owned(),
    };
    let mut pending: VecDeque<Step> = steps(rel).ok_or_else(escapes)?;
    let mut done = PathBuf::new();
    let mut hops = 0;
    while let Some(step) = pending.pop_front() {
        let name = match step {
            Step::Up => {
                if !done.pop() {
                    return Err(escapes());
                }
                continue;
            }
            Step::Name(name) => name,
        };
        let candidate = done.join(&name);
        match dir.symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() => {
                hops += 1;
                if hops > MAX_SYMLINK_HOPS {
                    return Err(ConfineError::TooManySymlinks {
                        path: user.to_owned(),
                    });
                }
                let target = match dir.read_link_contents(&candidate) {
                    Ok(target) => target,
                    // `EINVAL`: no longer a symlink (swapped since the stat). Look again; the
                    // hop count bounds how often.
                    Err(err) if err.kind() == io::ErrorKind::InvalidInput => {
                        pending.push_front(Step::Name(name));
                        continue;
                    }
                    Err(err) => return Err(from_io(user, err)),
                };
                let target = if target.has_root() {
                    done.clear();
                    strip_roots(&normalize_absolute(&target), roots).ok_or_else(escapes)?
                } else {
                    target
                };
                let mut next = steps(&target).ok_or_else(escapes)?;
                next.append(&mut pending);
                pending = next;
            }
            Ok(_) => done = candidate,
            Err(err) if is_missing(&err) => {
                // Nothing below a missing name can be a symlink: finish lexically.
                done = candidate;
                for step in pending {
                    match step {
                        Step::Up if !done.pop() => return Err(escapes()),
                        Step::Up => {}
                        Step::Name(name) => done.push(name),
                    }
                }
                return Ok(done);
            }
            // A directory checked above was swapped for a link out since: refuse.
            Err(err) if is_escape(&err) => return Err(escapes()),
            Err(err) => return Err(from_io(user, err)),
        }
    }
    Ok(done)
}

fn is_missing(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// The steps of a relative path; `None` if it is not relative.
fn steps(path: &Path) -> Option<VecDeque<Step>> {
    let mut out = VecDeque::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => out.push_back(Step::Up),
            Component::Normal(name) => out.push_back(Step::Name(name.to_owned())),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}
