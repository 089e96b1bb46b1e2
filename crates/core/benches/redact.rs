//! Redaction throughput on one core: text with no secrets (target ≥ 200 MB/s) and text with
//! about one secret per KB (target ≥ 50 MB/s), as plain text and as JSON lines.
//!
//! The text is built from realistic lines (logs, code, JSON-RPC, prose) plus the look-alikes of
//! `tests/fixtures/redaction/`, which are written to wake the prefilter, so the clean case is a
//! pessimistic one. Run: `cargo bench -p bridge-core --bench redact`.

use std::hint::black_box;
use std::path::PathBuf;

use bridge_core::redact::Redactor;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Size of each benchmark input, in bytes: large enough that per-call overhead is noise.
const INPUT_BYTES: usize = 1 << 20;
/// One secret line per this many bytes in the "secrets" input.
const SECRET_EVERY_BYTES: usize = 1024;

/// Ordinary lines from the places the redactor sees text: tool output, logs, code, chat.
const EVERYDAY: &[&str] = &[
    "2024-05-02T10:14:07.512Z INFO copilot_bridge::runner: turn finished stop_reason=end_turn elapsed_ms=5312",
    "2024-05-02T10:14:07.601Z DEBUG acp: <- session/update agent_message_chunk (142 bytes)",
    r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"05e0dd1d-8146-4a2d-908e-1d20459f563a","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"I'll start by reading the README to understand the project layout."}}}}"#,
    r#"{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"Created src/lib.rs with 42 lines."}],"isError":false}}"#,
    "    Compiling serde_json v1.0.154",
    "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 12.31s",
    "test redact::tests::clean_text_is_borrowed ... ok",
    "fn main() -> anyhow::Result<()> {",
    "    let config = Config::load(&args.config).context(\"load config\")?;",
    "    for (i, line) in reader.lines().enumerate() {",
    "        if line.is_empty() { continue; }",
    "impl fmt::Display for Error { fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { todo!() } }",
    "def handle(request):\n    return JsonResponse({\"ok\": True, \"items\": list(items)})",
    "export function useSession(id: string) { return useQuery(['session', id], fetchSession); }",
    "The orchestrator sorts tasks topologically and runs each wave with bounded concurrency.",
    "Please refactor the parser so that error messages include the line and column numbers.",
    "diff --git a/src/main.rs b/src/main.rs\nindex 3f9a2b1..7c4d8e2 100644",
    "@@ -10,7 +10,9 @@ pub fn run(args: Args) -> Result<ExitCode> {",
    "drwxr-xr-x  5 user staff  160 May  2 10:14 src",
    "GET /v1/models 200 31ms ua=copilot-cli/1.0.102",
    "warning: unused import: `std::collections::HashMap`",
    "  = note: `#[warn(unused_imports)]` on by default",
    "| step | status | duration |\n|------|--------|----------|\n| build | ok | 12s |",
    "README.md: add a section on configuration and the environment variables it reads.",
];

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/redaction")
}

fn lookalikes() -> Vec<String> {
    std::fs::read_to_string(corpus_dir().join("lookalikes.txt"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn secret_lines() -> Vec<String> {
    std::fs::read_to_string(corpus_dir().join("positives.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["line"].as_str().map(str::to_owned))
        .collect()
}

/// About `INPUT_BYTES` of clean lines: four everyday lines for each look-alike.
fn clean_text() -> String {
    let looks = lookalikes();
    let mut out = String::with_capacity(INPUT_BYTES + 4096);
    let mut i = 0usize;
    while out.len() < INPUT_BYTES {
        if i % 5 == 4 && !looks.is_empty() {
            out.push_str(&looks[(i / 5) % looks.len()]);
        } else {
            out.push_str(EVERYDAY[i % EVERYDAY.len()]);
        }
        out.push('\n');
        i += 1;
    }
    out
}

/// The clean text with one secret line inserted every `SECRET_EVERY_BYTES`.
fn secret_text() -> String {
    let clean = clean_text();
    let secrets = secret_lines();
    let mut out = String::with_capacity(clean.len() * 2);
    let mut next = SECRET_EVERY_BYTES;
    let mut k = 0usize;
    for line in clean.lines() {
        out.push_str(line);
        out.push('\n');
        if out.len() >= next && !secrets.is_empty() {
            out.push_str(&secrets[k % secrets.len()]);
            out.push('\n');
            k += 1;
            next = out.len() + SECRET_EVERY_BYTES;
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let redactor = Redactor::shared();
    let inputs = [("clean", clean_text()), ("secret_per_kb", secret_text())];
    let mut group = c.benchmark_group("redact");
    for (name, text) in &inputs {
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(format!("text/{name}"), |b| {
            b.iter(|| redactor.redact(black_box(text)).len());
        });
        let lines: Vec<String> = text
            .lines()
            .map(|l| serde_json::json!({"jsonrpc": "2.0", "method": "session/update", "params": {"text": l}}).to_string())
            .collect();
        let json_bytes: usize = lines.iter().map(String::len).sum();
        group.throughput(Throughput::Bytes(json_bytes as u64));
        group.bench_function(format!("json_lines/{name}"), |b| {
            b.iter(|| {
                lines
                    .iter()
                    .map(|l| redactor.redact_json_line(black_box(l)).len())
                    .sum::<usize>()
            });
        });
    }
    group.finish();
    let mut compile = c.benchmark_group("redact_compile");
    compile.sample_size(10);
    compile.bench_function("new", |b| b.iter(Redactor::new));
    compile.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
