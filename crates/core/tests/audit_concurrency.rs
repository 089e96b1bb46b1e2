//! 64 concurrent writers × 1,000 entries through one audit log: every entry arrives exactly
//! once as its own valid JSON line, nothing is lost at shutdown, and the file is private.

use std::collections::HashSet;
use std::path::Path;

use bridge_core::audit::{AuditEntry, AuditLog, Hook};
use pretty_assertions::assert_eq;
use serde_json::json;

const WRITERS: usize = 64;
const ENTRIES_PER_WRITER: usize = 1_000;

/// Every `audit-*.jsonl` file in `dir` (two if the test runs across midnight UTC).
fn audit_files(dir: &Path) -> anyhow::Result<Vec<std::path::PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let stem = path.file_stem().map(|n| n.to_string_lossy().into_owned());
        if stem.is_some_and(|n| n.starts_with("audit-"))
            && path.extension() == Some("jsonl".as_ref())
        {
            files.push(path);
        }
    }
    Ok(files)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixty_four_writers_lose_and_tear_nothing() -> anyhow::Result<()> {
    let home = tempfile::tempdir()?;
    let dir = home.path().join("audit");
    let log = AuditLog::open(&dir, "copilot-bridge")?;

    let mut tasks = Vec::new();
    for writer in 0..WRITERS {
        let log = log.clone();
        tasks.push(tokio::spawn(async move {
            for seq in 0..ENTRIES_PER_WRITER {
                let mut entry = AuditEntry::new(Hook::Post, format!("tool-{writer}"));
                entry.session = Some(format!("session-{writer}"));
                // Varying sizes, newlines and quotes: a torn or merged line would not parse.
                entry.input = Some(json!({
                    "writer": writer,
                    "seq": seq,
                    "text": format!("line one\nline \"two\" {}", "x".repeat(seq % 700)),
                }));
                entry.output = Some(json!(["ok", seq]));
                entry.elapsed_ms = Some(u64::try_from(seq)?);
                entry.depth = 1;
                log.record(entry).await?;
            }
            anyhow::Ok(())
        }));
    }
    for task in tasks {
        task.await??;
    }
    log.shutdown().await?;

    let mut seen = HashSet::new();
    let mut lines = 0;
    for path in audit_files(&dir)? {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                std::fs::metadata(&path)?.permissions().mode() & 0o777,
                0o600
            );
        }
        let text = std::fs::read_to_string(&path)?;
        assert!(
            text.ends_with('\n'),
            "last line of {} is incomplete",
            path.display()
        );
        for line in text.lines() {
            lines += 1;
            let entry: AuditEntry = serde_json::from_str(line)
                .map_err(|e| anyhow::anyhow!("torn line {line:?}: {e}"))?;
            let input = entry.input.unwrap_or_default();
            let writer = input["writer"].as_u64().unwrap_or(u64::MAX);
            let seq = input["seq"].as_u64().unwrap_or(u64::MAX);
            assert_eq!(entry.tool, format!("tool-{writer}"));
            assert_eq!(entry.server, "copilot-bridge");
            assert!(seen.insert((writer, seq)), "duplicate entry {writer}/{seq}");
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&dir)?.permissions().mode() & 0o777, 0o700);
    }
    assert_eq!(lines, WRITERS * ENTRIES_PER_WRITER);
    assert_eq!(seen.len(), WRITERS * ENTRIES_PER_WRITER);
    Ok(())
}
