//! `openclaw_user_prefs`: the user's `USER.md` (or a profile's), with its directives split into
//! active and superseded.

use std::fmt::Write as _;

use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::tool;
use serde::{Deserialize, Serialize};

use crate::paths::MemoryPath;
use crate::prefs::{self, Directive, Directives};
use crate::server::MemoryServer;
use crate::tools::{Answer, ToolError, blocking};
use crate::window::MAX_CHARS;

/// Arguments of `openclaw_user_prefs`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrefsArgs {
    /// A user profile whose `users/<profile>/USER.md` to read instead of the workspace's
    /// `USER.md`, e.g. "sam".
    #[serde(default)]
    #[schemars(with = "String")]
    pub profile: Option<String>,
}

/// Result of `openclaw_user_prefs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PrefsOutput {
    /// The file read, relative to the workspace.
    pub path: String,
    /// The file's text (cut at 12,000 characters).
    pub text: String,
    /// Whether `text` was cut.
    pub truncated: bool,
    /// Its directives: follow the active ones; superseded ones are history.
    pub directives: Directives,
}

fn render(output: &PrefsOutput) -> String {
    fn list(out: &mut String, title: &str, items: &[Directive]) {
        let _ = write!(out, "\n{title} ({}):", items.len());
        for d in items {
            let _ = write!(out, "\n- {}", d.text);
            if let Some(observed) = &d.observed {
                let _ = write!(out, " (observed {observed})");
            }
        }
    }
    let mut text = format!("User preferences from {}", output.path);
    list(&mut text, "Active directives", &output.directives.active);
    list(
        &mut text,
        "Superseded directives (do not follow)",
        &output.directives.superseded,
    );
    let _ = write!(text, "\n\n--- {} ---\n{}", output.path, output.text);
    if output.truncated {
        text.push_str("\n… (cut at 12,000 characters; read the rest with openclaw_memory_read)");
    }
    text
}

impl MemoryServer {
    /// Get the user's preferences from OpenClaw's USER.md (or users/<profile>/USER.md): the
    /// file's text plus its directives split into active (follow these) and superseded.
    /// Read-only.
    #[tool(
        name = "openclaw_user_prefs",
        annotations(title = "OpenClaw user preferences", read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<PrefsOutput>()
    )]
    pub(crate) async fn user_prefs(
        &self,
        Parameters(args): Parameters<PrefsArgs>,
    ) -> Result<Answer<PrefsOutput>, ToolError> {
        let path = match args.profile.as_deref().map(str::trim) {
            None | Some("") => MemoryPath::TopLevel("USER.md"),
            Some(profile) => MemoryPath::profile_user(profile)?,
        };
        let service = self.service().clone();
        let read_path = path.clone();
        let (_workspace, full) =
            blocking(move || service.read(&read_path).map_err(ToolError::from)).await?;
        let directives = prefs::parse(&full);
        let truncated = full.len() > MAX_CHARS;
        let mut text = full;
        if truncated {
            let mut cut = MAX_CHARS;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
        }
        let output = PrefsOutput {
            path: path.to_string(),
            text,
            truncated,
            directives,
        };
        Ok(Answer {
            text: render(&output),
            value: output,
        })
    }
}
