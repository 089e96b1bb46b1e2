//! Secrets recognised by the structure around them rather than by a token format: PEM and
//! OpenSSH private-key blocks (multi-line, or one line with `\n` escapes as in a GCP service
//! account file), `Authorization: Bearer|Basic|token …` values, credentials in URLs
//! (`scheme://user:pass@host`) and `curl -u user:pass`.

use std::ops::Range;

use crate::redact::entropy::{Classes, is_placeholder, is_random_token, shannon_entropy};

/// Literals that start a private-key block.
pub(crate) const PEM_LITERALS: &[&str] = &["-----begin", "putty-user-key-file-"];
/// Literals that introduce an authorization value.
pub(crate) const AUTH_LITERALS: &[&str] = &["authorization", "bearer", "basic", "ssws", "x-auth-"];
/// Literal that introduces a URL's authority.
pub(crate) const URL_LITERALS: &[&str] = &["://"];
/// Literals of command-line user:password options.
pub(crate) const USER_OPTION_LITERALS: &[&str] = &["-u ", "--user ", "--user=", "-u'", "-u\""];

/// How far we look for the end of a private-key block: far beyond a 16 kbit RSA key.
const MAX_PEM_BYTES: usize = 64 * 1024;

/// A private-key block starting at `hit`: the whole block from `-----BEGIN` to the end of its
/// `-----END … -----` line, or to the end of the base64 body when the END line is missing
/// (a truncated paste).
pub(crate) fn private_key_block(text: &str, hit: usize) -> Option<Range<usize>> {
    let b = text.as_bytes();
    if b[hit..].starts_with(b"PuTTY") || b[hit..].starts_with(b"putty") {
        return putty_block(text, hit);
    }
    let header_end = hit + find_bytes(&b[hit..(hit + 120).min(b.len())], b"-----", 10)?;
    let label = &text[hit + 10..header_end];
    if !label.to_ascii_uppercase().contains("PRIVATE KEY") {
        return None;
    }
    let body_start = header_end + 5;
    let window_end = floor_boundary(text, (body_start + MAX_PEM_BYTES).min(b.len()));
    if let Some(pos) = text[body_start..window_end].find("-----END") {
        let end_marker = body_start + pos;
        let close = find_bytes(&b[end_marker..(end_marker + 120).min(b.len())], b"-----", 8)
            .map_or(end_marker + 8, |p| end_marker + p + 5);
        return Some(hit..close);
    }
    // No END line: redact the base64 body (with real or `\n`-escaped line breaks).
    let mut i = body_start;
    while i < window_end {
        let c = b[i];
        if c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'+' | b'/' | b'=' | b'\r' | b'\n' | b' ' | b'\t' | b':' | b',' | b'-'
            )
        {
            i += 1;
        } else if c == b'\\' && matches!(b.get(i + 1), Some(b'n' | b'r')) {
            i += 2;
        } else {
            break;
        }
    }
    Some(hit..i)
}

/// PuTTY `.ppk` files: everything from the header through the `Private-MAC:` line.
fn putty_block(text: &str, hit: usize) -> Option<Range<usize>> {
    let window_end = floor_boundary(text, (hit + MAX_PEM_BYTES).min(text.len()));
    let rest = &text[hit..window_end];
    let private = rest.find("Private-Lines:")?;
    let mac = rest[private..]
        .find("Private-MAC:")
        .map_or(rest.len(), |p| {
            let line_start = private + p;
            rest[line_start..]
                .find('\n')
                .map_or(rest.len(), |e| line_start + e)
        });
    Some(hit + private..hit + mac)
}

fn find_bytes(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if from > hay.len() {
        return None;
    }
    hay[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

fn floor_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn is_token_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            b'-' | b'_' | b'.' | b'~' | b'+' | b'/' | b'=' | b':' | b'%'
        )
}

/// The credential of an HTTP authorization value near `hit` (`Authorization: Bearer x`,
/// `"authorization": "Basic x"`, a bare `Bearer x`, `SSWS x`, `X-Auth-Token: x`).
pub(crate) fn authorization_value(text: &str, hit: usize) -> Option<Range<usize>> {
    let b = text.as_bytes();
    if hit > 0 && b[hit - 1].is_ascii_alphabetic() {
        return None;
    }
    let word_end = hit
        + b[hit..]
            .iter()
            .take(40)
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'-')
            .count();
    let word = text[hit..word_end].to_ascii_lowercase();
    let mut i = word_end;
    let header =
        word == "authorization" || word == "proxy-authorization" || word.starts_with("x-auth-");
    if header {
        // `Authorization: …`, `"Authorization": "…"`, `authorization=…`, `-H 'Authorization: …'`.
        while i < b.len() && matches!(b[i], b'"' | b'\'' | b'\\') {
            i += 1;
        }
        i = skip_spaces(b, i);
        if !matches!(b.get(i), Some(b':' | b'=' | b',')) {
            return None;
        }
        i = skip_spaces(b, i + 1);
        while i < b.len() && matches!(b[i], b'"' | b'\'' | b'\\') {
            i += 1;
        }
        // Optional scheme word.
        let scheme_end = i + b[i..]
            .iter()
            .take(20)
            .take_while(|c| c.is_ascii_alphabetic() || **c == b'-')
            .count();
        if scheme_end < b.len() && b[scheme_end] == b' ' && scheme_end > i {
            let scheme = text[i..scheme_end].to_ascii_lowercase();
            let basic = scheme == "basic";
            let value = token_at(b, skip_spaces(b, scheme_end))?;
            return credential_ok(&text[value.clone()], basic, true).then_some(value);
        }
        let value = token_at(b, i)?;
        return credential_ok(&text[value.clone()], false, true).then_some(value);
    }
    if !matches!(word.as_str(), "bearer" | "basic" | "ssws") {
        return None;
    }
    if b.get(word_end) != Some(&b' ') {
        return None;
    }
    let value = token_at(b, skip_spaces(b, word_end))?;
    credential_ok(&text[value.clone()], word == "basic", false).then_some(value)
}

fn skip_spaces(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t') {
        i += 1;
    }
    i
}

fn token_at(b: &[u8], at: usize) -> Option<Range<usize>> {
    let len = b[at..]
        .iter()
        .take(8192)
        .take_while(|&&c| is_token_byte(c))
        .count();
    let mut end = at + len;
    while end > at && matches!(b[end - 1], b'.' | b',' | b':') {
        end -= 1;
    }
    (end > at).then_some(at..end)
}

/// Whether an authorization credential is real. In a header any non-placeholder value of
/// token length counts; a bare `Bearer`/`Basic` in prose needs a random-looking value.
fn credential_ok(v: &str, basic: bool, in_header: bool) -> bool {
    if v.len() < 8 || is_placeholder(v) {
        return false;
    }
    if basic
        && let Some(decoded) = decode_base64(v)
        && let Some((user, pass)) = String::from_utf8_lossy(&decoded).split_once(':')
    {
        return url_password_ok(user, pass);
    }
    let c = Classes::of(v);
    if c.digit == 0 && c.upper == 0 {
        return false;
    }
    if in_header {
        return shannon_entropy(v) >= 2.8;
    }
    is_random_token(v, 12, 3.2) && c.kinds() >= 2
}

/// Decodes standard or URL-safe base64 (padding optional); `None` on any other byte.
pub(crate) fn decode_base64(v: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(v.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0u32;
    for c in v.bytes() {
        let d = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(d);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(((acc >> bits) & 0xff) as u8);
        }
    }
    Some(out)
}

/// The credentials in a URL whose `://` is at `hit`: the whole `user:password` (or a lone
/// token-like user name, as in `https://<token>@github.com`).
pub(crate) fn url_credentials(text: &str, hit: usize) -> Option<Range<usize>> {
    let b = text.as_bytes();
    // Scheme: letters, digits, `+ . -` right before `://`.
    let scheme_len = b[..hit]
        .iter()
        .rev()
        .take(32)
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'.' | b'-'))
        .count();
    if scheme_len == 0 {
        return None;
    }
    let auth_start = hit + 3;
    let limit = (auth_start + 512).min(b.len());
    // The userinfo ends at the last `@` before the path; unencoded `?`, `#` or `@` inside a
    // password are tolerated because pasted URLs often carry them.
    let mut at = None;
    let mut i = auth_start;
    while i < limit {
        match b[i] {
            b'@' => at = Some(i),
            b'/' | b'?' | b'#' if at.is_some() => break,
            b'/' if at.is_none() && !text[auth_start..i].contains(':') => return None,
            b'"' | b'\'' | b'`' | b'<' | b'>' | b'\\' | b'(' | b')' | b'[' | b']' | b'{' | b'}' => {
                break;
            }
            c if c.is_ascii_whitespace() => break,
            _ => {}
        }
        i += 1;
    }
    let at = at?;
    let userinfo = &text[auth_start..at];
    if userinfo.is_empty() {
        return None;
    }
    if let Some(colon) = userinfo.find(':') {
        let (user, pass) = (&userinfo[..colon], &userinfo[colon + 1..]);
        if user.contains(['/', '?', '#']) || pass.contains('/') {
            return None;
        }
        return url_password_ok(user, pass).then_some(auth_start..at);
    }
    let token_like = !userinfo.contains(['/', '?', '#'])
        && is_random_token(userinfo, 16, 3.5)
        && Classes::of(userinfo).digit > 0;
    token_like.then_some(auth_start..at)
}

/// Fragments that mark a URL password as a documentation stand-in (`rootpassword`,
/// `mysecret`, `demo123`).
const URL_PASSWORD_HINTS: &[&str] = &[
    "pass", "secret", "pwd", "example", "demo", "sample", "changeme",
];

/// Words used as stand-in passwords in documentation URLs.
const URL_PASSWORD_WORDS: &[&str] = &[
    "pass", "password", "passwd", "pwd", "secret", "pw", "p", "x", "token",
];

/// Whether a URL's password is a real one. Local-development defaults (`postgres:postgres`,
/// `guest:guest`, `root:root`, a short lowercase word) are documentation, not secrets.
pub(crate) fn url_password_ok(user: &str, pass: &str) -> bool {
    let lower = pass.to_ascii_lowercase();
    if pass.is_empty()
        || pass == user
        || URL_PASSWORD_WORDS.contains(&lower.as_str())
        || is_placeholder(pass)
        || (pass.len() <= 8 && pass.bytes().all(|c| c.is_ascii_lowercase()))
        || URL_PASSWORD_HINTS.iter().any(|h| lower.contains(h))
    {
        return false;
    }
    // Percent-encoded template markers (`%7Bpassword%7D`) and port-like `host:80@`.
    !(lower.starts_with("%7b")
        || lower.starts_with("%3c")
        || pass.bytes().all(|c| c.is_ascii_digit()))
}

/// `curl -u user:pass`, `--user user:pass`: the whole `user:pass`.
pub(crate) fn user_option_value(text: &str, hit: usize) -> Option<Range<usize>> {
    let b = text.as_bytes();
    if hit > 0 && !matches!(b[hit - 1], b' ' | b'\t') {
        return None;
    }
    let mut i = hit + b[hit..].iter().take_while(|c| **c == b'-').count();
    // Skip the option name (`u` or `user`) and its separator.
    i += b[i..]
        .iter()
        .take_while(|c| c.is_ascii_alphabetic())
        .count();
    if matches!(b.get(i), Some(b' ' | b'=')) {
        i += 1;
    }
    let quote = match b.get(i) {
        Some(&q @ (b'"' | b'\'')) => {
            i += 1;
            Some(q)
        }
        _ => None,
    };
    let start = i;
    let len = b[i..]
        .iter()
        .take(512)
        .take_while(|&&c| match quote {
            Some(q) => c != q && c != b'\n',
            None => !c.is_ascii_whitespace() && !matches!(c, b'"' | b'\''),
        })
        .count();
    let end = floor_boundary(text, start + len);
    let len = end - start;
    let value = &text[start..end];
    let colon = value.find(':')?;
    let pass = &value[colon + 1..];
    if pass.len() < 4
        || pass == &value[..colon]
        || is_placeholder(pass)
        || pass.bytes().all(|c| c.is_ascii_digit())
        || pass.starts_with('$')
    {
        return None;
    }
    Some(start..start + len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, lit: &str) -> usize {
        text.to_ascii_lowercase().find(lit).unwrap()
    }

    #[test]
    fn pem_block_spans_begin_to_end_line() {
        let text = "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAbCd==\n-----END RSA PRIVATE KEY-----\nnext";
        let r = private_key_block(text, at(text, "-----begin")).unwrap();
        assert_eq!(
            &text[r],
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAbCd==\n-----END RSA PRIVATE KEY-----"
        );
    }

    #[test]
    fn pem_block_with_escaped_newlines_and_no_end() {
        let text = r#"{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\nkqhkiG9w0"}"#;
        let r = private_key_block(text, at(text, "-----begin")).unwrap();
        assert_eq!(
            &text[r],
            r"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\nkqhkiG9w0"
        );
    }

    #[test]
    fn certificates_and_public_keys_are_not_private_keys() {
        for text in [
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
            "-----BEGIN PUBLIC KEY-----\nMIIB",
        ] {
            assert_eq!(private_key_block(text, 0), None);
        }
    }

    #[test]
    fn authorization_values() {
        let cases = [
            (
                "Authorization: Bearer Zq8xL2mN4pQ7rS1t",
                Some("Zq8xL2mN4pQ7rS1t"),
            ),
            (
                "-H 'Authorization: token 9f8e7d6c5b4a39281706'",
                Some("9f8e7d6c5b4a39281706"),
            ),
            (
                "\"authorization\": \"Basic ZGVwbG95OlpxOHhMMm1ONHA=\"",
                Some("ZGVwbG95OlpxOHhMMm1ONHA="),
            ),
            ("Authorization: Bearer ${TOKEN}", None),
            ("Authorization: Bearer <token>", None),
            ("the bearer token goes in a header", None),
            ("basic usage is simple", None),
        ];
        for (text, want) in cases {
            let lit = if text.to_ascii_lowercase().contains("authorization") {
                "authorization"
            } else if text.contains("bearer") {
                "bearer"
            } else {
                "basic"
            };
            let got = authorization_value(text, at(text, lit)).map(|r| &text[r]);
            assert_eq!(got, want, "{text}");
        }
    }

    #[test]
    fn url_credentials_keep_placeholders() {
        let cases = [
            (
                "postgres://app:Zr8pL2qX9w@db.internal:5432/app",
                Some("app:Zr8pL2qX9w"),
            ),
            ("redis://:Kq7mP3xL9z@cache:6379", Some(":Kq7mP3xL9z")),
            ("postgres://user:password@localhost/db", None),
            ("https://user:${PASS}@host/", None),
            ("ssh://git@github.com/org/repo.git", None),
            ("https://github.com/org/repo", None),
        ];
        for (text, want) in cases {
            let got = url_credentials(text, text.find("://").unwrap()).map(|r| &text[r]);
            assert_eq!(got, want, "{text}");
        }
    }

    #[test]
    fn curl_user_option() {
        let text = "curl -u admin:Wq8zL3kP9m https://x";
        assert_eq!(
            user_option_value(text, at(text, "-u ")).map(|r| &text[r]),
            Some("admin:Wq8zL3kP9m")
        );
        let text = "docker run -u 1000:1000 img";
        assert_eq!(user_option_value(text, at(text, "-u ")), None);
        let text = "git push -u origin main";
        assert_eq!(user_option_value(text, at(text, "-u ")), None);
    }

    #[test]
    fn base64_decoding() {
        assert_eq!(decode_base64("dXNlcjpwYXNz").unwrap(), b"user:pass");
        assert_eq!(decode_base64("dXNlcjpwYXNzMQ==").unwrap(), b"user:pass1");
        assert!(decode_base64("not base64!").is_none());
    }
}
