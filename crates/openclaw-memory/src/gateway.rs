//! Client of the OpenClaw gateway (WebSocket protocol v4): a cheap, cloneable handle in front
//! of one background link task. Starting it never blocks; while the link is down every call
//! fails at once, so the search tool answers from the local index without waiting.

/// Reconnect delays.
pub mod backoff;
/// The link task: handshake, keepalive, request routing, reconnects.
mod connection;
/// The ed25519 device identity.
pub mod device;
/// Wire frames.
pub mod protocol;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bridge_core::sync::lock;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use crate::gateway::connection::LinkState;
use crate::gateway::connection::{Call, LinkSettings};
use crate::gateway::protocol::{GatewayFault, SearchPayload, SearchResult};

/// Requests queued for the link at most; a search waits for its answer, so a handful is
/// plenty, and a full queue fails the call instead of piling up.
const CALL_QUEUE: usize = 16;
/// How long [`Gateway::shutdown`] waits for the link task to end.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
/// Default time a gateway search may take before the local index answers instead. The
/// gateway's hybrid search answers in tens of milliseconds once warm.
pub const DEFAULT_SEARCH_TIMEOUT: Duration = Duration::from_secs(5);

/// Where the gateway is and how to reach it.
#[derive(Debug, Clone)]
pub struct GatewaySettings {
    /// Host (`OPENCLAW_HOST`).
    pub host: String,
    /// Port (`OPENCLAW_PORT`).
    pub port: u16,
    /// Token (`OPENCLAW_GATEWAY_TOKEN`).
    pub token: String,
    /// The bridge's state directory, where `device.json` is kept.
    pub state_dir: PathBuf,
    /// How long a search may take before falling back.
    pub search_timeout: Duration,
}

impl GatewaySettings {
    /// The WebSocket URL (`ws://host:port`, IPv6 hosts bracketed).
    pub fn url(&self) -> String {
        if self.host.contains(':') && !self.host.starts_with('[') {
            format!("ws://[{}]:{}", self.host, self.port)
        } else {
            format!("ws://{}:{}", self.host, self.port)
        }
    }
}

/// Why a gateway call failed. Every variant makes the search fall back to the local index.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GatewayError {
    /// The link is down.
    #[error("not connected to the gateway ({0})")]
    NotConnected(String),
    /// Something took too long.
    #[error("timed out waiting for {0}")]
    Timeout(&'static str),
    /// The caller cancelled.
    #[error("cancelled")]
    Cancelled,
    /// The gateway answered with an error.
    #[error("the gateway refused: {0}")]
    Rejected(GatewayFault),
    /// The connection failed or dropped.
    #[error("{0}")]
    Link(String),
    /// The gateway sent something we cannot use.
    #[error("unexpected gateway answer: {0}")]
    Protocol(String),
}

/// A handle to the gateway link. Cloning shares the link.
#[derive(Debug, Clone)]
pub struct Gateway {
    calls: mpsc::Sender<Call>,
    link: watch::Receiver<LinkState>,
    search_timeout: Duration,
    shutdown: CancellationToken,
    /// The link task, owned here and awaited by [`Gateway::shutdown`].
    task: Arc<Mutex<Option<JoinHandle<()>>>>,
}

impl Gateway {
    /// Starts the link in the background on the current Tokio runtime and returns at once.
    pub fn start(settings: GatewaySettings) -> Self {
        let (calls, receiver) = mpsc::channel(CALL_QUEUE);
        let (state, link) = watch::channel(LinkState::Connecting);
        let shutdown = CancellationToken::new();
        let link_settings = LinkSettings {
            url: settings.url(),
            token: settings.token,
            state_dir: settings.state_dir,
        };
        let task = tokio::spawn(connection::run(
            link_settings,
            receiver,
            state,
            shutdown.clone(),
        ));
        Self {
            calls,
            link,
            search_timeout: settings.search_timeout,
            shutdown,
            task: Arc::new(Mutex::new(Some(task))),
        }
    }

    /// The link's current state.
    pub fn state(&self) -> LinkState {
        self.link.borrow().clone()
    }

    /// Waits for the first connection attempt to end, at most `limit`: `Ok` when the link is
    /// up, else why not (the gateway's refusal, a connection error, or no answer in time). A
    /// refusal is reported as soon as it arrives rather than after retries that would meet it
    /// again.
    pub async fn wait_until_up(&self, limit: Duration) -> Result<(), String> {
        let mut link = self.link.clone();
        let settled =
            tokio::time::timeout(limit, link.wait_for(|s| *s != LinkState::Connecting)).await;
        match settled {
            Err(_) => Err(format!("no answer within {} s", limit.as_secs())),
            Ok(Err(_)) => Err("the link task stopped".to_owned()),
            Ok(Ok(state)) => match &*state {
                LinkState::Up => Ok(()),
                LinkState::Down(reason) => Err(reason.clone()),
                LinkState::Connecting => Err("still connecting".to_owned()),
            },
        }
    }

    /// Stops the link task and waits (at most two seconds) for it to end.
    pub async fn shutdown(&self) {
        self.shutdown.cancel();
        let task = lock(&self.task).take();
        if let Some(task) = task
            && tokio::time::timeout(SHUTDOWN_GRACE, task).await.is_err()
        {
            tracing::warn!("the gateway link did not stop in time");
        }
    }

    /// Sends one request and waits (bounded by `limit` and `cancel`) for its payload. Fails at
    /// once when the link is down.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        limit: Duration,
        cancel: &CancellationToken,
    ) -> Result<Value, GatewayError> {
        match self.state() {
            LinkState::Up => {}
            LinkState::Connecting => {
                return Err(GatewayError::NotConnected("still connecting".to_owned()));
            }
            LinkState::Down(reason) => return Err(GatewayError::NotConnected(reason)),
        }
        let (reply, answer) = oneshot::channel();
        let call = Call {
            method: method.to_owned(),
            params,
            reply,
        };
        self.calls
            .try_send(call)
            .map_err(|_| GatewayError::NotConnected("the link is busy or stopped".to_owned()))?;
        tokio::select! {
            () = cancel.cancelled() => Err(GatewayError::Cancelled),
            answer = tokio::time::timeout(limit, answer) => match answer {
                Err(_) => Err(GatewayError::Timeout("the gateway's answer")),
                Ok(Err(_)) => Err(GatewayError::Link("the link dropped the request".to_owned())),
                Ok(Ok(result)) => result,
            },
        }
    }

    /// `memory.search`: OpenClaw's own ranking over the same memory files.
    pub async fn search(
        &self,
        query: &str,
        limit: usize,
        cancel: &CancellationToken,
    ) -> Result<Vec<SearchResult>, GatewayError> {
        let payload = self
            .request(
                "memory.search",
                json!({"query": query, "maxResults": limit}),
                self.search_timeout,
                cancel,
            )
            .await?;
        let payload: SearchPayload = serde_json::from_value(payload)
            .map_err(|e| GatewayError::Protocol(format!("memory.search result: {e}")))?;
        Ok(payload.results.into_iter().take(limit).collect())
    }
}
