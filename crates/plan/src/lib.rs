//! The plan: what to write and delete, computed by comparing the files last written (by
//! content hash) with the desired ones, and how to bring HAProxy along (runtime commands,
//! or a reload), computed by comparing what it runs with the desired model. Nothing is
//! remembered between runs except those hashes, which are re-read from disk at start-up.

#![forbid(unsafe_code)]

mod certificates;
mod live;
mod maps;

pub use certificates::MAX_CERTIFICATE_PAYLOAD;
pub use live::{
    Backends, LiveState, LiveUpdate, ReloadReason, RuntimeCommand, ServerRef, live_update,
};
pub use maps::MAX_MAP_EDITS;

use std::collections::BTreeMap;

use render::{RenderedConfig, RenderedFile};

/// Content hash of every managed file as last written, by relative path.
pub type AppliedFiles = BTreeMap<String, u64>;

/// What one sync must do.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Plan {
    /// Files whose content differs from what was last written, or that are missing.
    pub writes: Vec<(String, RenderedFile)>,
    /// Managed files that should not exist.
    pub deletes: Vec<String>,
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
    Plan { writes, deletes }
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
            ..RenderedConfig::default()
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
    }

    #[test]
    fn identical_state_is_a_noop_and_extra_files_are_deleted() {
        let state = desired(&[("haproxy.cfg", "a")]);
        let applied: AppliedFiles = state
            .files
            .iter()
            .map(|(p, f)| (p.clone(), f.hash))
            .collect();
        assert_eq!(plan(&applied, &state), Plan::default());
        let mut extra = applied.clone();
        extra.insert("certs/old.pem".to_owned(), 7);
        assert_eq!(plan(&extra, &state).deletes, ["certs/old.pem"]);
    }
}
