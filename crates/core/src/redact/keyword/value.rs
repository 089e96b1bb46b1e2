//! Whether a value bound to a secret name is itself a secret: placeholders, references,
//! file names, numbers, dates and code expressions are not, and the rest must pass the entropy
//! filters.

use super::name::{NameKind, split_words};
use crate::redact::entropy::{Classes, is_placeholder, looks_like_words, shannon_entropy};

/// Longest value we consider, in bytes.
pub(super) const MAX_VALUE_BYTES: usize = 4096;

/// How the value was bound to the name: strongly (`=`, `:`) or in passing (`is`, a space).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Binding {
    Strong,
    Weak,
}

/// File names and paths are references to secrets, not secrets.
const FILE_SUFFIXES: &[&str] = &[
    ".json",
    ".yaml",
    ".yml",
    ".toml",
    ".txt",
    ".pem",
    ".key",
    ".env",
    ".crt",
    ".p12",
    ".pfx",
    ".jks",
    ".gpg",
    ".asc",
    ".ini",
    ".cfg",
    ".conf",
    ".properties",
    ".xml",
    ".age",
];

/// Decides whether a value bound to a secret name is itself a secret.
pub(crate) fn value_is_secret(v: &str, kind: NameKind, binding: Binding, quoted: bool) -> bool {
    let v = v.trim();
    let min_len = match kind {
        NameKind::Password => 6,
        NameKind::Token => 8,
    };
    if v.len() < min_len || v.len() > MAX_VALUE_BYTES || is_placeholder(v) {
        return false;
    }
    let b = v.as_bytes();
    if quoted && b.iter().any(u8::is_ascii_whitespace) {
        return false;
    }
    if b.iter().all(u8::is_ascii_digit) || looks_like_number_or_date(v) {
        return false;
    }
    if matches!(b[0], b'/' | b'~') || v.starts_with("./") || v.contains("://") {
        return false;
    }
    // In code a bare `!x`, `&x` or `*x` is an expression; inside quotes it is just text.
    if !quoted && matches!(b[0], b'!' | b'&' | b'*') {
        return false;
    }
    if v.len() > 2 && b[1] == b':' && b[2] == b'\\' {
        return false;
    }
    let lower = v.to_ascii_lowercase();
    if FILE_SUFFIXES.iter().any(|s| lower.ends_with(s)) {
        return false;
    }
    if [
        "enc[", "vault:", "arn:", "sha256:", "sha1:", "sha512:", "md5:",
    ]
    .iter()
    .any(|p| lower.starts_with(p))
    {
        return false;
    }
    if (!quoted && looks_like_code(v)) || looks_like_words(v) {
        return false;
    }
    let classes = Classes::of(v);
    if classes.digit == 0 && classes.other == 0 {
        // Letters only: a word, a type name or a CamelCase identifier unless random, which
        // shows as case flipping every letter or two (`VogUpAHyxyPRWtgF`).
        let short_humps = split_words(v).iter().filter(|w| w.len() <= 2).count();
        return v.len() >= 12
            && shannon_entropy(v) >= 3.3
            && classes.lower > 0
            && classes.upper > 0
            && short_humps >= 2;
    }
    if classes.letters() == 0 && classes.digit > 0 && !quoted && binding == Binding::Weak {
        return false;
    }
    let entropy = shannon_entropy(v);
    match (kind, binding) {
        (NameKind::Password, Binding::Strong) => entropy >= 2.4,
        (NameKind::Token, Binding::Strong) => entropy >= 3.0,
        (NameKind::Password, Binding::Weak) => {
            entropy >= 2.5
                && classes.kinds() >= 2
                && (classes.digit > 0
                    || (classes.other > 0 && classes.upper > 0 && classes.lower > 0))
        }
        // In prose the value must not read as a word: digits, or symbols in mixed case.
        (NameKind::Token, Binding::Weak) => {
            entropy >= 3.0
                && classes.kinds() >= 2
                && (classes.digit > 0
                    || (classes.other > 0 && classes.upper > 0 && classes.lower > 0))
        }
    }
}

/// Versions, dates, times and sizes: `1.2.3`, `2024-01-31`, `12:30:00`, `3600s`.
fn looks_like_number_or_date(v: &str) -> bool {
    let b = v.as_bytes();
    b.iter().all(|c| {
        c.is_ascii_digit() || matches!(c, b'.' | b'-' | b':' | b'/' | b'+' | b'T' | b'Z' | b'_')
    }) || (b.len() < 12
        && b[..b.len() - 1].iter().all(u8::is_ascii_digit)
        && b[b.len() - 1].is_ascii_alphabetic())
}

/// Bare values that are expressions in code: calls, member paths, paths into modules.
pub(super) fn looks_like_code(v: &str) -> bool {
    if v.contains('(')
        || v.contains('[')
        || v.contains("::")
        || v.contains("->")
        || v.starts_with('$')
    {
        return true;
    }
    // `config.password`, `self.token`, `process.env.API_KEY`, `settings.SECRET_KEY`.
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() > 1
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
                && !p.as_bytes()[0].is_ascii_digit()
        })
        && parts
            .iter()
            .any(|p| p.bytes().all(|c| c.is_ascii_alphabetic() || c == b'_'))
}
