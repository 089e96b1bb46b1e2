//! `copilot_orchestrate` end to end: raw MCP over stdio → the real `copilot-bridge` → the real
//! Copilot CLI → the scripted model. The model plans; sub-tasks run in their own sessions and
//! really create files; a failed sub-task skips its dependent; a dependent's prompt carries its
//! dependency's result; events stream as progress. Also: a caller's own plan (no planning
//! turn), an overall timeout, and the `copilot-bridge orchestrate` subcommand.

use bridge_test_support::{CopilotBed, McpProcess, Reply, binary_path};
use serde_json::{Value, json};
use tokio::time::timeout;

use super::bridge_code::{
    TASK, bridge_env, response_with_progress, send_call, structured, text_of,
};

/// The planning prompt's own words: only the planning turn contains them.
const PLANNING: &str = "Do not carry out the task; only plan it.";

/// The bridge with BYOK against the bed's model. (A `400` from the model is not retried by the
/// bridge, so the failing sub-task below fails after the CLI's own attempts.)
async fn spawn(bed: &CopilotBed) -> anyhow::Result<McpProcess> {
    let env = bridge_env(bed);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let workspace = bed.workspace().display().to_string();
    let mut mcp = McpProcess::spawn(
        &binary_path("copilot-bridge"),
        &["--workspace", &workspace],
        bed.home(),
        &env,
    )?;
    mcp.initialize().await?;
    Ok(mcp)
}

fn task<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["tasks"]
        .as_array()
        .and_then(|tasks| tasks.iter().find(|t| t["id"] == id))
        .unwrap_or(&Value::Null)
}

/// Scripts the planning turn and four sub-tasks: t1 and t2 (after t1) create files, t3 fails,
/// t4 (after t3) must never run. Returns the two files.
fn script_greeting_kit(bed: &CopilotBed) -> (std::path::PathBuf, std::path::PathBuf) {
    let hello = bed.workspace().join("hello.txt");
    let shout = bed.workspace().join("shout.txt");
    // Sub-task markers first: a sub-task's prompt also quotes the overall task.
    bed.model.script(
        "SUB-HELLO",
        [
            Reply::tool_call("create", json!({"path": hello, "file_text": "hello\n"})),
            Reply::text("Created hello.txt containing a greeting."),
        ],
    );
    bed.model.script(
        "SUB-SHOUT",
        [
            Reply::tool_call("create", json!({"path": shout, "file_text": "HELLO\n"})),
            Reply::text("Created shout.txt from hello.txt."),
        ],
    );
    bed.model.script(
        "SUB-BROKEN",
        (0..6).map(|_| Reply::error(400, "invalid request: this sub-task cannot be served")),
    );
    bed.model
        .script("SUB-AFTER", [Reply::text("must never run")]);
    let plan = json!({
        "tasks": [
            {"id": "t1", "description": "SUB-HELLO: write hello.txt", "estimatedComplexity": "S"},
            {"id": "t2", "description": "SUB-SHOUT: write shout.txt from hello.txt", "estimatedComplexity": "S"},
            {"id": "t3", "description": "SUB-BROKEN: an impossible step", "estimatedComplexity": "M"},
            {"id": "t4", "description": "SUB-AFTER: build on the impossible step"}
        ],
        "dependencies": {"t2": ["t1"], "t4": ["t3"]}
    });
    bed.model.script(
        PLANNING,
        [Reply::text(&format!(
            "Here is the plan:\n```json\n{plan}\n```"
        ))],
    );

    (hello, shout)
}

#[tokio::test]
async fn the_model_plans_subtasks_create_files_and_a_failure_skips_its_dependent()
-> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    let (hello, shout) = script_greeting_kit(&bed);
    let mut mcp = spawn(&bed).await?;
    let tools = mcp.request("tools/list", json!({})).await?;
    assert!(
        tools.to_string().contains("\"copilot_orchestrate\""),
        "{tools}"
    );
    mcp.send(&send_call(
        80,
        "copilot_orchestrate",
        &json!({"task": "Build the greeting kit ORCH-GOAL-1", "maxConcurrency": 2}),
        Some(json!({"progressToken": "orch-1"})),
    ))
    .await?;
    let (response, progress) = response_with_progress(&mut mcp, &json!(80)).await?;
    let report = structured(&response)?;

    assert_eq!(
        report["summary"], "2/4 tasks succeeded, 1 skipped, 1 failed",
        "{report}"
    );
    assert_eq!(report["fallback"], Value::Null, "{report}");
    assert_eq!(
        report["waves"],
        json!([["t1", "t3"], ["t2", "t4"]]),
        "{report}"
    );
    assert_eq!(std::fs::read_to_string(&hello)?, "hello\n");
    assert_eq!(std::fs::read_to_string(&shout)?, "HELLO\n");
    assert_eq!(task(report, "t1")["status"], "succeeded", "{report}");
    assert_eq!(task(report, "t2")["status"], "succeeded", "{report}");
    assert_eq!(task(report, "t3")["status"], "failed", "{report}");
    assert!(
        task(report, "t3")["summary"]
            .as_str()
            .is_some_and(|s| s.contains("cannot be served")),
        "{report}"
    );
    assert_eq!(task(report, "t4")["status"], "skipped", "{report}");
    assert_eq!(
        task(report, "t4")["summary"],
        "skipped because task t3 failed",
        "{report}"
    );
    assert!(bed.model.chat_requests("SUB-AFTER").is_empty());
    // Each sub-task had its own session, and the planning session is a third kind.
    let sessions: Vec<&str> = ["t1", "t2"]
        .iter()
        .filter_map(|id| task(report, id)["sessionId"].as_str())
        .collect();
    assert_eq!(sessions.len(), 2, "{report}");
    assert_ne!(sessions[0], sessions[1]);
    assert!(report["planningSessionId"].is_string(), "{report}");
    assert!(
        report["makespanMs"].as_u64() >= report["lowerBoundMs"].as_u64(),
        "{report}"
    );
    // The dependent's prompt carried its dependency's result.
    let shout_prompt = bed
        .model
        .chat_requests("SUB-SHOUT")
        .first()
        .and_then(bridge_test_support::RecordedRequest::last_user_text)
        .unwrap_or_default();
    assert!(
        shout_prompt.contains("Created hello.txt containing a greeting."),
        "{shout_prompt}"
    );
    assert_events(&progress);

    assert!(
        text_of(&response)
            .starts_with("## Orchestration: 2/4 tasks succeeded, 1 skipped, 1 failed"),
        "{response}"
    );
    mcp.shutdown().await?;
    Ok(())
}

/// Events streamed as progress, in order for each task.
fn assert_events(progress: &[Value]) {
    let messages: Vec<&str> = progress
        .iter()
        .filter(|p| p["progressToken"] == "orch-1")
        .filter_map(|p| p["message"].as_str())
        .collect();
    for event in [
        "task_start t1",
        "task_complete t1",
        "task_start t2",
        "task_skipped t4",
    ] {
        assert!(
            messages.iter().any(|m| m.starts_with(event)),
            "{event} missing from {messages:?}"
        );
    }
    assert!(
        messages
            .last()
            .is_some_and(|m| m.starts_with("plan_complete: 2/4 tasks succeeded")),
        "{messages:?}"
    );
    let position = |prefix: &str| messages.iter().position(|m| m.starts_with(prefix));
    assert!(
        position("task_complete t1") < position("task_start t2"),
        "{messages:?}"
    );
}

#[tokio::test]
async fn a_given_plan_skips_planning_and_the_overall_timeout_cancels_running_subtasks()
-> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    bed.model.script("SUB-P1", [Reply::text("p1 done")]);
    bed.model.script("SUB-P2", [Reply::text("p2 done")]);
    bed.model
        .script("SUB-HANG", [Reply::hang("still thinking ")]);
    bed.model.script("SUB-LATER", [Reply::text("never")]);
    let mut mcp = spawn(&bed).await?;

    let plan = json!({"tasks": [
        {"id": "a", "description": "SUB-P1"},
        {"id": "b", "description": "SUB-P2"}
    ]});
    let response = timeout(
        TASK,
        mcp.call_tool(
            "copilot_orchestrate",
            json!({"task": "two independent steps", "plan": plan, "strategy": "waves"}),
        ),
    )
    .await??;
    let report = structured(&response)?;
    assert_eq!(
        report["summary"], "2/2 tasks succeeded, 0 skipped, 0 failed",
        "{report}"
    );
    assert_eq!(report["strategy"], "waves", "{report}");
    assert_eq!(report["planningSessionId"], Value::Null, "{report}");
    assert_eq!(task(report, "a")["summary"], "p1 done", "{report}");
    assert!(
        bed.model.chat_requests(PLANNING).is_empty(),
        "a given plan was planned again"
    );

    // The overall timeout cancels the running sub-task; the one after it never starts.
    let plan = json!({"tasks": [
        {"id": "h", "description": "SUB-HANG"},
        {"id": "l", "description": "SUB-LATER"}
    ], "dependencies": {"l": ["h"]}});
    let response = timeout(
        TASK,
        mcp.call_tool(
            "copilot_orchestrate",
            json!({"task": "a step that hangs", "plan": plan, "timeout": 4000}),
        ),
    )
    .await??;
    let report = structured(&response)?;
    let whole_timeout = json!({"kind": "timedOut", "timeoutMs": 4000});
    assert_eq!(report["stopped"], whole_timeout, "{report}");
    assert_eq!(task(report, "h")["status"], "cancelled", "{report}");
    assert_eq!(task(report, "l")["status"], "cancelled", "{report}");
    assert!(bed.model.chat_requests("SUB-LATER").is_empty());

    // Cancelling the call stops the running sub-task and frees the directory for the next call.
    bed.model
        .script("SUB-HANG-2", [Reply::hang("thinking again ")]);
    bed.model
        .script("AFTER-CANCEL", [Reply::text("the directory is free")]);
    let plan = json!({"tasks": [{"id": "h2", "description": "SUB-HANG-2"}]});
    mcp.send(&send_call(
        90,
        "copilot_orchestrate",
        &json!({"task": "hang until cancelled", "plan": plan}),
        None,
    ))
    .await?;
    bed.model
        .wait_for_chat_requests("SUB-HANG-2", 1, TASK)
        .await?;
    mcp.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 90}}),
    )
    .await?;
    let after = timeout(
        TASK,
        mcp.call_tool("copilot_code", json!({"task": "AFTER-CANCEL"})),
    )
    .await??;
    assert_eq!(
        structured(&after)?["text"],
        "the directory is free",
        "{after}"
    );

    // Bad arguments are clear errors, and the server keeps serving.
    let cycle = json!({"tasks": [{"id": "a", "description": "1"}, {"id": "b", "description": "2"}],
                       "dependencies": {"a": ["b"], "b": ["a"]}});
    for (arguments, needle) in [
        (
            json!({"task": "x", "maxConcurrency": 11}),
            "between 1 and 10",
        ),
        (json!({"task": "x", "strategy": "fastest"}), "eager"),
        (json!({"task": "x", "plan": cycle}), "cycle"),
        (json!({"task": "   "}), "empty"),
        (
            json!({"task": "x", "workingDir": "/"}),
            "outside the workspace",
        ),
    ] {
        let response = mcp.call_tool("copilot_orchestrate", arguments).await?;
        assert_eq!(response["result"]["isError"], true, "{response}");
        assert!(text_of(&response).contains(needle), "{needle}: {response}");
    }
    mcp.shutdown().await?;
    Ok(())
}

#[tokio::test]
async fn the_orchestrate_subcommand_prints_events_and_the_json_report() -> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    let target = bed.workspace().join("cli.txt");
    bed.model.script(
        "SUB-CLI",
        [
            Reply::tool_call(
                "create",
                json!({"path": target, "file_text": "from the cli\n"}),
            ),
            Reply::text("Created cli.txt."),
        ],
    );
    let plan = bed.home().join("plan.json");
    std::fs::write(
        &plan,
        json!({"tasks": [{"id": "only", "description": "SUB-CLI"}]}).to_string(),
    )?;
    let output = timeout(
        TASK,
        tokio::process::Command::new(binary_path("copilot-bridge"))
            .args(["orchestrate", "--json", "--plan"])
            .arg(&plan)
            .arg("write the cli file")
            .env_clear()
            .env("HOME", bed.home())
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(bridge_env(&bed))
            .current_dir(bed.workspace())
            .kill_on_drop(true)
            .output(),
    )
    .await??;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    let report: Value = serde_json::from_str(&stdout)?;
    assert_eq!(
        report["summary"], "1/1 tasks succeeded, 0 skipped, 0 failed",
        "{report}"
    );
    assert_eq!(std::fs::read_to_string(&target)?, "from the cli\n");
    assert!(stderr.contains("task_start only"), "{stderr}");
    assert!(stderr.contains("plan_complete"), "{stderr}");
    Ok(())
}

#[tokio::test]
async fn ctrl_c_stops_the_orchestrate_subcommand_and_still_prints_the_report() -> anyhow::Result<()>
{
    let bed = CopilotBed::start().await?;
    bed.model.script("SUB-WAIT", [Reply::hang("waiting ")]);
    bed.model.script("SUB-NEXT", [Reply::text("never")]);
    let plan = bed.home().join("plan.json");
    std::fs::write(
        &plan,
        json!({"tasks": [{"id": "w", "description": "SUB-WAIT"},
                         {"id": "n", "description": "SUB-NEXT"}],
               "dependencies": {"n": ["w"]}})
        .to_string(),
    )?;
    let child = tokio::process::Command::new(binary_path("copilot-bridge"))
        .args(["orchestrate", "--json", "--plan"])
        .arg(&plan)
        .arg("wait, then go on")
        .env_clear()
        .env("HOME", bed.home())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(bridge_env(&bed))
        .current_dir(bed.workspace())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    bed.model
        .wait_for_chat_requests("SUB-WAIT", 1, TASK)
        .await?;
    super::bridge_cli::press_ctrl_c(&child)?;
    let output = timeout(TASK, child.wait_with_output()).await??;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(130), "{stdout}");
    let report: Value = serde_json::from_str(&stdout)?;
    assert_eq!(report["stopped"]["kind"], "cancelled", "{report}");
    assert_eq!(task(&report, "w")["status"], "cancelled", "{report}");
    assert_eq!(task(&report, "n")["status"], "cancelled", "{report}");
    assert!(bed.model.chat_requests("SUB-NEXT").is_empty());
    Ok(())
}
