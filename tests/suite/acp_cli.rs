//! The ACP client driving the real Copilot CLI (pinned, from `scripts/peers.sh`) with the
//! scripted model behind its BYOK settings: real permission requests, real file edits, real
//! cancellation, a real crash and reload, and the real authentication error.

use std::time::{Duration, Instant};

use bridge_test_support::{CopilotBed, Reply, binary_path};
use copilot_bridge::acp::{
    AcpError, Agent, ContentBlock, MEMORY_SERVER_NAME, PromptOptions, SessionNotice, StopReason,
    ToolCallStatus, ToolKind, Update, adopt_orphans,
};
use serde_json::json;
use tokio::sync::mpsc;
use tokio::time::timeout;
use tokio_util::sync::CancellationToken;

use crate::suite::acp_harness::{
    STEP, assert_group_gone, byok_config, copilot_agent, test_gate, unauthenticated_config,
};

async fn start(bed: &CopilotBed) -> anyhow::Result<Agent> {
    adopt_orphans()?;
    let agent = Agent::new(
        copilot_agent(bed, &byok_config(bed, &[])?, None)?,
        test_gate(),
    );
    timeout(STEP, agent.start()).await??;
    Ok(agent)
}

/// Waits for the first chunk of the agent's answer on `rx`.
async fn first_text(rx: &mut mpsc::UnboundedReceiver<Update>) -> anyhow::Result<String> {
    timeout(STEP, async {
        while let Some(update) = rx.recv().await {
            if let Some(text) = update.agent_text() {
                return Ok(text.to_owned());
            }
        }
        anyhow::bail!("the turn ended without any text")
    })
    .await?
}

#[tokio::test]
async fn cli_creates_a_file_after_the_edit_is_allowed() -> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    let target = bed.workspace().join("hello.txt");
    bed.model.script(
        "WRITEFILE-1",
        [
            Reply::tool_call(
                "create",
                json!({"path": target, "file_text": "hello from the scripted model\n"}),
            ),
            Reply::text("Created hello.txt for you."),
        ],
    );
    let agent = start(&bed).await?;
    let pid = agent.pid().await.expect("running");
    let session = timeout(STEP, agent.new_session(bed.workspace())).await??;
    let outcome = timeout(STEP, session.prompt_text("please WRITEFILE-1")).await??;

    assert_eq!(outcome.stop_reason, StopReason::EndTurn, "{outcome:#?}");
    assert!(
        outcome.text.contains("Created hello.txt for you."),
        "{}",
        outcome.text
    );
    assert_eq!(outcome.permissions.len(), 1, "{:#?}", outcome.permissions);
    let permission = &outcome.permissions[0];
    assert!(permission.allowed, "{permission:?}");
    assert_eq!(permission.kind, ToolKind::Edit);
    assert_eq!(permission.paths, vec![target.clone()]);
    assert_eq!(outcome.tool_calls.len(), 1, "{:#?}", outcome.tool_calls);
    assert_eq!(
        outcome.tool_calls[0].status,
        Some(ToolCallStatus::Completed)
    );
    assert_eq!(
        std::fs::read_to_string(&target)?,
        "hello from the scripted model\n"
    );
    let requests = bed.model.chat_requests("WRITEFILE-1");
    assert_eq!(requests.len(), 2);
    assert!(
        requests[1].tool_results()[0].contains("Created file"),
        "{:?}",
        requests[1].tool_results()
    );
    let report = timeout(STEP, agent.shutdown()).await?;
    assert_eq!(report.closed_sessions, 1);
    assert_group_gone(pid).await?;
    Ok(())
}

#[tokio::test]
async fn cli_shell_command_on_a_blocked_pattern_is_denied_and_reported() -> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    let victim = bed.workspace().join("victim");
    std::fs::create_dir_all(&victim)?;
    std::fs::write(victim.join("keep.txt"), "precious")?;
    let command = format!("rm -rf {}", victim.display());
    bed.model.script(
        "SHELL-1",
        [
            Reply::tool_call(
                "bash",
                json!({"command": command, "description": "clean up",
                       "mode": "sync", "initial_wait": 10}),
            ),
            Reply::text("I could not clean up."),
        ],
    );
    let agent = start(&bed).await?;
    let session = timeout(STEP, agent.new_session(bed.workspace())).await??;
    let outcome = timeout(STEP, session.prompt_text("SHELL-1 please")).await??;

    let denials: Vec<_> = outcome.denials().collect();
    assert_eq!(denials.len(), 1, "{outcome:#?}");
    assert_eq!(denials[0].kind, ToolKind::Execute);
    assert_eq!(denials[0].command.as_deref(), Some(command.as_str()));
    assert!(
        denials[0].reason.contains("`bash` is blocked")
            && denials[0].reason.contains("acp-test-policy.toml"),
        "{}",
        denials[0].reason
    );
    assert_eq!(outcome.tool_calls[0].status, Some(ToolCallStatus::Failed));
    assert!(
        victim.join("keep.txt").is_file(),
        "the command must not have run"
    );
    agent.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn cli_cancel_mid_stream_returns_cancelled_and_the_session_stays_usable() -> anyhow::Result<()>
{
    let bed = CopilotBed::start().await?;
    bed.model
        .script("SLOW-1", [Reply::hang("thinking about it ")]);
    bed.model.script("AFTER-1", [Reply::text("still here")]);
    let agent = start(&bed).await?;
    let session = timeout(STEP, agent.new_session(bed.workspace())).await??;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let turn = {
        let session = session.clone();
        let options = PromptOptions {
            updates: Some(tx),
            cancel: Some(cancel.clone()),
            ..PromptOptions::default()
        };
        tokio::spawn(async move {
            session
                .prompt(vec![ContentBlock::text("SLOW-1 go")], options)
                .await
        })
    };
    assert!(first_text(&mut rx).await?.starts_with("thinking"));
    let cancelled_at = Instant::now();
    cancel.cancel();
    let outcome = timeout(STEP, turn).await???;
    assert_eq!(outcome.stop_reason, StopReason::Cancelled);
    assert!(!outcome.timed_out);
    assert!(outcome.text.starts_with("thinking"), "{}", outcome.text);
    assert!(
        cancelled_at.elapsed() < Duration::from_secs(5),
        "the cancel took {:?}",
        cancelled_at.elapsed()
    );
    let next = timeout(STEP, session.prompt_text("AFTER-1")).await??;
    assert_eq!(next.stop_reason, StopReason::EndTurn);
    assert_eq!(next.text, "still here");
    agent.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn cli_killed_mid_session_is_restarted_and_the_session_reloaded() -> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    bed.model.script("FIRST-K", [Reply::text("first answer")]);
    bed.model.script("HANG-K", [Reply::hang("partial ")]);
    bed.model
        .script("THIRD-K", [Reply::text("continuing where we left off")]);
    let agent = start(&bed).await?;
    let session = timeout(STEP, agent.new_session(bed.workspace())).await??;
    let id = session.id();
    timeout(STEP, session.prompt_text("FIRST-K")).await??;

    let pid = agent.pid().await.expect("running");
    let (tx, mut rx) = mpsc::unbounded_channel();
    let turn = {
        let session = session.clone();
        let options = PromptOptions {
            updates: Some(tx),
            ..PromptOptions::default()
        };
        tokio::spawn(async move {
            session
                .prompt(vec![ContentBlock::text("HANG-K")], options)
                .await
        })
    };
    first_text(&mut rx).await?;
    let group = rustix::process::Pid::from_raw(pid).expect("pid");
    rustix::process::kill_process_group(group, rustix::process::Signal::KILL)?;
    let err = timeout(STEP, turn)
        .await??
        .expect_err("the agent died mid-turn");
    assert!(err.is_agent_exit(), "{err}");
    assert!(err.to_string().contains("signal 9"), "{err}");
    assert_group_gone(pid).await?;

    let outcome = timeout(STEP, session.prompt_text("THIRD-K")).await??;
    assert_eq!(outcome.text, "continuing where we left off");
    assert!(
        matches!(&outcome.notice, Some(SessionNotice::Reloaded { session_id, .. }) if *session_id == id),
        "{:?}",
        outcome.notice
    );
    assert_eq!(session.id(), id);
    assert_ne!(agent.pid().await, Some(pid));
    // The reloaded session still has its history: the model sees the first exchange.
    let request = &bed.model.chat_requests("THIRD-K")[0];
    let conversation = serde_json::to_string(request.messages())?;
    assert!(conversation.contains("FIRST-K"), "{conversation}");
    assert!(conversation.contains("first answer"), "{conversation}");
    agent.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn cli_without_byok_or_token_gives_the_auth_error() -> anyhow::Result<()> {
    adopt_orphans()?;
    let bed = CopilotBed::start().await?;
    let agent = Agent::new(
        copilot_agent(&bed, &unauthenticated_config(&bed)?, None)?,
        test_gate(),
    );
    let err = timeout(STEP, agent.new_session(bed.workspace()))
        .await?
        .expect_err("no credentials");
    assert!(matches!(err, AcpError::AuthRequired { .. }), "{err}");
    let text = err.to_string();
    for needle in [
        "copilot login",
        "COPILOT_GITHUB_TOKEN",
        "GH_TOKEN",
        "COPILOT_BYOK_",
    ] {
        assert!(text.contains(needle), "{needle} missing: {text}");
    }
    assert!(bed.model.requests().is_empty(), "no model was configured");
    agent.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn cli_sessions_take_modes_embedded_resources_and_close() -> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    bed.model
        .script("RESOURCE-1", [Reply::text("I read the notes.")]);
    let agent = start(&bed).await?;
    let session = timeout(STEP, agent.new_session(bed.workspace())).await??;
    timeout(STEP, session.set_mode("plan")).await??;
    assert_eq!(
        session.mode().as_deref(),
        Some("https://agentclientprotocol.com/protocol/session-modes#plan")
    );
    timeout(STEP, session.set_mode("agent")).await??;
    let notes = bed.workspace().join("notes.md");
    let prompt = vec![
        ContentBlock::text("RESOURCE-1 summarize the notes"),
        ContentBlock::Resource {
            uri: format!("file://{}", notes.display()),
            mime_type: Some("text/markdown".into()),
            text: Some("the secret sauce is 42".into()),
            blob: None,
        },
    ];
    let outcome = timeout(STEP, session.prompt(prompt, PromptOptions::default())).await??;
    assert_eq!(outcome.text, "I read the notes.");
    // The CLI hands an embedded resource to the model as a tagged file holding its text.
    let sent = bed.model.chat_requests("RESOURCE-1")[0]
        .last_user_text()
        .unwrap_or_default();
    let tagged = sent
        .split_whitespace()
        .find(|word| word.contains("acp-resource-"))
        .ok_or_else(|| anyhow::anyhow!("no tagged resource file in {sent}"))?;
    assert_eq!(
        std::fs::read_to_string(tagged)?.trim(),
        "the secret sauce is 42"
    );
    let listed = timeout(STEP, agent.list_sessions(Some(bed.workspace()))).await??;
    assert!(
        listed.iter().any(|s| s.session_id == session.id()),
        "{listed:?}"
    );
    timeout(STEP, session.close()).await??;
    let closed = session.prompt_text("anything").await;
    assert!(
        matches!(closed, Err(AcpError::SessionClosed { .. })),
        "{closed:?}"
    );
    agent.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn cli_starts_openclaw_memory_and_the_model_searches_memory_through_it() -> anyhow::Result<()>
{
    let bed = CopilotBed::start().await?;
    let workspace = bed.home().join("openclaw-workspace");
    std::fs::create_dir_all(workspace.join("memory"))?;
    std::fs::write(
        workspace.join("MEMORY.md"),
        "# Decisions\n\n- Invoices are stored in PostgreSQL, in the ledger schema.\n- Deploys happen on Tuesdays.\n",
    )?;
    std::fs::write(
        workspace.join("memory/2026-11-20.md"),
        "Talked about the garden and the weather.\n",
    )?;
    let tool = format!("{MEMORY_SERVER_NAME}-openclaw_memory_search");
    bed.model.script(
        "MEMORY-1",
        [
            Reply::tool_call(&tool, json!({"query": "invoices database"})),
            Reply::text("Invoices live in PostgreSQL."),
        ],
    );
    let workspace_dir = workspace.display().to_string();
    let config = byok_config(&bed, &[("OPENCLAW_WORKSPACE_DIR", &workspace_dir)])?;
    adopt_orphans()?;
    let agent = Agent::new(
        copilot_agent(&bed, &config, Some(binary_path("openclaw-memory")))?,
        test_gate(),
    );
    let session = timeout(STEP, agent.new_session(bed.workspace())).await??;
    let outcome = timeout(
        STEP,
        session.prompt_text("MEMORY-1 where do invoices live?"),
    )
    .await??;

    let requests = bed.model.chat_requests("MEMORY-1");
    assert!(
        requests[0].tool_names().contains(&tool),
        "the CLI did not offer {tool}: {:?}",
        requests[0].tool_names()
    );
    // The memory tools are annotated read-only, so the CLI runs them without asking.
    assert_eq!(outcome.denials().count(), 0, "{outcome:#?}");
    assert_eq!(outcome.tool_calls[0].title.as_deref(), Some(tool.as_str()));
    assert_eq!(outcome.tool_calls[0].kind, Some(ToolKind::Search));
    assert_eq!(
        outcome.tool_calls[0].status,
        Some(ToolCallStatus::Completed)
    );
    let result = requests
        .get(1)
        .and_then(|r| r.tool_results().first().cloned())
        .ok_or_else(|| anyhow::anyhow!("the model never got the tool result: {outcome:#?}"))?;
    assert!(result.contains("PostgreSQL"), "{result}");
    assert!(result.contains("MEMORY.md"), "{result}");
    assert!(
        !result.contains("garden"),
        "an irrelevant note ranked: {result}"
    );
    assert_eq!(outcome.text, "Invoices live in PostgreSQL.");
    agent.shutdown().await;
    Ok(())
}

/// Processes in process group `group` running `program`: (pid, environment).
fn group_members_running(group: i32, program: &std::path::Path) -> Vec<(i32, Vec<String>)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command name (which may hold spaces): state, ppid, pgrp, …
        let fields: Vec<&str> = stat
            .rsplit_once(") ")
            .map(|(_, rest)| rest.split(' ').collect())
            .unwrap_or_default();
        if fields.get(2) != Some(&group.to_string().as_str()) {
            continue;
        }
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let argv0 = cmdline.split(|&b| b == 0).next().unwrap_or_default();
        if argv0 != program.as_os_str().as_encoded_bytes() {
            continue;
        }
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let env = environ
            .split(|&b| b == 0)
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .collect();
        found.push((pid, env));
    }
    found
}

#[tokio::test]
async fn cli_starts_openclaw_memory_with_depth_plus_one_and_the_openclaw_variables()
-> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    bed.model.script("MEM-START", [Reply::text("ok")]);
    let config = byok_config(
        &bed,
        &[
            ("OPENCLAW_WORKSPACE_DIR", "/srv/openclaw/workspace"),
            ("COPILOT_BRIDGE_DEPTH", "1"),
        ],
    )?;
    let memory = binary_path("openclaw-memory");
    adopt_orphans()?;
    let agent = Agent::new(
        copilot_agent(&bed, &config, Some(memory.clone()))?,
        test_gate(),
    );
    let session = timeout(STEP, agent.new_session(bed.workspace())).await??;
    timeout(STEP, session.prompt_text("MEM-START")).await??;
    let pid = agent.pid().await.expect("running");
    let members = timeout(STEP, async {
        loop {
            let members = group_members_running(pid, &memory);
            if !members.is_empty() {
                return members;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await?;
    let (_, env) = &members[0];
    assert!(
        env.contains(&"COPILOT_BRIDGE_DEPTH=2".to_owned()),
        "{env:?}"
    );
    assert!(
        env.contains(&"OPENCLAW_WORKSPACE_DIR=/srv/openclaw/workspace".to_owned()),
        "{env:?}"
    );
    agent.shutdown().await;
    assert_group_gone(pid).await?;
    Ok(())
}
