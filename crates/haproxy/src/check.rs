//! `haproxy -c`: the configuration is checked before it may go live (invariant I4).
//!
//! The check runs with stdin from `/dev/null`, in a process group of its own, and within a
//! time limit: nothing in the configuration (an encrypted private key asking for its pass
//! phrase, a file that blocks) can hold the controller up.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use crate::state_dir::StateDirError;

/// How long `haproxy -c` may run before it is killed. It takes 0.16 s for 5,000 backends
/// and a few seconds for 100,000; a minute means it is stuck.
pub const CHECK_TIME_LIMIT: Duration = Duration::from_secs(60);

/// A configuration HAProxy refused, with what it said.
#[derive(Debug, Clone, thiserror::Error)]
#[error("haproxy rejected the configuration:\n{output}")]
pub struct CheckFailure {
    /// HAProxy's alerts, one per line.
    pub output: String,
}

/// Why a configuration did not pass its check, by what the caller does next.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// HAProxy refused it: leave out what it blames; trying again cannot help.
    #[error(transparent)]
    Rejected(#[from] CheckFailure),
    /// It could not be staged: try again later.
    #[error("cannot stage the configuration: {0}")]
    Staging(#[source] StateDirError),
    /// `haproxy` could not be run: try again later.
    #[error("cannot run {binary}: {source}")]
    Spawn {
        /// The executable.
        binary: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// It ran past the time limit and was killed with its process group: try again later.
    #[error("haproxy -c did not finish within {0:?} and was killed")]
    TimedOut(Duration),
}

/// The `-f` arguments that load a configuration directory: main file, then shards.
pub(crate) fn config_args(dir: &Path) -> [std::ffi::OsString; 4] {
    [
        "-f".into(),
        dir.join(render::layout::MAIN_CONFIG).into_os_string(),
        "-f".into(),
        dir.join(render::layout::BACKENDS_DIR).into_os_string(),
    ]
}

/// Checks the configuration in `dir` with `haproxy -c`, within [`CHECK_TIME_LIMIT`].
pub async fn check_config(haproxy_bin: &Path, dir: &Path) -> Result<(), CheckError> {
    check_config_within(haproxy_bin, dir, CHECK_TIME_LIMIT).await
}

/// Checks the configuration in `dir` with `haproxy -c`, killing it (and anything it
/// started) after `limit`.
pub async fn check_config_within(
    haproxy_bin: &Path,
    dir: &Path,
    limit: Duration,
) -> Result<(), CheckError> {
    let mut child = tokio::process::Command::new(haproxy_bin)
        .arg("-c")
        .args(config_args(dir))
        // As for `run`: a server's client certificate is found from the working directory.
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // A group of its own: were a terminal still within reach (a pass phrase prompt),
        // it is a background job the terminal stops rather than one waiting for typing,
        // and a timeout kills whatever it started along with it.
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| CheckError::Spawn {
            binary: haproxy_bin.display().to_string(),
            source,
        })?;
    let group = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .and_then(rustix::process::Pid::from_raw);
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let finished = tokio::time::timeout(limit, async {
        let (status, stdout, stderr) =
            tokio::join!(child.wait(), read_all(stdout), read_all(stderr));
        status.map(|status| (status, stdout, stderr))
    })
    .await;
    let (status, stdout, stderr) = match finished {
        Ok(finished) => finished.map_err(|source| CheckError::Spawn {
            binary: haproxy_bin.display().to_string(),
            source,
        })?,
        Err(_) => {
            // Killed before the leader is reaped, or while a member it left holds the
            // pipes: either way the group's id is still its own.
            if let Some(group) = group {
                let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
            }
            let _ = child.kill().await;
            return Err(CheckError::TimedOut(limit));
        }
    };
    if status.success() {
        return Ok(());
    }
    let mut text = String::from_utf8_lossy(&stderr).into_owned();
    text.push_str(&String::from_utf8_lossy(&stdout));
    let alerts: Vec<&str> = text.lines().filter(|l| l.contains("[ALERT]")).collect();
    let output = if alerts.is_empty() {
        text.trim().to_owned()
    } else {
        alerts.join("\n")
    };
    Err(CheckFailure { output }.into())
}

/// Everything a pipe gives until it closes; a read error ends it early.
async fn read_all(pipe: Option<impl tokio::io::AsyncRead + Unpin>) -> Vec<u8> {
    let mut bytes = Vec::new();
    if let Some(mut pipe) = pipe {
        let _ = tokio::io::AsyncReadExt::read_to_end(&mut pipe, &mut bytes).await;
    }
    bytes
}
