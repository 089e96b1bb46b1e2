//! A client's own `mcp` command line, preferred over editing its file when it is on PATH: the
//! client then writes its configuration itself (OpenClaw's `mcp add` even probes the server
//! first). We still read the file to decide what to run, so a client already in sync runs
//! nothing at all.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use bridge_core::config::EnvLayer;
use serde_json::Value;

use super::client::Client;
use super::json_doc::{self, Entry};

/// How long one client command may take: an `openclaw` command starts in 6–14 s and `mcp add`
/// probes the server (connecting within 30 s) before saving.
const CLI_TIMEOUT: Duration = Duration::from_mins(2);
/// The largest CLI output quoted in an error.
const QUOTED_OUTPUT_CHARS: usize = 2000;

/// The clients whose CLI we drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cli {
    /// `openclaw mcp add|set|unset`.
    Openclaw,
    /// `claude mcp add-json|remove --scope user`.
    Claude,
    /// `copilot mcp add|remove`.
    Copilot,
}

impl Cli {
    /// The CLI of `client`, when it has one we drive.
    pub fn of(client: Client) -> Option<Self> {
        match client {
            Client::Openclaw => Some(Self::Openclaw),
            Client::ClaudeCode => Some(Self::Claude),
            Client::Copilot => Some(Self::Copilot),
            // Codex's `mcp add` cannot set `tool_timeout_sec`; Cursor has no such command and
            // VS Code's `--add-mcp` cannot remove: their files are edited directly.
            Client::Codex | Client::Cursor | Client::Vscode => None,
        }
    }

    /// The program's name on PATH.
    pub fn program(self) -> &'static str {
        match self {
            Self::Openclaw => "openclaw",
            Self::Claude => "claude",
            Self::Copilot => "copilot",
        }
    }

    /// Finds the program on `env`'s PATH.
    pub fn locate(self, env: &EnvLayer) -> Option<PathBuf> {
        let path = env.get("PATH")?;
        std::env::split_paths(path)
            .map(|dir| dir.join(self.program()))
            .find(|candidate| is_executable(candidate))
    }

    /// The commands that add `entry` (absent so far).
    pub fn add(self, entry: &Entry) -> Vec<Vec<String>> {
        let command = field_str(entry, "command");
        match self {
            Self::Openclaw => {
                let mut args = words(&["mcp", "add", entry.name, "--command", &command]);
                if let Some(ms) = entry
                    .fields
                    .iter()
                    .find(|(k, _)| *k == "requestTimeoutMs")
                    .and_then(|(_, v)| v.as_u64())
                {
                    args.extend(words(&["--timeout", &(ms / 1000).to_string()]));
                }
                let env = entry.fields.iter().find(|(k, _)| *k == "env");
                if let Some((_, Value::Object(env))) = env {
                    for (key, value) in env {
                        let value = value
                            .as_str()
                            .map_or_else(|| value.to_string(), str::to_owned);
                        args.extend(words(&["--env", &format!("{key}={value}")]));
                    }
                }
                vec![args]
            }
            Self::Claude => vec![claude_add(entry.name, &new_entry(entry))],
            Self::Copilot => vec![copilot_add(entry.name, &command, &Value::Null)],
        }
    }

    /// The commands that bring the existing `current` entry in line with `entry`, keeping the
    /// user's other fields.
    pub fn update(self, entry: &Entry, current: &Value) -> Vec<Vec<String>> {
        let merged = json_doc::merged(current, entry);
        match self {
            Self::Openclaw => vec![words(&["mcp", "set", entry.name, &merged.to_string()])],
            // Neither CLI updates in place: remove, then add again with the kept fields.
            Self::Claude => vec![self.remove(entry.name), claude_add(entry.name, &merged)],
            Self::Copilot => vec![
                self.remove(entry.name),
                copilot_add(entry.name, &field_str(entry, "command"), &current["env"]),
            ],
        }
    }

    /// The command that removes the server `name`.
    pub fn remove(self, name: &str) -> Vec<String> {
        match self {
            Self::Openclaw => words(&["mcp", "unset", name]),
            Self::Claude => words(&["mcp", "remove", "--scope", "user", name]),
            Self::Copilot => words(&["mcp", "remove", name]),
        }
    }
}

fn words(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| (*a).to_owned()).collect()
}

fn field_str(entry: &Entry, field: &str) -> String {
    entry
        .fields
        .iter()
        .find(|(k, _)| *k == field)
        .and_then(|(_, v)| v.as_str())
        .unwrap_or_default()
        .to_owned()
}

fn new_entry(entry: &Entry) -> Value {
    Value::Object(
        entry
            .fields
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
    )
}

fn claude_add(name: &str, entry: &Value) -> Vec<String> {
    words(&[
        "mcp",
        "add-json",
        "--scope",
        "user",
        name,
        &entry.to_string(),
    ])
}

/// `copilot mcp add NAME [--env K=V]… -- COMMAND` (our servers take no arguments).
fn copilot_add(name: &str, command: &str, env: &Value) -> Vec<String> {
    let mut args = words(&["mcp", "add", name]);
    if let Some(env) = env.as_object() {
        for (key, value) in env {
            args.push("--env".to_owned());
            args.push(format!("{key}={}", value.as_str().unwrap_or_default()));
        }
    }
    args.extend(words(&["--", command]));
    args
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Arguments quoted for a shell where they need it, for showing a command.
pub fn shell_words(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:@".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs one client command with a bound, its output captured (and quoted when it fails).
pub fn run(program: &Path, args: &[String]) -> anyhow::Result<()> {
    // The user's own CLI gets the user's whole environment (its config location, its profile),
    // not the allowlist the agent's children get.
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let output =
        bridge_mcp::block_on(async { tokio::time::timeout(CLI_TIMEOUT, command.output()).await })?;
    let shown = || format!("{} {}", program.display(), shell_words(args));
    let output = match output {
        Ok(result) => result.with_context(|| format!("cannot run {}", shown()))?,
        Err(_) => anyhow::bail!(
            "{} did not finish within {} s",
            shown(),
            CLI_TIMEOUT.as_secs()
        ),
    };
    if !output.status.success() {
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        let said: String = said.trim().chars().take(QUOTED_OUTPUT_CHARS).collect();
        anyhow::bail!("{} failed ({}): {said}", shown(), output.status);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn bridge() -> Entry {
        Entry {
            name: "copilot-bridge",
            fields: vec![
                ("command", json!("/opt/bin/copilot-bridge")),
                ("requestTimeoutMs", json!(1_800_000)),
            ],
        }
    }

    #[test]
    fn openclaw_adds_with_its_timeout_and_updates_keeping_the_users_fields() {
        assert_eq!(
            Cli::Openclaw.add(&bridge()),
            vec![words(&[
                "mcp",
                "add",
                "copilot-bridge",
                "--command",
                "/opt/bin/copilot-bridge",
                "--timeout",
                "1800",
            ])]
        );
        let current = json!({"command": "/old", "env": {"A": "1"}});
        let update = Cli::Openclaw.update(&bridge(), &current);
        let set: Value = serde_json::from_str(&update[0][3]).unwrap_or_default();
        assert_eq!(
            set,
            json!({"command": "/opt/bin/copilot-bridge", "env": {"A": "1"}, "requestTimeoutMs": 1_800_000})
        );
    }

    #[test]
    fn copilot_re_adds_an_outdated_entry_with_its_environment() {
        let entry = Entry {
            name: "openclaw-memory",
            fields: vec![("command", json!("/opt/bin/openclaw-memory"))],
        };
        let current = json!({"command": "/old", "env": {"OPENCLAW_WORKSPACE_DIR": "/w"}});
        assert_eq!(
            Cli::Copilot.update(&entry, &current),
            vec![
                words(&["mcp", "remove", "openclaw-memory"]),
                words(&[
                    "mcp",
                    "add",
                    "openclaw-memory",
                    "--env",
                    "OPENCLAW_WORKSPACE_DIR=/w",
                    "--",
                    "/opt/bin/openclaw-memory",
                ]),
            ]
        );
    }

    #[test]
    fn shell_words_quotes_what_a_shell_would_split() {
        assert_eq!(
            shell_words(&words(&["mcp", "set", "x", "{\"a\": 'b'}"])),
            r#"mcp set x '{"a": '\''b'\''}'"#
        );
    }
}
