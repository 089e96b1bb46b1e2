//! Questions asked of MCP 2026-07-28 clients as `input_required` results (multi round-trip
//! requests), where a server cannot send `elicitation/create`. The `requestState` that comes
//! back with the answer is sealed: an HMAC-SHA256 tag under a key made fresh in every process
//! (rmcp's `RequestStateCodec`), bound to the tool and a digest of its arguments, with an
//! expiry. [`OwnQuestions`] asks about a server's own tool call this way; the bridge's paused
//! Copilot turns use the same pieces.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bridge_core::sync::lock;
use rmcp::RoleServer;
use rmcp::model::{InputRequest, InputRequiredResult, RequestStateCodec, SealOptions};
use rmcp::service::RequestContext;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::confirm::{self, APPROVE, Confirmation, schema};

/// What starts every state [`OwnQuestions`] issues, so a retry's state is known to be the
/// envelope's (and not one a tool issued for its own paused work).
const OWN_PREFIX: &str = "ask1.";

/// Whether this call is asked through `input_required` results: MCP 2026-07-28 or later, with
/// elicitation declared in the request's capabilities.
pub fn asks_by_input_required(context: &RequestContext<RoleServer>) -> bool {
    let modern = context
        .protocol_version()
        .is_some_and(|version| version.as_str() >= "2026-07-28");
    let elicits = context
        .client_capabilities()
        .is_some_and(|capabilities| capabilities.elicitation.is_some());
    modern && elicits
}

/// `bytes` random bytes as hex. Without an entropy source the result is all zeros, and the
/// error is logged: a key nobody can guess cannot be made then.
pub fn random_hex(bytes: usize) -> String {
    let mut buffer = vec![0_u8; bytes];
    if getrandom::fill(&mut buffer).is_err() {
        tracing::error!("no random source; input_required states cannot be issued safely");
    }
    let mut hex = String::with_capacity(bytes * 2);
    for byte in buffer {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// A codec under a fresh per-process key.
pub fn fresh_codec() -> RequestStateCodec {
    RequestStateCodec::new_unchecked(random_hex(32).into_bytes())
}

/// What a state is bound to: the tool and a digest of its arguments.
pub fn binding(tool: &str, arguments: &Value) -> Vec<u8> {
    let digest = Sha256::digest(arguments.to_string().as_bytes());
    let mut bound = tool.as_bytes().to_vec();
    bound.push(0);
    bound.extend_from_slice(&digest);
    bound
}

/// The one question of an `input_required` result: a yes/no form with `message`.
pub fn question(message: &str) -> Result<BTreeMap<String, InputRequest>, String> {
    let request = serde_json::from_value::<InputRequest>(json!({
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": schema()}
    }))
    .map_err(|err| format!("the question could not be built: {err}"))?;
    Ok(BTreeMap::from([(APPROVE.to_owned(), request)]))
}

/// Why a retry's `requestState` or answer was refused.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    /// Forged, tampered with, expired, or for another tool or other arguments.
    #[error(
        "the requestState was refused ({0}): it is not one this server issued for this tool \
         and these arguments, or it expired; call the tool again without requestState"
    )]
    Invalid(String),
    /// Already used, or the work it paused has ended.
    #[error(
        "the requestState was already used or its call has ended; call the tool again without \
         requestState"
    )]
    Spent,
    /// The retry carried no answer to the question.
    #[error("the retry has no inputResponses.{APPROVE}; answer the question and retry")]
    NoAnswer,
}

/// Opens a retry's `state` (sealed by `codec` for `tool` with `arguments`) and reads the
/// answer in `responses`: the nonce the state carries and what the person said.
pub fn open(
    codec: &RequestStateCodec,
    tool: &str,
    arguments: &Value,
    state: &str,
    responses: Option<&BTreeMap<String, Value>>,
) -> Result<(String, Confirmation), AnswerError> {
    let nonce = codec
        .open_with(state, &binding(tool, arguments))
        .map_err(|err| AnswerError::Invalid(err.to_string()))?;
    let nonce = String::from_utf8(nonce).map_err(|_| AnswerError::Invalid("not text".into()))?;
    let answer = responses
        .and_then(|r| r.get(APPROVE))
        .ok_or(AnswerError::NoAnswer)?;
    Ok((nonce, confirm::read_answer(answer)))
}

/// Questions about a server's own tool calls, asked as `input_required` results; each state
/// is single-use.
pub struct OwnQuestions {
    codec: RequestStateCodec,
    ttl: Duration,
    issued: Mutex<HashMap<String, Instant>>,
}

impl std::fmt::Debug for OwnQuestions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnQuestions")
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl OwnQuestions {
    /// Questions whose states expire after `ttl`.
    pub fn new(ttl: Duration) -> Self {
        Self {
            codec: fresh_codec(),
            ttl,
            issued: Mutex::new(HashMap::new()),
        }
    }

    /// Whether `state` is one of these questions' (it may still be forged or spent).
    pub fn claims(state: &str) -> bool {
        state.starts_with(OWN_PREFIX)
    }

    /// The `input_required` result asking `message` about `tool` with `arguments`.
    pub fn ask(
        &self,
        tool: &str,
        arguments: &Value,
        message: &str,
    ) -> Result<InputRequiredResult, String> {
        let requests = question(message)?;
        let nonce = random_hex(16);
        let sealed = self.codec.seal_with(
            nonce.as_bytes(),
            &SealOptions::new()
                .associated_data(&binding(tool, arguments))
                .ttl(self.ttl),
        );
        let now = Instant::now();
        let mut issued = lock(&self.issued);
        issued.retain(|_, expires| *expires > now);
        issued.insert(nonce, now + self.ttl);
        Ok(InputRequiredResult::new(
            Some(requests),
            Some(format!("{OWN_PREFIX}{sealed}")),
        ))
    }

    /// The answer a retry carries for the question `state` names; the state is spent by it.
    pub fn answer(
        &self,
        tool: &str,
        arguments: &Value,
        state: &str,
        responses: Option<&BTreeMap<String, Value>>,
    ) -> Result<Confirmation, AnswerError> {
        let sealed = state
            .strip_prefix(OWN_PREFIX)
            .ok_or_else(|| AnswerError::Invalid("not a question of this server".into()))?;
        let (nonce, answer) = open(&self.codec, tool, arguments, sealed, responses)?;
        lock(&self.issued)
            .remove(&nonce)
            .ok_or(AnswerError::Spent)?;
        Ok(answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yes() -> BTreeMap<String, Value> {
        BTreeMap::from([(
            APPROVE.to_owned(),
            json!({"action": "accept", "content": {"approve": true}}),
        )])
    }

    #[test]
    fn an_answer_is_read_once_for_the_same_tool_and_arguments() -> anyhow::Result<()> {
        let questions = OwnQuestions::new(Duration::from_mins(1));
        let args = json!({"path": "a.txt"});
        let asked = questions
            .ask("copilot_create_file", &args, "may I?")
            .map_err(anyhow::Error::msg)?;
        let wire = serde_json::to_value(&asked)?;
        assert_eq!(wire["resultType"], "input_required", "{wire}");
        let state = asked.request_state.unwrap_or_default();
        assert!(OwnQuestions::claims(&state));
        let mut tampered = state.clone();
        let last = tampered.pop().unwrap_or('A');
        tampered.push(if last == 'A' { 'B' } else { 'A' });
        for (tool, arguments, state) in [
            ("copilot_create_file", args.clone(), tampered.as_str()),
            ("copilot_read_file", args.clone(), state.as_str()),
            (
                "copilot_create_file",
                json!({"path": "b.txt"}),
                state.as_str(),
            ),
        ] {
            assert!(matches!(
                questions.answer(tool, &arguments, state, Some(&yes())),
                Err(AnswerError::Invalid(_))
            ));
        }
        assert!(matches!(
            questions.answer("copilot_create_file", &args, &state, None),
            Err(AnswerError::NoAnswer)
        ));
        let answer = questions.answer("copilot_create_file", &args, &state, Some(&yes()))?;
        assert!(answer.allowed);
        assert!(matches!(
            questions.answer("copilot_create_file", &args, &state, Some(&yes())),
            Err(AnswerError::Spent)
        ));
        Ok(())
    }

    #[test]
    fn an_expired_state_is_refused() -> anyhow::Result<()> {
        let questions = OwnQuestions::new(Duration::from_millis(1));
        let args = json!({});
        let asked = questions
            .ask("t", &args, "may I?")
            .map_err(anyhow::Error::msg)?;
        std::thread::sleep(Duration::from_millis(1100));
        let state = asked.request_state.unwrap_or_default();
        assert!(matches!(
            questions.answer("t", &args, &state, Some(&yes())),
            Err(AnswerError::Invalid(_))
        ));
        Ok(())
    }
}
