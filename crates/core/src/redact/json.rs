//! JSON-aware redaction: secrets are looked for in decoded string values (so `\/` or `\u0067`
//! escapes cannot hide them) and written back as freshly encoded JSON strings, so the output
//! is always valid JSON. A string under a secret-naming key is judged as that key's value.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde::de::IgnoredAny;
use serde_json::{Map, Value};

use crate::redact::keyword::{self, Binding};
use crate::redact::{REDACTED, Redactor};

/// Redacted form of one decoded JSON string, given the key it sits under (if any); `None`
/// when it stays as it is.
fn redact_string(r: &Redactor, s: &str, key: Option<&str>) -> Option<String> {
    if let Cow::Owned(out) = r.redact(s) {
        return Some(out);
    }
    let kind = keyword::classify_name(key?, None)?;
    keyword::value_is_secret(s, kind, Binding::Strong, true).then(|| REDACTED.to_owned())
}

/// Redacts every string inside `value` in place.
pub(crate) fn redact_value(r: &Redactor, value: &mut Value) {
    match value {
        Value::String(s) => {
            if let Some(out) = redact_string(r, s, None) {
                *s = out;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| redact_value(r, v)),
        Value::Object(map) => redact_object(r, map),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

fn redact_object(r: &Redactor, map: &mut Map<String, Value>) {
    // Kubernetes-style `{"name": "DB_PASSWORD", "value": "…"}` pairs name their secret
    // in a sibling field.
    let named_secret = ["name", "key"]
        .iter()
        .filter_map(|k| map.get(*k).and_then(Value::as_str))
        .find_map(|n| keyword::classify_name(n, None));
    if map.keys().any(|k| matches!(r.redact(k), Cow::Owned(_))) {
        let old = std::mem::take(map);
        for (k, v) in old {
            map.insert(r.redact(&k).into_owned(), v);
        }
    }
    for (k, v) in map.iter_mut() {
        match v {
            Value::String(s) => {
                let mut out = redact_string(r, s, Some(k));
                if out.is_none()
                    && k == "value"
                    && let Some(kind) = named_secret
                {
                    out = keyword::value_is_secret(s, kind, Binding::Strong, true)
                        .then(|| REDACTED.to_owned());
                }
                if let Some(out) = out {
                    *s = out;
                }
            }
            other => redact_value(r, other),
        }
    }
}

/// Redacts one line: JSON in, valid JSON out with its layout kept; other text as text.
pub(crate) fn redact_line(redactor: &Redactor, line: &str) -> String {
    // Without escapes the raw text holds every string verbatim, so no prefilter literal
    // means no secret, whether or not the line is JSON: skip the parse.
    if !line.contains('\\') && !redactor.may_contain_secret(line) {
        return line.to_owned();
    }
    if serde_json::from_str::<IgnoredAny>(line).is_err() {
        return redactor.redact(line).into_owned();
    }
    let b = line.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut last_key: Option<String> = None;
    let mut prev = 0u8;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c != b'"' {
            if !c.is_ascii_whitespace() {
                prev = c;
            }
            i += 1;
            continue;
        }
        let end = string_end(b, i);
        let raw = &line[i..=end];
        let decoded: Cow<'_, str> = if raw.contains('\\') {
            match serde_json::from_str::<String>(raw) {
                Ok(s) => Cow::Owned(s),
                Err(_) => Cow::Borrowed(&line[i + 1..end]),
            }
        } else {
            Cow::Borrowed(&line[i + 1..end])
        };
        let is_key = next_significant(b, end + 1) == Some(b':');
        let context = if !is_key && prev == b':' {
            last_key.as_deref()
        } else {
            None
        };
        if let Some(new) = redact_string(redactor, &decoded, context) {
            out.push_str(&line[copied..i]);
            push_json_string(&mut out, &new);
            copied = end + 1;
        }
        if is_key {
            last_key = Some(decoded.into_owned());
        }
        prev = b'"';
        i = end + 1;
    }
    if copied == 0 {
        return line.to_owned();
    }
    out.push_str(&line[copied..]);
    out
}

/// Index of the quote closing the JSON string that opens at `open`.
fn string_end(b: &[u8], open: usize) -> usize {
    let mut j = open + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'"' => return j,
            _ => j += 1,
        }
    }
    b.len() - 1
}

fn next_significant(b: &[u8], from: usize) -> Option<u8> {
    b[from.min(b.len())..]
        .iter()
        .copied()
        .find(|c| !c.is_ascii_whitespace())
}

/// Appends `s` as a JSON string literal.
fn push_json_string(out: &mut String, s: &str) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}
