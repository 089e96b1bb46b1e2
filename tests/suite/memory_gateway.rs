//! `openclaw-memory` against a REAL OpenClaw gateway (npm `openclaw`, installed by
//! `scripts/peers/openclaw.sh`), started headless on a free loopback port with a temporary HOME:
//! the protocol-v4 handshake with a device identity, a search answered by the gateway, the
//! fallback to the local index while the gateway is stopped, and the reconnect when it returns.
//! The gateway takes 15–45 s to start, so one test walks through all of it.

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bridge_test_support::{McpProcess, binary_path, openclaw};
use serde_json::{Value, json};
use tempfile::TempDir;

const TOKEN: &str = "bridge-e2e-gateway-token";
/// First start of the gateway on 2 busy cores can take most of a minute.
const GATEWAY_READY_TIMEOUT: Duration = Duration::from_mins(3);
/// Connect (background) plus at most one 30 s backoff step, with room to spare.
const SOURCE_TIMEOUT: Duration = Duration::from_mins(2);

/// A running gateway; its whole process group is killed on drop.
struct Gateway {
    child: Child,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.child.wait();
    }
}

fn free_port() -> anyhow::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn openclaw_command(home: &Path) -> Command {
    let mut cmd = Command::new(openclaw());
    cmd.env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("OPENCLAW_GATEWAY_TOKEN", TOKEN)
        .current_dir(home);
    cmd
}

fn onboard(home: &Path, port: u16) -> anyhow::Result<()> {
    let port = port.to_string();
    let output = openclaw_command(home)
        .args([
            "onboard",
            "--non-interactive",
            "--accept-risk",
            "--mode",
            "local",
            "--flow",
            "manual",
            "--auth-choice",
            "skip",
            "--gateway-auth",
            "token",
            "--gateway-token",
            TOKEN,
            "--gateway-bind",
            "loopback",
            "--gateway-port",
            &port,
            "--skip-channels",
            "--skip-daemon",
            "--no-install-daemon",
            "--skip-health",
            "--skip-search",
            "--skip-skills",
            "--skip-ui",
            "--skip-hooks",
            "--json",
        ])
        .stdin(Stdio::null())
        .output()?;
    anyhow::ensure!(
        output.status.success(),
        "openclaw onboard failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(())
}

fn ready(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request = "GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response.starts_with("HTTP/1.1 200")
}

fn start_gateway(home: &Path, port: u16) -> anyhow::Result<Gateway> {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(home.join("gateway.log"))?;
    let child = openclaw_command(home)
        .args([
            "gateway",
            "run",
            "--port",
            &port.to_string(),
            "--bind",
            "loopback",
        ])
        .args(["--auth", "token", "--allow-unconfigured"])
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .process_group(0)
        .spawn()?;
    let gateway = Gateway { child };
    let started = Instant::now();
    while !ready(port) {
        anyhow::ensure!(
            started.elapsed() < GATEWAY_READY_TIMEOUT,
            "the gateway was not ready within {GATEWAY_READY_TIMEOUT:?}: {}",
            std::fs::read_to_string(home.join("gateway.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    Ok(gateway)
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
    let home = TempDir::new()?;
    let port = free_port()?;
    onboard(home.path(), port)?;
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
