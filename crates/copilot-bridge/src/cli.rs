//! Command-line parsing and dispatch: `serve` (the default) runs the MCP server on stdio; the
//! other subcommands are tools for people at a terminal.

use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use rmcp::ServiceExt;

use crate::server::BridgeServer;

/// Command-line interface of `copilot-bridge`.
#[derive(Debug, Parser)]
#[command(name = "copilot-bridge", version, about)]
pub struct Cli {
    /// What to do; without a subcommand the MCP server runs on stdio.
    #[command(subcommand)]
    pub command: Option<Command>,
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
    bridge_core::logging::init_stderr("info");
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
