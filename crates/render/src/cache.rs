//! Memoized rendering, driven by what changed: the previous model is kept, and only the
//! backends, hosts and certificates that differ from it (found by comparing the persistent
//! maps, which skips every part the two versions share) are rendered again; a shard or
//! map file is assembled again only when one of its parts changed. An empty cache renders
//! everything.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use imbl::ordmap::DiffItem;
use model::{BackendId, CertId, HostKey, ProxyModel};

use crate::backend_tls::BackendTlsFiles;
use crate::client_auth::ClientAuthLines;
use crate::layout::{
    self, CRT_LIST, DEFAULT_CERT, MAIN_CONFIG, ManagedDir, MapFile, PASSTHROUGH_MAP,
    certificate_file,
};
use crate::maps::{self, PerMap};
use crate::ports::{self, HostPortLines};
use crate::rules::{self, HostRuleLines};
use crate::shards::{render_backend, shard_header, shard_of};
use crate::{RenderedConfig, RenderedFile, config};

/// One host's lines in each map, ready to assemble.
type CachedHost = PerMap<Arc<str>>;

/// Everything rendered of one host, apart from the cache.
struct RenderedHost {
    parts: CachedHost,
    /// Its frontend rule lines, when it has any.
    rules: Option<HostRuleLines>,
    /// Its lines on Gateway listener ports of its own, when it has any.
    ports: Option<HostPortLines>,
}

fn render_host(key: &HostKey, host: &model::Host) -> RenderedHost {
    RenderedHost {
        parts: maps::host_lines(key, host).map(shared_part),
        rules: Some(rules::host_rule_lines(key, host))
            .filter(|lines| *lines != HostRuleLines::default()),
        ports: Some(ports::host_port_lines(key, host)).filter(|lines| !lines.is_empty()),
    }
}

/// A host's lines in one map, shared when empty: nearly every host has none in some
/// map (the regex hosts' at least), and an empty `Arc<str>` is an allocation of its
/// own, kept by a running controller's cache.
fn shared_part(lines: String) -> Arc<str> {
    thread_local! {
        static EMPTY: Arc<str> = Arc::from("");
    }
    if lines.is_empty() {
        EMPTY.with(Arc::clone)
    } else {
        Arc::from(lines)
    }
}

/// Below this many items, the calling thread is faster than sharing them out to the pool.
const PARALLEL_FROM: usize = 1024;

/// Below this many map buckets (each some 64 hosts' lines of every map), the calling
/// thread is faster.
const PARALLEL_BUCKETS_FROM: usize = 64;

/// `items.iter().map(f)`, on the shared pool's threads for large inputs; the order is
/// kept, and a panic (a bug) goes on up.
fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    parallel_map_from(PARALLEL_FROM, items, f)
}

/// [`parallel_map`] on the pool from `from` items.
fn parallel_map_from<T: Sync, R: Send>(
    from: usize,
    items: &[T],
    f: impl Fn(&T) -> R + Sync + Send,
) -> Vec<R> {
    use rayon::prelude::*;
    if items.len() < from || rayon::current_num_threads() < 2 {
        return items.iter().map(f).collect();
    }
    items.par_iter().map(f).collect()
}

/// Memo of the previous render.
#[derive(Debug, Default)]
pub struct RenderCache {
    previous: Option<ProxyModel>,
    /// Per shard, each member's section text, in section order.
    shard_members: Vec<BTreeMap<BackendId, Arc<str>>>,
    hosts: BTreeMap<HostKey, CachedHost>,
    /// Map files are made of buckets of hosts (see [`maps::map_bucket`]): each bucket's
    /// hosts, so the layout is `bucket_members.len()` buckets.
    bucket_members: Vec<BTreeSet<HostKey>>,
    /// Per map file, each bucket's text.
    bucket_texts: PerMap<Vec<Arc<str>>>,
    /// Frontend lines of the hosts with Gateway API rule chains.
    rule_lines: BTreeMap<HostKey, Arc<HostRuleLines>>,
    /// Frontend lines of the default backend's rule, after every host's.
    default_rule_lines: Option<Arc<HostRuleLines>>,
    /// Lines of the hosts with routes on Gateway listener ports of their own.
    port_lines: BTreeMap<HostKey, Arc<HostPortLines>>,
    /// CA bundles and client certificates of backends.
    backend_tls: BackendTlsFiles,
    /// The hosts' client authentication, computed again when the certificate list is.
    client_auth: ClientAuthLines,
    /// The previous output; files that did not change are reused from it.
    files: BTreeMap<String, RenderedFile>,
}

impl RenderCache {
    /// The rule lines of every host, then the default backend's.
    fn all_rule_lines(&self) -> impl Iterator<Item = &HostRuleLines> + Clone {
        self.rule_lines
            .values()
            .chain(self.default_rule_lines.iter())
            .map(|lines| &**lines)
    }

    /// Renders a model, reusing whatever the previous render already produced.
    pub fn render(&mut self, model: &ProxyModel) -> RenderedConfig {
        let previous = self.previous.take();
        let previous = previous.as_ref();
        self.render_backends(previous, model);
        self.backend_tls.update(previous, model);
        self.sync_backend_tls_files();
        let hosts_before = self.rule_lines.clone();
        let default_before = self.default_rule_lines.take();
        let crt_list_changed = self.render_hosts(previous, model);
        self.default_rule_lines = model
            .default_rule
            .as_ref()
            .filter(|_| {
                model
                    .default_backend
                    .as_ref()
                    .is_some_and(|id| model.backends.contains_key(id))
            })
            .map(|rule| Arc::new(rules::default_rule_lines(rule)));
        let exceptions_changed = previous.is_none_or(|p| {
            p.global.https.redirect_exceptions.is_empty()
                != model.global.https.redirect_exceptions.is_empty()
                || p.global.responses.error_pages != model.global.responses.error_pages
                || p.tcp_services != model.tcp_services
        });
        if crt_list_changed || exceptions_changed {
            let lines = crate::client_auth::client_auth_lines(
                model,
                !model.global.https.redirect_exceptions.is_empty(),
            );
            if !lines.same_as(&self.client_auth) {
                self.files
                    .retain(|path, _| !ManagedDir::ClientCa.holds(path));
                self.files.extend(lines.files.iter().cloned());
                self.client_auth = lines;
            }
        }
        let passthrough_changed = previous.is_none_or(|p| {
            p.passthrough != model.passthrough
                || (crate::passthrough::reads_hosts(model) && p.hosts != model.hosts)
        });
        if passthrough_changed
            || !same_rule_lines(&hosts_before, &self.rule_lines)
            || default_before != self.default_rule_lines
        {
            self.sync_address_lists(model);
        }
        // Userlists hold password hashes: the file is then readable by its owner only.
        let holds_passwords = self.all_rule_lines().any(|l| !l.userlists.is_empty());
        self.files.insert(
            MAIN_CONFIG.to_owned(),
            RenderedFile::new(
                config::main_config(
                    model,
                    (
                        self.rule_lines.values().map(|lines| &**lines),
                        self.default_rule_lines.as_deref(),
                    ),
                    &self.port_lines,
                    &self.client_auth,
                ),
                holds_passwords,
            ),
        );
        self.sync_error_page_files(previous, model);
        if previous.is_none_or(|p| p.global != model.global) {
            self.files
                .retain(|path, _| !ManagedDir::GlobalTls.holds(path));
            self.files
                .extend(crate::observers::global_tls_files(&model.global));
        }
        if self.all_rule_lines().any(|lines| lines.uses_lua) {
            self.files
                .entry(crate::layout::AUTH_LUA_FILE.to_owned())
                .or_insert_with(|| RenderedFile::new(crate::auth::AUTH_LUA.to_owned(), false));
        } else {
            self.files.remove(crate::layout::AUTH_LUA_FILE);
        }
        if passthrough_changed {
            if crate::passthrough::enabled(model) {
                self.files.insert(
                    PASSTHROUGH_MAP.to_owned(),
                    RenderedFile::new(crate::passthrough::map_text(model), false),
                );
            } else {
                self.files.remove(PASSTHROUGH_MAP);
            }
        }
        self.render_certificates(previous, model);
        let certificates_changed =
            previous.is_none_or(|p| p.certs.diff(&model.certs).next().is_some());
        if crt_list_changed || certificates_changed {
            self.files.insert(
                CRT_LIST.to_owned(),
                RenderedFile::new(maps::crt_list(model), false),
            );
        }
        self.previous = Some(model.clone());
        RenderedConfig {
            files: self.files.clone(),
            own_ports: self
                .port_lines
                .values()
                .flat_map(|lines| lines.keys().map(|(port, _)| *port))
                .chain(model.own_port_listeners.iter().map(|(port, _)| *port))
                .chain(model.tcp_services.keys().copied())
                .chain(model.global.own_listener_ports())
                .collect(),
        }
    }

    /// Puts the backend TLS files among the files when they differ from what is there;
    /// only that directory's entries are compared (a range of the ordered map), so an
    /// endpoint change does not walk every file.
    fn sync_backend_tls_files(&mut self) {
        let prefix = format!("{}/", crate::layout::BACKEND_TLS_DIR);
        let wanted = || {
            self.backend_tls
                .files()
                .filter(|(path, _)| ManagedDir::BackendTls.holds(path))
        };
        let same = self
            .files
            .range(prefix.clone()..)
            .take_while(|(path, _)| path.starts_with(&prefix))
            .eq(wanted());
        if same {
            return;
        }
        let wanted: Vec<(String, RenderedFile)> = wanted()
            .map(|(path, file)| (path.clone(), file.clone()))
            .collect();
        self.files
            .retain(|path, _| !ManagedDir::BackendTls.holds(path));
        self.files.extend(wanted);
    }

    /// Puts the error pages, the global ones and the backends' own, among the files when
    /// they differ from what is there (compared over that directory's range alone).
    fn sync_error_page_files(&mut self, previous: Option<&ProxyModel>, model: &ProxyModel) {
        let global_changed = previous
            .is_none_or(|p| p.global.responses.error_pages != model.global.responses.error_pages);
        let mut wanted: BTreeMap<String, RenderedFile> =
            crate::responses::error_page_files(&model.global.responses)
                .into_iter()
                .collect();
        wanted.extend(
            self.backend_tls
                .files()
                .filter(|(path, _)| ManagedDir::Errors.holds(path))
                .map(|(path, file)| (path.clone(), file.clone())),
        );
        let prefix = format!("{}/", crate::layout::ERRORS_DIR);
        let same = !global_changed
            && self
                .files
                .range(prefix.clone()..)
                .take_while(|(path, _)| path.starts_with(&prefix))
                .map(|(path, file)| (path, file.text()))
                .eq(wanted.iter().map(|(path, file)| (path, file.text())));
        if same {
            return;
        }
        self.files.retain(|path, _| !ManagedDir::Errors.holds(path));
        self.files.extend(wanted);
    }

    /// Puts the address list files the rule lines and the passthrough names name among
    /// the files, keeping the ones whose content is unchanged as they are.
    fn sync_address_lists(&mut self, model: &ProxyModel) {
        let mut desired: BTreeMap<String, RenderedFile> = BTreeMap::new();
        let (_, passthrough_files) = crate::passthrough::access_lines(model);
        let rule_files = self.all_rule_lines().flat_map(|lines| lines.files.iter());
        for (path, text) in rule_files.chain(passthrough_files.iter()) {
            if desired.contains_key(path) {
                continue;
            }
            let file = match self.files.get(path) {
                Some(old) if old.text() == text.as_str() => old.clone(),
                _ => RenderedFile::new(text.clone(), false),
            };
            desired.insert(path.clone(), file);
        }
        self.files.retain(|path, _| !ManagedDir::Acls.holds(path));
        self.files.extend(desired);
    }

    fn render_backends(&mut self, previous: Option<&ProxyModel>, model: &ProxyModel) {
        let shards = model.global.backend_shards.max(1);
        let defaults = &model.global.backends;
        let same_layout = previous.is_some() && self.shard_members.len() == shards as usize;
        // A section's text leaves out what the backends' `defaults` section says: when
        // that changes, a backend that did not change reads differently.
        let same_defaults = previous.is_some_and(|p| p.global.backends == *defaults);
        let mut dirty: BTreeSet<u32> = BTreeSet::new();
        match previous {
            Some(previous) if same_layout && same_defaults => {
                for item in previous.backends.diff(&model.backends) {
                    let (id, text) = match item {
                        DiffItem::Add(id, backend)
                        | DiffItem::Update {
                            new: (id, backend), ..
                        } => (id, Some(render_backend(backend, defaults))),
                        DiffItem::Remove(id, _) => (id, None),
                    };
                    let shard = shard_of(id, shards);
                    let Some(members) = self.shard_members.get_mut(shard as usize) else {
                        continue;
                    };
                    let before = match text {
                        Some(text) => members.insert(id.clone(), Arc::from(text)),
                        None => members.remove(id),
                    };
                    if before.as_deref() != members.get(id).map(|t| &**t) {
                        dirty.insert(shard);
                    }
                }
            }
            _ => {
                // A new layout: every file is assembled again; texts already rendered
                // are kept, unless the backends' defaults changed.
                let mut texts: BTreeMap<BackendId, Arc<str>> = self
                    .shard_members
                    .drain(..)
                    .flat_map(BTreeMap::into_iter)
                    .collect();
                let work: Vec<(&BackendId, &model::Backend, Option<Arc<str>>)> = model
                    .backends
                    .iter()
                    .map(|(id, backend)| {
                        let reusable = same_defaults
                            && previous
                                .and_then(|p| p.backends.get(id))
                                .is_some_and(|old| old == backend);
                        (id, &**backend, texts.remove(id).filter(|_| reusable))
                    })
                    .collect();
                let rendered = parallel_map(&work, |(id, backend, reused)| {
                    let text = reused
                        .clone()
                        .unwrap_or_else(|| Arc::from(render_backend(backend, defaults)));
                    (shard_of(id, shards), text)
                });
                let mut by_shard: Vec<Vec<(BackendId, Arc<str>)>> =
                    vec![Vec::new(); shards as usize];
                for ((id, _, _), (shard, text)) in work.iter().zip(rendered) {
                    if let Some(members) = by_shard.get_mut(shard as usize) {
                        members.push(((*id).clone(), text));
                    }
                }
                // The backends come in key order, so each shard's list is sorted: its
                // table is built in one pass, not by a descent per backend.
                self.shard_members = by_shard.into_iter().map(BTreeMap::from_iter).collect();
                self.files
                    .retain(|path, _| !ManagedDir::Backends.holds(path));
                dirty.extend(0..shards);
            }
        }
        for shard in dirty {
            let Some(members) = self.shard_members.get(shard as usize) else {
                continue;
            };
            let header = shard_header(shard, shards);
            let mut text = String::with_capacity(
                header.len() + members.values().map(|t| t.len()).sum::<usize>(),
            );
            text.push_str(&header);
            for section in members.values() {
                text.push_str(section);
            }
            self.files.insert(
                layout::shard_file_name(shard, shards),
                RenderedFile::new(text, false),
            );
        }
    }

    /// Updates the host lines and the map files; says whether a host's certificate
    /// changed (the certificate list must be rendered again).
    fn render_hosts(&mut self, previous: Option<&ProxyModel>, model: &ProxyModel) -> bool {
        let buckets = maps::map_buckets(model.hosts.len());
        let rebuild = previous.is_none() || buckets as usize != self.bucket_members.len();
        let mut certificates_changed = previous.is_none();
        // (map, bucket) pairs whose text must be assembled again.
        let mut dirty: BTreeSet<(MapFile, u32)> = BTreeSet::new();
        let mut update = |cache: &mut Self,
                          key: &HostKey,
                          host: Option<&model::Host>,
                          rendered: Option<RenderedHost>,
                          old_cert: Option<&CertId>,
                          old_tls: Option<&model::TlsOptions>| {
            let (new_parts, rules, ports) = match rendered {
                Some(rendered) => (Some(rendered.parts), rendered.rules, rendered.ports),
                None => (None, None, None),
            };
            match rules {
                Some(lines) => {
                    cache.rule_lines.insert(key.clone(), Arc::new(lines));
                }
                None => {
                    cache.rule_lines.remove(key);
                }
            }
            match ports {
                Some(lines) => {
                    cache.port_lines.insert(key.clone(), Arc::new(lines));
                }
                None => {
                    cache.port_lines.remove(key);
                }
            }
            let old_parts = match &new_parts {
                Some(parts) => cache.hosts.insert(key.clone(), parts.clone()),
                None => cache.hosts.remove(key),
            };
            if !rebuild {
                let bucket = maps::map_bucket(key, buckets);
                if let Some(members) = cache.bucket_members.get_mut(bucket as usize) {
                    if new_parts.is_some() {
                        members.insert(key.clone());
                    } else {
                        members.remove(key);
                    }
                }
                for map in MapFile::ALL {
                    let before = old_parts.as_ref().map_or("", |p| &p[map]);
                    let after = new_parts.as_ref().map_or("", |p| &p[map]);
                    if before != after {
                        dirty.insert((map, bucket));
                    }
                }
            }
            if old_cert != host.and_then(|h| h.cert.as_ref())
                || own_tls(old_tls) != own_tls(host.map(|h| &*h.tls))
            {
                certificates_changed = true;
            }
        };
        match previous {
            Some(previous) => {
                for item in previous.hosts.diff(&model.hosts) {
                    match item {
                        DiffItem::Add(key, host) => {
                            let rendered = render_host(key, host);
                            update(self, key, Some(host), Some(rendered), None, None)
                        }
                        DiffItem::Update {
                            old: (_, old),
                            new: (key, host),
                        } => {
                            let rendered = render_host(key, host);
                            let (old_cert, old_tls) = (old.cert.as_ref(), Some(&*old.tls));
                            update(self, key, Some(host), Some(rendered), old_cert, old_tls)
                        }
                        DiffItem::Remove(key, old) => {
                            update(self, key, None, None, old.cert.as_ref(), Some(&*old.tls))
                        }
                    }
                }
            }
            None => {
                // Every certificate counts as changed already, and the buckets are
                // rebuilt below: only the tables are filled. The hosts come in key order,
                // so each table is built in one pass, not by a descent per host.
                let hosts: Vec<(&HostKey, &model::Host)> = model.hosts.iter().collect();
                let rendered = parallel_map(&hosts, |(key, host)| render_host(key, host));
                let (mut rule_lines, mut port_lines) = (Vec::new(), Vec::new());
                // Collected in place in the rendered hosts' list (the standard library
                // reuses it): the rendered hosts and their parts are never two lists.
                let parts: Vec<(HostKey, CachedHost)> = (rendered.into_iter().zip(hosts))
                    .map(|(rendered, (key, _))| {
                        if let Some(lines) = rendered.rules {
                            rule_lines.push((key.clone(), Arc::new(lines)));
                        }
                        if let Some(lines) = rendered.ports {
                            port_lines.push((key.clone(), Arc::new(lines)));
                        }
                        (key.clone(), rendered.parts)
                    })
                    .collect();
                self.hosts = BTreeMap::from_iter(parts);
                self.rule_lines = BTreeMap::from_iter(rule_lines);
                self.port_lines = BTreeMap::from_iter(port_lines);
            }
        }
        // When the buckets are rebuilt, each one's hosts, in key order: read as they are
        // sorted into buckets, not looked up again by key.
        let mut rebuilt_buckets: Vec<Vec<&CachedHost>> = Vec::new();
        if rebuild {
            let hosts: Vec<(&HostKey, &CachedHost)> = self.hosts.iter().collect();
            let host_buckets = parallel_map(&hosts, |(key, _)| maps::map_bucket(key, buckets));
            let mut keys_by_bucket: Vec<Vec<HostKey>> = vec![Vec::new(); buckets as usize];
            rebuilt_buckets = vec![Vec::new(); buckets as usize];
            for ((key, parts), bucket) in hosts.into_iter().zip(host_buckets) {
                if let (Some(keys), Some(bucket_parts)) = (
                    keys_by_bucket.get_mut(bucket as usize),
                    rebuilt_buckets.get_mut(bucket as usize),
                ) {
                    keys.push(key.clone());
                    bucket_parts.push(parts);
                }
            }
            self.bucket_members = (keys_by_bucket.into_iter())
                .map(BTreeSet::from_iter)
                .collect();
            for map in MapFile::ALL {
                self.bucket_texts[map] = vec![Arc::from(""); buckets as usize];
            }
            dirty = MapFile::ALL
                .into_iter()
                .flat_map(|map| (0..buckets).map(move |bucket| (map, bucket)))
                .collect();
        }
        let mut dirty_maps = PerMap::<bool>::default();
        // Per bucket, the maps whose text it must make again: its hosts are looked up once
        // for all of them.
        let mut dirty_buckets: BTreeMap<u32, Vec<MapFile>> = BTreeMap::new();
        for (map, bucket) in dirty {
            dirty_buckets.entry(bucket).or_default().push(map);
        }
        let dirty_buckets: Vec<(u32, Vec<MapFile>)> = dirty_buckets.into_iter().collect();
        let texts = parallel_map_from(PARALLEL_BUCKETS_FROM, &dirty_buckets, |(bucket, maps)| {
            let parts: Vec<&CachedHost> = match rebuilt_buckets.get(*bucket as usize) {
                Some(hosts) => hosts.clone(),
                None => (self.bucket_members.get(*bucket as usize)?.iter())
                    .filter_map(|key| self.hosts.get(key))
                    .collect(),
            };
            let texts: Vec<Arc<str>> = maps
                .iter()
                .map(|map| {
                    let lines = || parts.iter().map(|host| &*host[*map]);
                    let mut text = String::with_capacity(lines().map(str::len).sum());
                    text.extend(lines());
                    Arc::<str>::from(text)
                })
                .collect();
            Some(texts)
        });
        for ((bucket, maps), texts) in dirty_buckets.into_iter().zip(texts) {
            let Some(texts) = texts else {
                continue;
            };
            for (map, text) in maps.into_iter().zip(texts) {
                if let Some(slot) = self.bucket_texts[map].get_mut(bucket as usize) {
                    *slot = text;
                }
                dirty_maps[map] = true;
            }
        }
        for map in MapFile::ALL.into_iter().filter(|map| dirty_maps[*map]) {
            self.files.insert(
                map.path().to_owned(),
                RenderedFile::from_chunks(self.bucket_texts[map].clone(), false),
            );
        }
        certificates_changed
    }

    fn render_certificates(&mut self, previous: Option<&ProxyModel>, model: &ProxyModel) {
        if previous.is_none_or(|p| p.default_cert != model.default_cert) {
            self.files.insert(
                DEFAULT_CERT.to_owned(),
                RenderedFile::new(model.default_cert.pem_bundle.clone(), true),
            );
        }
        match previous {
            Some(previous) => {
                for item in previous.certs.diff(&model.certs) {
                    match item {
                        DiffItem::Add(id, cert)
                        | DiffItem::Update {
                            new: (id, cert), ..
                        } => {
                            self.files.insert(
                                certificate_file(id),
                                RenderedFile::new(cert.pem_bundle.clone(), true),
                            );
                        }
                        DiffItem::Remove(id, _) => {
                            self.files.remove(&certificate_file(id));
                        }
                    }
                }
            }
            None => {
                let keep =
                    |p: &String| !ManagedDir::Certs.holds(p) || p == DEFAULT_CERT || p == CRT_LIST;
                self.files.retain(|p, _| keep(p));
                for (id, cert) in &model.certs {
                    self.files.insert(
                        certificate_file(id),
                        RenderedFile::new(cert.pem_bundle.clone(), true),
                    );
                }
            }
        }
    }
}

/// Whether two sets of rule lines are the same (shared or equal).
fn same_rule_lines(
    before: &BTreeMap<HostKey, Arc<HostRuleLines>>,
    after: &BTreeMap<HostKey, Arc<HostRuleLines>>,
) -> bool {
    before.len() == after.len()
        && before
            .iter()
            .zip(after)
            .all(|((a, x), (b, y))| a == b && (Arc::ptr_eq(x, y) || x.files == y.files))
}

/// A host's TLS options when it has any (an added host without any changes no list line).
fn own_tls(tls: Option<&model::TlsOptions>) -> Option<&model::TlsOptions> {
    tls.filter(|tls| !tls.is_empty())
}
