//! Error classification and retries, as the original design's error hook did it: a rate limit is
//! retried with backoff, a transient network failure at most twice, a missing file is skipped,
//! and anything else aborts. All retries together stay within `COPILOT_MAX_RETRIES`.

use std::future::Future;
use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;
use tokio_util::sync::CancellationToken;

/// Transient failures (timeouts, resets) are retried at most this often, whatever the retry
/// budget: the original design's limit, since a network that failed three times in a row is
/// unlikely to recover within a backoff.
pub const TRANSIENT_MAX_RETRIES: u32 = 2;

/// What to do about an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// The service throttled us: retry after a backoff (at least `retry_after` when it said).
    RateLimited {
        /// How long the service asked us to wait, when the error said so.
        retry_after: Option<Duration>,
    },
    /// A timeout or dropped connection: retry, at most [`TRANSIENT_MAX_RETRIES`] times.
    Transient,
    /// A file or resource does not exist: skip this step, retrying cannot help.
    NotFound,
    /// Anything else: abort.
    Fatal,
}

/// Errors that know their own class; implement it for typed errors instead of matching messages.
pub trait Classify {
    /// The class of this error.
    fn classify(&self) -> ErrorClass;
}

impl Classify for std::io::Error {
    fn classify(&self) -> ErrorClass {
        use std::io::ErrorKind;
        match self.kind() {
            ErrorKind::NotFound => ErrorClass::NotFound,
            ErrorKind::TimedOut
            | ErrorKind::ConnectionReset
            | ErrorKind::ConnectionAborted
            | ErrorKind::BrokenPipe
            | ErrorKind::Interrupted => ErrorClass::Transient,
            _ => classify(&self.to_string()),
        }
    }
}

/// Status codes and phrases that mean "slow down". Codes match as whole numbers only, so
/// `14290 bytes` is not a rate limit.
static RATE_LIMITED: LazyLock<Regex> =
    LazyLock::new(|| compile(r"(?i)\b429\b|rate[ _-]?limit|too many requests|throttl"));

/// How long a rate-limited service asked us to wait: `retry-after: 30`, `retry after 2.5s`,
/// `try again in 20 seconds`, `retry in 500ms`.
static RETRY_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r"(?i)(?:retry[ _-]?after|try again in|retry in)\s*[:=]?\s*(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?)?\b",
    )
});

/// Missing files: POSIX `ENOENT` and the phrases tools print for it.
static NOT_FOUND: LazyLock<Regex> =
    LazyLock::new(|| compile(r"(?i)\benoent\b|no such file|not found"));

/// Timeouts, dropped connections and gateway errors that usually pass on their own.
static TRANSIENT: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r"(?i)\b(?:etimedout|econnreset|econnaborted|epipe|eai_again|esockettimedout)\b|timed out|\btimeout\b|connection reset|socket hang up|broken pipe|\b50[234]\b|bad gateway|service unavailable|gateway timeout|temporarily unavailable",
    )
});

#[expect(
    clippy::expect_used,
    reason = "the patterns are constants, compiled by the tests of this module"
)]
fn compile(pattern: &str) -> Regex {
    Regex::new(pattern).expect("built-in retry pattern compiles")
}

/// Classifies an error by its message, as the original did: rate limit first (its message often
/// also mentions a timeout), then missing files, then transient failures; anything else is fatal.
pub fn classify(message: &str) -> ErrorClass {
    if RATE_LIMITED.is_match(message) {
        ErrorClass::RateLimited {
            retry_after: retry_after(message),
        }
    } else if NOT_FOUND.is_match(message) {
        ErrorClass::NotFound
    } else if TRANSIENT.is_match(message) {
        ErrorClass::Transient
    } else {
        ErrorClass::Fatal
    }
}

/// The wait a message asks for; a bare number means seconds, as in the HTTP `Retry-After` header.
fn retry_after(message: &str) -> Option<Duration> {
    let captures = RETRY_AFTER.captures(message)?;
    let amount: f64 = captures.get(1)?.as_str().parse().ok()?;
    let seconds = match captures
        .get(2)
        .map(|unit| unit.as_str().to_ascii_lowercase())
    {
        Some(unit) if unit.starts_with("ms") || unit.starts_with("milli") => amount / 1000.0,
        _ => amount,
    };
    Duration::try_from_secs_f64(seconds).ok()
}

/// How often and how long to wait between attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt, for all classes together (`COPILOT_MAX_RETRIES`).
    pub max_retries: u32,
    /// Backoff before the first retry; it doubles for each further retry.
    pub base_delay: Duration,
    /// Cap on any single wait, including a service's `retry_after`.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// Three retries (the original's `COPILOT_MAX_RETRIES` default), starting at 1 s and never
    /// waiting more than 30 s at once, which keeps a whole retry cycle under a typical 2-minute
    /// task timeout.
    fn default() -> Self {
        Self {
            max_retries: 3,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0-based): exponential backoff with "equal jitter"
    /// (a random point in the upper half of the backoff, so concurrent clients spread out but
    /// never retry immediately), at least `retry_after`, and never more than `max_delay`.
    pub fn delay(
        &self,
        retry: u32,
        retry_after: Option<Duration>,
        rng: &mut fastrand::Rng,
    ) -> Duration {
        let backoff = self
            .base_delay
            .saturating_mul(2_u32.saturating_pow(retry))
            .min(self.max_delay);
        let half = backoff / 2;
        let jitter = half.mul_f64(rng.f64());
        let wait = (backoff.saturating_sub(half) + jitter).max(retry_after.unwrap_or_default());
        wait.min(self.max_delay)
    }
}

/// Why [`retry`] gave up; the last error of the operation is the source.
#[derive(Debug, thiserror::Error)]
pub enum RetryError<E> {
    /// The resource does not exist: skip this step (not an error of the whole task).
    #[error("skipped: the resource does not exist (attempt {attempts})")]
    Skipped {
        /// Attempts made.
        attempts: u32,
        /// The error that said so.
        #[source]
        source: E,
    },
    /// The error is not one that retrying can fix.
    #[error("aborted after attempt {attempts}: the error is not retryable")]
    Aborted {
        /// Attempts made.
        attempts: u32,
        /// The error.
        #[source]
        source: E,
    },
    /// Every allowed retry failed too.
    #[error(
        "gave up after {attempts} attempts; raise COPILOT_MAX_RETRIES if the service needs longer"
    )]
    Exhausted {
        /// Attempts made.
        attempts: u32,
        /// The last error.
        #[source]
        source: E,
    },
    /// The operation was cancelled before it succeeded.
    #[error("cancelled after {attempts} attempts")]
    Cancelled {
        /// Attempts made before the cancellation.
        attempts: u32,
        /// The last error, if an attempt had failed.
        last: Option<E>,
    },
}

impl<E> RetryError<E> {
    /// The last error of the operation, if one happened.
    pub fn into_inner(self) -> Option<E> {
        match self {
            Self::Skipped { source, .. }
            | Self::Aborted { source, .. }
            | Self::Exhausted { source, .. } => Some(source),
            Self::Cancelled { last, .. } => last,
        }
    }

    /// How many times the operation ran.
    pub fn attempts(&self) -> u32 {
        match self {
            Self::Skipped { attempts, .. }
            | Self::Aborted { attempts, .. }
            | Self::Exhausted { attempts, .. }
            | Self::Cancelled { attempts, .. } => *attempts,
        }
    }
}

/// Runs `op` until it succeeds, retrying rate limits and transient failures as `policy` allows.
///
/// Not-found errors return [`RetryError::Skipped`] and fatal ones [`RetryError::Aborted`] at
/// once. A cancelled `cancel` stops the loop before the next attempt and cuts any wait short;
/// an attempt already running is the operation's own business (give it a child token).
pub async fn retry<T, E, F, Fut>(
    policy: &RetryPolicy,
    cancel: &CancellationToken,
    mut op: F,
) -> Result<T, RetryError<E>>
where
    E: Classify + std::fmt::Display,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut rng = fastrand::Rng::new();
    let mut attempts = 0_u32;
    let mut transient_retries = 0_u32;
    let mut last = None;
    loop {
        if cancel.is_cancelled() {
            return Err(RetryError::Cancelled { attempts, last });
        }
        attempts += 1;
        let error = match op().await {
            Ok(value) => return Ok(value),
            Err(error) => error,
        };
        let retries_so_far = attempts - 1;
        let class = error.classify();
        let retry_after = match class {
            ErrorClass::NotFound => {
                return Err(RetryError::Skipped {
                    attempts,
                    source: error,
                });
            }
            ErrorClass::Fatal => {
                return Err(RetryError::Aborted {
                    attempts,
                    source: error,
                });
            }
            ErrorClass::Transient if transient_retries >= TRANSIENT_MAX_RETRIES => {
                return Err(RetryError::Exhausted {
                    attempts,
                    source: error,
                });
            }
            ErrorClass::Transient => {
                transient_retries += 1;
                None
            }
            ErrorClass::RateLimited { retry_after } => retry_after,
        };
        if retries_so_far >= policy.max_retries {
            return Err(RetryError::Exhausted {
                attempts,
                source: error,
            });
        }
        let wait = policy.delay(retries_so_far, retry_after, &mut rng);
        tracing::warn!(
            attempt = attempts,
            ?class,
            wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
            %error,
            "retrying after error"
        );
        last = Some(error);
        tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(RetryError::Cancelled { attempts, last }),
            () = tokio::time::sleep(wait) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use pretty_assertions::assert_eq;
    use tokio::time::Instant;

    use super::*;

    #[test]
    fn messages_are_classified_like_the_original() {
        let limited = |secs: Option<u64>| ErrorClass::RateLimited {
            retry_after: secs.map(Duration::from_secs),
        };
        let cases = [
            ("HTTP 429 Too Many Requests", limited(None)),
            ("rate limit exceeded, retry after 30", limited(Some(30))),
            (
                "Rate-limited: please try again in 20 seconds",
                limited(Some(20)),
            ),
            ("throttled by upstream", limited(None)),
            ("you hit the ratelimit; Retry-After: 7", limited(Some(7))),
            ("request failed: ETIMEDOUT", ErrorClass::Transient),
            ("read ECONNRESET", ErrorClass::Transient),
            ("operation timed out after 60s", ErrorClass::Transient),
            ("socket hang up", ErrorClass::Transient),
            ("upstream returned 502 Bad Gateway", ErrorClass::Transient),
            ("503 Service Unavailable", ErrorClass::Transient),
            ("status 504", ErrorClass::Transient),
            (
                "ENOENT: no such file or directory, open 'a.txt'",
                ErrorClass::NotFound,
            ),
            ("file not found: src/main.rs", ErrorClass::NotFound),
            ("Authentication required", ErrorClass::Fatal),
            (
                "invalid request: body is 14290 bytes long",
                ErrorClass::Fatal,
            ),
            ("status 5030", ErrorClass::Fatal),
            ("", ErrorClass::Fatal),
        ];
        for (message, expected) in cases {
            assert_eq!(classify(message), expected, "{message}");
        }
    }

    #[test]
    fn retry_after_understands_units() {
        let after = |m: &str| match classify(m) {
            ErrorClass::RateLimited { retry_after } => retry_after,
            other => panic!("{m}: {other:?}"),
        };
        assert_eq!(
            after("429, retry in 500ms"),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            after("429 retry after 2.5s"),
            Some(Duration::from_millis(2500))
        );
        assert_eq!(
            after("429 retry-after: 3 seconds"),
            Some(Duration::from_secs(3))
        );
        assert_eq!(after("429"), None);
    }

    #[test]
    fn io_errors_are_classified_by_kind() {
        use std::io::{Error, ErrorKind};
        assert_eq!(
            Error::from(ErrorKind::NotFound).classify(),
            ErrorClass::NotFound
        );
        assert_eq!(
            Error::from(ErrorKind::TimedOut).classify(),
            ErrorClass::Transient
        );
        assert_eq!(
            Error::from(ErrorKind::ConnectionReset).classify(),
            ErrorClass::Transient
        );
        assert_eq!(
            Error::from(ErrorKind::PermissionDenied).classify(),
            ErrorClass::Fatal
        );
        assert_eq!(
            Error::other("HTTP 429 from api").classify(),
            ErrorClass::RateLimited { retry_after: None }
        );
    }

    #[test]
    fn default_retry_budget_agrees_with_config() {
        assert_eq!(
            RetryPolicy::default().max_retries,
            crate::config::DEFAULT_MAX_RETRIES
        );
    }

    #[test]
    fn delay_grows_exponentially_within_jitter_and_cap() {
        let policy = RetryPolicy {
            max_retries: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(1),
        };
        let mut rng = fastrand::Rng::with_seed(7);
        for (retry, full_ms) in [
            (0, 100),
            (1, 200),
            (2, 400),
            (3, 800),
            (4, 1000),
            (30, 1000),
        ] {
            for _ in 0..50 {
                let wait = policy.delay(retry, None, &mut rng);
                let full = Duration::from_millis(full_ms);
                assert!(wait >= full / 2 && wait <= full, "retry {retry}: {wait:?}");
            }
        }
    }

    #[test]
    fn delay_honours_retry_after_but_not_beyond_the_cap() {
        let policy = RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(10),
        };
        let mut rng = fastrand::Rng::with_seed(1);
        assert_eq!(
            policy.delay(0, Some(Duration::from_secs(5)), &mut rng),
            Duration::from_secs(5)
        );
        assert_eq!(
            policy.delay(0, Some(Duration::from_hours(1)), &mut rng),
            Duration::from_secs(10)
        );
    }

    /// A test error whose class is given directly.
    #[derive(Debug, PartialEq)]
    struct Failure(ErrorClass);

    impl std::fmt::Display for Failure {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{:?}", self.0)
        }
    }

    impl Classify for Failure {
        fn classify(&self) -> ErrorClass {
            self.0
        }
    }

    const POLICY: RetryPolicy = RetryPolicy {
        max_retries: 5,
        base_delay: Duration::from_secs(1),
        max_delay: Duration::from_mins(1),
    };

    /// Runs `retry` over an operation that fails with `errors` in order, then succeeds.
    async fn run(
        policy: &RetryPolicy,
        cancel: &CancellationToken,
        errors: Vec<ErrorClass>,
    ) -> (Result<u32, RetryError<Failure>>, u32) {
        let calls = AtomicU32::new(0);
        let result = retry(policy, cancel, || {
            let call = calls.fetch_add(1, Ordering::SeqCst);
            let outcome = match errors.get(call as usize) {
                Some(class) => Err(Failure(*class)),
                None => Ok(call),
            };
            async move { outcome }
        })
        .await;
        (result, calls.load(Ordering::SeqCst))
    }

    #[tokio::test(start_paused = true)]
    async fn rate_limits_are_retried_with_growing_backoff() {
        let start = Instant::now();
        let limited = ErrorClass::RateLimited { retry_after: None };
        let (result, calls) = run(&POLICY, &CancellationToken::new(), vec![limited; 3]).await;
        assert_eq!(result.ok(), Some(3));
        assert_eq!(calls, 4);
        // Waits of 1, 2 and 4 s, each with up to half taken off by jitter.
        let waited = start.elapsed();
        assert!(
            waited >= Duration::from_millis(3500) && waited <= Duration::from_secs(7),
            "{waited:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn rate_limit_waits_at_least_as_long_as_asked() {
        let start = Instant::now();
        let limited = ErrorClass::RateLimited {
            retry_after: Some(Duration::from_secs(20)),
        };
        let (result, _) = run(&POLICY, &CancellationToken::new(), vec![limited]).await;
        assert_eq!(result.ok(), Some(1));
        assert!(start.elapsed() >= Duration::from_secs(20));
    }

    #[tokio::test(start_paused = true)]
    async fn rate_limits_stop_at_max_retries() {
        let limited = ErrorClass::RateLimited { retry_after: None };
        let policy = RetryPolicy {
            max_retries: 2,
            ..POLICY
        };
        let (result, calls) = run(&policy, &CancellationToken::new(), vec![limited; 10]).await;
        assert_eq!(calls, 3);
        let err = result.unwrap_err();
        assert!(
            matches!(err, RetryError::Exhausted { attempts: 3, .. }),
            "{err:?}"
        );
        assert_eq!(err.into_inner(), Some(Failure(limited)));
    }

    #[tokio::test(start_paused = true)]
    async fn transient_errors_retry_at_most_twice_even_with_a_larger_budget() {
        let (result, calls) = run(
            &POLICY,
            &CancellationToken::new(),
            vec![ErrorClass::Transient; 10],
        )
        .await;
        assert_eq!(calls, 3);
        assert!(matches!(
            result,
            Err(RetryError::Exhausted { attempts: 3, .. })
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn two_transient_errors_then_success_succeeds() {
        let (result, calls) = run(
            &POLICY,
            &CancellationToken::new(),
            vec![ErrorClass::Transient; 2],
        )
        .await;
        assert_eq!((result.ok(), calls), (Some(2), 3));
    }

    #[tokio::test(start_paused = true)]
    async fn transient_retries_also_stay_within_max_retries() {
        let policy = RetryPolicy {
            max_retries: 1,
            ..POLICY
        };
        let (result, calls) = run(
            &policy,
            &CancellationToken::new(),
            vec![ErrorClass::Transient; 10],
        )
        .await;
        assert_eq!(calls, 2);
        assert!(matches!(result, Err(RetryError::Exhausted { .. })));
    }

    #[tokio::test(start_paused = true)]
    async fn not_found_is_skipped_without_retrying() {
        let start = Instant::now();
        let (result, calls) = run(
            &POLICY,
            &CancellationToken::new(),
            vec![ErrorClass::NotFound],
        )
        .await;
        assert_eq!(calls, 1);
        assert!(matches!(
            result,
            Err(RetryError::Skipped { attempts: 1, .. })
        ));
        assert_eq!(start.elapsed(), Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn fatal_errors_abort_at_once() {
        let (result, calls) =
            run(&POLICY, &CancellationToken::new(), vec![ErrorClass::Fatal]).await;
        assert_eq!(calls, 1);
        assert!(matches!(
            result,
            Err(RetryError::Aborted { attempts: 1, .. })
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn cancellation_cuts_a_backoff_short() {
        let cancel = CancellationToken::new();
        let limited = ErrorClass::RateLimited {
            retry_after: Some(Duration::from_secs(30)),
        };
        let canceller = {
            let cancel = cancel.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_secs(5)).await;
                cancel.cancel();
            })
        };
        let start = Instant::now();
        let (result, calls) = run(&POLICY, &cancel, vec![limited; 10]).await;
        canceller.await.ok();
        assert_eq!(calls, 1);
        assert_eq!(start.elapsed(), Duration::from_secs(5));
        let err = result.unwrap_err();
        assert!(
            matches!(
                &err,
                RetryError::Cancelled {
                    attempts: 1,
                    last: Some(Failure(_))
                }
            ),
            "{err:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn an_already_cancelled_token_runs_nothing() {
        let cancel = CancellationToken::new();
        cancel.cancel();
        let (result, calls) = run(&POLICY, &cancel, vec![]).await;
        assert_eq!(calls, 0);
        assert!(matches!(
            result,
            Err(RetryError::Cancelled {
                attempts: 0,
                last: None
            })
        ));
    }

    #[test]
    fn retry_errors_keep_the_cause_and_say_what_to_do() {
        let err = RetryError::Exhausted {
            attempts: 4,
            source: std::io::Error::other("HTTP 429"),
        };
        assert_eq!(
            err.to_string(),
            "gave up after 4 attempts; raise COPILOT_MAX_RETRIES if the service needs longer"
        );
        let source = std::error::Error::source(&err).map(ToString::to_string);
        assert_eq!(source.as_deref(), Some("HTTP 429"));
    }
}
