//! Policy `ask` reaches a person: the real Copilot CLI (scripted model) asks to run shell
//! commands the policy marks `ask`, and the bridge asks the calling MCP client through
//! elicitation (`tests/python/bridge_approval_e2e.py`, the official MCP Python SDK). Only an
//! explicit yes runs the command; no, decline, cancel and a client that cannot ask refuse it,
//! with the reason in the result; no secret reaches the question; every question is audited.

use bridge_test_support::{CopilotBed, Reply, binary_path};
use serde_json::{Value, json};

use super::bridge_code::{TASK, bridge_env, run_python_checks};

/// A GitHub token shape the redactor knows, written by the model into a command.
pub(super) const SECRET: &str = "ghp_Zq8vQ2mN7pL4kR9tXw3yB6cD1fG5hJ0sA2e";

/// Scripts a turn for each of `markers`: a `bash` call creating `<marker>.txt` (with
/// [`SECRET`] in the command of `with_secret`'s), then a reply.
pub(super) fn script_marker_turns(bed: &CopilotBed, markers: &[&str], with_secret: &str) {
    for marker in markers {
        let file = bed
            .workspace()
            .join(format!("{}.txt", marker.to_lowercase()));
        let mut command = format!("touch {}", file.display());
        if *marker == with_secret {
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
}

#[tokio::test]
async fn ask_goes_to_the_calling_client_through_elicitation() -> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    let policy = bed.home().join("ask-policy.toml");
    std::fs::write(&policy, "ask_tools = [\"bash\", \"copilot_create_file\"]\n")?;
    script_marker_turns(
        &bed,
        &[
            "ASK-YES",
            "ASK-NO",
            "ASK-DECLINE",
            "ASK-CANCEL",
            "ASK-SESSION",
            "ASK-HEADLESS",
        ],
        "ASK-YES",
    );
    run_python_checks(
        &bed,
        "bridge_approval_e2e.py",
        &[("COPILOT_BRIDGE_POLICY_FILE", policy.display().to_string())],
        &[SECRET],
        "5 passed, 0 failed",
    )
    .await?;

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
    // Six questions from Copilot's turns, three for the bridge's own tool, each with its
    // route: the headless client of ASK-HEADLESS and of one own-tool call could not be asked.
    assert_eq!(questions.len(), 9, "{audited}");
    let routed = |route: &str| {
        questions
            .iter()
            .filter(|q| q["input"]["route"] == route)
            .count()
    };
    assert_eq!((routed("client"), routed("none")), (7, 2), "{questions:#?}");
    assert_eq!(
        questions
            .iter()
            .filter(|q| q["decision"] == "allow")
            .count(),
        3
    );
    assert!(!audited.contains(SECRET), "a secret reached the audit log");
    // The time from question to decision on this route, as audited (for the notes).
    for q in &questions {
        eprintln!(
            "client route ({}): {} after {} ms",
            q["input"]["route"], q["decision"], q["elapsed_ms"]
        );
    }
    Ok(())
}

/// The bridge with `ask_tools = ["bash"]`, spoken to as a 2026-07-28 client would (not yet
/// initialized), and the scripted MRTR-YES / MRTR-DECLINE turns.
fn spawn_asking_bridge(bed: &CopilotBed) -> anyhow::Result<bridge_test_support::McpProcess> {
    let policy = bed.home().join("ask-policy.toml");
    std::fs::write(&policy, "ask_tools = [\"bash\", \"copilot_create_file\"]\n")?;
    script_marker_turns(bed, &["MRTR-YES", "MRTR-DECLINE", "MRTR-ORCH"], "");
    let mut env = bridge_env(bed);
    env.push((
        "COPILOT_BRIDGE_POLICY_FILE".to_owned(),
        policy.display().to_string(),
    ));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let workspace = bed.workspace().display().to_string();
    let mcp = bridge_test_support::McpProcess::spawn(
        &binary_path("copilot-bridge"),
        &["--workspace", &workspace],
        bed.home(),
        &env,
    )?;
    Ok(mcp)
}

/// An accepting answer to the one question of an `input_required` result.
fn yes_answer() -> Value {
    json!({"approve": {"action": "accept", "content": {"approve": true}}})
}

/// MCP 2026-07-28 (the way Claude Code and the Copilot CLI talk to our servers): no
/// `initialize`, capabilities in each request's `_meta`, and no server-to-client requests. The
/// question comes back as an `input_required` result; the retry with the answer resumes the
/// same turn. A tampered or replayed `requestState` is refused.
#[tokio::test]
async fn ask_reaches_a_2026_client_as_input_required_and_resumes_on_retry() -> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    let mut mcp = spawn_asking_bridge(&bed)?;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw-2026", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}
    });
    mcp.request("server/discover", json!({"_meta": meta}))
        .await?;
    let mut next = 9_000;
    let mut call = async |arguments: Value, retry: Option<(String, Value)>| {
        next += 1;
        let mut params = json!({"name": "copilot_code_task", "arguments": arguments,
                                "_meta": meta.clone()});
        if let Some((state, responses)) = retry {
            params["requestState"] = json!(state);
            params["inputResponses"] = responses;
        }
        mcp.send(
            &json!({"jsonrpc": "2.0", "id": next, "method": "tools/call",
                         "params": params}),
        )
        .await?;
        tokio::time::timeout(TASK, mcp.response_to(&json!(next))).await?
    };
    let yes = yes_answer();

    let arguments = json!({"prompt": "please MRTR-YES"});
    let asked = call(arguments.clone(), None).await?;
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let question = &asked["result"]["inputRequests"]["approve"];
    assert_eq!(question["method"], "elicitation/create", "{asked}");
    assert!(
        question["params"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("touch")),
        "{asked}"
    );
    let state = asked["result"]["requestState"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(!bed.workspace().join("mrtr-yes.txt").exists());

    // A tampered state, or the state with other arguments, is refused and runs nothing.
    let mut tampered = state.clone();
    let last = tampered.pop().unwrap_or('A');
    tampered.push(if last == 'A' { 'B' } else { 'A' });
    for (args, state) in [
        (arguments.clone(), tampered),
        (json!({"prompt": "please MRTR-YES now"}), state.clone()),
    ] {
        let refused = call(args, Some((state, yes.clone()))).await?;
        assert_eq!(refused["result"]["isError"], true, "{refused}");
        assert!(
            serde_json::to_string(&refused)?.contains("requestState was refused"),
            "{refused}"
        );
    }

    let done = call(arguments.clone(), Some((state.clone(), yes.clone()))).await?;
    let result = &done["result"]["structuredContent"];
    assert_eq!(result["stopReason"], "end_turn", "{done}");
    assert_eq!(result["denials"], json!([]), "{done}");
    assert!(bed.workspace().join("mrtr-yes.txt").exists());

    // Replayed: the state was used.
    let replay = call(arguments, Some((state, yes))).await?;
    assert_eq!(replay["result"]["isError"], true, "{replay}");
    assert!(
        serde_json::to_string(&replay)?.contains("already used"),
        "{replay}"
    );

    // Declined: the command does not run, and the result says so.
    let arguments = json!({"prompt": "please MRTR-DECLINE"});
    let asked = call(arguments.clone(), None).await?;
    let state = asked["result"]["requestState"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let declined = call(
        arguments,
        Some((state, json!({"approve": {"action": "decline"}}))),
    )
    .await?;
    let result = &declined["result"]["structuredContent"];
    assert!(
        result["denials"][0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("declined")),
        "{declined}"
    );
    assert!(!bed.workspace().join("mrtr-decline.txt").exists());
    assert_eq!(mcp.shutdown().await?, Some(0));
    // The time from question to decision through input_required rounds (for the notes).
    for entry in std::fs::read_dir(bed.home().join("audit"))? {
        for line in std::fs::read_to_string(entry?.path())?.lines() {
            let record: Value = serde_json::from_str(line)?;
            if record["hook"] == "permission" {
                eprintln!(
                    "input_required round ({}): {} after {} ms",
                    record["input"]["route"], record["decision"], record["elapsed_ms"]
                );
            }
        }
    }
    Ok(())
}

/// A `tools/call` of `tool` the way a 2026-07-28 client sends it (capabilities in `_meta`),
/// optionally a retry with `requestState` and `inputResponses`; returns the response.
async fn call_2026(
    mcp: &mut bridge_test_support::McpProcess,
    id: u64,
    tool: &str,
    arguments: &Value,
    retry: Option<(String, Value)>,
) -> anyhow::Result<Value> {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw-2026", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}
    });
    let mut params = json!({"name": tool, "arguments": arguments, "_meta": meta});
    if let Some((state, responses)) = retry {
        params["requestState"] = json!(state);
        params["inputResponses"] = responses;
    }
    mcp.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
        .await?;
    tokio::time::timeout(TASK, mcp.response_to(&json!(id))).await?
}

/// `copilot_orchestrate` asks a 2026-07-28 client the same way: its sub-task's turn waits for
/// the retry that answers, then the orchestration finishes.
#[tokio::test]
async fn orchestrate_asks_a_2026_client_as_input_required_too() -> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    let mut mcp = spawn_asking_bridge(&bed)?;
    let arguments = json!({"task": "one step that asks",
                           "plan": {"tasks": [{"id": "a", "description": "please MRTR-ORCH"}]}});
    let asked = call_2026(&mut mcp, 1, "copilot_orchestrate", &arguments, None).await?;
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let state = asked["result"]["requestState"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(!bed.workspace().join("mrtr-orch.txt").exists());
    let retry = Some((state, yes_answer()));
    let done = call_2026(&mut mcp, 2, "copilot_orchestrate", &arguments, retry).await?;
    assert!(
        done["result"]["structuredContent"]
            .to_string()
            .contains("1/1 tasks succeeded"),
        "{done}"
    );
    assert!(bed.workspace().join("mrtr-orch.txt").exists(), "{done}");
    assert_eq!(mcp.shutdown().await?, Some(0));
    Ok(())
}

/// The servers' own tools ask a 2026-07-28 client the same way, before the call runs: the
/// retry that accepts runs it once; a declining, tampered or replayed retry runs nothing.
#[tokio::test]
async fn own_tools_ask_a_2026_client_as_input_required() -> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    let mut mcp = spawn_asking_bridge(&bed)?;
    let file = |name: &str| bed.workspace().join(name);
    let create = |name: &str| json!({"path": name, "content": "asked first\n"});
    let state_of = |response: &Value| {
        response["result"]["requestState"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };

    let asked = call_2026(&mut mcp, 1, "copilot_create_file", &create("yes.txt"), None).await?;
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    assert!(
        asked["result"]["inputRequests"]["approve"]["params"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("copilot_create_file")),
        "{asked}"
    );
    let state = state_of(&asked);
    let mut tampered = state.clone();
    let last = tampered.pop().unwrap_or('A');
    tampered.push(if last == 'A' { 'B' } else { 'A' });
    let refused = call_2026(
        &mut mcp,
        2,
        "copilot_create_file",
        &create("yes.txt"),
        Some((tampered, yes_answer())),
    )
    .await?;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(!file("yes.txt").exists());
    let retry = Some((state.clone(), yes_answer()));
    let done = call_2026(
        &mut mcp,
        3,
        "copilot_create_file",
        &create("yes.txt"),
        retry,
    )
    .await?;
    assert_ne!(done["result"]["isError"], true, "{done}");
    assert_eq!(std::fs::read_to_string(file("yes.txt"))?, "asked first\n");
    let retry = Some((state, yes_answer()));
    let replay = call_2026(
        &mut mcp,
        4,
        "copilot_create_file",
        &create("again.txt"),
        retry,
    )
    .await?;
    assert_eq!(replay["result"]["isError"], true, "{replay}");
    assert!(!file("again.txt").exists());

    let asked = call_2026(&mut mcp, 5, "copilot_create_file", &create("no.txt"), None).await?;
    let retry = Some((state_of(&asked), json!({"approve": {"action": "decline"}})));
    let declined = call_2026(&mut mcp, 6, "copilot_create_file", &create("no.txt"), retry).await?;
    assert_eq!(declined["result"]["isError"], true, "{declined}");
    assert!(declined.to_string().contains("declined"), "{declined}");
    assert!(!file("no.txt").exists());
    assert_eq!(mcp.shutdown().await?, Some(0));
    Ok(())
}
