//! A client of the OpenClaw gateway (WebSocket protocol v4), shared by the memory server (which
//! searches through it) and the bridge (which asks a person through its plugin approvals).
//!
//! A [`Gateway`] is a cheap, cloneable handle in front of one background link task. Starting it
//! never blocks; while the link is down every call fails at once, so callers fall back (the
//! memory server to its own index, the bridge to another approval route) without waiting.

/// Reconnect delays.
pub mod backoff;
/// The link task: handshake, keepalive, request routing, reconnects.
mod connection;
/// The ed25519 device identity.
pub mod device;
/// Why a call failed.
mod error;
/// The handle: settings, errors, requests.
mod handle;
/// Who a client says it is.
mod profile;
/// Wire frames.
pub mod protocol;

/// `memory.search`.
pub mod search;

/// `plugin.approval.*`: asking a person through OpenClaw.
pub mod approval;

pub use crate::connection::LinkState;
pub use crate::error::GatewayError;
pub use crate::handle::{DEFAULT_CALL_TIMEOUT, Gateway, GatewaySettings};
pub use crate::profile::ClientProfile;
