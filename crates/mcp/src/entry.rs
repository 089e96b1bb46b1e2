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

/// Runs `work` to completion on a fresh [`runtime`], then leaves at once: a thread still
/// blocked reading stdin (tokio reads stdin on a blocking thread, and the read only ends with
/// the process) must not hold the exit up.
pub fn block_on<F: std::future::Future>(work: F) -> std::io::Result<F::Output> {
    let runtime = runtime()?;
    let output = runtime.block_on(work);
    runtime.shutdown_background();
    Ok(output)
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
