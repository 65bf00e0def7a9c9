//! What HAProxy runs, and how to bring it to the desired model: runtime API commands for
//! what HAProxy can change live (servers, map contents, certificate contents), and the
//! reasons for a reload for everything else. Computed by comparing values, like the files.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use imbl::ordmap::DiffItem;
use model::{Backend, BackendId};
use render::layout::{MAIN_CONFIG, ManagedDir, MapFile};
use render::{RenderedConfig, RenderedFile};

use crate::{certificates, maps};

/// Every backend of a model, shared between the desired and the live state (a persistent
/// map: cloned in O(1), compared by the parts two versions do not share).
pub type Backends = model::OrdMap<BackendId, std::sync::Arc<Backend>>;

/// Why HAProxy must load its configuration again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReloadReason {
    /// The main configuration changed (global settings, frontends, default backend).
    MainConfig,
    /// Backend sections were added or removed, or their settings changed.
    BackendSections,
    /// A certificate is too large to send over the runtime API.
    Certificates,
    /// A client-certificate CA or revocation list changed, or a host's certificate-list
    /// entry naming one (`add ssl crt-list` cannot load a new CA file in HAProxy 2.6).
    ClientCertificateAuthorities,
    /// A runtime API command failed or answered unexpectedly: HAProxy's state is unknown.
    RuntimeApiFailed,
    /// A removed server kept connections for longer than the reload interval.
    DrainTimeout,
    /// Servers changed in a backend whose balance algorithm (`static-rr`) takes no
    /// servers at runtime.
    StaticBalanceServers,
    /// Servers were added to a backend whose servers carry their cookie on their line,
    /// which HAProxy 2.6's `add server` does not take.
    ServerCookies,
}

impl ReloadReason {
    /// Every reason, so that each is counted from start.
    pub const ALL: [ReloadReason; 8] = [
        ReloadReason::MainConfig,
        ReloadReason::BackendSections,
        ReloadReason::Certificates,
        ReloadReason::ClientCertificateAuthorities,
        ReloadReason::RuntimeApiFailed,
        ReloadReason::DrainTimeout,
        ReloadReason::StaticBalanceServers,
        ReloadReason::ServerCookies,
    ];

    /// Label value for logs and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            ReloadReason::MainConfig => "main_config",
            ReloadReason::BackendSections => "backend_sections",
            ReloadReason::Certificates => "certificates",
            ReloadReason::ClientCertificateAuthorities => "client_certificate_authorities",
            ReloadReason::RuntimeApiFailed => "runtime_api_failed",
            ReloadReason::DrainTimeout => "drain_timeout",
            ReloadReason::StaticBalanceServers => "static_balance_servers",
            ReloadReason::ServerCookies => "server_cookies",
        }
    }
}

impl fmt::Display for ReloadReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A server of a backend section, by HAProxy names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ServerRef {
    /// Backend section name.
    pub backend: String,
    /// Server name.
    pub server: String,
}

impl fmt::Display for ServerRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.backend, self.server)
    }
}

/// One change to the running HAProxy over its runtime API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeCommand {
    /// `add server` (it starts in maintenance), `enable health` when it is checked, then
    /// `set server ... state ready`.
    AddServer {
        /// The new server.
        server: ServerRef,
        /// Its address.
        address: SocketAddr,
        /// The options of the backend's server lines, each preceded by a space, exactly
        /// as in the file.
        options: String,
        /// Its id: the one the file gives it (`render::server_ids`).
        id: u32,
        /// Whether it has health checks to enable.
        checked: bool,
        /// Whether HAProxy derives its cookie from its address: HAProxy 2.6's `add
        /// server` does not, so the address is set again (`set server ... addr`), which
        /// does.
        derives_cookie: bool,
    },
    /// `set server ... state ready`: a server put in maintenance for removal is wanted again.
    ReadyServer(ServerRef),
    /// `set server ... weight`: a server's share of the balanced traffic (blue-green).
    SetWeight {
        /// The server.
        server: ServerRef,
        /// Its new weight.
        weight: model::ServerWeight,
    },
    /// `set server ... state maint` then `del server`; a server with connections left is
    /// deleted later (see [`LiveState::draining`]).
    RemoveServer(ServerRef),
    /// Edits a few keys of a map (`add map`, `set map`, `del map`), each atomically.
    EditMap {
        /// Map file, as the configuration names it.
        map: String,
        /// New keys and their values.
        add: Vec<(String, String)>,
        /// Existing keys with a new value.
        set: Vec<(String, String)>,
        /// Keys to remove.
        delete: Vec<String>,
    },
    /// Replaces a map's whole content atomically (`prepare map` / `add map @ver` /
    /// `commit map`).
    ReplaceMap {
        /// Map file, as the configuration names it.
        map: String,
        /// The new content, in map file format.
        content: Arc<[u8]>,
    },
    /// Replaces an address list's whole content atomically (`prepare acl` / `add acl @ver`
    /// per entry / `commit acl`): HAProxy 2.6's `add acl` takes no payload.
    ReplaceAcl {
        /// Pattern file, as the configuration names it.
        acl: String,
        /// The new entries, one a line, each a word the runtime API passes unchanged.
        content: Arc<str>,
    },
    /// `set ssl cert` then `commit ssl cert` for a certificate file HAProxy already has.
    UpdateCertificate {
        /// Certificate file, as the configuration names it.
        file: String,
        /// PEM content.
        content: Arc<[u8]>,
    },
    /// `set ssl ca-file` (or `crl-file`) then `commit`: new content for a client-certificate
    /// CA or revocation list HAProxy has loaded already.
    UpdateCaFile {
        /// The file, as the certificate list names it.
        file: String,
        /// Whether it is a revocation list (`crl-file`) rather than a CA bundle.
        crl: bool,
        /// PEM content.
        content: Arc<[u8]>,
    },
    /// `new ssl cert`, `set ssl cert`, `commit ssl cert`: a certificate file HAProxy does
    /// not have yet.
    AddCertificate {
        /// Certificate file, as the configuration names it.
        file: String,
        /// PEM content.
        content: Arc<[u8]>,
    },
    /// `add ssl crt-list`: one line of the certificate list.
    AddCrtListEntry {
        /// The certificate list.
        list: String,
        /// The line, as in the file (`<certificate> <sni filter>`).
        entry: String,
    },
    /// `del ssl crt-list <list> <certificate>:<line>`, the line number looked up first
    /// with `show ssl crt-list -n`, since a certificate may serve several names.
    RemoveCrtListEntry {
        /// The certificate list.
        list: String,
        /// The line, as in the file (`<certificate> <sni filter>`).
        entry: String,
    },
    /// `del ssl cert`: a certificate no list entry uses any more.
    RemoveCertificate {
        /// Certificate file, as the configuration names it.
        file: String,
    },
}

/// What HAProxy runs: the backends with their live servers, and the content hash of every
/// other file as HAProxy has it (loaded, or updated live since).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LiveState {
    /// Backend sections with the servers HAProxy routes to.
    pub backends: Backends,
    /// The main configuration, maps, certificate list and certificates.
    pub files: BTreeMap<String, RenderedFile>,
    /// Servers removed from the model but still in HAProxy, in maintenance, because they
    /// had connections when they were to be deleted.
    pub draining: BTreeSet<ServerRef>,
}

impl LiveState {
    /// What a HAProxy freshly loaded from these files runs.
    pub fn loaded(backends: Backends, rendered: &RenderedConfig) -> Self {
        Self {
            backends,
            files: rendered
                .files
                .iter()
                .filter(|(path, _)| !ManagedDir::Backends.holds(path))
                .map(|(path, file)| (path.clone(), file.clone()))
                .collect(),
            draining: BTreeSet::new(),
        }
    }
}

/// How to bring HAProxy from a live state to the desired one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveUpdate {
    /// Runtime commands, in order; empty when nothing can or need be changed live.
    pub commands: Vec<RuntimeCommand>,
    /// Why a reload is still needed after the commands; empty when they suffice.
    pub reload: BTreeSet<ReloadReason>,
    /// The live state once every command succeeded.
    pub next: LiveState,
}

impl LiveUpdate {
    /// Nothing to change at all.
    pub fn is_noop(&self) -> bool {
        self.commands.is_empty() && self.reload.is_empty()
    }

    /// Whether the files must pass `haproxy -c` before this update goes out: always before
    /// a reload, and for certificates and certificate-list lines (whose ciphers and TLS
    /// versions), which HAProxy may refuse. Server and map changes cannot make a valid
    /// configuration invalid.
    pub fn needs_check(&self) -> bool {
        !self.reload.is_empty()
            || self.commands.iter().any(|c| {
                matches!(
                    c,
                    RuntimeCommand::UpdateCertificate { .. }
                        | RuntimeCommand::AddCertificate { .. }
                        | RuntimeCommand::UpdateCaFile { .. }
                        | RuntimeCommand::AddCrtListEntry { .. }
                )
            })
    }
}

/// Compares the live state with the desired backends and files.
///
/// Servers of backends whose section settings did not change are always updated live,
/// even while a reload is due, so endpoints never wait for one. Maps are replaced live
/// when every backend they may name exists in HAProxy already; otherwise they arrive
/// with the reload that adds the backends. Certificates and the certificate list are
/// changed live too.
pub fn live_update(live: &LiveState, backends: &Backends, desired: &RenderedConfig) -> LiveUpdate {
    let mut reload = BTreeSet::new();
    let mut commands = Vec::new();
    let mut draining = live.draining.clone();

    let hash = |files: &BTreeMap<String, RenderedFile>, path: &str| files.get(path).map(|f| f.hash);
    if hash(&desired.files, MAIN_CONFIG) != hash(&live.files, MAIN_CONFIG) {
        reload.insert(ReloadReason::MainConfig);
    }

    // Only the parts the two maps do not share are visited.
    let mut sections_equal = true;
    let mut resolvable = true;
    let mut server_changes = Vec::new();
    for item in live.backends.diff(backends) {
        match item {
            DiffItem::Add(..) => {
                sections_equal = false;
                resolvable = false;
            }
            DiffItem::Remove(..) => sections_equal = false,
            DiffItem::Update {
                old: (_, live_backend),
                new: (_, wanted),
            } => {
                if wanted.same_section_settings(live_backend) {
                    server_changes.push((live_backend, wanted));
                } else {
                    sections_equal = false;
                }
            }
        }
    }
    if !sections_equal {
        reload.insert(ReloadReason::BackendSections);
    }
    let mut next_backends = live.backends.clone();
    for (live_backend, wanted) in server_changes {
        if live_backend.servers != wanted.servers {
            if !wanted.settings.balance.takes_runtime_servers() {
                reload.insert(ReloadReason::StaticBalanceServers);
                continue;
            }
            // Both lists are sorted by endpoint.
            let adds = || {
                wanted.servers.iter().any(|server| {
                    live_backend
                        .servers
                        .binary_search_by_key(&server.endpoint(), model::Server::endpoint)
                        .is_err()
                })
            };
            if !render::adds_servers_live(wanted) && adds() {
                reload.insert(ReloadReason::ServerCookies);
                continue;
            }
            server_commands(live_backend, wanted, &mut draining, &mut commands);
        }
        // HAProxy runs the wanted servers once the commands are sent, whatever reload is
        // also due: a next plan made before that reload must not send them again.
        next_backends.insert(wanted.id.clone(), wanted.clone());
    }

    let mut next_files = live.files.clone();
    let maps_resolvable = resolvable;
    // The passthrough map exists only with the frontend that reads it, so its coming and
    // going is a main configuration change (a reload); in between it changes live.
    let map_paths = MapFile::ALL
        .into_iter()
        .map(MapFile::path)
        .chain([render::layout::PASSTHROUGH_MAP]);
    for path in map_paths {
        let Some(file) = desired.files.get(path) else {
            continue;
        };
        // A passthrough map HAProxy does not have comes with the frontend that reads it;
        // and while the main configuration changes, the map waits for it: a name's allow
        // and deny lists are lines of that frontend, and a name served before its lines
        // are would be open to every client until the reload.
        // A route map waits for a main configuration change too: a path's value may name
        // a rule chain (`_gw_...`) whose lines come with it, and a request routed to a
        // chain HAProxy does not have yet would be answered 404.
        let passthrough = path == render::layout::PASSTHROUGH_MAP;
        let unknown = passthrough && !live.files.contains_key(path);
        if hash(&live.files, path) == Some(file.hash) || !maps_resolvable || unknown {
            continue;
        }
        let waits = reload.contains(&ReloadReason::MainConfig)
            && (passthrough || names_new_chain(live.files.get(path), file));
        if waits {
            continue;
        }
        // A map whose entries are tried in order is replaced whole.
        let ordered = MapFile::ALL
            .into_iter()
            .any(|map| map.path() == path && map.ordered());
        let live_map = live.files.get(path).filter(|_| !ordered);
        commands.push(maps::change(path, live_map, file));
        next_files.insert(path.to_owned(), file.clone());
    }

    let client_ca_changed = match certificates::client_ca_changes(&live.files, &desired.files) {
        Some(updates) => {
            commands.extend(updates);
            next_files.retain(|path, _| !ManagedDir::ClientCa.holds(path));
            next_files.extend(
                desired
                    .files
                    .iter()
                    .filter(|(path, _)| ManagedDir::ClientCa.holds(path))
                    .map(|(path, file)| (path.clone(), file.clone())),
            );
            false
        }
        None => {
            reload.insert(ReloadReason::ClientCertificateAuthorities);
            true
        }
    };
    // Address lists: a list HAProxy has takes its new content live; a new list comes
    // with the configuration lines that name it, so with their reload.
    for (path, file) in desired
        .files
        .iter()
        .filter(|(path, _)| render::layout::is_address_list_file(path))
    {
        match live.files.get(path) {
            Some(old) if old.hash == file.hash => {}
            Some(_) if maps::safe_lines(&file.text()) => {
                commands.push(RuntimeCommand::ReplaceAcl {
                    acl: path.clone(),
                    content: Arc::from(&*file.text()),
                });
                next_files.insert(path.clone(), file.clone());
            }
            _ => {
                reload.insert(ReloadReason::MainConfig);
            }
        }
    }
    next_files.retain(|path, _| {
        !render::layout::is_address_list_file(path) || desired.files.contains_key(path)
    });

    match certificates::changes(&live.files, &desired.files).filter(|_| !client_ca_changed) {
        Some(changes) => {
            commands.extend(changes);
            next_files.retain(|path, _| !ManagedDir::Certs.holds(path));
            next_files.extend(
                desired
                    .files
                    .iter()
                    .filter(|(path, _)| ManagedDir::Certs.holds(path))
                    .map(|(path, file)| (path.clone(), file.clone())),
            );
        }
        None if client_ca_changed => {}
        None => {
            reload.insert(ReloadReason::Certificates);
        }
    }

    let next = LiveState {
        backends: if reload.is_empty() {
            backends.clone()
        } else {
            next_backends
        },
        files: next_files,
        draining,
    };
    LiveUpdate {
        commands,
        reload,
        next,
    }
}

/// Commands turning one backend's live servers into the wanted ones.
fn server_commands(
    live: &Backend,
    wanted: &Backend,
    draining: &mut BTreeSet<ServerRef>,
    commands: &mut Vec<RuntimeCommand>,
) {
    let section = wanted.id.section_name();
    let server_ref = |server: &model::Server| ServerRef {
        backend: section.clone(),
        server: server.name(),
    };
    let checked = render::checks_servers(wanted);
    let derives_cookie = render::derives_server_cookies(wanted);
    fn by_endpoint(servers: &[model::Server]) -> BTreeMap<(IpAddr, u16), &model::Server> {
        servers.iter().map(|s| (s.endpoint(), s)).collect()
    }
    let live_servers = by_endpoint(&live.servers);
    let wanted_servers = by_endpoint(&wanted.servers);
    // Each wanted server's id, once a server is to be added.
    let mut ids: Option<BTreeMap<(IpAddr, u16), u32>> = None;
    // New servers first: a backend whose endpoints are all replaced never has none.
    for (endpoint, server) in &wanted_servers {
        let reference = server_ref(server);
        if let Some(live_server) = live_servers.get(endpoint) {
            if live_server.weight != server.weight {
                commands.push(RuntimeCommand::SetWeight {
                    server: reference,
                    // A server without a weight has HAProxy's default of 1.
                    weight: server
                        .weight
                        .unwrap_or_else(|| model::ServerWeight::clamped(1)),
                });
            }
        } else if draining.remove(&reference) {
            commands.push(RuntimeCommand::ReadyServer(reference));
            if server.weight.is_some() {
                // It kept the weight it had when it was put in maintenance.
                commands.push(RuntimeCommand::SetWeight {
                    server: server_ref(server),
                    weight: server
                        .weight
                        .unwrap_or_else(|| model::ServerWeight::clamped(1)),
                });
            }
        } else {
            let ids = ids.get_or_insert_with(|| {
                (wanted.servers.iter().map(model::Server::endpoint))
                    .zip(render::server_ids(wanted))
                    .collect()
            });
            commands.push(RuntimeCommand::AddServer {
                server: reference,
                address: SocketAddr::new(server.address, server.port),
                options: render::server_options(wanted, server),
                id: ids
                    .get(endpoint)
                    .copied()
                    .unwrap_or_else(|| render::server_id(&server.name())),
                checked,
                derives_cookie,
            });
        }
    }
    for (_, server) in live_servers
        .iter()
        .filter(|(endpoint, _)| !wanted_servers.contains_key(endpoint))
    {
        let server = server_ref(server);
        draining.insert(server.clone());
        commands.push(RuntimeCommand::RemoveServer(server));
    }
}

/// Whether the route map `wanted` gives some key a rule chain's value (`_gw_...`) that
/// the map HAProxy runs (`running`) gives no key: the frontend lines of that chain are
/// not there yet.
fn names_new_chain(running: Option<&RenderedFile>, wanted: &RenderedFile) -> bool {
    let chains = |text: &str| -> BTreeSet<String> {
        text.lines()
            .filter_map(|line| line.split_whitespace().nth(1))
            .filter(|value| value.starts_with(render::DISPATCH_PREFIX))
            .map(str::to_owned)
            .collect()
    };
    let wanted = chains(&wanted.text());
    if wanted.is_empty() {
        return false;
    }
    let running = running.map(|file| chains(&file.text())).unwrap_or_default();
    wanted.iter().any(|chain| !running.contains(chain))
}

#[cfg(test)]
mod tests {

    /// Fails to compile when a reason is added without a place here, and fails when a
    /// reason is missing from `ALL` (which the metrics count from start).
    #[test]
    fn every_reload_reason_is_in_all() {
        let place = |reason: ReloadReason| match reason {
            ReloadReason::MainConfig => 0,
            ReloadReason::BackendSections => 1,
            ReloadReason::Certificates => 2,
            ReloadReason::RuntimeApiFailed => 3,
            ReloadReason::DrainTimeout => 4,
            ReloadReason::StaticBalanceServers => 5,
            ReloadReason::ServerCookies => 6,
            ReloadReason::ClientCertificateAuthorities => 7,
        };
        let mut places: Vec<usize> = ReloadReason::ALL.into_iter().map(place).collect();
        places.sort_unstable();
        assert_eq!(places, (0..8).collect::<Vec<_>>());
    }

    use super::*;
    use model::{Balance, HaproxyDuration, Server};

    fn backend(service: &str, servers: &[u8], balance: Balance) -> (BackendId, Backend) {
        let id = BackendId {
            namespace: "ns".into(),
            service: service.into(),
            port: "80".into(),
            mode: model::BackendMode::Http,
        };
        let backend = Backend {
            id: id.clone(),
            servers: servers
                .iter()
                .map(|last| Server::at(std::net::IpAddr::from([10, 0, 0, *last]), 80))
                .collect(),
            server_options: Default::default(),
            settings: std::sync::Arc::new(model::BackendSettings {
                balance,
                ..model::BackendSettings::plain(
                    HaproxyDuration::parse("5s").unwrap_or_else(|_| unreachable!()),
                    HaproxyDuration::parse("50s").unwrap_or_else(|_| unreachable!()),
                )
            }),
            origins: Vec::new(),
        };
        (id, backend)
    }

    fn files(entries: &[(&str, &str)]) -> RenderedConfig {
        RenderedConfig {
            files: entries
                .iter()
                .map(|(p, t)| ((*p).to_owned(), RenderedFile::new((*t).to_owned(), false)))
                .collect(),
            ..RenderedConfig::default()
        }
    }

    fn backends(list: &[(BackendId, Backend)]) -> Backends {
        list.iter().cloned().collect()
    }

    const BASE: [(&str, &str); 4] = [
        ("haproxy.cfg", "main"),
        ("maps/hosts.map", "a.test a.test\n"),
        ("certs/crt-list.txt", ""),
        ("certs/default.pem", "default"),
    ];

    #[test]
    fn a_path_that_becomes_a_rule_chain_waits_for_the_reload_that_brings_its_lines() {
        let web = backends(&[backend("web", &[7], Balance::RoundRobin)]);
        let with = |main: &str, map: &str| {
            let mut entries = BASE.to_vec();
            entries[0] = ("haproxy.cfg", main);
            entries.push(("maps/https-prefix.map", map));
            files(&entries)
        };
        let live = LiveState::loaded(
            web.clone(),
            &with(
                "main",
                "a.test#/ ns_web_80
",
            ),
        );
        // The path's value names a chain whose lines are new in the main configuration.
        let chained = with(
            "main with _gw_1 lines",
            "a.test#/ _gw_1
",
        );
        let update = live_update(&live, &web, &chained);
        assert!(update.commands.is_empty(), "{:?}", update.commands);
        assert_eq!(update.reload, BTreeSet::from([ReloadReason::MainConfig]));
        // Back to a plain path: HAProxy has the backend, so the map goes live at once,
        // whatever the main configuration's change.
        let live = LiveState::loaded(web.clone(), &chained);
        let plain = with(
            "main",
            "a.test#/ ns_web_80
",
        );
        let update = live_update(&live, &web, &plain);
        assert_eq!(update.commands.len(), 1, "{:?}", update.commands);
        // Another path to a chain HAProxy runs already goes live too.
        let more = with(
            "main with _gw_1 lines",
            "a.test#/ _gw_1
b.test#/ ns_web_80
",
        );
        let update = live_update(&live, &web, &more);
        assert_eq!(update.commands.len(), 1, "{:?}", update.commands);
        assert!(update.reload.is_empty());
    }

    #[test]
    fn a_passthrough_name_to_a_backend_haproxy_has_is_one_map_edit_and_no_reload() {
        let db = backends(&[backend("db", &[7], Balance::RoundRobin)]);
        let with_map = |map: &str| {
            let mut entries = BASE.to_vec();
            entries.push(("maps/passthrough.map", map));
            files(&entries)
        };
        let before = with_map("a.passthrough.test ns_db_80\n");
        let live = LiveState::loaded(db.clone(), &before);
        let after = with_map("a.passthrough.test ns_db_80\nb.passthrough.test ns_db_80\n");
        let update = live_update(&live, &db, &after);
        assert_eq!(
            update.commands,
            [RuntimeCommand::EditMap {
                map: "maps/passthrough.map".into(),
                add: vec![("b.passthrough.test".into(), "ns_db_80".into())],
                set: vec![],
                delete: vec![],
            }]
        );
        assert!(update.reload.is_empty());
        let removed = live_update(&update.next, &db, &before);
        assert_eq!(
            removed.commands,
            [RuntimeCommand::EditMap {
                map: "maps/passthrough.map".into(),
                add: vec![],
                set: vec![],
                delete: vec!["b.passthrough.test".into()],
            }]
        );
        // The first passthrough name comes with the frontend that reads the map: the
        // main configuration changes, and the map arrives with the reload.
        let mut first = with_map("a.passthrough.test ns_db_80\n");
        first.files.insert(
            "haproxy.cfg".into(),
            RenderedFile::new("main with https_sni".into(), false),
        );
        let without = LiveState::loaded(db.clone(), &files(&BASE));
        let update = live_update(&without, &db, &first);
        assert!(update.commands.is_empty(), "{:?}", update.commands);
        assert_eq!(update.reload, BTreeSet::from([ReloadReason::MainConfig]));
        // A name that comes with lines of the main configuration (its allow list) waits
        // for the reload that brings them: served before them, it would be open to all.
        let mut guarded = after.clone();
        guarded.files.insert(
            "haproxy.cfg".into(),
            RenderedFile::new("main with b.passthrough.test's allow list".into(), false),
        );
        let update = live_update(&live, &db, &guarded);
        assert!(update.commands.is_empty(), "{:?}", update.commands);
        assert_eq!(update.reload, BTreeSet::from([ReloadReason::MainConfig]));
    }

    #[test]
    fn a_server_added_live_gets_the_id_the_file_gives_it_even_where_two_names_hash_alike() {
        // Two endpoints whose names give one id: the file gives the second the next one.
        let mut seen = std::collections::HashMap::new();
        let (first, second) = (0..=255u8)
            .flat_map(|a| (0..=255u8).map(move |b| std::net::IpAddr::from([10, 0, a, b])))
            .find_map(|ip| {
                let server = Server::at(ip, 80);
                seen.insert(render::server_id(&server.name()), server.clone())
                    .map(|earlier| (earlier, server))
            })
            .unwrap_or_else(|| unreachable!("65,536 names in 2^19 ids always share one"));
        let (id, mut wanted) = backend("a", &[], Balance::Source);
        wanted.servers = vec![first.clone(), second.clone()];
        wanted.servers.sort_by_key(Server::endpoint);
        let mut live = wanted.clone();
        let later = wanted.servers[1].clone();
        live.servers.retain(|server| *server != later);
        let file_ids = render::server_ids(&wanted);
        assert_eq!(file_ids[1], file_ids[0] + 1, "{file_ids:?}");
        let update = live_update(
            &LiveState::loaded(backends(&[(id.clone(), live)]), &files(&BASE)),
            &backends(&[(id, wanted)]),
            &files(&BASE),
        );
        let [RuntimeCommand::AddServer { server, id, .. }] = update.commands.as_slice() else {
            panic!("{:?}", update.commands);
        };
        assert_eq!(server.server, later.name());
        assert_eq!(*id, file_ids[1]);
        assert_ne!(*id, render::server_id(&later.name()));
    }

    #[test]
    fn servers_only_is_live_and_lands_exactly_on_the_desired_state() {
        let live = LiveState::loaded(
            backends(&[backend("a", &[1, 2], Balance::RoundRobin)]),
            &files(&BASE),
        );
        let desired = backends(&[backend("a", &[2, 3], Balance::RoundRobin)]);
        let update = live_update(&live, &desired, &files(&BASE));
        assert_eq!(update.reload, BTreeSet::new());
        let server = |name: &str| ServerRef {
            backend: "ns_a_80".into(),
            server: name.into(),
        };
        assert_eq!(
            update.commands,
            [
                RuntimeCommand::AddServer {
                    server: server("10.0.0.3_80"),
                    address: "10.0.0.3:80".parse().unwrap_or_else(|_| unreachable!()),
                    options: String::new(),
                    id: render::server_id("10.0.0.3_80"),
                    checked: false,
                    derives_cookie: false,
                },
                RuntimeCommand::RemoveServer(server("10.0.0.1_80")),
            ]
        );
        assert!(update.next.backends.ptr_eq(&desired));
        assert_eq!(
            update.next.draining,
            BTreeSet::from([server("10.0.0.1_80")])
        );
        // Wanted again while still draining: made ready, not added twice.
        let back = backends(&[backend("a", &[1, 2, 3], Balance::RoundRobin)]);
        let again = live_update(&update.next, &back, &files(&BASE));
        assert_eq!(
            again.commands,
            [RuntimeCommand::ReadyServer(server("10.0.0.1_80"))]
        );
        assert_eq!(again.next.draining, BTreeSet::new());
    }

    #[test]
    fn servers_changed_live_while_a_reload_is_due_are_not_sent_again() {
        let live = LiveState::loaded(
            backends(&[backend("a", &[1], Balance::RoundRobin)]),
            &files(&BASE),
        );
        // The main configuration changed (a reload is due) and the endpoint moved.
        let mut changed = BASE;
        changed[0] = ("haproxy.cfg", "main, changed");
        let desired = backends(&[backend("a", &[2], Balance::RoundRobin)]);
        let update = live_update(&live, &desired, &files(&changed));
        assert_eq!(update.reload, BTreeSet::from([ReloadReason::MainConfig]));
        assert_eq!(update.commands.len(), 2, "{:?}", update.commands);
        // Another main configuration change before the reload: the servers are there.
        let mut again = BASE;
        again[0] = ("haproxy.cfg", "main, changed again");
        let next = live_update(&update.next, &desired, &files(&again));
        assert_eq!(next.commands, Vec::new());
        assert_eq!(next.reload, BTreeSet::from([ReloadReason::MainConfig]));
    }

    #[test]
    fn structural_changes_reload_while_servers_still_change_live() {
        let live = LiveState::loaded(
            backends(&[
                backend("a", &[1], Balance::RoundRobin),
                backend("b", &[1], Balance::RoundRobin),
            ]),
            &files(&BASE),
        );
        let mut changed = BASE;
        changed[0] = ("haproxy.cfg", "main, changed");
        changed[1] = ("maps/hosts.map", "a.test a.test\nc.test c.test\n");
        let desired = backends(&[
            backend("a", &[1, 2], Balance::RoundRobin),
            backend("b", &[2], Balance::LeastConn),
            backend("c", &[1], Balance::RoundRobin),
        ]);
        let update = live_update(&live, &desired, &files(&changed));
        assert_eq!(
            update.reload,
            BTreeSet::from([ReloadReason::MainConfig, ReloadReason::BackendSections])
        );
        // `a` keeps its settings: its new server goes out now. `b` changed balance and
        // `c` is new: they wait for the reload, and so do the maps that may name `c`.
        let [RuntimeCommand::AddServer { server, .. }] = update.commands.as_slice() else {
            panic!("{:?}", update.commands);
        };
        assert_eq!(server.to_string(), "ns_a_80/10.0.0.2_80");
        let next = &update.next.backends;
        assert_eq!(next.len(), 2);
        assert_eq!(next.values().map(|b| b.servers.len()).sum::<usize>(), 3);
        assert_eq!(
            update.next.files["maps/hosts.map"].hash,
            live.files["maps/hosts.map"].hash
        );
        assert!(update.needs_check());
    }

    #[test]
    fn client_certificate_authorities_reload_with_their_reason() {
        let mut with_ca = BASE.to_vec();
        with_ca[2] = (
            "certs/crt-list.txt",
            "certs/x.pem [verify optional ca-file client-ca/ca_ns_ca.pem] b.test\n",
        );
        with_ca.push(("certs/x.pem", "x"));
        with_ca.push(("client-ca/ca_ns_ca.pem", "first CA"));
        let live = LiveState::loaded(backends(&[]), &files(&BASE));
        let added = live_update(&live, &backends(&[]), &files(&with_ca));
        assert_eq!(
            added.reload,
            BTreeSet::from([ReloadReason::ClientCertificateAuthorities])
        );
        assert!(added.commands.is_empty(), "{:?}", added.commands);
        // The same host and list, a new CA content: live.
        let live = LiveState::loaded(backends(&[]), &files(&with_ca));
        let mut rotated = with_ca.clone();
        let last = rotated.len() - 1;
        rotated[last] = ("client-ca/ca_ns_ca.pem", "second CA");
        let update = live_update(&live, &backends(&[]), &files(&rotated));
        assert_eq!(update.reload, BTreeSet::new());
        assert!(
            matches!(
                update.commands.as_slice(),
                [RuntimeCommand::UpdateCaFile { file, crl: false, .. }] if file == "client-ca/ca_ns_ca.pem"
            ),
            "{:?}",
            update.commands
        );
        assert!(update.needs_check());
        assert_eq!(
            update.next.files["client-ca/ca_ns_ca.pem"].hash,
            files(&rotated).files["client-ca/ca_ns_ca.pem"].hash
        );
        // Another host's certificate still changes live.
        let mut other = with_ca.clone();
        other.push(("certs/y.pem", "y"));
        other[2] = (
            "certs/crt-list.txt",
            "certs/x.pem [verify optional ca-file client-ca/ca_ns_ca.pem] b.test\ncerts/y.pem c.test\n",
        );
        let update = live_update(&live, &backends(&[]), &files(&other));
        assert_eq!(update.reload, BTreeSet::new());
        assert_eq!(update.commands.len(), 2, "{:?}", update.commands);
    }

    #[test]
    fn maps_and_certificates_change_live_and_too_large_certificates_reload() {
        let live = LiveState::loaded(backends(&[]), &files(&BASE));
        let mut changed = BASE.to_vec();
        changed[1] = ("maps/hosts.map", "b.test b.test\n");
        changed[2] = ("certs/crt-list.txt", "certs/x.pem b.test\n");
        changed.push(("certs/x.pem", "x"));
        let update = live_update(&live, &backends(&[]), &files(&changed));
        assert_eq!(update.reload, BTreeSet::new());
        let kinds: Vec<String> = update
            .commands
            .iter()
            .map(|c| {
                format!("{c:?}")
                    .split([' ', '{', '('])
                    .next()
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect();
        assert_eq!(kinds, ["EditMap", "AddCertificate", "AddCrtListEntry"]);
        assert!(update.needs_check());
        let huge = "x".repeat(crate::MAX_CERTIFICATE_PAYLOAD + 1);
        let mut oversized = BASE.to_vec();
        oversized[3] = ("certs/default.pem", &huge);
        let update = live_update(&live, &backends(&[]), &files(&oversized));
        assert_eq!(update.reload, BTreeSet::from([ReloadReason::Certificates]));
    }

    #[test]
    fn cookies_named_after_servers_add_by_reload_and_derived_ones_live() {
        use model::{CookieAffinity, CookieKey, CookieStrategy, CookieValue, Word};
        let sticky = |servers: &[u8], value: CookieValue| {
            let (id, mut backend) = backend("a", servers, Balance::RoundRobin);
            let name = Word::parse("sid").unwrap_or_else(|_| unreachable!());
            std::sync::Arc::make_mut(&mut backend.server_options).cookie = Some(
                CookieAffinity::new(name, CookieStrategy::Insert, Vec::new(), value)
                    .unwrap_or_else(|_| unreachable!()),
            );
            backends(&[(id, backend)])
        };
        let by_name = || CookieValue::ServerName;
        let live = LiveState::loaded(sticky(&[1, 2], by_name()), &files(&BASE));
        let update = live_update(&live, &sticky(&[1, 2, 3], by_name()), &files(&BASE));
        assert_eq!(update.reload, BTreeSet::from([ReloadReason::ServerCookies]));
        assert!(update.commands.is_empty());
        let update = live_update(&live, &sticky(&[1], by_name()), &files(&BASE));
        assert_eq!(update.reload, BTreeSet::new());
        assert_eq!(update.commands.len(), 1);

        let key = || CookieValue::Dynamic(CookieKey::parse("k").unwrap_or_else(|_| unreachable!()));
        let live = LiveState::loaded(sticky(&[1], key()), &files(&BASE));
        let update = live_update(&live, &sticky(&[1, 2], key()), &files(&BASE));
        assert_eq!(update.reload, BTreeSet::new());
        let [RuntimeCommand::AddServer { derives_cookie, .. }] = update.commands.as_slice() else {
            panic!("{:?}", update.commands);
        };
        assert!(derives_cookie);
    }

    #[test]
    fn weight_changes_are_live_and_regrouping_a_selected_backend_reloads() {
        let weighted = |weights: [u64; 2], groups: [&str; 2], selector: bool| {
            let (id, mut backend) = backend("a", &[1, 2], Balance::RoundRobin);
            for ((server, weight), group) in backend.servers.iter_mut().zip(weights).zip(groups) {
                server.weight = Some(model::ServerWeight::clamped(weight));
                server.group = Some(model::Word::parse(group).unwrap_or_else(|_| unreachable!()));
            }
            backend.settings_mut().selector = selector.then(|| model::GroupSelector {
                header: model::Word::parse("X-Server").ok(),
                cookie: None,
            });
            backends(&[(id, backend)])
        };
        let live = LiveState::loaded(weighted([1, 3], ["blue", "green"], true), &files(&BASE));
        let update = live_update(
            &live,
            &weighted([1, 1], ["blue", "green"], true),
            &files(&BASE),
        );
        assert_eq!(update.reload, BTreeSet::new());
        assert_eq!(
            update.commands,
            [RuntimeCommand::SetWeight {
                server: ServerRef {
                    backend: "ns_a_80".into(),
                    server: "10.0.0.2_80".into(),
                },
                weight: model::ServerWeight::clamped(1),
            }]
        );
        // The groups are in the section's `use-server` lines.
        let update = live_update(
            &live,
            &weighted([1, 3], ["blue", "blue"], true),
            &files(&BASE),
        );
        assert_eq!(
            update.reload,
            BTreeSet::from([ReloadReason::BackendSections])
        );
        // Without a selector, groups are not rendered at all.
        let live = LiveState::loaded(weighted([1, 3], ["blue", "green"], false), &files(&BASE));
        let update = live_update(
            &live,
            &weighted([1, 3], ["blue", "blue"], false),
            &files(&BASE),
        );
        assert!(update.reload.is_empty() && update.commands.is_empty());
    }

    #[test]
    fn a_changed_address_list_is_replaced_live_and_a_new_one_waits_for_its_reload() {
        let mut with_list = BASE.to_vec();
        with_list.push(("acls/allow-1.lst", "10.0.0.0/8\n"));
        let live = LiveState::loaded(backends(&[]), &files(&with_list));
        let mut changed = BASE.to_vec();
        changed.push(("acls/allow-1.lst", "10.0.0.0/8\n::1/128\n"));
        let update = live_update(&live, &backends(&[]), &files(&changed));
        assert_eq!(update.reload, BTreeSet::new());
        assert_eq!(
            update.commands,
            [RuntimeCommand::ReplaceAcl {
                acl: "acls/allow-1.lst".into(),
                content: Arc::from("10.0.0.0/8\n::1/128\n"),
            }]
        );
        assert!(!update.needs_check());
        assert!(live_update(&update.next, &backends(&[]), &files(&changed)).is_noop());
        // A list HAProxy does not have yet comes with the lines that name it.
        changed.push(("acls/deny-2.lst", "10.2.0.0/16\n"));
        changed[0] = ("haproxy.cfg", "main, naming the deny list");
        let update = live_update(&live, &backends(&[]), &files(&changed));
        assert_eq!(update.reload, BTreeSet::from([ReloadReason::MainConfig]));
    }

    #[test]
    fn identical_state_is_a_noop() {
        let list = backends(&[backend("a", &[1], Balance::RoundRobin)]);
        let live = LiveState::loaded(list.clone(), &files(&BASE));
        let same = backends(&[backend("a", &[1], Balance::RoundRobin)]);
        assert!(live_update(&live, &same, &files(&BASE)).is_noop());
    }
}
