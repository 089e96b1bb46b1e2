//! `openclaw-memory` against a REAL OpenClaw gateway (npm `openclaw`, installed by
//! `scripts/peers/openclaw.sh`), started headless on a free loopback port with a temporary HOME:
//! the protocol-v4 handshake with a device identity, a search answered by the gateway, the
//! fallback to the local index while the gateway is stopped, and the reconnect when it returns.
//! The gateway takes 15–45 s to start, so one test walks through all of it.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::time::{Duration, Instant};

use bridge_test_support::{GATEWAY_TOKEN, McpProcess, OpenclawGateway, binary_path, free_port};
use serde_json::{Value, json};
use tempfile::TempDir;

const TOKEN: &str = GATEWAY_TOKEN;
/// Connect (background) plus at most one 30 s backoff step, with room to spare.
const SOURCE_TIMEOUT: Duration = Duration::from_mins(2);

fn start_gateway(home: &Path, port: u16) -> anyhow::Result<OpenclawGateway> {
    OpenclawGateway::start(home, port)
}

async fn search(mcp: &mut McpProcess) -> anyhow::Result<Value> {
    let response = mcp
        .call_tool(
            "openclaw_memory_search",
            json!({"query": "which build server"}),
        )
        .await?;
    Ok(response["result"]["structuredContent"].clone())
}

/// Searches until the answer comes from `source`, returning that answer.
async fn search_until(mcp: &mut McpProcess, source: &str) -> anyhow::Result<Value> {
    let started = Instant::now();
    loop {
        let answer = search(mcp).await?;
        if answer["source"] == json!(source) {
            return Ok(answer);
        }
        anyhow::ensure!(
            started.elapsed() < SOURCE_TIMEOUT,
            "no answer from {source} within {SOURCE_TIMEOUT:?}; last: {answer}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn gateway_answers_searches_and_the_local_index_covers_its_absence() -> anyhow::Result<()> {
    let _slot = OpenclawGateway::slot().await;
    let home = TempDir::new()?;
    let port = free_port()?;
    OpenclawGateway::onboard(home.path(), port)?;
    let workspace = home.path().join(".openclaw/workspace");
    std::fs::create_dir_all(workspace.join("memory"))?;
    std::fs::write(
        workspace.join("MEMORY.md"),
        "# Memory\n\n- The build server is called bluefin and runs Debian 12.\n",
    )?;
    let gateway = start_gateway(home.path(), port)?;

    let port_text = port.to_string();
    let mut mcp = McpProcess::spawn(
        &binary_path("openclaw-memory"),
        &[],
        home.path(),
        &[
            ("OPENCLAW_GATEWAY_TOKEN", TOKEN),
            ("OPENCLAW_PORT", &port_text),
        ],
    )?;
    mcp.initialize().await?;

    // 1. The handshake (with a device identity) succeeds and the gateway answers.
    let answer = search_until(&mut mcp, "gateway").await?;
    assert!(answer.to_string().contains("bluefin"), "{answer}");
    let device = home.path().join(".copilot-bridge/device.json");
    assert_eq!(
        std::fs::metadata(&device)?.permissions().mode() & 0o777,
        0o600
    );

    // `copilot-bridge validate` makes the same signed handshake, and names a wrong token.
    let gateway_check = |token: &str| -> anyhow::Result<Value> {
        let output = std::process::Command::new(binary_path("copilot-bridge"))
            .args(["validate", "--json"])
            .env_clear()
            .env("HOME", home.path())
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("OPENCLAW_GATEWAY_TOKEN", token)
            .env("OPENCLAW_PORT", &port_text)
            .env("COPILOT_CLI_PATH", "/nonexistent/copilot")
            .current_dir(home.path())
            .output()?;
        let report: Value = serde_json::from_slice(&output.stdout)?;
        let checks = report["checks"].as_array().cloned().unwrap_or_default();
        let named = |name: &str| checks.iter().find(|c| c["name"] == name).cloned();
        let memory = named("OpenClaw memory").unwrap_or_default();
        assert_eq!(memory["status"], "pass", "{report}");
        Ok(named("OpenClaw gateway").unwrap_or_default())
    };
    let check = gateway_check(TOKEN)?;
    assert_eq!(check["status"], "pass", "{check}");
    assert!(
        check["detail"]
            .as_str()
            .is_some_and(|d| d.contains("handshake accepted")),
        "{check}"
    );
    let check = gateway_check("wrong-token-0000")?;
    assert_eq!(check["status"], "fail", "{check}");
    assert_eq!(check["required"], true, "{check}");
    assert!(
        check["detail"]
            .as_str()
            .is_some_and(|d| !d.contains("no answer within")),
        "a refused token must be reported as refused, not as silence: {check}"
    );

    // 2. With the gateway gone, the local index answers at once and says why.
    drop(gateway);
    let answer = search_until(&mut mcp, "local").await?;
    assert!(answer.to_string().contains("bluefin"), "{answer}");

    // 3. When the gateway returns, the link reconnects by itself.
    let _gateway = start_gateway(home.path(), port)?;
    let answer = search_until(&mut mcp, "gateway").await?;
    assert!(answer.to_string().contains("bluefin"), "{answer}");
    assert_eq!(mcp.shutdown().await?, Some(0));
    Ok(())
}
