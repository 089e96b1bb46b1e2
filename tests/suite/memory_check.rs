//! `openclaw-memory check`: the real binary reports the workspace it finds, builds the index,
//! and skips the gateway when no token is set; without a workspace the memory checks fail as
//! optional, so the exit code stays 0.

use bridge_test_support::binary_path;
use serde_json::Value;
use tempfile::TempDir;

fn check(
    home: &std::path::Path,
    workspace: Option<&std::path::Path>,
) -> anyhow::Result<(i32, Value)> {
    let mut command = std::process::Command::new(binary_path("openclaw-memory"));
    command
        .args(["check", "--json"])
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .current_dir(home);
    if let Some(workspace) = workspace {
        command.env("OPENCLAW_WORKSPACE_DIR", workspace);
    }
    let output = command.output()?;
    Ok((
        output.status.code().unwrap_or(-1),
        serde_json::from_slice(&output.stdout)?,
    ))
}

#[test]
fn check_reports_the_workspace_and_the_index_and_skips_an_unset_gateway() -> anyhow::Result<()> {
    let home = TempDir::new()?;
    let workspace = home.path().join("ws");
    std::fs::create_dir_all(workspace.join("memory"))?;
    std::fs::write(workspace.join("memory/2026-03-01.md"), "- planted note\n")?;
    std::fs::write(workspace.join("USER.md"), "# User\n")?;
    let (code, report) = check(home.path(), Some(&workspace))?;
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["ok"], true, "{report}");
    let checks = report["checks"].as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = checks.iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(
        names,
        [
            "OpenClaw memory",
            "memory index",
            "index file",
            "embeddings",
            "OpenClaw gateway"
        ],
        "{report}"
    );
    assert_eq!(checks[0]["status"], "pass", "{report}");
    assert!(
        checks[0]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("1 daily notes") && d.contains("USER.md present")),
        "{report}"
    );
    assert_eq!(checks[1]["status"], "pass", "{report}");
    assert_eq!(checks[2]["status"], "pass", "{report}");
    assert!(
        checks[2]["detail"]
            .as_str()
            .is_some_and(|d| d.contains(".index")),
        "{report}"
    );
    // No model installed under this HOME: words only.
    assert_eq!(checks[3]["status"], "skip", "{report}");
    assert_eq!(checks[4]["status"], "skip", "{report}");

    let (code, report) = check(home.path(), None)?;
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["checks"][0]["status"], "fail", "{report}");
    assert_eq!(report["checks"][0]["required"], false, "{report}");
    assert!(report["checks"][0]["fix"].is_string(), "{report}");
    assert_eq!(report["checks"][1]["status"], "skip", "{report}");
    Ok(())
}
