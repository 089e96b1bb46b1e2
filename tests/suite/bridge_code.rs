//! The delegate-a-task tools end to end: raw MCP over stdio → the real `copilot-bridge` binary
//! → the real Copilot CLI → the scripted model (BYOK). Files are really created, progress
//! really streams, cancels and timeouts really reach the CLI, sessions survive a bridge
//! restart, and working directories run in parallel while one directory stays serialized.

use std::time::{Duration, Instant};

use bridge_test_support::{BYOK_API_KEY, CopilotBed, MODEL_ID, McpProcess, Reply, binary_path};
use serde_json::{Value, json};
use tokio::time::timeout;

/// How long one task may take in these tests (a cold CLI start included) before the test
/// fails instead of hanging.
pub(super) const TASK: Duration = Duration::from_secs(90);

/// The bridge's environment: BYOK pointed at the bed's scripted model, the bed's scratch home.
pub(super) fn bridge_env(bed: &CopilotBed) -> Vec<(String, String)> {
    [
        ("COPILOT_CLI_PATH", bed.program().display().to_string()),
        ("COPILOT_BYOK_PROVIDER", "openai".to_owned()),
        ("COPILOT_BYOK_BASE_URL", bed.model.base_url()),
        ("COPILOT_BYOK_API_KEY", BYOK_API_KEY.to_owned()),
        ("COPILOT_BYOK_MODEL", MODEL_ID.to_owned()),
        ("COPILOT_OFFLINE", "true".to_owned()),
        ("COPILOT_HOME", bed.copilot_home().display().to_string()),
        (
            "COPILOT_AUDIT_LOG_DIR",
            bed.home().join("audit").display().to_string(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// The bridge binary, initialized, with [`bridge_env`].
pub(super) async fn spawn_bridge(bed: &CopilotBed) -> anyhow::Result<McpProcess> {
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

/// Reads until the response to `id`, returning it and the progress messages seen before it.
pub(super) async fn response_with_progress(
    mcp: &mut McpProcess,
    id: &Value,
) -> anyhow::Result<(Value, Vec<Value>)> {
    timeout(TASK, async {
        let mut progress = Vec::new();
        loop {
            let message = mcp.recv().await?;
            if message["method"] == "notifications/progress" {
                progress.push(message["params"].clone());
            } else if message.get("id") == Some(id) && message.get("method").is_none() {
                return Ok((message, progress));
            }
        }
    })
    .await?
}

/// Calls a tool and waits for its answer. A progress token is always sent: the bridge's
/// heartbeats keep lines coming while a cold CLI starts, well inside the reader's timeout.
async fn call(mcp: &mut McpProcess, tool: &str, arguments: Value) -> anyhow::Result<Value> {
    let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    mcp.send(&send_call(
        id,
        tool,
        &arguments,
        Some(json!({"progressToken": format!("call-{id}")})),
    ))
    .await?;
    Ok(response_with_progress(mcp, &json!(id)).await?.0)
}

/// Request ids of [`call`], far from the ids `McpProcess` and the tests use themselves.
static NEXT_ID: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(1_000);

pub(super) fn structured(response: &Value) -> anyhow::Result<&Value> {
    anyhow::ensure!(
        response["result"]["isError"] != json!(true),
        "the call failed: {response}"
    );
    Ok(&response["result"]["structuredContent"])
}

pub(super) fn text_of(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

pub(super) fn send_call(id: i64, tool: &str, arguments: &Value, meta: Option<Value>) -> Value {
    let mut params = json!({"name": tool, "arguments": arguments});
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

/// Unknown sessions and bad or escaping directories are tool errors that say what to do.
async fn assert_clear_errors(mcp: &mut McpProcess) -> anyhow::Result<()> {
    let unknown = call(
        mcp,
        "copilot_code_task",
        json!({"prompt": "x", "sessionId": "no-such-session"}),
    )
    .await?;
    assert_eq!(unknown["result"]["isError"], true, "{unknown}");
    assert!(text_of(&unknown).contains("unknown sessionId"), "{unknown}");
    let bad_dir = call(
        mcp,
        "copilot_code_task",
        json!({"prompt": "x", "workingDir": "missing-dir"}),
    )
    .await?;
    assert!(text_of(&bad_dir).contains("does not exist"), "{bad_dir}");
    let escape = call(
        mcp,
        "copilot_code_task",
        json!({"prompt": "x", "workingDir": "/"}),
    )
    .await?;
    assert!(
        text_of(&escape).contains("outside the workspace"),
        "{escape}"
    );
    Ok(())
}

#[tokio::test]
async fn a_task_creates_a_file_and_its_session_continues_after_a_bridge_restart()
-> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    let target = bed.workspace().join("hello.txt");
    bed.model.script(
        "CODE-WRITE-1",
        [
            Reply::tool_call(
                "create",
                json!({"path": target, "file_text": "hello from the bridge\n"}),
            ),
            Reply::text("Created hello.txt."),
        ],
    );
    bed.model
        .script("CODE-AGAIN-1", [Reply::text("Still the same session.")]);
    let mut mcp = spawn_bridge(&bed).await?;
    let started = Instant::now();
    let tools = mcp.request("tools/list", json!({})).await?;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "tools/list must not wait for the CLI"
    );
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    for name in ["copilot_code_task", "copilot_code", "copilot_code_verbose"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }

    let response = call(
        &mut mcp,
        "copilot_code_task",
        json!({"prompt": "please CODE-WRITE-1"}),
    )
    .await?;
    let result = structured(&response)?;
    assert_eq!(std::fs::read_to_string(&target)?, "hello from the bridge\n");
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    assert_eq!(result["timedOut"], false);
    assert!(
        result["text"]
            .as_str()
            .is_some_and(|t| t.contains("Created hello.txt.")),
        "{result}"
    );
    let calls = result["toolCalls"].as_array().cloned().unwrap_or_default();
    assert_eq!(calls.len(), 1, "{result}");
    assert_eq!(calls[0]["status"], "completed");
    assert_eq!(calls[0]["kind"], "edit");
    assert_eq!(result["denials"], json!([]));
    let session_id = result["sessionId"].as_str().unwrap_or_default().to_owned();
    assert!(!session_id.is_empty(), "{result}");
    let text = text_of(&response);
    assert!(
        text.contains("Success: yes | Elapsed: ")
            && text.ends_with(&format!("Session: {session_id}")),
        "{text}"
    );
    let store = std::fs::read_to_string(bed.home().join(".copilot-bridge/sessions.json"))?;
    assert!(store.contains(&session_id), "{store}");

    // A new bridge process: the recorded session is reloaded with session/load.
    assert_eq!(mcp.shutdown().await?, Some(0));
    let mut mcp = spawn_bridge(&bed).await?;
    let again = call(
        &mut mcp,
        "copilot_code",
        json!({"task": "CODE-AGAIN-1", "sessionId": session_id}),
    )
    .await?;
    let result = structured(&again)?;
    assert_eq!(result["sessionId"], json!(session_id), "{result}");
    assert_eq!(result["text"], "Still the same session.", "{result}");
    let requests = bed.model.chat_requests("CODE-AGAIN-1");
    let history = requests
        .last()
        .map(|r| serde_json::to_string(r.messages()).unwrap_or_default())
        .unwrap_or_default();
    assert!(
        history.contains("CODE-WRITE-1"),
        "the reloaded session lost its history: {history}"
    );

    assert_clear_errors(&mut mcp).await?;
    assert_eq!(mcp.shutdown().await?, Some(0));
    Ok(())
}

#[tokio::test]
async fn progress_arrives_during_a_slow_reply_and_the_verbose_log_numbers_steps()
-> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    let target = bed.workspace().join("slow.txt");
    bed.model.script(
        "CODE-SLOW-1",
        [
            Reply::tool_call("create", json!({"path": target, "file_text": "slow\n"})),
            Reply::text("one two three four five six seven eight nine ten")
                .with_chunk_delay(Duration::from_millis(400)),
        ],
    );
    let mut mcp = spawn_bridge(&bed).await?;
    let request = send_call(
        50,
        "copilot_code_verbose",
        &json!({"task": "CODE-SLOW-1"}),
        Some(json!({"progressToken": "tok-1"})),
    );
    mcp.send(&request).await?;
    let (response, progress) = response_with_progress(&mut mcp, &json!(50)).await?;
    structured(&response)?;
    let messages: Vec<&str> = progress
        .iter()
        .filter(|p| p["progressToken"] == "tok-1")
        .filter_map(|p| p["message"].as_str())
        .collect();
    assert!(
        messages.iter().any(|m| m.starts_with("tool started")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .filter(|m| m.starts_with("text so far"))
            .count()
            >= 2,
        "{messages:?}"
    );
    let values: Vec<f64> = progress
        .iter()
        .filter_map(|p| p["progress"].as_f64())
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
    let text = text_of(&response);
    let log = text.find("1. ").unwrap_or(usize::MAX);
    let result = text.find("## Result").unwrap_or(0);
    assert!(log < result, "{text}");
    assert!(text.contains("completed"), "{text}");

    // Without a token: no progress at all.
    bed.model.script("CODE-QUIET-1", [Reply::text("quiet")]);
    mcp.send(&send_call(
        51,
        "copilot_code",
        &json!({"task": "CODE-QUIET-1"}),
        None,
    ))
    .await?;
    let (_, progress) = response_with_progress(&mut mcp, &json!(51)).await?;
    assert!(progress.is_empty(), "{progress:?}");
    mcp.shutdown().await?;
    Ok(())
}

#[tokio::test]
async fn a_cancelled_task_stops_the_turn_and_its_session_stays_usable() -> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    bed.model.script("CODE-FIRST-C", [Reply::text("ready")]);
    bed.model
        .script("CODE-HANG-C", [Reply::hang("thinking about it ")]);
    bed.model
        .script("CODE-AFTER-C", [Reply::text("still here")]);
    let mut mcp = spawn_bridge(&bed).await?;
    let first = call(
        &mut mcp,
        "copilot_code_task",
        json!({"prompt": "CODE-FIRST-C"}),
    )
    .await?;
    let session_id = structured(&first)?["sessionId"].clone();

    mcp.send(&send_call(
        60,
        "copilot_code_task",
        &json!({"prompt": "CODE-HANG-C", "sessionId": session_id}),
        None,
    ))
    .await?;
    bed.model
        .wait_for_chat_requests("CODE-HANG-C", 1, TASK)
        .await?;
    mcp.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 60, "reason": "test"}}),
    )
    .await?;
    let cancelled_at = Instant::now();
    // The same session (and directory) is free again: a hung turn would block this call.
    let after = call(
        &mut mcp,
        "copilot_code_task",
        json!({"prompt": "CODE-AFTER-C", "sessionId": session_id}),
    )
    .await?;
    let result = structured(&after)?;
    assert_eq!(result["text"], "still here", "{result}");
    assert_eq!(result["sessionId"], session_id);
    assert!(
        cancelled_at.elapsed() < Duration::from_secs(30),
        "the cancel took {:?}",
        cancelled_at.elapsed()
    );
    mcp.shutdown().await?;
    Ok(())
}

#[tokio::test]
async fn a_timed_out_task_returns_its_partial_output() -> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    bed.model.script("CODE-WARM-T", [Reply::text("warm")]);
    bed.model
        .script("CODE-HANG-T", [Reply::hang("partial words ")]);
    bed.model.script("CODE-NEXT-T", [Reply::text("next")]);
    let mut mcp = spawn_bridge(&bed).await?;
    // Start the CLI first so the short timeout covers only the turn.
    let warm = call(
        &mut mcp,
        "copilot_code_task",
        json!({"prompt": "CODE-WARM-T"}),
    )
    .await?;
    let session_id = structured(&warm)?["sessionId"].clone();
    let response = call(
        &mut mcp,
        "copilot_code",
        json!({"task": "CODE-HANG-T", "timeout": 4000, "sessionId": session_id}),
    )
    .await?;
    let result = structured(&response)?;
    assert_eq!(result["timedOut"], true, "{result}");
    assert_eq!(result["stopReason"], "cancelled", "{result}");
    assert!(
        result["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("partial words")),
        "{result}"
    );
    let text = text_of(&response);
    assert!(
        text.contains("**Timed out**") && text.contains("Success: no"),
        "{text}"
    );
    let next = call(
        &mut mcp,
        "copilot_code",
        json!({"task": "CODE-NEXT-T", "sessionId": session_id}),
    )
    .await?;
    assert_eq!(structured(&next)?["text"], "next");
    mcp.shutdown().await?;
    Ok(())
}

#[tokio::test]
async fn two_directories_run_in_parallel_and_one_directory_is_serialized() -> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    for dir in ["a", "b"] {
        std::fs::create_dir_all(bed.workspace().join(dir))?;
    }
    // The task in `a` never finishes on its own: only parallel directories can get past it.
    bed.model
        .script("CODE-PAR-A", [Reply::hang("working on a ")]);
    bed.model.script("CODE-PAR-B", [Reply::text("b done")]);
    bed.model.script("CODE-SER-A2", [Reply::text("a2 done")]);
    bed.model.script("CODE-WARM-P", [Reply::text("warm")]);
    let mut mcp = spawn_bridge(&bed).await?;
    call(
        &mut mcp,
        "copilot_code_task",
        json!({"prompt": "CODE-WARM-P"}),
    )
    .await?;

    let token = |id: i64| Some(json!({"progressToken": format!("par-{id}")}));
    for (id, prompt, dir) in [
        (70, "CODE-PAR-A", "a"),
        (71, "CODE-PAR-B", "b"),
        (72, "CODE-SER-A2", "a"),
    ] {
        mcp.send(&send_call(
            id,
            "copilot_code_task",
            &json!({"prompt": prompt, "workingDir": dir}),
            token(id),
        ))
        .await?;
        if id == 70 {
            bed.model
                .wait_for_chat_requests("CODE-PAR-A", 1, TASK)
                .await?;
        }
    }
    let (b, _) = response_with_progress(&mut mcp, &json!(71)).await?;
    let canonical = |d: &str| -> anyhow::Result<Value> {
        Ok(json!(
            std::fs::canonicalize(bed.workspace().join(d))?
                .display()
                .to_string()
        ))
    };
    assert_eq!(structured(&b)?["workingDir"], canonical("b")?, "{b}");
    assert_eq!(structured(&b)?["text"], "b done", "{b}");
    assert!(
        bed.model.chat_requests("CODE-SER-A2").is_empty(),
        "a second task in directory a started while the first was still running"
    );
    mcp.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 70}}),
    )
    .await?;
    let (a2, _) = response_with_progress(&mut mcp, &json!(72)).await?;
    assert_eq!(structured(&a2)?["workingDir"], canonical("a")?, "{a2}");
    assert_eq!(structured(&a2)?["text"], "a2 done", "{a2}");
    mcp.shutdown().await?;
    Ok(())
}

#[tokio::test]
async fn a_model_that_keeps_rate_limiting_is_retried_and_then_answers() -> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    // The CLI retries the model itself (six requests per turn), then answers its error as the
    // turn's text: the bridge sees the rate limit there and runs the turn again.
    let mut replies: Vec<Reply> = (0..6)
        .map(|_| Reply::error(429, "rate limit exceeded"))
        .collect();
    replies.push(Reply::text("finally"));
    bed.model.script("CODE-LIMIT-1", replies);
    bed.model.script(
        "CODE-BROKEN-1",
        (0..6).map(|_| Reply::error(400, "invalid request: context too long")),
    );
    let mut mcp = spawn_bridge(&bed).await?;
    let response = call(
        &mut mcp,
        "copilot_code_task",
        json!({"prompt": "CODE-LIMIT-1"}),
    )
    .await?;
    let result = structured(&response)?;
    assert_eq!(result["text"], "finally", "{result}");
    assert!(result.get("error").is_none(), "{result}");
    assert_eq!(bed.model.chat_requests("CODE-LIMIT-1").len(), 7);

    // An error retrying cannot fix is reported at once as a failed task.
    let broken = call(
        &mut mcp,
        "copilot_code_task",
        json!({"prompt": "CODE-BROKEN-1"}),
    )
    .await?;
    let result = structured(&broken)?;
    assert!(
        result["error"]
            .as_str()
            .is_some_and(|e| e.contains("context too long")),
        "{result}"
    );
    assert!(text_of(&broken).contains("Success: no"), "{broken}");
    mcp.shutdown().await?;
    Ok(())
}

/// The same tools through the official MCP Python SDK (`tests/python/bridge_code_e2e.py`):
/// schemas, a task with progress, the verbose log, an SDK-side cancel and the errors.
#[tokio::test]
async fn python_sdk_client_delegates_tasks() -> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    let target = bed.workspace().join("py.txt");
    bed.model.script(
        "PY-WRITE-1",
        [
            Reply::tool_call(
                "create",
                json!({"path": target, "file_text": "written by python\n"}),
            ),
            Reply::text("Wrote py.txt."),
        ],
    );
    bed.model
        .script("PY-AGAIN-1", [Reply::text("Same session, verbose.")]);
    bed.model.script("PY-HANG-1", [Reply::hang("hanging ")]);
    bed.model
        .script("PY-AFTER-1", [Reply::text("after the cancel")]);
    bed.model
        .script("PY-SLOWT-1", [Reply::hang("partial words ")]);
    bed.model.script("PY-PAR-A", [Reply::hang("working on a ")]);
    bed.model.script("PY-PAR-B", [Reply::text("b done")]);
    bed.model.script("PY-SER-A2", [Reply::text("a2 done")]);
    bed.model
        .script("PY-RESTART-1", [Reply::text("after the restart")]);
    run_python_checks(&bed, "bridge_code_e2e.py", &[], &[], "8 passed, 0 failed").await
}

/// Runs `tests/python/<script> BINARY WORKSPACE ENV_JSON [args…]` (the official MCP Python SDK
/// against the bridge binary, with [`bridge_env`] plus `extra_env`) and checks that it passed
/// and printed `summary`.
pub(super) async fn run_python_checks(
    bed: &CopilotBed,
    script: &str,
    extra_env: &[(&str, String)],
    args: &[&str],
    summary: &str,
) -> anyhow::Result<()> {
    let mut env: serde_json::Map<String, Value> = bridge_env(bed)
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    env.insert("HOME".into(), json!(bed.home().display().to_string()));
    env.insert(
        "PATH".into(),
        json!(std::env::var("PATH").unwrap_or_default()),
    );
    env.insert("RUST_LOG".into(), json!("warn"));
    for (key, value) in extra_env {
        env.insert((*key).to_owned(), json!(value));
    }
    let mut command = std::process::Command::new(bridge_test_support::python());
    command
        .arg(format!("{}/python/{script}", env!("CARGO_MANIFEST_DIR")))
        .arg(binary_path("copilot-bridge"))
        .arg(bed.workspace())
        .arg(Value::Object(env).to_string())
        .args(args);
    // Blocking wait off the runtime's thread, so the scripted model keeps answering.
    let output = tokio::task::spawn_blocking(move || command.output()).await??;
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(
        output.status.success(),
        "the Python SDK checks in {script} failed"
    );
    assert!(stdout.contains(summary), "no summary line {summary:?}");
    Ok(())
}
