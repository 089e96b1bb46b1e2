//! Which paths count as memory, and turning a user-supplied path into one. This is the policy
//! half of path safety (only `MEMORY.md`, `USER.md`, `DREAMS.md`, `memory/**` and
//! `users/<profile>/USER.md`); the store opens them confined to their folder, which is the other.

use std::fmt;

/// The top-level memory files OpenClaw keeps in its workspace.
pub const TOP_LEVEL_FILES: [&str; 3] = ["MEMORY.md", "USER.md", "DREAMS.md"];
/// The folder of daily notes and imports.
pub const MEMORY_DIR: &str = "memory";
/// The folder of per-profile preference files (`users/<profile>/USER.md`).
pub const USERS_DIR: &str = "users";
/// Longest path a caller may pass; real memory paths are far shorter.
const MAX_PATH_BYTES: usize = 1024;

/// A validated, normalised memory path (forward slashes, no `.`/`..`, relative to the
/// workspace).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemoryPath {
    /// `MEMORY.md`, `USER.md` or `DREAMS.md` at the workspace root.
    TopLevel(&'static str),
    /// A file under `memory/`; holds the part after `memory/`.
    Note(String),
    /// `users/<profile>/USER.md`; holds the profile name.
    ProfileUser(String),
}

impl MemoryPath {
    /// Parses a path a caller gave us, refusing anything that is not a memory path.
    pub fn parse(input: &str) -> Result<Self, PathError> {
        if input.is_empty() {
            return Err(PathError::Empty);
        }
        if input.len() > MAX_PATH_BYTES {
            return Err(PathError::TooLong);
        }
        if input.contains('\0') {
            return Err(PathError::Nul);
        }
        if input.starts_with('/') || input.starts_with('~') || has_drive_prefix(input) {
            return Err(PathError::Absolute(input.to_owned()));
        }
        if input.contains('\\') {
            return Err(PathError::Backslash(input.to_owned()));
        }
        let mut parts = Vec::new();
        for part in input.split('/') {
            match part {
                "" | "." => {}
                ".." => return Err(PathError::ParentDir(input.to_owned())),
                other => parts.push(other),
            }
        }
        match parts.as_slice() {
            [name] => TOP_LEVEL_FILES
                .iter()
                .find(|top| *top == name)
                .map(|top| Self::TopLevel(top))
                .ok_or_else(|| PathError::NotMemory(input.to_owned())),
            [MEMORY_DIR, rest @ ..] if !rest.is_empty() => Ok(Self::Note(rest.join("/"))),
            [USERS_DIR, profile, "USER.md"] => Self::profile_user(profile),
            _ => Err(PathError::NotMemory(input.to_owned())),
        }
    }

    /// `users/<profile>/USER.md`, refusing profile names that are not a plain folder name.
    pub fn profile_user(profile: &str) -> Result<Self, PathError> {
        let plain = !profile.is_empty()
            && profile.len() <= 64
            && profile != "."
            && profile != ".."
            && profile
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if plain {
            Ok(Self::ProfileUser(profile.to_owned()))
        } else {
            Err(PathError::BadProfile(profile.to_owned()))
        }
    }

    /// Whether this is a `USER.md` (the workspace's or a profile's): the files of directives.
    pub fn is_user_file(&self) -> bool {
        matches!(self, Self::TopLevel("USER.md") | Self::ProfileUser(_))
    }

    /// Whether this is `MEMORY.md`, the curated summary of the notes.
    pub fn is_memory_file(&self) -> bool {
        matches!(self, Self::TopLevel("MEMORY.md"))
    }

    /// Whether a note's file name starts with a `YYYY-MM-DD` date (a daily note), returning
    /// the date as days since 1970-01-01.
    pub fn note_day(&self) -> Option<i64> {
        let Self::Note(rest) = self else {
            return None;
        };
        let name = rest.rsplit('/').next().unwrap_or(rest);
        parse_day(name.get(..10)?)
    }
}

/// How a [`MemoryPath`] is persisted with the index: its variant and its text, checked again
/// when read back, so a damaged or planted index file cannot name a path outside the memory
/// files.
#[derive(serde::Serialize, serde::Deserialize)]
enum StoredPath<'a> {
    TopLevel(&'a str),
    Note(std::borrow::Cow<'a, str>),
    ProfileUser(std::borrow::Cow<'a, str>),
}

impl serde::Serialize for MemoryPath {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::TopLevel(name) => StoredPath::TopLevel(name),
            Self::Note(rest) => StoredPath::Note(rest.into()),
            Self::ProfileUser(profile) => StoredPath::ProfileUser(profile.into()),
        }
        .serialize(serializer)
    }
}

impl<'de> serde::Deserialize<'de> for MemoryPath {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        match StoredPath::deserialize(deserializer)? {
            StoredPath::TopLevel(name) => TOP_LEVEL_FILES
                .iter()
                .find(|top| **top == name)
                .map(|top| Self::TopLevel(top))
                .ok_or_else(|| D::Error::custom("not a top-level memory file")),
            StoredPath::Note(rest) => {
                let plain = !rest.is_empty()
                    && rest.len() <= MAX_PATH_BYTES
                    && !rest.contains('\0')
                    && rest.split('/').all(|part| !matches!(part, "" | "." | ".."));
                if plain {
                    Ok(Self::Note(rest.into_owned()))
                } else {
                    Err(D::Error::custom("not a path under memory/"))
                }
            }
            StoredPath::ProfileUser(profile) => {
                Self::profile_user(&profile).map_err(D::Error::custom)
            }
        }
    }
}

impl fmt::Display for MemoryPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TopLevel(name) => f.write_str(name),
            Self::Note(rest) => write!(f, "{MEMORY_DIR}/{rest}"),
            Self::ProfileUser(profile) => write!(f, "{USERS_DIR}/{profile}/USER.md"),
        }
    }
}

fn has_drive_prefix(input: &str) -> bool {
    let bytes = input.as_bytes();
    bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

/// Parses `YYYY-MM-DD` into days since the Unix epoch (proleptic Gregorian calendar).
pub fn parse_day(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return None;
    }
    let year: i64 = text.get(0..4)?.parse().ok()?;
    let month: i64 = text.get(5..7)?.parse().ok()?;
    let day: i64 = text.get(8..10)?.parse().ok()?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    // Howard Hinnant's days_from_civil.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

/// Why a path was refused. Messages say what is allowed, for the model to correct itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// An empty path.
    #[error("the path is empty; use MEMORY.md, USER.md, DREAMS.md or a file under memory/")]
    Empty,
    /// A path longer than we accept.
    #[error("the path is longer than {MAX_PATH_BYTES} bytes")]
    TooLong,
    /// A NUL byte in the path.
    #[error("the path contains a NUL byte")]
    Nul,
    /// An absolute path or one starting at `~`.
    #[error(
        "`{0}` is absolute; give a path relative to the OpenClaw workspace, e.g. memory/2026-01-31.md"
    )]
    Absolute(String),
    /// A path with `..`.
    #[error("`{0}` contains `..`; memory paths cannot leave the memory folders")]
    ParentDir(String),
    /// A path with backslashes.
    #[error("`{0}` contains a backslash; use forward slashes")]
    Backslash(String),
    /// A path outside the memory files.
    #[error(
        "`{0}` is not a memory file; only MEMORY.md, USER.md, DREAMS.md, memory/** and \
         users/<profile>/USER.md can be read"
    )]
    NotMemory(String),
    /// A profile name that is not a plain folder name.
    #[error("profile `{0}` is not a plain name (letters, digits, `-`, `_`, `.`; at most 64)")]
    BadProfile(String),
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn accepts_memory_paths_and_normalises_them() {
        assert_eq!(
            MemoryPath::parse("MEMORY.md"),
            Ok(MemoryPath::TopLevel("MEMORY.md"))
        );
        assert_eq!(
            MemoryPath::parse("./memory//2026-01-02.md"),
            Ok(MemoryPath::Note("2026-01-02.md".into()))
        );
        assert_eq!(
            MemoryPath::parse("memory/imports/chat.md").map(|p| p.to_string()),
            Ok("memory/imports/chat.md".into())
        );
        assert_eq!(
            MemoryPath::parse("users/sam/USER.md"),
            Ok(MemoryPath::ProfileUser("sam".into()))
        );
    }

    #[test]
    fn refuses_attacks_and_non_memory_paths() {
        for bad in [
            "",
            "../MEMORY.md",
            "memory/../../etc/passwd",
            "memory/..",
            "/etc/passwd",
            "~/.ssh/id_rsa",
            "C:/Windows",
            "memory\\..\\x",
            "MEMORY.md\0.txt",
            "openclaw.json",
            "AGENTS.md",
            "memory",
            "memory-evil/x.md",
            "MEMORY.md.bak",
            "users/../USER.md",
            "users/sam/MEMORY.md",
            "users/a/b/USER.md",
        ] {
            assert!(MemoryPath::parse(bad).is_err(), "accepted {bad:?}");
        }
    }

    #[test]
    fn reads_the_day_of_daily_notes_only() {
        assert_eq!(
            MemoryPath::parse("memory/1970-01-02-trip.md").map(|p| p.note_day()),
            Ok(Some(1))
        );
        assert_eq!(parse_day("2026-11-21"), Some(20_778));
        assert_eq!(MemoryPath::TopLevel("MEMORY.md").note_day(), None);
        assert_eq!(MemoryPath::Note("ideas.md".into()).note_day(), None);
        assert_eq!(parse_day("2026-13-01"), None);
    }

    #[test]
    fn profile_names_must_be_plain() {
        assert!(MemoryPath::profile_user("sam-2").is_ok());
        for bad in ["", "..", "a/b", "a\0", &"x".repeat(65)] {
            assert!(MemoryPath::profile_user(bad).is_err(), "{bad:?}");
        }
    }
}
