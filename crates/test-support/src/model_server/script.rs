//! What the scripted model answers: a [`Reply`] is one model turn (streamed text, tool calls, an
//! HTTP error, or a stream that never ends), rendered as OpenAI chat-completion chunks.

use std::time::Duration;

use serde_json::{Value, json};

/// The model id the server reports and stamps on every chunk.
pub const MODEL_ID: &str = "gpt-4.1";

/// One model turn, answered to one `POST /v1/chat/completions`.
#[derive(Debug, Clone)]
pub struct Reply {
    pub(crate) body: Body,
    /// Pause before the response starts.
    pub(crate) delay: Duration,
    /// Pause between streamed chunks.
    pub(crate) chunk_delay: Duration,
    /// Reported usage: (prompt tokens, completion tokens).
    pub(crate) usage: (u64, u64),
    /// Answer with this text followed by the latest tool result the request carries (a model
    /// that repeats what its tool found), decided when the request arrives.
    pub(crate) echo_tool_result: Option<String>,
}

#[derive(Debug, Clone)]
pub(crate) enum Body {
    /// Assistant text, streamed one piece per chunk.
    Text(Vec<String>),
    /// Tool calls: (name, JSON arguments).
    ToolCalls(Vec<(String, Value)>),
    /// An HTTP error status with an OpenAI-style error body.
    Error { status: u16, message: String },
    /// Text pieces, then a stream that stays open until the client goes away.
    Hang(Vec<String>),
}

/// Splits text into word-sized pieces that keep their trailing spaces, so the pieces join back
/// to the original text and a client sees several chunks.
fn pieces(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for ch in text.chars() {
        current.push(ch);
        if ch == ' ' {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

impl Reply {
    fn new(body: Body) -> Self {
        Self {
            body,
            delay: Duration::ZERO,
            chunk_delay: Duration::ZERO,
            usage: (10, 5),
            echo_tool_result: None,
        }
    }

    /// Answers with `prefix` and then the text of the latest tool result in the conversation,
    /// so what a tool returned comes back in the model's answer.
    pub fn echo_tool_result(prefix: &str) -> Self {
        let mut reply = Self::new(Body::Text(Vec::new()));
        reply.echo_tool_result = Some(prefix.to_owned());
        reply
    }

    /// This reply as sent for a request whose tool results are `tool_results`.
    pub(crate) fn resolve(mut self, tool_results: &[String]) -> Self {
        if let Some(prefix) = self.echo_tool_result.take() {
            let last = tool_results
                .last()
                .map_or("(no tool result)", String::as_str);
            self.body = Body::Text(pieces(&format!("{prefix}{last}")));
        }
        self
    }

    /// Streams `text` as the assistant's answer, a few words per chunk.
    pub fn text(text: &str) -> Self {
        Self::new(Body::Text(pieces(text)))
    }

    /// Calls one tool, e.g. `Reply::tool_call("create", json!({"path": …, "file_text": …}))`.
    /// Built-in tools of the CLI: `bash`, `view`, `create`, `edit`, `grep`, `glob`, …; MCP
    /// tools are named `<server>-<tool>`.
    pub fn tool_call(name: &str, arguments: Value) -> Self {
        Self::new(Body::ToolCalls(vec![(name.to_owned(), arguments)]))
    }

    /// Calls several tools in one turn.
    pub fn tool_calls(calls: Vec<(&str, Value)>) -> Self {
        Self::new(Body::ToolCalls(
            calls
                .into_iter()
                .map(|(name, args)| (name.to_owned(), args))
                .collect(),
        ))
    }

    /// Answers with an HTTP error, e.g. 429 (rate limit) or 500.
    pub fn error(status: u16, message: &str) -> Self {
        Self::new(Body::Error {
            status,
            message: message.to_owned(),
        })
    }

    /// Streams `text`, then keeps the stream open without finishing until the client hangs up:
    /// a turn that only a cancel (or a kill) can end.
    pub fn hang(text: &str) -> Self {
        Self::new(Body::Hang(pieces(text)))
    }

    /// Waits this long before answering.
    #[must_use]
    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Waits this long between streamed chunks.
    #[must_use]
    pub fn with_chunk_delay(mut self, delay: Duration) -> Self {
        self.chunk_delay = delay;
        self
    }

    /// Reports this usage in the final chunk.
    #[must_use]
    pub fn with_usage(mut self, prompt_tokens: u64, completion_tokens: u64) -> Self {
        self.usage = (prompt_tokens, completion_tokens);
        self
    }
}

/// Builds the stream of chunk payloads (each becomes one `data:` event) for a streaming reply;
/// `first_call_id` numbers tool calls so their ids are unique per server.
pub(crate) fn stream_events(reply: &Reply, completion_id: &str, first_call_id: u64) -> Vec<Value> {
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": 0,
            "model": MODEL_ID,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    };
    let mut events = Vec::new();
    let finish = match &reply.body {
        Body::Text(pieces) | Body::Hang(pieces) => {
            for (i, piece) in pieces.iter().enumerate() {
                let delta = if i == 0 {
                    json!({"role": "assistant", "content": piece})
                } else {
                    json!({"content": piece})
                };
                events.push(chunk(delta, Value::Null));
            }
            if matches!(reply.body, Body::Hang(_)) {
                return events;
            }
            "stop"
        }
        Body::ToolCalls(calls) => {
            for (index, (name, arguments)) in calls.iter().enumerate() {
                let id = format!("call_{}", first_call_id + index as u64);
                // Name first, arguments in a second chunk: clients must assemble fragments.
                events.push(chunk(
                    json!({"role": "assistant", "tool_calls": [{
                        "index": index, "id": id, "type": "function",
                        "function": {"name": name, "arguments": ""}
                    }]}),
                    Value::Null,
                ));
                events.push(chunk(
                    json!({"tool_calls": [{
                        "index": index, "function": {"arguments": arguments.to_string()}
                    }]}),
                    Value::Null,
                ));
            }
            "tool_calls"
        }
        Body::Error { .. } => return events,
    };
    events.push(chunk(json!({}), json!(finish)));
    let (prompt, completion) = reply.usage;
    events.push(json!({
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": 0,
        "model": MODEL_ID,
        "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                  "total_tokens": prompt + completion},
    }));
    events
}

/// Builds the single JSON body of a non-streaming reply (`"stream": false`).
pub(crate) fn full_response(reply: &Reply, completion_id: &str, first_call_id: u64) -> Value {
    let (message, finish) = match &reply.body {
        Body::Text(pieces) | Body::Hang(pieces) => (
            json!({"role": "assistant", "content": pieces.concat()}),
            "stop",
        ),
        Body::ToolCalls(calls) => (
            json!({"role": "assistant", "content": null, "tool_calls": calls.iter().enumerate()
                .map(|(i, (name, args))| json!({
                    "id": format!("call_{}", first_call_id + i as u64), "type": "function",
                    "function": {"name": name, "arguments": args.to_string()}
                })).collect::<Vec<_>>()}),
            "tool_calls",
        ),
        Body::Error { .. } => (Value::Null, "stop"),
    };
    let (prompt, completion) = reply.usage;
    json!({
        "id": completion_id,
        "object": "chat.completion",
        "created": 0,
        "model": MODEL_ID,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                  "total_tokens": prompt + completion},
    })
}

impl Reply {
    /// How many tool-call ids this reply uses.
    pub(crate) fn call_count(&self) -> u64 {
        match &self.body {
            Body::ToolCalls(calls) => calls.len() as u64,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn text_streams_in_pieces_that_join_back() {
        let events = stream_events(&Reply::text("Hello from mock"), "c1", 1);
        let text: String = events
            .iter()
            .filter_map(|e| e["choices"][0]["delta"]["content"].as_str())
            .collect();
        assert_eq!(text, "Hello from mock");
        assert_eq!(
            events.len(),
            3 + 2,
            "three pieces, a finish chunk and usage"
        );
        assert_eq!(events[3]["choices"][0]["finish_reason"], json!("stop"));
        assert_eq!(events[4]["usage"]["total_tokens"], json!(15));
    }

    #[test]
    fn tool_calls_carry_unique_ids_and_json_arguments() {
        let reply = Reply::tool_calls(vec![
            ("create", json!({"path": "/w/a.txt", "file_text": "x"})),
            ("bash", json!({"command": "ls", "description": "list"})),
        ]);
        let events = stream_events(&reply, "c1", 7);
        assert_eq!(
            events[0]["choices"][0]["delta"]["tool_calls"][0]["id"],
            json!("call_7")
        );
        assert_eq!(
            events[2]["choices"][0]["delta"]["tool_calls"][0]["id"],
            json!("call_8")
        );
        let args = events[1]["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .expect("arguments are a string");
        assert_eq!(
            serde_json::from_str::<Value>(args).expect("valid JSON"),
            json!({"path": "/w/a.txt", "file_text": "x"})
        );
        assert_eq!(
            events[4]["choices"][0]["finish_reason"],
            json!("tool_calls")
        );
    }

    #[test]
    fn a_hanging_reply_never_sends_a_finish_chunk() {
        let events = stream_events(&Reply::hang("still thinking"), "c1", 1);
        assert!(
            events
                .iter()
                .all(|e| e["choices"][0]["finish_reason"].is_null() && e.get("usage").is_none())
        );
    }
}
