//! Why a gateway call failed.

use crate::protocol::GatewayFault;

/// Why a gateway call failed. Every variant makes the caller fall back (a search to the local
/// index, an approval to "no").
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
