//! Shared setup for the ACP suites: agents built from the scripted test agent or from the real
//! Copilot CLI behind the scripted model, a permission policy for tests, and the check that an
//! agent's process group is really gone.

use std::path::{Path, PathBuf};
use std::time::Duration;

use bridge_core::config::{Config, EnvLayer, Overrides};
use bridge_core::policy::Policy;
use bridge_test_support::{BYOK_API_KEY, CopilotBed, MODEL_ID, binary_path};
use copilot_bridge::acp::{AgentConfig, CopilotLaunch, MemoryLaunch, PermissionGate};

/// How long any single ACP test step may take before the test fails instead of hanging.
pub(crate) const STEP: Duration = Duration::from_mins(1);

/// The policy the suites run under: bridge-core's real policy, from a policy file's text, with
/// one blocked pattern on top of the built-in rules.
pub(crate) const TEST_POLICY: &str = r"blocked_patterns = ['\brm\s+-rf\b']";

/// A gate over [`TEST_POLICY`] (no ask hook: "ask" means deny).
pub(crate) fn test_gate() -> PermissionGate {
    let policy = Policy::from_toml_str(TEST_POLICY, Path::new("acp-test-policy.toml"))
        .unwrap_or_else(|err| panic!("the test policy must compile: {err}"));
    PermissionGate::new(std::sync::Arc::new(policy))
}

/// The scripted agent with `args`, its pid written to `dir/agent.pid` (see [`agent_pid`]).
pub(crate) fn scripted_agent(dir: &Path, args: &[&str]) -> AgentConfig {
    let pid_file = dir.join("agent.pid");
    let mut all: Vec<String> = vec!["--pid-file".into(), pid_file.display().to_string()];
    all.extend(args.iter().map(|a| (*a).to_owned()));
    let mut config = AgentConfig::new(
        "scripted",
        binary_path("scripted-acp-agent"),
        all,
        [("PATH", std::env::var("PATH").unwrap_or_default())],
        dir,
    );
    config.timeouts.request = Duration::from_secs(10);
    config.timeouts.prompt = Duration::from_secs(30);
    config.timeouts.shutdown_grace = Duration::from_millis(500);
    config
}

/// The pid (and process group id) the scripted agent in `dir` wrote last.
pub(crate) fn agent_pid(dir: &Path) -> anyhow::Result<i32> {
    Ok(std::fs::read_to_string(dir.join("agent.pid"))?
        .trim()
        .parse()?)
}

/// Waits until no process (zombies included) is left in process group `pgid`.
pub(crate) async fn assert_group_gone(pgid: i32) -> anyhow::Result<()> {
    let group = rustix::process::Pid::from_raw(pgid)
        .ok_or_else(|| anyhow::anyhow!("{pgid} is not a process id"))?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        if rustix::process::test_kill_process_group(group) == Err(rustix::io::Errno::SRCH) {
            return Ok(());
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "process group {pgid} still has members (running or zombie)"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The bridge configuration a user with BYOK pointed at the bed's model would have (plus
/// `extra` variables), resolved by bridge-core exactly as the binary does it.
pub(crate) fn byok_config(bed: &CopilotBed, extra: &[(&str, &str)]) -> anyhow::Result<Config> {
    let base_url = bed.model.base_url();
    let cli = bed.program().display().to_string();
    let mut vars = bed.base_env();
    vars.extend([
        ("COPILOT_CLI_PATH".to_owned(), cli),
        ("COPILOT_BYOK_PROVIDER".to_owned(), "openai".to_owned()),
        ("COPILOT_BYOK_BASE_URL".to_owned(), base_url),
        ("COPILOT_BYOK_API_KEY".to_owned(), BYOK_API_KEY.to_owned()),
        ("COPILOT_BYOK_MODEL".to_owned(), MODEL_ID.to_owned()),
        ("COPILOT_OFFLINE".to_owned(), "true".to_owned()),
    ]);
    vars.extend(
        extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    resolve(vars)
}

/// The configuration of a user with no login, no token and no BYOK.
pub(crate) fn unauthenticated_config(bed: &CopilotBed) -> anyhow::Result<Config> {
    let mut vars = bed.base_env();
    vars.push((
        "COPILOT_CLI_PATH".to_owned(),
        bed.program().display().to_string(),
    ));
    resolve(vars)
}

fn resolve(vars: Vec<(String, String)>) -> anyhow::Result<Config> {
    Ok(Config::resolve(
        Overrides::default(),
        EnvLayer::from_maps(vars, []),
    )?)
}

/// The real CLI launched the way the bridge launches it, optionally with the memory server.
pub(crate) fn copilot_agent(
    bed: &CopilotBed,
    config: &Config,
    memory: Option<PathBuf>,
) -> anyhow::Result<AgentConfig> {
    let memory = memory.map(|program| MemoryLaunch {
        program,
        args: Vec::new(),
    });
    let mut launch = CopilotLaunch::from_config(config, bed.workspace().to_path_buf(), memory);
    launch.state_dir = bed.home().join("bridge-state");
    let mut agent = launch.build()?;
    agent.timeouts.prompt = Duration::from_mins(1);
    agent.timeouts.shutdown_grace = Duration::from_secs(1);
    Ok(agent)
}
