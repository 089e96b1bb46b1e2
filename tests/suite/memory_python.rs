//! `openclaw-memory` end to end through the official MCP Python SDK: the script in
//! `tests/python/memory_e2e.py` spawns the real binary with the SDK's stdio client and checks
//! schemas, results, errors, path attacks, depth, cancellation and `server/discover`.

use std::process::Command;

use bridge_test_support::{binary_path, python};

#[test]
fn python_sdk_client_drives_every_memory_tool() -> anyhow::Result<()> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/python/memory_e2e.py");
    let output = Command::new(python())
        .arg(script)
        .arg(binary_path("openclaw-memory"))
        .env_remove("OPENCLAW_GATEWAY_TOKEN")
        .output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "the Python SDK checks failed");
    assert!(stdout.contains(" passed, 0 failed"), "no summary line");
    Ok(())
}
