//! Finds the workspace's binaries from inside a test executable. Tests in one package cannot use
//! `CARGO_BIN_EXE_*` for another package's binaries, so we look in the target profile directory,
//! which is the grandparent of `target/<profile>/deps/<test>`; that also honours
//! `CARGO_TARGET_DIR`.

use std::path::PathBuf;

/// Returns the path of the workspace binary `name` built for the current profile.
///
/// Panics with the command to run when the binary has not been built: a missing binary is a
/// setup mistake, not a test failure worth a retry.
pub fn binary_path(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable has a path");
    let profile_dir = exe
        .parent()
        .and_then(std::path::Path::parent)
        .expect("test executables live in target/<profile>/deps");
    let path = profile_dir.join(name);
    assert!(
        path.is_file(),
        "{} is missing: run `cargo build --workspace --bins` first",
        path.display()
    );
    path
}
