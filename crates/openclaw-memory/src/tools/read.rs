//! `openclaw_memory_read`: a window of lines from one memory file, like OpenClaw's
//! `memory_get`.

use std::fmt::Write as _;

use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::tool;
use serde::{Deserialize, Serialize};

use crate::paths::MemoryPath;
use crate::server::MemoryServer;
use crate::tools::{Answer, ToolError, blocking};
use crate::window::{self, DEFAULT_LINES, MAX_LINES};

/// Arguments of `openclaw_memory_read`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// Memory file relative to the OpenClaw workspace: `MEMORY.md` (default), `USER.md`,
    /// `DREAMS.md` or a file under `memory/`, e.g. `memory/2026-11-21.md`.
    #[serde(default)]
    #[schemars(with = "String")]
    pub file: Option<String>,
    /// First line to return, 1-based (default 1). Use a search hit's startLine to read
    /// around it.
    #[serde(default)]
    #[schemars(with = "u32", range(min = 1))]
    pub from: Option<u32>,
    /// How many lines to return (default 120, at most 2000; output also stops at 12,000
    /// characters).
    #[serde(default)]
    #[schemars(with = "u32", range(min = 1, max = 2000))]
    pub lines: Option<u32>,
}

/// Result of `openclaw_memory_read`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadOutput {
    /// The file, relative to the workspace.
    pub path: String,
    /// First line returned (1-based).
    pub from: usize,
    /// Last line returned (1-based, inclusive).
    pub to: usize,
    /// Lines in the whole file.
    pub total_lines: usize,
    /// The lines.
    pub text: String,
    /// Whether more lines follow that were not returned.
    pub truncated: bool,
    /// Pass this as `from` to continue, when truncated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_from: Option<usize>,
}

fn render(output: &ReadOutput) -> String {
    let mut text = format!(
        "{} lines {}-{} of {}",
        output.path, output.from, output.to, output.total_lines
    );
    match output.next_from {
        Some(next) => {
            let _ = write!(text, " (truncated; continue with from={next})");
        }
        None if output.truncated => text.push_str(" (truncated at 12,000 characters)"),
        None => {}
    }
    text.push_str(":\n\n");
    text.push_str(&output.text);
    text
}

impl MemoryServer {
    /// Read lines from one OpenClaw memory file: MEMORY.md (default), USER.md, DREAMS.md or a
    /// note under memory/. Returns up to 120 lines from `from` (at most 12,000 characters) and
    /// says where to continue. Other files cannot be read. Read-only.
    #[tool(
        name = "openclaw_memory_read",
        annotations(title = "Read an OpenClaw memory file", read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<ReadOutput>()
    )]
    pub(crate) async fn memory_read(
        &self,
        Parameters(args): Parameters<ReadArgs>,
    ) -> Result<Answer<ReadOutput>, ToolError> {
        let file = args.file.as_deref().unwrap_or("MEMORY.md");
        let path = MemoryPath::parse(file)?;
        if matches!(path, MemoryPath::ProfileUser(_)) {
            return Err(ToolError::Model(
                "per-profile preferences are read with openclaw_user_prefs {\"profile\": …}"
                    .to_owned(),
            ));
        }
        let from = args.from.unwrap_or(1);
        if from == 0 {
            return Err(ToolError::Model(
                "from is 1-based; use 1 for the first line".into(),
            ));
        }
        let lines = args.lines.map_or(DEFAULT_LINES, |n| n as usize);
        if lines == 0 || lines > MAX_LINES {
            return Err(ToolError::Model(format!(
                "lines must be between 1 and {MAX_LINES}, got {lines}"
            )));
        }
        let service = self.service().clone();
        let read_path = path.clone();
        let (_workspace, text) =
            blocking(move || service.read(&read_path).map_err(ToolError::from)).await?;
        let window = window::cut(&text, from as usize, lines).map_err(|e| ToolError::model(&e))?;
        let output = ReadOutput {
            path: path.to_string(),
            from: window.from,
            to: window.to,
            total_lines: window.total_lines,
            text: window.text,
            truncated: window.truncated,
            next_from: window.next_from,
        };
        Ok(Answer {
            text: render(&output),
            value: output,
        })
    }
}
