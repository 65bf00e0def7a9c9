//! Routing maps (`host#path` → backend) and the certificate list.
//!
//! Per frontend: an exact map (Exact paths, and each Prefix path itself) and a prefix map
//! (`Prefix /foo` as `/foo/`, ImplementationSpecific as written). HAProxy looks exact
//! first, then the longest prefix (`map_beg` uses a prefix tree), which yields the Ingress
//! rule "longest path wins, Exact before Prefix on the same path".

use std::collections::BTreeMap;
use std::ops::{Index, IndexMut};

use model::{Host, HostKey, PathKind, ProxyModel, RouteTarget};

use crate::config::NOT_FOUND_BACKEND;
use crate::layout::{DEFAULT_CERT, MapFile, certificate_file};

/// Map value that makes the HTTP frontend redirect to HTTPS with the given code.
pub fn redirect_marker(code: u16) -> String {
    format!("_redirect_{code}")
}

/// How many buckets the map files are split into: about 64 hosts each, rounded up to a
/// power of two (so the layout changes only when the host count doubles), 1 to 4096.
pub fn map_buckets(hosts: usize) -> u32 {
    hash_buckets(hosts, 64, 4096)
}

/// How many hash buckets hold `items` at about `per_bucket` each: a power of two, so that
/// which bucket an item falls in changes only when the count doubles; 1 to `most`.
fn hash_buckets(items: usize, per_bucket: usize, most: u32) -> u32 {
    u32::try_from(items / per_bucket.max(1))
        .unwrap_or(most)
        .min(most)
        .next_power_of_two()
        .clamp(1, most)
}

/// The hash bucket of `text` among `buckets`.
fn hash_bucket(text: &str, buckets: u32) -> u32 {
    let hash = xxhash_rust::xxh3::xxh3_64(text.as_bytes());
    u32::try_from(hash % u64::from(buckets.max(1))).unwrap_or(0)
}

/// The bucket of a host: `xxh3_64(map key) % buckets`. A map file lists its buckets in
/// order, each bucket's hosts in key order. Lookups do not depend on the order of a map
/// (HAProxy indexes exact and prefix maps in trees), and a change to one host rewrites one
/// bucket, whose text is then the only part of the file that differs.
pub fn map_bucket(key: &HostKey, buckets: u32) -> u32 {
    hash_bucket(&key.map_key(), buckets)
}

/// One value per map file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct PerMap<T>([T; MapFile::ALL.len()]);

impl<T> PerMap<T> {
    /// Each map's value, transformed.
    pub(crate) fn map<U>(self, f: impl FnMut(T) -> U) -> PerMap<U> {
        PerMap(self.0.map(f))
    }
}

impl<T> Index<MapFile> for PerMap<T> {
    type Output = T;
    fn index(&self, map: MapFile) -> &T {
        &self.0[map.position()]
    }
}

impl<T> IndexMut<MapFile> for PerMap<T> {
    fn index_mut(&mut self, map: MapFile) -> &mut T {
        &mut self.0[map.position()]
    }
}

/// Renders one host's lines of each map.
pub(crate) fn host_lines(host_key: &HostKey, host: &Host) -> PerMap<String> {
    let host_text = host_key.map_key();
    let mut lines = PerMap::<String>::default();
    let host_line = |key: &str| [key, " ", &host_text, "\n"].concat();
    match host_key {
        _ if host.routes.is_empty() => {}
        HostKey::CatchAll => {}
        HostKey::Regex(pattern) => lines[MapFile::RegexHosts] = host_line(pattern),
        _ => lines[MapFile::Hosts] = host_line(&host_text),
    }
    // Each route's value on the HTTPS frontend, and on the plain-HTTP one where it
    // redirects to HTTPS: made once, for both frontends and both maps.
    let values: Vec<(String, Option<String>)> = host
        .routes
        .iter()
        .map(|(path, route)| {
            let target = match &route.target {
                RouteTarget::Backend(id) => id.section_name(),
                RouteTarget::Rules(_) => crate::rules::dispatch_name(host_key, path),
            };
            (target, route.https_redirect.map(redirect_marker))
        })
        .collect();
    let (mut exact, mut prefix) = (Vec::new(), Vec::new());
    for plain_http in [true, false] {
        exact.clear();
        prefix.clear();
        let (mut gateway_routes, mut ingress_routes, mut every_path) = (false, false, false);
        let routes = host.routes.iter().zip(&values);
        for ((path, route), (target, redirect)) in routes {
            if !route.frontends.serves(plain_http) {
                continue;
            }
            if route.origin.is_gateway_route() {
                gateway_routes = true;
            } else {
                ingress_routes = true;
            }
            every_path |= path.kind == PathKind::Prefix && path.path.is_empty();
            let value = match redirect {
                Some(marker) if plain_http => marker,
                _ => target,
            };
            let entry = |slash: bool, rank: u8| MapEntry {
                path: &path.path,
                slash,
                rank,
                value,
            };
            match path.kind {
                PathKind::Exact => exact.push(entry(false, 0)),
                PathKind::Prefix => {
                    // An Exact rule on the same path wins.
                    if !path.path.is_empty() {
                        exact.push(entry(false, 1));
                    }
                    prefix.push(entry(true, 0));
                }
                PathKind::Begin => prefix.push(entry(false, 0)),
            }
        }
        // A Gateway API hostname answers 404 to what its rules do not match, rather than
        // the Ingress default backend (which any namespace's Ingress may set). The key
        // `<host>#` is the shortest prefix of the host's, so every other route wins. The
        // catch-all key is left to the default backend: it names no hostname. A route of
        // every path (`/`) needs none.
        if gateway_routes && !ingress_routes && !every_path && *host_key != HostKey::CatchAll {
            prefix.push(MapEntry {
                path: "",
                slash: false,
                rank: 0,
                value: NOT_FOUND_BACKEND,
            });
        }
        lines[MapFile::exact_paths(plain_http)] = map_lines(&host_text, &mut exact);
        lines[MapFile::path_prefixes(plain_http)] = map_lines(&host_text, &mut prefix);
    }
    lines
}

/// One line of a host's route map: `<host>#<path>[/] <value>`. The host is the same on
/// every line of a host, so a line's key is told by its path and slash alone.
struct MapEntry<'a> {
    path: &'a str,
    /// Whether the key ends in a `/` after the path (a Prefix path's prefix-map key).
    slash: bool,
    /// On one key, the lowest rank wins, then the first entry.
    rank: u8,
    value: &'a str,
}

impl MapEntry<'_> {
    /// The key's bytes after `<host>#`.
    fn key(&self) -> impl Iterator<Item = u8> + '_ {
        self.path.bytes().chain(self.slash.then_some(b'/'))
    }
}

/// A host's lines of one map, in key order, one per key: the entry of the lowest rank,
/// and of those the first given.
fn map_lines(host: &str, entries: &mut [MapEntry<'_>]) -> String {
    // Stable: among entries of one key and rank, the first given stays first.
    entries.sort_by(|a, b| a.key().cmp(b.key()).then(a.rank.cmp(&b.rank)));
    let mut text = String::new();
    let mut previous: Option<&MapEntry<'_>> = None;
    for entry in entries.iter() {
        if previous.is_some_and(|kept| kept.key().eq(entry.key())) {
            continue;
        }
        previous = Some(entry);
        text.reserve(host.len() + entry.path.len() + entry.value.len() + 4);
        text.push_str(host);
        text.push('#');
        text.push_str(entry.path);
        if entry.slash {
            text.push('/');
        }
        text.push(' ');
        text.push_str(entry.value);
        text.push('\n');
    }
    text
}

/// SNI names per certificate-list line, about: HAProxy builds one TLS context per line
/// (a line per name cost 0.5 s of every check and reload at 2,000 TLS hosts).
const NAMES_PER_CRT_LIST_LINE: usize = 128;

/// The most hash buckets of one certificate's names (past 128 names each, a bucket's
/// names go on over more lines, by [`MAX_CRT_LIST_LINE`]).
const MOST_CRT_LIST_BUCKETS: u32 = 1 << 16;

/// The longest certificate-list line, in bytes, past which a bucket's names go on to a
/// new line: far below HAProxy's 64 KiB line limit, and small enough to be one
/// `add ssl crt-list` payload in one of HAProxy's 16 KiB buffers.
const MAX_CRT_LIST_LINE: usize = 8 * 1024;

/// `certs/crt-list.txt`: for each certificate and options, lines listing the SNI names
/// served with them. Names are spread over lines by a hash of the name (about
/// [`NAMES_PER_CRT_LIST_LINE`] a line, the line count a power of two up to
/// [`MOST_CRT_LIST_BUCKETS`]), so a name that comes or goes changes one line, which is
/// all a live update has to replace.
pub(crate) fn crt_list(model: &ProxyModel) -> String {
    let mut groups: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for (host_key, host) in &model.hosts {
        // A pattern is no SNI name: its requests get the certificate their name selects.
        if matches!(host_key, HostKey::Regex(_)) {
            continue;
        }
        let cert = host.cert.as_ref().filter(|c| model.certs.contains_key(*c));
        // A host with options of its own and the default certificate needs a line too.
        let file = match cert {
            Some(cert) => certificate_file(cert),
            None if !host.tls.is_empty() => DEFAULT_CERT.to_owned(),
            None => continue,
        };
        groups
            .entry((file, crate::https::crt_list_options(&host.tls)))
            .or_default()
            .push(host_key.sni_filter());
    }
    let mut text = String::new();
    for ((file, options), names) in groups {
        let line_count = hash_buckets(names.len(), NAMES_PER_CRT_LIST_LINE, MOST_CRT_LIST_BUCKETS);
        let mut lines = vec![Vec::new(); line_count as usize];
        for name in names {
            let line = hash_bucket(&name, line_count) as usize;
            lines[line].push(name);
        }
        for mut names in lines.into_iter().filter(|names| !names.is_empty()) {
            names.sort_unstable();
            let start = text.len();
            text.push_str(&file);
            text.push_str(&options);
            let mut line_start = start;
            for name in names {
                if text.len() - line_start + name.len() + 1 > MAX_CRT_LIST_LINE
                    && text.len() > line_start + file.len() + options.len()
                {
                    text.push('\n');
                    line_start = text.len();
                    text.push_str(&file);
                    text.push_str(&options);
                }
                text.push(' ');
                text.push_str(&name);
            }
            text.push('\n');
        }
    }
    text
}
