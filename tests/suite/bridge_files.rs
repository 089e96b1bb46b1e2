//! `copilot-bridge` file tools end to end over stdio: they work inside the workspace and refuse
//! every path-attack spelling without leaking a byte from outside.

use std::path::Path;

use bridge_test_support::{McpProcess, binary_path};
use serde_json::{Value, json};
use tempfile::TempDir;

/// Written outside the workspace; no response may ever contain it.
const OUTSIDE_SECRET: &str = "outside-marker-7f3a9c";

struct Setup {
    _base: TempDir,
    ws: std::path::PathBuf,
    outside: std::path::PathBuf,
}

fn setup() -> anyhow::Result<Setup> {
    let base = TempDir::new()?;
    let ws = base.path().join("ws");
    let outside = base.path().join("ws-evil");
    std::fs::create_dir_all(ws.join("src"))?;
    std::fs::create_dir_all(&outside)?;
    std::fs::write(ws.join("src/main.rs"), "fn main() {}\n")?;
    std::fs::write(outside.join("secret.txt"), OUTSIDE_SECRET)?;
    std::os::unix::fs::symlink(outside.join("secret.txt"), ws.join("link-out"))?;
    std::os::unix::fs::symlink(&outside, ws.join("dir-out"))?;
    std::os::unix::fs::symlink("src/main.rs", ws.join("link-in"))?;
    Ok(Setup {
        _base: base,
        ws,
        outside,
    })
}

async fn spawn(ws: &Path) -> anyhow::Result<McpProcess> {
    let ws_arg = ws.to_string_lossy().into_owned();
    let home = ws.parent().unwrap_or(ws);
    let mut mcp = McpProcess::spawn(
        &binary_path("copilot-bridge"),
        &["--workspace", &ws_arg],
        home,
        &[(
            "COPILOT_AUDIT_LOG_DIR",
            &home.join("audit").to_string_lossy(),
        )],
    )?;
    mcp.initialize().await?;
    Ok(mcp)
}

fn is_error(response: &Value) -> bool {
    response["result"]["isError"] == json!(true) || response.get("error").is_some()
}

#[tokio::test]
async fn file_tools_work_inside_the_workspace() -> anyhow::Result<()> {
    let s = setup()?;
    let mut mcp = spawn(&s.ws).await?;
    let read = mcp
        .call_tool("copilot_read_file", json!({"path": "src/main.rs"}))
        .await?;
    assert_eq!(
        read["result"]["structuredContent"]["content"],
        json!("fn main() {}\n"),
        "{read}"
    );
    let through_link = mcp
        .call_tool("copilot_read_file", json!({"path": "link-in"}))
        .await?;
    assert!(!is_error(&through_link), "{through_link}");

    let created = mcp
        .call_tool(
            "copilot_create_file",
            json!({"path": "docs/new.md", "content": "# new\n"}),
        )
        .await?;
    assert_eq!(
        created["result"]["structuredContent"]["replaced"],
        json!(false),
        "{created}"
    );
    assert_eq!(
        std::fs::read_to_string(s.ws.join("docs/new.md"))?,
        "# new\n"
    );
    let again = mcp
        .call_tool(
            "copilot_create_file",
            json!({"path": "docs/new.md", "content": "x"}),
        )
        .await?;
    assert!(is_error(&again), "{again}");

    let listed = mcp
        .call_tool(
            "copilot_list_files",
            json!({"recursive": true, "glob": "*.md"}),
        )
        .await?;
    let paths: Vec<_> = listed["result"]["structuredContent"]["entries"]
        .as_array()
        .map(|entries| entries.iter().map(|e| e["path"].clone()).collect())
        .unwrap_or_default();
    assert_eq!(paths, vec![json!("docs/new.md")], "{listed}");
    assert_eq!(mcp.shutdown().await?, Some(0));
    Ok(())
}

#[tokio::test]
async fn path_attacks_are_refused_by_every_file_tool_with_nothing_leaked() -> anyhow::Result<()> {
    let s = setup()?;
    let mut mcp = spawn(&s.ws).await?;
    let outside_abs = s.outside.join("secret.txt").to_string_lossy().into_owned();
    let sibling_dir = s.outside.to_string_lossy().into_owned();
    let attacks = [
        "../ws-evil/secret.txt",
        "src/../../ws-evil/secret.txt",
        "./../ws-evil/secret.txt",
        "src/../..",
        outside_abs.as_str(),
        sibling_dir.as_str(),
        "/etc/passwd",
        "/proc/self/root/etc/passwd",
        "link-out",
        "dir-out/secret.txt",
        "dir-out",
        "src/main.rs\u{0}",
        "~/.ssh/id_rsa",
    ];
    for attack in attacks {
        let calls = [
            ("copilot_read_file", json!({"path": attack})),
            (
                "copilot_create_file",
                json!({"path": format!("{attack}/x"), "content": "pwned"}),
            ),
            (
                "copilot_create_file",
                json!({"path": attack, "content": "pwned", "overwrite": true}),
            ),
            (
                "copilot_list_files",
                json!({"directory": attack, "recursive": true}),
            ),
        ];
        for (tool, args) in calls {
            let response = mcp.call_tool(tool, args).await?;
            let text = response.to_string();
            assert!(
                !text.contains(OUTSIDE_SECRET),
                "{tool} {attack:?} leaked: {text}"
            );
            assert!(
                !text.contains("root:x:0:0"),
                "{tool} {attack:?} leaked: {text}"
            );
            // `~` is an ordinary name inside the workspace, so creating under it is allowed.
            if !attack.starts_with('~') {
                assert!(
                    is_error(&response),
                    "{tool} {attack:?} was not refused: {text}"
                );
            }
        }
    }
    assert_eq!(
        std::fs::read_to_string(s.outside.join("secret.txt"))?,
        OUTSIDE_SECRET
    );
    assert_eq!(
        std::fs::read_dir(&s.outside)?.count(),
        1,
        "something was written outside"
    );
    // The server is still healthy after every refusal.
    let read = mcp
        .call_tool("copilot_read_file", json!({"path": "src/main.rs"}))
        .await?;
    assert!(!is_error(&read), "{read}");
    assert_eq!(mcp.shutdown().await?, Some(0));
    Ok(())
}

/// The same tools through the official MCP Python SDK: schemas, reads, creates, listings,
/// limits, redaction and the path-attack list (`tests/python/bridge_files_e2e.py`).
#[test]
fn python_sdk_client_uses_the_file_tools_and_every_attack_is_refused() -> anyhow::Result<()> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/python/bridge_files_e2e.py");
    let output = std::process::Command::new(bridge_test_support::python())
        .arg(script)
        .arg(binary_path("copilot-bridge"))
        .output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "the Python SDK checks failed");
    assert!(stdout.contains("5 passed, 0 failed"), "no summary line");
    Ok(())
}
