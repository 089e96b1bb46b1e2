//! One yes/no question to a person through the MCP client (form elicitation with a single
//! boolean, `approve`, which clients show as a dialog), and how to read the answer: only
//! `accept` with `approve: true` is a yes. Used for the policy's `ask` rules, both by the
//! envelope (a call of the server's own tools) and by the bridge's approval broker (a step of a
//! Copilot turn).

use rmcp::RoleServer;
use rmcp::model::{ElicitRequestParams, ElicitationAction};
use rmcp::service::{ElicitationMode, Peer};
use serde_json::{Value, json};

/// The key of the boolean in the form (and of the question in `input_required` results).
pub const APPROVE: &str = "approve";

/// What came of asking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirmation {
    /// An explicit yes.
    pub allowed: bool,
    /// Who was asked and what they said, or why nobody could be.
    pub detail: String,
    /// Facts for the audit record (e.g. the approval's id and who decided).
    pub facts: Vec<(&'static str, String)>,
}

impl Confirmation {
    /// An explicit yes.
    pub fn yes(detail: impl Into<String>) -> Self {
        Self {
            allowed: true,
            detail: detail.into(),
            facts: Vec::new(),
        }
    }

    /// Anything else.
    pub fn no(detail: impl Into<String>) -> Self {
        Self {
            allowed: false,
            detail: detail.into(),
            facts: Vec::new(),
        }
    }

    /// Adds a fact for the audit record.
    #[must_use]
    pub fn with_fact(mut self, key: &'static str, value: impl Into<String>) -> Self {
        self.facts.push((key, value.into()));
        self
    }
}

/// The form's schema: one required boolean, `approve`.
pub fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            APPROVE: {
                "type": "boolean",
                "title": "Allow this once",
                "description": "Yes lets it happen one time; no refuses it."
            }
        },
        "required": [APPROVE]
    })
}

/// Why `peer` cannot be sent `elicitation/create`, if it cannot.
pub fn why_not(peer: &Peer<RoleServer>) -> Option<String> {
    if peer.peer_info().is_none() {
        return Some(
            "the client speaks MCP 2026-07-28 (no initialize), where a server cannot send \
             elicitation/create"
                .to_owned(),
        );
    }
    if !peer
        .supported_elicitation_modes()
        .contains(&ElicitationMode::Form)
    {
        return Some("the calling client did not declare form elicitation".to_owned());
    }
    None
}

/// Asks the person at `peer` with `message` (already redacted); only an explicit yes allows.
pub async fn ask(peer: &Peer<RoleServer>, message: &str) -> Confirmation {
    let params = serde_json::from_value::<ElicitRequestParams>(json!({
        "mode": "form",
        "message": message,
        "requestedSchema": schema(),
    }));
    let params = match params {
        Ok(params) => params,
        Err(err) => return Confirmation::no(format!("the question could not be built: {err}")),
    };
    match peer.create_elicitation(params).await {
        Ok(result) => read_answer(&serde_json::to_value(&result).unwrap_or(Value::Null)),
        Err(err) => Confirmation::no(format!("the MCP client could not ask: {err}")),
    }
}

/// What an elicitation result (`{action, content}`) says.
pub fn read_answer(result: &Value) -> Confirmation {
    let action = result
        .get("action")
        .cloned()
        .and_then(|a| serde_json::from_value::<ElicitationAction>(a).ok());
    match action {
        Some(ElicitationAction::Accept) => match result
            .get("content")
            .and_then(|c| c.get(APPROVE))
            .and_then(Value::as_bool)
        {
            Some(true) => {
                Confirmation::yes("the person asked through the MCP client allowed it once")
            }
            Some(false) => Confirmation::no("the person asked through the MCP client said no"),
            None => Confirmation::no("the MCP client's answer had no yes or no"),
        },
        Some(ElicitationAction::Decline) => {
            Confirmation::no("the person asked through the MCP client declined")
        }
        Some(ElicitationAction::Cancel) => {
            Confirmation::no("the person asked through the MCP client cancelled the question")
        }
        _ => Confirmation::no(format!(
            "the MCP client's answer could not be read as a yes: {}",
            bridge_core::redact::truncate(&result.to_string(), 200)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_accepted_yes_allows() {
        let yes = json!({"action": "accept", "content": {"approve": true}});
        assert!(read_answer(&yes).allowed);
        for no in [
            json!({"action": "accept", "content": {"approve": false}}),
            json!({"action": "accept", "content": {"approve": "yes"}}),
            json!({"action": "accept"}),
            json!({"action": "decline"}),
            json!({"action": "cancel"}),
            json!({"action": "maybe"}),
            json!(null),
        ] {
            assert!(!read_answer(&no).allowed, "{no}");
        }
        assert!(
            read_answer(&json!({"action": "decline"}))
                .detail
                .contains("declined")
        );
        assert!(
            read_answer(&json!({"action": "cancel"}))
                .detail
                .contains("cancelled")
        );
    }
}
