//! Finding OpenClaw's workspace (where its memory lives) the way OpenClaw itself does, plus the
//! seed design's legacy layout as a last resort. Discovery only looks: it stats a few paths and
//! reads `openclaw.json`; it never creates anything.

use std::fmt;
use std::path::{Path, PathBuf};

use bridge_core::config::EnvLayer;
use serde::Deserialize;

/// OpenClaw's default agent id, whose `agents.entries.<id>.workspace` counts when no default
/// workspace is configured.
const DEFAULT_AGENT_ID: &str = "main";
/// The config file name inside OpenClaw's state directory.
const CONFIG_FILE: &str = "openclaw.json";
/// Largest `openclaw.json` we parse: real ones are a few KiB; anything bigger is not a config.
const MAX_CONFIG_BYTES: u64 = 4 * 1024 * 1024;

/// Where a workspace candidate came from, in OpenClaw's order of precedence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The `--workspace` flag.
    Flag,
    /// `OPENCLAW_WORKSPACE_DIR`.
    WorkspaceEnv,
    /// `agents.defaults.workspace` (or the default agent's entry) in this config file.
    Config(PathBuf),
    /// `$OPENCLAW_STATE_DIR/workspace`, `~/.openclaw-<profile>/workspace` or
    /// `~/.openclaw/workspace`.
    StateDir,
    /// The seed design's `~/.openclaw/memory/*.md` and `~/.openclaw/USER.md`.
    Legacy,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Flag => f.write_str("--workspace"),
            Self::WorkspaceEnv => f.write_str("OPENCLAW_WORKSPACE_DIR"),
            Self::Config(path) => write!(f, "agents.defaults.workspace in {}", path.display()),
            Self::StateDir => f.write_str("OpenClaw's default workspace"),
            Self::Legacy => f.write_str("legacy ~/.openclaw layout"),
        }
    }
}

/// The workspace the tools read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    /// The directory that holds `MEMORY.md`, `USER.md` and `memory/`.
    pub root: PathBuf,
    /// Why this directory was chosen.
    pub source: Source,
}

/// The outcome of discovery: the workspace (if any) and every place that was considered, so a
/// tool can say where it looked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovery {
    /// The chosen workspace; `None` when nothing usable exists.
    pub workspace: Option<Workspace>,
    /// Every candidate in the order considered, with a note on why it was not used.
    pub looked_in: Vec<String>,
}

impl Discovery {
    /// A one-line explanation of where discovery looked, for "nothing found" messages.
    pub fn looked_in_summary(&self) -> String {
        self.looked_in.join("; ")
    }
}

/// Inputs to discovery: the `--workspace` flag and the environment (never the process
/// environment directly, so tests can pass explicit maps).
#[derive(Debug, Clone, Copy)]
pub struct DiscoveryInput<'a> {
    /// The `--workspace` flag.
    pub flag: Option<&'a Path>,
    /// The environment layer.
    pub env: &'a EnvLayer,
}

/// Finds the workspace. Explicit choices (`--workspace`, `OPENCLAW_WORKSPACE_DIR`, the config
/// file) are taken even when the directory is missing, so the tools report the user's own
/// setting instead of silently reading something else; the implicit default falls back to the
/// legacy layout when it does not exist.
pub fn discover(input: DiscoveryInput<'_>) -> Discovery {
    let env = input.env;
    let mut looked_in = Vec::new();
    let home = env
        .get("OPENCLAW_HOME")
        .or_else(|| env.get("HOME"))
        .map(PathBuf::from);

    if let Some(flag) = input.flag {
        return explicit(expand_home(flag, home.as_deref()), Source::Flag, looked_in);
    }
    if let Some(dir) = env.get("OPENCLAW_WORKSPACE_DIR") {
        return explicit(
            expand_home(Path::new(dir), home.as_deref()),
            Source::WorkspaceEnv,
            looked_in,
        );
    }

    let state_dir = state_dir(env, home.as_deref());
    let config_path = env
        .get("OPENCLAW_CONFIG_PATH")
        .map(|p| expand_home(Path::new(p), home.as_deref()))
        .or_else(|| state_dir.as_ref().map(|dir| dir.join(CONFIG_FILE)));
    if let Some(config_path) = config_path {
        match configured_workspace(&config_path) {
            Ok(Some(dir)) => {
                return explicit(
                    expand_home(&dir, home.as_deref()),
                    Source::Config(config_path),
                    looked_in,
                );
            }
            Ok(None) => looked_in.push(format!(
                "{} (no agents.defaults.workspace)",
                config_path.display()
            )),
            Err(reason) => looked_in.push(format!("{} ({reason})", config_path.display())),
        }
    }

    let Some(state_dir) = state_dir else {
        looked_in.push("HOME and OPENCLAW_HOME are unset, so no default location".to_owned());
        return Discovery {
            workspace: None,
            looked_in,
        };
    };
    let default = state_dir.join("workspace");
    if default.is_dir() {
        return found(default, Source::StateDir, looked_in);
    }
    looked_in.push(format!("{} (missing)", default.display()));

    // The seed design kept notes in ~/.openclaw/memory/ and preferences in ~/.openclaw/USER.md.
    if state_dir.join("memory").is_dir() || state_dir.join("USER.md").is_file() {
        return found(state_dir, Source::Legacy, looked_in);
    }
    looked_in.push(format!(
        "{} and {} (missing)",
        state_dir.join("memory").display(),
        state_dir.join("USER.md").display()
    ));
    Discovery {
        workspace: None,
        looked_in,
    }
}

fn explicit(root: PathBuf, source: Source, mut looked_in: Vec<String>) -> Discovery {
    if root.is_dir() {
        return found(root, source, looked_in);
    }
    looked_in.push(format!("{} from {source} (missing)", root.display()));
    Discovery {
        workspace: None,
        looked_in,
    }
}

fn found(root: PathBuf, source: Source, mut looked_in: Vec<String>) -> Discovery {
    looked_in.push(format!("{} from {source}", root.display()));
    Discovery {
        workspace: Some(Workspace { root, source }),
        looked_in,
    }
}

/// OpenClaw's state directory: `OPENCLAW_STATE_DIR`, else `~/.openclaw-<profile>` for a
/// non-default `OPENCLAW_PROFILE`, else `~/.openclaw` (with `OPENCLAW_HOME` standing in for
/// `HOME`).
fn state_dir(env: &EnvLayer, home: Option<&Path>) -> Option<PathBuf> {
    if let Some(dir) = env.get("OPENCLAW_STATE_DIR") {
        return Some(expand_home(Path::new(dir), home));
    }
    let home = home?;
    match env.get("OPENCLAW_PROFILE").map(str::trim) {
        Some(profile) if !profile.is_empty() && profile != "default" => {
            Some(home.join(format!(".openclaw-{profile}")))
        }
        _ => Some(home.join(".openclaw")),
    }
}

/// Replaces a leading `~` with `home`, as OpenClaw does for paths in its config.
fn expand_home(path: &Path, home: Option<&Path>) -> PathBuf {
    let Some(home) = home else {
        return path.to_path_buf();
    };
    match path.strip_prefix("~") {
        Ok(rest) => home.join(rest),
        Err(_) => path.to_path_buf(),
    }
}

/// The part of `openclaw.json` discovery reads; everything else is ignored.
#[derive(Debug, Default, Deserialize)]
struct OpenClawConfig {
    #[serde(default)]
    agents: Agents,
}

#[derive(Debug, Default, Deserialize)]
struct Agents {
    #[serde(default)]
    defaults: AgentSettings,
    #[serde(default)]
    entries: std::collections::BTreeMap<String, AgentSettings>,
}

#[derive(Debug, Default, Deserialize)]
struct AgentSettings {
    workspace: Option<String>,
}

/// The workspace set in the config file, `Ok(None)` when the file is missing or sets none, and
/// `Err(reason)` when it cannot be read or parsed.
fn configured_workspace(path: &Path) -> Result<Option<PathBuf>, String> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err.to_string()),
    };
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(format!("larger than {MAX_CONFIG_BYTES} bytes"));
    }
    let text = std::fs::read_to_string(path).map_err(|err| err.to_string())?;
    let config: OpenClawConfig =
        json5::from_str(&text).map_err(|err| format!("not valid JSON5: {err}"))?;
    let Agents {
        defaults,
        mut entries,
    } = config.agents;
    Ok(defaults
        .workspace
        .or_else(|| entries.remove(DEFAULT_AGENT_ID).and_then(|e| e.workspace))
        .filter(|w| !w.trim().is_empty())
        .map(PathBuf::from))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use tempfile::TempDir;

    use super::*;

    fn env(pairs: &[(&str, &str)]) -> EnvLayer {
        EnvLayer::from_pairs(pairs)
    }

    fn run(flag: Option<&Path>, pairs: &[(&str, &str)]) -> Discovery {
        discover(DiscoveryInput {
            flag,
            env: &env(pairs),
        })
    }

    fn mkdir(path: &Path) -> PathBuf {
        std::fs::create_dir_all(path).unwrap();
        path.to_path_buf()
    }

    fn home_str(home: &TempDir) -> &str {
        home.path().to_str().unwrap()
    }

    #[test]
    fn uses_default_workspace_under_home() {
        let home = TempDir::new().unwrap();
        let ws = mkdir(&home.path().join(".openclaw/workspace"));
        let found = run(None, &[("HOME", home_str(&home))]).workspace;
        assert_eq!(
            found,
            Some(Workspace {
                root: ws,
                source: Source::StateDir
            })
        );
    }

    #[test]
    fn flag_wins_over_every_variable() {
        let home = TempDir::new().unwrap();
        let flagged = mkdir(&home.path().join("flagged"));
        let other = mkdir(&home.path().join("other"));
        mkdir(&home.path().join(".openclaw/workspace"));
        let found = run(
            Some(&flagged),
            &[
                ("HOME", home_str(&home)),
                ("OPENCLAW_WORKSPACE_DIR", other.to_str().unwrap()),
            ],
        )
        .workspace;
        assert_eq!(
            found,
            Some(Workspace {
                root: flagged,
                source: Source::Flag
            })
        );
    }

    #[test]
    fn workspace_dir_variable_wins_over_config_and_state_dir() {
        let home = TempDir::new().unwrap();
        let chosen = mkdir(&home.path().join("chosen"));
        let state = mkdir(&home.path().join("state"));
        mkdir(&state.join("workspace"));
        std::fs::write(
            state.join("openclaw.json"),
            r#"{agents: {defaults: {workspace: "/nowhere"}}}"#,
        )
        .unwrap();
        let found = run(
            None,
            &[
                ("HOME", home_str(&home)),
                ("OPENCLAW_STATE_DIR", state.to_str().unwrap()),
                ("OPENCLAW_WORKSPACE_DIR", chosen.to_str().unwrap()),
            ],
        )
        .workspace;
        assert_eq!(
            found,
            Some(Workspace {
                root: chosen,
                source: Source::WorkspaceEnv
            })
        );
    }

    #[test]
    fn state_dir_variable_moves_the_default_workspace() {
        let home = TempDir::new().unwrap();
        mkdir(&home.path().join(".openclaw/workspace"));
        let state = mkdir(&home.path().join("elsewhere"));
        let ws = mkdir(&state.join("workspace"));
        let found = run(
            None,
            &[
                ("HOME", home_str(&home)),
                ("OPENCLAW_STATE_DIR", state.to_str().unwrap()),
            ],
        )
        .workspace;
        assert_eq!(
            found,
            Some(Workspace {
                root: ws,
                source: Source::StateDir
            })
        );
    }

    #[test]
    fn profile_selects_its_own_state_dir() {
        let home = TempDir::new().unwrap();
        mkdir(&home.path().join(".openclaw/workspace"));
        let ws = mkdir(&home.path().join(".openclaw-work/workspace"));
        let found = run(
            None,
            &[("HOME", home_str(&home)), ("OPENCLAW_PROFILE", "work")],
        )
        .workspace;
        assert_eq!(found.map(|w| w.root), Some(ws));
    }

    #[test]
    fn default_profile_means_the_plain_state_dir() {
        let home = TempDir::new().unwrap();
        let ws = mkdir(&home.path().join(".openclaw/workspace"));
        let found = run(
            None,
            &[("HOME", home_str(&home)), ("OPENCLAW_PROFILE", "default")],
        )
        .workspace;
        assert_eq!(found.map(|w| w.root), Some(ws));
    }

    #[test]
    fn openclaw_home_replaces_home() {
        let home = TempDir::new().unwrap();
        let oc_home = TempDir::new().unwrap();
        mkdir(&home.path().join(".openclaw/workspace"));
        let ws = mkdir(&oc_home.path().join(".openclaw/workspace"));
        let found = run(
            None,
            &[
                ("HOME", home_str(&home)),
                ("OPENCLAW_HOME", oc_home.path().to_str().unwrap()),
            ],
        )
        .workspace;
        assert_eq!(found.map(|w| w.root), Some(ws));
    }

    #[test]
    fn config_json5_default_workspace_wins_over_state_dir_and_expands_tilde() {
        let home = TempDir::new().unwrap();
        mkdir(&home.path().join(".openclaw/workspace"));
        let ws = mkdir(&home.path().join("notes/ws"));
        std::fs::write(
            home.path().join(".openclaw/openclaw.json"),
            "// JSON5, as OpenClaw writes it\n{\n  agents: {defaults: {workspace: '~/notes/ws',},},\n}\n",
        )
        .unwrap();
        let found = run(None, &[("HOME", home_str(&home))]).workspace;
        assert_eq!(
            found,
            Some(Workspace {
                root: ws,
                source: Source::Config(home.path().join(".openclaw/openclaw.json"))
            })
        );
    }

    #[test]
    fn config_path_variable_and_default_agent_entry_are_honoured() {
        let home = TempDir::new().unwrap();
        let ws = mkdir(&home.path().join("main-ws"));
        let config = home.path().join("custom.json");
        std::fs::write(
            &config,
            format!(
                r#"{{"agents": {{"entries": {{"main": {{"workspace": "{}"}}}}}}}}"#,
                ws.display()
            ),
        )
        .unwrap();
        let found = run(
            None,
            &[
                ("HOME", home_str(&home)),
                ("OPENCLAW_CONFIG_PATH", config.to_str().unwrap()),
            ],
        )
        .workspace;
        assert_eq!(
            found,
            Some(Workspace {
                root: ws,
                source: Source::Config(config)
            })
        );
    }

    #[test]
    fn broken_config_is_reported_and_skipped() {
        let home = TempDir::new().unwrap();
        let ws = mkdir(&home.path().join(".openclaw/workspace"));
        std::fs::write(home.path().join(".openclaw/openclaw.json"), "{agents: [}").unwrap();
        let discovery = run(None, &[("HOME", home_str(&home))]);
        assert_eq!(discovery.workspace.map(|w| w.root), Some(ws));
        assert!(
            discovery.looked_in[0].contains("not valid JSON5"),
            "{:?}",
            discovery.looked_in
        );
    }

    #[test]
    fn falls_back_to_the_legacy_layout() {
        let home = TempDir::new().unwrap();
        mkdir(&home.path().join(".openclaw/memory"));
        let found = run(None, &[("HOME", home_str(&home))]).workspace;
        assert_eq!(
            found,
            Some(Workspace {
                root: home.path().join(".openclaw"),
                source: Source::Legacy
            })
        );
    }

    #[test]
    fn legacy_user_md_alone_counts() {
        let home = TempDir::new().unwrap();
        mkdir(&home.path().join(".openclaw"));
        std::fs::write(home.path().join(".openclaw/USER.md"), "- be brief\n").unwrap();
        let found = run(None, &[("HOME", home_str(&home))]).workspace;
        assert_eq!(found.map(|w| w.source), Some(Source::Legacy));
    }

    #[test]
    fn nothing_found_lists_every_place_looked() {
        let home = TempDir::new().unwrap();
        let discovery = run(None, &[("HOME", home_str(&home))]);
        assert_eq!(discovery.workspace, None);
        let summary = discovery.looked_in_summary();
        for expected in [
            ".openclaw/openclaw.json",
            ".openclaw/workspace",
            ".openclaw/memory",
        ] {
            assert!(summary.contains(expected), "{summary}");
        }
    }

    #[test]
    fn missing_explicit_workspace_is_reported_not_replaced() {
        let home = TempDir::new().unwrap();
        mkdir(&home.path().join(".openclaw/workspace"));
        let missing = home.path().join("typo");
        let discovery = run(
            None,
            &[
                ("HOME", home_str(&home)),
                ("OPENCLAW_WORKSPACE_DIR", missing.to_str().unwrap()),
            ],
        );
        assert_eq!(discovery.workspace, None);
        assert!(
            discovery
                .looked_in_summary()
                .contains("OPENCLAW_WORKSPACE_DIR"),
            "{discovery:?}"
        );
    }

    #[test]
    fn no_home_at_all_is_explained() {
        let discovery = run(None, &[]);
        assert_eq!(discovery.workspace, None);
        assert!(discovery.looked_in_summary().contains("HOME"));
    }
}
