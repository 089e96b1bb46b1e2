//! Policy `ask` reaches a person: the real Copilot CLI (scripted model) asks to run shell
//! commands the policy marks `ask`, and the bridge asks the calling MCP client through
//! elicitation (`tests/python/bridge_approval_e2e.py`, the official MCP Python SDK). Only an
//! explicit yes runs the command; no, decline, cancel and a client that cannot ask refuse it,
//! with the reason in the result; no secret reaches the question; every question is audited.

use bridge_test_support::{CopilotBed, Reply, binary_path};
use serde_json::{Value, json};

use super::bridge_code::bridge_env;

/// A GitHub token shape the redactor knows, written by the model into a command.
const SECRET: &str = "ghp_Zq8vQ2mN7pL4kR9tXw3yB6cD1fG5hJ0sA2e";

#[tokio::test]
async fn ask_goes_to_the_calling_client_through_elicitation() -> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    let policy = bed.home().join("ask-policy.toml");
    std::fs::write(&policy, "ask_tools = [\"bash\"]\n")?;
    for marker in [
        "ASK-YES",
        "ASK-NO",
        "ASK-DECLINE",
        "ASK-CANCEL",
        "ASK-HEADLESS",
    ] {
        let file = bed
            .workspace()
            .join(format!("{}.txt", marker.to_lowercase()));
        let mut command = format!("touch {}", file.display());
        if marker == "ASK-YES" {
            command.push_str(" # token ");
            command.push_str(SECRET);
        }
        bed.model.script(
            marker,
            [
                Reply::tool_call(
                    "bash",
                    json!({"command": command, "description": "create the marker file",
                           "mode": "sync", "initial_wait": 10}),
                ),
                Reply::text("Finished."),
            ],
        );
    }
    let mut env: serde_json::Map<String, Value> = bridge_env(&bed)
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    env.insert("HOME".into(), json!(bed.home().display().to_string()));
    env.insert(
        "PATH".into(),
        json!(std::env::var("PATH").unwrap_or_default()),
    );
    env.insert("RUST_LOG".into(), json!("warn"));
    env.insert(
        "COPILOT_BRIDGE_POLICY_FILE".into(),
        json!(policy.display().to_string()),
    );
    let mut command = std::process::Command::new(bridge_test_support::python());
    command
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/python/bridge_approval_e2e.py"
        ))
        .arg(binary_path("copilot-bridge"))
        .arg(bed.workspace())
        .arg(Value::Object(env).to_string())
        .arg(SECRET);
    // Blocking wait off the runtime's thread, so the scripted model keeps answering.
    let output = tokio::task::spawn_blocking(move || command.output()).await??;
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "the Python SDK checks failed");
    assert!(stdout.contains("3 passed, 0 failed"), "no summary line");

    // Every question is audited with its route and decision, and no secret is in the log.
    let mut audited = String::new();
    for entry in std::fs::read_dir(bed.home().join("audit"))? {
        audited.push_str(&std::fs::read_to_string(entry?.path())?);
    }
    let questions: Vec<Value> = audited
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|e| e["hook"] == "permission")
        .collect();
    assert_eq!(questions.len(), 5, "{audited}");
    assert_eq!(
        questions
            .iter()
            .filter(|q| q["input"]["route"] == "client")
            .count(),
        4,
        "{questions:#?}"
    );
    assert_eq!(
        questions
            .iter()
            .filter(|q| q["decision"] == "allow")
            .count(),
        1
    );
    assert!(!audited.contains(SECRET), "a secret reached the audit log");
    Ok(())
}
