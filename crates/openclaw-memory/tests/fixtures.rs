//! The labelled sets under `tests/fixtures/relevance*/` are exactly what their generators write,
//! and pass the checks their writers shipped with them (`check.py`, `check_hard.py`). A set
//! edited by hand, or a generator that no longer reproduces its set, would make the relevance
//! figures measure something nobody can regenerate or audit. Each set is copied into a
//! temporary tree laid out like the repository (the lookups generator reads the tuned set's
//! workspace and the tokenizer's stop words), regenerated there, and compared byte for byte.
//! Needs Python 3, as the test command does.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use common::copy_tree;

mod common;

/// Longest a generator or a check may run (each takes about a second).
const SCRIPT_TIMEOUT: Duration = Duration::from_mins(2);

fn repository() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The labelled sets: every `tests/fixtures/relevance*` directory with a `generate.py`.
fn sets(fixtures: &Path) -> anyhow::Result<Vec<String>> {
    let mut sets = Vec::new();
    for entry in std::fs::read_dir(fixtures)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("relevance") && entry.path().join("generate.py").is_file() {
            sets.push(name);
        }
    }
    sets.sort();
    Ok(sets)
}

/// Every file under `dir`, as paths relative to it, sorted.
fn files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                walk(root, &entry.path(), out)?;
            } else {
                out.push(entry.path().strip_prefix(root)?.to_path_buf());
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out)?;
    out.sort();
    Ok(out)
}

/// Runs `python3 script` in `dir`, failing with its output if it fails or outlives
/// [`SCRIPT_TIMEOUT`].
fn run_python(dir: &Path, script: &str) -> anyhow::Result<()> {
    // Output goes to a file, not a pipe nobody reads while waiting: a chatty script would fill
    // the pipe and block.
    let log_dir = tempfile::tempdir()?;
    let log = log_dir.path().join("output");
    let mut child = Command::new("python3")
        .arg(script)
        .current_dir(dir)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&log)?)
        .stderr(std::fs::File::create(log.with_extension("err"))?)
        .spawn()
        .context("python3 is needed to regenerate the labelled sets; install Python 3")?;
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() > SCRIPT_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            bail!("{script} in {} ran over {SCRIPT_TIMEOUT:?}", dir.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    ensure!(
        status.success(),
        "{script} in {} failed ({status}):\n{}{}",
        dir.display(),
        std::fs::read_to_string(&log).unwrap_or_default(),
        std::fs::read_to_string(log.with_extension("err")).unwrap_or_default()
    );
    Ok(())
}

#[test]
fn every_labelled_set_is_what_its_generator_writes_and_passes_its_checks() -> anyhow::Result<()> {
    let repository = repository();
    let fixtures = repository.join("tests/fixtures");
    let sets = sets(&fixtures)?;
    ensure!(
        sets.len() >= 9,
        "expected the nine labelled sets, found {sets:?}"
    );

    let copy = tempfile::tempdir()?;
    let copied = copy.path().join("tests/fixtures");
    for set in &sets {
        copy_tree(&fixtures.join(set), &copied.join(set))?;
    }
    // The lookups generator takes the stop words from the tokenizer, as the search does.
    let tokenizer = "crates/openclaw-memory/src/index/tokenize.rs";
    let to = copy.path().join(tokenizer);
    std::fs::create_dir_all(to.parent().context("tokenizer path")?)?;
    std::fs::copy(repository.join(tokenizer), &to)?;

    let mut problems = Vec::new();
    for set in &sets {
        let dir = copied.join(set);
        run_python(&dir, "generate.py")?;
        let (committed, written) = (files(&fixtures.join(set))?, files(&dir)?);
        if committed != written {
            problems.push(format!(
                "{set}: the generator writes other files than are committed"
            ));
            continue;
        }
        for file in &committed {
            if std::fs::read(fixtures.join(set).join(file))? != std::fs::read(dir.join(file))? {
                problems.push(format!(
                    "{set}/{}: differs from what generate.py writes",
                    file.display()
                ));
            }
        }
        for check in ["check.py", "check_hard.py"] {
            if dir.join(check).is_file()
                && let Err(err) = run_python(&dir, check)
            {
                problems.push(format!("{set}: {err:#}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    Ok(())
}
