//! Graceful shutdown of the real binaries: SIGTERM in the middle of a delegated task (real
//! Copilot CLI, scripted model) still answers the call with its partial result, records the
//! call's end in the audit log, leaves no descendant process behind and exits 0. The memory
//! server stops on SIGTERM the same way.

use std::collections::HashSet;
use std::path::Path;

use bridge_test_support::{CopilotBed, McpProcess, Reply, binary_path};
use serde_json::{Value, json};
use tempfile::TempDir;

use super::bridge_code::{TASK, send_call, spawn_bridge};

const SIGTERM: i32 = 15;

/// Every live descendant of `root` (by walking `/proc`), with its start time so a reused pid
/// is not mistaken for a survivor.
fn descendants(root: u32) -> HashSet<(u32, u64)> {
    let mut parents: Vec<(u32, u32, u64)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some((ppid, started, state)) = stat(pid)
                && state != 'Z'
            {
                parents.push((pid, ppid, started));
            }
        }
    }
    let mut found = HashSet::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for &(pid, ppid, started) in &parents {
            if ppid == parent && found.insert((pid, started)) {
                frontier.push(pid);
            }
        }
    }
    found
}

/// `(ppid, start time, state)` of `pid` from `/proc/<pid>/stat`.
fn stat(pid: u32) -> Option<(u32, u64, char)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let parent = fields.get(1)?.parse().ok()?;
    let started = fields.get(19)?.parse().ok()?;
    Some((parent, started, state))
}

/// Whether `(pid, start time)` still runs (a zombie has already ended).
fn alive((pid, started): (u32, u64)) -> bool {
    stat(pid).is_some_and(|(_, s, state)| s == started && state != 'Z')
}

fn audit_lines(dir: &Path) -> anyhow::Result<Vec<Value>> {
    let mut lines = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        for line in std::fs::read_to_string(entry?.path())?.lines() {
            lines.push(serde_json::from_str(line)?);
        }
    }
    Ok(lines)
}

#[tokio::test]
async fn sigterm_mid_task_answers_with_the_partial_result_audits_it_and_leaves_no_process()
-> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    bed.model
        .script("SHUT-HANG", [Reply::hang("half of the answer ")]);
    let mcp = spawn_bridge(&bed).await?;
    let pid = mcp.pid().ok_or_else(|| anyhow::anyhow!("no pid"))?;
    let mut mcp = mcp;
    mcp.send(&send_call(
        70,
        "copilot_code_task",
        &json!({"prompt": "SHUT-HANG"}),
        None,
    ))
    .await?;
    bed.model
        .wait_for_chat_requests("SHUT-HANG", 1, TASK)
        .await?;
    let family = descendants(pid);
    assert!(
        !family.is_empty(),
        "the Copilot CLI should be running under the bridge"
    );

    let started = std::time::Instant::now();
    let (status, messages) = mcp.signal_and_wait(SIGTERM).await?;
    let took = started.elapsed();

    assert_eq!(status.code(), Some(0), "exit status {status:?}");
    let answer = messages
        .iter()
        .find(|m| m["id"] == json!(70))
        .ok_or_else(|| anyhow::anyhow!("no answer to the running call in {messages:?}"))?;
    let result = &answer["result"]["structuredContent"];
    assert_eq!(result["stopReason"], "cancelled", "{answer}");
    // What reached the turn before the signal: a prefix of the streamed answer (the CLI may
    // also end a cancelled turn before its last chunks are counted, so it can be empty).
    let partial = result["text"].as_str().unwrap_or_default();
    assert!("half of the answer ".starts_with(partial), "{answer}");
    let survivors: Vec<_> = family.iter().copied().filter(|p| alive(*p)).collect();
    assert!(survivors.is_empty(), "still running: {survivors:?}");
    let audit = audit_lines(&bed.home().join("audit"))?;
    let ends: Vec<&Value> = audit
        .iter()
        .filter(|l| l["tool"] == "copilot_code_task" && l["hook"] != "pre")
        .collect();
    assert_eq!(ends.len(), 1, "{audit:?}");
    assert!(
        ends[0]["output"]
            .as_str()
            .is_some_and(|o| o.contains(partial.trim()) && o.contains("Cancelled")),
        "{:?}",
        ends[0]
    );
    // Bounded: the grace for calls plus the CLI's stop, well under the client's patience.
    assert!(took < std::time::Duration::from_secs(15), "took {took:?}");
    Ok(())
}

#[tokio::test]
async fn sigterm_stops_both_idle_servers_with_status_zero() -> anyhow::Result<()> {
    let home = TempDir::new()?;
    let audit = home.path().join("audit");
    let audit_dir = audit.display().to_string();
    for binary in ["copilot-bridge", "openclaw-memory"] {
        let mut mcp = McpProcess::spawn(
            &binary_path(binary),
            &[],
            home.path(),
            &[("COPILOT_AUDIT_LOG_DIR", &audit_dir)],
        )?;
        mcp.initialize().await?;
        let (status, _) = mcp.signal_and_wait(SIGTERM).await?;
        assert_eq!(status.code(), Some(0), "{binary}: {status:?}");
    }
    Ok(())
}
