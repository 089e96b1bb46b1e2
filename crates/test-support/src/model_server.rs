//! A scripted OpenAI-compatible model server on loopback. Pointing the Copilot CLI's BYOK
//! variables at it (`COPILOT_PROVIDER_BASE_URL=<base_url>`) lets tests run the real agent end to
//! end with no account and no network: each `POST /v1/chat/completions` takes the next scripted
//! [`Reply`], and every request is recorded for assertions.
//!
//! Replies are queued either globally ([`ModelServer::push`]) or under a marker
//! ([`ModelServer::script`]): a keyed reply answers only a turn whose latest user message contains
//! the marker, so several sessions can share one server without taking each other's replies.

mod http;
mod script;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use serde_json::{Value, json};
use tokio::io::{AsyncWrite, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::task::{JoinHandle, JoinSet};

use self::script::{Body, full_response, stream_events};
pub use self::script::{MODEL_ID, Reply};

/// The text answered when a turn arrives with nothing scripted for it: visible in the agent's
/// output, so a test that forgot a reply fails with a clear message instead of hanging.
pub const UNSCRIPTED_REPLY: &str = "scripted model: nothing was scripted for this turn";

/// One request the server received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// `GET`, `POST`, …
    pub method: String,
    /// The request path, e.g. `/v1/chat/completions`.
    pub path: String,
    /// The `authorization` header, if any.
    pub authorization: Option<String>,
    /// The JSON body (`Value::Null` when there was none or it was not JSON).
    pub body: Value,
}

/// The text of a chat message's `content`, which is a string or a list of text parts.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

impl RecordedRequest {
    /// Whether this is a chat-completion request.
    pub fn is_chat(&self) -> bool {
        self.method == "POST" && self.path.ends_with("/chat/completions")
    }

    /// The conversation sent to the model.
    pub fn messages(&self) -> &[Value] {
        self.body["messages"].as_array().map_or(&[], Vec::as_slice)
    }

    /// The text of the latest user message: the prompt of the current turn.
    pub fn last_user_text(&self) -> Option<String> {
        self.messages()
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .map(|m| content_text(&m["content"]))
    }

    /// The texts of the tool results in the conversation, oldest first.
    pub fn tool_results(&self) -> Vec<String> {
        self.messages()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| content_text(&m["content"]))
            .collect()
    }

    /// The names of the tools offered to the model.
    pub fn tool_names(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether the client asked for a streamed (SSE) answer.
    pub fn is_streaming(&self) -> bool {
        self.body["stream"] == json!(true)
    }
}

#[derive(Debug, Default)]
struct State {
    keyed: Vec<(String, VecDeque<Reply>)>,
    queue: VecDeque<Reply>,
    requests: Vec<RecordedRequest>,
    next_call_id: u64,
    next_completion_id: u64,
}

impl State {
    /// Takes the reply for a chat request: a keyed reply whose marker is in the latest user
    /// message, else the next global one, else the unscripted fallback.
    fn take_reply(&mut self, request: &RecordedRequest) -> Reply {
        let prompt = request.last_user_text().unwrap_or_default();
        let keyed = self
            .keyed
            .iter_mut()
            .find(|(marker, replies)| !replies.is_empty() && prompt.contains(marker.as_str()))
            .and_then(|(_, replies)| replies.pop_front());
        keyed
            .or_else(|| self.queue.pop_front())
            .unwrap_or_else(|| Reply::text(UNSCRIPTED_REPLY))
            .resolve(&request.tool_results())
    }
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    arrived: Notify,
}

impl Shared {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("model server state lock")
    }
}

/// The running server; dropping it stops it and closes every connection.
#[derive(Debug)]
pub struct ModelServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ModelServer {
    /// Starts a server on an ephemeral loopback port.
    pub async fn start() -> anyhow::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .context("cannot bind a loopback port for the model server")?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        let task = tokio::spawn(accept_loop(listener, Arc::clone(&shared)));
        Ok(Self { addr, shared, task })
    }

    /// The base URL for `COPILOT_PROVIDER_BASE_URL`, e.g. `http://127.0.0.1:40123/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Queues replies for any turn.
    pub fn push(&self, reply: Reply) {
        self.shared.state().queue.push_back(reply);
    }

    /// Queues replies for turns whose latest user message contains `marker`.
    pub fn script(&self, marker: &str, replies: impl IntoIterator<Item = Reply>) {
        let mut state = self.shared.state();
        let replies: Vec<Reply> = replies.into_iter().collect();
        if let Some((_, queue)) = state.keyed.iter_mut().find(|(m, _)| m == marker) {
            queue.extend(replies);
        } else {
            state.keyed.push((marker.to_owned(), replies.into()));
        }
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.state().requests.clone()
    }

    /// The chat-completion requests received so far whose latest user message contains
    /// `marker` (all of them for an empty marker).
    pub fn chat_requests(&self, marker: &str) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(RecordedRequest::is_chat)
            .filter(|r| r.last_user_text().is_some_and(|t| t.contains(marker)))
            .collect()
    }

    /// Waits until at least `count` chat requests for `marker` have arrived.
    pub async fn wait_for_chat_requests(
        &self,
        marker: &str,
        count: usize,
        timeout: Duration,
    ) -> anyhow::Result<Vec<RecordedRequest>> {
        tokio::time::timeout(timeout, async {
            loop {
                let arrived = self.shared.arrived.notified();
                let requests = self.chat_requests(marker);
                if requests.len() >= count {
                    return requests;
                }
                arrived.await;
            }
        })
        .await
        .with_context(|| {
            format!(
                "the model server got {} of {count} chat requests for {marker:?} in {timeout:?}",
                self.chat_requests(marker).len()
            )
        })
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    // Connection tasks live in this set, so aborting the accept task closes them all.
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    connections.spawn(serve_connection(stream, Arc::clone(&shared)));
                }
                Err(err) => {
                    eprintln!("model server: accept failed: {err}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

async fn serve_connection(stream: TcpStream, shared: Arc<Shared>) {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    loop {
        let request = match http::read_request(&mut reader).await {
            Ok(Some(request)) => request,
            Ok(None) => return,
            Err(err) => {
                let _ = http::write_full(
                    &mut write,
                    400,
                    &[],
                    "text/plain",
                    err.to_string().as_bytes(),
                )
                .await;
                return;
            }
        };
        let close = request.wants_close();
        // A write error means the client went away (a cancelled turn, a killed agent).
        let keep_going = respond(&request, &shared, &mut write)
            .await
            .unwrap_or_default();
        if close || !keep_going {
            return;
        }
    }
}

/// Answers one request; `Ok(false)` when the connection must close afterwards.
async fn respond<W: AsyncWrite + Unpin>(
    request: &http::Request,
    shared: &Shared,
    write: &mut W,
) -> std::io::Result<bool> {
    let recorded = RecordedRequest {
        method: request.method.clone(),
        path: request.path.clone(),
        authorization: request.header("authorization").map(str::to_owned),
        body: serde_json::from_slice(&request.body).unwrap_or(Value::Null),
    };
    let path = request.path.split('?').next().unwrap_or_default();
    match (request.method.as_str(), path) {
        ("GET", p) if p.ends_with("/models") => {
            record(shared, recorded);
            let body = json!({"object": "list", "data": [{
                "id": MODEL_ID, "object": "model", "created": 0, "owned_by": "scripted"
            }]});
            http::write_full(
                write,
                200,
                &[],
                "application/json",
                body.to_string().as_bytes(),
            )
            .await?;
            Ok(true)
        }
        ("POST", p) if p.ends_with("/chat/completions") => {
            let streaming = recorded.is_streaming();
            let (reply, completion_id, first_call_id) = {
                let mut state = shared.state();
                let reply = state.take_reply(&recorded);
                state.next_completion_id += 1;
                let completion_id = format!("chatcmpl-{}", state.next_completion_id);
                let first_call_id = state.next_call_id + 1;
                state.next_call_id += reply.call_count();
                (reply, completion_id, first_call_id)
            };
            record(shared, recorded);
            tokio::time::sleep(reply.delay).await;
            if let Body::Error { status, message } = &reply.body {
                let body = json!({"error": {"message": message, "type": "scripted_error",
                                             "code": status.to_string()}});
                // A short retry hint keeps the OpenAI client's automatic retries fast in tests.
                let headers = [("retry-after-ms", "50".to_owned())];
                http::write_full(
                    write,
                    *status,
                    &headers,
                    "application/json",
                    body.to_string().as_bytes(),
                )
                .await?;
                return Ok(true);
            }
            if !streaming {
                let body = full_response(&reply, &completion_id, first_call_id);
                http::write_full(
                    write,
                    200,
                    &[],
                    "application/json",
                    body.to_string().as_bytes(),
                )
                .await?;
                return Ok(true);
            }
            http::start_chunked(write, "text/event-stream").await?;
            for (i, event) in stream_events(&reply, &completion_id, first_call_id)
                .iter()
                .enumerate()
            {
                if i > 0 {
                    tokio::time::sleep(reply.chunk_delay).await;
                }
                http::write_chunk(write, format!("data: {event}\n\n").as_bytes()).await?;
            }
            if matches!(reply.body, Body::Hang(_)) {
                // Keep the stream open; the client ends it by hanging up (which fails a write).
                loop {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    http::write_chunk(write, b": still here\n\n").await?;
                }
            }
            http::write_chunk(write, b"data: [DONE]\n\n").await?;
            http::finish_chunks(write).await?;
            Ok(true)
        }
        _ => {
            record(shared, recorded);
            http::write_full(write, 404, &[], "text/plain", b"not found").await?;
            Ok(true)
        }
    }
}

fn record(shared: &Shared, request: RecordedRequest) {
    shared.state().requests.push(request);
    shared.arrived.notify_waiters();
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn post(server: &ModelServer, body: &Value) -> anyhow::Result<String> {
        let mut stream = TcpStream::connect(server.addr).await?;
        let body = body.to_string();
        let request = format!(
            "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
             content-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await?;
        let mut response = String::new();
        stream.read_to_string(&mut response).await?;
        Ok(response)
    }

    fn chat(prompt: &str) -> Value {
        json!({"model": MODEL_ID, "stream": true,
               "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": prompt}]})
    }

    #[tokio::test]
    async fn keyed_replies_answer_only_their_marker_and_requests_are_recorded() -> anyhow::Result<()>
    {
        let server = ModelServer::start().await?;
        server.push(Reply::text("global one"));
        server.script("ALPHA", [Reply::text("alpha reply")]);
        let alpha = post(&server, &chat("do ALPHA now")).await?;
        assert!(
            alpha.contains("alpha ") && alpha.contains("data: [DONE]"),
            "{alpha}"
        );
        let other = post(&server, &chat("something else")).await?;
        assert!(other.contains("global "), "{other}");
        let fallback = post(&server, &chat("again")).await?;
        assert!(fallback.contains("scripted "), "{fallback}");
        let recorded = server
            .wait_for_chat_requests("", 3, Duration::from_secs(1))
            .await?;
        assert_eq!(
            recorded[0].last_user_text().as_deref(),
            Some("do ALPHA now")
        );
        assert_eq!(server.chat_requests("ALPHA").len(), 1);
        Ok(())
    }

    #[tokio::test]
    async fn errors_come_back_with_their_status() -> anyhow::Result<()> {
        let server = ModelServer::start().await?;
        server.push(Reply::error(429, "slow down"));
        let response = post(&server, &chat("hi")).await?;
        assert!(response.starts_with("HTTP/1.1 429"), "{response}");
        assert!(response.contains("slow down"), "{response}");
        Ok(())
    }
}
