//! Long-lived Copilot sessions as MCP tools (`copilot_session_*`): a session runs its queries
//! one turn at a time on the shared Copilot CLI, and queues what happens as events in the
//! order they were generated, for `copilot_session_live` to read.

/// One event, in the callback shape of the session API.
pub(crate) mod event;
/// ACP updates of a turn → events.
mod mapper;
/// The bounded, lossless event queue.
mod queue;
/// One session and the worker running its turns.
mod session;
/// Every session by id, and the idle reaper.
mod sessions;

pub(crate) use self::event::LiveEvent;
pub(crate) use self::session::Poll;
pub(crate) use self::sessions::{LiveOutcome, LiveSessions, QueryOutcome, SessionSummary};
