//! Delegated calls paused on a question, for MCP 2026-07-28 clients (multi round-trip
//! requests). A server cannot send `elicitation/create` there, so the tool call itself answers
//! `input_required` with the question and a `requestState`, while the Copilot turn waits in the
//! background; the client's retry (same tool, same arguments, `inputResponses`, the echoed
//! `requestState`) delivers the answer and resumes waiting on the same turn, which ends in the
//! next question or the final result.
//!
//! `requestState` is a sealed, single-use handle: an HMAC-SHA256 tag under a key made fresh in
//! every process (rmcp's `RequestStateCodec`), bound to the tool and a digest of its arguments,
//! with an expiry; it names an entry of this table, which a retry takes out. A tampered,
//! replayed, expired or mismatched state is refused, and nothing is run for it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bridge_core::sync::lock;
use bridge_mcp::sealed;
use rmcp::model::{InputRequiredResult, RequestStateCodec, SealOptions};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::acp::Asked;

use crate::approval::client::Question;

/// Why a retry's `requestState` was refused.
pub(crate) use bridge_mcp::sealed::AnswerError as ResumeError;

/// A call running in the background: its result, its questions, and how to stop it.
#[derive(Debug)]
pub(crate) struct RunningCall<T> {
    finished: oneshot::Receiver<T>,
    questions: mpsc::UnboundedReceiver<Question>,
    cancel: CancellationToken,
    task: JoinHandle<()>,
}

impl<T: Send + 'static> RunningCall<T> {
    /// Runs `work` in the background; it asks through the sender it is given.
    pub(crate) fn spawn<F, Fut>(work: F) -> Self
    where
        F: FnOnce(mpsc::UnboundedSender<Question>, CancellationToken) -> Fut,
        Fut: Future<Output = T> + Send + 'static,
    {
        let (questions_tx, questions) = mpsc::unbounded_channel();
        let (done, finished) = oneshot::channel();
        let cancel = CancellationToken::new();
        let future = work(questions_tx, cancel.clone());
        let task = tokio::spawn(async move {
            let _ = done.send(future.await);
        });
        Self {
            finished,
            questions,
            cancel,
            task,
        }
    }

    /// Stops the call (its turn is cancelled) and waits a bounded time for it.
    async fn stop(self) {
        self.cancel.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.task).await;
    }
}

/// What waiting on a call came to.
#[derive(Debug)]
pub(crate) enum Round<T> {
    /// The call finished.
    Done(T),
    /// The call asks: answer the client with this.
    Ask(InputRequiredResult),
    /// The caller went away; the call was stopped.
    Gone,
}

#[derive(Debug)]
struct Paused<T> {
    call: RunningCall<T>,
    answer: oneshot::Sender<Asked>,
    expires: Instant,
}

/// The paused calls of one tool family, with the process's sealing key.
pub(crate) struct PausedCalls<T> {
    codec: RequestStateCodec,
    ttl: Duration,
    calls: Mutex<HashMap<String, Paused<T>>>,
}

impl<T> std::fmt::Debug for PausedCalls<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PausedCalls")
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl<T: Send + 'static> PausedCalls<T> {
    /// A table whose states expire after `ttl` (the time a person has to answer).
    pub(crate) fn new(ttl: Duration) -> Self {
        Self {
            codec: sealed::fresh_codec(),
            ttl,
            calls: Mutex::new(HashMap::new()),
        }
    }

    /// Waits for `call` to finish or ask; a question pauses it here under a new state.
    pub(crate) async fn drive(
        &self,
        mut call: RunningCall<T>,
        tool: &str,
        arguments: &Value,
        caller: &CancellationToken,
    ) -> Round<T> {
        self.purge().await;
        tokio::select! {
            result = &mut call.finished => match result {
                Ok(result) => Round::Done(result),
                Err(_) => Round::Gone,
            },
            question = call.questions.recv() => match question {
                Some(question) => self.pause(call, question, tool, arguments),
                // Every asker is gone: only the result can come now.
                None => match call.finished.await {
                    Ok(result) => Round::Done(result),
                    Err(_) => Round::Gone,
                },
            },
            () = caller.cancelled() => {
                call.stop().await;
                Round::Gone
            }
        }
    }

    fn pause(
        &self,
        call: RunningCall<T>,
        question: Question,
        tool: &str,
        arguments: &Value,
    ) -> Round<T> {
        let nonce = sealed::random_hex(16);
        let bound = sealed::binding(tool, arguments);
        let state = self.codec.seal_with(
            nonce.as_bytes(),
            &SealOptions::new().associated_data(&bound).ttl(self.ttl),
        );
        let requests = match sealed::question(&question.message) {
            Ok(requests) => requests,
            Err(err) => {
                let _ = question.answer.send(Asked::no(err));
                // The call goes on without its answer; wait for whatever comes next.
                return Round::Ask(InputRequiredResult::from_request_state(state));
            }
        };
        lock(&self.calls).insert(
            nonce,
            Paused {
                call,
                answer: question.answer,
                expires: Instant::now() + self.ttl,
            },
        );
        Round::Ask(InputRequiredResult::new(Some(requests), Some(state)))
    }

    /// Takes the call a retry's `state` names, after checking the state, and hands it the
    /// answer in `responses`.
    pub(crate) fn resume(
        &self,
        tool: &str,
        arguments: &Value,
        state: &str,
        responses: Option<&BTreeMap<String, Value>>,
    ) -> Result<RunningCall<T>, ResumeError> {
        let (nonce, answer) = sealed::open(&self.codec, tool, arguments, state, responses)?;
        let paused = lock(&self.calls).remove(&nonce).ok_or(ResumeError::Spent)?;
        let _ = paused.answer.send(answer);
        Ok(paused.call)
    }

    /// Stops paused calls whose question expired.
    async fn purge(&self) {
        let now = Instant::now();
        let expired: Vec<Paused<T>> = {
            let mut calls = lock(&self.calls);
            let keys: Vec<String> = calls
                .iter()
                .filter(|(_, p)| p.expires <= now)
                .map(|(k, _)| k.clone())
                .collect();
            keys.iter().filter_map(|k| calls.remove(k)).collect()
        };
        for paused in expired {
            paused.call.stop().await;
        }
    }

    /// Stops every paused call (shutdown): their questions are withdrawn.
    pub(crate) async fn shutdown(&self) {
        let all: Vec<Paused<T>> = lock(&self.calls).drain().map(|(_, p)| p).collect();
        for paused in all {
            paused.call.stop().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use bridge_mcp::confirm::APPROVE;
    use serde_json::json;

    use super::*;

    fn asking_call(table_answer: &'static str) -> RunningCall<String> {
        RunningCall::spawn(move |questions, _cancel| async move {
            let (answer, answered) = oneshot::channel();
            let _ = questions.send(Question {
                message: format!("may I? ({table_answer})"),
                answer,
            });
            match answered.await {
                Ok(asked) if asked.allowed => "ran".to_owned(),
                Ok(asked) => format!("refused: {}", asked.detail),
                Err(_) => "withdrawn".to_owned(),
            }
        })
    }

    fn yes() -> BTreeMap<String, Value> {
        BTreeMap::from([(
            APPROVE.to_owned(),
            json!({"action": "accept", "content": {"approve": true}}),
        )])
    }

    #[tokio::test]
    async fn a_question_pauses_and_the_retry_resumes_the_same_call() -> anyhow::Result<()> {
        let table = PausedCalls::new(Duration::from_mins(1));
        let args = json!({"prompt": "x"});
        let never = CancellationToken::new();
        let Round::Ask(asked) = table.drive(asking_call("a"), "tool", &args, &never).await else {
            anyhow::bail!("no question");
        };
        let state = asked.request_state.clone().unwrap_or_default();
        let wire = serde_json::to_value(&asked)?;
        assert_eq!(wire["resultType"], "input_required", "{wire}");
        assert_eq!(
            wire["inputRequests"][APPROVE]["params"]["requestedSchema"]["properties"]["approve"]["type"],
            "boolean",
            "{wire}"
        );
        let call = table.resume("tool", &args, &state, Some(&yes()))?;
        let Round::Done(result) = table.drive(call, "tool", &args, &never).await else {
            anyhow::bail!("not done");
        };
        assert_eq!(result, "ran");
        // Single use: the same state again is refused.
        assert!(matches!(
            table.resume("tool", &args, &state, Some(&yes())),
            Err(ResumeError::Spent)
        ));
        Ok(())
    }

    #[tokio::test]
    async fn tampered_mismatched_and_expired_states_are_refused() -> anyhow::Result<()> {
        let table = PausedCalls::new(Duration::from_mins(1));
        let args = json!({"prompt": "x"});
        let never = CancellationToken::new();
        let Round::Ask(asked) = table.drive(asking_call("b"), "tool", &args, &never).await else {
            anyhow::bail!("no question");
        };
        let state = asked.request_state.unwrap_or_default();
        let mut tampered = state.clone();
        let last = tampered.pop().unwrap_or('A');
        tampered.push(if last == 'A' { 'B' } else { 'A' });
        for (tool, arguments, state) in [
            ("tool", json!({"prompt": "x"}), tampered.as_str()),
            ("other", json!({"prompt": "x"}), state.as_str()),
            ("tool", json!({"prompt": "y"}), state.as_str()),
            ("tool", json!({"prompt": "x"}), "not-a-state"),
        ] {
            assert!(
                matches!(
                    table.resume(tool, &arguments, state, Some(&yes())),
                    Err(ResumeError::Invalid(_))
                ),
                "{tool} {arguments}"
            );
        }
        assert!(matches!(
            table.resume("tool", &args, &state, None),
            Err(ResumeError::NoAnswer)
        ));

        let short = PausedCalls::new(Duration::from_millis(1));
        let Round::Ask(asked) = short.drive(asking_call("c"), "tool", &args, &never).await else {
            anyhow::bail!("no question");
        };
        tokio::time::sleep(Duration::from_millis(1100)).await;
        let state = asked.request_state.unwrap_or_default();
        assert!(matches!(
            short.resume("tool", &args, &state, Some(&yes())),
            Err(ResumeError::Invalid(_))
        ));
        Ok(())
    }

    #[tokio::test]
    async fn a_declined_question_refuses_and_the_call_goes_on() -> anyhow::Result<()> {
        let table = PausedCalls::new(Duration::from_mins(1));
        let args = json!({});
        let never = CancellationToken::new();
        let Round::Ask(asked) = table.drive(asking_call("d"), "tool", &args, &never).await else {
            anyhow::bail!("no question");
        };
        let declined = BTreeMap::from([(APPROVE.to_owned(), json!({"action": "decline"}))]);
        let call = table.resume(
            "tool",
            &args,
            &asked.request_state.unwrap_or_default(),
            Some(&declined),
        )?;
        let Round::Done(result) = table.drive(call, "tool", &args, &never).await else {
            anyhow::bail!("not done");
        };
        assert!(result.contains("declined"), "{result}");
        Ok(())
    }
}
