//! Workspace file tools, done by the bridge itself through `bridge-core` confinement (ACP has no
//! workspace RPC): read a file, create or replace one, list a directory.

use std::fmt::Write as _;

use bridge_core::confine::{EntryKind, Root};
use bridge_mcp::{Answer, ToolError, blocking};
use globset::{GlobBuilder, GlobMatcher};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::tool;
use serde::{Deserialize, Serialize};

use crate::server::BridgeServer;

/// Longest path accepted from a caller, in characters (the original design's limit).
pub const MAX_PATH_CHARS: usize = 1_000;
/// Largest file content accepted by `copilot_create_file`, in characters (the original's limit).
pub const MAX_CONTENT_CHARS: usize = 500_000;
/// Largest file `copilot_read_file` opens: 8 MiB. The answer is cut to the output limit anyway;
/// this only stops a huge file from being read into memory.
pub const MAX_READ_BYTES: u64 = 8 * 1024 * 1024;
/// Most entries one `copilot_list_files` answer carries; the rest are counted, not listed.
pub const MAX_LISTED_ENTRIES: usize = 1_000;

/// Arguments of `copilot_read_file`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// File path relative to the workspace root, e.g. `src/main.rs`. Absolute paths are accepted
    /// only inside the workspace.
    pub path: String,
}

/// Result of `copilot_read_file`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileContent {
    /// The path as given.
    pub path: String,
    /// The file's size in bytes.
    pub bytes: usize,
    /// The content (secrets redacted, cut to the output limit).
    pub content: String,
}

/// Arguments of `copilot_create_file`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateFileArgs {
    /// File path relative to the workspace root, e.g. `docs/notes.md`; missing parent
    /// directories are created.
    pub path: String,
    /// The whole content of the file (at most 500,000 characters).
    pub content: String,
    /// Replace the file if it exists (default false: an existing file is an error).
    #[serde(default)]
    #[schemars(with = "bool")]
    pub overwrite: Option<bool>,
}

/// Result of `copilot_create_file`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileWritten {
    /// The path as given.
    pub path: String,
    /// Bytes written.
    pub bytes: usize,
    /// True when an existing file was replaced.
    pub replaced: bool,
}

/// Arguments of `copilot_list_files`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListFilesArgs {
    /// Directory relative to the workspace root (default: the root itself).
    #[serde(default)]
    #[schemars(with = "String")]
    pub directory: Option<String>,
    /// Include everything below the directory, not just its own entries (default false).
    #[serde(default)]
    #[schemars(with = "bool")]
    pub recursive: Option<bool>,
    /// Only entries matching this glob, e.g. `*.rs` (matched against the file name) or
    /// `src/**/*.rs` (matched against the path from the workspace root when it has a `/`).
    #[serde(default)]
    #[schemars(with = "String")]
    pub glob: Option<String>,
}

/// One listed entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListedEntry {
    /// Path from the workspace root, `/`-separated.
    pub path: String,
    /// `file`, `dir`, `symlink` or `other`.
    pub kind: &'static str,
    /// Size in bytes (files, and links to files inside the workspace).
    pub size: u64,
}

/// Result of `copilot_list_files`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Listing {
    /// The directory as given (`.` for the root).
    pub directory: String,
    /// Matching entries, sorted by path.
    pub entries: Vec<ListedEntry>,
    /// How many entries matched in all (more than `entries` when the answer was capped).
    pub total: usize,
}

fn check_path(path: &str) -> Result<(), ToolError> {
    if path.trim().is_empty() {
        return Err(ToolError::Model(
            "path is empty: give a file path relative to the workspace root, e.g. src/main.rs"
                .into(),
        ));
    }
    let chars = path.chars().count();
    if chars > MAX_PATH_CHARS {
        return Err(ToolError::Model(format!(
            "path is {chars} characters long; the limit is {MAX_PATH_CHARS}"
        )));
    }
    Ok(())
}

fn kind_name(kind: EntryKind) -> &'static str {
    match kind {
        EntryKind::File => "file",
        EntryKind::Dir => "dir",
        EntryKind::Symlink => "symlink",
        EntryKind::Other => "other",
    }
}

fn compile_glob(glob: &str) -> Result<(GlobMatcher, bool), ToolError> {
    let matcher = GlobBuilder::new(glob)
        .literal_separator(true)
        .build()
        .map_err(|e| ToolError::Model(format!("glob {glob:?} is not valid: {e}")))?
        .compile_matcher();
    Ok((matcher, glob.contains('/')))
}

fn render_listing(listing: &Listing) -> String {
    let mut text = format!(
        "{} entr{} in {}",
        listing.total,
        if listing.total == 1 { "y" } else { "ies" },
        listing.directory
    );
    if listing.total > listing.entries.len() {
        let _ = write!(text, " (first {} shown)", listing.entries.len());
    }
    text.push_str(":\n");
    for entry in &listing.entries {
        let _ = match entry.kind {
            "dir" => writeln!(text, "{}/", entry.path),
            "file" => writeln!(text, "{} ({} bytes)", entry.path, entry.size),
            other => writeln!(text, "{} ({other})", entry.path),
        };
    }
    text
}

/// Reads a file through the workspace root.
pub(crate) fn read_file(root: &Root, path: &str) -> Result<(String, usize), ToolError> {
    check_path(path)?;
    let text = root.read_to_string(path, MAX_READ_BYTES)?;
    let bytes = text.len();
    Ok((text, bytes))
}

/// Creates or replaces a file through the workspace root; returns whether it replaced one.
pub(crate) fn create_file(
    root: &Root,
    path: &str,
    content: &str,
    overwrite: bool,
) -> Result<bool, ToolError> {
    check_path(path)?;
    let chars = content.chars().count();
    if chars > MAX_CONTENT_CHARS {
        return Err(ToolError::Model(format!(
            "content is {chars} characters; the limit is {MAX_CONTENT_CHARS}: split the file"
        )));
    }
    let existed = root.metadata(path).is_ok();
    if existed && !overwrite {
        return Err(ToolError::Model(format!(
            "{path} already exists; pass overwrite: true to replace it"
        )));
    }
    root.write(path, content.as_bytes(), overwrite)?;
    Ok(existed)
}

/// Lists a directory through the workspace root.
pub(crate) fn list_files(
    root: &Root,
    directory: &str,
    recursive: bool,
    glob: Option<&str>,
) -> Result<Listing, ToolError> {
    check_path(directory)?;
    let filter = glob.map(compile_glob).transpose()?;
    let mut entries = Vec::new();
    let mut total = 0;
    for entry in root.list(directory, recursive)? {
        let matches = filter.as_ref().is_none_or(|(matcher, by_path)| {
            if *by_path {
                matcher.is_match(&entry.path)
            } else {
                matcher.is_match(entry.path.rsplit('/').next().unwrap_or(&entry.path))
            }
        });
        if !matches {
            continue;
        }
        total += 1;
        if entries.len() < MAX_LISTED_ENTRIES {
            entries.push(ListedEntry {
                kind: kind_name(entry.kind),
                size: entry.len,
                path: entry.path,
            });
        }
    }
    Ok(Listing {
        directory: directory.to_owned(),
        entries,
        total,
    })
}

impl BridgeServer {
    /// Read a text file from the workspace (UTF-8, up to 8 MiB; the answer is cut to the output
    /// limit and secrets are redacted). Paths outside the workspace are refused.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    pub(crate) async fn copilot_read_file(
        &self,
        Parameters(args): Parameters<ReadFileArgs>,
    ) -> Result<Answer<FileContent>, ToolError> {
        let root = self.workspace()?;
        let path = args.path;
        let (content, bytes) = {
            let path = path.clone();
            blocking(move || read_file(&root, &path)).await?
        };
        let text = format!("{path} ({bytes} bytes):\n\n{content}");
        Ok(Answer::new(
            text,
            FileContent {
                path,
                bytes,
                content,
            },
        ))
    }

    /// Create a file in the workspace (missing parent directories are created). An existing
    /// file is only replaced with `overwrite: true`, atomically. Paths outside the workspace are
    /// refused.
    #[tool(annotations(
        destructive_hint = true,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    pub(crate) async fn copilot_create_file(
        &self,
        Parameters(args): Parameters<CreateFileArgs>,
    ) -> Result<Answer<FileWritten>, ToolError> {
        let root = self.workspace()?;
        let CreateFileArgs {
            path,
            content,
            overwrite,
            ..
        } = args;
        let bytes = content.len();
        let replaced = {
            let path = path.clone();
            blocking(move || create_file(&root, &path, &content, overwrite.unwrap_or(false)))
                .await?
        };
        let verb = if replaced { "Replaced" } else { "Created" };
        Ok(Answer::new(
            format!("{verb} {path} ({bytes} bytes)"),
            FileWritten {
                path,
                bytes,
                replaced,
            },
        ))
    }

    /// List files in a workspace directory, optionally recursive and filtered by a glob
    /// (`*.rs`, `src/**/*.rs`). Symlinks are shown but never followed out of the workspace.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    pub(crate) async fn copilot_list_files(
        &self,
        Parameters(args): Parameters<ListFilesArgs>,
    ) -> Result<Answer<Listing>, ToolError> {
        let root = self.workspace()?;
        let ListFilesArgs {
            directory,
            recursive,
            glob,
            ..
        } = args;
        let directory = directory.unwrap_or_else(|| ".".to_owned());
        let listing = blocking(move || {
            list_files(
                &root,
                &directory,
                recursive.unwrap_or(false),
                glob.as_deref(),
            )
        })
        .await?;
        Ok(Answer::new(render_listing(&listing), listing))
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn workspace() -> anyhow::Result<(tempfile::TempDir, Root)> {
        let dir = tempfile::TempDir::new()?;
        std::fs::create_dir_all(dir.path().join("src/deep"))?;
        std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n")?;
        std::fs::write(dir.path().join("src/deep/lib.rs"), "")?;
        std::fs::write(dir.path().join("README.md"), "# hi\n")?;
        let root = Root::open(dir.path())?;
        Ok((dir, root))
    }

    #[test]
    fn create_refuses_to_replace_without_overwrite() -> anyhow::Result<()> {
        let (dir, root) = workspace()?;
        assert_eq!(
            create_file(&root, "new/a.txt", "one", false).ok(),
            Some(false)
        );
        let err = create_file(&root, "new/a.txt", "two", false).err();
        assert!(matches!(err, Some(ToolError::Model(m)) if m.contains("overwrite: true")));
        assert_eq!(
            create_file(&root, "new/a.txt", "two", true).ok(),
            Some(true)
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("new/a.txt"))?,
            "two"
        );
        Ok(())
    }

    #[test]
    fn limits_on_path_and_content_are_enforced() -> anyhow::Result<()> {
        let (_dir, root) = workspace()?;
        let long = "a".repeat(MAX_PATH_CHARS + 1);
        assert!(matches!(read_file(&root, &long), Err(ToolError::Model(m)) if m.contains("1000")));
        let big = "x".repeat(MAX_CONTENT_CHARS + 1);
        assert!(matches!(
            create_file(&root, "big.txt", &big, false),
            Err(ToolError::Model(_))
        ));
        assert!(matches!(read_file(&root, " "), Err(ToolError::Model(_))));
        Ok(())
    }

    #[test]
    fn glob_matches_names_or_paths() -> anyhow::Result<()> {
        let (_dir, root) = workspace()?;
        let by_name = list_files(&root, ".", true, Some("*.rs"))?;
        let paths: Vec<_> = by_name.entries.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, vec!["src/deep/lib.rs", "src/main.rs"]);
        let by_path = list_files(&root, ".", true, Some("src/*.rs"))?;
        assert_eq!(by_path.total, 1);
        assert!(matches!(
            list_files(&root, ".", false, Some("[")),
            Err(ToolError::Model(m)) if m.contains("not valid")
        ));
        Ok(())
    }

    #[test]
    fn escapes_are_refused_for_every_tool() -> anyhow::Result<()> {
        let (_dir, root) = workspace()?;
        for path in ["../x", "/etc/passwd", "src/../../x", "a\0b"] {
            assert!(read_file(&root, path).is_err(), "{path}");
            assert!(create_file(&root, path, "x", true).is_err(), "{path}");
            assert!(list_files(&root, path, false, None).is_err(), "{path}");
        }
        Ok(())
    }
}
