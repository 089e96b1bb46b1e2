//! `copilot-bridge redact` as users run it: the corpus in `tests/fixtures/redaction/` through the
//! real binary, as plain text and as JSON lines. Secrets must be gone, look-alikes unchanged,
//! and every JSON line must stay valid JSON.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use bridge_test_support::binary_path;
use serde_json::{Value, json};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/redaction")
}

fn run_redact(args: &[&str], input: &str) -> anyhow::Result<String> {
    let home = tempfile::TempDir::new()?;
    let mut child = Command::new(binary_path("copilot-bridge"))
        .arg("redact")
        .args(args)
        .env("HOME", home.path())
        .current_dir(home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| anyhow::anyhow!("no stdin"))?;
    let input = input.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output()?;
    writer
        .join()
        .map_err(|_| anyhow::anyhow!("writer panicked"))??;
    assert!(output.status.success());
    Ok(String::from_utf8(output.stdout)?)
}

/// Single-line positives (multi-line PEM blocks are covered by the core corpus test).
fn positives() -> anyhow::Result<Vec<(String, String)>> {
    let text = std::fs::read_to_string(fixtures().join("positives.jsonl"))?;
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let entry: Value = serde_json::from_str(line)?;
        let (Some(line), Some(secret)) = (entry["line"].as_str(), entry["secret"].as_str()) else {
            continue;
        };
        if !line.contains('\n') {
            out.push((line.to_owned(), secret.to_owned()));
        }
    }
    Ok(out)
}

fn leaked(output: &str, secret: &str) -> bool {
    // More than 4 consecutive characters of the secret's tail surviving counts as a leak; the
    // vendor prefix may stay.
    let chars: Vec<char> = secret.chars().collect();
    chars
        .windows(5)
        .skip(4)
        .any(|w| output.contains(&w.iter().collect::<String>()))
}

#[test]
fn plain_lines_lose_their_secrets_and_keep_everything_else() -> anyhow::Result<()> {
    let positives = positives()?;
    assert!(
        positives.len() >= 200,
        "corpus too small: {}",
        positives.len()
    );
    let input = positives
        .iter()
        .map(|(line, _)| line.as_str())
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    let output = run_redact(&[], &input)?;
    let lines: Vec<&str> = output.lines().collect();
    assert_eq!(lines.len(), positives.len(), "line for line");
    let leaks: Vec<_> = positives
        .iter()
        .zip(&lines)
        .filter(|((_, secret), out)| leaked(out, secret))
        .map(|((line, _), out)| format!("{line}\n  -> {out}"))
        .collect();
    #[expect(clippy::cast_precision_loss, reason = "counts of a few hundred")]
    let recall = 1.0 - leaks.len() as f64 / positives.len() as f64;
    assert!(
        recall >= 0.97,
        "recall {recall:.3}; leaks:\n{}",
        leaks.join("\n")
    );

    let lookalikes = std::fs::read_to_string(fixtures().join("lookalikes.txt"))?;
    let output = run_redact(&[], &lookalikes)?;
    let changed = lookalikes
        .lines()
        .zip(output.lines())
        .filter(|(a, b)| a != b)
        .count();
    let total = lookalikes.lines().count();
    assert!(
        changed * 100 <= total,
        "{changed} of {total} look-alikes changed"
    );
    Ok(())
}

#[test]
fn json_lines_stay_valid_json_without_their_secrets() -> anyhow::Result<()> {
    let positives = positives()?;
    let mut input = String::new();
    for (line, _) in &positives {
        let message = json!({
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"update": {"sessionUpdate": "agent_message_chunk",
                                  "content": {"type": "text", "text": line}}}
        });
        input.push_str(&message.to_string());
        input.push('\n');
    }
    input.push_str("not json at all, passed through as text\n");
    let output = run_redact(&["--json"], &input)?;
    let lines: Vec<&str> = output.lines().collect();
    assert_eq!(lines.len(), positives.len() + 1);
    let mut leaks = 0;
    for ((_, secret), out) in positives.iter().zip(&lines) {
        let value: Value = serde_json::from_str(out)?;
        assert_eq!(
            value["method"],
            json!("session/update"),
            "structure kept: {out}"
        );
        if leaked(out, secret) {
            leaks += 1;
        }
    }
    assert!(
        leaks * 100 <= positives.len() * 3,
        "{leaks} leaks in JSON mode"
    );
    Ok(())
}

#[test]
fn a_private_key_block_is_redacted_whole_across_lines() -> anyhow::Result<()> {
    let body = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n\
                VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n";
    let input = format!(
        "before\n-----BEGIN RSA PRIVATE KEY-----\n{body}-----END RSA PRIVATE KEY-----\nafter\n"
    );
    let output = run_redact(&[], &input)?;
    assert_eq!(
        output.lines().count(),
        input.lines().count(),
        "line for line"
    );
    assert!(
        output.starts_with("before\n") && output.ends_with("after\n"),
        "{output}"
    );
    assert!(
        !output.contains("MIIEow") && !output.contains("VTLw7"),
        "{output}"
    );
    Ok(())
}
