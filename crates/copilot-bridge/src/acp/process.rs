//! The agent's operating-system process: started in a process group of its own with an explicit
//! environment, its stderr drained into tracing, and stopped (or found dead) without leaving
//! anything behind. The whole group is killed, not just the leader, because the agent starts
//! MCP servers and shells of its own that would otherwise outlive it.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bridge_core::sync::lock;

use rustix::process::{Pid, Signal, WaitOptions};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::watch;

use crate::acp::error::AcpError;

/// Lines of the agent's stderr kept to explain a crash.
const STDERR_TAIL_LINES: usize = 20;
/// Longest stderr line logged whole; longer ones are cut (a child may print a whole file).
const STDERR_LINE_MAX_CHARS: usize = 2000;
/// How long the exit watcher keeps reaping the group's orphans: they were just sent SIGKILL,
/// and the kernel delivers it within milliseconds.
const ORPHAN_REAP_WINDOW: Duration = Duration::from_secs(2);
/// Pause between reaping attempts.
const ORPHAN_REAP_STEP: Duration = Duration::from_millis(10);

/// What to start.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    /// The executable.
    pub(crate) program: PathBuf,
    /// Its arguments.
    pub(crate) args: Vec<OsString>,
    /// Its complete environment (nothing is inherited).
    pub(crate) env: Vec<(OsString, OsString)>,
    /// Its working directory.
    pub(crate) cwd: PathBuf,
}

/// A running (or finished) agent process.
#[derive(Debug)]
pub(crate) struct AgentProcess {
    /// The process id, which is also its process group id.
    pgid: Option<Pid>,
    /// Set once the process has exited and its group has been cleaned up.
    exit: watch::Receiver<Option<String>>,
    name: String,
}

/// Makes this process the reaper of orphans among its descendants (Linux's "child subreaper").
///
/// When the agent dies, the MCP servers and shells it started are orphaned. Without a
/// subreaper they are handed to PID 1, and in containers whose PID 1 does not reap (a plain
/// exec'd program), the killed orphans stay zombies forever. With it, they come back to us and
/// the agent's exit watcher reaps them. Call it once at startup, before any agent starts.
pub fn adopt_orphans() -> std::io::Result<()> {
    rustix::process::set_child_subreaper(Some(rustix::process::getpid())).map_err(Into::into)
}

fn describe(status: std::io::Result<ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Ok(status) => match (status.code(), status.signal()) {
            (Some(code), _) => format!("exited with code {code}"),
            (None, Some(signal)) => format!("was killed by signal {signal}"),
            (None, None) => "exited".to_owned(),
        },
        Err(err) => format!("could not be waited for: {err}"),
    }
}

fn signal_group(pgid: Pid, signal: Signal) {
    // ESRCH (nobody left in the group) is the normal case once the agent is gone.
    if let Err(err) = rustix::process::kill_process_group(pgid, signal)
        && err != rustix::io::Errno::SRCH
    {
        tracing::debug!(pgid = pgid.as_raw_nonzero().get(), %err, "cannot signal the agent's process group");
    }
}

/// Reaps members of the group that were re-parented to us (see [`adopt_orphans`]), until none
/// is left or the window closes. Harmless when we are not a subreaper: the call fails with
/// ECHILD at once.
async fn reap_group(pgid: Pid) {
    let deadline = tokio::time::Instant::now() + ORPHAN_REAP_WINDOW;
    loop {
        match rustix::process::waitpgid(pgid, WaitOptions::NOHANG) {
            Ok(Some(_)) => {}
            Ok(None) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(ORPHAN_REAP_STEP).await;
            }
            // ECHILD: nothing of the group is ours to reap any more.
            Ok(None) | Err(_) => return,
        }
    }
}

impl AgentProcess {
    /// Starts the agent with piped stdio in a new process group.
    pub(crate) fn spawn(
        launch: &Launch,
        name: &str,
    ) -> Result<(Self, ChildStdin, ChildStdout), AcpError> {
        let mut command = Command::new(&launch.program);
        command
            .args(&launch.args)
            .env_clear()
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&launch.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            // Its own group, so that killing the group also ends what the agent started.
            .process_group(0);
        let mut child = command.spawn().map_err(|source| {
            if source.kind() == std::io::ErrorKind::NotFound {
                AcpError::NotFound {
                    program: launch.program.display().to_string(),
                }
            } else {
                AcpError::Spawn {
                    program: launch.program.clone(),
                    source,
                }
            }
        })?;
        let pgid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .and_then(Pid::from_raw);
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(AcpError::Spawn {
                program: launch.program.clone(),
                source: std::io::Error::other("the child has no stdio pipes"),
            });
        };
        let tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL_LINES)));
        let stderr_done = tokio::spawn(drain_stderr(stderr, name.to_owned(), Arc::clone(&tail)));
        let (exit_tx, exit) = watch::channel(None);
        tokio::spawn(watch_exit(child, pgid, exit_tx, tail, stderr_done));
        tracing::info!(
            agent = name,
            pid = pgid.map(|p| p.as_raw_nonzero().get()),
            program = %launch.program.display(),
            "agent started"
        );
        Ok((
            Self {
                pgid,
                exit,
                name: name.to_owned(),
            },
            stdin,
            stdout,
        ))
    }

    /// The process id (also its process group id).
    pub(crate) fn pid(&self) -> Option<i32> {
        self.pgid.map(|p| p.as_raw_nonzero().get())
    }

    /// A receiver that turns `Some(description)` once the process has exited and its group
    /// has been cleaned up.
    pub(crate) fn exit_watch(&self) -> watch::Receiver<Option<String>> {
        self.exit.clone()
    }

    /// How the process ended, if it has.
    pub(crate) fn exit_description(&self) -> Option<String> {
        self.exit.borrow().clone()
    }

    /// Waits at most `limit` for the process to exit; returns whether it did.
    pub(crate) async fn wait_exit(&self, limit: Duration) -> bool {
        let mut exit = self.exit.clone();
        matches!(
            tokio::time::timeout(limit, exit.wait_for(Option::is_some)).await,
            Ok(Ok(_))
        )
    }

    /// Stops the process: waits `grace` for it to exit on its own (its stdin should already be
    /// closed), then SIGTERMs the group, waits `grace` again, then SIGKILLs the group. Returns
    /// how it ended.
    pub(crate) async fn stop(&self, grace: Duration) -> String {
        if !self.wait_exit(grace).await
            && let Some(pgid) = self.pgid
        {
            tracing::info!(agent = %self.name, "agent still running after its input closed; sending SIGTERM");
            signal_group(pgid, Signal::TERM);
            if !self.wait_exit(grace).await {
                tracing::warn!(agent = %self.name, "agent ignored SIGTERM; sending SIGKILL");
                signal_group(pgid, Signal::KILL);
                // SIGKILL cannot be ignored; the bound only guards against a stuck kernel.
                self.wait_exit(grace.max(Duration::from_secs(1))).await;
            }
        }
        self.exit_description()
            .unwrap_or_else(|| "did not exit".to_owned())
    }

    /// Kills the whole group at once (tests use it to simulate a crash).
    pub(crate) fn kill(&self) {
        if let Some(pgid) = self.pgid {
            signal_group(pgid, Signal::KILL);
        }
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        // Dropped without a finished stop: make sure nothing of the group survives us. The
        // leader itself is also killed by `kill_on_drop` and reaped by tokio.
        if self.exit.borrow().is_none()
            && let Some(pgid) = self.pgid
        {
            signal_group(pgid, Signal::KILL);
        }
    }
}

async fn drain_stderr(stderr: ChildStderr, name: String, tail: Arc<Mutex<VecDeque<String>>>) {
    let mut lines = BufReader::new(stderr).lines();
    loop {
        match lines.next_line().await {
            Ok(Some(line)) => {
                // Agents print tokens in error messages; logs and error texts must not carry them.
                let line = bridge_core::redact::Redactor::shared()
                    .redact(&line)
                    .into_owned();
                let line = if line.chars().count() > STDERR_LINE_MAX_CHARS {
                    let cut: String = line.chars().take(STDERR_LINE_MAX_CHARS).collect();
                    format!("{cut}…")
                } else {
                    line
                };
                tracing::info!(target: "acp::agent_stderr", agent = %name, "{line}");
                let mut tail = lock(&tail);
                if tail.len() == STDERR_TAIL_LINES {
                    tail.pop_front();
                }
                tail.push_back(line);
            }
            Ok(None) => return,
            Err(err) => {
                tracing::debug!(agent = %name, %err, "stopped reading the agent's stderr");
                return;
            }
        }
    }
}

/// Waits for the leader to exit, then kills and reaps whatever is left of its group, and only
/// then reports the exit, so that "exited" always means "nothing of it is left".
async fn watch_exit(
    mut child: Child,
    pgid: Option<Pid>,
    exit_tx: watch::Sender<Option<String>>,
    tail: Arc<Mutex<VecDeque<String>>>,
    stderr_done: tokio::task::JoinHandle<()>,
) {
    let mut description = describe(child.wait().await);
    if let Some(pgid) = pgid {
        signal_group(pgid, Signal::KILL);
        reap_group(pgid).await;
    }
    // The pipe closes when the group is gone; bound the wait in case a stray holder remains.
    let _ = tokio::time::timeout(Duration::from_millis(500), stderr_done).await;
    let tail = lock(&tail);
    if !tail.is_empty() {
        let last: Vec<&str> = tail.iter().map(String::as_str).collect();
        description.push_str("; its last stderr lines: ");
        description.push_str(&last.join(" | "));
    }
    tracing::info!(pid = pgid.map(|p| p.as_raw_nonzero().get()), %description, "agent process ended");
    let _ = exit_tx.send(Some(description));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Launch {
        Launch {
            program: PathBuf::from("/bin/sh"),
            args: vec!["-c".into(), script.into()],
            env: vec![("PATH".into(), "/usr/bin:/bin".into())],
            cwd: std::env::temp_dir(),
        }
    }

    fn group_is_gone(pgid: i32) -> bool {
        let group = Pid::from_raw(pgid).expect("non-zero pid");
        rustix::process::test_kill_process_group(group) == Err(rustix::io::Errno::SRCH)
    }

    #[tokio::test]
    async fn a_missing_program_is_reported_with_the_fix() {
        let launch = Launch {
            program: PathBuf::from("/nonexistent/copilot"),
            ..sh("true")
        };
        let err = AgentProcess::spawn(&launch, "test").expect_err("no such program");
        let text = err.to_string();
        assert!(text.contains("COPILOT_CLI_PATH"), "{text}");
    }

    #[tokio::test]
    async fn the_environment_is_exactly_the_one_given() -> anyhow::Result<()> {
        let mut launch = sh("env > \"$OUT\"");
        let out = tempfile::NamedTempFile::new()?;
        launch
            .env
            .push(("OUT".into(), out.path().as_os_str().to_owned()));
        let (process, _stdin, _stdout) = AgentProcess::spawn(&launch, "test")?;
        assert!(process.wait_exit(Duration::from_secs(10)).await);
        let env = std::fs::read_to_string(out.path())?;
        let mut names: Vec<&str> = env
            .lines()
            .filter_map(|l| l.split_once('=').map(|(k, _)| k))
            .filter(|k| !["PWD", "SHLVL", "_"].contains(k))
            .collect();
        names.sort_unstable();
        assert_eq!(names, vec!["OUT", "PATH"]);
        Ok(())
    }

    #[tokio::test]
    async fn stop_escalates_to_sigkill_and_takes_the_whole_group() -> anyhow::Result<()> {
        // The leader ignores SIGTERM and has a grandchild in its group.
        let launch = sh("trap '' TERM; sleep 300 & while :; do sleep 0.05; done");
        let (process, stdin, _stdout) = AgentProcess::spawn(&launch, "test")?;
        drop(stdin);
        let pgid = process.pid().expect("pid");
        let ended = process.stop(Duration::from_millis(200)).await;
        assert!(ended.contains("signal 9"), "{ended}");
        // The grandchild was orphaned; we only reap it when we are its subreaper, so check
        // that it got the signal rather than that it was reaped.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let survivors = std::process::Command::new("pgrep")
            .args(["-g", &pgid.to_string()])
            .output()?;
        let alive: Vec<String> = String::from_utf8_lossy(&survivors.stdout)
            .lines()
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .is_ok_and(|stat| !stat.contains(") Z "))
            })
            .map(str::to_owned)
            .collect();
        assert!(alive.is_empty(), "still running in the group: {alive:?}");
        let _ = group_is_gone(pgid);
        Ok(())
    }

    #[tokio::test]
    async fn a_crash_is_described_with_the_last_stderr_lines() -> anyhow::Result<()> {
        let launch = sh("echo 'fatal: no config' >&2; exit 3");
        let (process, _stdin, _stdout) = AgentProcess::spawn(&launch, "test")?;
        assert!(process.wait_exit(Duration::from_secs(10)).await);
        let description = process.exit_description().expect("exited");
        assert!(description.contains("code 3"), "{description}");
        assert!(description.contains("fatal: no config"), "{description}");
        Ok(())
    }
}
