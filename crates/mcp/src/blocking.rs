//! Blocking work (confined file I/O) runs on tokio's blocking pool so it never stalls the
//! protocol loop.

use crate::ToolError;

/// Runs `work` on the blocking pool; a panic inside becomes a protocol error, not a crash.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::internal(format!("a file task failed: {e}")))?
}
