//! The `openclaw-memory` binary: parses the command line and hands off to the library.

fn main() -> std::process::ExitCode {
    openclaw_memory::main_entry()
}
