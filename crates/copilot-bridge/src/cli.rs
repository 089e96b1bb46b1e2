//! Command-line parsing and dispatch: `serve` (the default) runs the MCP server on stdio; the
//! other subcommands are tools for people at a terminal.

use std::borrow::Cow;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use bridge_core::config::{Config, EnvLayer, Overrides};
use bridge_core::redact::Redactor;
use clap::{Parser, Subcommand};
use rmcp::ServiceExt;

use crate::server::BridgeServer;

/// Command-line interface of `copilot-bridge`.
#[derive(Debug, Parser)]
#[command(name = "copilot-bridge", version, about)]
pub struct Cli {
    /// Settings that override the environment and `.env`.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do; without a subcommand the MCP server runs on stdio.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Flags shared by every subcommand; each wins over its environment variable.
#[derive(Debug, clap::Args)]
pub struct GlobalArgs {
    /// The Copilot CLI program (default: `copilot` on PATH) [env: COPILOT_CLI_PATH].
    #[arg(long, global = true, value_name = "PATH")]
    pub cli_path: Option<PathBuf>,
    /// Workspace root for the file tools (default: the current directory)
    /// [env: COPILOT_BRIDGE_WORKSPACE].
    #[arg(long, global = true, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Permission policy file (TOML) [env: COPILOT_BRIDGE_POLICY_FILE].
    #[arg(long, global = true, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Directory for audit JSONL files [env: COPILOT_AUDIT_LOG_DIR].
    #[arg(long, global = true, value_name = "DIR")]
    pub audit_dir: Option<PathBuf>,
    /// debug, info, warning, error, none or all [env: COPILOT_LOG_LEVEL].
    #[arg(long, global = true, value_name = "LEVEL")]
    pub log_level: Option<String>,
    /// Model for new Copilot sessions [env: COPILOT_BYOK_MODEL].
    #[arg(long, global = true, value_name = "MODEL")]
    pub model: Option<String>,
    /// The `.env` file to read (a missing file is fine).
    #[arg(long, global = true, value_name = "FILE", default_value = ".env")]
    pub env_file: PathBuf,
}

impl GlobalArgs {
    /// Resolves the configuration: these flags over the environment over the `.env` file.
    pub fn resolve(&self) -> anyhow::Result<Config> {
        let env = EnvLayer::capture(&self.env_file)?;
        let overrides = Overrides {
            cli_path: self.cli_path.clone(),
            workspace: self.workspace.clone(),
            policy_file: self.policy.clone(),
            audit_dir: self.audit_dir.clone(),
            log_level: self.log_level.clone(),
            model: self.model.clone(),
        };
        Ok(Config::resolve(overrides, env)?)
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP on stdin/stdout (the default).
    Serve,
    /// Check that everything is wired up: configuration, policy, audit directory, the Copilot
    /// CLI and its login, the memory server, OpenClaw's workspace and gateway.
    Validate(crate::validate::ValidateArgs),
    /// Run one task from the terminal: progress on stderr, the result on stdout; Ctrl-C
    /// cancels it.
    Exec(crate::exec::ExecArgs),
    /// Plan a big task as sub-tasks and run them in parallel Copilot sessions: events on
    /// stderr, the report on stdout; Ctrl-C stops every running sub-task.
    Orchestrate(crate::orchestrate_command::OrchestrateArgs),
    /// Copy stdin to stdout with secrets redacted, line for line (for scrubbing logs).
    Redact {
        /// Treat each line as a JSON value and redact its strings, so every line stays valid
        /// JSON; lines that are not JSON are redacted as text.
        #[arg(long)]
        json: bool,
    },
}

/// Parses the command line, runs it, and maps the outcome to an exit code.
pub fn main_entry() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            tracing::error!("{err:#}");
            #[expect(
                clippy::print_stderr,
                reason = "the last word before exiting with an error"
            )]
            {
                eprintln!("copilot-bridge: {err:#}");
            }
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let command = cli.command.unwrap_or(Command::Serve);
    // At a terminal, only warnings unless a level was chosen: the output is for a person.
    let interactive = matches!(
        command,
        Command::Validate(_) | Command::Exec(_) | Command::Orchestrate(_)
    );
    let level = |config: &Config| {
        let chosen =
            cli.global.log_level.is_some() || config.env.get("COPILOT_LOG_LEVEL").is_some();
        if interactive && !chosen {
            "warn"
        } else {
            config.log_level.tracing_directive()
        }
    };
    if let Command::Validate(args) = &command {
        // A configuration error is one of the things validate reports, not a reason to stop.
        bridge_core::logging::init_stderr(cli.global.resolve().as_ref().map_or("warn", level));
        return crate::validate::run(&cli.global, args);
    }
    let config = cli.global.resolve().context("invalid configuration")?;
    bridge_core::logging::init_stderr(level(&config));
    match command {
        Command::Serve => serve(config),
        Command::Exec(args) => crate::exec::run(config, &args),
        Command::Orchestrate(args) => crate::orchestrate_command::run(config, &args),
        Command::Redact { json } => redact(json),
        Command::Validate(_) => unreachable!("handled above"),
    }
}

fn serve(config: Config) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    runtime()?.block_on(async {
        let (server, audit) = BridgeServer::from_config(config, cwd)?;
        let service = server
            .clone()
            .serve(rmcp::transport::stdio())
            .await
            .context("MCP handshake on stdio failed")?;
        let outcome = service.waiting().await;
        // Stop the Copilot CLI (if a task started it) before the audit log is drained.
        server.shutdown().await;
        audit
            .shutdown()
            .await
            .context("cannot finish writing the audit log")?;
        outcome.context("MCP service stopped with an error")?;
        Ok(ExitCode::SUCCESS)
    })
}

/// The multi-threaded Tokio runtime every async subcommand runs on.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Streams stdin to stdout through the redactor. Lines are read as bytes so that invalid UTF-8
/// never stops a log scrub: such bytes become U+FFFD, which is also safer than passing them on.
fn redact(json: bool) -> anyhow::Result<ExitCode> {
    let redactor = Redactor::shared();
    // Text mode keeps state across lines so a private-key block is redacted whole.
    let mut lines = redactor.lines();
    let mut stdin = std::io::stdin().lock();
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    let mut line = Vec::new();
    loop {
        line.clear();
        if stdin
            .read_until(b'\n', &mut line)
            .context("cannot read stdin")?
            == 0
        {
            break;
        }
        let had_newline = line.last() == Some(&b'\n');
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        let out = if json {
            Cow::Owned(redactor.redact_json_line(text))
        } else {
            lines.redact_line(text)
        };
        stdout
            .write_all(out.as_bytes())
            .context("cannot write stdout")?;
        if had_newline {
            stdout.write_all(b"\n").context("cannot write stdout")?;
        }
    }
    stdout.flush().context("cannot write stdout")?;
    Ok(ExitCode::SUCCESS)
}
