//! Measures the redactor against the corpus in `tests/fixtures/redaction/`: recall on fake,
//! format-valid secrets and the share of look-alikes it changes, as plain lines and embedded in
//! JSON-RPC messages (through `redact_json` and `redact_json_line`). Set
//! `REDACTION_CORPUS_DIR` to run the same checks on another corpus in the same format.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, Result};
use bridge_core::redact::Redactor;
use serde::Deserialize;
use serde_json::{Value, json};

/// Share of secrets that must be gone (with at most 4 characters left) in every mode.
const MIN_RECALL: f64 = 0.97;
/// Share of look-alikes that may come back changed in every mode.
const MAX_CHANGED_LOOKALIKES: f64 = 0.01;
/// A run of this many characters of a secret surviving counts as a leak.
const LEAK_CHARS: usize = 5;

#[derive(Debug, Deserialize)]
struct Positive {
    kind: String,
    context: String,
    line: String,
    secret: String,
}

fn corpus_dir() -> PathBuf {
    std::env::var_os("REDACTION_CORPUS_DIR")
        .filter(|d| !d.is_empty())
        .map_or_else(
            || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/redaction"),
            PathBuf::from,
        )
}

fn load() -> Result<(Vec<Positive>, Vec<String>)> {
    let dir = corpus_dir();
    let pos_path = dir.join("positives.jsonl");
    let text = std::fs::read_to_string(&pos_path)
        .with_context(|| format!("read {}", pos_path.display()))?;
    let positives = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).with_context(|| format!("positives.jsonl line {}", i + 1))
        })
        .collect::<Result<Vec<Positive>>>()?;
    let neg_path = dir.join("lookalikes.txt");
    let negatives = std::fs::read_to_string(&neg_path)
        .with_context(|| format!("read {}", neg_path.display()))?
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    Ok((positives, negatives))
}

/// True when `out` still holds the secret or a run of `LEAK_CHARS` of its characters that
/// the rest of the original line does not explain.
fn leaks(p: &Positive, out: &str) -> bool {
    if out.contains(&p.secret) {
        return true;
    }
    let rest = p.line.replace(&p.secret, "\u{0}");
    let chars: Vec<char> = p.secret.chars().collect();
    chars.windows(LEAK_CHARS).any(|w| {
        let w: String = w.iter().collect();
        out.contains(&w) && !rest.contains(&w)
    })
}

/// The ways a line is fed to the redactor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Mode {
    Plain,
    SessionUpdate,
    ToolsCall,
    JsonLine,
}

const MODES: [Mode; 4] = [
    Mode::Plain,
    Mode::SessionUpdate,
    Mode::ToolsCall,
    Mode::JsonLine,
];

fn session_update(line: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "05e0dd1d-8146-4a2d-908e-1d20459f563a",
            "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": line}}
        }
    })
}

fn tools_call(line: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "copilot_code_task", "arguments": {"task": "run this", "command": line, "_depth": 1}}
    })
}

/// Runs one line through one mode; returns the text that came back and whether the JSON (if
/// any) still parsed.
fn run(r: &Redactor, mode: Mode, line: &str) -> (String, bool) {
    match mode {
        Mode::Plain => (r.redact(line).into_owned(), true),
        Mode::SessionUpdate => {
            let mut v = session_update(line);
            r.redact_json(&mut v);
            let reparsed: Option<Value> = serde_json::to_string(&v)
                .ok()
                .and_then(|s| serde_json::from_str(&s).ok());
            let text = v["params"]["update"]["content"]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            (text, reparsed.is_some())
        }
        Mode::ToolsCall => {
            let mut v = tools_call(line);
            r.redact_json(&mut v);
            let text = v["params"]["arguments"]["command"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            (text, v["params"]["arguments"]["task"] == "run this")
        }
        Mode::JsonLine => {
            let raw = session_update(line).to_string();
            let out = r.redact_json_line(&raw);
            match serde_json::from_str::<Value>(&out) {
                Ok(v) => (
                    v["params"]["update"]["content"]["text"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                    true,
                ),
                Err(_) => (out, false),
            }
        }
    }
}

#[derive(Debug, Default)]
struct Tally {
    total: usize,
    caught: usize,
}

#[test]
fn corpus_meets_recall_and_lookalike_targets() -> Result<()> {
    let (positives, negatives) = load()?;
    let r = Redactor::shared();
    let kinds: std::collections::BTreeSet<&str> =
        positives.iter().map(|p| p.kind.as_str()).collect();
    eprintln!(
        "corpus: {} positives over {} kinds, {} look-alikes",
        positives.len(),
        kinds.len(),
        negatives.len()
    );

    let mut failures = Vec::new();
    let mut broken_json = Vec::new();
    let mut per_kind: BTreeMap<(Mode, &str), Tally> = BTreeMap::new();
    let mut missed: Vec<String> = Vec::new();
    for mode in MODES {
        let mut caught = 0usize;
        for p in &positives {
            let (out, json_ok) = run(r, mode, &p.line);
            if !json_ok {
                broken_json.push(format!("{mode:?}: {}", p.line));
            }
            let ok = !leaks(p, &out);
            let t = per_kind.entry((mode, p.kind.as_str())).or_default();
            t.total += 1;
            if ok {
                t.caught += 1;
                caught += 1;
            } else {
                missed.push(format!(
                    "  {mode:?} [{}/{}] {}\n      -> {}",
                    p.kind, p.context, p.line, out
                ));
            }
        }
        let recall = ratio(caught, positives.len());
        let mut changed = Vec::new();
        for n in &negatives {
            let (out, json_ok) = run(r, mode, n);
            if !json_ok {
                broken_json.push(format!("{mode:?}: {n}"));
            }
            if &out != n {
                changed.push(format!("  {n}\n      -> {out}"));
            }
        }
        let changed_share = ratio(changed.len(), negatives.len());
        eprintln!(
            "{mode:?}: recall {recall:.4} ({caught}/{}), look-alikes changed {changed_share:.4} ({}/{})",
            positives.len(),
            changed.len(),
            negatives.len()
        );
        if recall < MIN_RECALL {
            failures.push(format!("{mode:?}: recall {recall:.4} < {MIN_RECALL}"));
        }
        if changed_share > MAX_CHANGED_LOOKALIKES {
            failures.push(format!(
                "{mode:?}: {changed_share:.4} of look-alikes changed > {MAX_CHANGED_LOOKALIKES}"
            ));
        }
        if !changed.is_empty() {
            eprintln!("changed look-alikes ({mode:?}):\n{}", changed.join("\n"));
        }
    }
    if !missed.is_empty() {
        eprintln!("missed secrets:\n{}", missed.join("\n"));
    }
    if !failures.is_empty() || !broken_json.is_empty() {
        eprintln!(
            "{:<28} {:>12} {:>12} {:>12} {:>12}",
            "kind", "plain", "update", "tools/call", "json line"
        );
        for kind in &kinds {
            let cells: Vec<String> = MODES
                .iter()
                .map(|m| {
                    per_kind
                        .get(&(*m, *kind))
                        .map_or_else(String::new, |t| format!("{}/{}", t.caught, t.total))
                })
                .collect();
            eprintln!(
                "{kind:<28} {:>12} {:>12} {:>12} {:>12}",
                cells[0], cells[1], cells[2], cells[3]
            );
        }
    }
    assert!(
        broken_json.is_empty(),
        "redaction broke JSON:\n{}",
        broken_json.join("\n")
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

#[test]
fn corpus_is_large_and_varied_enough() -> Result<()> {
    let (positives, negatives) = load()?;
    let kinds: std::collections::BTreeSet<&str> =
        positives.iter().map(|p| p.kind.as_str()).collect();
    let contexts: std::collections::BTreeSet<&str> =
        positives.iter().map(|p| p.context.as_str()).collect();
    assert!(positives.len() >= 200, "{} positives", positives.len());
    assert!(kinds.len() >= 50, "{} kinds", kinds.len());
    assert!(contexts.len() >= 15, "{} contexts", contexts.len());
    assert!(negatives.len() >= 150, "{} look-alikes", negatives.len());
    for p in &positives {
        assert!(p.line.contains(&p.secret), "secret not in its line: {p:?}");
    }
    Ok(())
}

fn ratio(n: usize, d: usize) -> f64 {
    let n = u32::try_from(n).unwrap_or(u32::MAX);
    let d = u32::try_from(d.max(1)).unwrap_or(u32::MAX);
    f64::from(n) / f64::from(d)
}
