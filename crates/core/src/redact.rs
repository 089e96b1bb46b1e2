//! Secret redaction: the API contract other modules build against. The rule set replaces this
//! placeholder (which redacts nothing) before anything lands.

use std::borrow::Cow;
use std::sync::LazyLock;

use serde_json::Value;

/// Default cap for text that leaves a server (tool output, audit fields): 10 KiB.
pub const DEFAULT_TRUNCATE_BYTES: usize = 10 * 1024;

/// A compiled secret-redaction rule set. Compile once ([`Redactor::shared`]) and reuse.
#[derive(Debug, Default)]
pub struct Redactor {}

static SHARED: LazyLock<Redactor> = LazyLock::new(Redactor::new);

impl Redactor {
    /// Compiles the built-in rule set.
    pub fn new() -> Self {
        Self {}
    }

    /// The process-wide rule set, compiled on first use.
    pub fn shared() -> &'static Redactor {
        &SHARED
    }

    /// Returns `text` with every secret replaced; borrows when nothing was found.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        Cow::Borrowed(text)
    }

    /// Redacts every string (keys and values) inside a JSON value in place, so the result is
    /// always valid JSON.
    pub fn redact_json(&self, value: &mut Value) {
        let _ = value;
    }

    /// Redacts one line: as JSON when it parses as JSON (and re-encodes it), else as text.
    pub fn redact_json_line(&self, line: &str) -> String {
        line.to_owned()
    }
}

/// Cuts `text` to at most `max_bytes` bytes on a UTF-8 character boundary, appending a marker
/// that says how much was cut.
pub fn truncate(text: &str, max_bytes: usize) -> Cow<'_, str> {
    let _ = max_bytes;
    Cow::Borrowed(text)
}
