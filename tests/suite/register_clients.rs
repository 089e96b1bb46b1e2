//! `copilot-bridge register` / `unregister` against the real clients: OpenClaw 2026.9.6 (through
//! its own `openclaw mcp` CLI, and by editing a JSON5 `openclaw.json` when the CLI is not on
//! PATH), Claude Code 2.1.332 and Codex 0.171.0 read back what was written and start both
//! servers; Cursor and VS Code files have the documented shape and are restored byte for byte.
//! Every client runs with a temporary HOME, so no real user's files are touched.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use bridge_test_support::{binary_path, claude_code, codex, openclaw};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tempfile::TempDir;

/// One `openclaw` command takes 6–14 s on 2 cores, `mcp add` also probes the server, and
/// `claude mcp list` starts every server: generous, but a hang still fails the test.
const COMMAND_TIMEOUT: Duration = Duration::from_mins(3);

/// Every tool of each server, as OpenClaw must show them (the probe test compares exactly;
/// the registration tests check that each is there).
pub(super) const BRIDGE_TOOLS: [&str; 12] = [
    "copilot_code",
    "copilot_code_task",
    "copilot_code_verbose",
    "copilot_create_file",
    "copilot_list_files",
    "copilot_orchestrate",
    "copilot_read_file",
    "copilot_session_list",
    "copilot_session_live",
    "copilot_session_query",
    "copilot_session_start",
    "copilot_session_stop",
];
pub(super) const MEMORY_TOOLS: [&str; 3] = [
    "openclaw_memory_read",
    "openclaw_memory_search",
    "openclaw_user_prefs",
];

/// The system PATH without any directory holding an `openclaw`, plus `extra` in front.
fn path_with(extra: Option<&Path>) -> OsString {
    let system = std::env::var_os("PATH").unwrap_or_default();
    let dirs = extra
        .map(Path::to_path_buf)
        .into_iter()
        .chain(std::env::split_paths(&system).filter(|d| !d.join("openclaw").exists()));
    std::env::join_paths(dirs).unwrap_or_default()
}

/// Runs `program` with only HOME and PATH set, no stdin, and a bound.
fn run(program: &Path, args: &[&str], home: &Path, path: &OsString) -> anyhow::Result<Output> {
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", path)
        .current_dir(home)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let output = runtime
        .block_on(async { tokio::time::timeout(COMMAND_TIMEOUT, command.output()).await })
        .map_err(|_| anyhow::anyhow!("{} {args:?} did not finish in time", program.display()))??;
    Ok(output)
}

/// Runs `program` and requires success; returns its stdout.
fn ok(program: &Path, args: &[&str], home: &Path, path: &OsString) -> anyhow::Result<String> {
    let output = run(program, args, home, path)?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    anyhow::ensure!(
        output.status.success(),
        "{} {args:?} failed ({}): {stdout}{}",
        program.display(),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(stdout)
}

fn bridge(args: &[&str], home: &Path, path: &OsString) -> anyhow::Result<String> {
    ok(&binary_path("copilot-bridge"), args, home, path)
}

/// The JSON value a command printed after its own chatter.
fn json_after_chatter(stdout: &str) -> anyhow::Result<Value> {
    let start = stdout
        .find('{')
        .ok_or_else(|| anyhow::anyhow!("no JSON in: {stdout}"))?;
    Ok(serde_json::from_str(&stdout[start..])?)
}

fn openclaw_servers(home: &Path, path: &OsString) -> anyhow::Result<Value> {
    json_after_chatter(&ok(&openclaw(), &["mcp", "list", "--json"], home, path)?)
}

/// The bridge's OpenClaw entry as `register openclaw` writes it: a 30-minute call timeout, and
/// the 10 minutes a reviewer has for an approval within it.
fn registered_bridge() -> Value {
    json!({"command": command_of("copilot-bridge"), "requestTimeoutMs": 1_800_000,
           "env": {"COPILOT_BRIDGE_APPROVAL_TIMEOUT_MS": "600000"}})
}

fn command_of(name: &str) -> String {
    binary_path(name).display().to_string()
}

#[test]
fn register_openclaw_through_its_cli_is_probed_idempotent_and_undone() -> anyhow::Result<()> {
    let home = TempDir::new()?;
    let home = home.path();
    let bin = openclaw();
    let path = path_with(bin.parent());
    // Someone else's server and a persona of the user's own, both to be kept.
    let workspace = home.join(".openclaw/workspace");
    std::fs::create_dir_all(&workspace)?;
    ok(
        &bin,
        &["mcp", "set", "other", r#"{"command":"/bin/cat"}"#],
        home,
        &path,
    )?;
    let agents_md = "# Agents\n\nBe brief.\n";
    std::fs::write(workspace.join("AGENTS.md"), agents_md)?;
    let others = openclaw_servers(home, &path)?;

    let said = bridge(&["register", "openclaw", "--persona"], home, &path)?;
    assert!(
        said.contains("ran `openclaw mcp add copilot-bridge"),
        "{said}"
    );

    let mut expected = others.clone();
    expected["copilot-bridge"] = registered_bridge();
    expected["openclaw-memory"] = json!({"command": command_of("openclaw-memory")});
    assert_eq!(openclaw_servers(home, &path)?, expected);
    for (server, tools) in [
        ("copilot-bridge", &BRIDGE_TOOLS[..]),
        ("openclaw-memory", &MEMORY_TOOLS[..]),
    ] {
        let report =
            json_after_chatter(&ok(&bin, &["mcp", "probe", server, "--json"], home, &path)?)?;
        let listed: Vec<&str> = report["tools"]
            .as_array()
            .map(|tools| tools.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for tool in tools {
            let name = format!("{server}__{tool}");
            assert!(listed.contains(&name.as_str()), "{name} missing: {report}");
        }
        assert_eq!(report["diagnostics"], json!([]), "{report}");
    }
    let installed = std::fs::read_to_string(workspace.join("AGENTS.md"))?;
    assert!(installed.starts_with(agents_md), "{installed}");
    assert!(installed.contains("## Delegating coding work to Copilot"));

    let config = home.join(".openclaw/openclaw.json");
    let registered = std::fs::read(&config)?;
    let said = bridge(&["register", "openclaw", "--persona"], home, &path)?;
    assert!(said.contains("nothing changed"), "{said}");
    assert_eq!(std::fs::read(&config)?, registered);
    assert_eq!(
        std::fs::read_to_string(workspace.join("AGENTS.md"))?,
        installed
    );

    bridge(&["unregister", "openclaw"], home, &path)?;
    assert_eq!(openclaw_servers(home, &path)?, others);
    assert_eq!(
        std::fs::read_to_string(workspace.join("AGENTS.md"))?,
        agents_md
    );
    Ok(())
}

#[test]
fn register_openclaw_without_its_cli_edits_json5_in_place() -> anyhow::Result<()> {
    let home = TempDir::new()?;
    let home = home.path();
    let no_cli = path_with(None);
    let with_cli = path_with(openclaw().parent());
    let config = home.join(".openclaw/openclaw.json");
    std::fs::create_dir_all(home.join(".openclaw"))?;
    let original = "// my OpenClaw\n{\n  gateway: { mode: 'local' },\n  mcp: {\n    servers: {\n      \
                    other: { command: '/bin/cat' }, // keep\n    },\n  },\n}\n";
    std::fs::write(&config, original)?;

    let said = bridge(&["register", "openclaw"], home, &no_cli)?;
    assert!(said.contains("previous version"), "{said}");
    let registered = std::fs::read_to_string(&config)?;
    assert!(registered.starts_with("// my OpenClaw\n"), "{registered}");
    assert!(registered.contains("// keep"), "{registered}");
    assert_eq!(
        std::fs::read_to_string(home.join(".openclaw/openclaw.json.copilot-bridge.bak"))?,
        original
    );
    // The real OpenClaw reads the edited JSON5 back with both servers.
    assert_eq!(
        openclaw_servers(home, &with_cli)?,
        json!({
            "other": {"command": "/bin/cat"},
            "copilot-bridge": registered_bridge(),
            "openclaw-memory": {"command": command_of("openclaw-memory")},
        })
    );

    let said = bridge(&["register", "openclaw"], home, &no_cli)?;
    assert!(said.contains("nothing changed"), "{said}");
    assert_eq!(std::fs::read_to_string(&config)?, registered);

    bridge(&["unregister", "openclaw"], home, &no_cli)?;
    assert_eq!(std::fs::read_to_string(&config)?, original);
    Ok(())
}

#[test]
fn a_malformed_openclaw_json_is_never_overwritten() -> anyhow::Result<()> {
    let home = TempDir::new()?;
    let home = home.path();
    let config = home.join(".openclaw/openclaw.json");
    std::fs::create_dir_all(home.join(".openclaw"))?;
    let broken = "{\n  mcp: {\n    servers: { x: { command: } }\n  }\n}\n";
    std::fs::write(&config, broken)?;
    let output = run(
        &binary_path("copilot-bridge"),
        &["register", "openclaw"],
        home,
        &path_with(None),
    )?;
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("{}: not valid JSON", config.display()))
            && stderr.contains("line 3"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&config)?, broken);
    Ok(())
}

/// Through `claude mcp add-json --scope user` when `claude` is on PATH, and by editing
/// `~/.claude.json` when it is not: either way Claude Code starts both servers.
#[test]
fn claude_code_connects_to_both_registered_servers() -> anyhow::Result<()> {
    let claude = claude_code();
    for cli_on_path in [true, false] {
        let home = TempDir::new()?;
        let home = home.path();
        let path = path_with(cli_on_path.then(|| claude.parent()).flatten());
        let said = bridge(&["register", "claude-code"], home, &path)?;
        assert_eq!(
            said.contains("ran `claude mcp add-json"),
            cli_on_path,
            "{said}"
        );
        let listed = ok(&claude, &["mcp", "list"], home, &path)?;
        for server in ["copilot-bridge", "openclaw-memory"] {
            let line = format!("{server}: {}  - ✔ Connected", command_of(server));
            assert!(listed.contains(&line), "{line} missing from:\n{listed}");
        }
        let config = home.join(".claude.json");
        let registered = std::fs::read(&config)?;
        let said = bridge(&["register", "claude-code"], home, &path)?;
        assert!(said.contains("nothing changed"), "{said}");
        assert_eq!(std::fs::read(&config)?, registered);

        bridge(&["unregister", "claude-code"], home, &path)?;
        let listed = ok(&claude, &["mcp", "list"], home, &path)?;
        assert!(
            !listed.contains("copilot-bridge") && !listed.contains("openclaw-memory"),
            "{listed}"
        );
    }
    Ok(())
}

/// The Copilot CLI gets the memory server only, through `copilot mcp add` when it is on PATH.
#[test]
fn copilot_cli_lists_the_registered_memory_server() -> anyhow::Result<()> {
    let copilot = bridge_test_support::copilot_cli();
    for cli_on_path in [true, false] {
        let home = TempDir::new()?;
        let home = home.path();
        let path = path_with(cli_on_path.then(|| copilot.parent()).flatten());
        let said = bridge(&["register", "copilot"], home, &path)?;
        assert_eq!(said.contains("ran `copilot mcp add"), cli_on_path, "{said}");
        let listed = json_after_chatter(&ok(&copilot, &["mcp", "list", "--json"], home, &path)?)?;
        let servers = &listed["mcpServers"];
        assert_eq!(
            (
                servers["openclaw-memory"]["command"].as_str(),
                servers["openclaw-memory"]["type"].as_str(),
                servers.get("copilot-bridge"),
            ),
            (
                Some(command_of("openclaw-memory").as_str()),
                Some("local"),
                None
            ),
            "{listed}"
        );
        let config = home.join(".copilot/mcp-config.json");
        let registered = std::fs::read(&config)?;
        let said = bridge(&["register", "copilot"], home, &path)?;
        assert!(said.contains("nothing changed"), "{said}");
        assert_eq!(std::fs::read(&config)?, registered);

        bridge(&["unregister", "copilot"], home, &path)?;
        let listed = ok(&copilot, &["mcp", "list", "--json"], home, &path)?;
        assert!(!listed.contains("openclaw-memory"), "{listed}");
    }
    Ok(())
}

#[test]
fn codex_lists_both_registered_servers() -> anyhow::Result<()> {
    let home = TempDir::new()?;
    let home = home.path();
    let path = path_with(None);
    let codex = codex();
    let config = home.join(".codex/config.toml");
    std::fs::create_dir_all(home.join(".codex"))?;
    let original = "# mine\nmodel = \"o4\"  # default\n\n[profiles.fast]\nmodel = \"o4-mini\"\n";
    std::fs::write(&config, original)?;

    bridge(&["register", "codex"], home, &path)?;
    let listed = ok(&codex, &["mcp", "list", "--json"], home, &path)?;
    let listed: Value = serde_json::from_str(listed.trim())?;
    let mut names: Vec<(String, String)> = listed
        .as_array()
        .map(|servers| {
            servers
                .iter()
                .map(|s| {
                    (
                        s["name"].as_str().unwrap_or_default().to_owned(),
                        s["transport"]["command"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    assert_eq!(
        names,
        vec![
            ("copilot-bridge".to_owned(), command_of("copilot-bridge")),
            ("openclaw-memory".to_owned(), command_of("openclaw-memory")),
        ],
        "{listed}"
    );
    let timeouts: Vec<&Value> = listed
        .as_array()
        .map(|servers| servers.iter().map(|s| &s["tool_timeout_sec"]).collect())
        .unwrap_or_default();
    assert_eq!(timeouts, [&json!(1800.0), &Value::Null], "{listed}");
    let registered = std::fs::read(&config)?;
    bridge(&["register", "codex"], home, &path)?;
    assert_eq!(std::fs::read(&config)?, registered);

    bridge(&["unregister", "codex"], home, &path)?;
    assert_eq!(std::fs::read_to_string(&config)?, original);
    let listed = ok(&codex, &["mcp", "list", "--json"], home, &path)?;
    assert_eq!(serde_json::from_str::<Value>(listed.trim())?, json!([]));
    Ok(())
}

/// The documented user-level shapes: Cursor's `mcpServers.<name>.{command,args}` and VS Code's
/// `servers.<name>.{type:"stdio",command,args}` (JSONC, comments allowed).
#[test]
fn cursor_and_vscode_files_have_the_documented_shape_and_are_restored_exactly() -> anyhow::Result<()>
{
    let home = TempDir::new()?;
    let home = home.path();
    let path = path_with(None);
    let cases = [
        (
            "cursor",
            home.join(".cursor/mcp.json"),
            "{\n  \"mcpServers\": {\n    \"github\": {\"command\": \"gh-mcp\", \"args\": []}\n  }\n}\n",
            "mcpServers",
            json!({}),
        ),
        (
            "vscode",
            home.join(".config/Code/User/mcp.json"),
            "{\n  // my servers\n  \"servers\": {\n    \"github\": {\"type\": \"http\", \"url\": \"https://example.invalid\"},\n  },\n  \"inputs\": []\n}\n",
            "servers",
            json!({"type": "stdio"}),
        ),
    ];
    for (client, file, original, key, extra) in cases {
        std::fs::create_dir_all(file.parent().unwrap_or(home))?;
        std::fs::write(&file, original)?;
        // --print shows the change and writes nothing.
        let shown = bridge(&["register", client, "--print"], home, &path)?;
        assert!(
            shown.contains("would add our servers")
                && shown.contains("+     \"copilot-bridge\": {"),
            "{shown}"
        );
        assert_eq!(
            std::fs::read_to_string(&file)?,
            original,
            "{client} --print"
        );
        bridge(&["register", client], home, &path)?;
        let written: Value = json5::from_str(&std::fs::read_to_string(&file)?)?;
        for server in ["copilot-bridge", "openclaw-memory"] {
            let mut entry = json!({"command": command_of(server), "args": []});
            if let (Some(entry), Some(extra)) = (entry.as_object_mut(), extra.as_object()) {
                entry.extend(extra.clone());
            }
            assert_eq!(written[key][server], entry, "{client}: {written}");
            assert!(PathBuf::from(command_of(server)).is_absolute());
        }
        assert!(written[key]["github"].is_object(), "{client}: {written}");
        bridge(&["unregister", client], home, &path)?;
        assert_eq!(std::fs::read_to_string(&file)?, original, "{client}");
    }
    Ok(())
}

/// Installed side by side in one directory (what `cargo install --path` of both crates leaves),
/// the bridge registers the memory server found beside it, not the build tree's.
#[test]
fn binaries_copied_into_one_directory_register_each_other() -> anyhow::Result<()> {
    let home = TempDir::new()?;
    let home = home.path();
    let bin = home.join("bin");
    std::fs::create_dir_all(&bin)?;
    for name in ["copilot-bridge", "openclaw-memory"] {
        std::fs::copy(binary_path(name), bin.join(name))?;
    }
    let config = home.join("mcp.json");
    let config_arg = config.display().to_string();
    ok(
        &bin.join("copilot-bridge"),
        &["register", "cursor", "--config", &config_arg],
        home,
        &path_with(None),
    )?;
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&config)?)?;
    assert_eq!(
        written,
        json!({"mcpServers": {
            "copilot-bridge": {"command": bin.join("copilot-bridge"), "args": []},
            "openclaw-memory": {"command": bin.join("openclaw-memory"), "args": []},
        }})
    );
    Ok(())
}
