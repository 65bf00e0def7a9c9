//! The master CLI: commands to HAProxy's master process over its UNIX socket.

use std::path::PathBuf;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

/// What `show proc` says about the master and its workers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcStatus {
    /// Reloads since the master started (failed ones included).
    pub reloads: u64,
    /// Failed reloads.
    pub failed_reloads: u64,
    /// PIDs of the current workers.
    pub workers: Vec<u32>,
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
                [_, "master", reloads, "[failed:", failed, ..] => {
                    status.reloads = reloads.parse().ok()?;
                    status.failed_reloads = failed.trim_end_matches(']').parse().ok()?;
                    found_master = true;
                }
                [pid, "worker", ..] if section == "workers" => {
                    status.workers.push(pid.parse().ok()?);
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
                    tokio::time::sleep(Duration::from_millis(20)).await;
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
                reloads: 2,
                failed_reloads: 1,
                workers: vec![6386]
            })
        );
        assert_eq!(ProcStatus::parse(""), None);
    }
}
