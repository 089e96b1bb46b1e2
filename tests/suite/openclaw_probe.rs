//! The real OpenClaw accepts both servers: `openclaw mcp probe` (OpenClaw 2026.9.6) starts each
//! one as registered under `mcp.servers` and lists its tools. One tool schema OpenClaw rejects
//! would drop the whole server, so this runs whenever schemas change.

use std::process::{Command, Stdio};

use bridge_test_support::{binary_path, openclaw};
use serde_json::{Value, json};
use tempfile::TempDir;

use super::register_clients::{BRIDGE_TOOLS, MEMORY_TOOLS};

fn probe(home: &std::path::Path, server: &str) -> anyhow::Result<Value> {
    let output = Command::new(openclaw())
        .args(["mcp", "probe", server, "--json"])
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(Stdio::null())
        .output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    anyhow::ensure!(
        output.status.success(),
        "openclaw mcp probe {server} failed: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The JSON report is the last thing printed; anything before it is OpenClaw's own chatter.
    let start = stdout
        .find('{')
        .ok_or_else(|| anyhow::anyhow!("no JSON in: {stdout}"))?;
    Ok(serde_json::from_str(&stdout[start..])?)
}

#[test]
fn openclaw_lists_every_tool_of_both_servers_without_diagnostics() -> anyhow::Result<()> {
    let home = TempDir::new()?;
    let workspace = home.path().join("ws");
    std::fs::create_dir_all(home.path().join(".openclaw"))?;
    std::fs::create_dir_all(&workspace)?;
    let config = json!({"mcp": {"servers": {
        "copilot-bridge": {
            "command": binary_path("copilot-bridge"),
            "args": ["--workspace", workspace],
        },
        "openclaw-memory": {"command": binary_path("openclaw-memory"), "args": []},
    }}});
    std::fs::write(
        home.path().join(".openclaw/openclaw.json"),
        config.to_string(),
    )?;

    let cases = [
        ("copilot-bridge", &BRIDGE_TOOLS[..]),
        ("openclaw-memory", &MEMORY_TOOLS[..]),
    ];
    for (server, tools) in cases {
        let report = probe(home.path(), server)?;
        let expected: Vec<Value> = tools
            .iter()
            .map(|t| json!(format!("{server}__{t}")))
            .collect();
        assert_eq!(report["tools"], json!(expected), "{report}");
        assert_eq!(report["diagnostics"], json!([]), "{report}");
    }
    Ok(())
}
