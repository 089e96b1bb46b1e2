//! The handle in front of the link task: where the gateway is, who we say we are, and one
//! request at a time with a bound on how long it may take.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bridge_core::sync::lock;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::connection::{self, Call, LinkSettings, LinkState};
use crate::error::GatewayError;
use crate::profile::ClientProfile;

/// Requests queued for the link at most; each caller waits for its answer, so a few dozen is
/// plenty (parallel Copilot sessions may each wait on an approval), and a full queue fails the
/// call instead of piling up.
const CALL_QUEUE: usize = 64;
/// How long [`Gateway::shutdown`] waits for the link task to end.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
/// Default time a short request (a search, a status) may take. The gateway's hybrid search
/// answers in tens of milliseconds once warm.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(5);

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
    /// How long a short request (a search) may take before the caller falls back.
    pub call_timeout: Duration,
    /// Who we say we are.
    pub profile: ClientProfile,
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

/// A handle to the gateway link. Cloning shares the link.
#[derive(Debug, Clone)]
pub struct Gateway {
    calls: mpsc::Sender<Call>,
    link: watch::Receiver<LinkState>,
    granted: watch::Receiver<Vec<String>>,
    call_timeout: Duration,
    shutdown: CancellationToken,
    /// Requests sent on a caller's behalf after it stopped waiting (withdrawing an approval),
    /// awaited by [`Gateway::shutdown`] before the link closes.
    background: TaskTracker,
    /// The link task, owned here and awaited by [`Gateway::shutdown`].
    task: Arc<Mutex<Option<JoinHandle<()>>>>,
}

impl Gateway {
    /// Starts the link in the background on the current Tokio runtime and returns at once.
    pub fn start(settings: GatewaySettings) -> Self {
        let (calls, receiver) = mpsc::channel(CALL_QUEUE);
        let (state, link) = watch::channel(LinkState::Connecting);
        let (grant, granted) = watch::channel(Vec::new());
        let shutdown = CancellationToken::new();
        let link_settings = LinkSettings {
            url: settings.url(),
            token: settings.token,
            state_dir: settings.state_dir,
            profile: settings.profile,
        };
        let task = tokio::spawn(connection::run(
            link_settings,
            receiver,
            (state, grant),
            shutdown.clone(),
        ));
        Self {
            calls,
            link,
            granted,
            call_timeout: settings.call_timeout,
            shutdown,
            background: TaskTracker::new(),
            task: Arc::new(Mutex::new(Some(task))),
        }
    }

    /// The link's current state.
    pub fn state(&self) -> LinkState {
        self.link.borrow().clone()
    }

    /// The scopes the gateway granted on the last successful `connect` (empty before it).
    pub fn granted_scopes(&self) -> Vec<String> {
        self.granted.borrow().clone()
    }

    /// Whether the gateway granted `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.granted.borrow().iter().any(|s| s == scope)
    }

    /// How long a short request may take.
    pub fn call_timeout(&self) -> Duration {
        self.call_timeout
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

    /// Runs `work` in the background; [`Gateway::shutdown`] waits for it (briefly) before the
    /// link closes.
    pub(crate) fn in_background(&self, work: impl Future<Output = ()> + Send + 'static) {
        if !self.background.is_closed() {
            self.background.spawn(work);
        }
    }

    /// Lets background requests finish (at most two seconds), then stops the link task and
    /// waits (at most two seconds) for it to end.
    pub async fn shutdown(&self) {
        self.background.close();
        if tokio::time::timeout(SHUTDOWN_GRACE, self.background.wait())
            .await
            .is_err()
        {
            tracing::warn!("gateway requests still running at shutdown were dropped");
        }
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
}
