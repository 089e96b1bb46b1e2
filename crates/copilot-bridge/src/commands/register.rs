//! `copilot-bridge register <client>` and `unregister <client>`: write (or remove) both servers
//! in a client's own user-level configuration with absolute paths, touching nothing else. Every
//! change is planned first; `--print` shows the plan, otherwise each file is replaced
//! atomically after a backup, and a plan with nothing in it writes nothing.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use bridge_core::config::EnvLayer;

use crate::acp::MemoryLaunch;
use crate::global_args::GlobalArgs;

/// The clients, their files and our entries.
mod client;
/// A client's own `mcp` command line.
mod client_cli;
/// Reading, atomic writing, backups and diffs of config files.
mod file;
/// Format-preserving JSON/JSONC/JSON5 edits.
mod json_doc;
/// The persona block in OpenClaw's `AGENTS.md`.
mod persona;
/// Format-preserving TOML edits (Codex).
mod toml_doc;

use client::{Binaries, Client, Layout};
use client_cli::Cli;
use json_doc::Edited;

/// Arguments of `copilot-bridge register`.
#[derive(Debug, clap::Args)]
pub struct RegisterArgs {
    /// The client to register both servers with.
    #[arg(value_enum)]
    pub client: Client,
    /// Show what would change (a diff, or the commands to run) without changing anything.
    #[arg(long)]
    pub print: bool,
    /// OpenClaw only: also install the persona snippet (when and how to delegate to Copilot)
    /// into the workspace's AGENTS.md, between markers.
    #[arg(long)]
    pub persona: bool,
    /// Edit this file instead of the client's usual one (the CLI is not used then).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Edit the config file directly even when the client's own CLI (`openclaw`, `claude`,
    /// `copilot`) is on PATH.
    #[arg(long)]
    pub no_cli: bool,
}

/// Arguments of `copilot-bridge unregister`.
#[derive(Debug, clap::Args)]
pub struct UnregisterArgs {
    /// The client to remove both servers from (and, for OpenClaw, the persona block).
    #[arg(value_enum)]
    pub client: Client,
    /// Show what would change without changing anything.
    #[arg(long)]
    pub print: bool,
    /// Edit this file instead of the client's usual one (the CLI is not used then).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Edit the config file directly even when the client's own CLI (`openclaw`, `claude`,
    /// `copilot`) is on PATH.
    #[arg(long)]
    pub no_cli: bool,
}

/// One change a registration makes.
#[derive(Debug)]
enum Step {
    /// Replace or delete a file.
    File {
        path: PathBuf,
        before: Option<String>,
        after: Edited,
        what: String,
    },
    /// Run a client's own CLI.
    Run {
        program: PathBuf,
        args: Vec<String>,
        what: String,
    },
}

/// The common part of both commands' arguments.
struct Target<'a> {
    client: Client,
    config: Option<&'a Path>,
    no_cli: bool,
}

/// `copilot-bridge register`.
pub fn register(global: &GlobalArgs, args: &RegisterArgs) -> anyhow::Result<ExitCode> {
    let env = EnvLayer::capture(&global.env_file)?;
    let binaries = binaries(&env)?;
    let target = Target {
        client: args.client,
        config: args.config.as_deref(),
        no_cli: args.no_cli,
    };
    if args.persona && args.client != Client::Openclaw {
        anyhow::bail!("--persona is for OpenClaw only (`register openclaw --persona`)");
    }
    let (path, mut steps) = plan_register(&env, &target, &binaries)?;
    if args.persona {
        steps.extend(plan_persona(&env, &path, true)?);
    }
    finish(args.client, &path, steps, args.print, "registered")
}

/// `copilot-bridge unregister`.
pub fn unregister(global: &GlobalArgs, args: &UnregisterArgs) -> anyhow::Result<ExitCode> {
    let env = EnvLayer::capture(&global.env_file)?;
    let target = Target {
        client: args.client,
        config: args.config.as_deref(),
        no_cli: args.no_cli,
    };
    let path = config_path(&env, &target)?;
    let before = file::read(&path)?;
    let names = args.client.server_names();
    let mut steps = Vec::new();
    match (args.client.json_keys(), client_cli(&env, &target)) {
        (Some(keys), Some((cli, program))) => {
            let current = json_doc::entries(&path, before.as_deref(), keys)?;
            for name in names.iter().filter(|n| current.contains_key(**n)) {
                steps.push(Step::Run {
                    program: program.clone(),
                    args: cli.remove(name),
                    what: format!("remove {name}"),
                });
            }
        }
        (Some(keys), None) => {
            let after = json_doc::remove(&path, before.as_deref(), keys, names)?;
            push_file(
                &mut steps,
                path.clone(),
                before,
                after,
                "remove our servers",
            );
        }
        (None, _) => {
            let after = toml_doc::remove(&path, before.as_deref(), names)?;
            push_file(
                &mut steps,
                path.clone(),
                before,
                after,
                "remove our servers",
            );
        }
    }
    if args.client == Client::Openclaw {
        steps.extend(plan_persona(&env, &path, false)?);
    }
    finish(args.client, &path, steps, args.print, "unregistered")
}

/// The running `copilot-bridge` and the `openclaw-memory` it would give its sessions, both
/// absolute.
fn binaries(env: &EnvLayer) -> anyhow::Result<Binaries> {
    let bridge = std::env::current_exe().context("cannot tell where copilot-bridge is")?;
    let memory = MemoryLaunch::locate(env)?.program;
    Ok(Binaries {
        bridge: std::path::absolute(&bridge).unwrap_or(bridge),
        memory: std::path::absolute(&memory).unwrap_or(memory),
    })
}

fn config_path(env: &EnvLayer, target: &Target<'_>) -> anyhow::Result<PathBuf> {
    match target.config {
        Some(path) => Ok(std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())),
        None => target
            .client
            .config_path(env)
            .map_err(|why| anyhow::anyhow!("cannot find {}'s config: {why}", target.client.name())),
    }
}

/// The client's own CLI on PATH, when it has one, the target is its usual file and the CLI may
/// be used.
fn client_cli(env: &EnvLayer, target: &Target<'_>) -> Option<(Cli, PathBuf)> {
    if target.no_cli || target.config.is_some() {
        return None;
    }
    let cli = Cli::of(target.client)?;
    Some((cli, cli.locate(env)?))
}

fn push_file(
    steps: &mut Vec<Step>,
    path: PathBuf,
    before: Option<String>,
    after: Edited,
    what: &str,
) {
    if after != Edited::Unchanged {
        steps.push(Step::File {
            path,
            before,
            after,
            what: what.to_owned(),
        });
    }
}

fn plan_register(
    env: &EnvLayer,
    target: &Target<'_>,
    binaries: &Binaries,
) -> anyhow::Result<(PathBuf, Vec<Step>)> {
    let path = config_path(env, target)?;
    let before = file::read(&path)?;
    let mut steps = Vec::new();
    match (target.client.layout(binaries), client_cli(env, target)) {
        (Layout::Json { keys, entries }, Some((cli, program))) => {
            // The client's own CLI writes the file; we only decide what it must do, so a
            // second register runs nothing at all.
            let current = json_doc::entries(&path, before.as_deref(), keys)?;
            for entry in &entries {
                let (commands, what) = match current.get(entry.name) {
                    None => (cli.add(entry), "add"),
                    Some(existing) if json_doc::in_sync(existing, entry) => continue,
                    Some(existing) => (cli.update(entry, existing), "update"),
                };
                for args in commands {
                    steps.push(Step::Run {
                        program: program.clone(),
                        args,
                        what: format!("{what} {}", entry.name),
                    });
                }
            }
        }
        (Layout::Json { keys, entries }, None) => {
            let after = json_doc::upsert(&path, before.as_deref(), keys, &entries)?;
            push_file(&mut steps, path.clone(), before, after, "add our servers");
        }
        (Layout::Toml(entries), _) => {
            let after = toml_doc::upsert(&path, before.as_deref(), &entries)?;
            push_file(&mut steps, path.clone(), before, after, "add our servers");
        }
    }
    Ok((path, steps))
}

/// OpenClaw's workspace, as OpenClaw finds it: `OPENCLAW_WORKSPACE_DIR`, else
/// `agents.defaults.workspace` in its config, else `workspace` in its state directory.
fn openclaw_workspace(env: &EnvLayer, config: &Path) -> anyhow::Result<PathBuf> {
    if let Some(dir) = env.get("OPENCLAW_WORKSPACE_DIR").filter(|v| !v.is_empty()) {
        return Ok(client::expand_home(dir, env));
    }
    let text = file::read(config)?;
    let agents = json_doc::entries(config, text.as_deref(), &["agents", "defaults"])?;
    if let Some(dir) = agents.get("workspace").and_then(serde_json::Value::as_str) {
        return Ok(client::expand_home(dir, env));
    }
    client::openclaw_state_dir(env)
        .map(|dir| dir.join("workspace"))
        .context("cannot find OpenClaw's workspace: set OPENCLAW_WORKSPACE_DIR")
}

fn plan_persona(env: &EnvLayer, config: &Path, install: bool) -> anyhow::Result<Vec<Step>> {
    let agents = openclaw_workspace(env, config)?.join("AGENTS.md");
    let before = file::read(&agents)?;
    let after = if install {
        persona::install(before.as_deref(), persona::SNIPPET)
    } else {
        before.as_deref().and_then(persona::remove)
    };
    let mut steps = Vec::new();
    if let Some(after) = after {
        let what = if install {
            "install the persona"
        } else {
            "remove the persona"
        };
        // An AGENTS.md that held only our block goes with it.
        let after = if after.is_empty() {
            Edited::Empty
        } else {
            Edited::Text(after)
        };
        push_file(&mut steps, agents, before, after, what);
    }
    Ok(steps)
}

/// Prints or applies the plan and says what happened.
fn finish(
    client: Client,
    path: &Path,
    steps: Vec<Step>,
    print: bool,
    done: &str,
) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let name = client.name();
    if steps.is_empty() {
        writeln!(
            out,
            "{name}: already {done} ({}); nothing changed",
            path.display()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    for step in steps {
        if print {
            match step {
                Step::File {
                    path,
                    before,
                    after: Edited::Text(after),
                    what,
                } => {
                    writeln!(out, "{name}: would {what} in {}:", path.display())?;
                    out.write_all(file::diff(before.as_deref().unwrap_or(""), &after).as_bytes())?;
                }
                Step::File { path, what, .. } => writeln!(
                    out,
                    "{name}: would {what} and remove {} (nothing else is left in it)",
                    path.display()
                )?,
                Step::Run {
                    program,
                    args,
                    what,
                } => writeln!(
                    out,
                    "{name}: would {what}: {} {}",
                    program.display(),
                    client_cli::shell_words(&args)
                )?,
            }
            continue;
        }
        match step {
            Step::File {
                path,
                before,
                after: Edited::Text(after),
                what,
            } => {
                unchanged_since_read(&path, before.as_deref())?;
                let saved = file::write(&path, &after)?;
                writeln!(
                    out,
                    "{name}: {what}: wrote {}{}",
                    path.display(),
                    backup_note(saved)
                )?;
            }
            Step::File {
                path, before, what, ..
            } => {
                unchanged_since_read(&path, before.as_deref())?;
                let saved = file::delete(&path)?;
                writeln!(
                    out,
                    "{name}: {what}: removed {} (nothing else was left in it){}",
                    path.display(),
                    backup_note(saved)
                )?;
            }
            Step::Run {
                program,
                args,
                what,
            } => {
                client_cli::run(&program, &args)?;
                let shown = program.file_name().unwrap_or_default().to_string_lossy();
                writeln!(
                    out,
                    "{name}: {what}: ran `{shown} {}`",
                    client_cli::shell_words(&args)
                )?;
            }
        }
    }
    if !print {
        writeln!(out, "{name}: {done} ({})", path.display())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Refuses to write over a change someone else (a running client) made since we read the file:
/// our edit was computed from the old text and would undo theirs.
fn unchanged_since_read(path: &Path, before: Option<&str>) -> anyhow::Result<()> {
    anyhow::ensure!(
        file::read(path)?.as_deref() == before,
        "{} changed while it was being edited; nothing was written to it: run the command again",
        path.display()
    );
    Ok(())
}

fn backup_note(saved: Option<PathBuf>) -> String {
    saved.map_or_else(String::new, |p| {
        format!(" (previous version: {})", p.display())
    })
}
