//! Event sources. The manifest directory reads every `*.yaml`, `*.yml` and `*.json` file
//! below a directory and reports changes as index events.

mod manifest_dir;
mod watch;

pub use manifest_dir::{ManifestDir, ManifestProblem};
pub use watch::{SourceBatch, watch_manifest_dir};
