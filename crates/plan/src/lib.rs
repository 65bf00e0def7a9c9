//! The plan: what to write, what to delete and whether to reload, computed by comparing
//! the files last written (by content hash) with the desired ones. Nothing is remembered
//! between runs except those hashes, which are re-read from disk at start-up.

use std::collections::BTreeMap;
use std::fmt;

use render::{BACKENDS_DIR, MAIN_CONFIG, RenderedConfig, RenderedFile};

/// Content hash of every managed file as last written, by relative path.
pub type AppliedFiles = BTreeMap<String, u64>;

/// Why HAProxy must load the configuration again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReloadReason {
    /// The main configuration changed (global settings, frontends, default backend).
    MainConfig,
    /// Backend sections were added, removed or changed.
    Backends,
    /// Routing maps changed.
    Maps,
    /// Certificates or the certificate list changed.
    Certificates,
    /// Managed files that should not exist were removed.
    StaleFiles,
}

impl ReloadReason {
    /// Every reason, for metrics.
    pub const ALL: [ReloadReason; 5] = [
        ReloadReason::MainConfig,
        ReloadReason::Backends,
        ReloadReason::Maps,
        ReloadReason::Certificates,
        ReloadReason::StaleFiles,
    ];

    /// Label value for logs and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            ReloadReason::MainConfig => "main_config",
            ReloadReason::Backends => "backends",
            ReloadReason::Maps => "maps",
            ReloadReason::Certificates => "certificates",
            ReloadReason::StaleFiles => "stale_files",
        }
    }

    fn of_path(path: &str) -> Self {
        if path == MAIN_CONFIG {
            ReloadReason::MainConfig
        } else if path.starts_with(BACKENDS_DIR) {
            ReloadReason::Backends
        } else if path.starts_with("maps/") {
            ReloadReason::Maps
        } else {
            ReloadReason::Certificates
        }
    }
}

impl fmt::Display for ReloadReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one sync must do.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Plan {
    /// Files whose content differs from what was last written, or that are missing.
    pub writes: Vec<(String, RenderedFile)>,
    /// Managed files that should not exist.
    pub deletes: Vec<String>,
    /// Why HAProxy must reload, if it must: the most significant reason.
    pub reload: Option<ReloadReason>,
}

impl Plan {
    /// Nothing to do.
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty() && self.deletes.is_empty()
    }
}

/// Compares what was applied with what is desired.
pub fn plan(applied: &AppliedFiles, desired: &RenderedConfig) -> Plan {
    let writes: Vec<(String, RenderedFile)> = desired
        .files
        .iter()
        .filter(|(path, file)| applied.get(*path) != Some(&file.hash))
        .map(|(path, file)| (path.clone(), file.clone()))
        .collect();
    let deletes: Vec<String> = applied
        .keys()
        .filter(|path| !desired.files.contains_key(*path))
        .cloned()
        .collect();
    let reload = writes
        .iter()
        .map(|(path, _)| ReloadReason::of_path(path))
        .min()
        .or_else(|| (!deletes.is_empty()).then_some(ReloadReason::StaleFiles));
    Plan {
        writes,
        deletes,
        reload,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desired(files: &[(&str, &str)]) -> RenderedConfig {
        RenderedConfig {
            files: files
                .iter()
                .map(|(p, t)| ((*p).to_owned(), RenderedFile::new((*t).to_owned(), false)))
                .collect(),
        }
    }

    #[test]
    fn writes_only_what_differs_and_deletes_what_is_extra() {
        let before = desired(&[
            ("haproxy.cfg", "a"),
            ("backends/shard-000.cfg", "b"),
            ("maps/hosts.map", "c"),
        ]);
        let applied: AppliedFiles = before
            .files
            .iter()
            .map(|(p, f)| (p.clone(), f.hash))
            .chain([("backends/shard-009.cfg".to_owned(), 1)])
            .collect();
        let after = desired(&[
            ("haproxy.cfg", "a"),
            ("backends/shard-000.cfg", "b2"),
            ("maps/hosts.map", "c"),
        ]);
        let plan = plan(&applied, &after);
        let written: Vec<&str> = plan.writes.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(written, ["backends/shard-000.cfg"]);
        assert_eq!(plan.deletes, ["backends/shard-009.cfg"]);
        assert_eq!(plan.reload, Some(ReloadReason::Backends));
    }

    #[test]
    fn identical_state_is_a_noop_and_deletes_alone_still_reload() {
        let state = desired(&[("haproxy.cfg", "a")]);
        let applied: AppliedFiles = state
            .files
            .iter()
            .map(|(p, f)| (p.clone(), f.hash))
            .collect();
        assert_eq!(plan(&applied, &state), Plan::default());
        let mut extra = applied.clone();
        extra.insert("certs/old.pem".to_owned(), 7);
        assert_eq!(plan(&extra, &state).reload, Some(ReloadReason::StaleFiles));
    }
}
