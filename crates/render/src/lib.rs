//! Renders the proxy model into HAProxy's files. Pure and deterministic: the same model
//! always gives the same bytes, and no file names the directory it will be written to
//! (`default-path config` makes every path relative to the configuration).

mod access;
mod affinity;
mod auth;
mod backend_tls;
mod cache;
mod client_auth;
mod config;
mod cors;
mod dns;
mod escape;
mod forwarded;
mod https;
pub mod layout;
mod logging;
mod maps;
mod observers;
pub mod origins;
mod passthrough;
mod ports;
mod proxy_protocol;
mod responses;
mod rules;
mod servers;
mod shards;
mod tcp;

pub use auth::AUTH_LUA;
pub use cache::RenderCache;
pub use layout::shard_file_name;
pub use origins::OriginTable;
pub use passthrough::{REJECT_BACKEND, SNI_FRONTEND, TERMINATE_BACKEND};
pub use rules::{DISPATCH_PREFIX, GATEWAY_500_BACKEND, GATEWAY_503_BACKEND, dispatch_name};
pub use servers::{adds_servers_live, checks_servers, derives_server_cookies, server_options};
pub use shards::shard_of;
pub use tcp::{TCP_REJECT_BACKEND, frontend_name as tcp_frontend_name};

use std::collections::BTreeMap;
use std::sync::Arc;

use model::ProxyModel;

/// One rendered file, held as the parts it was assembled from (a shard's sections, a
/// map's buckets), so that assembling it again after a change copies no unchanged part.
#[derive(Debug, Clone)]
pub struct RenderedFile {
    chunks: Arc<[Arc<str>]>,
    /// Stable content hash (xxh3-64 of the whole content), to compare with what is on disk.
    pub hash: u64,
    /// Holds a private key: written with mode 0600.
    pub private: bool,
}

impl RenderedFile {
    /// Wraps content, computing its hash.
    pub fn new(text: String, private: bool) -> Self {
        Self::from_chunks(vec![Arc::from(text)], private)
    }

    /// A file whose content is the concatenation of `chunks`.
    pub fn from_chunks(chunks: Vec<Arc<str>>, private: bool) -> Self {
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        for chunk in &chunks {
            hasher.update(chunk.as_bytes());
        }
        Self {
            chunks: Arc::from(chunks),
            hash: hasher.digest(),
            private,
        }
    }

    /// The parts, in order.
    pub fn chunks(&self) -> &[Arc<str>] {
        &self.chunks
    }

    /// Content length in bytes.
    pub fn len(&self) -> usize {
        self.chunks.iter().map(|c| c.len()).sum()
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.chunks.iter().all(|c| c.is_empty())
    }

    /// The whole content in one piece (copied unless it is a single part).
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        match &*self.chunks {
            [one] => std::borrow::Cow::Borrowed(one),
            chunks => std::borrow::Cow::Owned(chunks.concat()),
        }
    }

    /// Writes the content.
    pub fn write_to(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        for chunk in self.chunks.iter() {
            out.write_all(chunk.as_bytes())?;
        }
        Ok(())
    }
}

impl PartialEq for RenderedFile {
    /// Same content and mode, however it is split into parts.
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash
            && self.private == other.private
            && (Arc::ptr_eq(&self.chunks, &other.chunks)
                || self
                    .chunks
                    .iter()
                    .flat_map(|c| c.bytes())
                    .eq(other.chunks.iter().flat_map(|c| c.bytes())))
    }
}

impl Eq for RenderedFile {}

/// Every managed file, by path relative to the state directory (always `/`-separated).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RenderedConfig {
    /// The files.
    pub files: BTreeMap<String, RenderedFile>,
    /// The ports of the frontends of their own (Gateway listeners on other ports than
    /// the HTTP and HTTPS ones) that the configuration binds.
    pub own_ports: std::collections::BTreeSet<u16>,
}

/// Renders a model from scratch (an empty cache).
pub fn render(model: &ProxyModel) -> RenderedConfig {
    RenderCache::default().render(model)
}
