//! `copilot-bridge validate`: is everything wired up? Each check runs the real thing (the CLI
//! is started and asked to open a session, the memory server is spawned and listed, the
//! gateway is connected to) and reports one line with ✓ or ✗ and, on ✗, what to do about it.
//! The exit code is 0 only when every required check passed.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use bridge_core::audit::AuditLog;
use bridge_core::config::Config;
use bridge_core::policy::Policy;
use openclaw_memory::gateway::LinkState;
use openclaw_memory::workspace::{DiscoveryInput, discover};
use openclaw_memory::{Gateway, GatewaySettings};
use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use serde::Serialize;

use crate::acp::{
    AcpError, Agent, ContentBlock, CopilotLaunch, MemoryLaunch, PermissionDecider, PermissionGate,
    PromptOptions, StopReason, resolve_program,
};
use crate::global_args::GlobalArgs;

/// How long `copilot --version` may take (the CLI is a node program: a cold start takes a
/// couple of seconds).
const VERSION_TIMEOUT: Duration = Duration::from_secs(30);
/// How long starting the agent, opening and closing a session may take in all.
const AGENT_TIMEOUT: Duration = Duration::from_mins(1);
/// How long the memory server may take to start and list its tools.
const MEMORY_TIMEOUT: Duration = Duration::from_secs(20);
/// How long the gateway may take to accept our handshake.
const GATEWAY_TIMEOUT: Duration = Duration::from_secs(15);
/// How often the gateway link's state is looked at while it connects.
const GATEWAY_POLL: Duration = Duration::from_millis(50);
/// How long the `--prompt` round trip may take.
const PROMPT_TIMEOUT: Duration = Duration::from_mins(2);
/// The round-trip prompt: short, and answerable by any model.
const ROUND_TRIP_PROMPT: &str = "Reply with the single word: pong";
/// The tools the memory server must offer.
const MEMORY_TOOLS: [&str; 3] = [
    "openclaw_memory_search",
    "openclaw_memory_read",
    "openclaw_user_prefs",
];

/// Arguments of `copilot-bridge validate`.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// Print the checks as one JSON object instead of lines.
    #[arg(long)]
    pub json: bool,
    /// Also send Copilot a one-line prompt and wait for the answer.
    #[arg(long)]
    pub prompt: bool,
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It works.
    Pass,
    /// It does not; if the check is required, the bridge cannot work.
    Fail,
    /// Not used, not configured, or could not run because an earlier check failed.
    Skip,
}

/// One line of the report.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// What was checked.
    pub name: &'static str,
    /// The outcome.
    pub status: Status,
    /// Whether the bridge needs it to work.
    pub required: bool,
    /// What was found.
    pub detail: String,
    /// What to do about a failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    fn pass(name: &'static str, detail: impl Into<String>) -> Self {
        Self {
            name,
            status: Status::Pass,
            required: true,
            detail: detail.into(),
            fix: None,
        }
    }

    fn fail(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            name,
            status: Status::Fail,
            required: true,
            detail: one_line(&detail.into()),
            fix: Some(fix.into()),
        }
    }

    fn skip(name: &'static str, detail: impl Into<String>) -> Self {
        Self {
            name,
            status: Status::Skip,
            required: false,
            detail: detail.into(),
            fix: None,
        }
    }

    /// The same check, not needed for the bridge to work.
    fn optional(mut self) -> Self {
        self.required = false;
        self
    }

    /// Whether this check stops the bridge from working.
    fn blocks(&self) -> bool {
        self.required && self.status != Status::Pass
    }
}

/// Multi-line error texts (a TOML parse error) folded onto the check's line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The whole report.
#[derive(Debug, Serialize)]
struct Report {
    ok: bool,
    checks: Vec<Check>,
}

/// Runs every check, prints the report and returns 0 only when every required check passed.
pub fn run(global: &GlobalArgs, args: &ValidateArgs) -> anyhow::Result<ExitCode> {
    let checks = bridge_mcp::runtime()?.block_on(checks(global, args));
    let report = Report {
        ok: !checks.iter().any(Check::blocks),
        checks,
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report).context("cannot write stdout")?;
        writeln!(out).context("cannot write stdout")?;
    } else {
        out.write_all(render(&report).as_bytes())
            .context("cannot write stdout")?;
    }
    out.flush().context("cannot write stdout")?;
    Ok(if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn render(report: &Report) -> String {
    let width = report
        .checks
        .iter()
        .map(|c| c.name.len())
        .max()
        .unwrap_or(0);
    let mut text = String::new();
    for check in &report.checks {
        let mark = match check.status {
            Status::Pass => "✓",
            Status::Fail if check.required => "✗",
            Status::Fail => "!",
            Status::Skip => "-",
        };
        let _ = writeln!(
            text,
            "{mark} {:width$}  {}",
            check.name,
            check.detail,
            width = width
        );
        if let Some(fix) = check.fix.as_ref().filter(|_| check.status == Status::Fail) {
            let _ = writeln!(text, "  {:width$}  fix: {fix}", "", width = width);
        }
    }
    let failed = report.checks.iter().filter(|c| c.blocks()).count();
    if failed == 0 {
        text.push_str("All required checks passed.\n");
    } else {
        let _ = writeln!(
            text,
            "{failed} required check{} failed.",
            if failed == 1 { "" } else { "s" }
        );
    }
    text
}

async fn checks(global: &GlobalArgs, args: &ValidateArgs) -> Vec<Check> {
    let config = match global.resolve() {
        Ok(config) => config,
        Err(err) => {
            return vec![Check::fail(
                "configuration",
                format!("{err:#}"),
                "correct the setting named above (in the environment, .env or a flag)",
            )];
        }
    };
    let mut checks = vec![Check::pass(
        "configuration",
        if global.env_file.is_file() {
            format!("valid (with {})", global.env_file.display())
        } else {
            "valid (environment only, no .env file)".to_owned()
        },
    )];
    checks.push(policy(&config));
    checks.push(audit(&config).await);
    let cli = cli(&config).await;
    let found = cli.status == Status::Pass;
    checks.push(cli);
    if found {
        checks.extend(agent(&config, args.prompt).await);
    } else {
        let why = "not run: the Copilot CLI was not found";
        checks.push(Check::fail(
            "ACP initialize",
            why,
            "fix the Copilot CLI first",
        ));
        checks.push(Check::fail(
            "authentication",
            why,
            "fix the Copilot CLI first",
        ));
        if args.prompt {
            checks.push(Check::fail("round trip", why, "fix the Copilot CLI first"));
        }
    }
    checks.push(memory_server(&config).await);
    checks.push(workspace(&config));
    checks.push(gateway(&config).await);
    checks
}

fn policy(config: &Config) -> Check {
    let Some(path) = &config.policy_file else {
        return Check::pass(
            "policy",
            "built-in rules (set COPILOT_BRIDGE_POLICY_FILE for your own)",
        );
    };
    match Policy::load(path) {
        Ok(_) => Check::pass("policy", format!("{} is valid", path.display())),
        Err(err) => Check::fail(
            "policy",
            bridge_mcp::error_chain(&err),
            "correct the policy file (see config/policy.example.toml), or unset \
             COPILOT_BRIDGE_POLICY_FILE for the built-in rules",
        ),
    }
}

async fn audit(config: &Config) -> Check {
    let dir = &config.audit_dir;
    match AuditLog::open(dir, env!("CARGO_PKG_NAME")) {
        Ok(log) => {
            let closed = log.shutdown().await;
            match closed {
                Ok(()) => Check::pass("audit log", format!("{} is writable", dir.display())),
                Err(err) => Check::fail(
                    "audit log",
                    err.to_string(),
                    "point COPILOT_AUDIT_LOG_DIR at a writable directory",
                ),
            }
        }
        Err(err) => Check::fail(
            "audit log",
            err.to_string(),
            "point COPILOT_AUDIT_LOG_DIR at a writable directory",
        ),
    }
}

async fn cli(config: &Config) -> Check {
    let path = config.env.get("PATH").map(std::ffi::OsString::from);
    let program = match resolve_program(config.cli_path.as_deref(), path.as_deref()) {
        Ok(program) => program,
        Err(err) => {
            return Check::fail(
                "Copilot CLI",
                err.to_string(),
                "install it with `npm install -g @github/copilot`, or set COPILOT_CLI_PATH",
            );
        }
    };
    let mut command = tokio::process::Command::new(&program);
    command
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    match tokio::time::timeout(VERSION_TIMEOUT, command.output()).await {
        Ok(Ok(output)) if output.status.success() => {
            let stdout = String::from_utf8_lossy(&output.stdout);
            let version = stdout
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .trim_end_matches('.');
            Check::pass("Copilot CLI", format!("{} ({version})", program.display()))
        }
        Ok(Ok(output)) => Check::fail(
            "Copilot CLI",
            format!(
                "{} --version failed ({}): {}",
                program.display(),
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ),
            "reinstall the CLI (`npm install -g @github/copilot`) or point COPILOT_CLI_PATH at a \
             working one",
        ),
        Ok(Err(err)) => Check::fail(
            "Copilot CLI",
            format!("cannot run {}: {err}", program.display()),
            "check that COPILOT_CLI_PATH is an executable",
        ),
        Err(_) => Check::fail(
            "Copilot CLI",
            format!(
                "{} --version gave no answer in {} s",
                program.display(),
                VERSION_TIMEOUT.as_secs()
            ),
            "run it by hand to see what it waits for",
        ),
    }
}

/// How the CLI will authenticate, in words.
fn credentials(config: &Config) -> String {
    match (&config.byok, &config.github_token) {
        (Some(byok), _) => format!(
            "BYOK {} at {}{}",
            byok.provider.cli_type(),
            byok.base_url,
            byok.model
                .as_ref()
                .map(|m| format!(", model {m}"))
                .unwrap_or_default()
        ),
        (None, Some(_)) => "GitHub token".to_owned(),
        // The CLI's own BYOK variables, set directly rather than through COPILOT_BYOK_*.
        (None, None) if config.env.get("COPILOT_PROVIDER_BASE_URL").is_some() => format!(
            "BYOK through COPILOT_PROVIDER_* at {}",
            config
                .env
                .get("COPILOT_PROVIDER_BASE_URL")
                .unwrap_or_default()
        ),
        (None, None) => "the CLI's own login".to_owned(),
    }
}

/// Starts the agent, opens and closes a session in a scratch directory, and with `prompt` asks
/// for a one-word answer in between.
async fn agent(config: &Config, prompt: bool) -> Vec<Check> {
    let scratch =
        std::env::temp_dir().join(format!("copilot-bridge-validate-{}", std::process::id()));
    if let Err(err) = std::fs::create_dir_all(&scratch) {
        return vec![Check::fail(
            "ACP initialize",
            format!(
                "cannot create a scratch directory {}: {err}",
                scratch.display()
            ),
            "set TMPDIR to a writable directory",
        )];
    }
    let checks = tokio::time::timeout(
        AGENT_TIMEOUT
            + if prompt {
                PROMPT_TIMEOUT
            } else {
                Duration::ZERO
            },
        agent_checks(config, &scratch, prompt),
    )
    .await
    .unwrap_or_else(|_| {
        vec![Check::fail(
            "ACP initialize",
            "the Copilot CLI did not finish the checks in time",
            "run `copilot --acp --stdio` by hand, or raise the log level (--log-level debug)",
        )]
    });
    let _ = std::fs::remove_dir_all(&scratch);
    checks
}

async fn agent_checks(config: &Config, scratch: &Path, prompt: bool) -> Vec<Check> {
    let mut checks = Vec::new();
    let memory = MemoryLaunch::beside_current_exe()
        .ok()
        .filter(|m| m.program.is_file());
    let launch = CopilotLaunch::from_config(config, scratch.to_path_buf(), memory);
    let agent_config = match launch.build() {
        Ok(agent_config) => agent_config,
        Err(err) => {
            checks.push(Check::fail(
                "ACP initialize",
                err.to_string(),
                "check COPILOT_CLI_PATH and that the state directory is writable",
            ));
            return checks;
        }
    };
    let policy: Arc<dyn PermissionDecider> = Arc::new(
        config
            .policy_file
            .as_deref()
            .and_then(|p| Policy::load(p).ok())
            .unwrap_or_default(),
    );
    let agent = Agent::new(agent_config, PermissionGate::new(policy));
    match agent.start().await {
        Ok(info) => {
            let name = info.implementation.map_or_else(
                || "an unnamed agent".to_owned(),
                |i| format!("{} {}", i.name, i.version),
            );
            let load = if info.capabilities.load_session {
                "can reload sessions"
            } else {
                "cannot reload sessions"
            };
            checks.push(Check::pass(
                "ACP initialize",
                format!("{} answered ({load})", name.trim()),
            ));
        }
        Err(err) => {
            checks.push(Check::fail(
                "ACP initialize",
                err.to_string(),
                "run `copilot --acp --stdio` by hand to see why it does not start",
            ));
            agent.shutdown().await;
            return checks;
        }
    }
    let how = credentials(config);
    let started = Instant::now();
    match agent.new_session(scratch).await {
        Ok(session) => {
            let opened = started.elapsed();
            checks.push(Check::pass(
                "authentication",
                format!("{how}: a session opened in {} ms", opened.as_millis()),
            ));
            if prompt {
                checks.push(round_trip(&session).await);
            }
            if let Err(err) = session.close().await {
                tracing::debug!(%err, "closing the validation session failed");
            }
        }
        Err(err) => {
            let fix = if config.byok.is_some() {
                "check COPILOT_BYOK_BASE_URL, COPILOT_BYOK_API_KEY and COPILOT_BYOK_MODEL"
            } else {
                "run `copilot login`, set COPILOT_GITHUB_TOKEN or GH_TOKEN (a token with Copilot \
                 access), or use your own model: set COPILOT_BYOK_PROVIDER, COPILOT_BYOK_BASE_URL, \
                 COPILOT_BYOK_API_KEY and COPILOT_BYOK_MODEL"
            };
            checks.push(Check::fail(
                "authentication",
                format!("{how}: {}", describe_agent_error(&err)),
                fix,
            ));
            if prompt {
                checks.push(Check::fail(
                    "round trip",
                    "not run: no session could be opened",
                    "fix authentication first",
                ));
            }
        }
    }
    agent.shutdown().await;
    checks
}

fn describe_agent_error(err: &AcpError) -> String {
    match err {
        AcpError::Rpc { error, .. } => error.message.clone(),
        // The fix line says what to do; the detail keeps the agent's own words.
        AcpError::AuthRequired { message } => message.clone(),
        other => other.to_string(),
    }
}

async fn round_trip(session: &crate::acp::Session) -> Check {
    let started = Instant::now();
    let options = PromptOptions {
        timeout: Some(PROMPT_TIMEOUT),
        cancel: None,
        updates: None,
    };
    match session
        .prompt(vec![ContentBlock::text(ROUND_TRIP_PROMPT)], options)
        .await
    {
        Ok(outcome) => {
            let text = outcome.text.trim();
            let quoted: String = text.chars().take(60).collect();
            if outcome.timed_out {
                Check::fail(
                    "round trip",
                    format!("no answer within {} s", PROMPT_TIMEOUT.as_secs()),
                    "check that the model is reachable and not overloaded",
                )
            } else if outcome.stop_reason != StopReason::EndTurn || text.starts_with("Error:") {
                Check::fail(
                    "round trip",
                    format!("the turn ended with {:?}: {quoted}", outcome.stop_reason),
                    "check the model settings and the account's access to the model",
                )
            } else {
                Check::pass(
                    "round trip",
                    format!("\"{quoted}\" in {} ms", started.elapsed().as_millis()),
                )
            }
        }
        Err(err) => Check::fail(
            "round trip",
            describe_agent_error(&err),
            "check that the model is reachable and your account can use it",
        ),
    }
}

/// Spawns `openclaw-memory` the way sessions get it and lists its tools.
async fn memory_server(config: &Config) -> Check {
    let program = match MemoryLaunch::beside_current_exe() {
        Ok(launch) if launch.program.is_file() => launch.program,
        Ok(launch) => {
            return Check::fail(
                "memory server",
                format!("{} does not exist", launch.program.display()),
                "install openclaw-memory next to copilot-bridge (cargo build builds both)",
            );
        }
        Err(err) => {
            return Check::fail(
                "memory server",
                format!("cannot find the running executable: {err}"),
                "install openclaw-memory next to copilot-bridge",
            );
        }
    };
    match tokio::time::timeout(MEMORY_TIMEOUT, list_memory_tools(&program, config)).await {
        Ok(Ok(names)) => {
            let missing: Vec<&str> = MEMORY_TOOLS
                .iter()
                .copied()
                .filter(|t| !names.iter().any(|n| n == t))
                .collect();
            if missing.is_empty() {
                Check::pass(
                    "memory server",
                    format!("{} lists {}", program.display(), names.join(", ")),
                )
            } else {
                Check::fail(
                    "memory server",
                    format!("{} lacks {}", program.display(), missing.join(", ")),
                    "rebuild both binaries from the same version",
                )
            }
        }
        Ok(Err(err)) => Check::fail(
            "memory server",
            format!("{}: {err:#}", program.display()),
            "run it by hand (`openclaw-memory`) to see why it does not start",
        ),
        Err(_) => Check::fail(
            "memory server",
            format!(
                "{} did not list its tools within {} s",
                program.display(),
                MEMORY_TIMEOUT.as_secs()
            ),
            "run it by hand (`openclaw-memory`) to see what it waits for",
        ),
    }
}

async fn list_memory_tools(program: &Path, config: &Config) -> anyhow::Result<Vec<String>> {
    let mut command = tokio::process::Command::new(program);
    // The same environment the bridge has, so the server finds the same workspace.
    command
        .env(bridge_core::depth::DEPTH_ENV, child_depth(config))
        .kill_on_drop(true);
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .context("cannot spawn it")?;
    // Its stderr is kept (and quoted on failure) rather than mixed into the report.
    let said = tokio::spawn(async move {
        let mut text = String::new();
        if let Some(mut stderr) = stderr {
            let _ = tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut text).await;
        }
        text
    });
    let listed = async {
        let client = ().serve(transport).await.context("MCP handshake failed")?;
        let tools = client.list_all_tools().await.context("tools/list failed");
        let _ = client.cancel().await;
        anyhow::Ok(tools?.into_iter().map(|t| t.name.into_owned()).collect())
    }
    .await;
    match listed {
        Ok(names) => {
            said.abort();
            Ok(names)
        }
        Err(err) => {
            // It has exited or is about to: what it said last is usually the reason.
            let text = tokio::time::timeout(Duration::from_secs(2), said)
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default();
            // Its last word is "openclaw-memory: <error>", possibly over several lines.
            let last_word = text
                .rfind("openclaw-memory:")
                .map_or_else(|| text.lines().last().unwrap_or(""), |at| &text[at..]);
            let last_word: String = last_word
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .chars()
                .take(400)
                .collect();
            if last_word.is_empty() {
                Err(err)
            } else {
                Err(anyhow::anyhow!("{err:#}; it said: {last_word}"))
            }
        }
    }
}

/// The call depth a session's memory server gets: one more than ours.
fn child_depth(config: &Config) -> String {
    bridge_core::depth::CallDepth::inherited(config.inherited_depth.as_deref())
        .unwrap_or(bridge_core::depth::CallDepth::new(u32::MAX))
        .child_env()
        .1
}

/// Finds OpenClaw's workspace the way the memory server will.
fn workspace(config: &Config) -> Check {
    let discovery = discover(DiscoveryInput {
        flag: None,
        env: &config.env,
    });
    let Some(found) = discovery.workspace else {
        return Check::fail(
            "OpenClaw memory",
            format!("none found (looked in: {})", discovery.looked_in_summary()),
            "set OPENCLAW_WORKSPACE_DIR to the folder holding MEMORY.md and memory/ (memory \
             tools answer \"no memory found\" until then)",
        )
        .optional();
    };
    let root = &found.root;
    let notes = count_notes(&root.join("memory"));
    let has = |name: &str| {
        if root.join(name).is_file() {
            format!("{name} present")
        } else {
            format!("no {name}")
        }
    };
    if root.is_dir() {
        Check::pass(
            "OpenClaw memory",
            format!(
                "{} (from {}): {notes} daily notes, {}, {}",
                root.display(),
                found.source,
                has("MEMORY.md"),
                has("USER.md")
            ),
        )
        .optional()
    } else {
        Check::fail(
            "OpenClaw memory",
            format!("{} (from {}) does not exist", root.display(), found.source),
            "correct that setting, or create the workspace with OpenClaw",
        )
        .optional()
    }
}

fn count_notes(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .filter_map(Result::ok)
            .filter(|e| {
                let path: PathBuf = e.path();
                path.extension().is_some_and(|x| x == "md") && path.is_file()
            })
            .count()
    })
}

/// Connects to the gateway with a signed handshake when a token is configured.
async fn gateway(config: &Config) -> Check {
    let Some(token) = &config.gateway.token else {
        return Check::skip(
            "OpenClaw gateway",
            "not configured (set OPENCLAW_GATEWAY_TOKEN to search through the gateway)",
        );
    };
    let settings = GatewaySettings {
        host: config.gateway.host.clone(),
        port: config.gateway.port,
        token: token.expose().to_owned(),
        state_dir: config.state_dir.clone(),
        search_timeout: GATEWAY_TIMEOUT,
    };
    let url = settings.url();
    let gateway = Gateway::start(settings);
    // The first attempt's outcome is the answer: up, or down with the gateway's reason (the
    // link would go on retrying with backoff, which a one-shot check need not wait for).
    let started = Instant::now();
    let outcome = loop {
        match gateway.state() {
            LinkState::Up => break Ok(()),
            LinkState::Down(reason) if reason != "connecting" => break Err(reason),
            LinkState::Down(_) if started.elapsed() >= GATEWAY_TIMEOUT => {
                break Err(format!("no answer within {} s", GATEWAY_TIMEOUT.as_secs()));
            }
            LinkState::Down(_) => tokio::time::sleep(GATEWAY_POLL).await,
        }
    };
    gateway.shutdown();
    match outcome {
        Ok(()) => Check::pass("OpenClaw gateway", format!("{url}: handshake accepted")),
        Err(reason) => Check::fail(
            "OpenClaw gateway",
            format!("{url}: {reason}"),
            "start the gateway (`openclaw gateway`), and check OPENCLAW_HOST, OPENCLAW_PORT and \
             OPENCLAW_GATEWAY_TOKEN",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_required_check_fails_the_report_and_shows_its_fix() {
        let report = Report {
            ok: false,
            checks: vec![
                Check::pass("configuration", "valid"),
                Check::fail("Copilot CLI", "copilot not found", "install it"),
                Check::fail("OpenClaw memory", "none found", "set it").optional(),
                Check::skip("OpenClaw gateway", "not configured"),
            ],
        };
        let text = render(&report);
        assert!(text.contains("✓ configuration"), "{text}");
        assert!(text.contains("✗ Copilot CLI"), "{text}");
        assert!(text.contains("fix: install it"), "{text}");
        assert!(text.contains("! OpenClaw memory"), "{text}");
        assert!(text.contains("- OpenClaw gateway"), "{text}");
        assert!(text.ends_with("1 required check failed.\n"), "{text}");
        assert_eq!(report.checks.iter().filter(|c| c.blocks()).count(), 1);
    }
}
