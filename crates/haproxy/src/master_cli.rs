//! The master CLI: commands to HAProxy's master process over its UNIX socket.

use std::path::PathBuf;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

/// What `show proc` says about the master and its workers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcStatus {
    /// The master's PID.
    pub master: u32,
    /// Reloads since the master started (failed ones included).
    pub reloads: u64,
    /// Failed reloads.
    pub failed_reloads: u64,
    /// PIDs of the current workers.
    pub workers: Vec<u32>,
    /// PIDs of workers replaced by a reload that still finish their connections.
    pub old_workers: Vec<u32>,
}

impl ProcStatus {
    /// Parses `show proc` output (HAProxy 2.6 and later).
    pub fn parse(text: &str) -> Option<Self> {
        let mut status = ProcStatus::default();
        let mut found_master = false;
        let mut section = "";
        for line in text.lines() {
            if let Some(header) = line.strip_prefix("# ") {
                section = header.trim();
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            match fields.as_slice() {
                [pid, "master", reloads, "[failed:", failed, ..] => {
                    status.master = pid.parse().ok()?;
                    status.reloads = reloads.parse().ok()?;
                    status.failed_reloads = failed.trim_end_matches(']').parse().ok()?;
                    found_master = true;
                }
                [pid, "worker", ..] if section == "workers" => {
                    status.workers.push(pid.parse().ok()?);
                }
                [pid, "worker", ..] if section == "old workers" => {
                    status.old_workers.push(pid.parse().ok()?);
                }
                _ => {}
            }
        }
        found_master.then_some(status)
    }
}

/// A client of the master socket.
#[derive(Debug, Clone)]
pub struct MasterCli {
    socket: PathBuf,
}

impl MasterCli {
    /// A client of the socket at `socket`.
    pub fn new(socket: impl Into<PathBuf>) -> Self {
        Self {
            socket: socket.into(),
        }
    }

    /// Sends one command and returns the reply. The master keeps the connection open until
    /// the client half-closes, so the write side is shut down after the command. While the
    /// master re-executes itself it refuses connections: those are retried for `patience`.
    pub async fn command(&self, command: &str, patience: Duration) -> std::io::Result<String> {
        let deadline = tokio::time::Instant::now() + patience;
        let mut stream = loop {
            match UnixStream::connect(&self.socket).await {
                Ok(stream) => break stream,
                Err(err) if tokio::time::Instant::now() < deadline && retryable(&err) => {
                    tokio::time::sleep(RETRY_INTERVAL).await;
                }
                Err(err) => return Err(err),
            }
        };
        stream.write_all(command.as_bytes()).await?;
        stream.write_all(b"\n").await?;
        stream.shutdown().await?;
        let mut reply = String::new();
        tokio::time::timeout(
            patience.max(Duration::from_secs(5)),
            stream.read_to_string(&mut reply),
        )
        .await
        .map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::TimedOut, "master CLI did not answer")
        })??;
        Ok(reply)
    }

    /// `show proc`, parsed.
    pub async fn show_proc(&self, patience: Duration) -> std::io::Result<ProcStatus> {
        let reply = self.command("show proc", patience).await?;
        ProcStatus::parse(&reply).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("unexpected show proc reply: {reply:?}"),
            )
        })
    }
}

impl MasterCli {
    /// The client sessions of worker `pid` (`show sess`, their ids), without the CLI's
    /// own; `None` once that worker has exited.
    pub async fn worker_sessions(&self, pid: u32) -> std::io::Result<Option<Vec<String>>> {
        let reply = self
            .command(&format!("@!{pid} show sess"), PATIENCE)
            .await?;
        if reply.starts_with("Can't find the target PID") {
            return Ok(None);
        }
        Ok(Some(client_sessions(&reply)))
    }

    /// Closes one session of worker `pid` (`shutdown session`), as a timeout would.
    pub async fn shutdown_session(&self, pid: u32, session: &str) -> std::io::Result<()> {
        let reply = self
            .command(&format!("@!{pid} shutdown session {session}"), PATIENCE)
            .await?;
        // An empty reply is success; a session that ended meanwhile is not an error.
        match reply.trim() {
            "" | "No such session (use 'show sess')." => Ok(()),
            other => Err(std::io::Error::other(format!(
                "shutdown session {session} of worker {pid}: {other:?}"
            ))),
        }
    }
}

/// How long a master CLI command may wait for the master.
const PATIENCE: Duration = Duration::from_secs(2);

/// How soon a refused connection (or an unfinished start or reload) is tried again: up to
/// this long passes between HAProxy being ready and portcullis seeing it, and a refused
/// connection costs one system call.
pub(crate) const RETRY_INTERVAL: Duration = Duration::from_millis(5);

/// The ids of the sessions of clients in a `show sess` reply: each line starts with the
/// session's id (`0x...:`); the CLI's own sessions are in the `GLOBAL` frontend.
fn client_sessions(reply: &str) -> Vec<String> {
    reply
        .lines()
        .filter(|line| !line.contains(" fe=GLOBAL "))
        .filter_map(|line| line.split_once(": ").map(|(id, _)| id))
        .filter(|id| id.starts_with("0x") && id[2..].bytes().all(|b| b.is_ascii_hexdigit()))
        .map(str::to_owned)
        .collect()
}

fn retryable(err: &std::io::Error) -> bool {
    matches!(
        err.kind(),
        std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::NotFound
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_show_proc_of_haproxy_2_6() {
        let text = "#<PID>          <type>          <reloads>       <uptime>        <version>      \n6338            master          2 [failed: 1]   0d00h00m02s     2.6.12-1+deb12u4\n# workers\n6386            worker          1               0d00h00m01s     2.6.12-1+deb12u4\n# old workers\n6341            worker          [was: 0]        0d00h00m05s     2.6.12-1+deb12u4\n# programs\n\n";
        assert_eq!(
            ProcStatus::parse(text),
            Some(ProcStatus {
                master: 6338,
                reloads: 2,
                failed_reloads: 1,
                workers: vec![6386],
                old_workers: vec![6341],
            })
        );
        assert_eq!(ProcStatus::parse(""), None);
    }

    #[test]
    fn show_sess_gives_the_client_sessions_only() {
        // As HAProxy 2.6.12 answers it through the master CLI (`@!<pid> show sess`).
        let reply = "0x55caba1f39b0: proto=tcpv4 src=127.0.0.1:35930 fe=f be=b srv=s ts=00 epoch=0 age=2s calls=4 rate=1 cpu=0 lat=0 rq[f=49c40000h,i=0,an=8000h,rx=,wx=,ax=] rp[f=80040000h,i=0,an=4000000h,rx=57s,wx=,ax=] scf=[8,80h,fd=13] scb=[8,11h,fd=14] exp=57s rc=0 c_exp=\n0x55caba310c20: proto=sockpair src=unix:2 fe=GLOBAL be=<NONE> srv=<none> ts=00 epoch=0 age=0s calls=1 rate=0 cpu=0 lat=0 rq[f=c08000h,i=0,an=00h,rx=,wx=,ax=] rp[f=80008002h,i=0,an=00h,rx=,wx=,ax=] scf=[8,200h,fd=7] scb=[8,1h,fd=-1] exp= rc=0 c_exp=\n0x7f8014041fd0: proto=tcpv4 src=127.0.0.1:35946 fe=f be=b srv=s ts=00 epoch=0 age=2s\n\n";
        assert_eq!(client_sessions(reply), ["0x55caba1f39b0", "0x7f8014041fd0"]);
        assert!(client_sessions("").is_empty());
    }
}
