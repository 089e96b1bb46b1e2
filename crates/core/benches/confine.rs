//! Cost of confinement: confined reads, writes, listings and path normalization next to the
//! unconfined `std::fs` calls they replace. Run with `cargo bench -p bridge-core --bench confine`.
#![expect(
    clippy::expect_used,
    reason = "a benchmark has no caller to hand errors to: failed setup or a failed call must stop it"
)]

use std::hint::black_box;
use std::path::Path;

use bridge_core::confine::Root;
use criterion::{Criterion, criterion_group, criterion_main};

/// Bytes in the small file read and written: a typical source file or note.
const SMALL_FILE_BYTES: usize = 4096;
/// Files in the listed directory.
const LISTED_FILES: usize = 200;

fn setup(base: &Path) -> std::io::Result<()> {
    let nested = base.join("src/module/inner");
    std::fs::create_dir_all(&nested)?;
    std::fs::write(nested.join("file.rs"), vec![b'x'; SMALL_FILE_BYTES])?;
    std::os::unix::fs::symlink(nested.join("file.rs"), base.join("abs_link.rs"))?;
    std::fs::create_dir(base.join("many"))?;
    for i in 0..LISTED_FILES {
        std::fs::write(base.join(format!("many/file-{i}.txt")), b"x")?;
    }
    Ok(())
}

fn confine(c: &mut Criterion) {
    let tmp = tempfile::TempDir::new().expect("temp dir");
    setup(tmp.path()).expect("bench tree");
    let root = Root::open(tmp.path()).expect("root");
    let nested = "src/module/inner/file.rs";
    let payload = vec![b'y'; SMALL_FILE_BYTES];

    let mut group = c.benchmark_group("confine");
    group.bench_function("relative/lexical", |b| {
        b.iter(|| root.relative(black_box("src/./module/../module/inner/file.rs")));
    });
    group.bench_function("read/std_fs_unconfined", |b| {
        let path = tmp.path().join(nested);
        b.iter(|| std::fs::read(black_box(&path)).expect("read"));
    });
    group.bench_function("read/nested_4k", |b| {
        b.iter(|| root.read(black_box(nested), 1 << 20).expect("read"));
    });
    group.bench_function("read/absolute_symlink_inside", |b| {
        b.iter(|| root.read(black_box("abs_link.rs"), 1 << 20).expect("read"));
    });
    group.bench_function("read/escape_refused", |b| {
        b.iter(|| {
            root.read(black_box("../../etc/passwd"), 1 << 20)
                .expect_err("escape")
        });
    });
    group.bench_function("replace/nested_4k", |b| {
        b.iter(|| root.replace(black_box(nested), &payload).expect("replace"));
    });
    group.bench_function("list/200_files", |b| {
        b.iter(|| root.list(black_box("many"), false).expect("list"));
    });
    group.finish();
}

criterion_group!(benches, confine);
criterion_main!(benches);
