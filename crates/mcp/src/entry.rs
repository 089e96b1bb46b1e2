//! What both binaries do around their work: the async runtime they run on, and turning the
//! outcome of a command into an exit code with the error's whole chain on stderr.

use std::fmt::Display;
use std::process::ExitCode;

/// The multi-threaded runtime every async command runs on. Two workers: the machines this runs
/// on are small, and the servers' work is I/O bound (the heavy work runs on the blocking pool).
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// The exit code of a command's `outcome`; an error is logged and printed as
/// `program: error: cause: …` (its `{:#}` form) on stderr, the last word before exiting.
pub fn finish<E: Display>(program: &str, outcome: Result<ExitCode, E>) -> ExitCode {
    match outcome {
        Ok(code) => code,
        Err(err) => {
            tracing::error!("{err:#}");
            crate::serve::tell_person(&format!("{program}: {err:#}"));
            ExitCode::FAILURE
        }
    }
}
