//! The clients `register` knows: where each keeps its user-level MCP configuration, in which
//! format, under which key, and the entries we write there.

use std::path::{Path, PathBuf};

use bridge_core::config::{EnvLayer, MAX_APPROVAL_TIMEOUT_MS};
use serde_json::json;

use super::json_doc::Entry;
use super::toml_doc::TomlEntry;

/// The bridge's server name in every client (what OpenClaw agents see as `copilot-bridge__…`).
pub const BRIDGE: &str = "copilot-bridge";
/// The memory server's name in every client.
pub const MEMORY: &str = "openclaw-memory";
/// How long a client may wait for one call of the bridge: a delegated task runs 2 minutes by
/// default and an orchestration several in a row, and every client's default (60 s for
/// OpenClaw) would cut them off; progress notifications extend no client's limit. 30 minutes
/// still ends a call that hangs.
pub const CALL_TIMEOUT_SECS: u64 = 30 * 60;
/// The setting of how long a reviewer has for an approval asked through OpenClaw.
const APPROVAL_TIMEOUT_ENV: &str = "COPILOT_BRIDGE_APPROVAL_TIMEOUT_MS";

/// An MCP client whose configuration `register` edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    /// OpenClaw: both servers under `mcp.servers` in `openclaw.json` (JSON5), through
    /// `openclaw mcp` when the CLI is on PATH.
    Openclaw,
    /// The Copilot CLI itself: `openclaw-memory` in `~/.copilot/mcp-config.json`
    /// (COPILOT_HOME), so plain `copilot` sessions consult OpenClaw's memory too.
    Copilot,
    /// Claude Code: user scope, `mcpServers` in `~/.claude.json` (CLAUDE_CONFIG_DIR).
    ClaudeCode,
    /// Codex: `[mcp_servers.*]` in `~/.codex/config.toml` (CODEX_HOME).
    Codex,
    /// Cursor: `mcpServers` in `~/.cursor/mcp.json`.
    Cursor,
    /// VS Code: `servers` in the user profile's `mcp.json`.
    Vscode,
}

/// The two installed binaries, as absolute paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binaries {
    /// `copilot-bridge` (the running executable).
    pub bridge: PathBuf,
    /// `openclaw-memory`, found the way sessions find it.
    pub memory: PathBuf,
}

/// How a client's file is written.
#[derive(Debug, Clone)]
pub enum Layout {
    /// JSON (or JSONC/JSON5): `entries` in the object at `keys`.
    Json {
        /// The path of keys to the servers object.
        keys: &'static [&'static str],
        /// Our entries.
        entries: Vec<Entry>,
    },
    /// Codex's TOML.
    Toml(Vec<TomlEntry>),
}

impl Client {
    /// The name a user types.
    pub fn name(self) -> &'static str {
        match self {
            Self::Openclaw => "openclaw",
            Self::Copilot => "copilot",
            Self::ClaudeCode => "claude-code",
            Self::Codex => "codex",
            Self::Cursor => "cursor",
            Self::Vscode => "vscode",
        }
    }

    /// The names of the servers we register with this client.
    pub fn server_names(self) -> &'static [&'static str] {
        match self {
            // The Copilot CLI is what the bridge drives: it gets only the memory server.
            Self::Copilot => &[MEMORY],
            Self::Openclaw | Self::ClaudeCode | Self::Codex | Self::Cursor | Self::Vscode => {
                &[BRIDGE, MEMORY]
            }
        }
    }

    /// The keys of the servers object in a JSON client's file; `None` for Codex's TOML.
    pub fn json_keys(self) -> Option<&'static [&'static str]> {
        match self {
            Self::Openclaw => Some(&["mcp", "servers"]),
            Self::Copilot | Self::ClaudeCode | Self::Cursor => Some(&["mcpServers"]),
            Self::Vscode => Some(&["servers"]),
            Self::Codex => None,
        }
    }

    /// The client's user-level config file, as the client itself finds it.
    pub fn config_path(self, env: &EnvLayer) -> Result<PathBuf, String> {
        let home = || {
            env.get("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from)
                .ok_or_else(|| "HOME is not set; pass --config FILE".to_owned())
        };
        let dir_or = |var: &str, default: &str| -> Result<PathBuf, String> {
            match env.get(var).filter(|v| !v.is_empty()) {
                Some(dir) => Ok(PathBuf::from(dir)),
                None => Ok(home()?.join(default)),
            }
        };
        Ok(match self {
            Self::Openclaw => openclaw_config_path(env).ok_or_else(|| {
                "neither HOME nor OPENCLAW_HOME is set; pass --config FILE".to_owned()
            })?,
            Self::Copilot => dir_or("COPILOT_HOME", ".copilot")?.join("mcp-config.json"),
            Self::ClaudeCode => match env.get("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
                Some(dir) => Path::new(dir).join(".claude.json"),
                None => home()?.join(".claude.json"),
            },
            Self::Codex => dir_or("CODEX_HOME", ".codex")?.join("config.toml"),
            Self::Cursor => home()?.join(".cursor").join("mcp.json"),
            Self::Vscode => {
                let user = if cfg!(target_os = "macos") {
                    home()?.join("Library/Application Support/Code/User")
                } else {
                    dir_or("XDG_CONFIG_HOME", ".config")?.join("Code/User")
                };
                user.join("mcp.json")
            }
        })
    }

    /// What we write for `binaries`.
    pub fn layout(self, binaries: &Binaries) -> Layout {
        let bridge = binaries.bridge.display().to_string();
        let memory = binaries.memory.display().to_string();
        let json = |entries| Layout::Json {
            keys: self.json_keys().unwrap_or_default(),
            entries,
        };
        let pair = |bridge_fields, memory_fields| {
            vec![
                Entry {
                    name: BRIDGE,
                    fields: bridge_fields,
                },
                Entry {
                    name: MEMORY,
                    fields: memory_fields,
                },
            ]
        };
        match self {
            // The same fields `openclaw mcp add --command … --timeout … --env …` writes, so
            // either way of registering reads back as in sync. The call timeout is raised from
            // OpenClaw's 60 s, and with it the time a reviewer has for an approval asked
            // through OpenClaw (as a default: a value the user set is kept).
            Self::Openclaw => json(pair(
                vec![
                    ("command", json!(bridge)),
                    ("requestTimeoutMs", json!(CALL_TIMEOUT_SECS * 1000)),
                    (
                        "env",
                        json!({APPROVAL_TIMEOUT_ENV: MAX_APPROVAL_TIMEOUT_MS.to_string()}),
                    ),
                ],
                vec![("command", json!(memory))],
            )),
            Self::Copilot => json(vec![Entry {
                name: MEMORY,
                fields: vec![
                    ("type", json!("local")),
                    ("command", json!(memory)),
                    ("args", json!([])),
                    ("tools", json!(["*"])),
                ],
            }]),
            // What `claude mcp add --scope user` writes (less `env`, which stays the user's).
            // Claude's call limit is its own MCP_TOOL_TIMEOUT, not a per-server setting.
            // VS Code's `servers` entries have the same shape.
            Self::ClaudeCode | Self::Vscode => {
                json(pair(stdio_fields(&bridge), stdio_fields(&memory)))
            }
            Self::Codex => {
                let fields = |command: &str| {
                    vec![
                        ("command", toml_edit::Value::from(command)),
                        ("args", toml_edit::Value::Array(toml_edit::Array::new())),
                    ]
                };
                let mut bridge_fields = fields(&bridge);
                bridge_fields.push((
                    "tool_timeout_sec",
                    toml_edit::Value::from(i64::try_from(CALL_TIMEOUT_SECS).unwrap_or(i64::MAX)),
                ));
                Layout::Toml(vec![
                    TomlEntry {
                        name: BRIDGE,
                        fields: bridge_fields,
                    },
                    TomlEntry {
                        name: MEMORY,
                        fields: fields(&memory),
                    },
                ])
            }
            Self::Cursor => json(pair(
                vec![("command", json!(bridge)), ("args", json!([]))],
                vec![("command", json!(memory)), ("args", json!([]))],
            )),
        }
    }
}

/// `OPENCLAW_HOME`, else `HOME`: what OpenClaw puts in place of `~`.
pub fn openclaw_home(env: &EnvLayer) -> Option<PathBuf> {
    ["OPENCLAW_HOME", "HOME"]
        .iter()
        .find_map(|var| env.get(var).filter(|v| !v.is_empty()))
        .map(PathBuf::from)
}

/// Replaces a leading `~` with OpenClaw's home, as OpenClaw does.
pub fn expand_home(path: &str, env: &EnvLayer) -> PathBuf {
    match (Path::new(path).strip_prefix("~"), openclaw_home(env)) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(path),
    }
}

/// OpenClaw's state directory: `OPENCLAW_STATE_DIR`, else `~/.openclaw-<profile>` for a
/// non-default `OPENCLAW_PROFILE`, else `~/.openclaw`.
pub fn openclaw_state_dir(env: &EnvLayer) -> Option<PathBuf> {
    if let Some(dir) = env.get("OPENCLAW_STATE_DIR").filter(|v| !v.is_empty()) {
        return Some(expand_home(dir, env));
    }
    let home = openclaw_home(env)?;
    Some(match env.get("OPENCLAW_PROFILE").map(str::trim) {
        Some(profile) if !profile.is_empty() && profile != "default" => {
            home.join(format!(".openclaw-{profile}"))
        }
        _ => home.join(".openclaw"),
    })
}

/// `openclaw.json`: `OPENCLAW_CONFIG_PATH`, else in the state directory.
fn openclaw_config_path(env: &EnvLayer) -> Option<PathBuf> {
    if let Some(path) = env.get("OPENCLAW_CONFIG_PATH").filter(|v| !v.is_empty()) {
        return Some(expand_home(path, env));
    }
    Some(openclaw_state_dir(env)?.join("openclaw.json"))
}

/// A stdio server entry as Claude Code's and VS Code's configs write it.
fn stdio_fields(command: &str) -> Vec<(&'static str, serde_json::Value)> {
    vec![
        ("type", json!("stdio")),
        ("command", json!(command)),
        ("args", json!([])),
    ]
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn env(vars: &[(&str, &str)]) -> EnvLayer {
        EnvLayer::from_pairs(vars)
    }

    #[test]
    fn config_paths_follow_each_clients_own_variables() -> anyhow::Result<()> {
        let plain = env(&[("HOME", "/h")]);
        let paths = |env: &EnvLayer| -> Result<Vec<PathBuf>, String> {
            [
                Client::Openclaw,
                Client::Copilot,
                Client::ClaudeCode,
                Client::Codex,
                Client::Cursor,
            ]
            .iter()
            .map(|c| c.config_path(env))
            .collect()
        };
        assert_eq!(
            paths(&plain).map_err(anyhow::Error::msg)?,
            [
                "/h/.openclaw/openclaw.json",
                "/h/.copilot/mcp-config.json",
                "/h/.claude.json",
                "/h/.codex/config.toml",
                "/h/.cursor/mcp.json",
            ]
            .map(PathBuf::from)
        );
        let moved = env(&[
            ("HOME", "/h"),
            ("OPENCLAW_PROFILE", "work"),
            ("COPILOT_HOME", "/c"),
            ("CLAUDE_CONFIG_DIR", "/cl"),
            ("CODEX_HOME", "/x"),
        ]);
        assert_eq!(
            paths(&moved).map_err(anyhow::Error::msg)?,
            [
                "/h/.openclaw-work/openclaw.json",
                "/c/mcp-config.json",
                "/cl/.claude.json",
                "/x/config.toml",
                "/h/.cursor/mcp.json",
            ]
            .map(PathBuf::from)
        );
        let explicit = env(&[
            ("OPENCLAW_HOME", "/o"),
            ("OPENCLAW_CONFIG_PATH", "~/oc.json"),
        ]);
        assert_eq!(
            Client::Openclaw
                .config_path(&explicit)
                .map_err(anyhow::Error::msg)?,
            PathBuf::from("/o/oc.json")
        );
        Ok(())
    }
}
