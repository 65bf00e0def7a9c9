//! Renders the proxy model into HAProxy's files. Pure and deterministic: the same model
//! always gives the same bytes, and no file names the directory it will be written to
//! (`default-path config` makes every path relative to the configuration).

#![forbid(unsafe_code)]

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
pub use servers::{
    adds_servers_live, checks_servers, derives_server_cookies, server_id, server_ids,
    server_options,
};
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

    /// Writes the content: its parts handed over together (a shard of a hundred backend
    /// sections is one system call, not a hundred).
    pub fn write_to(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        let mut parts: Vec<std::io::IoSlice<'_>> = (self.chunks.iter())
            .filter(|chunk| !chunk.is_empty())
            .map(|chunk| std::io::IoSlice::new(chunk.as_bytes()))
            .collect();
        let mut unwritten = &mut parts[..];
        while !unwritten.is_empty() {
            match out.write_vectored(unwritten) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(written) => std::io::IoSlice::advance_slices(&mut unwritten, written),
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                Err(err) => return Err(err),
            }
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
    /// the HTTP and HTTPS ones, TCP services, the stats page, the exporter, the health
    /// check, a fronting proxy's own port) that the configuration binds.
    pub own_ports: std::collections::BTreeSet<u16>,
}

/// Renders a model from scratch (an empty cache).
pub fn render(model: &ProxyModel) -> RenderedConfig {
    RenderCache::default().render(model)
}

#[cfg(test)]
mod tests {
    use std::io::{self, IoSlice, Write};

    use super::*;

    /// A writer that takes at most `limit` bytes a call, and fails every third call as
    /// interrupted: what a pipe or a signal can do to a write.
    struct Trickle {
        written: Vec<u8>,
        limit: usize,
        calls: usize,
    }

    impl Write for Trickle {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.write_vectored(&[IoSlice::new(bytes)])
        }

        fn write_vectored(&mut self, parts: &[IoSlice<'_>]) -> io::Result<usize> {
            self.calls += 1;
            if self.calls.is_multiple_of(3) {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let mut taken = 0;
            for part in parts {
                let take = part.len().min(self.limit - taken);
                self.written.extend_from_slice(&part[..take]);
                taken += take;
                if taken == self.limit {
                    break;
                }
            }
            Ok(taken)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_file_of_many_parts_is_written_whole_through_short_and_interrupted_writes() {
        let parts: Vec<Arc<str>> = ["backend a\n", "", "  server s1 10.0.0.1:80\n", "x", ""]
            .into_iter()
            .cycle()
            .take(23)
            .map(Arc::from)
            .collect();
        let file = RenderedFile::from_chunks(parts, false);
        for limit in [1, 2, 7, 64, 4096] {
            let mut out = Trickle {
                written: Vec::new(),
                limit,
                calls: 0,
            };
            file.write_to(&mut out).expect("written");
            assert_eq!(String::from_utf8(out.written).unwrap(), file.text());
        }
    }

    #[test]
    fn a_writer_that_takes_nothing_is_an_error_not_a_loop() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Ok(0)
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let file = RenderedFile::new("global\n".to_owned(), false);
        let error = file.write_to(&mut Full).expect_err("nothing written");
        assert_eq!(error.kind(), io::ErrorKind::WriteZero);
    }
}
