//! The bridge never loses the memory server silently: installed alone, `validate` fails the
//! memory-server check with the fix; `OPENCLAW_MEMORY_BIN` (or `PATH`) finds it again.

use bridge_test_support::binary_path;
use serde_json::Value;
use tempfile::TempDir;

fn memory_check(
    bridge: &std::path::Path,
    home: &std::path::Path,
    extra: &[(&str, &str)],
) -> anyhow::Result<Value> {
    let output = std::process::Command::new(bridge)
        .args(["validate", "--json"])
        .env_clear()
        .env("HOME", home)
        .env("PATH", "/usr/bin:/bin")
        .env("COPILOT_CLI_PATH", "/nonexistent/copilot")
        .envs(extra.iter().copied())
        .current_dir(home)
        .output()?;
    let report: Value = serde_json::from_slice(&output.stdout)?;
    let checks = report["checks"].as_array().cloned().unwrap_or_default();
    Ok(checks
        .into_iter()
        .find(|c| c["name"] == "memory server")
        .unwrap_or_default())
}

#[test]
fn a_bridge_installed_alone_says_the_memory_server_is_missing_and_how_to_fix_it()
-> anyhow::Result<()> {
    let home = TempDir::new()?;
    let alone = home.path().join("bin");
    std::fs::create_dir_all(&alone)?;
    let bridge = alone.join("copilot-bridge");
    std::fs::copy(binary_path("copilot-bridge"), &bridge)?;

    let check = memory_check(&bridge, home.path(), &[])?;
    assert_eq!(check["status"], "fail", "{check}");
    assert!(
        check["detail"]
            .as_str()
            .is_some_and(|d| d.contains("without OpenClaw's memory")),
        "{check}"
    );
    assert!(
        check["fix"]
            .as_str()
            .is_some_and(|f| f.contains("OPENCLAW_MEMORY_BIN")),
        "{check}"
    );

    let memory = binary_path("openclaw-memory").display().to_string();
    let check = memory_check(&bridge, home.path(), &[("OPENCLAW_MEMORY_BIN", &memory)])?;
    assert_eq!(check["status"], "pass", "{check}");
    Ok(())
}
