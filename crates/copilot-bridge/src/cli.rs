//! Command-line parsing and dispatch: `serve` (the default) runs the MCP server on stdio; the
//! other subcommands are tools for people at a terminal.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use bridge_core::config::{Config, EnvLayer, Overrides};
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
    let config = cli.global.resolve().context("invalid configuration")?;
    bridge_core::logging::init_stderr(config.log_level.tracing_directive());
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve(),
    }
}

fn serve() -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let service = BridgeServer::new()
            .serve(rmcp::transport::stdio())
            .await
            .context("MCP handshake on stdio failed")?;
        service
            .waiting()
            .await
            .context("MCP service stopped with an error")?;
        Ok(ExitCode::SUCCESS)
    })
}
