//! The terminal subcommands end to end with the real Copilot CLI and the scripted model:
//! `validate` with and without BYOK (and its `--prompt` round trip), and `exec` — a file really
//! created, steps on stderr and the result on stdout, and Ctrl-C cancelling a running task.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use bridge_test_support::{BYOK_API_KEY, CopilotBed, MODEL_ID, Reply, binary_path};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::time::timeout;

/// Longest a subcommand may run here (a cold CLI start included) before the test fails.
const LIMIT: Duration = Duration::from_secs(90);

/// What a user with BYOK pointed at the scripted model has in their environment.
fn byok_env(bed: &CopilotBed) -> Vec<(String, String)> {
    let mut env = cli_env(bed);
    env.extend(
        [
            ("COPILOT_BYOK_PROVIDER", "openai".to_owned()),
            ("COPILOT_BYOK_BASE_URL", bed.model.base_url()),
            ("COPILOT_BYOK_API_KEY", BYOK_API_KEY.to_owned()),
            ("COPILOT_BYOK_MODEL", MODEL_ID.to_owned()),
            ("COPILOT_OFFLINE", "true".to_owned()),
        ]
        .map(|(k, v)| (k.to_owned(), v)),
    );
    env
}

/// No login and no model: only where the CLI is and the scratch directories.
fn cli_env(bed: &CopilotBed) -> Vec<(String, String)> {
    [
        ("COPILOT_CLI_PATH", bed.program().display().to_string()),
        ("COPILOT_HOME", bed.copilot_home().display().to_string()),
        (
            "COPILOT_AUDIT_LOG_DIR",
            bed.home().join("audit").display().to_string(),
        ),
        // An OpenClaw workspace with two notes, so the memory check has something to count.
        (
            "OPENCLAW_WORKSPACE_DIR",
            bed.home().join("claw").display().to_string(),
        ),
    ]
    .map(|(k, v)| (k.to_owned(), v))
    .into()
}

fn command(bed: &CopilotBed, args: &[&str], env: &[(String, String)], cwd: &Path) -> Command {
    let mut cmd = Command::new(binary_path("copilot-bridge"));
    cmd.args(args)
        .env_clear()
        .env("HOME", bed.home())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

struct Output {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

async fn run(
    bed: &CopilotBed,
    args: &[&str],
    env: &[(String, String)],
    cwd: &Path,
) -> anyhow::Result<Output> {
    let output = timeout(LIMIT, command(bed, args, env, cwd).output()).await??;
    Ok(Output {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}

fn claw_workspace(bed: &CopilotBed) -> anyhow::Result<()> {
    let claw = bed.home().join("claw");
    std::fs::create_dir_all(claw.join("memory"))?;
    std::fs::write(claw.join("MEMORY.md"), "# Memory\n- likes Rust\n")?;
    std::fs::write(claw.join("memory/2026-11-01.md"), "- met Dana\n")?;
    std::fs::write(claw.join("memory/2026-11-02.md"), "- shipped v2\n")?;
    Ok(())
}

/// Sends SIGINT to a running subcommand, as Ctrl-C at a terminal would.
pub(super) fn press_ctrl_c(child: &Child) -> anyhow::Result<()> {
    let pid = child
        .id()
        .ok_or_else(|| anyhow::anyhow!("the child has exited"))?;
    let pid = rustix::process::Pid::from_raw(i32::try_from(pid)?)
        .ok_or_else(|| anyhow::anyhow!("pid 0"))?;
    rustix::process::kill_process(pid, rustix::process::Signal::INT)?;
    Ok(())
}

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .and_then(|checks| checks.iter().find(|c| c["name"] == name))
        .unwrap_or(&Value::Null)
}

#[tokio::test]
async fn validate_passes_with_byok_and_its_prompt_makes_a_round_trip() -> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    claw_workspace(&bed)?;
    bed.model.script("single word: pong", [Reply::text("pong")]);
    let env = byok_env(&bed);
    let out = run(&bed, &["validate", "--prompt"], &env, bed.home()).await?;
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    for line in [
        "✓ configuration",
        "✓ policy",
        "✓ ask",
        "✓ audit log",
        "✓ Copilot CLI",
        "✓ ACP initialize",
        "✓ authentication",
        "✓ round trip",
        "✓ memory server",
        "✓ OpenClaw memory",
        "- OpenClaw gateway",
    ] {
        assert!(out.stdout.contains(line), "{line} missing:\n{}", out.stdout);
    }
    assert!(out.stdout.contains("\"pong\""), "{}", out.stdout);
    assert!(out.stdout.contains("2 daily notes"), "{}", out.stdout);
    assert!(
        out.stdout.contains("GitHub Copilot CLI 1.0.102"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.ends_with("All required checks passed.\n"),
        "{}",
        out.stdout
    );
    assert_eq!(bed.model.chat_requests("single word: pong").len(), 1);

    // The same, as JSON (no round trip this time: no model call).
    let out = run(&bed, &["validate", "--json"], &env, bed.home()).await?;
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    let report: Value = serde_json::from_str(&out.stdout)?;
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(check(&report, "authentication")["status"], "pass");
    assert!(
        check(&report, "authentication")["detail"]
            .as_str()
            .is_some_and(|d| d.contains("BYOK openai")),
        "{report}"
    );
    assert_eq!(check(&report, "round trip"), &Value::Null);
    assert_eq!(bed.model.chat_requests("single word: pong").len(), 1);
    Ok(())
}

#[tokio::test]
async fn validate_without_a_login_fails_authentication_and_says_how_to_fix_it() -> anyhow::Result<()>
{
    let bed = CopilotBed::start().await?;
    let out = run(&bed, &["validate"], &cli_env(&bed), bed.home()).await?;
    assert_eq!(out.code, Some(1), "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("✓ Copilot CLI"), "{}", out.stdout);
    assert!(out.stdout.contains("✓ ACP initialize"), "{}", out.stdout);
    assert!(
        out.stdout.contains("✗ authentication")
            && out.stdout.contains("Authentication required")
            && out.stdout.contains("fix: run `copilot login`"),
        "{}",
        out.stdout
    );
    // A workspace that is not there is reported but does not fail validation by itself.
    assert!(out.stdout.contains("! OpenClaw memory"), "{}", out.stdout);
    assert!(
        out.stdout.ends_with("1 required check failed.\n"),
        "{}",
        out.stdout
    );

    // A missing CLI and a broken policy file are named, with their fixes.
    let mut env = cli_env(&bed);
    env.retain(|(k, _)| k != "COPILOT_CLI_PATH");
    env.push(("COPILOT_CLI_PATH".into(), "/nonexistent/copilot".into()));
    let policy = bed.home().join("policy.toml");
    std::fs::write(&policy, "this is = = not toml")?;
    env.push((
        "COPILOT_BRIDGE_POLICY_FILE".into(),
        policy.display().to_string(),
    ));
    let out = run(&bed, &["validate", "--json"], &env, bed.home()).await?;
    assert_eq!(out.code, Some(1), "{}\n{}", out.stdout, out.stderr);
    let report: Value = serde_json::from_str(&out.stdout)?;
    assert_eq!(report["ok"], false);
    assert_eq!(check(&report, "Copilot CLI")["status"], "fail", "{report}");
    assert!(
        check(&report, "Copilot CLI")["fix"]
            .as_str()
            .is_some_and(|f| f.contains("npm install -g @github/copilot")),
        "{report}"
    );
    assert_eq!(check(&report, "policy")["status"], "fail", "{report}");
    assert_eq!(check(&report, "ask")["status"], "fail", "{report}");
    // The memory server shares the policy file, so it refuses to start too, and says why.
    assert_eq!(
        check(&report, "memory server")["status"],
        "fail",
        "{report}"
    );
    assert!(
        check(&report, "memory server")["detail"]
            .as_str()
            .is_some_and(|d| d.contains("policy")),
        "{report}"
    );

    // An invalid setting is reported as a failed check, not a crash.
    let mut env = cli_env(&bed);
    env.push(("COPILOT_MAX_RETRIES".into(), "many".into()));
    let out = run(&bed, &["validate"], &env, bed.home()).await?;
    assert_eq!(out.code, Some(1), "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.starts_with("✗ configuration") && out.stdout.contains("COPILOT_MAX_RETRIES"),
        "{}",
        out.stdout
    );
    Ok(())
}

#[tokio::test]
async fn exec_runs_a_task_with_steps_on_stderr_and_the_result_on_stdout() -> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    let target = bed.workspace().join("exec.txt");
    bed.model.script(
        "EXEC-WRITE-1",
        [
            Reply::tool_call(
                "create",
                json!({"path": target, "file_text": "from exec\n"}),
            ),
            Reply::text("Created exec.txt."),
        ],
    );
    let env = byok_env(&bed);
    let out = run(
        &bed,
        &["exec", "--cwd", "work", "please EXEC-WRITE-1"],
        &env,
        bed.home(),
    )
    .await?;
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert_eq!(std::fs::read_to_string(&target)?, "from exec\n");
    assert!(out.stdout.contains("Created exec.txt."), "{}", out.stdout);
    assert!(out.stdout.contains("Success: yes"), "{}", out.stdout);
    assert!(out.stderr.contains("tool started"), "{}", out.stderr);
    // The call went through the same audit as an MCP client's.
    let audit = std::fs::read_dir(bed.home().join("audit"))?
        .filter_map(Result::ok)
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect::<String>();
    assert!(audit.contains("\"copilot_code\""), "{audit}");

    // --json prints the structured result; a bad directory is a clear error.
    bed.model
        .script("EXEC-JSON-1", [Reply::text("json answer")]);
    let out = run(
        &bed,
        &["exec", "--json", "EXEC-JSON-1"],
        &env,
        bed.workspace(),
    )
    .await?;
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    let result: Value = serde_json::from_str(&out.stdout)?;
    assert_eq!(result["text"], "json answer", "{result}");
    assert_eq!(result["stopReason"], "end_turn", "{result}");
    let out = run(&bed, &["exec", "--cwd", "nope", "x"], &env, bed.home()).await?;
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(out.stderr.contains("--cwd"), "{}", out.stderr);
    Ok(())
}

#[tokio::test]
async fn ctrl_c_cancels_a_running_exec_and_prints_what_it_did() -> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    bed.model
        .script("EXEC-HANG-1", [Reply::hang("halfway there")]);
    let env = byok_env(&bed);
    let mut child: Child =
        command(&bed, &["exec", "EXEC-HANG-1"], &env, bed.workspace()).spawn()?;
    let mut stderr = BufReader::new(
        child
            .stderr
            .take()
            .ok_or_else(|| anyhow::anyhow!("stderr"))?,
    )
    .lines();
    // Wait until the model is streaming, then interrupt.
    bed.model
        .wait_for_chat_requests("EXEC-HANG-1", 1, LIMIT)
        .await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    press_ctrl_c(&child)?;
    let mut said = String::new();
    let status = timeout(LIMIT, async {
        while let Some(line) = stderr.next_line().await? {
            said.push_str(&line);
            said.push('\n');
        }
        child.wait().await
    })
    .await??;
    let mut stdout = String::new();
    if let Some(mut out) = child.stdout.take() {
        out.read_to_string(&mut stdout).await?;
    }
    assert_eq!(status.code(), Some(130), "{stdout}\n{said}");
    assert!(said.contains("cancelling (Ctrl-C again"), "{said}");
    assert!(stdout.contains("halfway there"), "{stdout}");
    assert!(stdout.contains("Success: no"), "{stdout}");
    Ok(())
}
