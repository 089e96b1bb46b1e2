//! The flags every subcommand shares, and resolving them with the environment and `.env` into
//! the configuration.

use std::path::PathBuf;

use bridge_core::config::{Config, EnvLayer, Overrides};

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
