//! The long-lived session tools end to end: raw MCP over stdio → the real `copilot-bridge`
//! binary → the real Copilot CLI → the scripted model (BYOK). Turns stream as ordered
//! callbacks, files really land, a stop drains then closes, the CLI killed mid-turn recovers,
//! and ten sessions share one CLI without losing or reordering an event.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use bridge_test_support::{CopilotBed, McpProcess, Reply};
use serde_json::{Value, json};
use tokio::time::timeout;

use super::bridge_code::{TASK, send_call, spawn_bridge, structured};

/// Request ids of this file's calls, away from other suites' and `McpProcess`'s own.
static NEXT_ID: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(5_000);

fn next_id() -> i64 {
    NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Calls a tool and returns the whole response.
async fn call(mcp: &mut McpProcess, tool: &str, arguments: Value) -> anyhow::Result<Value> {
    let id = next_id();
    mcp.send(&send_call(id, tool, &arguments, None)).await?;
    timeout(TASK, mcp.response_to(&json!(id))).await?
}

/// The structured result of a call that may carry the session API's `{error}`.
fn content(response: &Value) -> &Value {
    &response["result"]["structuredContent"]
}

async fn start(mcp: &mut McpProcess, dir: &Path) -> anyhow::Result<String> {
    let response = call(
        mcp,
        "copilot_session_start",
        json!({"workingDirectory": dir}),
    )
    .await?;
    let id = structured(&response)?["sessionId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    anyhow::ensure!(!id.is_empty(), "no sessionId: {response}");
    Ok(id)
}

async fn query(mcp: &mut McpProcess, id: &str, prompt: &str) -> anyhow::Result<Value> {
    let response = call(
        mcp,
        "copilot_session_query",
        json!({"sessionId": id, "prompt": prompt}),
    )
    .await?;
    Ok(structured(&response)?.clone())
}

/// Reads events until `onIdle` (included), in order.
async fn events_until_idle(mcp: &mut McpProcess, id: &str) -> anyhow::Result<Vec<Value>> {
    let mut events = Vec::new();
    timeout(TASK, async {
        loop {
            let response = call(
                mcp,
                "copilot_session_live",
                json!({"sessionId": id, "waitMs": 5000}),
            )
            .await?;
            let result = content(&response);
            if result["error"] == "HttpRequestTimeout" {
                continue;
            }
            let batch = result["events"]
                .as_array()
                .ok_or_else(|| anyhow::anyhow!("no events: {response}"))?;
            events.extend(batch.iter().cloned());
            if events.last().is_some_and(|e| e["callback"] == "onIdle") {
                return Ok::<_, anyhow::Error>(());
            }
        }
    })
    .await??;
    Ok(events)
}

/// The callback names, with runs of one name collapsed (deltas arrive in as many pieces as
/// the model streams).
fn shape(events: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for event in events {
        let name = event["callback"]
            .as_str()
            .map_or_else(|| "sessionError".to_owned(), str::to_owned);
        if names.last() != Some(&name) {
            names.push(name);
        }
    }
    names
}

/// The concatenated deltas of every message.
fn message_text(events: &[Value]) -> String {
    events
        .iter()
        .filter(|e| e["callback"] == "onMessage")
        .filter_map(|e| e["delta"].as_str())
        .collect()
}

#[tokio::test]
async fn a_session_streams_ordered_callbacks_keeps_context_and_drains_after_stop()
-> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    let target = bed.workspace().join("from-session.txt");
    bed.model.script(
        "SESS-WRITE",
        [
            Reply::tool_call(
                "create",
                json!({"path": target, "file_text": "written in a session\n"}),
            ),
            Reply::text("Created the file."),
        ],
    );
    bed.model
        .script("SESS-AGAIN", [Reply::text("I remember the file.")]);
    bed.model.script(
        "SESS-SLOW",
        [
            Reply::text("one two three four five six seven eight nine ten eleven twelve")
                .with_chunk_delay(Duration::from_millis(300)),
        ],
    );
    bed.model
        .script("SESS-AFTER", [Reply::text("after the slow one")]);
    let mut mcp = spawn_bridge(&bed).await?;

    assert_session_tools_listed(&mut mcp).await?;

    let id = start(&mut mcp, bed.workspace()).await?;
    assert_eq!(query(&mut mcp, &id, "please SESS-WRITE").await?, json!({}));
    let events = events_until_idle(&mut mcp, &id).await?;
    assert_eq!(std::fs::read_to_string(&target)?, "written in a session\n");
    assert_eq!(
        shape(&events),
        [
            "onAgentStart",
            "onStartToolExecution",
            "onToolExecution",
            // The CLI reports the path it wrote as a short message while the tool runs.
            "onStartMessage",
            "onMessage",
            "onEndMessage",
            "onEndToolExecution",
            "onStartMessage",
            "onMessage",
            "onEndMessage",
            "onAgentEnd",
            "onIdle",
        ],
        "{events:#?}"
    );
    assert!(
        message_text(&events).ends_with("Created the file."),
        "{events:#?}"
    );
    let end = events
        .iter()
        .rfind(|e| e["callback"] == "onEndMessage")
        .cloned()
        .unwrap_or_default();
    assert_eq!(end["completeContent"], "Created the file.", "{end}");
    let started = events
        .iter()
        .find(|e| e["callback"] == "onStartToolExecution")
        .cloned()
        .unwrap_or_default();
    assert!(
        started["toolArguments"]
            .as_str()
            .is_some_and(|a| a.contains("from-session.txt")),
        "{started}"
    );
    let turn = events[0]["turnId"].clone();
    assert!(
        events
            .iter()
            .any(|e| e["callback"] == "onAgentEnd" && e["turnId"] == turn),
        "{events:#?}"
    );

    // The second query sees the first turn's context.
    query(&mut mcp, &id, "SESS-AGAIN").await?;
    let again = events_until_idle(&mut mcp, &id).await?;
    assert_eq!(message_text(&again), "I remember the file.");
    let history = bed
        .model
        .chat_requests("SESS-AGAIN")
        .last()
        .map(|r| serde_json::to_string(r.messages()).unwrap_or_default())
        .unwrap_or_default();
    assert!(history.contains("SESS-WRITE"), "{history}");

    assert_one_live_call_at_a_time(&mut mcp, &id).await?;
    assert_a_query_queues_behind_a_running_turn(&mut mcp, &id).await?;
    assert_stop_drains_then_closes(&mut mcp, &id).await?;
    assert_start_errors(&mut mcp, &bed).await?;
    assert_eq!(mcp.shutdown().await?, Some(0));
    Ok(())
}

/// `tools/list` has the five session tools.
async fn assert_session_tools_listed(mcp: &mut McpProcess) -> anyhow::Result<()> {
    let names: Vec<String> = mcp.request("tools/list", json!({})).await?["result"]["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    for tool in ["start", "query", "live", "stop", "list"] {
        let name = format!("copilot_session_{tool}");
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    Ok(())
}

/// Nothing is queued on an idle session: the first `live` waits, a second one on the same
/// session is refused at once, and the first ends with the long-poll timeout.
async fn assert_one_live_call_at_a_time(mcp: &mut McpProcess, id: &str) -> anyhow::Result<()> {
    let (first, second) = (next_id(), next_id());
    mcp.send(&send_call(
        first,
        "copilot_session_live",
        &json!({"sessionId": id, "waitMs": 3000}),
        None,
    ))
    .await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    mcp.send(&send_call(
        second,
        "copilot_session_live",
        &json!({"sessionId": id}),
        None,
    ))
    .await?;
    let (mut a, mut b) = (None, None);
    while a.is_none() || b.is_none() {
        let message = mcp.recv().await?;
        if message["id"] == json!(first) {
            anyhow::ensure!(b.is_some(), "the second live call was not answered at once");
            a = Some(message);
        } else if message["id"] == json!(second) {
            b = Some(message);
        }
    }
    let (a, b) = (a.unwrap_or_default(), b.unwrap_or_default());
    assert_eq!(content(&b)["error"], "ParallelCallNotSupported", "{b}");
    assert_eq!(b["result"]["isError"], true, "{b}");
    assert_eq!(content(&a)["error"], "HttpRequestTimeout", "{a}");
    assert_eq!(a["result"]["isError"], false, "{a}");

    Ok(())
}

/// A slow turn: a second query is queued behind it, and the list shows the session running.
async fn assert_a_query_queues_behind_a_running_turn(
    mcp: &mut McpProcess,
    id: &str,
) -> anyhow::Result<()> {
    let mcp = &mut *mcp;
    query(mcp, id, "SESS-SLOW").await?;
    assert_eq!(query(mcp, id, "SESS-AFTER").await?, json!({"queued": true}));
    let list = call(mcp, "copilot_session_list", json!({})).await?;
    let row = structured(&list)?["sessions"][0].clone();
    assert_eq!(row["sessionId"], json!(id), "{list}");
    assert_eq!(row["state"], "running", "{list}");

    Ok(())
}

/// Stop mid-turn: Closed; the queued events drain, then SessionClosed once, then
/// SessionNotFound; a query after the stop is refused.
async fn assert_stop_drains_then_closes(mcp: &mut McpProcess, id: &str) -> anyhow::Result<()> {
    let mcp = &mut *mcp;
    // SessionNotFound.
    let stopped = call(mcp, "copilot_session_stop", json!({"sessionId": id})).await?;
    assert_eq!(structured(&stopped)?, &json!({"result": "Closed"}));
    let list = call(mcp, "copilot_session_list", json!({})).await?;
    assert_eq!(
        structured(&list)?["sessions"][0]["state"],
        "closed-undrained",
        "{list}"
    );
    let refused_query = call(
        mcp,
        "copilot_session_query",
        json!({"sessionId": id, "prompt": "more"}),
    )
    .await?;
    assert_eq!(content(&refused_query)["error"], "SessionClosed");
    let mut drained = Vec::new();
    let closed = loop {
        let response = call(
            mcp,
            "copilot_session_live",
            json!({"sessionId": id, "waitMs": 1000}),
        )
        .await?;
        match content(&response)["events"].as_array() {
            Some(batch) => drained.extend(batch.iter().cloned()),
            None => break response,
        }
    };
    assert_eq!(content(&closed)["error"], "SessionClosed", "{closed}");
    assert_eq!(closed["result"]["isError"], false, "{closed}");
    assert!(
        drained.iter().any(|e| e["callback"] == "onAgentEnd"),
        "{drained:#?}"
    );
    assert!(
        !drained
            .iter()
            .any(|e| message_text(std::slice::from_ref(e)).contains("after the slow one")),
        "the queued query must not run after stop"
    );
    let gone = call(mcp, "copilot_session_live", json!({"sessionId": id})).await?;
    assert_eq!(content(&gone)["error"], "SessionNotFound", "{gone}");
    assert_eq!(gone["result"]["isError"], true, "{gone}");
    let gone = call(mcp, "copilot_session_stop", json!({"sessionId": id})).await?;
    assert_eq!(content(&gone)["error"], "SessionNotFound", "{gone}");

    Ok(())
}

/// The seed's start errors, and the workspace confinement.
async fn assert_start_errors(mcp: &mut McpProcess, bed: &CopilotBed) -> anyhow::Result<()> {
    for (arguments, error) in [
        (
            json!({"workingDirectory": "relative/dir"}),
            "WorkingDirectoryNotAbsolutePath",
        ),
        (
            json!({"workingDirectory": bed.workspace().join("missing")}),
            "WorkingDirectoryNotExists",
        ),
        (
            json!({"workingDirectory": bed.workspace(), "model": "not a model"}),
            "ModelIdNotFound",
        ),
    ] {
        let response = call(mcp, "copilot_session_start", arguments).await?;
        assert_eq!(content(&response)["error"], error, "{response}");
        assert_eq!(response["result"]["isError"], true, "{response}");
    }
    let outside = call(
        mcp,
        "copilot_session_start",
        json!({"workingDirectory": "/"}),
    )
    .await?;
    assert_eq!(outside["result"]["isError"], true, "{outside}");
    assert!(
        serde_json::to_string(&outside)?.contains("outside the workspace"),
        "{outside}"
    );
    let unknown = call(
        mcp,
        "copilot_session_query",
        json!({"sessionId": "no-such", "prompt": "x"}),
    )
    .await?;
    assert_eq!(content(&unknown)["error"], "SessionNotFound", "{unknown}");
    Ok(())
}

#[tokio::test]
async fn a_started_session_continues_with_copilot_code_task_after_a_bridge_restart()
-> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    bed.model
        .script("SESS-REMEMBER", [Reply::text("noted: 42")]);
    bed.model.script("SESS-RECALL", [Reply::text("it was 42")]);
    let mut mcp = spawn_bridge(&bed).await?;
    let id = start(&mut mcp, bed.workspace()).await?;
    query(&mut mcp, &id, "SESS-REMEMBER the number 42").await?;
    events_until_idle(&mut mcp, &id).await?;
    assert_eq!(mcp.shutdown().await?, Some(0));

    let mut mcp = spawn_bridge(&bed).await?;
    let response = call(
        &mut mcp,
        "copilot_code_task",
        json!({"prompt": "SESS-RECALL", "sessionId": id}),
    )
    .await?;
    let result = structured(&response)?;
    assert_eq!(result["sessionId"], json!(id), "{result}");
    assert_eq!(result["text"], "it was 42");
    let history = bed
        .model
        .chat_requests("SESS-RECALL")
        .last()
        .map(|r| serde_json::to_string(r.messages()).unwrap_or_default())
        .unwrap_or_default();
    assert!(history.contains("SESS-REMEMBER"), "{history}");
    assert_eq!(mcp.shutdown().await?, Some(0));
    Ok(())
}

#[tokio::test]
async fn ten_sessions_share_one_cli_and_lose_or_reorder_nothing() -> anyhow::Result<()> {
    const SESSIONS: usize = 10;
    let bed = CopilotBed::start().await?;
    let mut ids = Vec::new();
    let mut mcp = spawn_bridge(&bed).await?;
    for n in 0..SESSIONS {
        let dir = bed.workspace().join(format!("dir{n}"));
        std::fs::create_dir_all(&dir)?;
        let words: Vec<String> = (0..20).map(|w| format!("s{n}w{w}")).collect();
        bed.model.script(
            &format!("MANY-{n}-GO"),
            [Reply::text(&words.join(" ")).with_chunk_delay(Duration::from_millis(5))],
        );
        ids.push((start(&mut mcp, &dir).await?, words.join(" ")));
    }
    for (n, (id, _)) in ids.iter().enumerate() {
        query(&mut mcp, id, &format!("MANY-{n}-GO")).await?;
    }
    // Read them interleaved: one batch from each in turn until each is idle.
    let mut events: Vec<Vec<Value>> = vec![Vec::new(); SESSIONS];
    let mut idle = HashSet::new();
    timeout(TASK * 2, async {
        while idle.len() < SESSIONS {
            for (n, (id, _)) in ids.iter().enumerate() {
                if idle.contains(&n) {
                    continue;
                }
                let response = call(
                    &mut mcp,
                    "copilot_session_live",
                    json!({"sessionId": id, "waitMs": 200, "maxEvents": 7}),
                )
                .await?;
                if let Some(batch) = content(&response)["events"].as_array() {
                    events[n].extend(batch.iter().cloned());
                    if events[n].last().is_some_and(|e| e["callback"] == "onIdle") {
                        idle.insert(n);
                    }
                }
            }
        }
        Ok::<_, anyhow::Error>(())
    })
    .await??;
    for (n, (_, words)) in ids.iter().enumerate() {
        assert_eq!(
            shape(&events[n]),
            [
                "onAgentStart",
                "onStartMessage",
                "onMessage",
                "onEndMessage",
                "onAgentEnd",
                "onIdle"
            ],
            "session {n}: {:#?}",
            events[n]
        );
        assert_eq!(&message_text(&events[n]), words, "session {n}");
    }
    let list = call(&mut mcp, "copilot_session_list", json!({})).await?;
    assert_eq!(
        structured(&list)?["sessions"].as_array().map(Vec::len),
        Some(SESSIONS)
    );
    assert_eq!(mcp.shutdown().await?, Some(0));
    Ok(())
}

/// The running Copilot CLI under the bridge `root` (it leads its own process group).
fn copilot_cli_pid(root: u32) -> Option<i32> {
    let mut parents = vec![root];
    let mut seen = HashSet::new();
    while let Some(parent) = parents.pop() {
        for entry in std::fs::read_dir("/proc").ok()?.flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            let parent_of = stat
                .rsplit_once(") ")
                .and_then(|(_, rest)| rest.split(' ').nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            if parent_of != Some(parent) || !seen.insert(pid) {
                continue;
            }
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            if String::from_utf8_lossy(&cmdline).contains("--acp") {
                return i32::try_from(pid).ok();
            }
            parents.push(pid);
        }
    }
    None
}

#[tokio::test]
async fn the_cli_killed_mid_turn_is_reported_and_the_session_recovers() -> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    bed.model
        .script("CRASH-FIRST", [Reply::text("first answer")]);
    // The runner retries a turn the CLI died in: the second attempt gets the second reply.
    bed.model.script(
        "CRASH-HANG",
        [
            Reply::hang("partial "),
            Reply::text("recovered after the crash"),
        ],
    );
    bed.model.script("CRASH-NEXT", [Reply::text("back again")]);
    bed.model
        .script("CRASH-LAST", [Reply::text("after the replacement")]);
    let mut mcp = spawn_bridge(&bed).await?;
    let id = start(&mut mcp, bed.workspace()).await?;
    query(&mut mcp, &id, "CRASH-FIRST").await?;
    events_until_idle(&mut mcp, &id).await?;

    query(&mut mcp, &id, "CRASH-HANG").await?;
    // Wait for the partial message, then kill the CLI's process group.
    timeout(TASK, async {
        loop {
            let response = call(
                &mut mcp,
                "copilot_session_live",
                json!({"sessionId": id, "maxEvents": 1}),
            )
            .await?;
            if content(&response)["events"][0]["callback"] == "onMessage" {
                return Ok::<_, anyhow::Error>(());
            }
        }
    })
    .await??;
    let bridge = mcp.pid().ok_or_else(|| anyhow::anyhow!("bridge gone"))?;
    let cli = copilot_cli_pid(bridge).ok_or_else(|| anyhow::anyhow!("no Copilot CLI"))?;
    let group = rustix::process::Pid::from_raw(cli).ok_or_else(|| anyhow::anyhow!("pid 0"))?;
    rustix::process::kill_process_group(group, rustix::process::Signal::KILL)?;
    let crashed = events_until_idle(&mut mcp, &id).await?;
    assert_eq!(
        shape(&crashed),
        [
            "onEndMessage",
            "sessionError",
            "onStartMessage",
            "onMessage",
            "onEndMessage",
            "onAgentEnd",
            "onIdle"
        ],
        "{crashed:#?}"
    );
    let error = crashed
        .iter()
        .find_map(|e| e["sessionError"].as_str())
        .unwrap_or_default();
    assert!(error.contains("signal 9"), "{error}");
    assert_eq!(message_text(&crashed), "recovered after the crash");

    // The next query restarts the CLI and reloads the session with its history.
    query(&mut mcp, &id, "CRASH-NEXT").await?;
    let next = events_until_idle(&mut mcp, &id).await?;
    assert_eq!(message_text(&next), "back again", "{next:#?}");
    let history = bed
        .model
        .chat_requests("CRASH-NEXT")
        .last()
        .map(|r| serde_json::to_string(r.messages()).unwrap_or_default())
        .unwrap_or_default();
    assert!(history.contains("CRASH-FIRST"), "{history}");

    // Now the CLI dies and its record of the session is gone: a replacement is seeded with a
    // summary, and the live stream says so.
    let cli = copilot_cli_pid(bridge).ok_or_else(|| anyhow::anyhow!("no Copilot CLI"))?;
    let group = rustix::process::Pid::from_raw(cli).ok_or_else(|| anyhow::anyhow!("pid 0"))?;
    rustix::process::kill_process_group(group, rustix::process::Signal::KILL)?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let state = bed.copilot_home().join("session-state");
    for entry in std::fs::read_dir(&state)?.flatten() {
        if entry.file_name().to_string_lossy().contains(&id) {
            let path = entry.path();
            if path.is_dir() {
                std::fs::remove_dir_all(path)?;
            } else {
                std::fs::remove_file(path)?;
            }
        }
    }
    query(&mut mcp, &id, "CRASH-LAST").await?;
    let last = events_until_idle(&mut mcp, &id).await?;
    let seeded = last
        .iter()
        .find(|e| e["callback"] == "onGeneratedUserPrompt")
        .cloned()
        .unwrap_or_default();
    assert!(
        seeded["prompt"]
            .as_str()
            .is_some_and(|p| p.contains("CRASH-FIRST") || p.contains("CRASH-NEXT")),
        "{last:#?}"
    );
    assert_eq!(message_text(&last), "after the replacement", "{last:#?}");
    assert_eq!(mcp.shutdown().await?, Some(0));
    Ok(())
}

/// MCP 2026-07-28, as Claude Code and the Copilot CLI speak it to our servers: `server/discover`,
/// no `initialize`, the protocol version and capabilities in every request's `_meta`.
#[tokio::test]
async fn the_2026_protocol_drives_a_session_without_initialize() -> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    bed.model
        .script("SESS-2026", [Reply::text("hello from the new protocol")]);
    let env = super::bridge_code::bridge_env(&bed);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let workspace = bed.workspace().display().to_string();
    let mut mcp = McpProcess::spawn(
        &bridge_test_support::binary_path("copilot-bridge"),
        &["--workspace", &workspace],
        bed.home(),
        &env,
    )?;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw-2026", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let discovered = mcp
        .request("server/discover", json!({"_meta": meta}))
        .await?;
    assert!(
        discovered["result"]["supportedVersions"]
            .as_array()
            .is_some_and(|v| v.contains(&json!("2026-07-28"))),
        "{discovered}"
    );
    let mut call_2026 = async |tool: &str, arguments: Value| -> anyhow::Result<Value> {
        let id = next_id();
        let mut request = send_call(id, tool, &arguments, None);
        request["params"]["_meta"] = meta.clone();
        mcp.send(&request).await?;
        timeout(TASK, mcp.response_to(&json!(id))).await?
    };
    let started = call_2026(
        "copilot_session_start",
        json!({"workingDirectory": bed.workspace()}),
    )
    .await?;
    let id = structured(&started)?["sessionId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let queried = call_2026(
        "copilot_session_query",
        json!({"sessionId": id, "prompt": "SESS-2026"}),
    )
    .await?;
    assert_eq!(structured(&queried)?, &json!({}));
    let mut events = Vec::new();
    while !events
        .last()
        .is_some_and(|e: &Value| e["callback"] == "onIdle")
    {
        let live = call_2026("copilot_session_live", json!({"sessionId": id})).await?;
        if let Some(batch) = content(&live)["events"].as_array() {
            events.extend(batch.iter().cloned());
        }
    }
    assert_eq!(message_text(&events), "hello from the new protocol");
    let stopped = call_2026("copilot_session_stop", json!({"sessionId": id})).await?;
    assert_eq!(structured(&stopped)?["result"], "Closed");
    assert_eq!(mcp.shutdown().await?, Some(0));
    Ok(())
}

/// The bridge over the scripted ACP agent (for what the scripted model cannot make the real
/// CLI send: thought chunks, and a flood of deltas).
async fn spawn_over_scripted_agent(
    home: &Path,
    extra: &[(&str, &str)],
) -> anyhow::Result<McpProcess> {
    let workspace = home.join("work");
    std::fs::create_dir_all(&workspace)?;
    let agent = bridge_test_support::binary_path("scripted-acp-agent");
    let agent = agent.display().to_string();
    let audit = home.join("audit").display().to_string();
    let workspace = workspace.display().to_string();
    let mut env = vec![
        ("COPILOT_CLI_PATH", agent.as_str()),
        ("COPILOT_AUDIT_LOG_DIR", audit.as_str()),
    ];
    env.extend_from_slice(extra);
    let mut mcp = McpProcess::spawn(
        &bridge_test_support::binary_path("copilot-bridge"),
        &["--workspace", &workspace],
        home,
        &env,
    )?;
    mcp.initialize().await?;
    Ok(mcp)
}

#[tokio::test]
async fn reasoning_streams_as_a_triple_and_a_full_queue_merges_deltas_without_loss()
-> anyhow::Result<()> {
    const DELTAS: usize = 12_000;
    let home = tempfile::TempDir::new()?;
    let mut mcp = spawn_over_scripted_agent(home.path(), &[]).await?;
    let id = start(&mut mcp, &home.path().join("work")).await?;
    query(&mut mcp, &id, "THINK").await?;
    let events = events_until_idle(&mut mcp, &id).await?;
    assert_eq!(
        shape(&events),
        [
            "onAgentStart",
            "onStartReasoning",
            "onReasoning",
            "onEndReasoning",
            "onStartMessage",
            "onMessage",
            "onEndMessage",
            "onAgentEnd",
            "onIdle"
        ],
        "{events:#?}"
    );
    let reasoning = events
        .iter()
        .find(|e| e["callback"] == "onEndReasoning")
        .cloned()
        .unwrap_or_default();
    assert_eq!(reasoning["completeContent"], "weighing the options");

    // More deltas than the queue holds, with nobody reading: they are merged, not dropped.
    query(&mut mcp, &id, &format!("STREAM {DELTAS}")).await?;
    timeout(TASK, async {
        loop {
            let list = call(&mut mcp, "copilot_session_list", json!({})).await?;
            if structured(&list)?["sessions"][0]["state"] == "idle" {
                return Ok::<_, anyhow::Error>(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await??;
    let flood = events_until_idle(&mut mcp, &id).await?;
    let deltas = flood
        .iter()
        .filter(|e| e["callback"] == "onMessage")
        .count();
    assert!(deltas < DELTAS, "{deltas} deltas: nothing was merged");
    let indices: Vec<usize> = message_text(&flood)
        .split(';')
        .filter(|piece| !piece.is_empty())
        .filter_map(|piece| piece.split('@').next()?.parse().ok())
        .collect();
    assert_eq!(indices.len(), DELTAS, "deltas were lost");
    assert!(
        indices.iter().enumerate().all(|(i, &n)| i == n),
        "deltas out of order"
    );
    assert_eq!(
        shape(&flood),
        [
            "onAgentStart",
            "onStartMessage",
            "onMessage",
            "onEndMessage",
            "onAgentEnd",
            "onIdle"
        ]
    );
    assert_eq!(mcp.shutdown().await?, Some(0));
    Ok(())
}

/// The five session tools through the official MCP Python SDK
/// (`tests/python/bridge_sessions_e2e.py`).
#[tokio::test]
async fn python_sdk_client_drives_the_session_tools() -> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    let target = bed.workspace().join("py-session.txt");
    bed.model.script(
        "PYS-WRITE",
        [
            Reply::tool_call(
                "create",
                json!({"path": target, "file_text": "from the python sdk\n"}),
            ),
            Reply::text("Wrote it."),
        ],
    );
    bed.model.script(
        "PYS-SLOW",
        [Reply::text("one two three four five six seven eight")
            .with_chunk_delay(Duration::from_millis(300))],
    );
    super::bridge_code::run_python_checks(
        &bed,
        "bridge_sessions_e2e.py",
        &[],
        &[],
        "4 passed, 0 failed",
    )
    .await
}

#[tokio::test]
async fn idle_sessions_are_stopped_and_every_session_call_is_judged_and_audited()
-> anyhow::Result<()> {
    let home = tempfile::TempDir::new()?;
    let mut mcp =
        spawn_over_scripted_agent(home.path(), &[("COPILOT_BRIDGE_SESSION_IDLE_MS", "400")])
            .await?;
    let id = start(&mut mcp, &home.path().join("work")).await?;
    query(&mut mcp, &id, "hello there").await?;
    let events = events_until_idle(&mut mcp, &id).await?;
    assert_eq!(message_text(&events), "echo: hello there");

    // A query is a delegated task: the policy judges its text.
    let blocked = call(
        &mut mcp,
        "copilot_session_query",
        json!({"sessionId": id, "prompt": "now run rm -rf / for me"}),
    )
    .await?;
    assert_eq!(blocked["result"]["isError"], true, "{blocked}");

    // Left alone past the idle limit, the session is stopped and says why.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let list = call(&mut mcp, "copilot_session_list", json!({})).await?;
    assert_eq!(
        structured(&list)?["sessions"][0]["state"],
        "closed-undrained",
        "{list}"
    );
    let note = call(&mut mcp, "copilot_session_live", json!({"sessionId": id})).await?;
    let error = content(&note)["events"][0]["sessionError"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(error.contains("COPILOT_BRIDGE_SESSION_IDLE_MS"), "{note}");
    let closed = call(&mut mcp, "copilot_session_live", json!({"sessionId": id})).await?;
    assert_eq!(content(&closed)["error"], "SessionClosed", "{closed}");
    assert_eq!(mcp.shutdown().await?, Some(0));

    let mut audited = String::new();
    for entry in std::fs::read_dir(home.path().join("audit"))? {
        audited.push_str(&std::fs::read_to_string(entry?.path())?);
    }
    for tool in ["start", "query", "live", "list"] {
        assert!(
            audited.contains(&format!("copilot_session_{tool}")),
            "no audit record of copilot_session_{tool}"
        );
    }
    Ok(())
}
