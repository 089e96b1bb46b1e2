//! Gateway protocol v4 frames, as the real gateway sends and accepts them (see the captures):
//! requests `{type:"req",id,method,params}`, responses `{type:"res",id,ok,payload|error}` and
//! events `{type:"event",event,payload,seq?}`. The gateway rejects unknown fields, so what we
//! send is exactly what the captures show.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The protocol version spoken.
pub const PROTOCOL_VERSION: u32 = 4;
/// Client id from the gateway's fixed list: a backend service acting for an operator.
pub const CLIENT_ID: &str = "gateway-client";
/// Client mode from the gateway's fixed list.
pub const CLIENT_MODE: &str = "backend";
/// The role we connect as.
pub const ROLE: &str = "operator";
/// Reading memory, files and status.
pub const SCOPE_READ: &str = "operator.read";
/// Requesting and deciding plugin approvals.
pub const SCOPE_APPROVALS: &str = "operator.approvals";

/// A frame from the gateway.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Incoming {
    /// A response to one of our requests.
    Res(Response),
    /// An event (`connect.challenge`, `tick`, `health`, …).
    Event(Event),
    /// A request from the gateway (not expected from an operator link; ignored).
    Req(serde::de::IgnoredAny),
}

/// A response frame.
#[derive(Debug, Clone, Deserialize)]
pub struct Response {
    /// The id of our request.
    pub id: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// The result, when `ok`.
    #[serde(default)]
    pub payload: Value,
    /// The error, when not `ok`.
    #[serde(default)]
    pub error: Option<GatewayFault>,
}

/// The gateway's error shape: `{code, message, details?}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct GatewayFault {
    /// E.g. `INVALID_REQUEST`, `FORBIDDEN`.
    pub code: String,
    /// Human-readable message.
    pub message: String,
    /// Extra detail, e.g. `{"code": "AUTH_TOKEN_MISMATCH"}`.
    #[serde(default)]
    pub details: Value,
}

impl std::fmt::Display for GatewayFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)?;
        if let Some(detail) = self.details.get("code").and_then(Value::as_str) {
            write!(f, " ({detail})")?;
        }
        Ok(())
    }
}

/// An event frame.
#[derive(Debug, Clone, Deserialize)]
pub struct Event {
    /// Event name.
    pub event: String,
    /// Event data.
    #[serde(default)]
    pub payload: Value,
}

/// A request frame we send.
#[derive(Debug, Clone, Serialize)]
pub struct Request<'a> {
    /// Always `req`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Our request id.
    pub id: &'a str,
    /// The method.
    pub method: &'a str,
    /// Its parameters.
    pub params: &'a Value,
}

impl<'a> Request<'a> {
    /// A request frame.
    pub fn new(id: &'a str, method: &'a str, params: &'a Value) -> Self {
        Self {
            kind: "req",
            id,
            method,
            params,
        }
    }
}

/// `connect.challenge` payload.
#[derive(Debug, Clone, Deserialize)]
pub struct Challenge {
    /// Nonce to sign.
    pub nonce: String,
}

/// `connect` parameters.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectParams {
    /// Lowest protocol accepted.
    pub min_protocol: u32,
    /// Highest protocol accepted.
    pub max_protocol: u32,
    /// Who we are.
    pub client: ClientInfo,
    /// `operator`.
    pub role: String,
    /// Requested scopes.
    pub scopes: Vec<String>,
    /// Capabilities (`approvals` makes this client a place approvals are shown).
    pub caps: Vec<String>,
    /// The gateway token.
    pub auth: Auth,
    /// Locale.
    pub locale: String,
    /// User agent.
    pub user_agent: String,
    /// The signed device identity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceProof>,
}

/// `connect.client`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientInfo {
    /// From the gateway's list of client ids.
    pub id: String,
    /// Our version.
    pub version: String,
    /// OS platform, e.g. `linux`.
    pub platform: String,
    /// From the gateway's list of client modes.
    pub mode: String,
    /// Shown in the gateway's UI.
    pub display_name: String,
}

/// `connect.auth`.
#[derive(Debug, Clone, Serialize)]
pub struct Auth {
    /// The gateway token.
    pub token: String,
}

/// `connect.device`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceProof {
    /// Hex SHA-256 of the public key.
    pub id: String,
    /// Raw public key, base64url.
    pub public_key: String,
    /// Signature of the v3 payload, base64url.
    pub signature: String,
    /// When it was signed (ms since epoch).
    pub signed_at: u64,
    /// The challenge nonce.
    pub nonce: String,
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn parses_captured_frames() -> anyhow::Result<()> {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/memory/gateway"
        );
        let text = std::fs::read_to_string(format!("{dir}/memory-search.jsonl"))?;
        let mut results = 0;
        for line in text.lines() {
            let record: Value = serde_json::from_str(line)?;
            if record["dir"] != "in" {
                continue;
            }
            match serde_json::from_value::<Incoming>(record["frame"].clone())? {
                Incoming::Res(res) if res.ok && res.payload.get("results").is_some() => {
                    let payload: crate::search::SearchPayload =
                        serde_json::from_value(res.payload)?;
                    results += payload.results.len();
                }
                Incoming::Res(res) => assert!(res.ok || res.error.is_some()),
                Incoming::Event(event) => assert!(!event.event.is_empty()),
                Incoming::Req(_) => {}
            }
        }
        assert_eq!(results, 2);
        Ok(())
    }

    #[test]
    fn error_shape_reads_like_the_gateway_meant() -> anyhow::Result<()> {
        let frame: Incoming = serde_json::from_str(
            r#"{"type":"res","id":"r1","ok":false,"error":{"code":"INVALID_REQUEST","message":"unauthorized: gateway token mismatch (provide gateway auth token)","details":{"code":"AUTH_TOKEN_MISMATCH"}}}"#,
        )?;
        let Incoming::Res(res) = frame else {
            anyhow::bail!("not a response")
        };
        assert_eq!(
            res.error.map(|e| e.to_string()),
            Some("INVALID_REQUEST: unauthorized: gateway token mismatch (provide gateway auth token) (AUTH_TOKEN_MISMATCH)".to_owned())
        );
        Ok(())
    }
}
