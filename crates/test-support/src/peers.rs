//! Locates the external test peers that `scripts/peers.sh` installs under `target/peers`: the
//! official MCP Python SDK, the real Copilot CLI, the real OpenClaw gateway, and the real Claude
//! Code and Codex CLIs.

use std::path::PathBuf;

/// The directory `scripts/peers.sh` installs into: `BRIDGE_PEERS_DIR`, else `target/peers`.
pub fn peers_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("BRIDGE_PEERS_DIR") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().expect("the test executable has a path");
    // target/<profile>/deps/<test> → target/peers
    exe.ancestors()
        .nth(3)
        .expect("test executables live in target/<profile>/deps")
        .join("peers")
}

/// Returns `relative` under the peers directory, panicking with the fix when it is missing.
pub fn peer(relative: &str) -> PathBuf {
    let path = peers_dir().join(relative);
    assert!(
        path.exists(),
        "test peer {} is missing: run `scripts/peers.sh` (or the README's test command) first",
        path.display()
    );
    path
}

/// The optional embedding model of `openclaw-memory` (potion-base-8M, installed by
/// `scripts/peers/embeddings.sh` from a PyPI package).
pub fn embedding_model() -> PathBuf {
    peer("potion-base-8M")
}

/// The Python interpreter of the virtualenv that holds the official MCP SDK.
pub fn python() -> PathBuf {
    peer("python/bin/python")
}

/// The real GitHub Copilot CLI (npm `@github/copilot`, pinned by `scripts/peers/copilot-cli.sh`):
/// the platform's native executable (npm installs only the current platform's package),
/// launched directly so that no Node wrapper sits between a test and the agent's process group.
pub fn copilot_cli() -> PathBuf {
    let arch = match std::env::consts::ARCH {
        "aarch64" => "arm64",
        _ => "x64",
    };
    peer(&format!(
        "copilot/node_modules/@github/copilot-linux-{arch}/copilot"
    ))
}

/// The real OpenClaw CLI (pinned, run under its pinned Node), installed by
/// `scripts/peers/openclaw.sh`.
pub fn openclaw() -> PathBuf {
    peer("openclaw/bin/openclaw")
}

/// The real Claude Code CLI (npm `@anthropic-ai/claude-code`, pinned by
/// `scripts/peers/claude-code.sh`): the platform's native executable.
pub fn claude_code() -> PathBuf {
    let arch = match std::env::consts::ARCH {
        "aarch64" => "arm64",
        _ => "x64",
    };
    peer(&format!(
        "claude-code/node_modules/@anthropic-ai/claude-code-linux-{arch}/claude"
    ))
}

/// The real Codex CLI (npm `@openai/codex`, pinned by `scripts/peers/codex.sh`): the
/// platform's native executable.
pub fn codex() -> PathBuf {
    let (arch, triple) = match std::env::consts::ARCH {
        "aarch64" => ("arm64", "aarch64-unknown-linux-musl"),
        _ => ("x64", "x86_64-unknown-linux-musl"),
    };
    peer(&format!(
        "codex/node_modules/@openai/codex-linux-{arch}/vendor/{triple}/bin/codex"
    ))
}
