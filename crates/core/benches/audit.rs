//! Audit log throughput: entries per second through `AuditLog::record` (stamp, redact,
//! truncate, encode, queue) to the single writer (one `write(2)` per line), shutdown included.
//! Run with `cargo bench -p bridge-core --bench audit`.

use std::time::{Duration, Instant};

use bridge_core::audit::{AuditEntry, AuditLog, Hook};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;

/// A typical permission entry: a shell command in, a short result out (~300 bytes a line).
fn entry(seq: u64) -> AuditEntry {
    let mut entry = AuditEntry::new(Hook::Permission, "bash");
    entry.session = Some("4a936ede-dcae-4ba0-8450-aa5e9fca73bf".to_owned());
    entry.decision = Some("allow".to_owned());
    entry.input = Some(json!({"command": "cargo test -p bridge-core --lib", "seq": seq}));
    entry.output = Some(json!({"exit": 0, "stdout": "test result: ok. 58 passed"}));
    entry.elapsed_ms = Some(seq % 1000);
    entry.depth = 1;
    entry
}

/// Records `count` entries from `writers` concurrent tasks, then shuts down; returns the time.
async fn run(count: u64, writers: u64) -> Duration {
    let Ok(home) = tempfile::tempdir() else {
        panic!("no temp dir");
    };
    let log = match AuditLog::open(home.path(), "bench") {
        Ok(log) => log,
        Err(e) => panic!("{e}"),
    };
    let start = Instant::now();
    let tasks: Vec<_> = (0..writers)
        .map(|w| {
            let log = log.clone();
            tokio::spawn(async move {
                for seq in (w..count).step_by(usize::try_from(writers).unwrap_or(1)) {
                    if let Err(e) = log.record(entry(seq)).await {
                        panic!("{e}");
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        if let Err(e) = task.await {
            panic!("{e}");
        }
    }
    if let Err(e) = log.shutdown().await {
        panic!("{e}");
    }
    start.elapsed()
}

fn bench(c: &mut Criterion) {
    let Ok(runtime) = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    else {
        panic!("no runtime");
    };
    let mut group = c.benchmark_group("audit");
    group.throughput(Throughput::Elements(1));
    for writers in [1, 16] {
        group.bench_function(format!("record_{writers}_writers"), |b| {
            b.iter_custom(|iters| runtime.block_on(run(iters, writers)));
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
