//! JSON-RPC 2.0 over newline-delimited JSON with one agent: numbered requests with a timeout
//! each, notifications, and an answer to every request the agent sends us. Three tasks do the
//! work: a writer fed by a channel, a reader that routes each line, and one short task per
//! agent request. When the agent's output ends, every waiting request fails at once with the
//! reason (exit code or signal), so nothing waits for an answer that cannot come.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bridge_core::sync::lock;

use serde_json::{Value, json};
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader,
};
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::task::TaskTracker;

use crate::acp::error::{AcpError, INTERNAL_ERROR, RpcError};
use crate::acp::wire::{Incoming, RequestId};

/// A boxed, sendable future (agent request handlers, [`crate::acp::AskHook`]).
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Lines waiting to be written: a burst of notifications plus answers; the writer drains
/// faster than any caller produces, so 64 only bounds memory if the agent stops reading.
const OUTGOING_CAPACITY: usize = 64;
/// Longest line accepted from the agent. `session/load` replays whole tool outputs (file
/// contents, diffs) in single updates; 64 MiB is far above that and still bounds memory.
const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;
/// How much of an unreadable line goes into the log.
const LOG_SNIPPET_CHARS: usize = 300;
/// After the agent's output ends, how long to wait for its exit status to explain why.
const EXIT_STATUS_WAIT: Duration = Duration::from_secs(1);

/// What the connection does with messages the agent starts.
pub(crate) trait Inbound: Send + Sync + 'static {
    /// A notification (no answer expected).
    fn notification(&self, method: String, params: Value);
    /// A request; the connection sends whatever the future resolves to.
    fn request(&self, method: String, params: Value) -> BoxFuture<Result<Value, RpcError>>;
}

enum Outgoing {
    Line(String),
    Close,
}

type Waiter = oneshot::Sender<Result<Value, RpcError>>;

struct Inner {
    outgoing: mpsc::Sender<Outgoing>,
    /// Requests waiting for an answer; `None` once the connection is closed, so no request can
    /// be registered after the reader has failed the waiting ones.
    pending: Mutex<Option<HashMap<i64, Waiter>>>,
    next_id: AtomicI64,
    /// Why the connection closed, once it has.
    closed: watch::Receiver<Option<String>>,
    /// The reader, the writer and the answers to the agent's requests: every task this
    /// connection spawned, awaited by [`Connection::finished`].
    tasks: TaskTracker,
}

/// A live JSON-RPC connection to one agent process.
#[derive(Clone)]
pub(crate) struct Connection {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("closed", &*self.inner.closed.borrow())
            .finish_non_exhaustive()
    }
}

/// The start of `text`, secrets redacted, for a log line: what the agent writes can hold
/// tokens and file contents.
pub(crate) fn snippet(text: &str) -> String {
    let text = bridge_core::redact::Redactor::shared().redact(text);
    if text.chars().count() <= LOG_SNIPPET_CHARS {
        return text.into_owned();
    }
    let cut: String = text.chars().take(LOG_SNIPPET_CHARS).collect();
    format!("{cut}…")
}

/// Removes a waiting request when its caller stops waiting (timeout or a dropped future).
struct PendingGuard<'a> {
    inner: &'a Inner,
    id: i64,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        if let Some(map) = lock(&self.inner.pending).as_mut() {
            map.remove(&self.id);
        }
    }
}

impl Connection {
    /// Starts the reader and writer tasks. `exit` reports why the agent's process ended, to
    /// explain a closed connection; `answer_timeout` bounds how long any agent request may take
    /// to be answered before it gets an error instead.
    pub(crate) fn start<R, W>(
        reader: R,
        writer: W,
        inbound: Arc<dyn Inbound>,
        exit: Option<watch::Receiver<Option<String>>>,
        answer_timeout: Duration,
    ) -> Self
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (outgoing, outgoing_rx) = mpsc::channel(OUTGOING_CAPACITY);
        let (closed_tx, closed) = watch::channel(None);
        let tasks = TaskTracker::new();
        let inner = Arc::new(Inner {
            outgoing,
            pending: Mutex::new(Some(HashMap::new())),
            next_id: AtomicI64::new(1),
            closed,
            tasks: tasks.clone(),
        });
        tasks.spawn(write_loop(writer, outgoing_rx));
        tasks.spawn(read_loop(
            reader,
            Arc::clone(&inner),
            inbound,
            closed_tx,
            exit,
            answer_timeout,
        ));
        Self { inner }
    }

    /// Why the connection closed, or `None` while it is open.
    pub(crate) fn closed_reason(&self) -> Option<String> {
        self.inner.closed.borrow().clone()
    }

    /// Waits at most `grace` for every task of this connection to end (call it once the
    /// agent's input is closed and its process stopped: the reader then sees the end of its
    /// output, and answers in flight are bounded by their own timeout); returns whether all did.
    pub(crate) async fn finished(&self, grace: Duration) -> bool {
        self.inner.tasks.close();
        tokio::time::timeout(grace, self.inner.tasks.wait())
            .await
            .is_ok()
    }

    /// Resolves when the connection closes, with the reason.
    pub(crate) async fn closed(&self) -> String {
        let mut closed = self.inner.closed.clone();
        match closed.wait_for(Option::is_some).await {
            Ok(reason) => reason.clone().unwrap_or_default(),
            Err(_) => "the connection ended".to_owned(),
        }
    }

    /// Sends a request and waits at most `timeout` for its answer.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, AcpError> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = lock(&self.inner.pending);
            let Some(map) = pending.as_mut() else {
                drop(pending);
                return Err(exited(method, &self.closed_reason().unwrap_or_default()));
            };
            map.insert(id, tx);
        }
        let _guard = PendingGuard {
            inner: &self.inner,
            id,
        };
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        tracing::trace!(target: "acp::wire", %method, id, "→ request");
        self.send_line(method, line.to_string()).await?;
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(Ok(result))) => Ok(result),
            Ok(Ok(Err(error))) => Err(AcpError::from_rpc(method, error)),
            Ok(Err(_)) => {
                let reason = self.closed().await;
                Err(exited(method, &reason))
            }
            Err(_) => {
                tracing::warn!(%method, id, ?timeout, "the agent did not answer in time");
                Err(AcpError::Timeout {
                    method: method.to_owned(),
                    timeout,
                })
            }
        }
    }

    /// Sends a notification.
    pub(crate) async fn notify(&self, method: &str, params: Value) -> Result<(), AcpError> {
        tracing::trace!(target: "acp::wire", %method, "→ notification");
        let line = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.send_line(method, line.to_string()).await
    }

    /// Sends a raw line as is (for tests of the agent's handling of garbage).
    #[cfg(test)]
    pub(crate) async fn send_raw(&self, line: &str) -> Result<(), AcpError> {
        self.send_line("raw", line.to_owned()).await
    }

    /// Closes the agent's stdin once everything queued before has been written; the CLI exits
    /// on its own when it sees EOF.
    pub(crate) async fn close_input(&self) {
        let _ = self.inner.outgoing.send(Outgoing::Close).await;
    }

    async fn send_line(&self, method: &str, line: String) -> Result<(), AcpError> {
        if self
            .inner
            .outgoing
            .send(Outgoing::Line(line))
            .await
            .is_err()
        {
            let reason = self
                .closed_reason()
                .unwrap_or_else(|| "its input is closed".to_owned());
            return Err(exited(method, &reason));
        }
        Ok(())
    }
}

fn exited(method: &str, detail: &str) -> AcpError {
    AcpError::AgentExited {
        method: method.to_owned(),
        detail: detail.to_owned(),
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(mut writer: W, mut rx: mpsc::Receiver<Outgoing>) {
    while let Some(message) = rx.recv().await {
        match message {
            Outgoing::Line(mut line) => {
                line.push('\n');
                let written = async {
                    writer.write_all(line.as_bytes()).await?;
                    writer.flush().await
                }
                .await;
                if let Err(err) = written {
                    tracing::debug!(%err, "cannot write to the agent; its input is closed");
                    break;
                }
            }
            Outgoing::Close => break,
        }
    }
    // Dropping the writer closes the agent's stdin.
    let _ = writer.shutdown().await;
}

async fn read_loop<R: AsyncRead + Unpin>(
    reader: R,
    inner: Arc<Inner>,
    inbound: Arc<dyn Inbound>,
    closed_tx: watch::Sender<Option<String>>,
    exit: Option<watch::Receiver<Option<String>>>,
    answer_timeout: Duration,
) {
    let mut reader = BufReader::new(reader);
    let mut buf = Vec::new();
    let end = loop {
        buf.clear();
        let limit = u64::try_from(MAX_LINE_BYTES)
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        match (&mut reader).take(limit).read_until(b'\n', &mut buf).await {
            Ok(0) => break None,
            Ok(_) => {}
            Err(err) => break Some(format!("reading its output failed: {err}")),
        }
        if buf.len() > MAX_LINE_BYTES && buf.last() != Some(&b'\n') {
            tracing::error!(
                max_bytes = MAX_LINE_BYTES,
                "the agent wrote an over-long line; it was skipped"
            );
            if let Err(err) = skip_rest_of_line(&mut reader).await {
                break Some(format!("reading its output failed: {err}"));
            }
            continue;
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let value: Value = match serde_json::from_str(line) {
            Ok(value) => value,
            Err(err) => {
                tracing::warn!(%err, line = %snippet(line), "the agent wrote a line that is not JSON; skipped");
                continue;
            }
        };
        match Incoming::classify(value) {
            Incoming::Response { id, result } => {
                let waiter = match &id {
                    RequestId::Number(n) => {
                        lock(&inner.pending).as_mut().and_then(|map| map.remove(n))
                    }
                    RequestId::Text(_) => None,
                };
                if let Some(waiter) = waiter {
                    tracing::trace!(target: "acp::wire", ?id, ok = result.is_ok(), "← response");
                    let _ = waiter.send(result);
                } else {
                    tracing::debug!(?id, "an answer nobody waits for (timed out earlier?)");
                }
            }
            Incoming::Notification { method, params } => {
                tracing::trace!(target: "acp::wire", %method, "← notification");
                inbound.notification(method, params);
            }
            Incoming::Request { id, method, params } => {
                tracing::trace!(target: "acp::wire", %method, ?id, "← request");
                let handler = inbound.request(method.clone(), params);
                inner.tasks.spawn(answer(
                    id,
                    method,
                    handler,
                    inner.outgoing.clone(),
                    answer_timeout,
                ));
            }
            Incoming::Invalid { reason, raw } => {
                tracing::warn!(reason, message = %snippet(&raw.to_string()), "the agent sent an invalid JSON-RPC message; skipped");
            }
        }
    };
    let reason = match end {
        Some(reason) => reason,
        None => describe_exit(exit).await,
    };
    tracing::debug!(%reason, "the agent connection closed");
    // Fail every waiting request by dropping its sender: waiters then read the reason below.
    let _ = closed_tx.send(Some(reason));
    lock(&inner.pending).take();
}

/// Discards input up to and including the next newline.
async fn skip_rest_of_line<R: AsyncBufRead + Unpin>(reader: &mut R) -> std::io::Result<()> {
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(());
        }
        if let Some(newline) = available.iter().position(|&b| b == b'\n') {
            reader.consume(newline + 1);
            return Ok(());
        }
        let all = available.len();
        reader.consume(all);
    }
}

async fn describe_exit(exit: Option<watch::Receiver<Option<String>>>) -> String {
    let fallback = "the agent closed its output".to_owned();
    let Some(mut exit) = exit else {
        return fallback;
    };
    match tokio::time::timeout(EXIT_STATUS_WAIT, exit.wait_for(Option::is_some)).await {
        Ok(Ok(status)) => status.clone().unwrap_or(fallback),
        _ => fallback,
    }
}

/// Runs one agent request's handler and always sends an answer: the result, an error when the
/// handler fails, or an error when it takes longer than `limit`.
async fn answer(
    id: RequestId,
    method: String,
    handler: BoxFuture<Result<Value, RpcError>>,
    outgoing: mpsc::Sender<Outgoing>,
    limit: Duration,
) {
    let mut task = tokio::spawn(handler);
    let result = tokio::select! {
        joined = &mut task => joined.unwrap_or_else(|err| {
            tracing::error!(%method, %err, "the handler of an agent request failed");
            Err(RpcError::new(INTERNAL_ERROR, format!("the client failed while handling {method}")))
        }),
        () = tokio::time::sleep(limit) => {
            task.abort();
            tracing::warn!(%method, ?limit, "an agent request was not handled in time");
            Err(RpcError::new(INTERNAL_ERROR, format!("the client could not answer {method} in time")))
        }
    };
    let message = match result {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
    };
    let _ = outgoing.send(Outgoing::Line(message.to_string())).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use tokio::io::{AsyncBufReadExt, BufReader, DuplexStream, Lines, duplex};

    /// Answers `echo` with its params, `slow` never, anything else with -32601; records
    /// notifications.
    #[derive(Default)]
    struct Recorder {
        notifications: Mutex<Vec<(String, Value)>>,
    }

    impl Inbound for Recorder {
        fn notification(&self, method: String, params: Value) {
            self.notifications
                .lock()
                .expect("lock")
                .push((method, params));
        }

        fn request(&self, method: String, params: Value) -> BoxFuture<Result<Value, RpcError>> {
            Box::pin(async move {
                match method.as_str() {
                    "echo" => Ok(params),
                    "slow" => {
                        tokio::time::sleep(Duration::from_hours(1)).await;
                        Ok(Value::Null)
                    }
                    "boom" => panic!("handler bug"),
                    _ => Err(RpcError::new(-32601, format!("no method {method}"))),
                }
            })
        }
    }

    /// A connection whose "agent" is the test: it reads what we send and writes what it likes.
    struct Harness {
        connection: Connection,
        recorder: Arc<Recorder>,
        agent_in: Lines<BufReader<DuplexStream>>,
        agent_out: DuplexStream,
    }

    fn harness(answer_timeout: Duration) -> Harness {
        let (client_out, agent_in) = duplex(1 << 16);
        let (agent_out, client_in) = duplex(1 << 16);
        let recorder = Arc::new(Recorder::default());
        let connection = Connection::start(
            client_in,
            client_out,
            Arc::clone(&recorder) as Arc<dyn Inbound>,
            None,
            answer_timeout,
        );
        Harness {
            connection,
            recorder,
            agent_in: BufReader::new(agent_in).lines(),
            agent_out,
        }
    }

    impl Harness {
        async fn agent_reads(&mut self) -> anyhow::Result<Value> {
            let line = tokio::time::timeout(Duration::from_secs(5), self.agent_in.next_line())
                .await??
                .ok_or_else(|| anyhow::anyhow!("client closed its output"))?;
            Ok(serde_json::from_str(&line)?)
        }

        async fn agent_writes(&mut self, line: &str) -> anyhow::Result<()> {
            self.agent_out.write_all(line.as_bytes()).await?;
            self.agent_out.write_all(b"\n").await?;
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_request_gets_its_answer_even_after_garbage_and_notifications() -> anyhow::Result<()>
    {
        let mut h = harness(Duration::from_secs(5));
        let connection = h.connection.clone();
        let call = tokio::spawn(async move {
            connection
                .request("session/list", json!({}), Duration::from_secs(5))
                .await
        });
        let sent = h.agent_reads().await?;
        assert_eq!(sent["method"], json!("session/list"));
        assert_eq!(sent["jsonrpc"], json!("2.0"));
        h.agent_writes("{this is not json").await?;
        h.agent_writes(r#"{"jsonrpc":"2.0","method":"session/update","params":{"x":1}}"#)
            .await?;
        h.agent_writes(
            &json!({"jsonrpc": "2.0", "id": sent["id"], "result": {"sessions": []}}).to_string(),
        )
        .await?;
        assert_eq!(call.await??, json!({"sessions": []}));
        assert_eq!(
            h.recorder.notifications.lock().expect("lock").clone(),
            vec![("session/update".to_owned(), json!({"x": 1}))]
        );
        Ok(())
    }

    #[tokio::test]
    async fn an_unanswered_request_times_out_with_the_method_named() -> anyhow::Result<()> {
        let mut h = harness(Duration::from_secs(5));
        let err = h
            .connection
            .request("session/new", json!({}), Duration::from_millis(50))
            .await
            .expect_err("no answer is coming");
        assert!(
            matches!(&err, AcpError::Timeout { method, .. } if method == "session/new"),
            "{err}"
        );
        // A late answer is ignored, and the connection keeps working.
        let late = h.agent_reads().await?;
        h.agent_writes(&json!({"jsonrpc": "2.0", "id": late["id"], "result": {}}).to_string())
            .await?;
        let connection = h.connection.clone();
        let next = tokio::spawn(async move {
            connection
                .request("session/list", json!({}), Duration::from_secs(5))
                .await
        });
        let sent = h.agent_reads().await?;
        h.agent_writes(&json!({"jsonrpc": "2.0", "id": sent["id"], "result": 7}).to_string())
            .await?;
        assert_eq!(next.await??, json!(7));
        Ok(())
    }

    #[tokio::test]
    async fn waiting_requests_fail_at_once_when_the_agent_goes_away() -> anyhow::Result<()> {
        let mut h = harness(Duration::from_secs(5));
        let connection = h.connection.clone();
        let call = tokio::spawn(async move {
            connection
                .request("session/prompt", json!({}), Duration::from_hours(1))
                .await
        });
        h.agent_reads().await?;
        drop(h.agent_out);
        let err = tokio::time::timeout(Duration::from_secs(5), call)
            .await??
            .expect_err("gone");
        assert!(err.is_agent_exit(), "{err}");
        assert!(err.to_string().contains("session/prompt"), "{err}");
        let again = h
            .connection
            .request("session/list", json!({}), Duration::from_secs(5))
            .await
            .expect_err("closed");
        assert!(again.is_agent_exit(), "{again}");
        Ok(())
    }

    #[tokio::test]
    async fn every_agent_request_is_answered_even_when_the_handler_fails_or_hangs()
    -> anyhow::Result<()> {
        let mut h = harness(Duration::from_millis(100));
        h.agent_writes(r#"{"jsonrpc":"2.0","id":0,"method":"echo","params":{"a":1}}"#)
            .await?;
        h.agent_writes(r#"{"jsonrpc":"2.0","id":"s","method":"fs/read_text_file","params":{}}"#)
            .await?;
        h.agent_writes(r#"{"jsonrpc":"2.0","id":2,"method":"boom"}"#)
            .await?;
        h.agent_writes(r#"{"jsonrpc":"2.0","id":3,"method":"slow"}"#)
            .await?;
        let mut answers = HashMap::new();
        for _ in 0..4 {
            let answer = h.agent_reads().await?;
            answers.insert(answer["id"].to_string(), answer);
        }
        assert_eq!(answers["0"]["result"], json!({"a": 1}));
        assert_eq!(answers["\"s\""]["error"]["code"], json!(-32601));
        assert_eq!(answers["2"]["error"]["code"], json!(INTERNAL_ERROR));
        assert_eq!(answers["3"]["error"]["code"], json!(INTERNAL_ERROR));
        Ok(())
    }

    #[tokio::test]
    async fn closing_input_lets_the_agent_see_eof() -> anyhow::Result<()> {
        let mut h = harness(Duration::from_secs(5));
        h.connection
            .notify("session/cancel", json!({"sessionId": "s"}))
            .await?;
        h.connection.close_input().await;
        assert_eq!(h.agent_reads().await?["method"], json!("session/cancel"));
        let eof = tokio::time::timeout(Duration::from_secs(5), h.agent_in.next_line()).await??;
        assert!(eof.is_none());
        let _ = h.connection.send_raw("ignored").await;
        Ok(())
    }
}
