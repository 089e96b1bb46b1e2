//! Attacks on `bridge_core::confine::Root`: every way out of the root we know of, tried against
//! every operation, plus the cases that must keep working and the symlink-swap races that
//! check-then-open code loses.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::os::unix::fs::{PermissionsExt as _, symlink};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bridge_core::confine::{
    ConfineError, Entry, EntryKind, FileInfo, ListLimits, MAX_LIST_DEPTH, MAX_LIST_ENTRIES,
    MAX_NAME_BYTES, Root,
};
use pretty_assertions::assert_eq;
use tempfile::TempDir;

/// What every file outside the root holds; no result or message may ever contain it.
const SECRET: &str = "OUTSIDE-SECRET";
/// What the attacks try to write; no file outside the root may ever hold it.
const PAYLOAD: &[u8] = b"PWNED";
const READ_LIMIT: u64 = 1 << 20;

/// A scratch tree: `base/ws` is the root; `base/outside` and the sibling `base/ws-evil` hold
/// secrets; `ws` is full of links that try to leave.
struct Fixture {
    _tmp: TempDir,
    base: PathBuf,
    ws: PathBuf,
    root: Root,
}

fn fixture() -> anyhow::Result<Fixture> {
    let tmp = TempDir::new()?;
    let base = std::fs::canonicalize(tmp.path())?;
    let ws = base.join("ws");
    let outside = base.join("outside");
    for dir in [&ws, &outside, &base.join("ws-evil"), &ws.join("sub/deeper")] {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(outside.join("secret.txt"), SECRET)?;
    std::fs::write(base.join("ws-evil/secret.txt"), SECRET)?;
    std::fs::write(ws.join("hello.txt"), "hello")?;
    std::fs::write(ws.join("sub/inner.txt"), "inner")?;
    std::fs::write(ws.join("sub/deeper/x.txt"), "x")?;
    let links: [(&str, PathBuf); 25] = [
        ("link_out", "../outside".into()),
        ("link_out_abs", outside.clone()),
        ("link_file_out", "../outside/secret.txt".into()),
        ("chain1", "chain2".into()),
        ("chain2", "chain3".into()),
        ("chain3", "../outside/secret.txt".into()),
        ("chain_dir1", "chain_dir2".into()),
        ("chain_dir2", "link_out".into()),
        ("dangling_out", "../outside/missing.txt".into()),
        ("dangling_out_dir", outside.join("missing_dir")),
        ("sub/link_up", "../../outside".into()),
        ("link_evil", "../ws-evil".into()),
        ("link_evil_abs", base.join("ws-evil")),
        ("link_root", "/".into()),
        ("proc_root", "/proc/self/root".into()),
        ("proc_cwd", "/proc/self/cwd".into()),
        ("link_dotdot", "..".into()),
        ("loop_a", "loop_b".into()),
        ("loop_b", "loop_a".into()),
        ("link_to_link_out", "sub/link_up".into()),
        ("link_in", "sub/inner.txt".into()),
        ("link_in_abs", ws.join("sub/inner.txt")),
        ("link_in_dir", "sub".into()),
        ("dangling_in", "sub/nope.txt".into()),
        ("sub/link_back_in", "../hello.txt".into()),
    ];
    for (name, target) in links {
        symlink(target, ws.join(name))?;
    }
    let root = Root::open(&ws)?;
    Ok(Fixture {
        _tmp: tmp,
        base,
        ws,
        root,
    })
}

/// Everything under `base` except the root: path → kind and content (or link target).
fn snapshot_outside(base: &Path) -> anyhow::Result<BTreeMap<PathBuf, String>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![base.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path == base.join("ws") {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path)?;
            let value = if meta.file_type().is_symlink() {
                format!("link {}", std::fs::read_link(&path)?.display())
            } else if meta.is_dir() {
                stack.push(path.clone());
                "dir".to_owned()
            } else {
                format!("file {}", String::from_utf8_lossy(&std::fs::read(&path)?))
            };
            out.insert(path, value);
        }
    }
    Ok(out)
}

/// The outcome of one call, as the attack table spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    Ok,
    Escapes,
    NulByte,
    NameTooLong,
    PathTooLong,
    NotFound,
    AlreadyExists,
    TooManySymlinks,
}

fn outcome<T>(result: &Result<T, ConfineError>) -> Want {
    match result {
        Ok(_) => Want::Ok,
        Err(ConfineError::Escapes { .. }) => Want::Escapes,
        Err(ConfineError::NulByte { .. }) => Want::NulByte,
        Err(ConfineError::NameTooLong { .. }) => Want::NameTooLong,
        Err(ConfineError::PathTooLong { .. }) => Want::PathTooLong,
        Err(ConfineError::NotFound { .. }) => Want::NotFound,
        Err(ConfineError::AlreadyExists { .. }) => Want::AlreadyExists,
        Err(ConfineError::TooManySymlinks { .. }) => Want::TooManySymlinks,
        Err(other) => panic!("unexpected error kind: {other:?}"),
    }
}

/// The caller's path an error carries, if its variant carries one.
fn error_path(err: &ConfineError) -> Option<&str> {
    match err {
        ConfineError::NulByte { path }
        | ConfineError::Escapes { path }
        | ConfineError::NotFound { path }
        | ConfineError::AlreadyExists { path }
        | ConfineError::NotAFile { path }
        | ConfineError::NotADirectory { path }
        | ConfineError::TooLarge { path, .. }
        | ConfineError::NotUtf8 { path }
        | ConfineError::TooManySymlinks { path }
        | ConfineError::TooManyEntries { path, .. }
        | ConfineError::TooDeep { path, .. }
        | ConfineError::Io { path, .. } => Some(path),
        _ => None,
    }
}

/// One attack: a path and the outcome each operation must give.
struct Attack {
    path: String,
    read: Want,
    metadata: Want,
    list: Want,
    create_new: Want,
    replace: Want,
}

impl Attack {
    fn all(path: impl Into<String>, want: Want) -> Self {
        Self {
            path: path.into(),
            read: want,
            metadata: want,
            list: want,
            create_new: want,
            replace: want,
        }
    }

    /// A path that only looks hostile: a literal name inside the root, so nothing is there to
    /// read yet, and creating it makes a file inside the root.
    fn literal(path: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            read: Want::NotFound,
            metadata: Want::NotFound,
            list: Want::NotFound,
            create_new: Want::Ok,
            replace: Want::Ok,
        }
    }

    /// A path whose final name is a symlink leading out: following it escapes, and the name is
    /// taken for an exclusive create.
    fn final_link_out(path: impl Into<String>) -> Self {
        Self {
            create_new: Want::AlreadyExists,
            ..Self::all(path, Want::Escapes)
        }
    }
}

fn attacks(fx: &Fixture) -> Vec<Attack> {
    let base = fx.base.display();
    let ws = fx.ws.display();
    vec![
        // `..` in every position.
        Attack::all("..", Want::Escapes),
        Attack::all("../outside/secret.txt", Want::Escapes),
        Attack::all("../../../../../../../../etc/passwd", Want::Escapes),
        Attack::all("sub/../../outside/secret.txt", Want::Escapes),
        Attack::all("sub/deeper/../../../outside/secret.txt", Want::Escapes),
        Attack::all("sub/../..", Want::Escapes),
        Attack::all("./../outside/secret.txt", Want::Escapes),
        Attack::all("../ws-evil/secret.txt", Want::Escapes),
        Attack::all("link_in_dir/../../outside/secret.txt", Want::Escapes),
        // Encoded-looking and backslash dots are names, not separators.
        Attack::literal("..%2foutside%2fsecret.txt"),
        Attack::literal("..%2F..%2F..%2Fetc%2Fpasswd"),
        Attack::literal("..\\outside\\secret.txt"),
        Attack::literal("%2e%2e/outside/secret.txt"),
        // `..` is lexical: it cancels the name before it and never follows that name's link.
        Attack::literal("sub/./link_up/../outside/secret.txt"),
        // Absolute paths outside, the sibling with a shared string prefix, and /proc tricks.
        Attack::all("/etc/passwd", Want::Escapes),
        Attack::all("//etc/passwd", Want::Escapes),
        Attack::all(format!("{base}/outside/secret.txt"), Want::Escapes),
        Attack::all(format!("{base}/ws-evil/secret.txt"), Want::Escapes),
        Attack::all(format!("{base}/ws-evil"), Want::Escapes),
        Attack::all(format!("{ws}/../ws-evil/secret.txt"), Want::Escapes),
        Attack::all(format!("{ws}/../outside/secret.txt"), Want::Escapes),
        Attack::all("/proc/self/root/etc/passwd", Want::Escapes),
        Attack::all("/proc/self/cwd/Cargo.toml", Want::Escapes),
        // Symlinks and chains that lead out, relative and absolute, as parent or final name.
        Attack::all("link_out/secret.txt", Want::Escapes),
        Attack::all("link_out_abs/secret.txt", Want::Escapes),
        Attack::all(format!("{ws}/link_out/secret.txt"), Want::Escapes),
        Attack::final_link_out("link_out"),
        Attack::final_link_out("link_out/"),
        Attack::final_link_out("link_file_out"),
        Attack::final_link_out("chain1"),
        Attack::all("chain_dir1/secret.txt", Want::Escapes),
        Attack::all("sub/link_up/secret.txt", Want::Escapes),
        Attack::all("link_to_link_out/secret.txt", Want::Escapes),
        Attack::all("link_evil/secret.txt", Want::Escapes),
        Attack::all("link_evil_abs/secret.txt", Want::Escapes),
        Attack::all("link_root/etc/passwd", Want::Escapes),
        Attack::all("link_dotdot/outside/secret.txt", Want::Escapes),
        Attack::all("proc_root/etc/passwd", Want::Escapes),
        Attack::all("proc_cwd/Cargo.toml", Want::Escapes),
        // Dangling links out: as the file itself, and as the parent of a file to create.
        Attack::final_link_out("dangling_out"),
        Attack::all("dangling_out_dir/new.txt", Want::Escapes),
        // A loop ends in an error, not a hang.
        Attack::all("loop_a/x.txt", Want::TooManySymlinks),
        // NUL bytes, wherever they are.
        Attack::all("a\0b", Want::NulByte),
        Attack::all("hello.txt\0../../outside/secret.txt", Want::NulByte),
        Attack::all("sub/\0", Want::NulByte),
        // `~` is a name, never the home directory.
        Attack::literal("~"),
        Attack::literal("~/.ssh/id_rsa"),
        Attack::literal("~root/.bashrc"),
        // Oversized names and paths.
        Attack::all("n".repeat(MAX_NAME_BYTES + 1), Want::NameTooLong),
        Attack::all(
            format!("sub/{}/x", "n".repeat(MAX_NAME_BYTES + 1)),
            Want::NameTooLong,
        ),
        Attack::all("a/".repeat(2100), Want::PathTooLong),
    ]
}

/// Checks one result: the expected outcome, the caller's path in the error, and nothing from
/// outside in the message.
fn check<T>(fx: &Fixture, op: &str, attack: &Attack, want: Want, result: &Result<T, ConfineError>) {
    let label = format!("{op}({:?})", attack.path);
    assert_eq!(
        outcome(result),
        want,
        "{label}: {result:?}",
        result = result.as_ref().err()
    );
    if let Err(err) = result {
        if let Some(path) = error_path(err) {
            assert_eq!(path, attack.path, "{label}: error names another path");
        }
        let message = err.to_string();
        assert!(
            !message.contains(SECRET),
            "{label}: message leaks content: {message}"
        );
        let outside = fx.base.join("outside");
        if !attack.path.contains("outside") {
            assert!(
                !message.contains(&*outside.to_string_lossy()),
                "{label}: message names the link target: {message}"
            );
        }
    }
}

#[test]
fn no_attack_escapes_any_operation() -> anyhow::Result<()> {
    let count = attacks(&fixture()?).len();
    assert!(count >= 30, "only {count} attacks");
    for index in 0..count {
        // A fresh tree per attack: the writes of one must not change what the next one sees.
        let fx = fixture()?;
        let attack = &attacks(&fx)[index];
        let before = snapshot_outside(&fx.base)?;
        let path = attack.path.as_str();

        let read = fx.root.read(path, READ_LIMIT);
        check(&fx, "read", attack, attack.read, &read);
        if let Ok(bytes) = &read {
            assert!(
                !String::from_utf8_lossy(bytes).contains(SECRET),
                "read({path:?}) leaked"
            );
        }
        check(
            &fx,
            "read_to_string",
            attack,
            attack.read,
            &fx.root.read_to_string(path, 64),
        );
        check(
            &fx,
            "metadata",
            attack,
            attack.metadata,
            &fx.root.metadata(path),
        );
        check(&fx, "list", attack, attack.list, &fx.root.list(path, true));
        check(
            &fx,
            "create_new",
            attack,
            attack.create_new,
            &fx.root.create_new(path, PAYLOAD),
        );
        check(
            &fx,
            "replace",
            attack,
            attack.replace,
            &fx.root.replace(path, PAYLOAD),
        );
        if attack.replace == Want::Ok {
            // What was written landed inside the root, under the literal name.
            let inside = fx.ws.join(fx.root.relative(path)?);
            assert_eq!(
                std::fs::read(&inside)?,
                PAYLOAD,
                "write({path:?}) went elsewhere"
            );
        }

        assert_eq!(
            snapshot_outside(&fx.base)?,
            before,
            "{path:?} changed something outside"
        );
    }
    Ok(())
}

#[test]
fn listing_shows_links_that_lead_out_without_describing_their_targets() -> anyhow::Result<()> {
    let fx = fixture()?;
    let entries = fx.root.list("", false)?;
    let links: BTreeMap<&str, (u64, Option<EntryKind>, bool)> = entries
        .iter()
        .filter(|e| e.kind == EntryKind::Symlink)
        .map(|e| {
            (
                e.path.as_str(),
                (e.len, e.target_kind, e.modified.is_some()),
            )
        })
        .collect();
    let out = (0, None, false);
    let expected: BTreeMap<&str, (u64, Option<EntryKind>, bool)> = [
        ("chain1", out),
        ("chain2", out),
        ("chain3", out),
        ("chain_dir1", out),
        ("chain_dir2", out),
        ("dangling_in", out),
        ("dangling_out", out),
        ("dangling_out_dir", out),
        ("link_dotdot", out),
        ("link_evil", out),
        ("link_evil_abs", out),
        ("link_file_out", out),
        ("link_in", (5, Some(EntryKind::File), true)),
        ("link_in_abs", (5, Some(EntryKind::File), true)),
        ("link_in_dir", (0, Some(EntryKind::Dir), true)),
        ("link_out", out),
        ("link_out_abs", out),
        ("link_root", out),
        ("link_to_link_out", out),
        ("loop_a", out),
        ("loop_b", out),
        ("proc_cwd", out),
        ("proc_root", out),
    ]
    .into_iter()
    .collect();
    assert_eq!(links, expected);
    // Recursion never goes through a link: only real directories contribute entries.
    let recursive: Vec<String> = fx
        .root
        .list("", true)?
        .into_iter()
        .map(|e| e.path)
        .collect();
    assert!(
        recursive.iter().all(|p| !p.contains("secret")),
        "{recursive:?}"
    );
    assert!(recursive.contains(&"sub/deeper/x.txt".to_owned()));
    assert!(!recursive.iter().any(|p| p.starts_with("link_in_dir/")));
    Ok(())
}

#[test]
fn nested_dirs_spaces_and_unicode_names_round_trip() -> anyhow::Result<()> {
    let fx = fixture()?;
    let names = [
        "a/b/c/deep file.txt",
        "données/日本語 メモ.md",
        "with space/ x .txt",
    ];
    for name in names {
        fx.root.create_new(name, name.as_bytes())?;
        assert_eq!(fx.root.read_to_string(name, READ_LIMIT)?, name);
        assert_eq!(std::fs::read_to_string(fx.ws.join(name))?, name);
    }
    let listed: Vec<(String, EntryKind, u64)> = fx
        .root
        .list("données", true)?
        .into_iter()
        .map(|e| (e.path, e.kind, e.len))
        .collect();
    let name = "données/日本語 メモ.md";
    assert_eq!(
        listed,
        vec![(name.to_owned(), EntryKind::File, name.len() as u64)]
    );
    let listed: Vec<(String, EntryKind)> = fx
        .root
        .list("a", true)?
        .into_iter()
        .map(|e| (e.path, e.kind))
        .collect();
    assert_eq!(
        listed,
        vec![
            ("a/b".to_owned(), EntryKind::Dir),
            ("a/b/c".to_owned(), EntryKind::Dir),
            ("a/b/c/deep file.txt".to_owned(), EntryKind::File),
        ]
    );
    Ok(())
}

#[test]
fn symlinks_that_stay_inside_work_for_every_operation() -> anyhow::Result<()> {
    let fx = fixture()?;
    for path in [
        "link_in",
        "link_in_abs",
        "link_in_dir/inner.txt",
        "sub/link_back_in",
    ] {
        let info = fx.root.metadata(path)?;
        assert_eq!(info.kind, EntryKind::File, "{path}");
        assert!(!fx.root.read(path, READ_LIMIT)?.is_empty(), "{path}");
    }
    assert_eq!(fx.root.read_to_string("link_in_abs", READ_LIMIT)?, "inner");
    assert_eq!(fx.root.metadata("link_in_dir")?.kind, EntryKind::Dir);
    let listed: Vec<String> = fx
        .root
        .list("link_in_dir", false)?
        .into_iter()
        .map(|e| e.path)
        .collect();
    assert_eq!(
        listed,
        [
            "link_in_dir/deeper",
            "link_in_dir/inner.txt",
            "link_in_dir/link_back_in",
            "link_in_dir/link_up"
        ]
    );

    // Replacing through an inside link rewrites the target and keeps the link.
    fx.root.replace("link_in_abs", b"rewritten")?;
    assert_eq!(std::fs::read(fx.ws.join("sub/inner.txt"))?, b"rewritten");
    assert!(
        std::fs::symlink_metadata(fx.ws.join("link_in_abs"))?
            .file_type()
            .is_symlink()
    );
    // Creating under a symlinked parent that stays inside lands in the real directory.
    fx.root.create_new("link_in_dir/new.txt", b"new")?;
    assert_eq!(std::fs::read(fx.ws.join("sub/new.txt"))?, b"new");
    // An exclusive create never follows a link at the final name.
    assert!(matches!(
        fx.root.create_new("link_in", b"x"),
        Err(ConfineError::AlreadyExists { .. })
    ));
    Ok(())
}

#[test]
fn dangling_symlink_inside_is_missing_until_replace_creates_its_target() -> anyhow::Result<()> {
    let fx = fixture()?;
    assert!(matches!(
        fx.root.read("dangling_in", 10),
        Err(ConfineError::NotFound { .. })
    ));
    assert!(matches!(
        fx.root.metadata("dangling_in"),
        Err(ConfineError::NotFound { .. })
    ));
    assert!(matches!(
        fx.root.create_new("dangling_in", b"x"),
        Err(ConfineError::AlreadyExists { .. })
    ));
    fx.root.replace("dangling_in", b"now here")?;
    assert_eq!(std::fs::read(fx.ws.join("sub/nope.txt"))?, b"now here");
    assert_eq!(fx.root.read("dangling_in", 100)?, b"now here");
    Ok(())
}

#[test]
fn absolute_paths_inside_the_root_work_also_through_the_configured_spelling() -> anyhow::Result<()>
{
    let fx = fixture()?;
    let inner = format!("{}/sub/inner.txt", fx.ws.display());
    assert_eq!(fx.root.read_to_string(&inner, READ_LIMIT)?, "inner");
    assert_eq!(
        fx.root.relative(&format!("{}/", fx.ws.display()))?,
        PathBuf::new()
    );

    // A root configured through a symlink: its canonical path and the configured one both work.
    symlink(&fx.ws, fx.base.join("ws_alias"))?;
    let aliased = Root::open(&fx.base.join("ws_alias"))?;
    assert_eq!(aliased.path(), fx.ws.as_path());
    let via_alias = format!("{}/ws_alias/hello.txt", fx.base.display());
    assert_eq!(aliased.read_to_string(&via_alias, READ_LIMIT)?, "hello");
    assert_eq!(
        aliased.read_to_string(&format!("{}/hello.txt", fx.ws.display()), 99)?,
        "hello"
    );
    let sibling = format!("{}/ws_alias-evil/x", fx.base.display());
    assert!(matches!(
        aliased.read(&sibling, 99),
        Err(ConfineError::Escapes { .. })
    ));
    Ok(())
}

#[test]
fn writes_create_exclusively_and_replace_atomically_keeping_permissions() -> anyhow::Result<()> {
    let fx = fixture()?;
    assert!(matches!(
        fx.root.create_new("hello.txt", b"x"),
        Err(ConfineError::AlreadyExists { .. })
    ));
    assert!(matches!(
        fx.root.write("hello.txt", b"x", false),
        Err(ConfineError::AlreadyExists { .. })
    ));
    std::fs::set_permissions(
        fx.ws.join("hello.txt"),
        std::fs::Permissions::from_mode(0o640),
    )?;
    fx.root.write("hello.txt", b"replaced", true)?;
    assert_eq!(std::fs::read(fx.ws.join("hello.txt"))?, b"replaced");
    let mode = std::fs::metadata(fx.ws.join("hello.txt"))?
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o640);
    fx.root.write("fresh/dir/new.txt", b"new", true)?;
    assert_eq!(std::fs::read(fx.ws.join("fresh/dir/new.txt"))?, b"new");
    // No temporary file is left behind.
    let leftovers: Vec<String> = fx
        .root
        .list("", true)?
        .into_iter()
        .map(|e| e.path)
        .filter(|p| p.contains(".bridge-tmp-"))
        .collect();
    assert_eq!(leftovers, Vec::<String>::new());
    Ok(())
}

#[test]
fn wrong_kinds_of_path_get_precise_errors() -> anyhow::Result<()> {
    let fx = fixture()?;
    assert!(matches!(
        fx.root.read("sub", 10),
        Err(ConfineError::NotAFile { .. })
    ));
    assert!(matches!(
        fx.root.read("", 10),
        Err(ConfineError::NotAFile { .. })
    ));
    assert!(matches!(
        fx.root.create_new("", b"x"),
        Err(ConfineError::NotAFile { .. })
    ));
    assert!(matches!(
        fx.root.replace(".", b"x"),
        Err(ConfineError::NotAFile { .. })
    ));
    assert!(matches!(
        fx.root.replace("sub", b"x"),
        Err(ConfineError::NotAFile { .. })
    ));
    assert!(matches!(
        fx.root.list("hello.txt", false),
        Err(ConfineError::NotADirectory { .. })
    ));
    assert!(matches!(
        fx.root.create_new("hello.txt/x", b"x"),
        Err(ConfineError::NotADirectory { .. })
    ));
    assert!(matches!(
        fx.root.read("nope.txt", 10),
        Err(ConfineError::NotFound { .. })
    ));
    assert!(matches!(
        fx.root.list("nope", false),
        Err(ConfineError::NotFound { .. })
    ));
    std::fs::write(fx.ws.join("latin1.txt"), [0xe9, 0x74, 0xe9])?;
    assert!(matches!(
        fx.root.read_to_string("latin1.txt", 10),
        Err(ConfineError::NotUtf8 { .. })
    ));
    assert_eq!(fx.root.read("latin1.txt", 10)?, [0xe9, 0x74, 0xe9]);
    Ok(())
}

#[test]
fn files_over_the_limit_are_refused_naming_the_limit() -> anyhow::Result<()> {
    let fx = fixture()?;
    assert_eq!(fx.root.read("hello.txt", 5)?, b"hello");
    match fx.root.read("hello.txt", 4) {
        Err(err @ ConfineError::TooLarge { limit: 4, .. }) => {
            assert!(err.to_string().contains("4-byte"));
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    Ok(())
}

#[test]
fn longest_allowed_name_works() -> anyhow::Result<()> {
    let fx = fixture()?;
    let name = format!("sub/{}", "é".repeat(MAX_NAME_BYTES / 2));
    fx.root.create_new(&name, b"long")?;
    assert_eq!(fx.root.read(&name, 10)?, b"long");
    Ok(())
}

#[test]
fn metadata_follows_inside_links_and_reports_kind_and_size() -> anyhow::Result<()> {
    let fx = fixture()?;
    let info = fx.root.metadata("link_in")?;
    let expected = FileInfo {
        kind: EntryKind::File,
        len: 5,
        modified: info.modified,
    };
    assert_eq!(info, expected);
    assert!(info.modified.is_some());
    assert_eq!(fx.root.metadata("")?.kind, EntryKind::Dir);
    Ok(())
}

/// Runs `f` on another thread and fails if it has not finished within a few seconds.
fn within_seconds<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> anyhow::Result<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    Ok(rx.recv_timeout(Duration::from_secs(5))?)
}

#[test]
fn fifos_and_sockets_are_never_read_or_replaced_and_never_block() -> anyhow::Result<()> {
    let fx = fixture()?;
    rustix::fs::mknodat(
        rustix::fs::CWD,
        fx.ws.join("fifo"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        /* dev */ 0,
    )?;
    let _listener = std::os::unix::net::UnixListener::bind(fx.ws.join("socket"))?;
    symlink("fifo", fx.ws.join("link_fifo"))?;
    for path in ["fifo", "socket", "link_fifo"] {
        let root = fx.root.clone();
        let owned = path.to_owned();
        let read = within_seconds(move || root.read(&owned, 10))?;
        assert!(
            matches!(read, Err(ConfineError::NotAFile { .. })),
            "{path}: {read:?}"
        );
        assert_eq!(fx.root.metadata(path)?.kind, EntryKind::Other);
        assert!(
            matches!(
                fx.root.replace(path, b"x"),
                Err(ConfineError::NotAFile { .. })
            ),
            "{path}"
        );
    }
    let listed: Vec<(String, EntryKind)> = fx
        .root
        .list("", false)?
        .into_iter()
        .filter(|e| e.path.contains("fifo") || e.path == "socket")
        .map(|e| (e.path, e.kind))
        .collect();
    assert_eq!(
        listed,
        vec![
            ("fifo".to_owned(), EntryKind::Other),
            ("link_fifo".to_owned(), EntryKind::Symlink),
            ("socket".to_owned(), EntryKind::Other),
        ]
    );
    Ok(())
}

#[test]
fn device_nodes_are_refused_without_being_opened() -> anyhow::Result<()> {
    let fx = fixture()?;
    // A character device like /dev/null (1, 3); creating one needs CAP_MKNOD.
    let made = rustix::fs::mknodat(
        rustix::fs::CWD,
        fx.ws.join("null"),
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o666),
        rustix::fs::makedev(1, 3),
    );
    if let Err(err) = made {
        eprintln!("cannot create a device node here ({err}); device case not exercised");
        return Ok(());
    }
    assert!(matches!(
        fx.root.read("null", 10),
        Err(ConfineError::NotAFile { .. })
    ));
    assert_eq!(fx.root.metadata("null")?.kind, EntryKind::Other);
    Ok(())
}

#[test]
fn hard_links_are_read_as_the_inode_they_are_but_writes_never_reach_the_other_name()
-> anyhow::Result<()> {
    let fx = fixture()?;
    let outside_file = fx.base.join("outside/linked.txt");
    std::fs::write(&outside_file, "shared inode")?;
    std::fs::hard_link(&outside_file, fx.ws.join("hard.txt"))?;
    // Documented: the name is inside the root, so the inode is readable through it.
    assert_eq!(fx.root.read_to_string("hard.txt", 100)?, "shared inode");
    // Writing replaces the name with a new inode; the outside name keeps its content.
    fx.root.replace("hard.txt", PAYLOAD)?;
    assert_eq!(std::fs::read_to_string(&outside_file)?, "shared inode");
    assert_eq!(fx.root.read("hard.txt", 100)?, PAYLOAD);
    assert!(matches!(
        fx.root.create_new("hard.txt", PAYLOAD),
        Err(ConfineError::AlreadyExists { .. })
    ));
    Ok(())
}

#[test]
fn listing_is_bounded_in_entries_and_depth() -> anyhow::Result<()> {
    // Small bounds: tens of thousands of files would make this test slow on a journaling disk.
    let limits = ListLimits {
        max_entries: 50,
        max_depth: 4,
    };
    assert_eq!(
        ListLimits::default(),
        ListLimits {
            max_entries: MAX_LIST_ENTRIES,
            max_depth: MAX_LIST_DEPTH
        }
    );
    let fx = fixture()?;
    std::fs::create_dir(fx.ws.join("many"))?;
    for i in 0..limits.max_entries {
        std::fs::File::create(fx.ws.join(format!("many/{i}")))?;
    }
    assert_eq!(
        fx.root.list_with_limits("many", false, limits)?.len(),
        limits.max_entries
    );
    std::fs::File::create(fx.ws.join("many/one-too-many"))?;
    match fx.root.list_with_limits("many", false, limits) {
        Err(ConfineError::TooManyEntries { path, limit }) => {
            assert_eq!((path.as_str(), limit), ("many", limits.max_entries));
        }
        other => panic!("expected TooManyEntries, got {:?}", other.map(|e| e.len())),
    }
    // Recursion counts entries across levels too.
    assert!(matches!(
        fx.root.list_with_limits("", true, limits),
        Err(ConfineError::TooManyEntries { .. })
    ));

    let levels = vec!["d"; limits.max_depth + 1].join("/");
    std::fs::create_dir_all(fx.ws.join("deep").join(&levels))?;
    assert!(matches!(
        fx.root.list_with_limits("deep", true, limits),
        Err(ConfineError::TooDeep { .. })
    ));
    assert_eq!(fx.root.list_with_limits("deep", false, limits)?.len(), 1);
    // One level down, the tree fits exactly: `d` plus `max_depth` levels below it.
    assert_eq!(
        fx.root.list_with_limits("deep/d", true, limits)?.len(),
        limits.max_depth
    );
    Ok(())
}

/// A tree for the swap races: `ws/d` is a real directory; `ws/d_rel` and `ws/d_abs` are links
/// to `outside` (relative and absolute) that another thread keeps swapping in for `d`.
struct Race {
    fx: Fixture,
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicU64>,
}

/// How the swapper replaces `d` with a link to outside and back.
#[derive(Clone, Copy)]
enum Swap {
    /// Four renames, with moments where `d` is missing: the dance the MCP filesystem server
    /// race used.
    RenameDance,
    /// `renameat2(RENAME_EXCHANGE)`: `d` is always there, atomically a directory or a link.
    Exchange,
}

fn start_swapping(
    swap: Swap,
) -> anyhow::Result<(Race, std::thread::JoinHandle<std::io::Result<()>>)> {
    let fx = fixture()?;
    std::fs::create_dir(fx.ws.join("d"))?;
    std::fs::write(fx.ws.join("d/secret.txt"), "inside")?;
    std::fs::write(fx.ws.join("d/inside-only.txt"), "inside")?;
    std::fs::write(fx.base.join("outside/outside-only.txt"), SECRET)?;
    symlink("../outside", fx.ws.join("d_rel"))?;
    symlink(fx.base.join("outside"), fx.ws.join("d_abs"))?;
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let ws = fx.ws.clone();
    let (stop_flag, counter) = (Arc::clone(&stop), Arc::clone(&swaps));
    let swapper = std::thread::spawn(move || -> std::io::Result<()> {
        let (d, real) = (ws.join("d"), ws.join("d_real"));
        for round in 0u64.. {
            if stop_flag.load(Ordering::Relaxed) {
                break;
            }
            // Alternate relative and absolute links out.
            let link = ws.join(if round % 2 == 0 { "d_rel" } else { "d_abs" });
            match swap {
                Swap::RenameDance => {
                    std::fs::rename(&d, &real)?;
                    std::fs::rename(&link, &d)?;
                    std::fs::rename(&d, &link)?;
                    std::fs::rename(&real, &d)?;
                }
                Swap::Exchange => {
                    for _ in 0..2 {
                        rustix::fs::renameat_with(
                            rustix::fs::CWD,
                            &d,
                            rustix::fs::CWD,
                            &link,
                            rustix::fs::RenameFlags::EXCHANGE,
                        )?;
                    }
                }
            }
            counter.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    });
    Ok((Race { fx, stop, swaps }, swapper))
}

/// The check-then-open read the official MCP filesystem server does: resolve, check the prefix,
/// then open by name. Only for the comparison printed by the race test.
fn naive_read(ws: &Path, user: &str) -> Option<String> {
    let resolved = std::fs::canonicalize(ws.join(user)).ok()?;
    if !resolved.starts_with(ws) {
        return None;
    }
    std::fs::read_to_string(ws.join(user)).ok()
}

#[test]
fn symlink_swap_race_never_lets_a_read_see_outside() -> anyhow::Result<()> {
    const READS: usize = 5_000;
    let (race, swapper) = start_swapping(Swap::RenameDance)?;
    let started = Instant::now();
    let (mut inside, mut refused, mut leaked, mut naive_leaked) = (0, 0, 0, 0);
    for _ in 0..READS {
        match race.fx.root.read_to_string("d/secret.txt", 100) {
            Ok(text) if text == "inside" => inside += 1,
            Ok(text) if text.contains(SECRET) => leaked += 1,
            Ok(other) => panic!("unexpected content {other:?}"),
            Err(ConfineError::Escapes { .. } | ConfineError::NotFound { .. }) => refused += 1,
            Err(other) => panic!("unexpected error {other:?}"),
        }
        if naive_read(&race.fx.ws, "d/secret.txt").is_some_and(|t| t.contains(SECRET)) {
            naive_leaked += 1;
        }
    }
    race.stop.store(true, Ordering::Relaxed);
    swapper
        .join()
        .map_err(|_| anyhow::anyhow!("swapper panicked"))??;
    eprintln!(
        "{READS} confined reads in {:?} during {} swaps: {inside} inside, {refused} refused, \
         {leaked} leaked; check-then-open leaked {naive_leaked}",
        started.elapsed(),
        race.swaps.load(Ordering::Relaxed),
    );
    assert_eq!(leaked, 0);
    assert_eq!(inside + refused, READS);
    Ok(())
}

#[test]
fn symlink_swap_race_never_lets_a_write_or_listing_reach_outside() -> anyhow::Result<()> {
    const ROUNDS: usize = 1_000;
    // Writes create missing parents, so the dance's moments without `d` would let them make a
    // real `d`; the atomic exchange keeps `d` always present.
    let (race, swapper) = start_swapping(Swap::Exchange)?;
    let before = snapshot_outside(&race.fx.base)?;
    let root = &race.fx.root;
    let (mut listed_outside, mut written, mut refused) = (0, 0, 0);
    for i in 0..ROUNDS {
        // Refusals are expected while `d` is a link; only where things land matters.
        let results = [
            root.create_new(&format!("d/new-{i}.txt"), PAYLOAD),
            root.replace("d/secret.txt", b"inside"),
            root.replace(&format!("d/sub{i}/file.txt"), PAYLOAD),
        ];
        for result in results {
            match result {
                Ok(()) => written += 1,
                Err(ConfineError::Escapes { .. } | ConfineError::NotFound { .. }) => refused += 1,
                Err(other) => panic!("unexpected error {other:?}"),
            }
        }
        if let Ok(entries) = root.list("d", true) {
            listed_outside += entries
                .iter()
                .filter(|e: &&Entry| e.path.contains("outside-only"))
                .count();
        }
    }
    race.stop.store(true, Ordering::Relaxed);
    swapper
        .join()
        .map_err(|_| anyhow::anyhow!("swapper panicked"))??;
    eprintln!(
        "{ROUNDS} rounds during {} swaps: {written} writes landed inside, {refused} refused",
        race.swaps.load(Ordering::Relaxed)
    );
    assert_eq!(listed_outside, 0);
    assert_eq!(snapshot_outside(&race.fx.base)?, before);
    Ok(())
}

#[test]
fn root_must_be_an_existing_directory() -> anyhow::Result<()> {
    let fx = fixture()?;
    for path in [fx.ws.join("hello.txt"), fx.ws.join("missing")] {
        match Root::open(&path) {
            Err(err @ ConfineError::RootUnavailable { .. }) => {
                assert!(err.to_string().contains("check that it exists"), "{err}");
            }
            other => panic!(
                "{}: expected RootUnavailable, got {other:?}",
                path.display()
            ),
        }
    }
    Ok(())
}
