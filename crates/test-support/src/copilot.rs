//! The real Copilot CLI as a test peer: a scratch home, a workspace directory and a scripted
//! model server, plus the exact environment that makes the CLI use that model (BYOK) with no
//! GitHub account and no network.

use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::mcp_process::McpProcess;
use crate::model_server::ModelServer;
use crate::peers::copilot_cli;

/// The API key the CLI sends to the scripted model server (any value works; it is recorded).
pub const BYOK_API_KEY: &str = "sk-scripted-test";

/// The arguments for ACP over stdio, as the bridge passes them.
pub const ACP_ARGS: [&str; 3] = ["--acp", "--stdio", "--no-auto-update"];

/// A scratch environment for one real Copilot CLI: its own `HOME` (so sessions and logs never
/// touch the user's `~/.copilot`), a workspace directory and a model server.
#[derive(Debug)]
pub struct CopilotBed {
    /// The scripted model behind the CLI.
    pub model: ModelServer,
    home: TempDir,
    workspace: PathBuf,
}

impl CopilotBed {
    /// Starts a model server and creates the scratch directories.
    pub async fn start() -> anyhow::Result<Self> {
        let model = ModelServer::start().await?;
        let home = TempDir::new()?;
        let workspace = home.path().join("work");
        std::fs::create_dir_all(&workspace)?;
        // The CLI reports canonical paths; compare against the same form.
        let workspace = std::fs::canonicalize(workspace)?;
        Ok(Self {
            model,
            home,
            workspace,
        })
    }

    /// The pinned CLI executable.
    pub fn program(&self) -> PathBuf {
        copilot_cli()
    }

    /// The scratch `HOME`.
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// The workspace directory sessions run in.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The CLI's state directory (`COPILOT_HOME`): sessions and logs live here.
    pub fn copilot_home(&self) -> PathBuf {
        self.home.path().join(".copilot")
    }

    /// The environment without any model settings: what a user with no login and no BYOK has.
    pub fn base_env(&self) -> Vec<(String, String)> {
        vec![
            (
                "PATH".to_owned(),
                std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".to_owned()),
            ),
            ("HOME".to_owned(), self.home().display().to_string()),
            (
                "COPILOT_HOME".to_owned(),
                self.copilot_home().display().to_string(),
            ),
        ]
    }

    /// The full environment for BYOK against the scripted model server.
    pub fn byok_env(&self) -> Vec<(String, String)> {
        let mut env = self.base_env();
        env.extend([
            (
                "COPILOT_PROVIDER_BASE_URL".to_owned(),
                self.model.base_url(),
            ),
            (
                "COPILOT_PROVIDER_API_KEY".to_owned(),
                BYOK_API_KEY.to_owned(),
            ),
            (
                "COPILOT_MODEL".to_owned(),
                crate::model_server::MODEL_ID.to_owned(),
            ),
            ("COPILOT_OFFLINE".to_owned(), "true".to_owned()),
        ]);
        env
    }

    /// Spawns the CLI in ACP mode with the BYOK environment, for raw JSON-RPC exchanges.
    pub fn spawn_raw(&self, extra_args: &[&str]) -> anyhow::Result<McpProcess> {
        let mut args: Vec<&str> = ACP_ARGS.to_vec();
        args.extend_from_slice(extra_args);
        let env = self.byok_env();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        McpProcess::spawn(&self.program(), &args, self.home(), &env)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model_server::Reply;
    use serde_json::{Value, json};

    /// The test bed itself, with no bridge code involved: the real CLI answers a prompt with the
    /// scripted model's words, and the model server saw the CLI's request.
    #[tokio::test]
    async fn real_cli_answers_a_prompt_through_the_scripted_model() -> anyhow::Result<()> {
        let bed = CopilotBed::start().await?;
        bed.model
            .script("HELLO-BED", [Reply::text("Hello from the bed")]);
        let mut cli = bed.spawn_raw(&[])?;
        let init = cli
            .request(
                "initialize",
                json!({"protocolVersion": 1, "clientCapabilities": {},
                       "clientInfo": {"name": "bed", "version": "0"}}),
            )
            .await?;
        assert_eq!(init["result"]["protocolVersion"], json!(1), "{init}");
        let new = cli
            .request(
                "session/new",
                json!({"cwd": bed.workspace(), "mcpServers": []}),
            )
            .await?;
        let session = new["result"]["sessionId"].clone();
        assert!(session.is_string(), "{new}");
        cli.send(
            &json!({"jsonrpc": "2.0", "id": 99, "method": "session/prompt",
                         "params": {"sessionId": session,
                                    "prompt": [{"type": "text", "text": "say HELLO-BED"}]}}),
        )
        .await?;
        let mut text = String::new();
        let response = loop {
            let message: Value = cli.recv().await?;
            if message["id"] == json!(99) {
                break message;
            }
            let update = &message["params"]["update"];
            if update["sessionUpdate"] == "agent_message_chunk" {
                text.push_str(update["content"]["text"].as_str().unwrap_or_default());
            }
        };
        assert_eq!(
            response["result"]["stopReason"],
            json!("end_turn"),
            "{response}"
        );
        assert_eq!(text, "Hello from the bed");
        let requests = bed.model.chat_requests("HELLO-BED");
        assert_eq!(requests.len(), 1);
        assert_eq!(
            requests[0].authorization.as_deref(),
            Some(format!("Bearer {BYOK_API_KEY}").as_str())
        );
        assert!(requests[0].tool_names().iter().any(|t| t == "create"));
        assert_eq!(cli.shutdown().await?, Some(0));
        Ok(())
    }
}
