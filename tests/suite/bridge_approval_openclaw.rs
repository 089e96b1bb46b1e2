//! Policy `ask` through OpenClaw's approval flow, with a REAL OpenClaw 2026.9.6 gateway: the
//! real Copilot CLI (scripted model) asks to run shell commands the policy marks `ask`; the
//! bridge's caller is a plain MCP 2025 client that cannot be asked (as OpenClaw's own MCP client
//! is), so the bridge asks through the gateway. The reviewer is a gateway client connected the
//! way the Control UI is (scopes `operator.admin` + `operator.approvals`, caps `approvals`):
//! it allows, denies, or stays passive while `openclaw approvals resolve` decides. With no
//! reviewer connected the question is refused at once; one nobody decides times out; a call
//! cancelled while it waits withdraws its question. No secret reaches a reviewer.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bridge_test_support::{
    CopilotBed, GATEWAY_TOKEN, McpProcess, OpenclawGateway, binary_path, free_port,
    openclaw_command,
};
use openclaw_gateway::{ClientProfile, Gateway, GatewaySettings};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

use super::bridge_approval::{SECRET, script_marker_turns};
use super::bridge_code::{TASK, bridge_env};

/// The turns the model is scripted for, each a `bash` call creating `<marker>.txt`.
const MARKERS: [&str; 7] = [
    "OC-NOROUTE",
    "OC-ALLOW",
    "OC-DENY",
    "OC-CLI",
    "OC-TIMEOUT",
    "OC-WITHDRAW",
    "OC-SHUTDOWN",
];

/// What the reviewer does with the next request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Allow,
    Deny,
    Passive,
}

/// A reviewer connected as the Control UI is; it records every request it sees.
pub(super) struct Reviewer {
    gateway: Gateway,
    mode: Arc<Mutex<Mode>>,
    seen: Arc<Mutex<Vec<Value>>>,
    stop: CancellationToken,
}

impl Reviewer {
    pub(super) async fn connect(port: u16, state_dir: &std::path::Path) -> anyhow::Result<Self> {
        let gateway = Gateway::start(GatewaySettings {
            host: "127.0.0.1".to_owned(),
            port,
            token: GATEWAY_TOKEN.to_owned(),
            state_dir: state_dir.to_path_buf(),
            call_timeout: Duration::from_secs(10),
            profile: ClientProfile {
                display_name: "e2e-reviewer".to_owned(),
                scopes: vec!["operator.admin".to_owned(), "operator.approvals".to_owned()],
                caps: vec!["approvals".to_owned()],
                device: false,
            },
        });
        gateway
            .wait_until_up(Duration::from_secs(30))
            .await
            .map_err(anyhow::Error::msg)?;
        let reviewer = Self {
            gateway,
            mode: Arc::new(Mutex::new(Mode::Passive)),
            seen: Arc::new(Mutex::new(Vec::new())),
            stop: CancellationToken::new(),
        };
        let (gateway, mode, seen, stop) = (
            reviewer.gateway.clone(),
            Arc::clone(&reviewer.mode),
            Arc::clone(&reviewer.seen),
            reviewer.stop.clone(),
        );
        tokio::spawn(async move {
            while !stop.is_cancelled() {
                if let Ok(pending) = gateway.pending_approvals(&stop).await {
                    for item in pending {
                        let id = item["id"].as_str().unwrap_or_default().to_owned();
                        let known = seen
                            .lock()
                            .map_or(true, |s| s.iter().any(|i| i["id"] == item["id"]));
                        if !known && let Ok(mut s) = seen.lock() {
                            s.push(item.clone());
                        }
                        let decision = match mode.lock().map_or(Mode::Passive, |m| *m) {
                            Mode::Allow => openclaw_gateway::approval::Decision::AllowOnce,
                            Mode::Deny => openclaw_gateway::approval::Decision::Deny,
                            Mode::Passive => continue,
                        };
                        let _ = gateway.resolve_approval(&id, decision, &stop).await;
                    }
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        Ok(reviewer)
    }

    pub(super) fn set(&self, mode: Mode) {
        if let Ok(mut m) = self.mode.lock() {
            *m = mode;
        }
    }

    pub(super) fn seen(&self) -> Vec<Value> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Waits until the reviewer has seen `n` requests; returns the last.
    async fn wait_for(&self, n: usize) -> anyhow::Result<Value> {
        let started = Instant::now();
        loop {
            if let Some(last) = self.seen().get(n - 1) {
                return Ok(last.clone());
            }
            anyhow::ensure!(
                started.elapsed() < TASK,
                "no approval request reached the reviewer"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn pending(&self) -> anyhow::Result<Vec<Value>> {
        Ok(self
            .gateway
            .pending_approvals(&CancellationToken::new())
            .await?)
    }

    pub(super) async fn close(self) {
        self.stop.cancel();
        self.gateway.shutdown().await;
    }
}

fn spawn_bridge(
    bed: &CopilotBed,
    port: u16,
    policy: &std::path::Path,
    approval_timeout_ms: u64,
) -> anyhow::Result<McpProcess> {
    let mut env = bridge_env(bed);
    env.extend(
        [
            ("COPILOT_BRIDGE_POLICY_FILE", policy.display().to_string()),
            ("OPENCLAW_GATEWAY_TOKEN", GATEWAY_TOKEN.to_owned()),
            ("OPENCLAW_PORT", port.to_string()),
            (
                "COPILOT_BRIDGE_APPROVAL_TIMEOUT_MS",
                approval_timeout_ms.to_string(),
            ),
        ]
        .map(|(k, v)| (k.to_owned(), v)),
    );
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let workspace = bed.workspace().display().to_string();
    McpProcess::spawn(
        &binary_path("copilot-bridge"),
        &["--workspace", &workspace],
        bed.home(),
        &env,
    )
}

/// Delegates the scripted turn `marker`; returns the result's structured content and how long
/// the call took.
async fn delegate(mcp: &mut McpProcess, marker: &str) -> anyhow::Result<(Value, Duration)> {
    let started = Instant::now();
    let response = tokio::time::timeout(
        TASK,
        mcp.call_tool(
            "copilot_code_task",
            json!({"prompt": format!("please {marker}")}),
        ),
    )
    .await??;
    let result = response["result"]["structuredContent"].clone();
    anyhow::ensure!(!result.is_null(), "{response}");
    Ok((result, started.elapsed()))
}

fn denial_reasons(result: &Value) -> String {
    result["denials"]
        .as_array()
        .map(|d| {
            d.iter()
                .filter_map(|d| d["reason"].as_str())
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .unwrap_or_default()
}

fn exists(bed: &CopilotBed, marker: &str) -> bool {
    bed.workspace()
        .join(format!("{}.txt", marker.to_lowercase()))
        .exists()
}

/// A reviewer allows: the command runs, and the request it saw holds no secret.
async fn allowed(
    bed: &CopilotBed,
    mcp: &mut McpProcess,
    reviewer: &Reviewer,
) -> anyhow::Result<Duration> {
    reviewer.set(Mode::Allow);
    let (result, took) = delegate(mcp, "OC-ALLOW").await?;
    assert!(exists(bed, "OC-ALLOW"), "{result}");
    assert_eq!(result["denials"], json!([]), "{result}");
    let request = reviewer.wait_for(1).await?;
    let shown = request.to_string();
    assert!(
        !shown.contains(SECRET),
        "a secret reached the reviewer: {shown}"
    );
    assert_eq!(
        request["request"]["pluginId"], "copilot-bridge",
        "{request}"
    );
    assert_eq!(request["request"]["severity"], "warning", "{request}");
    assert!(
        request["request"]["description"]
            .as_str()
            .is_some_and(|d| d.contains("touch") && d.contains("[REDACTED")),
        "{request}"
    );
    assert!(
        request["request"]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("cwd: ") && d.contains("session: ")),
        "{request}"
    );
    Ok(took)
}

/// A passive reviewer is connected; `openclaw approvals resolve <id> allow-once` decides.
async fn resolved_with_the_cli(
    bed: &CopilotBed,
    mcp: &mut McpProcess,
    reviewer: &Reviewer,
    openclaw_home: &std::path::Path,
) -> anyhow::Result<Duration> {
    reviewer.set(Mode::Passive);
    let seen_before = reviewer.seen().len();
    let cli_home = openclaw_home.to_path_buf();
    let seen = Arc::clone(&reviewer.seen);
    let cli = tokio::spawn(async move {
        let started = Instant::now();
        let id = loop {
            let id = seen
                .lock()
                .ok()
                .and_then(|s| s.get(seen_before).map(|i| i["id"].clone()));
            if let Some(Value::String(id)) = id {
                break id;
            }
            anyhow::ensure!(started.elapsed() < TASK, "the OC-CLI question never came");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let output = tokio::task::spawn_blocking(move || {
            openclaw_command(&cli_home)
                .args(["approvals", "resolve", &id, "allow-once", "--json"])
                .output()
        })
        .await??;
        anyhow::ensure!(
            output.status.success(),
            "openclaw approvals resolve failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    });
    let (result, took) = delegate(mcp, "OC-CLI").await?;
    let printed = cli.await??;
    assert!(printed.contains("\"applied\":true"), "{printed}");
    assert!(exists(bed, "OC-CLI"), "{result}");
    Ok(took)
}

/// Starts the scripted turn `marker` without waiting for its answer, and returns the question
/// the (passive) reviewer then sees.
async fn question_of(
    mcp: &mut McpProcess,
    reviewer: &Reviewer,
    id: u64,
    marker: &str,
) -> anyhow::Result<Value> {
    reviewer.set(Mode::Passive);
    let seen_before = reviewer.seen().len();
    mcp.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "copilot_code_task",
                   "arguments": {"prompt": format!("please {marker}")}}}))
        .await?;
    reviewer.wait_for(seen_before + 1).await
}

/// Waits until `question` is no longer pending at the gateway.
async fn gone(reviewer: &Reviewer, question: &Value) -> anyhow::Result<()> {
    let started = Instant::now();
    loop {
        let pending = reviewer.pending().await?;
        if !pending.iter().any(|p| p["id"] == question["id"]) {
            return Ok(());
        }
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(30),
            "the question is still pending: {pending:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A call cancelled while its question waits withdraws the question at the gateway; so does
/// the bridge's shutdown.
async fn withdrawn(
    bed: &CopilotBed,
    mut mcp: McpProcess,
    reviewer: &Reviewer,
) -> anyhow::Result<()> {
    let question = question_of(&mut mcp, reviewer, 77_001, "OC-WITHDRAW").await?;
    mcp.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 77_001, "reason": "the user gave up"}}),
    )
    .await?;
    gone(reviewer, &question).await?;
    assert!(!exists(bed, "OC-WITHDRAW"));

    let question = question_of(&mut mcp, reviewer, 77_002, "OC-SHUTDOWN").await?;
    assert_eq!(mcp.shutdown().await?, Some(0));
    gone(reviewer, &question).await?;
    assert!(!exists(bed, "OC-SHUTDOWN"));
    Ok(())
}

/// Every question is audited with its route, the approval's id, how it ended and how long it
/// took; returns those records.
fn audited_questions(bed: &CopilotBed) -> anyhow::Result<Vec<Value>> {
    let mut audited = String::new();
    for entry in std::fs::read_dir(bed.home().join("audit"))? {
        audited.push_str(&std::fs::read_to_string(entry?.path())?);
    }
    assert!(!audited.contains(SECRET), "a secret reached the audit log");
    let questions: Vec<Value> = audited
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|e| e["hook"] == "permission" && e["input"]["route"] == "openclaw")
        .collect();
    assert_eq!(questions.len(), 7, "{audited}");
    for q in &questions {
        assert!(q["elapsed_ms"].is_u64(), "{q}");
        // A withdrawn question is recorded by the bridge; its id stayed with the gateway.
        if q["input"]["terminal_reason"] != "withdrawn" {
            assert!(q["input"]["approval_id"].is_string(), "{q}");
        }
    }
    let ended: Vec<&str> = questions
        .iter()
        .filter_map(|q| q["input"]["terminal_reason"].as_str())
        .collect();
    for reason in ["no-route", "user", "timeout", "withdrawn"] {
        assert!(ended.contains(&reason), "{reason} missing: {questions:#?}");
    }
    Ok(questions)
}

/// `copilot-bridge validate`'s `ask` check against the gateway on `port` with `token`.
fn validate_ask(
    bed: &CopilotBed,
    port: u16,
    token: &str,
    policy: &std::path::Path,
) -> anyhow::Result<Value> {
    let output = std::process::Command::new(binary_path("copilot-bridge"))
        .args(["validate", "--json"])
        .env_clear()
        .env("HOME", bed.home())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("OPENCLAW_GATEWAY_TOKEN", token)
        .env("OPENCLAW_PORT", port.to_string())
        .env("COPILOT_BRIDGE_POLICY_FILE", policy)
        .env("COPILOT_CLI_PATH", "/nonexistent/copilot")
        .current_dir(bed.home())
        .output()?;
    let report: Value = serde_json::from_slice(&output.stdout)?;
    Ok(report["checks"]
        .as_array()
        .and_then(|checks| checks.iter().find(|c| c["name"] == "ask").cloned())
        .unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread")]
async fn ask_goes_through_openclaw_approvals_with_a_real_gateway() -> anyhow::Result<()> {
    let _slot = OpenclawGateway::slot().await;
    let openclaw_home = TempDir::new()?;
    let port = free_port()?;
    OpenclawGateway::onboard(openclaw_home.path(), port)?;
    let gateway = OpenclawGateway::start(openclaw_home.path(), port)?;
    let bed = CopilotBed::start().await?;
    let policy = bed.home().join("ask-policy.toml");
    std::fs::write(&policy, "ask_tools = [\"bash\"]\n")?;
    script_marker_turns(&bed, &MARKERS, "OC-ALLOW");

    // validate names the routes: the gateway grants operator.approvals to its own token.
    let check = validate_ask(&bed, port, GATEWAY_TOKEN, &policy)?;
    assert_eq!(check["status"], "pass", "{check}");
    assert!(
        check["detail"]
            .as_str()
            .is_some_and(|d| d.contains("operator.approvals")),
        "{check}"
    );
    let check = validate_ask(&bed, port, "wrong-token-0000", &policy)?;
    assert_eq!(check["status"], "fail", "{check}");
    let mut timings: Vec<(&str, Duration)> = Vec::new();
    let mut mcp = spawn_bridge(&bed, port, &policy, 60_000)?;
    mcp.initialize().await?;

    // No reviewer connected: the gateway has nobody to show it to and answers at once.
    let (result, took) = delegate(&mut mcp, "OC-NOROUTE").await?;
    assert!(!exists(&bed, "OC-NOROUTE"), "{result}");
    assert!(
        denial_reasons(&result).contains("nobody to show the question to"),
        "{result}"
    );
    timings.push(("no reviewer", took));

    let reviewer = Reviewer::connect(port, &openclaw_home.path().join("reviewer")).await?;
    timings.push(("reviewer allows", allowed(&bed, &mut mcp, &reviewer).await?));

    // A reviewer denies: it does not run, and the result names the decision.
    reviewer.set(Mode::Deny);
    let (result, took) = delegate(&mut mcp, "OC-DENY").await?;
    assert!(!exists(&bed, "OC-DENY"), "{result}");
    assert!(
        denial_reasons(&result).contains("decision was deny"),
        "{result}"
    );
    timings.push(("reviewer denies", took));

    let took = resolved_with_the_cli(&bed, &mut mcp, &reviewer, openclaw_home.path()).await?;
    timings.push(("`openclaw approvals resolve`", took));
    withdrawn(&bed, mcp, &reviewer).await?;

    // Nobody decides within the approval timeout: refused, saying so.
    let mut mcp = spawn_bridge(&bed, port, &policy, 3_000)?;
    mcp.initialize().await?;
    let (result, took) = delegate(&mut mcp, "OC-TIMEOUT").await?;
    assert!(!exists(&bed, "OC-TIMEOUT"), "{result}");
    assert!(
        denial_reasons(&result).contains("nobody decided within 3 s"),
        "{result}"
    );
    timings.push(("nobody decides, 3-s timeout", took));
    assert_eq!(mcp.shutdown().await?, Some(0));
    reviewer.close().await;

    // The time from question to decision on this route, as audited (for the notes).
    for q in audited_questions(&bed)? {
        eprintln!(
            "openclaw route: {} after {} ms ({})",
            q["decision"], q["elapsed_ms"], q["input"]["terminal_reason"]
        );
    }
    for (what, took) in timings {
        eprintln!("{what}: whole turn {} ms", took.as_millis());
    }
    drop(gateway);
    Ok(())
}
