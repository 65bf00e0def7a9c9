//! `haproxy -c`: the configuration is checked before it may go live (invariant I4).

use std::path::Path;

/// A configuration HAProxy refused, with what it said.
#[derive(Debug, Clone, thiserror::Error)]
#[error("haproxy rejected the configuration:\n{output}")]
pub struct CheckFailure {
    /// HAProxy's alerts, one per line.
    pub output: String,
}

/// The `-f` arguments that load a configuration directory: main file, then shards.
pub(crate) fn config_args(dir: &Path) -> [std::ffi::OsString; 4] {
    [
        "-f".into(),
        dir.join(render::MAIN_CONFIG).into_os_string(),
        "-f".into(),
        dir.join(render::BACKENDS_DIR).into_os_string(),
    ]
}

/// Checks the configuration in `dir` with `haproxy -c`.
pub async fn check_config(haproxy_bin: &Path, dir: &Path) -> Result<(), CheckFailure> {
    let output = tokio::process::Command::new(haproxy_bin)
        .arg("-c")
        .args(config_args(dir))
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .map_err(|err| CheckFailure {
            output: format!("cannot run {}: {err}", haproxy_bin.display()),
        })?;
    if output.status.success() {
        return Ok(());
    }
    let mut text = String::from_utf8_lossy(&output.stderr).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stdout));
    let alerts: Vec<&str> = text.lines().filter(|l| l.contains("[ALERT]")).collect();
    let output = if alerts.is_empty() {
        text.trim().to_owned()
    } else {
        alerts.join("\n")
    };
    Err(CheckFailure { output })
}
