//! Who a client says it is when it connects, and what it asks to be allowed.

use crate::protocol::{SCOPE_APPROVALS, SCOPE_READ};

/// Who this client says it is in `connect`, and what it asks to be allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientProfile {
    /// Shown in the gateway's UI (and as `resolvedBy` when this client decides an approval).
    pub display_name: String,
    /// Scopes requested; the gateway grants a subset (see [`Gateway::granted_scopes`]).
    pub scopes: Vec<String>,
    /// Capabilities announced; `approvals` makes this client a place approvals are shown.
    pub caps: Vec<String>,
    /// Sign `connect` with the device identity kept in the state directory. Without it the
    /// gateway still accepts the token on loopback.
    pub device: bool,
}

impl ClientProfile {
    /// The memory server: reads memory, signs with its device identity.
    pub fn memory_reader() -> Self {
        Self {
            display_name: "openclaw-memory (copilot-bridge)".to_owned(),
            scopes: vec![SCOPE_READ.to_owned()],
            caps: Vec::new(),
            device: true,
        }
    }

    /// The bridge: asks for approvals. Token only, as the gateway grants `operator.approvals`
    /// to a token-authenticated backend client without pairing a device. It announces no
    /// `approvals` capability, so it never counts as someone who can see a request.
    pub fn approval_requester() -> Self {
        Self {
            display_name: "copilot-bridge".to_owned(),
            scopes: vec![SCOPE_READ.to_owned(), SCOPE_APPROVALS.to_owned()],
            caps: Vec::new(),
            device: false,
        }
    }
}
