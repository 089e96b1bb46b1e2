//! `memory.search`: OpenClaw's own ranking (hybrid BM25 + embeddings) over the same memory
//! files the memory server indexes. Needs `operator.read`.

use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::{Gateway, GatewayError};

/// The most results the gateway returns for one search.
pub const MAX_RESULTS: usize = 50;

/// One `memory.search` result.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchResult {
    /// Workspace-relative path.
    pub path: String,
    /// First line (1-based).
    pub start_line: usize,
    /// Last line (1-based).
    pub end_line: usize,
    /// Hybrid score, 0–1.
    pub score: f64,
    /// The matching text.
    #[serde(default)]
    pub snippet: String,
}

/// The `memory.search` payload (only what we use).
#[derive(Debug, Clone, Deserialize)]
pub struct SearchPayload {
    /// The results, best first.
    #[serde(default)]
    pub results: Vec<SearchResult>,
}

impl Gateway {
    /// Searches OpenClaw's memory: at most `limit` results, best first, within the handle's
    /// call timeout.
    pub async fn search(
        &self,
        query: &str,
        limit: usize,
        cancel: &CancellationToken,
    ) -> Result<Vec<SearchResult>, GatewayError> {
        let limit = limit.min(MAX_RESULTS);
        let payload = self
            .request(
                "memory.search",
                json!({"query": query, "maxResults": limit}),
                self.call_timeout(),
                cancel,
            )
            .await?;
        let payload: SearchPayload = serde_json::from_value(payload)
            .map_err(|e| GatewayError::Protocol(format!("memory.search result: {e}")))?;
        Ok(payload.results.into_iter().take(limit).collect())
    }
}
