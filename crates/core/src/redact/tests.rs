//! Behaviour of the whole redactor on tricky inputs: overlapping rules, placeholders, JSON
//! escapes, keys versus values, multi-line private keys.

use std::borrow::Cow;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::checksum::{base62_checksum, crc32};
use super::{REDACTED, Redactor};

fn r() -> &'static Redactor {
    Redactor::shared()
}

/// A GitHub classic token with a valid checksum, built from a fixed body.
fn github_token(prefix: &str, body: &str) -> String {
    let sum = base62_checksum(crc32(body.as_bytes()));
    format!("{prefix}{body}{}", std::str::from_utf8(&sum).unwrap())
}

#[test]
fn clean_text_is_borrowed() {
    let text =
        "cargo build finished in 3.2s; 14 tokens used by the tokenizer, see password_hash docs";
    assert!(matches!(r().redact(text), Cow::Borrowed(_)));
}

#[test]
fn find_reports_rule_ids_and_byte_ranges() {
    let token = github_token("ghs_", "Kd8Lq2Zm5Xr9Vt3Nb7Hc1Yw6Fp4Js0");
    let text = format!("password: \"Qz7#Lm2!Vr9x\" and {token}");
    let findings = r().find(&text);
    let got: Vec<(&str, &str, usize)> = findings
        .iter()
        .map(|f| (f.rule, &text[f.range.clone()], f.kept))
        .collect();
    assert_eq!(
        got,
        [
            ("keyword-assignment", "Qz7#Lm2!Vr9x", 0),
            ("github-token", token.as_str(), 4)
        ]
    );
}

#[test]
fn github_token_keeps_its_vendor_prefix() {
    let token = github_token("ghp_", "Xq3Lm8Rz0vTb5NwYc2Hd7KpFg4Js9A");
    let out = r().redact(&format!("push with {token} now")).into_owned();
    assert_eq!(out, format!("push with ghp_{REDACTED} now"));
}

#[test]
fn overlapping_keyword_and_provider_rule_redact_once_and_keep_the_prefix() {
    let token = github_token("ghp_", "Wm4Kp9Zs2Lq7Xv3Nb8Rt5Hc1Yd6Fg0");
    let out = r().redact(&format!("GITHUB_TOKEN={token}")).into_owned();
    assert_eq!(out, format!("GITHUB_TOKEN=ghp_{REDACTED}"));
}

#[test]
fn adjacent_and_nested_secrets_merge_into_one_marker() {
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1MTIzIiwiZXhwIjo5OTk5fQ.Q2xMb3k4dXpWc0N4N1pXbHN6cQ";
    let out = r()
        .redact(&format!("Authorization: Bearer {jwt}"))
        .into_owned();
    assert_eq!(out, format!("Authorization: Bearer {REDACTED}"));
}

#[test]
fn two_secrets_on_one_line_are_both_redacted() {
    let text = "AWS_ACCESS_KEY_ID=AKIAZ7Q4M2X3R6T3W5YB AWS_SECRET_ACCESS_KEY=Jk8/2mQz+7XvL4pN9sR1tW6yB3cF5hD0gA8eK2iU";
    let out = r().redact(text);
    assert_eq!(
        out,
        format!("AWS_ACCESS_KEY_ID=AKIA{REDACTED} AWS_SECRET_ACCESS_KEY={REDACTED}")
    );
}

#[test]
fn placeholders_stay() {
    for text in [
        "GITHUB_TOKEN=${GITHUB_TOKEN}",
        "token: <your-token>",
        "api_key = \"xxxxxxxxxxxxxxxxxxxx\"",
        "password: changeme",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "Authorization: Bearer $TOKEN",
        "postgres://user:password@localhost:5432/app",
        "token: ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "Classic tokens look like ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.",
    ] {
        assert_eq!(r().redact(text), text);
    }
}

#[test]
fn multi_line_private_key_is_redacted_whole() {
    let text = "before\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAMwAAAAtzc2gtZWQyNTUxOQAAACDx8Q2r\n-----END OPENSSH PRIVATE KEY-----\nafter";
    assert_eq!(r().redact(text), format!("before\n{REDACTED}\nafter"));
}

#[test]
fn line_redactor_carries_a_private_key_across_lines() {
    let mut lines = r().lines();
    let input = [
        "key follows",
        "-----BEGIN RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEAx8Q2rZ9v",
        "Lq7Xv3Nb8Rt5Hc1Yd6Fg0Wm4",
        "-----END RSA PRIVATE KEY----- trailing",
        "done",
    ];
    let out: Vec<String> = input
        .iter()
        .map(|l| lines.redact_line(l).into_owned())
        .collect();
    assert_eq!(
        out,
        [
            "key follows",
            REDACTED,
            REDACTED,
            REDACTED,
            &format!("{REDACTED} trailing"),
            "done"
        ]
    );
}

#[test]
fn json_escapes_cannot_hide_a_secret() {
    let token = github_token("ghp_", "Pz5Kq8Lm2Xv7Nb3Rt9Hc4Yd1Fg6Ws0");
    // `\u0067` is `g`, and `\/` is `/`: the raw line never spells the token out.
    let escaped = format!("\\u0067{}", &token[1..]);
    let line = format!(
        r#"{{"jsonrpc":"2.0","params":{{"text":"use {escaped} at https:\/\/api.example.com"}}}}"#
    );
    assert!(!line.contains(&token));
    let out = r().redact_json_line(&line);
    let parsed: serde_json::Value = serde_json::from_str(&out).unwrap();
    let text = parsed["params"]["text"].as_str().unwrap();
    assert_eq!(
        text,
        format!("use ghp_{REDACTED} at https://api.example.com")
    );
}

#[test]
fn json_line_keeps_layout_and_key_order() {
    let line = r#"{"z": 1, "password": "Vq8#mZ2!kL9x", "a": [true, null, 1.50]}"#;
    let out = r().redact_json_line(line);
    assert_eq!(
        out,
        format!(r#"{{"z": 1, "password": "{REDACTED}", "a": [true, null, 1.50]}}"#)
    );
}

#[test]
fn secret_with_escaped_slash_in_raw_json() {
    let line = r#"{"aws_secret_access_key":"Jk8\/2mQz+7XvL4pN9sR1tW6yB3cF5hD0gA8eK2iU"}"#;
    let out = r().redact_json_line(line);
    assert_eq!(out, format!(r#"{{"aws_secret_access_key":"{REDACTED}"}}"#));
}

#[test]
fn keys_are_context_for_values_but_not_secrets_themselves() {
    let mut v = json!({
        "password": "Hn4$kR8@pQ2z",
        "password_hash": "$2b$12$abcdefghijklmnopqrstuu1234567890ABCDEFGHIJKLMNOPQRS",
        "token_count": "1532",
        "api_key": "<your-api-key>",
        "env": [{"name": "DB_PASSWORD", "value": "t7Kp2mW9xQ4z"}, {"name": "LOG_LEVEL", "value": "debug"}],
        "sessionId": "05e0dd1d-8146-4a2d-908e-1d20459f563a"
    });
    r().redact_json(&mut v);
    assert_eq!(
        v,
        json!({
            "password": REDACTED,
            "password_hash": "$2b$12$abcdefghijklmnopqrstuu1234567890ABCDEFGHIJKLMNOPQRS",
            "token_count": "1532",
            "api_key": "<your-api-key>",
            "env": [{"name": "DB_PASSWORD", "value": REDACTED}, {"name": "LOG_LEVEL", "value": "debug"}],
            "sessionId": "05e0dd1d-8146-4a2d-908e-1d20459f563a"
        })
    );
}

#[test]
fn a_secret_used_as_a_key_is_redacted() {
    let token = github_token("gho_", "Bq7Zr2Lx9Kp4Wm8Nt3Yc6Hd1Fv5Js0");
    let mut v = json!({ token: {"scopes": ["repo"]} });
    r().redact_json(&mut v);
    assert_eq!(
        v,
        json!({ format!("gho_{REDACTED}"): {"scopes": ["repo"]} })
    );
}

#[test]
fn json_line_that_is_not_json_is_redacted_as_text() {
    let out = r().redact_json_line("not json: password=Zq8#Lm3!xR7v");
    assert_eq!(out, format!("not json: password={REDACTED}"));
}

#[test]
fn utf8_around_secrets_is_preserved() {
    let text = "🔑 clé=日本 password=Ünïcödé9Pass! ✅";
    let out = r().redact(text);
    assert_eq!(out, format!("🔑 clé=日本 password={REDACTED} ✅"));
}

#[test]
fn every_builtin_rule_compiles_and_has_literals() {
    for rule in super::RULES {
        assert!(!rule.literals.is_empty(), "{}", rule.id);
        assert!(rule.keep <= 4, "{}", rule.id);
        assert!(regex::Regex::new(rule.pattern).is_ok(), "{}", rule.id);
    }
}

/// Deterministic xorshift generator, so the test needs no extra dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        usize::try_from(self.0 % 1_000_003).unwrap()
    }
}

#[test]
fn arbitrary_text_never_panics_and_json_stays_valid() {
    // Fragments that wake every detector, mixed with multi-byte characters and delimiters.
    let parts = [
        "password",
        "=",
        ": ",
        "\"",
        "'",
        "`",
        "\\",
        "token",
        "api_key",
        "ghp_",
        "AKIA",
        "sk-",
        "eyJ",
        ".",
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----END",
        "\n",
        "\\n",
        "://",
        "@",
        "u:",
        "Bearer ",
        "Basic ",
        "-u ",
        "sshpass -p ",
        "🦀",
        "秘密",
        "é",
        "\u{301}",
        "Q~",
        ":AA",
        "sig=",
        "Zq8xL2mN4pQ7rS1tWv3Y",
        "0123456789abcdef",
        "<",
        ">",
        "</",
        "|",
        " ",
        "\t",
        "{",
        "}",
        "[",
        "]",
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let r = r();
    for _ in 0..3000 {
        let n = 1 + rng.next() % 24;
        let text: String = (0..n).map(|_| parts[rng.next() % parts.len()]).collect();
        let out = r.redact(&text);
        assert!(!out.is_empty() || text.is_empty());
        let _ = r.find(&text);
        let mut lines = r.lines();
        for line in text.lines() {
            let _ = lines.redact_line(line);
        }
        let json = serde_json::json!({"text": text, "password": text}).to_string();
        let redacted = r.redact_json_line(&json);
        assert!(
            serde_json::from_str::<serde_json::Value>(&redacted).is_ok(),
            "{redacted}"
        );
        let _ = super::truncate(&text, rng.next() % 64);
    }
}
