//! The subcommands for a person at a terminal. Each receives the resolved configuration and
//! builds its own runtime; none reaches back into the command-line parser.

/// `copilot-bridge exec`: one task from a terminal.
pub(crate) mod exec;
/// `copilot-bridge orchestrate`: a planned, parallel task from a terminal.
pub(crate) mod orchestrate;
/// `copilot-bridge redact`: secrets out of a stream.
pub(crate) mod redact;
/// `copilot-bridge register` and `unregister`: our servers in an MCP client's configuration.
pub(crate) mod register;
/// What `exec` and `orchestrate` share: one call through the in-process bridge, progress on
/// stderr, the result on stdout, Ctrl-C.
mod terminal;
/// `copilot-bridge validate`: is everything wired up?
pub(crate) mod validate;
