//! Runs the portcullis binary against a manifest directory and a real HAProxy.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::client::http_get;
use crate::ports::free_port;

/// A running `portcullis run`, stopped by pid (SIGTERM) when dropped.
#[derive(Debug)]
pub struct Portcullis {
    child: Child,
    /// Manifest directory (owned by the test).
    pub manifests: PathBuf,
    /// State directory.
    pub state_dir: PathBuf,
    /// HTTP frontend port.
    pub http_port: u16,
    /// HTTPS frontend port.
    pub https_port: u16,
    /// Admin server port.
    pub admin_port: u16,
    log: PathBuf,
    stdout: PathBuf,
}

impl Portcullis {
    /// Starts `binary run` on `manifests` with extra flags, and waits until `/readyz`
    /// answers 200.
    pub fn start(
        binary: impl AsRef<Path>,
        manifests: &Path,
        state_dir: &Path,
        extra: &[&str],
    ) -> std::io::Result<Self> {
        let source = ["--manifests".to_owned(), manifests.display().to_string()];
        let mut portcullis = Self::spawn(binary, &source, state_dir, extra)?;
        portcullis.manifests = manifests.to_path_buf();
        portcullis.wait_until_ready(Duration::from_secs(30))?;
        Ok(portcullis)
    }

    /// Starts `binary run` with the given source flags (`--manifests DIR`, or
    /// `--kubeconfig FILE`) and extra flags, without waiting for anything.
    pub fn spawn(
        binary: impl AsRef<Path>,
        source: &[String],
        state_dir: &Path,
        extra: &[&str],
    ) -> std::io::Result<Self> {
        let ports = (free_port(), free_port(), free_port());
        Self::spawn_on(binary, source, state_dir, ports, extra)
    }

    /// Starts `binary run` on `manifests` with the HTTP, HTTPS and admin ports of
    /// `earlier` (stopped by now), so that it renders what `earlier` rendered; waits until
    /// `/readyz` answers 200.
    pub fn restart(
        binary: impl AsRef<Path>,
        earlier: &Portcullis,
        extra: &[&str],
    ) -> std::io::Result<Self> {
        let source = [
            "--manifests".to_owned(),
            earlier.manifests.display().to_string(),
        ];
        let ports = (earlier.http_port, earlier.https_port, earlier.admin_port);
        let mut portcullis = Self::spawn_on(binary, &source, &earlier.state_dir, ports, extra)?;
        portcullis.manifests.clone_from(&earlier.manifests);
        portcullis.wait_until_ready(Duration::from_secs(30))?;
        Ok(portcullis)
    }

    fn spawn_on(
        binary: impl AsRef<Path>,
        source: &[String],
        state_dir: &Path,
        (http_port, https_port, admin_port): (u16, u16, u16),
        extra: &[&str],
    ) -> std::io::Result<Self> {
        let log = state_dir.with_extension("log");
        let stdout = state_dir.with_extension("out");
        let child = Command::new(binary.as_ref())
            .arg("run")
            .args(source)
            .arg("--state-dir")
            .arg(state_dir)
            .args(["--bind-address", "127.0.0.1"])
            .args(["--http-port", &http_port.to_string()])
            .args(["--https-port", &https_port.to_string()])
            .args(["--admin-bind", &format!("127.0.0.1:{admin_port}")])
            .args(extra)
            .env("RUST_LOG", "info,haproxy=debug")
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&stdout)?)
            .stderr(std::fs::File::create(&log)?)
            .spawn()?;
        Ok(Self {
            child,
            manifests: PathBuf::new(),
            state_dir: state_dir.to_path_buf(),
            http_port,
            https_port,
            admin_port,
            log,
            stdout,
        })
    }

    /// Waits until `/readyz` answers 200.
    pub fn wait_until_ready(&mut self, timeout: Duration) -> std::io::Result<()> {
        self.wait_until(timeout, |p| {
            p.admin("/readyz").map(|r| r.status == 200).unwrap_or(false)
        })
    }

    /// GET on the admin server.
    pub fn admin(&self, path: &str) -> std::io::Result<crate::Response> {
        http_get(self.admin_port, "127.0.0.1", path)
    }

    /// The metrics text; a busy machine may drop a connection, so it is asked up to
    /// three times.
    fn metrics_text(&self) -> Option<String> {
        (0..3).find_map(|_| self.admin("/metrics").ok().map(|r| r.body))
    }

    /// The value of a metric sample, e.g. `portcullis_haproxy_starts_total`.
    pub fn metric(&self, sample: &str) -> Option<f64> {
        let text = self.metrics_text()?;
        text.lines()
            .find_map(|l| {
                l.strip_prefix(sample)
                    .and_then(|rest| rest.strip_prefix(' '))
            })
            .and_then(|v| v.trim().parse().ok())
    }

    /// The sum of every series of a metric family (`name{...}` and `name`), 0 if none.
    pub fn metric_total(&self, name: &str) -> f64 {
        let Some(text) = self.metrics_text() else {
            return 0.0;
        };
        text.lines()
            .filter_map(|l| {
                let rest = l.strip_prefix(name)?;
                let value = if rest.starts_with('{') {
                    rest.split_once("} ")?.1
                } else {
                    rest.strip_prefix(' ')?
                };
                value.trim().parse::<f64>().ok()
            })
            .sum()
    }

    /// What portcullis and its HAProxy wrote to standard output so far: HAProxy's access
    /// logs, unless they go elsewhere.
    pub fn stdout(&self) -> String {
        std::fs::read_to_string(&self.stdout).unwrap_or_default()
    }

    /// What portcullis logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Polls `condition` until it holds or `timeout` passes; the error carries the log.
    pub fn wait_until(
        &mut self,
        timeout: Duration,
        condition: impl Fn(&Self) -> bool,
    ) -> std::io::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            if condition(self) {
                return Ok(());
            }
            if let Some(status) = self.child.try_wait()? {
                return Err(std::io::Error::other(format!(
                    "portcullis exited ({status}):\n{}",
                    self.log()
                )));
            }
            if Instant::now() > deadline {
                return Err(std::io::Error::other(format!(
                    "condition not met in {timeout:?}; log:\n{}",
                    self.log()
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The pid of the HAProxy master portcullis started, if it runs.
    pub fn haproxy_pid(&self) -> Option<u32> {
        children(self.child.id()).into_iter().find(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim() == "haproxy")
        })
    }

    /// Kills portcullis and its HAProxy outright (SIGKILL), as a node failure would: nothing
    /// is cleaned up, nothing is handed over.
    pub fn crash(&mut self) -> std::io::Result<()> {
        let workers: Vec<u32> = self.haproxy_pid().map(children).unwrap_or_default();
        let haproxy = self.kill_controller_only()?;
        for pid in haproxy.into_iter().chain(workers) {
            // Already gone is fine: a worker may exit with its master.
            let _ = kill_hard(pid);
        }
        Ok(())
    }

    /// Kills portcullis alone outright (SIGKILL), leaving its HAProxy running as an
    /// orphan; returns that HAProxy's master pid.
    pub fn kill_controller_only(&mut self) -> std::io::Result<Option<u32>> {
        let haproxy = self.haproxy_pid();
        self.child.kill()?;
        self.child.wait()?;
        Ok(haproxy)
    }

    /// Sends SIGTERM and waits for the exit; returns whether it exited successfully.
    pub fn stop(&mut self) -> std::io::Result<bool> {
        if let Some(pid) = i32::try_from(self.child.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status.success());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.child.kill()?;
        Ok(false)
    }
}

impl Drop for Portcullis {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.stop();
        }
    }
}

/// The child processes of a process (of any of its threads).
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|children| {
            children
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// Kills a process outright (SIGKILL), as a crash would.
pub fn kill_hard(pid: u32) -> std::io::Result<()> {
    let pid = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .ok_or_else(|| std::io::Error::other("bad pid"))?;
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).map_err(std::io::Error::from)
}

/// Every file portcullis manages below a state directory, with its bytes.
pub fn managed_files(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut files = std::collections::BTreeMap::new();
    for &root in render::layout::MANAGED_ROOTS {
        let path = dir.join(root);
        if path.is_file() {
            files.insert(root.to_owned(), std::fs::read(&path).unwrap_or_default());
        } else if let Ok(entries) = std::fs::read_dir(&path) {
            for entry in entries.flatten() {
                let name = format!("{root}/{}", entry.file_name().to_string_lossy());
                files.insert(name, std::fs::read(entry.path()).unwrap_or_default());
            }
        }
    }
    files
}

/// Whether process `pid` runs (a zombie waiting for its reaper does not).
pub fn process_runs(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|rest| !rest.starts_with(" Z"))
    })
}
