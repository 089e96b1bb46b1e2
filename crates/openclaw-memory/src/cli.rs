//! Command-line parsing and dispatch: `serve` (the default) runs the MCP server on stdio.
//! Startup does no work beyond reading the configuration: the workspace is found and indexed
//! on the first tool call, and the gateway link connects in the background.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use bridge_core::config::{Config, EnvLayer, Overrides};
use bridge_mcp::Envelope;
use clap::{Parser, Subcommand};

use crate::index::rank::RankOptions;
use crate::server::{IDENTITY, MemoryServer};
use crate::service::{MemoryService, ServiceOptions};
use openclaw_gateway::{ClientProfile, Gateway, GatewaySettings};

/// Command-line interface of `openclaw-memory`.
#[derive(Debug, Parser)]
#[command(name = "openclaw-memory", version, about)]
pub struct Cli {
    /// Settings that override the environment and `.env`.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do; without a subcommand the MCP server runs on stdio.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Flags shared by every subcommand.
#[derive(Debug, clap::Args)]
pub struct GlobalArgs {
    /// OpenClaw workspace (the folder holding MEMORY.md and memory/); by default found the way
    /// OpenClaw finds it [env: OPENCLAW_WORKSPACE_DIR].
    #[arg(long, global = true, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Let dated notes lose half their weight every DAYS days (OpenClaw uses 30 when its
    /// temporal decay is on); MEMORY.md and USER.md never decay. Off by default.
    #[arg(long, global = true, value_name = "DAYS")]
    pub recency_half_life_days: Option<f32>,
    /// How long a gateway search may take before the local index answers instead.
    #[arg(long, global = true, value_name = "MS", default_value_t = openclaw_gateway::DEFAULT_CALL_TIMEOUT.as_millis() as u64)]
    pub gateway_timeout_ms: u64,
    /// Directory for audit JSONL files [env: COPILOT_AUDIT_LOG_DIR].
    #[arg(long, global = true, value_name = "DIR")]
    pub audit_dir: Option<PathBuf>,
    /// debug, info, warning, error, none or all [env: COPILOT_LOG_LEVEL].
    #[arg(long, global = true, value_name = "LEVEL")]
    pub log_level: Option<String>,
    /// The `.env` file to read (a missing file is fine).
    #[arg(long, global = true, value_name = "FILE", default_value = ".env")]
    pub env_file: PathBuf,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP on stdin/stdout (the default).
    Serve,
    /// Check what this server will see: OpenClaw's workspace (found as the server finds it),
    /// the index built from it, and the gateway's handshake when a token is set.
    Check {
        /// Print the checks as one JSON object instead of lines.
        #[arg(long)]
        json: bool,
    },
}

/// Parses the command line, runs it, and maps the outcome to an exit code.
pub fn main_entry() -> ExitCode {
    bridge_mcp::finish("openclaw-memory", run(Cli::parse()))
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let env = EnvLayer::capture(&cli.global.env_file)?;
    let overrides = Overrides {
        audit_dir: cli.global.audit_dir.clone(),
        log_level: cli.global.log_level.clone(),
        ..Overrides::default()
    };
    let config = Config::resolve(overrides, env).context("invalid configuration")?;
    // `check` talks to a person (or to `copilot-bridge validate`): warnings only, unless a
    // level was chosen.
    let chosen = cli.global.log_level.is_some() || config.env.get("COPILOT_LOG_LEVEL").is_some();
    let level = match cli.command {
        Some(Command::Check { .. }) if !chosen => "warn",
        _ => config.log_level.tracing_directive(),
    };
    bridge_core::logging::init_stderr(level);
    if let Some(days) = cli.global.recency_half_life_days
        && !(days.is_finite() && days > 0.0)
    {
        anyhow::bail!("--recency-half-life-days must be a positive number of days, got {days}");
    }
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve(&cli.global, &config),
        Command::Check { json } => {
            crate::check::run(cli.global.workspace.as_deref(), &config, json)
        }
    }
}

/// Serves MCP on stdio until EOF, SIGTERM or SIGINT (see [`bridge_mcp::serve_stdio`]).
fn serve(args: &GlobalArgs, config: &Config) -> anyhow::Result<ExitCode> {
    bridge_mcp::block_on(async {
        let envelope = Envelope::from_config(config, IDENTITY.name, None)?;
        let gateway = config.gateway.token.as_ref().map(|token| {
            Gateway::start(GatewaySettings {
                host: config.gateway.host.clone(),
                port: config.gateway.port,
                token: token.expose().to_owned(),
                state_dir: config.state_dir.clone(),
                call_timeout: Duration::from_millis(args.gateway_timeout_ms),
                profile: ClientProfile::memory_reader(),
            })
        });
        let service = MemoryService::new(
            ServiceOptions {
                workspace_flag: args.workspace.clone(),
                ranking: RankOptions {
                    recency_half_life_days: args.recency_half_life_days,
                    ..RankOptions::default()
                },
            },
            config.env.clone(),
        );
        let server = MemoryServer::new(Arc::clone(&service), gateway, envelope);
        let stop = bridge_mcp::serve_stdio(server).await?;
        service.finish_saving();
        tracing::debug!(?stop, "stopped");
        Ok(ExitCode::SUCCESS)
    })
    .context("cannot start the async runtime")?
}
