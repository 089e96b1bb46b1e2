//! A real OpenClaw gateway (npm `openclaw`, installed by `scripts/peers/openclaw.sh`), onboarded
//! headless with a temporary HOME and run on a free loopback port with token auth. It takes
//! 15–45 s to start and about 1 GB of memory, so only one runs at a time in a test process:
//! [`OpenclawGateway::slot`] hands out the turn.

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tokio::sync::{Mutex, MutexGuard};

use crate::peers::openclaw;

/// The gateway token every test gateway uses.
pub const GATEWAY_TOKEN: &str = "bridge-e2e-gateway-token";
/// First start of the gateway on 2 busy cores can take most of a minute.
const READY_TIMEOUT: Duration = Duration::from_mins(3);

/// One gateway at a time in this process.
static SLOT: Mutex<()> = Mutex::const_new(());

/// A running gateway; its whole process group is killed on drop.
#[derive(Debug)]
pub struct OpenclawGateway {
    child: Child,
    home: PathBuf,
    port: u16,
}

impl Drop for OpenclawGateway {
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.child.wait();
    }
}

/// A free loopback port.
pub fn free_port() -> anyhow::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// The `openclaw` CLI for the user whose home is `home`, with the gateway token.
pub fn openclaw_command(home: &Path) -> Command {
    let mut cmd = Command::new(openclaw());
    cmd.env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("OPENCLAW_GATEWAY_TOKEN", GATEWAY_TOKEN)
        .current_dir(home);
    cmd
}

impl OpenclawGateway {
    /// Waits for this process's turn to run a gateway; hold the guard while it runs.
    pub async fn slot() -> MutexGuard<'static, ()> {
        SLOT.lock().await
    }

    /// `openclaw onboard` (non-interactive, local, token auth on `port`) for `home`.
    pub fn onboard(home: &Path, port: u16) -> anyhow::Result<()> {
        let port = port.to_string();
        let output = openclaw_command(home)
            .args([
                "onboard",
                "--non-interactive",
                "--accept-risk",
                "--mode",
                "local",
                "--flow",
                "manual",
                "--auth-choice",
                "skip",
                "--gateway-auth",
                "token",
                "--gateway-token",
                GATEWAY_TOKEN,
                "--gateway-bind",
                "loopback",
                "--gateway-port",
                &port,
                "--skip-channels",
                "--skip-daemon",
                "--no-install-daemon",
                "--skip-health",
                "--skip-search",
                "--skip-skills",
                "--skip-ui",
                "--skip-hooks",
                "--json",
            ])
            .stdin(Stdio::null())
            .output()?;
        anyhow::ensure!(
            output.status.success(),
            "openclaw onboard failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        Ok(())
    }

    /// Runs the gateway of the onboarded `home` on `port` and waits until `/readyz` answers.
    pub fn start(home: &Path, port: u16) -> anyhow::Result<Self> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(home.join("gateway.log"))?;
        let child = openclaw_command(home)
            .args([
                "gateway",
                "run",
                "--port",
                &port.to_string(),
                "--bind",
                "loopback",
            ])
            .args(["--auth", "token", "--allow-unconfigured"])
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .process_group(0)
            .spawn()?;
        let gateway = Self {
            child,
            home: home.to_path_buf(),
            port,
        };
        let started = Instant::now();
        while !ready(port) {
            anyhow::ensure!(
                started.elapsed() < READY_TIMEOUT,
                "the gateway was not ready within {READY_TIMEOUT:?}: {}",
                gateway.log()
            );
            std::thread::sleep(Duration::from_millis(500));
        }
        Ok(gateway)
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// What it logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.home.join("gateway.log")).unwrap_or_default()
    }
}

fn ready(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request = "GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response.starts_with("HTTP/1.1 200")
}
