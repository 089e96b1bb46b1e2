//! The gateway link, run as one background task: connect, answer the challenge with a signed
//! `connect`, then carry requests and responses while watching for `tick`s; on any failure,
//! report the link down, wait out the backoff and start over.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::{Instant, sleep_until, timeout};
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

use crate::backoff::Backoff;
use crate::device::{DeviceIdentity, SignedFields};
use crate::error::GatewayError;
use crate::profile::ClientProfile;
use crate::protocol::{
    Auth, CLIENT_ID, CLIENT_MODE, Challenge, ClientInfo, ConnectParams, DeviceProof, Incoming,
    PROTOCOL_VERSION, ROLE, Request,
};

/// How long connecting, the challenge and the `connect` answer may each take. The gateway
/// answers `connect` in well under a second when idle; 10 s allows for a busy one.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// `tick` interval assumed until `hello-ok` says otherwise (the gateway's default).
const DEFAULT_TICK_MS: u64 = 30_000;

/// Where and how to connect.
#[derive(Debug, Clone)]
pub struct LinkSettings {
    /// `ws://host:port`.
    pub url: String,
    /// The gateway token.
    pub token: String,
    /// Where the device identity lives.
    pub state_dir: PathBuf,
    /// Who we say we are.
    pub profile: ClientProfile,
}

/// Where the link reports its state and the scopes the gateway granted.
pub type Reports = (watch::Sender<LinkState>, watch::Sender<Vec<String>>);

/// The state of the link, as the handle sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkState {
    /// The first attempt has not finished yet.
    Connecting,
    /// The last attempt failed (with why); the link retries with backoff.
    Down(String),
    /// Connected and authenticated; requests can be sent.
    Up,
}

/// One request from the handle to the link.
#[derive(Debug)]
pub struct Call {
    /// Gateway method.
    pub method: String,
    /// Its parameters.
    pub params: Value,
    /// Where the response goes.
    pub reply: oneshot::Sender<Result<Value, GatewayError>>,
}

/// Runs the link until `shutdown` fires or every handle is dropped.
pub async fn run(
    settings: LinkSettings,
    mut calls: mpsc::Receiver<Call>,
    (state, grant): Reports,
    shutdown: CancellationToken,
) {
    let mut backoff = Backoff::new();
    let mut identity: Option<DeviceIdentity> = None;
    loop {
        if identity.is_none() && settings.profile.device {
            let dir = settings.state_dir.clone();
            match tokio::task::spawn_blocking(move || DeviceIdentity::load_or_create(&dir)).await {
                Ok(Ok(loaded)) => identity = Some(loaded),
                Ok(Err(err)) => {
                    // Without a device identity the gateway still accepts a token on loopback
                    // with operator.read; keep going and say why the identity is missing.
                    tracing::warn!(%err, "gateway: connecting without a device identity");
                }
                Err(err) => tracing::warn!(%err, "gateway: device identity task failed"),
            }
        }
        let mut connected = false;
        let outcome = session(
            &settings,
            identity.as_ref(),
            &mut calls,
            (&state, &grant),
            &shutdown,
            &mut connected,
        )
        .await;
        let reason = match outcome {
            Ok(()) => return,
            Err(err) => err.to_string(),
        };
        let _ = state.send(LinkState::Down(reason.clone()));
        if connected {
            backoff.reset();
        }
        let delay = backoff.next_delay();
        tracing::info!(%reason, delay_ms = delay.as_millis(), "gateway link down; will retry");
        let wake = Instant::now() + delay;
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = sleep_until(wake) => break,
                call = calls.recv() => match call {
                    None => return,
                    Some(call) => {
                        let _ = call.reply.send(Err(GatewayError::NotConnected(reason.clone())));
                    }
                },
            }
        }
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// One connection, from TCP connect to its end. `Ok` means shut down on purpose.
async fn session(
    settings: &LinkSettings,
    identity: Option<&DeviceIdentity>,
    calls: &mut mpsc::Receiver<Call>,
    (state, grant): (&watch::Sender<LinkState>, &watch::Sender<Vec<String>>),
    shutdown: &CancellationToken,
    connected: &mut bool,
) -> Result<(), GatewayError> {
    let (ws, tick, scopes) = handshake(settings, identity).await?;
    *connected = true;
    let _ = grant.send(scopes);
    let _ = state.send(LinkState::Up);
    tracing::info!(url = %settings.url, "gateway connected");
    carry(ws, tick, calls, shutdown).await
}

/// Connects, answers the challenge and returns the socket with the gateway's tick interval and
/// the scopes it granted.
async fn handshake(
    settings: &LinkSettings,
    identity: Option<&DeviceIdentity>,
) -> Result<(Socket, Duration, Vec<String>), GatewayError> {
    let (mut ws, _response) = timeout(
        HANDSHAKE_TIMEOUT,
        tokio_tungstenite::connect_async(settings.url.as_str()),
    )
    .await
    .map_err(|_| GatewayError::Timeout("connecting"))?
    .map_err(|e| GatewayError::Link(format!("cannot connect to {}: {e}", settings.url)))?;

    // The gateway speaks first with a challenge whose nonce we sign.
    let deadline = Instant::now() + HANDSHAKE_TIMEOUT;
    let nonce = loop {
        let frame = next_frame(&mut ws, deadline, "the connect challenge").await?;
        if let Incoming::Event(event) = frame
            && event.event == "connect.challenge"
        {
            let challenge: Challenge = serde_json::from_value(event.payload)
                .map_err(|e| GatewayError::Protocol(format!("bad connect.challenge: {e}")))?;
            break challenge.nonce;
        }
    };

    let params = connect_params(settings, identity, &nonce);
    let params = serde_json::to_value(&params)
        .map_err(|e| GatewayError::Protocol(format!("cannot encode connect: {e}")))?;
    send(&mut ws, "c0", "connect", &params).await?;
    let (tick, scopes) = loop {
        let frame = next_frame(&mut ws, deadline, "the connect answer").await?;
        if let Incoming::Res(res) = frame
            && res.id == "c0"
        {
            if !res.ok {
                return Err(match res.error {
                    Some(fault) => GatewayError::Rejected(fault),
                    None => GatewayError::Protocol("connect refused without an error".into()),
                });
            }
            let tick_ms = res
                .payload
                .pointer("/policy/tickIntervalMs")
                .and_then(Value::as_u64)
                .filter(|ms| *ms > 0)
                .unwrap_or(DEFAULT_TICK_MS);
            let scopes = res
                .payload
                .pointer("/auth/scopes")
                .and_then(Value::as_array)
                .map(|scopes| {
                    scopes
                        .iter()
                        .filter_map(|s| s.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            break (Duration::from_millis(tick_ms), scopes);
        }
    };
    Ok((ws, tick, scopes))
}

/// Carries requests and responses until the link fails (`Err`) or is shut down (`Ok`).
async fn carry(
    mut ws: Socket,
    tick: Duration,
    calls: &mut mpsc::Receiver<Call>,
    shutdown: &CancellationToken,
) -> Result<(), GatewayError> {
    let mut pending: HashMap<String, oneshot::Sender<Result<Value, GatewayError>>> = HashMap::new();
    let mut next_id: u64 = 1;
    // Two tick intervals without any frame means the link is dead (OpenClaw's own rule).
    let silence = tick * 2;
    let mut last_seen = Instant::now();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => {
                let _ = ws.close(None).await;
                return Ok(());
            }
            () = sleep_until(last_seen + silence) => {
                return Err(GatewayError::Link(format!(
                    "no tick from the gateway for {} ms", silence.as_millis()
                )));
            }
            call = calls.recv() => {
                let Some(call) = call else {
                    let _ = ws.close(None).await;
                    return Ok(());
                };
                let id = format!("r{next_id}");
                next_id += 1;
                pending.retain(|_, reply| !reply.is_closed());
                if let Err(err) = send(&mut ws, &id, &call.method, &call.params).await {
                    let _ = call.reply.send(Err(GatewayError::Link(err.to_string())));
                    return Err(err);
                }
                pending.insert(id, call.reply);
            }
            message = ws.next() => {
                last_seen = Instant::now();
                let text = match message {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(Message::Close(_))) | None => {
                        return Err(GatewayError::Link("the gateway closed the connection".into()));
                    }
                    Some(Ok(_)) => continue,
                    Some(Err(e)) => return Err(GatewayError::Link(e.to_string())),
                };
                match serde_json::from_str::<Incoming>(&text) {
                    Ok(Incoming::Res(res)) => {
                        if let Some(reply) = pending.remove(&res.id) {
                            let result = if res.ok {
                                Ok(res.payload)
                            } else {
                                Err(res.error.map_or_else(
                                    || GatewayError::Protocol("error without details".into()),
                                    GatewayError::Rejected,
                                ))
                            };
                            let _ = reply.send(result);
                        }
                    }
                    Ok(Incoming::Event(_) | Incoming::Req(_)) => {}
                    Err(err) => tracing::debug!(%err, "gateway: ignoring an unreadable frame"),
                }
            }
        }
    }
}

fn connect_params(
    settings: &LinkSettings,
    identity: Option<&DeviceIdentity>,
    nonce: &str,
) -> ConnectParams {
    let platform = std::env::consts::OS;
    let profile = &settings.profile;
    let scopes: Vec<&str> = profile.scopes.iter().map(String::as_str).collect();
    let device = identity.filter(|_| profile.device).map(|identity| {
        let signed_at = now_ms();
        let signature = identity.sign(&SignedFields {
            client_id: CLIENT_ID,
            client_mode: CLIENT_MODE,
            role: ROLE,
            scopes: &scopes,
            signed_at_ms: signed_at,
            token: &settings.token,
            nonce,
            platform,
            device_family: "",
        });
        DeviceProof {
            id: identity.id().to_owned(),
            public_key: identity.public_key(),
            signature,
            signed_at,
            nonce: nonce.to_owned(),
        }
    });
    ConnectParams {
        min_protocol: PROTOCOL_VERSION,
        max_protocol: PROTOCOL_VERSION,
        client: ClientInfo {
            id: CLIENT_ID.to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            platform: platform.to_owned(),
            mode: CLIENT_MODE.to_owned(),
            display_name: profile.display_name.clone(),
        },
        role: ROLE.to_owned(),
        scopes: profile.scopes.clone(),
        caps: profile.caps.clone(),
        auth: Auth {
            token: settings.token.clone(),
        },
        locale: "en-US".to_owned(),
        user_agent: concat!("copilot-bridge/", env!("CARGO_PKG_VERSION")).to_owned(),
        device,
    }
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn send(ws: &mut Socket, id: &str, method: &str, params: &Value) -> Result<(), GatewayError> {
    let frame = serde_json::to_string(&Request::new(id, method, params))
        .map_err(|e| GatewayError::Protocol(format!("cannot encode {method}: {e}")))?;
    ws.send(Message::text(frame))
        .await
        .map_err(|e| GatewayError::Link(e.to_string()))
}

async fn next_frame(
    ws: &mut Socket,
    deadline: Instant,
    waiting_for: &'static str,
) -> Result<Incoming, GatewayError> {
    loop {
        let message = tokio::time::timeout_at(deadline, ws.next())
            .await
            .map_err(|_| GatewayError::Timeout(waiting_for))?;
        match message {
            Some(Ok(Message::Text(text))) => {
                return serde_json::from_str(&text)
                    .map_err(|e| GatewayError::Protocol(format!("unreadable frame: {e}")));
            }
            Some(Ok(Message::Close(_))) | None => {
                return Err(GatewayError::Link(format!(
                    "the gateway closed the connection while we waited for {waiting_for}"
                )));
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(GatewayError::Link(e.to_string())),
        }
    }
}
