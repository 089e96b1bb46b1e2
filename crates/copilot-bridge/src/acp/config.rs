//! How to start and talk to an agent, as a plain value ([`AgentConfig`]), and how to build one
//! for the real Copilot CLI from the bridge's configuration ([`CopilotLaunch`]): the explicit
//! environment (tokens, BYOK mapped onto the CLI's own variables, depth + 1), the flags, and the
//! `openclaw-memory` MCP server every session gets.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bridge_core::config::{Config, Secret};
use bridge_core::depth::{CallDepth, DEPTH_ENV};
use serde_json::{Map, Value, json};

use crate::acp::error::AcpError;

/// Name under which the memory server is registered with the agent; the CLI shows its tools
/// as `openclaw-memory-<tool>`.
pub const MEMORY_SERVER_NAME: &str = "openclaw-memory";

/// Timeouts of the ACP client. Every request we send has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// `initialize`: the CLI's first one takes 1–5 s cold, more on a loaded machine.
    pub initialize: Duration,
    /// Session calls other than prompts (`session/new|load|list|close|set_*`).
    pub request: Duration,
    /// A prompt turn, unless the call gives its own.
    pub prompt: Duration,
    /// After `session/cancel`, how long to wait for the turn's answer before giving up on it.
    pub cancel_grace: Duration,
    /// At shutdown, how long each step (exit on EOF, SIGTERM) may take before the next.
    pub shutdown_grace: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            initialize: Duration::from_mins(1),
            request: Duration::from_secs(30),
            prompt: Duration::from_millis(bridge_core::config::DEFAULT_TIMEOUT_MS),
            // The CLI answers a cancel within milliseconds; five seconds covers a busy machine.
            cancel_grace: Duration::from_secs(5),
            shutdown_grace: Duration::from_secs(2),
        }
    }
}

/// How often the supervisor restarts a crashing agent before giving up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestartBudget {
    /// Restarts allowed within the window.
    pub max_restarts: usize,
    /// The window.
    pub window: Duration,
}

impl Default for RestartBudget {
    fn default() -> Self {
        // Five restarts a minute absorbs occasional crashes but stops a crash loop quickly.
        Self {
            max_restarts: 5,
            window: Duration::from_mins(1),
        }
    }
}

/// An MCP server offered to every session over stdio in `session/new` and `session/load`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerConfig {
    /// Its name (tool names are prefixed with it).
    pub name: String,
    /// The executable.
    pub command: PathBuf,
    /// Arguments.
    pub args: Vec<String>,
    /// Environment variables.
    pub env: Vec<(String, String)>,
}

/// Everything needed to start and drive one agent. Nothing here is read from the process
/// environment: the caller fills it in.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// A short name for logs, e.g. `copilot`.
    pub name: String,
    /// The agent executable.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Its complete environment; nothing else is inherited.
    pub env: Vec<(OsString, OsString)>,
    /// The process's working directory (sessions choose their own).
    pub cwd: PathBuf,
    /// Timeouts.
    pub timeouts: Timeouts,
    /// Restart budget of the supervisor.
    pub restart: RestartBudget,
    /// MCP servers listed in `session/new` and `session/load` (the Copilot CLI drops stdio
    /// servers given there, so it gets them from `--additional-mcp-config` as well).
    pub session_mcp_servers: Vec<McpServerConfig>,
}

impl AgentConfig {
    /// A config for `program` with `args`, the given environment and default timeouts.
    pub fn new(
        name: impl Into<String>,
        program: impl Into<PathBuf>,
        args: impl IntoIterator<Item = impl Into<OsString>>,
        env: impl IntoIterator<Item = (impl Into<OsString>, impl Into<OsString>)>,
        cwd: impl Into<PathBuf>,
    ) -> Self {
        Self {
            name: name.into(),
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: env.into_iter().map(|(k, v)| (k.into(), v.into())).collect(),
            cwd: cwd.into(),
            timeouts: Timeouts::default(),
            restart: RestartBudget::default(),
            session_mcp_servers: Vec::new(),
        }
    }
}

/// The `openclaw-memory` server to give every session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryLaunch {
    /// The `openclaw-memory` executable.
    pub program: PathBuf,
    /// Extra arguments.
    pub args: Vec<String>,
}

/// The memory server's executable name.
const MEMORY_PROGRAM: &str = "openclaw-memory";

impl MemoryLaunch {
    /// Finds `openclaw-memory`: beside the running `copilot-bridge` executable (both are built
    /// and installed side by side), then on `PATH`, then at `OPENCLAW_MEMORY_BIN`. When none
    /// exists, the error says where it looked and how to fix it.
    pub fn locate(env: &bridge_core::config::EnvLayer) -> Result<Self, MemoryNotFound> {
        let mut looked = Vec::new();
        let mut candidates = Vec::new();
        match std::env::current_exe() {
            Ok(exe) => candidates.push(
                exe.parent()
                    .unwrap_or_else(|| Path::new("."))
                    .join(MEMORY_PROGRAM),
            ),
            Err(err) => looked.push(format!("beside copilot-bridge (unknown: {err})")),
        }
        let on_path: Vec<PathBuf> = env
            .get("PATH")
            .map(|path| {
                std::env::split_paths(path)
                    .map(|dir| dir.join(MEMORY_PROGRAM))
                    .collect()
            })
            .unwrap_or_default();
        if on_path.is_empty() {
            looked.push("PATH (not set)".to_owned());
        }
        candidates.extend(on_path);
        match env.get("OPENCLAW_MEMORY_BIN").filter(|v| !v.is_empty()) {
            Some(bin) => candidates.push(PathBuf::from(bin)),
            None => looked.push("OPENCLAW_MEMORY_BIN (not set)".to_owned()),
        }
        for candidate in candidates {
            if candidate.is_file() {
                return Ok(Self {
                    program: candidate,
                    args: Vec::new(),
                });
            }
            looked.push(candidate.display().to_string());
        }
        Err(MemoryNotFound { looked })
    }
}

/// `openclaw-memory` is nowhere the bridge looks.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "openclaw-memory was not found (looked in: {}); build both servers with `cargo build \
     --release --bins` and keep them side by side, put openclaw-memory on PATH, or set \
     OPENCLAW_MEMORY_BIN",
    looked.join("; ")
)]
pub struct MemoryNotFound {
    /// Every place looked at, in order.
    pub looked: Vec<String>,
}

/// Variables passed to the CLI as they are, when set: what a node program needs to run
/// (locale, temp dir, proxies, CA bundles) and the CLI's own settings a user may have set
/// directly.
const PASSTHROUGH: &[&str] = &[
    "LANG",
    "LC_ALL",
    "TMPDIR",
    "TERM",
    "USER",
    "XDG_CONFIG_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "COPILOT_HOME",
    "COPILOT_OFFLINE",
    "COPILOT_MODEL",
];
/// Variable families passed through: the CLI's own BYOK settings (a user may set them
/// directly) and OpenClaw's settings (for the memory server).
const PASSTHROUGH_PREFIXES: &[&str] = &["COPILOT_PROVIDER_", "OPENCLAW_"];

/// How to launch the real Copilot CLI; [`CopilotLaunch::build`] turns it into an
/// [`AgentConfig`].
#[derive(Debug, Clone, Default)]
pub struct CopilotLaunch {
    /// The CLI executable (`COPILOT_CLI_PATH`); `None` means `copilot` on `PATH`.
    pub program: Option<PathBuf>,
    /// `PATH`: searched for the CLI and passed to it.
    pub path: Option<OsString>,
    /// `HOME`.
    pub home: Option<PathBuf>,
    /// A GitHub token with Copilot access, passed as `COPILOT_GITHUB_TOKEN`.
    pub github_token: Option<Secret>,
    /// The CLI's BYOK variables (`COPILOT_PROVIDER_*`, `COPILOT_MODEL`), already mapped.
    pub byok_env: Vec<(String, String)>,
    /// The model for sessions (`--model`), when not using BYOK.
    pub model: Option<String>,
    /// `--log-dir`.
    pub log_dir: Option<PathBuf>,
    /// `--log-level`.
    pub log_level: Option<String>,
    /// Our call depth; the CLI and the memory server get one more.
    pub depth: CallDepth,
    /// Other variables to pass as they are.
    pub passthrough: Vec<(String, String)>,
    /// The memory server, if sessions get one.
    pub memory: Option<MemoryLaunch>,
    /// Where to write the MCP configuration file for the CLI (it can hold OpenClaw's gateway
    /// token, so it goes into a 0600 file rather than onto the command line).
    pub state_dir: PathBuf,
    /// The process's working directory.
    pub cwd: PathBuf,
    /// Timeouts.
    pub timeouts: Timeouts,
}

impl CopilotLaunch {
    /// Fills a launch from the bridge's configuration. `cwd` is the process's working
    /// directory; `memory` is the memory server to give every session (see
    /// [`MemoryLaunch::locate`]).
    pub fn from_config(config: &Config, cwd: PathBuf, memory: Option<MemoryLaunch>) -> Self {
        let env = &config.env;
        let mut passthrough: Vec<(String, String)> = PASSTHROUGH
            .iter()
            .filter_map(|name| env.get(name).map(|v| ((*name).to_owned(), v.to_owned())))
            .collect();
        passthrough.extend(
            env.with_prefixes(PASSTHROUGH_PREFIXES)
                .map(|(k, v)| (k.to_owned(), v.to_owned())),
        );
        let byok_env: Vec<(String, String)> = config
            .byok_cli_env()
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        // A malformed inherited depth is refused where calls are checked; here it must not turn
        // into a small one, so it counts as the deepest possible.
        let depth = CallDepth::inherited(config.inherited_depth.as_deref())
            .unwrap_or(CallDepth::new(u32::MAX));
        Self {
            program: config.cli_path.clone(),
            path: env.get("PATH").map(OsString::from),
            home: env.get("HOME").map(PathBuf::from),
            github_token: config.github_token.clone(),
            model: if config.byok.is_some() {
                None
            } else {
                config.model.clone()
            },
            byok_env,
            log_dir: None,
            log_level: Some(config.log_level.cli_value().to_owned()),
            depth,
            passthrough,
            memory,
            state_dir: config.state_dir.clone(),
            cwd,
            timeouts: Timeouts {
                prompt: Duration::from_millis(config.timeout_ms),
                ..Timeouts::default()
            },
        }
    }

    /// Resolves the program and writes the MCP configuration file.
    pub fn build(&self) -> Result<AgentConfig, AcpError> {
        let program = resolve_program(self.program.as_deref(), self.path.as_deref())?;
        let (_, child_depth) = self.depth.child_env();
        let mut env: Vec<(String, String)> = Vec::new();
        if let Some(path) = &self.path {
            env.push(("PATH".into(), path.to_string_lossy().into_owned()));
        }
        if let Some(home) = &self.home {
            env.push(("HOME".into(), home.display().to_string()));
        }
        env.extend(self.passthrough.iter().cloned());
        // Ours win over passed-through values of the same name.
        for (name, value) in &self.byok_env {
            env.retain(|(k, _)| k != name);
            env.push((name.clone(), value.clone()));
        }
        if let Some(token) = &self.github_token {
            env.push(("COPILOT_GITHUB_TOKEN".into(), token.expose().to_owned()));
        }
        env.retain(|(k, _)| k != DEPTH_ENV);
        env.push((DEPTH_ENV.into(), child_depth.clone()));

        let mut args: Vec<OsString> = ["--acp", "--stdio", "--no-auto-update"]
            .into_iter()
            .map(OsString::from)
            .collect();
        if let Some(model) = &self.model {
            args.extend(["--model".into(), model.into()]);
        }
        if let Some(dir) = &self.log_dir {
            args.extend(["--log-dir".into(), dir.as_os_str().to_owned()]);
        }
        if let Some(level) = &self.log_level {
            args.extend(["--log-level".into(), level.into()]);
        }
        let mut session_mcp_servers = Vec::new();
        if let Some(memory) = &self.memory {
            let server = self.memory_server(memory, &child_depth);
            let file = write_mcp_config(&self.state_dir, &server)?;
            let mut flag = OsString::from("@");
            flag.push(file.as_os_str());
            args.extend(["--additional-mcp-config".into(), flag]);
            session_mcp_servers.push(server);
        }
        Ok(AgentConfig {
            name: "copilot".into(),
            program,
            args,
            env: env
                .into_iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v)))
                .collect(),
            cwd: self.cwd.clone(),
            timeouts: self.timeouts,
            restart: RestartBudget::default(),
            session_mcp_servers,
        })
    }

    fn memory_server(&self, memory: &MemoryLaunch, child_depth: &str) -> McpServerConfig {
        let mut env: Vec<(String, String)> = Vec::new();
        if let Some(path) = &self.path {
            env.push(("PATH".into(), path.to_string_lossy().into_owned()));
        }
        if let Some(home) = &self.home {
            env.push(("HOME".into(), home.display().to_string()));
        }
        // OpenClaw's settings, and where the memory server keeps its index and finds its
        // embedding model, so it sees what it would see started by hand.
        env.extend(
            self.passthrough
                .iter()
                .filter(|(k, _)| {
                    k.starts_with("OPENCLAW_") || k == "XDG_STATE_HOME" || k == "XDG_DATA_HOME"
                })
                .cloned(),
        );
        env.push((DEPTH_ENV.into(), child_depth.to_owned()));
        McpServerConfig {
            name: MEMORY_SERVER_NAME.into(),
            command: memory.program.clone(),
            args: memory.args.clone(),
            env,
        }
    }
}

/// The `--additional-mcp-config` document for one stdio server.
pub(crate) fn mcp_config_json(server: &McpServerConfig) -> Value {
    let env: Map<String, Value> = server
        .env
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    json!({"mcpServers": {server.name.clone(): {
        "type": "local",
        "command": server.command,
        "args": server.args,
        "env": env,
        "tools": ["*"],
    }}})
}

fn write_mcp_config(dir: &Path, server: &McpServerConfig) -> Result<PathBuf, AcpError> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let io_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| AcpError::Io { path, source }
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io_error(dir))?;
    // One file per bridge process: two bridges sharing a state dir must not race on it.
    let path = dir.join(format!("copilot-mcp-config-{}.json", std::process::id()));
    let tmp = path.with_extension("json.tmp");
    let body = serde_json::to_vec_pretty(&mcp_config_json(server)).unwrap_or_default();
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(io_error(&tmp))?;
    file.write_all(&body).map_err(io_error(&tmp))?;
    file.sync_all().map_err(io_error(&tmp))?;
    std::fs::rename(&tmp, &path).map_err(io_error(&path))?;
    Ok(path)
}

/// Finds the CLI: an explicit path as given (a bare name is looked up on `path`), else
/// `copilot` on `path`.
/// Finds the CLI: `explicit` when it is a path, else that name (default `copilot`) on `path`.
pub fn resolve_program(
    explicit: Option<&Path>,
    path: Option<&std::ffi::OsStr>,
) -> Result<PathBuf, AcpError> {
    let wanted = explicit.unwrap_or_else(|| Path::new("copilot"));
    if wanted.components().count() > 1 || wanted.is_absolute() {
        return if wanted.is_file() {
            Ok(wanted.to_path_buf())
        } else {
            Err(AcpError::NotFound {
                program: wanted.display().to_string(),
            })
        };
    }
    path.into_iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(wanted))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| AcpError::NotFound {
            program: wanted.display().to_string(),
        })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memory_server_is_found_on_path_then_by_variable_or_said_missing() -> anyhow::Result<()> {
        use bridge_core::config::EnvLayer;
        let dir = tempfile::TempDir::new()?;
        let (on_path, elsewhere) = (dir.path().join("bin"), dir.path().join("other"));
        std::fs::create_dir_all(&on_path)?;
        std::fs::create_dir_all(&elsewhere)?;
        let env = |vars: &[(&str, &Path)]| {
            EnvLayer::from_maps(
                vars.iter()
                    .map(|(k, v)| ((*k).to_owned(), v.display().to_string())),
                [],
            )
        };
        // Nothing anywhere (the test binary has no openclaw-memory beside it).
        let missing = MemoryLaunch::locate(&env(&[("PATH", &on_path)]));
        let err = missing.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("OPENCLAW_MEMORY_BIN (not set)"), "{err}");
        assert!(err.contains("cargo build --release --bins"), "{err}");
        // By variable.
        let variable = elsewhere.join("openclaw-memory");
        std::fs::write(&variable, "")?;
        let found = MemoryLaunch::locate(&env(&[
            ("PATH", &on_path),
            ("OPENCLAW_MEMORY_BIN", &variable),
        ]))?;
        assert_eq!(found.program, variable);
        // PATH comes before the variable.
        std::fs::write(on_path.join("openclaw-memory"), "")?;
        let found = MemoryLaunch::locate(&env(&[
            ("PATH", &on_path),
            ("OPENCLAW_MEMORY_BIN", &variable),
        ]))?;
        assert_eq!(found.program, on_path.join("openclaw-memory"));
        Ok(())
    }
    use bridge_core::config::{EnvLayer, Overrides};
    use pretty_assertions::assert_eq;

    fn config(vars: &[(&str, &str)]) -> anyhow::Result<Config> {
        let env = EnvLayer::from_maps(
            vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
            [],
        );
        Ok(Config::resolve(Overrides::default(), env)?)
    }

    fn env_of(agent: &AgentConfig) -> Vec<(String, String)> {
        agent
            .env
            .iter()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.to_string_lossy().into_owned(),
                )
            })
            .collect()
    }

    fn get<'a>(env: &'a [(String, String)], name: &str) -> Option<&'a str> {
        env.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    fn fake_cli(dir: &Path) -> anyhow::Result<PathBuf> {
        use std::os::unix::fs::PermissionsExt;
        let program = dir.join("copilot");
        std::fs::write(&program, "#!/bin/sh\n")?;
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755))?;
        Ok(program)
    }

    #[test]
    fn ollama_byok_becomes_the_cli_openai_provider() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let program = fake_cli(dir.path())?;
        let cfg = config(&[
            ("HOME", "/home/u"),
            ("PATH", &dir.path().display().to_string()),
            ("COPILOT_BYOK_PROVIDER", "ollama"),
            ("COPILOT_BYOK_BASE_URL", "http://127.0.0.1:11434/v1"),
            ("COPILOT_BYOK_MODEL", "qwen3"),
            ("SECRET_UNRELATED", "do-not-pass"),
        ])?;
        let agent = CopilotLaunch::from_config(&cfg, dir.path().into(), None).build()?;
        assert_eq!(agent.program, program);
        let env = env_of(&agent);
        assert_eq!(get(&env, "COPILOT_PROVIDER_TYPE"), Some("openai"));
        assert_eq!(
            get(&env, "COPILOT_PROVIDER_BASE_URL"),
            Some("http://127.0.0.1:11434/v1")
        );
        assert_eq!(get(&env, "COPILOT_MODEL"), Some("qwen3"));
        assert_eq!(get(&env, "HOME"), Some("/home/u"));
        assert_eq!(get(&env, DEPTH_ENV), Some("1"));
        assert_eq!(get(&env, "SECRET_UNRELATED"), None);
        let args: Vec<String> = agent
            .args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(&args[..3], ["--acp", "--stdio", "--no-auto-update"]);
        assert!(!args.contains(&"--model".to_owned()), "{args:?}");
        Ok(())
    }

    #[test]
    fn the_cli_own_settings_pass_through_and_bridge_byok_wins() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        fake_cli(dir.path())?;
        let cfg = config(&[
            ("HOME", "/home/u"),
            ("PATH", &dir.path().display().to_string()),
            ("COPILOT_PROVIDER_BASE_URL", "http://set-directly/v1"),
            ("COPILOT_PROVIDER_WIRE_API", "responses"),
            ("HTTPS_PROXY", "http://proxy:3128"),
            ("COPILOT_HOME", "/data/copilot"),
            ("COPILOT_BYOK_BASE_URL", "http://through-the-bridge/v1"),
            ("AWS_SECRET_ACCESS_KEY", "do-not-pass"),
        ])?;
        let agent = CopilotLaunch::from_config(&cfg, dir.path().into(), None).build()?;
        let env = env_of(&agent);
        assert_eq!(
            get(&env, "COPILOT_PROVIDER_BASE_URL"),
            Some("http://through-the-bridge/v1")
        );
        let base_urls = env.iter().filter(|(k, _)| k == "COPILOT_PROVIDER_BASE_URL");
        assert_eq!(base_urls.count(), 1, "{env:?}");
        assert_eq!(get(&env, "COPILOT_PROVIDER_WIRE_API"), Some("responses"));
        assert_eq!(get(&env, "HTTPS_PROXY"), Some("http://proxy:3128"));
        assert_eq!(get(&env, "COPILOT_HOME"), Some("/data/copilot"));
        assert_eq!(get(&env, "AWS_SECRET_ACCESS_KEY"), None);
        Ok(())
    }

    #[test]
    fn the_token_depth_and_memory_server_reach_the_cli() -> anyhow::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir()?;
        fake_cli(dir.path())?;
        let cfg = config(&[
            ("PATH", &dir.path().display().to_string()),
            ("GH_TOKEN", "ghp_example"),
            (DEPTH_ENV, "1"),
            ("OPENCLAW_WORKSPACE_DIR", "/data/openclaw"),
            ("XDG_DATA_HOME", "/data/xdg"),
            ("LANG", "C.UTF-8"),
            (
                "COPILOT_BRIDGE_STATE_DIR",
                &dir.path().join("state").display().to_string(),
            ),
        ])?;
        let memory = MemoryLaunch {
            program: PathBuf::from("/opt/bridge/openclaw-memory"),
            args: vec![],
        };
        let agent = CopilotLaunch::from_config(&cfg, dir.path().into(), Some(memory)).build()?;
        let env = env_of(&agent);
        assert_eq!(get(&env, "COPILOT_GITHUB_TOKEN"), Some("ghp_example"));
        assert_eq!(get(&env, DEPTH_ENV), Some("2"));
        let flag = agent
            .args
            .iter()
            .position(|a| a == "--additional-mcp-config")
            .expect("memory flag");
        let file = agent.args[flag + 1].to_string_lossy();
        let file = file.strip_prefix('@').expect("a file reference");
        let written: Value = serde_json::from_str(&std::fs::read_to_string(file)?)?;
        let server = &written["mcpServers"][MEMORY_SERVER_NAME];
        assert_eq!(server["command"], json!("/opt/bridge/openclaw-memory"));
        assert_eq!(server["type"], json!("local"));
        assert_eq!(server["env"][DEPTH_ENV], json!("2"));
        assert_eq!(
            server["env"]["OPENCLAW_WORKSPACE_DIR"],
            json!("/data/openclaw")
        );
        // Where the memory server finds its embedding model; not the CLI's own settings.
        assert_eq!(server["env"]["XDG_DATA_HOME"], json!("/data/xdg"));
        assert!(server["env"].get("LANG").is_none(), "{server}");
        assert_eq!(std::fs::metadata(file)?.permissions().mode() & 0o777, 0o600);
        assert_eq!(agent.session_mcp_servers[0].name, MEMORY_SERVER_NAME);
        Ok(())
    }

    #[test]
    fn a_missing_cli_names_the_fix() -> anyhow::Result<()> {
        let cfg = config(&[("PATH", "/nonexistent"), ("HOME", "/home/u")])?;
        let err = CopilotLaunch::from_config(&cfg, "/".into(), None)
            .build()
            .expect_err("no CLI on PATH");
        assert!(err.to_string().contains("COPILOT_CLI_PATH"), "{err}");
        Ok(())
    }
}
