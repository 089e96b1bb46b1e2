//! `openclaw-memory check [--json]`: what this server will see, checked for real. The
//! workspace is found exactly as the server finds it, the index is built once, and the gateway
//! gets the signed handshake the server would make. `copilot-bridge validate` runs this command
//! of the installed memory server and folds its lines into its own report, so the bridge checks
//! what the memory server really sees without importing any of it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use bridge_core::check::{Check, Report};
use bridge_core::config::Config;

use crate::embeddings::{EMBEDDINGS_ENV, ModelSetting};
use crate::index::MemoryIndex;
use crate::index::rank::RankOptions;
use crate::persist::{IndexCache, state_dir};
use crate::store::MemoryStore;
use crate::workspace::{Discovery, DiscoveryInput, discover};
use openclaw_gateway::{ClientProfile, Gateway, GatewaySettings};

/// How long the gateway's first handshake may take.
const GATEWAY_TIMEOUT: Duration = Duration::from_secs(15);

/// Runs the checks, prints the report (JSON with `json`) and returns 0 only when every required
/// check passed.
/// `workspace` is the `--workspace` flag, if given.
pub(crate) fn run(
    workspace: Option<&Path>,
    config: &Config,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let checks =
        bridge_mcp::block_on(checks(workspace, config)).context("cannot start the runtime")?;
    let report = Report::new(checks);
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &report).context("cannot write stdout")?;
        std::io::Write::write_all(&mut out, b"\n").context("cannot write stdout")?;
    } else {
        std::io::Write::write_all(&mut out, report.render().as_bytes())
            .context("cannot write stdout")?;
    }
    Ok(if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

async fn checks(workspace_flag: Option<&Path>, config: &Config) -> Vec<Check> {
    let discovery = discover(DiscoveryInput {
        flag: workspace_flag,
        env: &config.env,
    });
    let (found, root) = workspace(&discovery);
    let file = index_file(root.as_deref(), config);
    let index = match root {
        Some(root) => tokio::task::spawn_blocking(move || index(&root))
            .await
            .unwrap_or_else(|e| {
                Check::fail(
                    "memory index",
                    format!("the build failed: {e}"),
                    "report a bug",
                )
                .optional()
            }),
        None => Check::skip("memory index", "not built: no workspace"),
    };
    vec![
        found,
        index,
        file,
        embeddings(config),
        gateway(config).await,
    ]
}

/// The embedding model the search will use, if any.
fn embeddings(config: &Config) -> Check {
    let setting = ModelSetting::from_env(&config.env);
    let started = std::time::Instant::now();
    match (setting.load(), &setting) {
        (Ok(Some(model)), _) => Check::pass(
            "embeddings",
            format!(
                "{} ({} dimensions, loaded in {} ms): searches the words cannot answer look for lines close in meaning{}",
                model.source().display(),
                model.dim(),
                started.elapsed().as_millis(),
                if setting.is_earlier_default() {
                    " (an earlier release's model: scripts/fetch-embeddings.sh installs potion-base-8M, which finds more)"
                } else {
                    ""
                }
            ),
        )
        .optional(),
        (Ok(None), ModelSetting::Off) => Check::skip(
            "embeddings",
            format!("{EMBEDDINGS_ENV}=off: matching words only"),
        ),
        (Ok(None), _) => Check::skip(
            "embeddings",
            "no model installed: matching words only (scripts/fetch-embeddings.sh installs one)",
        ),
        (Err(err), _) => Check::fail(
            "embeddings",
            err.to_string(),
            format!("fix {EMBEDDINGS_ENV}, or set it to `off` to match words only"),
        )
        .optional(),
    }
}

/// Where the persisted index of the workspace lives, and whether it is there yet.
fn index_file(root: Option<&Path>, config: &Config) -> Check {
    let Some(root) = root else {
        return Check::skip("index file", "no workspace");
    };
    let Some(dir) = state_dir(&config.env) else {
        return Check::skip(
            "index file",
            "no state directory (set OPENCLAW_MEMORY_STATE_DIR): every process builds its own",
        );
    };
    let Some(cache) = IndexCache::new(&dir, root) else {
        return Check::skip("index file", "the workspace path cannot be resolved");
    };
    let path = cache.path();
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Check::fail(
            "index file",
            format!(
                "{} is a symlink, which is never read or replaced",
                path.display()
            ),
            "remove the symlink; the next search writes the index there",
        )
        .optional(),
        Ok(meta) => Check::pass(
            "index file",
            format!("{} ({} KiB)", path.display(), meta.len() / 1024),
        )
        .optional(),
        Err(_) => Check::pass(
            "index file",
            format!(
                "{} (not written yet: the first search writes it)",
                path.display()
            ),
        )
        .optional(),
    }
}

/// The workspace, found the way the server finds it.
fn workspace(discovery: &Discovery) -> (Check, Option<PathBuf>) {
    let Some(found) = &discovery.workspace else {
        let check = Check::fail(
            "OpenClaw memory",
            format!("none found (looked in: {})", discovery.looked_in_summary()),
            "set OPENCLAW_WORKSPACE_DIR to the folder holding MEMORY.md and memory/ (memory \
             tools answer \"no memory found\" until then)",
        )
        .optional();
        return (check, None);
    };
    let root = &found.root;
    if !root.is_dir() {
        let check = Check::fail(
            "OpenClaw memory",
            format!("{} (from {}) does not exist", root.display(), found.source),
            "correct that setting, or create the workspace with OpenClaw",
        )
        .optional();
        return (check, None);
    }
    let notes = count_notes(&root.join("memory"));
    let has = |name: &str| {
        if root.join(name).is_file() {
            format!("{name} present")
        } else {
            format!("no {name}")
        }
    };
    let check = Check::pass(
        "OpenClaw memory",
        format!(
            "{} (from {}): {notes} daily notes, {}, {}",
            root.display(),
            found.source,
            has("MEMORY.md"),
            has("USER.md")
        ),
    )
    .optional();
    (check, Some(root.clone()))
}

fn count_notes(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .filter_map(Result::ok)
            .filter(|e| {
                let path = e.path();
                path.extension().is_some_and(|x| x == "md") && path.is_file()
            })
            .count()
    })
}

/// Builds the index once, as the first search would.
fn index(root: &Path) -> Check {
    let started = Instant::now();
    let mut index = MemoryIndex::new(MemoryStore::new(root.to_path_buf()), RankOptions::default());
    match index.refresh() {
        Ok(stats) => Check::pass(
            "memory index",
            format!(
                "{} files indexed in {} ms",
                stats.indexed,
                started.elapsed().as_millis()
            ),
        )
        .optional(),
        Err(err) => Check::fail(
            "memory index",
            format!("{err}"),
            "check the permissions of the workspace's memory files",
        )
        .optional(),
    }
}

/// The gateway's signed handshake, when a token is configured.
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
        call_timeout: GATEWAY_TIMEOUT,
        profile: ClientProfile::memory_reader(),
    };
    let url = settings.url();
    let gateway = Gateway::start(settings);
    let outcome = gateway.wait_until_up(GATEWAY_TIMEOUT).await;
    gateway.shutdown().await;
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
    use bridge_core::check::Status;
    use bridge_core::config::EnvLayer;

    use super::*;

    #[test]
    fn a_workspace_is_counted_and_indexed() -> anyhow::Result<()> {
        let dir = tempfile::TempDir::new()?;
        std::fs::create_dir_all(dir.path().join("memory"))?;
        std::fs::write(dir.path().join("memory/2026-01-02.md"), "- a note\n")?;
        std::fs::write(dir.path().join("MEMORY.md"), "# Memory\n")?;
        let env = EnvLayer::from_maps(
            [(
                "OPENCLAW_WORKSPACE_DIR".to_owned(),
                dir.path().display().to_string(),
            )],
            [],
        );
        let discovery = discover(DiscoveryInput {
            flag: None,
            env: &env,
        });
        let (check, root) = workspace(&discovery);
        assert_eq!(check.status, Status::Pass, "{check:?}");
        assert!(check.detail.contains("1 daily notes"), "{check:?}");
        assert!(
            check.detail.contains("MEMORY.md present, no USER.md"),
            "{check:?}"
        );
        let indexed = index(&root.unwrap_or_default());
        assert_eq!(indexed.status, Status::Pass, "{indexed:?}");
        assert!(indexed.detail.starts_with("2 files indexed"), "{indexed:?}");
        Ok(())
    }
}
