//! One typed configuration for both servers, resolved from four layers in this order of
//! precedence: command-line overrides > process environment > `.env` file > defaults.
//!
//! The process environment and the `.env` file are read once, at the binary's edge, into an
//! [`EnvLayer`] map; nothing here mutates the process environment, and no other module of this
//! crate reads it.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::depth::{DEFAULT_MAX_DEPTH, DEPTH_ENV};

/// Every variable the bridge understands, for documentation and `validate`.
pub const VARIABLES: &[&str] = &[
    "COPILOT_GITHUB_TOKEN",
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "COPILOT_BYOK_PROVIDER",
    "COPILOT_BYOK_API_KEY",
    "COPILOT_BYOK_BASE_URL",
    "COPILOT_BYOK_MODEL",
    "COPILOT_CLI_PATH",
    "COPILOT_LOG_LEVEL",
    "OPENCLAW_HOST",
    "OPENCLAW_PORT",
    "OPENCLAW_GATEWAY_TOKEN",
    "COPILOT_AUDIT_LOG_DIR",
    "COPILOT_PROJECT_CONTEXT",
    "COPILOT_MAX_RETRIES",
    "COPILOT_BRIDGE_POLICY_FILE",
    "COPILOT_BRIDGE_MAX_DEPTH",
    "COPILOT_BRIDGE_OUTPUT_LIMIT",
    "COPILOT_BRIDGE_TIMEOUT_MS",
    "COPILOT_BRIDGE_WORKSPACE",
    "COPILOT_BRIDGE_STATE_DIR",
];

/// Default OpenClaw gateway host: the gateway binds loopback by default.
pub const DEFAULT_OPENCLAW_HOST: &str = "127.0.0.1";
/// Default OpenClaw gateway port, as OpenClaw ships it.
pub const DEFAULT_OPENCLAW_PORT: u16 = 18789;
/// Default number of retries for rate limits and transient errors (the original's value).
pub const DEFAULT_MAX_RETRIES: u32 = 3;
/// Default cap on text returned to a client: 10 KiB keeps tool results within model context.
pub const DEFAULT_OUTPUT_LIMIT_BYTES: usize = 10 * 1024;
/// Smallest accepted output cap: below 1 KiB not even an error message fits.
pub const MIN_OUTPUT_LIMIT_BYTES: usize = 1024;
/// Default timeout of one delegated task: two minutes, as in the original design.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// A long-lived session idle this long (no query, no read) is stopped: 30 minutes.
pub const DEFAULT_SESSION_IDLE_MS: u64 = 30 * 60 * 1000;
/// How long a reviewer has to decide an approval asked through OpenClaw: 50 s, which ends before
/// OpenClaw's own 60-s MCP request timeout (`register openclaw` raises both together).
pub const DEFAULT_APPROVAL_TIMEOUT_MS: u64 = 50_000;
/// The longest approval timeout OpenClaw's gateway accepts: 10 minutes.
pub const MAX_APPROVAL_TIMEOUT_MS: u64 = 600_000;
/// Base URL used for the `ollama` provider when none is given: Ollama's OpenAI-compatible API.
pub const DEFAULT_OLLAMA_BASE_URL: &str = "http://127.0.0.1:11434/v1";

/// A configuration value that must never be shown: `Debug` and `Display` print `[REDACTED]`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself, for the one place that must send it (a child's environment, a header).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[REDACTED]")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[REDACTED]")
    }
}

/// A configuration error: names the variable, the value and what would be accepted.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A variable holds a value outside its accepted set.
    #[error("{variable}={value:?} is not valid: expected {expected}")]
    Invalid {
        /// The variable (or flag) name.
        variable: String,
        /// The rejected value (never a secret: secrets are not validated by content).
        value: String,
        /// What the variable accepts.
        expected: String,
    },
    /// A variable that another setting needs is missing.
    #[error("{variable} is required when {because}; set it in the environment or in .env")]
    Missing {
        /// The missing variable.
        variable: &'static str,
        /// Why it is needed.
        because: &'static str,
    },
    /// The `.env` file exists but cannot be parsed.
    #[error("cannot read {path}: {source}; fix the line or remove the file")]
    DotEnv {
        /// The `.env` file.
        path: PathBuf,
        /// What dotenvy reported.
        #[source]
        source: dotenvy::Error,
    },
    /// No home directory to put default paths under.
    #[error(
        "HOME is not set, so default paths cannot be chosen; set HOME or \
         COPILOT_BRIDGE_STATE_DIR and COPILOT_AUDIT_LOG_DIR"
    )]
    NoHome,
}

/// Where a value came from: used by `validate` to explain the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A command-line flag.
    Cli,
    /// The process environment.
    Env,
    /// The `.env` file.
    DotEnv,
    /// The built-in default.
    Default,
}

/// The environment as seen by the configuration: the process environment over the `.env` file.
/// Empty values count as unset, as most shells and `.env` users expect. Its `Debug` lists names
/// only: values may be secrets.
#[derive(Clone, Default)]
pub struct EnvLayer {
    env: BTreeMap<String, String>,
    dotenv: BTreeMap<String, String>,
}

impl fmt::Debug for EnvLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnvLayer")
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("dotenv", &self.dotenv.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl EnvLayer {
    /// Builds a layer from explicit maps (tests, embedding).
    pub fn from_maps(
        env: impl IntoIterator<Item = (String, String)>,
        dotenv: impl IntoIterator<Item = (String, String)>,
    ) -> Self {
        Self {
            env: env.into_iter().collect(),
            dotenv: dotenv.into_iter().collect(),
        }
    }

    /// A layer holding only `pairs` as its process environment (tests).
    pub fn from_pairs(pairs: &[(&str, &str)]) -> Self {
        Self::from_maps(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
            [],
        )
    }

    /// Captures the process environment and the `.env` file at `dotenv_path` (a missing file is
    /// normal). This is the only place in the workspace that reads the process environment; call
    /// it once at the binary's edge.
    pub fn capture(dotenv_path: &Path) -> Result<Self, ConfigError> {
        let env = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        let dotenv = match dotenvy::from_path_iter(dotenv_path) {
            Ok(iter) => iter
                .collect::<Result<BTreeMap<_, _>, _>>()
                .map_err(|source| ConfigError::DotEnv {
                    path: dotenv_path.to_path_buf(),
                    source,
                })?,
            Err(e) if e.not_found() => BTreeMap::new(),
            Err(source) => {
                return Err(ConfigError::DotEnv {
                    path: dotenv_path.to_path_buf(),
                    source,
                });
            }
        };
        Ok(Self { env, dotenv })
    }

    /// The value of `name` and where it came from, ignoring empty values.
    pub fn lookup(&self, name: &str) -> Option<(&str, Origin)> {
        fn non_empty(value: &str) -> Option<&str> {
            (!value.trim().is_empty()).then_some(value)
        }
        self.env
            .get(name)
            .map(String::as_str)
            .and_then(non_empty)
            .map(|v| (v, Origin::Env))
            .or_else(|| {
                self.dotenv
                    .get(name)
                    .map(String::as_str)
                    .and_then(non_empty)
                    .map(|v| (v, Origin::DotEnv))
            })
    }

    /// The value of `name`, ignoring empty values.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.lookup(name).map(|(v, _)| v)
    }

    /// Every variable with one of `prefixes`, for passing a family through to a child process.
    pub fn with_prefixes<'a>(
        &'a self,
        prefixes: &'a [&'a str],
    ) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        let mut names: Vec<&str> = self
            .env
            .keys()
            .chain(self.dotenv.keys())
            .map(String::as_str)
            .filter(|k| prefixes.iter().any(|p| k.starts_with(p)))
            .collect();
        names.sort_unstable();
        names.dedup();
        names
            .into_iter()
            .filter_map(move |k| self.get(k).map(|v| (k, v)))
    }
}

/// Values given on the command line; each one wins over every other layer.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--cli-path`: the Copilot CLI program.
    pub cli_path: Option<PathBuf>,
    /// `--workspace`: the workspace root for file tools.
    pub workspace: Option<PathBuf>,
    /// `--policy`: the permission policy file.
    pub policy_file: Option<PathBuf>,
    /// `--audit-dir`: where audit JSONL goes.
    pub audit_dir: Option<PathBuf>,
    /// `--log-level`.
    pub log_level: Option<String>,
    /// `--model`: the model for new sessions.
    pub model: Option<String>,
}

/// Log verbosity, with the original design's names (also passed to the Copilot CLI).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    /// Nothing.
    None,
    /// Errors only.
    Error,
    /// Warnings and errors.
    Warning,
    /// The default.
    Info,
    /// Debugging detail.
    Debug,
    /// Everything, including trace.
    All,
}

impl LogLevel {
    const ACCEPTED: &'static str = "debug, info, warning, error, none or all";

    fn parse(variable: &str, value: &str) -> Result<Self, ConfigError> {
        match value.trim().to_ascii_lowercase().as_str() {
            "none" => Ok(Self::None),
            "error" => Ok(Self::Error),
            "warning" | "warn" => Ok(Self::Warning),
            "info" => Ok(Self::Info),
            "debug" => Ok(Self::Debug),
            "all" => Ok(Self::All),
            _ => Err(invalid(variable, value, Self::ACCEPTED)),
        }
    }

    /// The `tracing` filter directive for this level.
    pub fn tracing_directive(self) -> &'static str {
        match self {
            Self::None => "off",
            Self::Error => "error",
            Self::Warning => "warn",
            Self::Info => "info",
            Self::Debug => "debug",
            Self::All => "trace",
        }
    }

    /// The Copilot CLI's `--log-level` value for this level.
    pub fn cli_value(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Error => "error",
            Self::Warning => "warning",
            Self::Info => "info",
            Self::Debug => "debug",
            Self::All => "all",
        }
    }
}

/// A bring-your-own-key model provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByokProvider {
    /// OpenAI or any OpenAI-compatible server.
    OpenAi,
    /// Azure OpenAI.
    Azure,
    /// Anthropic.
    Anthropic,
    /// Ollama's OpenAI-compatible API.
    Ollama,
}

impl ByokProvider {
    const ACCEPTED: &'static str = "openai, azure, anthropic or ollama";

    fn parse(value: &str) -> Result<Self, ConfigError> {
        match value.trim().to_ascii_lowercase().as_str() {
            "openai" => Ok(Self::OpenAi),
            "azure" => Ok(Self::Azure),
            "anthropic" => Ok(Self::Anthropic),
            "ollama" => Ok(Self::Ollama),
            _ => Err(invalid("COPILOT_BYOK_PROVIDER", value, Self::ACCEPTED)),
        }
    }

    /// The Copilot CLI's `COPILOT_PROVIDER_TYPE` for this provider (Ollama speaks OpenAI).
    pub fn cli_type(self) -> &'static str {
        match self {
            Self::OpenAi | Self::Ollama => "openai",
            Self::Azure => "azure",
            Self::Anthropic => "anthropic",
        }
    }
}

/// BYOK settings: a model provider used instead of a GitHub login.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Byok {
    /// The provider.
    pub provider: ByokProvider,
    /// Its base URL (`http(s)://…`).
    pub base_url: String,
    /// Its API key, when it needs one.
    pub api_key: Option<Secret>,
    /// The model name.
    pub model: Option<String>,
}

/// Where the OpenClaw gateway is and how to authenticate to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayConfig {
    /// Host name or address.
    pub host: String,
    /// TCP port (1–65535).
    pub port: u16,
    /// Gateway token; gateway mode is on only when this is set.
    pub token: Option<Secret>,
}

/// The resolved configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// GitHub token for the Copilot CLI (`COPILOT_GITHUB_TOKEN`, else `GH_TOKEN`, else `GITHUB_TOKEN`).
    pub github_token: Option<Secret>,
    /// BYOK provider settings, when configured.
    pub byok: Option<Byok>,
    /// The Copilot CLI program; `None` means `copilot` on `PATH`.
    pub cli_path: Option<PathBuf>,
    /// The model for new sessions (`--model`, else `COPILOT_BYOK_MODEL`).
    pub model: Option<String>,
    /// Log verbosity.
    pub log_level: LogLevel,
    /// The OpenClaw gateway.
    pub gateway: GatewayConfig,
    /// Directory of the audit JSONL files.
    pub audit_dir: PathBuf,
    /// Extra context added to every prompt.
    pub project_context: Option<String>,
    /// Retries for rate limits and transient errors (≥ 1).
    pub max_retries: u32,
    /// The permission policy file; `None` means the built-in default policy.
    pub policy_file: Option<PathBuf>,
    /// Calls at or beyond this depth are refused (≥ 1).
    pub max_depth: u32,
    /// Cap on text returned to clients, in bytes.
    pub output_limit_bytes: usize,
    /// Default timeout of a delegated task, in milliseconds.
    pub timeout_ms: u64,
    /// A long-lived session idle this long is stopped, in milliseconds.
    pub session_idle_ms: u64,
    /// How long a reviewer has to decide an approval asked through OpenClaw, in milliseconds
    /// (at most [`MAX_APPROVAL_TIMEOUT_MS`]).
    pub approval_timeout_ms: u64,
    /// Workspace root for the file tools; `None` means the server's working directory.
    pub workspace: Option<PathBuf>,
    /// The bridge's own state (sessions, device identity): `~/.copilot-bridge` by default.
    pub state_dir: PathBuf,
    /// The call depth inherited from the parent process's environment, unparsed.
    pub inherited_depth: Option<String>,
    /// The layer the values were read from, for passing variable families to children.
    pub env: EnvLayer,
}

impl Config {
    /// Resolves the configuration from command-line overrides over `env`.
    pub fn resolve(overrides: Overrides, env: EnvLayer) -> Result<Self, ConfigError> {
        // Destructure so a new override cannot be silently ignored.
        let Overrides {
            cli_path,
            workspace,
            policy_file,
            audit_dir,
            log_level,
            model,
        } = overrides;

        let home = env.get("HOME").map(PathBuf::from);
        let state_dir = match (env.get("COPILOT_BRIDGE_STATE_DIR"), &home) {
            (Some(dir), _) => PathBuf::from(dir),
            (None, Some(home)) => home.join(".copilot-bridge"),
            (None, None) => return Err(ConfigError::NoHome),
        };
        let audit_dir = audit_dir
            .or_else(|| env.get("COPILOT_AUDIT_LOG_DIR").map(PathBuf::from))
            .unwrap_or_else(|| state_dir.join("audit"));

        let log_level = match log_level {
            Some(value) => LogLevel::parse("--log-level", &value)?,
            None => env
                .get("COPILOT_LOG_LEVEL")
                .map(|v| LogLevel::parse("COPILOT_LOG_LEVEL", v))
                .transpose()?
                .unwrap_or(LogLevel::Info),
        };

        let byok = resolve_byok(&env)?;
        let model = model.or_else(|| byok.as_ref().and_then(|b| b.model.clone()));

        let gateway = GatewayConfig {
            host: env
                .get("OPENCLAW_HOST")
                .map_or_else(|| DEFAULT_OPENCLAW_HOST.to_owned(), |h| h.trim().to_owned()),
            port: env
                .get("OPENCLAW_PORT")
                .map(|v| {
                    parse_number::<u16>("OPENCLAW_PORT", v, 1, "a port number from 1 to 65535")
                })
                .transpose()?
                .unwrap_or(DEFAULT_OPENCLAW_PORT),
            token: env.get("OPENCLAW_GATEWAY_TOKEN").map(Secret::new),
        };
        if gateway.host.contains(['/', ' ']) {
            return Err(invalid(
                "OPENCLAW_HOST",
                &gateway.host,
                "a host name or IP address without scheme or path, e.g. 127.0.0.1",
            ));
        }

        Ok(Self {
            github_token: ["COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"]
                .iter()
                .find_map(|name| env.get(name))
                .map(Secret::new),
            byok,
            cli_path: cli_path.or_else(|| env.get("COPILOT_CLI_PATH").map(PathBuf::from)),
            model,
            log_level,
            gateway,
            audit_dir,
            project_context: env.get("COPILOT_PROJECT_CONTEXT").map(str::to_owned),
            max_retries: env
                .get("COPILOT_MAX_RETRIES")
                .map(|v| parse_number("COPILOT_MAX_RETRIES", v, 1, "an integer ≥ 1"))
                .transpose()?
                .unwrap_or(DEFAULT_MAX_RETRIES),
            policy_file: policy_file
                .or_else(|| env.get("COPILOT_BRIDGE_POLICY_FILE").map(PathBuf::from)),
            max_depth: env
                .get("COPILOT_BRIDGE_MAX_DEPTH")
                .map(|v| parse_number("COPILOT_BRIDGE_MAX_DEPTH", v, 1, "an integer ≥ 1"))
                .transpose()?
                .unwrap_or(DEFAULT_MAX_DEPTH),
            output_limit_bytes: env
                .get("COPILOT_BRIDGE_OUTPUT_LIMIT")
                .map(|v| {
                    parse_number(
                        "COPILOT_BRIDGE_OUTPUT_LIMIT",
                        v,
                        MIN_OUTPUT_LIMIT_BYTES,
                        "a byte count ≥ 1024",
                    )
                })
                .transpose()?
                .unwrap_or(DEFAULT_OUTPUT_LIMIT_BYTES),
            timeout_ms: millis(&env, "COPILOT_BRIDGE_TIMEOUT_MS", DEFAULT_TIMEOUT_MS)?,
            session_idle_ms: millis(
                &env,
                "COPILOT_BRIDGE_SESSION_IDLE_MS",
                DEFAULT_SESSION_IDLE_MS,
            )?,
            approval_timeout_ms: approval_timeout_ms(&env)?,
            workspace: workspace.or_else(|| env.get("COPILOT_BRIDGE_WORKSPACE").map(PathBuf::from)),
            state_dir,
            inherited_depth: env.get(DEPTH_ENV).map(str::to_owned),
            env,
        })
    }

    /// The environment variables the Copilot CLI reads for BYOK, mapped from ours.
    pub fn byok_cli_env(&self) -> Vec<(&'static str, String)> {
        let Some(byok) = &self.byok else {
            return Vec::new();
        };
        let mut vars = vec![
            ("COPILOT_PROVIDER_TYPE", byok.provider.cli_type().to_owned()),
            ("COPILOT_PROVIDER_BASE_URL", byok.base_url.clone()),
        ];
        if let Some(key) = &byok.api_key {
            vars.push(("COPILOT_PROVIDER_API_KEY", key.expose().to_owned()));
        }
        if let Some(model) = &self.model {
            vars.push(("COPILOT_MODEL", model.clone()));
        }
        vars
    }
}

fn resolve_byok(env: &EnvLayer) -> Result<Option<Byok>, ConfigError> {
    let provider = env.get("COPILOT_BYOK_PROVIDER");
    let base_url = env.get("COPILOT_BYOK_BASE_URL");
    let api_key = env.get("COPILOT_BYOK_API_KEY");
    let model = env.get("COPILOT_BYOK_MODEL").map(|m| m.trim().to_owned());
    if provider.is_none() && base_url.is_none() && api_key.is_none() {
        return Ok(None);
    }
    let provider = provider
        .map(ByokProvider::parse)
        .transpose()?
        .unwrap_or(ByokProvider::OpenAi);
    let base_url = match (base_url, provider) {
        (Some(url), _) => {
            let url = url.trim();
            if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() < 10 {
                return Err(invalid(
                    "COPILOT_BYOK_BASE_URL",
                    url,
                    "an http:// or https:// URL, e.g. https://api.openai.com/v1",
                ));
            }
            url.trim_end_matches('/').to_owned()
        }
        (None, ByokProvider::Ollama) => DEFAULT_OLLAMA_BASE_URL.to_owned(),
        (None, _) => {
            return Err(ConfigError::Missing {
                variable: "COPILOT_BYOK_BASE_URL",
                because: "COPILOT_BYOK_PROVIDER or COPILOT_BYOK_API_KEY is set",
            });
        }
    };
    Ok(Some(Byok {
        provider,
        base_url,
        api_key: api_key.map(Secret::new),
        model,
    }))
}

fn invalid(variable: &str, value: &str, expected: &str) -> ConfigError {
    ConfigError::Invalid {
        variable: variable.to_owned(),
        value: value.to_owned(),
        expected: expected.to_owned(),
    }
}

/// A duration variable in milliseconds (≥ 1), or `default` when unset.
/// `COPILOT_BRIDGE_APPROVAL_TIMEOUT_MS`, within what OpenClaw's gateway accepts.
fn approval_timeout_ms(env: &EnvLayer) -> Result<u64, ConfigError> {
    const VARIABLE: &str = "COPILOT_BRIDGE_APPROVAL_TIMEOUT_MS";
    match millis(env, VARIABLE, DEFAULT_APPROVAL_TIMEOUT_MS)? {
        ms if ms <= MAX_APPROVAL_TIMEOUT_MS => Ok(ms),
        ms => Err(invalid(
            VARIABLE,
            &ms.to_string(),
            "milliseconds from 1 to 600000 (OpenClaw's limit)",
        )),
    }
}

fn millis(env: &EnvLayer, variable: &str, default: u64) -> Result<u64, ConfigError> {
    env.get(variable)
        .map(|v| parse_number(variable, v, 1, "milliseconds, an integer ≥ 1"))
        .transpose()
        .map(|v| v.unwrap_or(default))
}

fn parse_number<T>(variable: &str, value: &str, min: T, expected: &str) -> Result<T, ConfigError>
where
    T: std::str::FromStr + PartialOrd + Copy,
{
    match value.trim().parse::<T>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(invalid(variable, value, expected)),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn layer(env: &[(&str, &str)], dotenv: &[(&str, &str)]) -> EnvLayer {
        let own = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<Vec<_>>()
        };
        EnvLayer::from_maps(own(env), own(dotenv))
    }

    fn resolve(env: &[(&str, &str)]) -> Result<Config, ConfigError> {
        Config::resolve(Overrides::default(), layer(env, &[]))
    }

    #[test]
    fn defaults_apply_when_nothing_is_set() -> anyhow::Result<()> {
        let config = resolve(&[("HOME", "/home/u")])?;
        assert_eq!(
            config.audit_dir,
            PathBuf::from("/home/u/.copilot-bridge/audit")
        );
        assert_eq!(config.state_dir, PathBuf::from("/home/u/.copilot-bridge"));
        assert_eq!(
            config.gateway,
            GatewayConfig {
                host: "127.0.0.1".into(),
                port: 18789,
                token: None
            }
        );
        assert_eq!(config.max_retries, 3);
        assert_eq!(config.max_depth, 3);
        assert_eq!(config.output_limit_bytes, 10 * 1024);
        assert_eq!(config.timeout_ms, 120_000);
        assert_eq!(config.session_idle_ms, 1_800_000);
        assert_eq!(config.approval_timeout_ms, 50_000);
        assert_eq!(config.log_level, LogLevel::Info);
        assert!(config.byok.is_none() && config.github_token.is_none());
        Ok(())
    }

    #[test]
    fn cli_beats_env_beats_dotenv() -> anyhow::Result<()> {
        let env = layer(
            &[
                ("HOME", "/h"),
                ("COPILOT_LOG_LEVEL", "debug"),
                ("COPILOT_AUDIT_LOG_DIR", "/env"),
            ],
            &[
                ("COPILOT_LOG_LEVEL", "error"),
                ("COPILOT_AUDIT_LOG_DIR", "/dot"),
                ("OPENCLAW_PORT", "9"),
            ],
        );
        let overrides = Overrides {
            audit_dir: Some("/cli".into()),
            ..Overrides::default()
        };
        let config = Config::resolve(overrides, env)?;
        assert_eq!(config.audit_dir, PathBuf::from("/cli"));
        assert_eq!(config.log_level, LogLevel::Debug);
        assert_eq!(config.gateway.port, 9);
        assert_eq!(
            config.env.lookup("OPENCLAW_PORT"),
            Some(("9", Origin::DotEnv))
        );
        Ok(())
    }

    #[test]
    fn empty_values_count_as_unset() -> anyhow::Result<()> {
        let config = resolve(&[
            ("HOME", "/h"),
            ("OPENCLAW_PORT", ""),
            ("COPILOT_BYOK_PROVIDER", " "),
        ])?;
        assert_eq!(config.gateway.port, 18789);
        assert!(config.byok.is_none());
        Ok(())
    }

    #[test]
    fn bad_values_name_variable_value_and_accepted_set() {
        let cases = [
            (
                "COPILOT_LOG_LEVEL",
                "loud",
                "debug, info, warning, error, none or all",
            ),
            ("OPENCLAW_PORT", "0", "a port number from 1 to 65535"),
            ("OPENCLAW_PORT", "65536", "a port number from 1 to 65535"),
            ("OPENCLAW_PORT", "http", "a port number from 1 to 65535"),
            ("COPILOT_MAX_RETRIES", "0", "an integer ≥ 1"),
            ("COPILOT_MAX_RETRIES", "-2", "an integer ≥ 1"),
            (
                "COPILOT_BYOK_PROVIDER",
                "gemini",
                "openai, azure, anthropic or ollama",
            ),
            ("COPILOT_BRIDGE_MAX_DEPTH", "zero", "an integer ≥ 1"),
            ("COPILOT_BRIDGE_OUTPUT_LIMIT", "10", "a byte count ≥ 1024"),
            ("OPENCLAW_HOST", "http://x/", "a host name or IP address"),
        ];
        for (variable, value, expected) in cases {
            let err = resolve(&[
                ("HOME", "/h"),
                (variable, value),
                ("COPILOT_BYOK_BASE_URL", "http://127.0.0.1:1/v1"),
            ])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
            assert!(err.contains(variable), "{variable}: {err}");
            assert!(err.contains(value), "{variable}: {err}");
            assert!(err.contains(expected), "{variable}: {err}");
        }
    }

    #[test]
    fn byok_maps_onto_the_cli_variables() -> anyhow::Result<()> {
        let config = resolve(&[
            ("HOME", "/h"),
            ("COPILOT_BYOK_PROVIDER", "ollama"),
            ("COPILOT_BYOK_MODEL", "llama3"),
            ("COPILOT_BYOK_API_KEY", "k-123"),
        ])?;
        assert_eq!(
            config.byok_cli_env(),
            vec![
                ("COPILOT_PROVIDER_TYPE", "openai".to_owned()),
                (
                    "COPILOT_PROVIDER_BASE_URL",
                    DEFAULT_OLLAMA_BASE_URL.to_owned()
                ),
                ("COPILOT_PROVIDER_API_KEY", "k-123".to_owned()),
                ("COPILOT_MODEL", "llama3".to_owned()),
            ]
        );
        Ok(())
    }

    #[test]
    fn byok_without_base_url_is_an_error_unless_ollama() {
        let err = resolve(&[("HOME", "/h"), ("COPILOT_BYOK_PROVIDER", "openai")]).err();
        assert!(matches!(
            err,
            Some(ConfigError::Missing {
                variable: "COPILOT_BYOK_BASE_URL",
                ..
            })
        ));
        let err = resolve(&[("HOME", "/h"), ("COPILOT_BYOK_BASE_URL", "ftp://x")]).err();
        assert!(matches!(err, Some(ConfigError::Invalid { .. })));
    }

    #[test]
    fn github_token_falls_back_through_the_cli_order() -> anyhow::Result<()> {
        let config = resolve(&[("HOME", "/h"), ("GITHUB_TOKEN", "c"), ("GH_TOKEN", "b")])?;
        assert_eq!(
            config.github_token.map(|t| t.expose().to_owned()),
            Some("b".to_owned())
        );
        Ok(())
    }

    #[test]
    fn secrets_never_show_in_debug_or_display() -> anyhow::Result<()> {
        let config = resolve(&[
            ("HOME", "/h"),
            ("COPILOT_GITHUB_TOKEN", "ghp_supersecretvalue"),
            ("OPENCLAW_GATEWAY_TOKEN", "gateway-secret-value"),
            ("COPILOT_BYOK_BASE_URL", "http://127.0.0.1:1/v1"),
            ("COPILOT_BYOK_API_KEY", "byok-secret-value"),
        ])?;
        let shown = format!("{config:?} {}", Secret::new("x1"));
        assert!(shown.contains("[REDACTED]"));
        for secret in [
            "ghp_supersecretvalue",
            "gateway-secret-value",
            "byok-secret-value",
            "x1",
        ] {
            assert!(!shown.contains(secret), "{shown}");
        }
        Ok(())
    }

    #[test]
    fn missing_home_without_explicit_dirs_is_an_error() {
        assert!(matches!(resolve(&[]), Err(ConfigError::NoHome)));
        assert!(resolve(&[("COPILOT_BRIDGE_STATE_DIR", "/s")]).is_ok());
    }

    #[test]
    fn prefixed_variables_pass_through_once_with_env_winning() {
        let env = layer(
            &[("OPENCLAW_PROFILE", "work"), ("X", "1")],
            &[("OPENCLAW_PROFILE", "home"), ("OPENCLAW_HOME", "/oc")],
        );
        let vars: Vec<_> = env.with_prefixes(&["OPENCLAW_"]).collect();
        assert_eq!(
            vars,
            vec![("OPENCLAW_HOME", "/oc"), ("OPENCLAW_PROFILE", "work")]
        );
    }

    #[test]
    fn dotenv_file_is_read_and_a_missing_one_is_normal() -> anyhow::Result<()> {
        let dir = tempfile::TempDir::new()?;
        let path = dir.path().join(".env");
        assert!(
            EnvLayer::capture(&path)?
                .get("BRIDGE_TEST_ONLY_IN_DOTENV")
                .is_none()
        );
        std::fs::write(
            &path,
            "# comment\nBRIDGE_TEST_ONLY_IN_DOTENV=\"from file\"\n",
        )?;
        let env = EnvLayer::capture(&path)?;
        assert_eq!(
            env.lookup("BRIDGE_TEST_ONLY_IN_DOTENV"),
            Some(("from file", Origin::DotEnv))
        );
        std::fs::write(&path, "BROKEN LINE WITHOUT EQUALS\n")?;
        let err = EnvLayer::capture(&path)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains(".env"), "{err}");
        Ok(())
    }
}
