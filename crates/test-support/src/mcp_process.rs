//! A spawned stdio MCP server driven with raw JSON-RPC lines, for protocol edge cases that an SDK
//! client would refuse to send (malformed lines, unknown methods, cancellations).

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// How long a test waits for one line from the server before failing instead of hanging.
pub const READ_TIMEOUT: Duration = Duration::from_secs(20);

/// An MCP server child process with its stdio pipes.
#[derive(Debug)]
pub struct McpProcess {
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
    next_id: i64,
}

impl McpProcess {
    /// Spawns `program` with `args`, a cleared environment plus `envs`, and `HOME` set to `home`.
    pub fn spawn(
        program: &Path,
        args: &[&str],
        home: &Path,
        envs: &[(&str, &str)],
    ) -> anyhow::Result<Self> {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env_clear()
            .env("HOME", home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            // Quiet by default so CI logs stay readable; BRIDGE_TEST_LOG=debug shows everything.
            .env(
                "RUST_LOG",
                std::env::var("BRIDGE_TEST_LOG").unwrap_or_else(|_| "warn".to_owned()),
            )
            .envs(envs.iter().copied())
            .current_dir(home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        let mut child = cmd
            .spawn()
            .with_context(|| format!("cannot spawn {}", program.display()))?;
        let stdin = child.stdin.take().context("child has no stdin")?;
        let stdout = child.stdout.take().context("child has no stdout")?;
        Ok(Self {
            child,
            stdin,
            stdout: BufReader::new(stdout).lines(),
            next_id: 1,
        })
    }

    /// Writes one raw line (a newline is appended).
    pub async fn send_line(&mut self, line: &str) -> anyhow::Result<()> {
        self.stdin.write_all(line.as_bytes()).await?;
        self.stdin.write_all(b"\n").await?;
        self.stdin.flush().await?;
        Ok(())
    }

    /// Sends a JSON-RPC message.
    pub async fn send(&mut self, message: &Value) -> anyhow::Result<()> {
        self.send_line(&message.to_string()).await
    }

    /// Reads the next JSON line from the server, failing after [`READ_TIMEOUT`].
    pub async fn recv(&mut self) -> anyhow::Result<Value> {
        let line = tokio::time::timeout(READ_TIMEOUT, self.stdout.next_line())
            .await
            .context("timed out waiting for the server")??
            .context("server closed stdout")?;
        serde_json::from_str(&line).with_context(|| format!("server wrote a non-JSON line: {line}"))
    }

    /// Sends a request and returns its response, skipping notifications in between.
    pub async fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        self.response_to(&json!(id)).await
    }

    /// Reads until the response with `id` arrives, skipping notifications.
    pub async fn response_to(&mut self, id: &Value) -> anyhow::Result<Value> {
        loop {
            let message = self.recv().await?;
            if message.get("id") == Some(id) && message.get("method").is_none() {
                return Ok(message);
            }
        }
    }

    /// Performs the MCP `initialize` handshake and returns the server's result.
    pub async fn initialize(&mut self) -> anyhow::Result<Value> {
        let response = self
            .request(
                "initialize",
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "bridge-test", "version": "0"}
                }),
            )
            .await?;
        let Some(result) = response.get("result").cloned() else {
            bail!("initialize failed: {response}");
        };
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
        Ok(result)
    }

    /// Calls a tool and returns the JSON-RPC response (result or error).
    pub async fn call_tool(&mut self, name: &str, arguments: Value) -> anyhow::Result<Value> {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
            .await
    }

    /// The server's process id (while it runs).
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Sends `signal` (e.g. `libc`'s 15 for SIGTERM) to the server, keeps reading its stdout
    /// until it closes, and waits (bounded) for it to exit; returns the exit status and every
    /// message it wrote after the signal.
    pub async fn signal_and_wait(
        mut self,
        signal: i32,
    ) -> anyhow::Result<(std::process::ExitStatus, Vec<Value>)> {
        let pid = self.child.id().context("the server already exited")?;
        let status = std::process::Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(pid.to_string())
            .status()
            .context("cannot run kill")?;
        anyhow::ensure!(status.success(), "kill -{signal} {pid} failed");
        let mut messages = Vec::new();
        tokio::time::timeout(READ_TIMEOUT, async {
            while let Some(line) = self.stdout.next_line().await? {
                if let Ok(value) = serde_json::from_str(&line) {
                    messages.push(value);
                }
            }
            anyhow::Ok(())
        })
        .await
        .context("the server did not close stdout after the signal")??;
        let status = tokio::time::timeout(READ_TIMEOUT, self.child.wait())
            .await
            .context("the server did not exit after the signal")??;
        Ok((status, messages))
    }

    /// Closes stdin and waits (bounded) for the server to exit; returns its exit code.
    pub async fn shutdown(mut self) -> anyhow::Result<Option<i32>> {
        drop(self.stdin);
        let status = tokio::time::timeout(READ_TIMEOUT, self.child.wait())
            .await
            .context("server did not exit after stdin closed")??;
        Ok(status.code())
    }
}
