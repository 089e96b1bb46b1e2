//! The policy file as written by users (TOML): every key optional, unknown keys rejected. The
//! meaning of each key is documented in `config/policy.example.toml`; [`Policy`] compiles it.
//!
//! [`Policy`]: super::Policy

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The raw policy file. Absent keys take the documented defaults when compiled.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyFile {
    /// Tool-name globs that are always denied (checked first).
    pub blocked_tools: Option<Vec<String>>,
    /// Regexes matched against a call's command line or argument text; a match denies.
    pub blocked_patterns: Option<Vec<String>>,
    /// Names of built-in destructive-command rules to switch off.
    pub disabled_default_patterns: Option<Vec<String>>,
    /// Path globs that edits may never touch, even inside the workspace.
    pub blocked_paths: Option<Vec<String>>,
    /// What to do with edits outside the workspace (default `deny`).
    pub edits_outside_workspace: Option<OutsideWorkspace>,
    /// What to do with reads outside the workspace (default `allow`).
    pub reads_outside_workspace: Option<OutsideWorkspace>,
    /// Absolute directories treated as part of the workspace for both checks above.
    pub extra_workspace_roots: Option<Vec<PathBuf>>,
    /// Tool-name globs that need the user's approval.
    pub ask_tools: Option<Vec<String>>,
    /// Tool-name globs that are allowed; when non-empty, every other tool is denied.
    pub allowed_tools: Option<Vec<String>>,
    /// Who is asked when a rule says `ask` (default `auto`).
    pub ask_via: Option<AskVia>,
}

/// Where a question for a person goes when a rule says `ask`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AskVia {
    /// The calling MCP client when it can ask, else OpenClaw's approval flow when the gateway
    /// is configured, else deny.
    #[default]
    Auto,
    /// Only the calling MCP client (through elicitation); deny when it cannot ask.
    Client,
    /// Only OpenClaw's approval flow; deny when the gateway is not configured.
    Openclaw,
    /// Never ask: `ask` means deny.
    Deny,
}

/// The decision for a call that touches paths outside the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutsideWorkspace {
    /// Deny the call.
    Deny,
    /// Ask the user.
    Ask,
    /// Allow it (other rules still apply).
    Allow,
}
