//! The ACP client against the scripted test agent, for the faults the real CLI cannot be made
//! to show: garbage on the wire, requests left unanswered, crashes in every phase, agents that
//! ignore EOF. Every case must end in bounded time with a clear error and no process left.

use std::time::{Duration, Instant};

use bridge_test_support::binary_path;
use copilot_bridge::acp::{
    AcpError, Agent, PromptOptions, RestartBudget, SessionNotice, StopReason, Update, adopt_orphans,
};
use serde_json::json;
use tempfile::TempDir;
use tokio::sync::mpsc;
use tokio::time::timeout;
use tokio_util::sync::CancellationToken;

use crate::suite::acp_harness::{STEP, agent_pid, assert_group_gone, scripted_agent, test_gate};

fn setup() -> anyhow::Result<TempDir> {
    // Orphans of killed agents come back to this process to be reaped, whatever PID 1 does.
    adopt_orphans()?;
    Ok(TempDir::new()?)
}

#[tokio::test]
async fn garbage_lines_are_skipped_and_unknown_updates_kept() -> anyhow::Result<()> {
    let dir = setup()?;
    let agent = Agent::new(scripted_agent(dir.path(), &["--garbage"]), test_gate());
    let session = timeout(STEP, agent.new_session(dir.path())).await??;
    let outcome = timeout(STEP, session.prompt_text("hello there")).await??;
    assert_eq!(outcome.text, "echo: hello there");
    assert_eq!(outcome.stop_reason, StopReason::EndTurn);

    let (tx, mut rx) = mpsc::unbounded_channel();
    let options = PromptOptions {
        updates: Some(tx),
        ..PromptOptions::default()
    };
    let novel = timeout(
        STEP,
        session.prompt(
            vec![copilot_bridge::acp::ContentBlock::text("NOVEL")],
            options,
        ),
    )
    .await??;
    assert_eq!(novel.unknown_updates, 1);
    let mut unknown = None;
    while let Ok(update) = rx.try_recv() {
        if let Update::Unknown { kind, raw } = update {
            unknown = Some((kind, raw));
        }
    }
    assert_eq!(
        unknown,
        Some((
            "weather_report".to_owned(),
            json!({"sessionUpdate": "weather_report", "sky": "blue"})
        ))
    );
    let pid = agent_pid(dir.path())?;
    agent.shutdown().await;
    assert_group_gone(pid).await?;
    Ok(())
}

#[tokio::test]
async fn a_request_the_agent_never_answers_times_out_and_the_agent_stays_usable()
-> anyhow::Result<()> {
    let dir = setup()?;
    let mut config = scripted_agent(dir.path(), &["--ignore", "session/new"]);
    config.timeouts.request = Duration::from_millis(300);
    let agent = Agent::new(config, test_gate());
    let started = Instant::now();
    let err = timeout(STEP, agent.new_session(dir.path()))
        .await?
        .expect_err("session/new is never answered");
    assert!(
        matches!(&err, AcpError::Timeout { method, .. } if method == "session/new"),
        "{err}"
    );
    assert!(err.to_string().contains("did not answer"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(20));
    // The agent is still there and answers everything else.
    let sessions = timeout(STEP, agent.list_sessions(None)).await??;
    assert!(sessions.is_empty());
    agent.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_crash_in_each_phase_gives_a_clear_error_and_leaves_no_process() -> anyhow::Result<()> {
    for phase in [
        "initialize",
        "session/new",
        "session/prompt",
        "mid-stream",
        "killed",
    ] {
        let dir = setup()?;
        let mut args = vec!["--grandchild"];
        if !["mid-stream", "killed"].contains(&phase) {
            args.extend(["--crash-on", phase]);
        }
        let agent = Agent::new(scripted_agent(dir.path(), &args), test_gate());
        let err = timeout(STEP, async {
            let session = agent.new_session(dir.path()).await?;
            let prompt = match phase {
                "mid-stream" => "CRASH now",
                "killed" => "KILLME now",
                _ => "hello",
            };
            session.prompt_text(prompt).await
        })
        .await?
        .expect_err("the agent crashed");
        let method = match phase {
            "mid-stream" | "killed" => "session/prompt",
            other => other,
        };
        assert!(
            matches!(&err, AcpError::AgentExited { method: m, .. } if m == method),
            "{phase}: {err}"
        );
        let text = err.to_string();
        assert!(
            text.contains("code 3") || text.contains("signal 9"),
            "{phase}: the error says how the agent ended: {text}"
        );
        assert!(text.contains("restarts it"), "{phase}: {text}");
        assert_group_gone(agent_pid(dir.path())?).await?;
        agent.shutdown().await;
    }
    Ok(())
}

#[tokio::test]
async fn a_restarted_agent_reloads_the_session_it_saved() -> anyhow::Result<()> {
    let dir = setup()?;
    let state = dir.path().join("sessions.jsonl");
    let state = state.display().to_string();
    let agent = Agent::new(
        scripted_agent(dir.path(), &["--state", &state]),
        test_gate(),
    );
    let session = timeout(STEP, agent.new_session(dir.path())).await??;
    let id = session.id();
    timeout(STEP, session.prompt_text("first")).await??;
    let first_pid = agent_pid(dir.path())?;
    let crashed = timeout(STEP, session.prompt_text("CRASH")).await?;
    assert!(crashed.is_err_and(|e| e.is_agent_exit()));
    let outcome = timeout(STEP, session.prompt_text("after the crash")).await??;
    assert_eq!(outcome.text, "echo: after the crash");
    assert_eq!(
        outcome.notice,
        Some(SessionNotice::Reloaded {
            session_id: id.clone(),
            replayed_messages: 1
        })
    );
    assert_eq!(session.id(), id);
    assert_ne!(agent_pid(dir.path())?, first_pid, "a new agent process");
    assert_group_gone(first_pid).await?;
    // The notice is given once.
    let next = timeout(STEP, session.prompt_text("again")).await??;
    assert_eq!(next.notice, None);
    agent.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_session_the_new_agent_does_not_have_is_replaced_and_seeded_with_a_summary()
-> anyhow::Result<()> {
    let dir = setup()?;
    let agent = Agent::new(scripted_agent(dir.path(), &[]), test_gate());
    let session = timeout(STEP, agent.new_session(dir.path())).await??;
    let old_id = session.id();
    timeout(STEP, session.prompt_text("refactor the parser MARK-ONE")).await??;
    assert!(timeout(STEP, session.prompt_text("KILLME")).await?.is_err());
    let outcome = timeout(STEP, session.prompt_text("continue please")).await??;
    let Some(SessionNotice::Replaced {
        previous_id,
        session_id,
        reason,
    }) = &outcome.notice
    else {
        panic!("expected a replacement notice, got {:?}", outcome.notice);
    };
    assert_eq!(previous_id, &old_id);
    assert_eq!(session_id, &session.id());
    assert_ne!(session.id(), old_id);
    assert!(reason.contains("no saved session"), "{reason}");
    let notice = outcome
        .notice
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(notice.contains("could not be restored"), "{notice}");
    // The agent saw the summary before the new prompt.
    assert!(
        outcome.text.contains("Context from the bridge"),
        "{}",
        outcome.text
    );
    assert!(outcome.text.contains("MARK-ONE"), "{}", outcome.text);
    assert!(
        outcome.text.ends_with("continue please"),
        "{}",
        outcome.text
    );
    // Only once.
    let next = timeout(STEP, session.prompt_text("and again")).await??;
    assert_eq!(next.text, "echo: and again");
    agent.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn permission_requests_are_answered_through_the_gate_and_other_requests_get_32601()
-> anyhow::Result<()> {
    let dir = setup()?;
    let agent = Agent::new(scripted_agent(dir.path(), &[]), test_gate());
    let cwd = dir.path().canonicalize()?;
    let session = timeout(STEP, agent.new_session(&cwd)).await??;
    let inside = cwd.join("notes.txt");
    let allowed = timeout(
        STEP,
        session.prompt_text(&format!("PERMIT {}", inside.display())),
    )
    .await??;
    assert!(
        allowed.text.contains(r#""optionId":"allow_once""#),
        "{}",
        allowed.text
    );
    assert_eq!(allowed.permissions.len(), 1);
    assert!(allowed.permissions[0].allowed);
    let denied = timeout(STEP, session.prompt_text("PERMIT /etc/passwd")).await??;
    assert!(
        denied.text.contains(r#""optionId":"reject_once""#),
        "{}",
        denied.text
    );
    let denial = denied.denials().next().expect("a denial");
    assert!(denial.reason.contains("outside"), "{}", denial.reason);
    let fs = timeout(STEP, session.prompt_text("ASKFS")).await??;
    assert_eq!(fs.text, "fs error code: -32601");
    agent.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn modes_can_be_set_by_short_name() -> anyhow::Result<()> {
    let dir = setup()?;
    let agent = Agent::new(scripted_agent(dir.path(), &[]), test_gate());
    let session = timeout(STEP, agent.new_session(dir.path())).await??;
    timeout(STEP, session.set_mode("plan")).await??;
    let unknown = timeout(STEP, session.set_mode("nonsense")).await?;
    assert!(
        unknown.as_ref().is_err_and(|e| e.rpc_error().is_some()),
        "{unknown:?}"
    );
    agent.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_turn_past_its_timeout_is_cancelled_with_its_partial_output() -> anyhow::Result<()> {
    let dir = setup()?;
    let agent = Agent::new(scripted_agent(dir.path(), &[]), test_gate());
    let session = timeout(STEP, agent.new_session(dir.path())).await??;
    let options = PromptOptions {
        timeout: Some(Duration::from_millis(300)),
        ..PromptOptions::default()
    };
    let outcome = timeout(
        STEP,
        session.prompt(
            vec![copilot_bridge::acp::ContentBlock::text("HANG")],
            options,
        ),
    )
    .await??;
    assert!(outcome.timed_out);
    assert_eq!(outcome.stop_reason, StopReason::Cancelled);
    assert_eq!(outcome.text, "working on it ");
    // The session is still usable.
    let next = timeout(STEP, session.prompt_text("still there?")).await??;
    assert_eq!(next.stop_reason, StopReason::EndTurn);
    agent.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn shutdown_cancels_the_running_turn_closes_sessions_and_leaves_no_process()
-> anyhow::Result<()> {
    let dir = setup()?;
    let agent = Agent::new(scripted_agent(dir.path(), &["--grandchild"]), test_gate());
    let session = timeout(STEP, agent.new_session(dir.path())).await??;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let running = {
        let session = session.clone();
        tokio::spawn(async move {
            let options = PromptOptions {
                updates: Some(tx),
                cancel: Some(CancellationToken::new()),
                ..PromptOptions::default()
            };
            session
                .prompt(
                    vec![copilot_bridge::acp::ContentBlock::text("HANG")],
                    options,
                )
                .await
        })
    };
    // Wait until the turn is really streaming.
    timeout(STEP, rx.recv()).await?;
    let pid = agent_pid(dir.path())?;
    let report = timeout(STEP, agent.shutdown()).await?;
    assert_eq!(report.cancelled_turns, 1);
    assert_eq!(report.closed_sessions, 1);
    assert!(report.exit.is_some_and(|e| e.contains("code 0")));
    let outcome = timeout(STEP, running).await???;
    assert_eq!(outcome.stop_reason, StopReason::Cancelled);
    assert_group_gone(pid).await?;
    let after = agent.new_session(dir.path()).await;
    assert!(matches!(after, Err(AcpError::ShutDown)), "{after:?}");
    Ok(())
}

#[tokio::test]
async fn shutdown_of_an_agent_that_ignores_eof_and_sigterm_ends_with_sigkill() -> anyhow::Result<()>
{
    let dir = setup()?;
    let mut config = scripted_agent(dir.path(), &["--ignore-eof", "--grandchild"]);
    // `trap '' TERM` is inherited across exec: the agent really ignores SIGTERM.
    let agent_args: Vec<String> = config
        .args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let script = format!(
        "trap '' TERM; exec {} {}",
        binary_path("scripted-acp-agent").display(),
        agent_args.join(" ")
    );
    config.program = "/bin/sh".into();
    config.args = vec!["-c".into(), script.into()];
    config.timeouts.shutdown_grace = Duration::from_millis(300);
    let agent = Agent::new(config, test_gate());
    timeout(STEP, agent.start()).await??;
    let pid = agent_pid(dir.path())?;
    let started = Instant::now();
    let report = timeout(STEP, agent.shutdown()).await?;
    assert!(
        report
            .exit
            .as_deref()
            .is_some_and(|e| e.contains("signal 9")),
        "{report:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_group_gone(pid).await?;
    Ok(())
}

#[tokio::test]
async fn an_agent_that_keeps_crashing_is_given_up_on() -> anyhow::Result<()> {
    let dir = setup()?;
    let mut config = scripted_agent(dir.path(), &["--crash-on", "initialize"]);
    config.restart = RestartBudget {
        max_restarts: 2,
        window: Duration::from_mins(1),
    };
    let agent = Agent::new(config, test_gate());
    for _ in 0..3 {
        let err = timeout(STEP, agent.start()).await?.expect_err("crashes");
        assert!(err.is_agent_exit(), "{err}");
    }
    let err = timeout(STEP, agent.start()).await?.expect_err("given up");
    assert!(matches!(err, AcpError::RestartLimit { .. }), "{err}");
    assert!(err.to_string().contains("logs"), "{err}");
    Ok(())
}

#[tokio::test]
async fn a_turn_cancelled_while_waiting_for_the_previous_one_never_starts() -> anyhow::Result<()> {
    let dir = setup()?;
    let agent = Agent::new(scripted_agent(dir.path(), &[]), test_gate());
    let session = timeout(STEP, agent.new_session(dir.path())).await??;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let first = {
        let session = session.clone();
        let options = PromptOptions {
            updates: Some(tx),
            ..PromptOptions::default()
        };
        tokio::spawn(async move {
            session
                .prompt(
                    vec![copilot_bridge::acp::ContentBlock::text("HANG")],
                    options,
                )
                .await
        })
    };
    timeout(STEP, rx.recv()).await?;
    let cancel = CancellationToken::new();
    let second = {
        let session = session.clone();
        let options = PromptOptions {
            cancel: Some(cancel.clone()),
            ..PromptOptions::default()
        };
        tokio::spawn(async move {
            session
                .prompt(
                    vec![copilot_bridge::acp::ContentBlock::text("never sent")],
                    options,
                )
                .await
        })
    };
    cancel.cancel();
    let second = timeout(STEP, second).await???;
    assert_eq!(second.stop_reason, StopReason::Cancelled);
    assert_eq!(second.text, "");
    assert!(!first.is_finished(), "the first turn is still running");
    assert!(session.cancel());
    let first = timeout(STEP, first).await???;
    assert_eq!(first.stop_reason, StopReason::Cancelled);
    assert_eq!(first.text, "working on it ");
    let next = timeout(STEP, session.prompt_text("hello")).await??;
    assert_eq!(next.text, "echo: hello");
    agent.shutdown().await;
    Ok(())
}
