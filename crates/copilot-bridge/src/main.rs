//! The `copilot-bridge` binary: parses the command line and hands off to the library.

fn main() -> std::process::ExitCode {
    copilot_bridge::main_entry()
}
