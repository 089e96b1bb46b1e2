//! The envelope around every `copilot-bridge` tool call, end to end: call depth from the
//! argument and from the environment (forged or garbage values fail closed), the permission
//! policy file, and the audit JSONL that records every decision.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use bridge_test_support::{McpProcess, binary_path};
use serde_json::{Value, json};
use tempfile::TempDir;

async fn spawn(home: &Path, envs: &[(&str, &str)], args: &[&str]) -> anyhow::Result<McpProcess> {
    let ws = home.join("ws");
    std::fs::create_dir_all(&ws)?;
    std::fs::write(ws.join("a.txt"), "hello\n")?;
    let ws_arg = ws.to_string_lossy().into_owned();
    let audit = home.join("audit").to_string_lossy().into_owned();
    let mut all_args = vec!["--workspace", ws_arg.as_str()];
    all_args.extend_from_slice(args);
    let mut all_envs = vec![("COPILOT_AUDIT_LOG_DIR", audit.as_str())];
    all_envs.extend_from_slice(envs);
    let mut mcp = McpProcess::spawn(&binary_path("copilot-bridge"), &all_args, home, &all_envs)?;
    mcp.initialize().await?;
    Ok(mcp)
}

fn text(response: &Value) -> String {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn audit_lines(home: &Path) -> anyhow::Result<Vec<Value>> {
    let mut lines = Vec::new();
    for entry in std::fs::read_dir(home.join("audit"))? {
        let path = entry?.path();
        assert_eq!(
            std::fs::metadata(&path)?.permissions().mode() & 0o777,
            0o600
        );
        for line in std::fs::read_to_string(&path)?.lines() {
            lines.push(serde_json::from_str(line)?);
        }
    }
    Ok(lines)
}

#[tokio::test]
async fn depth_from_argument_and_environment_is_enforced() -> anyhow::Result<()> {
    let home = TempDir::new()?;
    let mut mcp = spawn(home.path(), &[("COPILOT_BRIDGE_DEPTH", "1")], &[]).await?;
    let ok = mcp
        .call_tool("copilot_read_file", json!({"path": "a.txt", "_depth": 2}))
        .await?;
    assert_eq!(ok["result"]["isError"], json!(false), "{ok}");
    let deep = mcp
        .call_tool("copilot_read_file", json!({"path": "a.txt", "_depth": 3}))
        .await?;
    assert_eq!(deep["result"]["isError"], json!(true), "{deep}");
    assert!(text(&deep).contains('3'), "names the depth: {deep}");
    for forged in [json!(-1), json!("0"), json!(1.5)] {
        let r = mcp
            .call_tool(
                "copilot_read_file",
                json!({"path": "a.txt", "_depth": forged}),
            )
            .await?;
        assert_eq!(r["result"]["isError"], json!(true), "forged {forged}: {r}");
    }
    assert_eq!(mcp.shutdown().await?, Some(0));

    for inherited in ["3", "7", "garbage", "-1"] {
        let home = TempDir::new()?;
        let mut mcp = spawn(home.path(), &[("COPILOT_BRIDGE_DEPTH", inherited)], &[]).await?;
        let r = mcp
            .call_tool("copilot_read_file", json!({"path": "a.txt", "_depth": 0}))
            .await?;
        assert_eq!(
            r["result"]["isError"],
            json!(true),
            "inherited {inherited}: {r}"
        );
        assert!(!text(&r).contains("hello"), "{r}");
        assert_eq!(mcp.shutdown().await?, Some(0));
    }
    Ok(())
}

#[tokio::test]
async fn policy_file_blocks_tools_and_the_audit_log_records_every_decision() -> anyhow::Result<()> {
    let home = TempDir::new()?;
    let policy = home.path().join("policy.toml");
    std::fs::write(&policy, "blocked_tools = [\"copilot_create_file\"]\n")?;
    let policy_arg = policy.to_string_lossy().into_owned();
    let mut mcp = spawn(home.path(), &[], &["--policy", &policy_arg]).await?;

    let read = mcp
        .call_tool("copilot_read_file", json!({"path": "a.txt"}))
        .await?;
    assert_eq!(read["result"]["isError"], json!(false), "{read}");
    let blocked = mcp
        .call_tool(
            "copilot_create_file",
            json!({"path": "b.txt", "content": "x"}),
        )
        .await?;
    assert_eq!(blocked["result"]["isError"], json!(true), "{blocked}");
    assert!(text(&blocked).contains("copilot_create_file"), "{blocked}");
    assert!(!home.path().join("ws/b.txt").exists());
    let unknown = mcp.call_tool("no_such_tool", json!({})).await?;
    assert!(
        unknown["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("copilot_read_file"))
    );
    assert_eq!(mcp.shutdown().await?, Some(0));

    let lines = audit_lines(home.path())?;
    let summary: Vec<(String, String, String)> = lines
        .iter()
        .map(|l| {
            let field = |k: &str| l[k].as_str().unwrap_or_default().to_owned();
            (field("tool"), field("hook"), field("decision"))
        })
        .collect();
    let expect = |tool: &str, hook: &str, decision: &str| {
        (tool.to_owned(), hook.to_owned(), decision.to_owned())
    };
    assert_eq!(
        summary,
        vec![
            expect("copilot_read_file", "pre", "allow"),
            expect("copilot_read_file", "post", "allow"),
            expect("copilot_create_file", "denied", "deny"),
            expect("no_such_tool", "error", "error"),
        ]
    );
    for line in &lines {
        assert_eq!(line["server"], json!("copilot-bridge"));
        assert!(
            line["ts"].as_str().is_some_and(|ts| ts.ends_with('Z')),
            "{line}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn a_missing_policy_file_stops_the_server_with_a_clear_message() -> anyhow::Result<()> {
    let home = TempDir::new()?;
    let output = std::process::Command::new(binary_path("copilot-bridge"))
        .args(["--policy", "/nonexistent/policy.toml"])
        .env("HOME", home.path())
        .stdin(std::process::Stdio::null())
        .output()?;
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("/nonexistent/policy.toml"), "{stderr}");
    assert!(output.stdout.is_empty(), "stdout belongs to the protocol");
    Ok(())
}

#[tokio::test]
async fn secrets_never_reach_the_client_or_the_audit_log() -> anyhow::Result<()> {
    const TOKEN: &str = "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";
    const AWS: &str = "ASIAGUI7BVKGNTTVNNEN";
    let home = TempDir::new()?;
    let mut mcp = spawn(home.path(), &[], &[]).await?;
    std::fs::write(
        home.path().join("ws/config.env"),
        format!("GITHUB_TOKEN={TOKEN}\nAWS_ACCESS_KEY_ID={AWS}\n"),
    )?;
    let read = mcp
        .call_tool("copilot_read_file", json!({"path": "config.env"}))
        .await?;
    // The error message of a missing file names the path it was given: a token there too.
    let missing = mcp
        .call_tool("copilot_read_file", json!({"path": format!("{TOKEN}.txt")}))
        .await?;
    let created = mcp
        .call_tool(
            "copilot_create_file",
            json!({"path": "notes.md", "content": format!("key {TOKEN}")}),
        )
        .await?;
    assert_eq!(mcp.shutdown().await?, Some(0));
    for response in [&read, &missing, &created] {
        let text = response.to_string();
        assert!(
            !text.contains(&TOKEN[4..]) && !text.contains(&AWS[4..]),
            "leaked: {text}"
        );
    }
    assert_eq!(read["result"]["isError"], json!(false), "{read}");
    let audit: String = audit_lines(home.path())?
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(audit.contains("copilot_create_file"), "{audit}");
    assert!(
        !audit.contains(&TOKEN[4..]) && !audit.contains(&AWS[4..]),
        "audit leaked: {audit}"
    );
    // What the caller asked to write is written as given: redaction guards what leaves the
    // server, not the user's own files.
    assert!(std::fs::read_to_string(home.path().join("ws/notes.md"))?.contains(TOKEN));
    Ok(())
}
