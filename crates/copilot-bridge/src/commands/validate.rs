//! `copilot-bridge validate`: is everything wired up? Each check runs the real thing (the CLI
//! is started and asked to open a session, the memory server is spawned and listed, the
//! gateway is connected to) and reports one line with ✓ or ✗ and, on ✗, what to do about it.
//! The exit code is 0 only when every required check passed.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use bridge_core::audit::AuditLog;
use bridge_core::check::{Check, Report, Status};
use bridge_core::config::Config;
use bridge_core::policy::{AskVia, Policy};
use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;

use crate::acp::{
    AcpError, Agent, ContentBlock, CopilotLaunch, MemoryLaunch, PermissionDecider, PermissionGate,
    PromptOptions, StopReason, resolve_program,
};
use crate::approval::OpenclawApprover;
use crate::global_args::GlobalArgs;

/// How long `copilot --version` may take (the CLI is a node program: a cold start takes a
/// couple of seconds).
const VERSION_TIMEOUT: Duration = Duration::from_secs(30);
/// How long starting the agent, opening and closing a session may take in all.
const AGENT_TIMEOUT: Duration = Duration::from_mins(1);
/// How long the memory server may take to start and list its tools.
const MEMORY_TIMEOUT: Duration = Duration::from_secs(20);
/// How long the memory server's own checks may take (an index build and a gateway handshake
/// of at most 15 s).
const MEMORY_CHECK_TIMEOUT: Duration = Duration::from_secs(40);
/// How long the `--prompt` round trip may take.
const PROMPT_TIMEOUT: Duration = Duration::from_mins(2);
/// How long the gateway's handshake may take for the `ask` check.
const GATEWAY_TIMEOUT: Duration = Duration::from_secs(15);
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

/// Runs every check, prints the report and returns 0 only when every required check passed.
pub fn run(global: &GlobalArgs, args: &ValidateArgs) -> anyhow::Result<ExitCode> {
    let checks = bridge_mcp::runtime()?.block_on(checks(global, args));
    let report = Report::new(checks);
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report).context("cannot write stdout")?;
        writeln!(out).context("cannot write stdout")?;
    } else {
        out.write_all(report.render().as_bytes())
            .context("cannot write stdout")?;
    }
    out.flush().context("cannot write stdout")?;
    Ok(if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
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
    let (policy_check, loaded) = policy(&config);
    checks.push(policy_check);
    checks.push(ask_routes(loaded.as_ref(), &config).await);
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
    let (server, program) = memory_server(&config).await;
    checks.push(server);
    checks.extend(memory_checks(program.as_deref(), &config).await);
    checks
}

/// The policy check, and the policy when it loads.
fn policy(config: &Config) -> (Check, Option<Policy>) {
    let Some(path) = &config.policy_file else {
        let check = Check::pass(
            "policy",
            "built-in rules (set COPILOT_BRIDGE_POLICY_FILE for your own)",
        );
        return (check, Some(Policy::default()));
    };
    match Policy::load(path) {
        Ok(policy) => (
            Check::pass("policy", format!("{} is valid", path.display())),
            Some(policy),
        ),
        Err(err) => (
            Check::fail(
                "policy",
                bridge_mcp::error_chain(&err),
                "correct the policy file (see config/policy.example.toml), or unset \
             COPILOT_BRIDGE_POLICY_FILE for the built-in rules",
            ),
            None,
        ),
    }
}

/// Where the policy's `ask` rules can reach a person from here: the calling client (which only
/// a call can tell) and OpenClaw's approval flow (the gateway is connected to, and must grant
/// `operator.approvals`).
async fn ask_routes(policy: Option<&Policy>, config: &Config) -> Check {
    const CLIENT: &str = "the calling MCP client when it declares elicitation \
                          (elicitation/create on MCP 2025-xx, input_required on 2026-07-28)";
    let Some(policy) = policy else {
        return Check::fail("ask", "the policy file is invalid", "see policy above");
    };
    let via = policy.ask_via();
    if via == AskVia::Deny {
        return Check::pass("ask", "ask_via = \"deny\": a rule that says ask denies");
    }
    if via == AskVia::Client {
        return Check::pass(
            "ask",
            format!("ask_via = \"client\": {CLIENT}; otherwise a rule that says ask denies"),
        );
    }
    let openclaw = match OpenclawApprover::start(config) {
        None => Err("not configured (set OPENCLAW_GATEWAY_TOKEN)".to_owned()),
        Some(approver) => {
            let checked = approver.check(GATEWAY_TIMEOUT).await;
            approver.shutdown().await;
            checked
        }
    };
    let configured = config.gateway.token.is_some();
    match (via, openclaw) {
        (AskVia::Openclaw | AskVia::Auto, Ok(scopes)) => Check::pass(
            "ask",
            format!(
                "{}OpenClaw's approval flow (the gateway granted {}; someone must have the \
                 Control UI or `openclaw tui` open, or the question is denied at once)",
                if via == AskVia::Auto {
                    format!("{CLIENT}, else ")
                } else {
                    String::new()
                },
                scopes.join(", ")
            ),
        ),
        (AskVia::Auto, Err(why)) if !configured => Check::pass(
            "ask",
            format!("{CLIENT}; OpenClaw's approval flow: {why}; otherwise it denies"),
        ),
        (_, Err(why)) => Check::fail(
            "ask",
            format!("OpenClaw's approval flow cannot be used: {why}"),
            "start the gateway (`openclaw gateway run`) and set OPENCLAW_GATEWAY_TOKEN to its \
             token (and OPENCLAW_HOST/OPENCLAW_PORT if it is not on 127.0.0.1:18789)",
        ),
        (AskVia::Deny | AskVia::Client, Ok(_)) => Check::pass("ask", "no OpenClaw route used"),
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
    let memory = MemoryLaunch::locate(&config.env).ok();
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

/// Spawns `openclaw-memory` the way sessions get it and lists its tools; returns the check and
/// the program, when one was found.
async fn memory_server(config: &Config) -> (Check, Option<PathBuf>) {
    let program = match MemoryLaunch::locate(&config.env) {
        Ok(launch) => launch.program,
        Err(err) => {
            let check = Check::fail(
                "memory server",
                format!(
                    "not found (looked in: {}); Copilot sessions would run without OpenClaw's \
                     memory",
                    err.looked.join("; ")
                ),
                "build both servers (`cargo build --release --bins`) and keep openclaw-memory \
                 beside copilot-bridge, put it on PATH, or set OPENCLAW_MEMORY_BIN",
            );
            return (check, None);
        }
    };
    let check = list_checked(&program, config).await;
    (check, Some(program))
}

async fn list_checked(program: &Path, config: &Config) -> Check {
    let program = program.to_path_buf();
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

/// The checks `openclaw-memory check --json` makes of what it will see (OpenClaw's workspace,
/// the index, the gateway), run on the installed server with the bridge's environment so it
/// sees what a session's memory server would.
async fn memory_checks(program: Option<&Path>, config: &Config) -> Vec<Check> {
    let not_run = |why: &str| {
        vec![
            Check::fail(
                "OpenClaw memory",
                format!("not checked: {why}"),
                "fix the memory server first",
            )
            .optional(),
        ]
    };
    let Some(program) = program else {
        return not_run("the memory server was not found");
    };
    let mut command = tokio::process::Command::new(program);
    command
        .args(["check", "--json"])
        .env(bridge_core::depth::DEPTH_ENV, child_depth(config))
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let output = match tokio::time::timeout(MEMORY_CHECK_TIMEOUT, command.output()).await {
        Ok(Ok(output)) => output,
        Ok(Err(err)) => return not_run(&format!("cannot run {} check: {err}", program.display())),
        Err(_) => {
            return not_run(&format!(
                "{} check did not finish within {} s",
                program.display(),
                MEMORY_CHECK_TIMEOUT.as_secs()
            ));
        }
    };
    match serde_json::from_slice::<Report>(&output.stdout) {
        Ok(report) => report.checks,
        Err(err) => {
            let said = String::from_utf8_lossy(&output.stderr);
            not_run(&format!(
                "{} check answered no report ({err}); it said: {}",
                program.display(),
                said.trim()
            ))
        }
    }
}
