//! The HAProxy master-worker process: start, seamless reload, graceful stop.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};

use crate::check::config_args;
use crate::master_cli::{MasterCli, ProcStatus};
use crate::sockets::Sockets;

/// How to run HAProxy.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// The `haproxy` executable.
    pub binary: PathBuf,
    /// The (absolute) state directory holding the live configuration.
    pub state_dir: PathBuf,
    /// Where its sockets live, from [`crate::StateDir::prepare_sockets`].
    pub sockets: Sockets,
    /// Whether HAProxy writes to the controller's standard output, where `log stdout`
    /// sends the access logs; otherwise its standard output is discarded.
    pub share_stdout: bool,
}

/// What went wrong with the HAProxy process.
#[derive(Debug, thiserror::Error)]
pub enum HaproxyError {
    /// It could not be started.
    #[error("cannot start {binary}: {source}")]
    Spawn {
        /// The executable.
        binary: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// It exited during start-up.
    #[error("haproxy exited during start-up ({0})")]
    ExitedAtStart(std::process::ExitStatus),
    /// The master CLI failed.
    #[error("master CLI: {0}")]
    MasterCli(#[from] std::io::Error),
    /// No worker came up in time.
    #[error("haproxy started no worker within {0:?}")]
    NoWorker(Duration),
    /// The master reported a failed reload; the old worker keeps serving.
    #[error("haproxy failed to load the new configuration; the previous one keeps serving")]
    ReloadFailed,
    /// The reload did not complete in time.
    #[error("reload did not complete within {0:?}")]
    ReloadTimeout(Duration),
    /// The directory of its sockets could not be made.
    #[error("the directory of haproxy's sockets: {0}")]
    Sockets(#[from] crate::StateDirError),
}

/// How long the master CLI may refuse connections or take to answer.
const PATIENCE: Duration = Duration::from_secs(10);
/// How long loading a configuration may take: HAProxy needs about 20 s for 100,000
/// backends on a small machine.
const LOAD_PATIENCE: Duration = Duration::from_secs(180);

/// Tells the master `pid` (not a child of this process) to let its workers finish their
/// connections and exit, as a reload does with an old worker; unless `pid` is no longer
/// an HAProxy (it exited, and the number went to another process).
pub fn finish_and_stop(pid: u32) {
    let still_haproxy = std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .is_ok_and(|name| name.trim() == "haproxy");
    if still_haproxy {
        signal(pid, rustix::process::Signal::USR1);
    }
}

/// Sends `signal` to process `pid`; one that is gone is no error.
fn signal(pid: u32, signal: rustix::process::Signal) {
    if let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process(pid, signal);
    }
}

/// What a reload did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reloaded {
    /// `show proc` after it.
    pub status: ProcStatus,
    /// The workers it replaced, now finishing their connections.
    pub replaced: Vec<u32>,
}

/// A running HAProxy in master-worker mode.
#[derive(Debug)]
pub struct Haproxy {
    child: Child,
    master: MasterCli,
}

impl Haproxy {
    /// Starts HAProxy on the configuration in the state directory and waits for its
    /// first worker.
    pub async fn start(options: &LaunchOptions) -> Result<Self, HaproxyError> {
        Self::start_after(options, &mut None).await
    }

    /// As [`Haproxy::start`], after an HAProxy that a portcullis killed outright left
    /// running on this state directory (the directory's lock keeps out a live one): one
    /// that answers on the master socket is noted in `left_behind` (kept there across
    /// failed starts, since its socket is removed for the new one), and told to finish its
    /// connections and stop once the new one serves, so that one configuration answers,
    /// the one this process follows.
    pub async fn start_after(
        options: &LaunchOptions,
        left_behind: &mut Option<u32>,
    ) -> Result<Self, HaproxyError> {
        options.sockets.restore(&options.state_dir)?;
        let socket = options.sockets.master();
        if left_behind.is_none() {
            *left_behind = MasterCli::new(&socket)
                .show_proc(Duration::ZERO)
                .await
                .ok()
                .map(|status| status.master);
        }
        // A socket left by an earlier run would make the master fail to bind.
        let _ = std::fs::remove_file(&socket);
        let mut child = Command::new(&options.binary)
            .arg("-W")
            .arg("-S")
            .arg(options.sockets.master_argument())
            .args(config_args(&options.state_dir))
            // The rendered `stats socket unix@run/admin.sock` is bound relative to it.
            .current_dir(options.sockets.working_dir())
            .stdin(Stdio::null())
            .stdout(if options.share_stdout {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| HaproxyError::Spawn {
                binary: options.binary.display().to_string(),
                source,
            })?;
        if let Some(stderr) = child.stderr.take() {
            tokio::spawn(crate::log_relay::forward_log(stderr));
        }
        let mut haproxy = Self {
            child,
            master: MasterCli::new(socket),
        };
        let deadline = tokio::time::Instant::now() + LOAD_PATIENCE;
        loop {
            if let Some(status) = haproxy.child.try_wait()? {
                return Err(HaproxyError::ExitedAtStart(status));
            }
            if let Ok(proc_status) = haproxy.master.show_proc(Duration::from_millis(200)).await
                && !proc_status.workers.is_empty()
            {
                if let Some(orphan) = left_behind.take().filter(|pid| Some(*pid) != haproxy.pid()) {
                    tracing::warn!(
                        pid = orphan,
                        "an haproxy left running by an earlier portcullis of this state directory now finishes its connections and stops"
                    );
                    finish_and_stop(orphan);
                }
                return Ok(haproxy);
            }
            if tokio::time::Instant::now() > deadline {
                haproxy.stop(Duration::from_secs(1)).await;
                return Err(HaproxyError::NoWorker(LOAD_PATIENCE));
            }
            tokio::time::sleep(crate::master_cli::RETRY_INTERVAL).await;
        }
    }

    /// A client of the master's CLI.
    pub fn master_cli(&self) -> MasterCli {
        self.master.clone()
    }

    /// The master's PID.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Reloads through the master CLI: the master re-executes itself, the new worker takes
    /// the listening sockets over, and the old one finishes its connections. The outcome is
    /// read from `show proc`, since 2.6 answers `reload` with nothing.
    pub async fn reload(&mut self) -> Result<Reloaded, HaproxyError> {
        let before = self.master.show_proc(PATIENCE).await?;
        self.master.command("reload", PATIENCE).await?;
        let deadline = tokio::time::Instant::now() + LOAD_PATIENCE;
        loop {
            if let Ok(after) = self.master.show_proc(PATIENCE).await {
                if after.failed_reloads > before.failed_reloads {
                    return Err(HaproxyError::ReloadFailed);
                }
                if after.reloads > before.reloads && !after.workers.is_empty() {
                    let replaced = before
                        .workers
                        .iter()
                        .copied()
                        .filter(|pid| after.old_workers.contains(pid))
                        .collect();
                    return Ok(Reloaded {
                        status: after,
                        replaced,
                    });
                }
            }
            if tokio::time::Instant::now() > deadline {
                return Err(HaproxyError::ReloadTimeout(LOAD_PATIENCE));
            }
            tokio::time::sleep(crate::master_cli::RETRY_INTERVAL).await;
        }
    }

    /// Waits until the master exits on its own.
    pub async fn exited(&mut self) -> std::io::Result<std::process::ExitStatus> {
        self.child.wait().await
    }

    /// Starts a new HAProxy on the same files to take this one's place, for when its
    /// master can no longer be reached (its socket was removed): the new one binds the
    /// ports beside it, then this one is told to finish its connections and stop.
    /// Returns this one, to be waited for (see [`Haproxy::stop`]).
    pub async fn replace(&mut self, options: &LaunchOptions) -> Result<Self, HaproxyError> {
        let successor = Self::start(options).await?;
        let predecessor = std::mem::replace(self, successor);
        if let Some(pid) = predecessor.pid() {
            signal(pid, rustix::process::Signal::USR1);
        }
        Ok(predecessor)
    }

    /// Whether the master has exited (it is reaped then).
    pub fn has_exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// Stops gracefully: SIGUSR1 lets workers finish their connections; after `grace`,
    /// SIGTERM, then SIGKILL.
    pub async fn stop(&mut self, grace: Duration) {
        let Some(pid) = self.pid() else {
            return;
        };
        for (sent, wait) in [
            (rustix::process::Signal::USR1, grace),
            (rustix::process::Signal::TERM, Duration::from_secs(2)),
        ] {
            signal(pid, sent);
            if tokio::time::timeout(wait, self.child.wait()).await.is_ok() {
                return;
            }
        }
        let _ = self.child.kill().await;
    }
}
