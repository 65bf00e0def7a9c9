//! Renders the proxy model into HAProxy's files. Pure and deterministic: the same model
//! always gives the same bytes, and no file names the directory it will be written to
//! (`default-path config` makes every path relative to the configuration).

mod cache;
mod config;
mod maps;
mod shards;

pub use cache::RenderCache;
pub use config::CRT_LIST;
pub use shards::{shard_file_name, shard_of};

use std::collections::BTreeMap;
use std::sync::Arc;

use model::ProxyModel;
use xxhash_rust::xxh3::xxh3_64;

/// The main configuration file, loaded first.
pub const MAIN_CONFIG: &str = "haproxy.cfg";
/// Directory of the backend shard files, loaded after the main file.
pub const BACKENDS_DIR: &str = "backends";
/// Every directory or top-level file portcullis owns in the state directory. Anything
/// else there (sockets, the staging area) is left alone.
pub const MANAGED_ROOTS: [&str; 4] = [MAIN_CONFIG, BACKENDS_DIR, "maps", "certs"];

/// One rendered file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedFile {
    /// Content.
    pub bytes: Arc<[u8]>,
    /// Stable content hash (xxh3-64), to compare with what is on disk.
    pub hash: u64,
    /// Holds a private key: written with mode 0600.
    pub private: bool,
}

impl RenderedFile {
    /// Wraps content, computing its hash.
    pub fn new(text: String, private: bool) -> Self {
        let bytes: Arc<[u8]> = Arc::from(text.into_bytes());
        Self {
            hash: xxh3_64(&bytes),
            bytes,
            private,
        }
    }
}

/// Every managed file, by path relative to the state directory (always `/`-separated).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RenderedConfig {
    /// The files.
    pub files: BTreeMap<String, RenderedFile>,
}

/// Renders a model from scratch (an empty cache).
pub fn render(model: &ProxyModel) -> RenderedConfig {
    RenderCache::default().render(model)
}
