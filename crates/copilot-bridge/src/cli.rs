//! Command-line parsing and dispatch: `serve` (the default) runs the MCP server on stdio; the
//! other subcommands are tools for people at a terminal.

use std::process::ExitCode;

use anyhow::Context;
use bridge_core::config::Config;
use clap::{Parser, Subcommand};

use crate::commands::exec::ExecCommand;
use crate::commands::orchestrate::OrchestrateCommand;
pub use crate::global_args::GlobalArgs;
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

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP on stdin/stdout (the default).
    Serve,
    /// Check that everything is wired up: configuration, policy, audit directory, the Copilot
    /// CLI and its login, the memory server, OpenClaw's workspace and gateway.
    Validate(crate::commands::validate::ValidateArgs),
    /// Run one task from the terminal: progress on stderr, the result on stdout; Ctrl-C
    /// cancels it.
    Exec(ExecCommand),
    /// Plan a big task as sub-tasks and run them in parallel Copilot sessions: events on
    /// stderr, the report on stdout; Ctrl-C stops every running sub-task.
    Orchestrate(OrchestrateCommand),
    /// Register both servers with an MCP client (openclaw, copilot, claude-code, codex, cursor,
    /// vscode) in its own user-level configuration, with absolute paths; running it again
    /// changes nothing.
    Register(crate::commands::register::RegisterArgs),
    /// Remove what `register` added (and, for OpenClaw, the persona block), nothing else.
    Unregister(crate::commands::register::UnregisterArgs),
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
    bridge_mcp::finish("copilot-bridge", run(Cli::parse()))
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
        return crate::commands::validate::run(&cli.global, args);
    }
    // Registration needs no valid bridge configuration: it only writes a client's files.
    if let Command::Register(args) = &command {
        bridge_core::logging::init_stderr("warn");
        return crate::commands::register::register(&cli.global, args);
    }
    if let Command::Unregister(args) = &command {
        bridge_core::logging::init_stderr("warn");
        return crate::commands::register::unregister(&cli.global, args);
    }
    let config = cli.global.resolve().context("invalid configuration")?;
    bridge_core::logging::init_stderr(level(&config));
    if matches!(
        command,
        Command::Serve | Command::Exec(_) | Command::Orchestrate(_)
    ) {
        // Before any agent starts: grandchildren that outlive their parent (a shell the agent
        // started) come back to us to be reaped, instead of to an init that may not reap.
        if let Err(err) = crate::acp::adopt_orphans() {
            tracing::debug!(%err, "cannot become a subreaper; orphans go to init");
        }
    }
    match command {
        Command::Serve => serve(config),
        Command::Exec(args) => crate::commands::exec::run(config, &args),
        Command::Orchestrate(args) => crate::commands::orchestrate::run(config, &args),
        Command::Redact { json } => crate::commands::redact::run(json),
        Command::Validate(_) | Command::Register(_) | Command::Unregister(_) => {
            unreachable!("handled above")
        }
    }
}

/// Serves MCP on stdio until EOF, SIGTERM or SIGINT (see [`bridge_mcp::serve_stdio`]).
fn serve(config: Config) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    bridge_mcp::block_on(async {
        let (server, _audit) = BridgeServer::from_config(config, cwd)?;
        let stop = bridge_mcp::serve_stdio(server).await?;
        tracing::debug!(?stop, "stopped");
        Ok(ExitCode::SUCCESS)
    })
    .context("cannot start the async runtime")?
}
