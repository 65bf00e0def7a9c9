//! Event sources. The manifest directory reads every `*.yaml`, `*.yml` and `*.json` file
//! below a directory and reports changes as index events.

#![forbid(unsafe_code)]

mod manifest_dir;
mod one_pass;
mod parallel;
mod read;
mod walk;
mod watch;

#[cfg(test)]
mod containment_tests;

pub use manifest_dir::{DEFAULT_MAX_MANIFEST_BYTES, ManifestDir, ManifestProblem};
pub use one_pass::read_manifests;
pub use watch::{SourceBatch, watch_manifest_dir};
