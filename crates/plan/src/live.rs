//! What HAProxy runs, and how to bring it to the desired model: runtime API commands for
//! what HAProxy can change live (servers, map contents, certificate contents), and the
//! reasons for a reload for everything else. Computed by comparing values, like the files.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

use model::{Backend, BackendId};
use render::{BACKENDS_DIR, CRT_LIST, MAIN_CONFIG, RenderedConfig};

/// Every backend of a model, shared between the desired and the live state.
pub type Backends = Arc<BTreeMap<BackendId, Backend>>;

/// The largest certificate sent over the runtime API: the command and its payload must
/// fit in one of HAProxy's buffers (`tune.bufsize`, 16 KiB by default).
pub const MAX_CERTIFICATE_PAYLOAD: usize = 14 * 1024;

/// Why HAProxy must load its configuration again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReloadReason {
    /// The main configuration changed (global settings, frontends, default backend).
    MainConfig,
    /// Backend sections were added or removed, or their settings changed.
    BackendSections,
    /// A host gained or lost its certificate, or a certificate is too large to send live.
    Certificates,
    /// A runtime API command failed or answered unexpectedly: HAProxy's state is unknown.
    RuntimeApiFailed,
    /// A removed server kept connections for longer than the reload interval.
    DrainTimeout,
}

impl ReloadReason {
    /// Every reason, for metrics.
    pub const ALL: [ReloadReason; 5] = [
        ReloadReason::MainConfig,
        ReloadReason::BackendSections,
        ReloadReason::Certificates,
        ReloadReason::RuntimeApiFailed,
        ReloadReason::DrainTimeout,
    ];

    /// Label value for logs and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            ReloadReason::MainConfig => "main_config",
            ReloadReason::BackendSections => "backend_sections",
            ReloadReason::Certificates => "certificates",
            ReloadReason::RuntimeApiFailed => "runtime_api_failed",
            ReloadReason::DrainTimeout => "drain_timeout",
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
    /// `add server` (it starts in maintenance) then `set server ... state ready`.
    AddServer {
        /// The new server.
        server: ServerRef,
        /// Its address.
        address: SocketAddr,
    },
    /// `set server ... state ready`: a server put in maintenance for removal is wanted again.
    ReadyServer(ServerRef),
    /// `set server ... state maint` then `del server`; a server with connections left is
    /// deleted later (see [`LiveState::draining`]).
    RemoveServer(ServerRef),
    /// Replaces a map's whole content atomically (`prepare map` / `add map @ver` /
    /// `commit map`).
    ReplaceMap {
        /// Map file, as the configuration names it.
        map: String,
        /// The new content, in map file format.
        content: Arc<[u8]>,
    },
    /// `set ssl cert` then `commit ssl cert` for a certificate file HAProxy already has.
    UpdateCertificate {
        /// Certificate file, as the configuration names it.
        file: String,
        /// PEM content.
        content: Arc<[u8]>,
    },
}

/// What HAProxy runs: the backends with their live servers, and the content hash of every
/// other file as HAProxy has it (loaded, or updated live since).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LiveState {
    /// Backend sections with the servers HAProxy routes to.
    pub backends: Backends,
    /// Hash of the main configuration, maps, certificate list and certificates.
    pub files: BTreeMap<String, u64>,
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
                .filter(|(path, _)| !path.starts_with(BACKENDS_DIR))
                .map(|(path, file)| (path.clone(), file.hash))
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
    /// a reload, and for certificates, which HAProxy may refuse. Server and map changes
    /// cannot make a valid configuration invalid.
    pub fn needs_check(&self) -> bool {
        !self.reload.is_empty()
            || self
                .commands
                .iter()
                .any(|c| matches!(c, RuntimeCommand::UpdateCertificate { .. }))
    }
}

/// Compares the live state with the desired backends and files.
///
/// Servers of backends whose section settings did not change are always updated live,
/// even while a reload is due, so endpoints never wait for one. Maps are replaced live
/// when every backend they may name exists in HAProxy already; otherwise they arrive
/// with the reload that adds the backends.
pub fn live_update(live: &LiveState, backends: &Backends, desired: &RenderedConfig) -> LiveUpdate {
    let mut reload = BTreeSet::new();
    let mut commands = Vec::new();
    let mut draining = live.draining.clone();

    let desired_hash = |path: &str| desired.files.get(path).map(|f| f.hash);
    if desired_hash(MAIN_CONFIG) != live.files.get(MAIN_CONFIG).copied() {
        reload.insert(ReloadReason::MainConfig);
    }

    let sections_equal = Arc::ptr_eq(&live.backends, backends)
        || (live.backends.len() == backends.len()
            && live
                .backends
                .iter()
                .zip(backends.iter())
                .all(|((a, x), (b, y))| a == b && x.same_section_settings(y)));
    if !sections_equal {
        reload.insert(ReloadReason::BackendSections);
    }
    let mut next_backends: Option<BTreeMap<BackendId, Backend>> = None;
    if !Arc::ptr_eq(&live.backends, backends) {
        for (id, live_backend) in live.backends.iter() {
            let Some(wanted) = backends.get(id) else {
                continue;
            };
            if wanted.servers == live_backend.servers || !wanted.same_section_settings(live_backend)
            {
                continue;
            }
            server_commands(live_backend, wanted, &mut draining, &mut commands);
            if !sections_equal {
                next_backends
                    .get_or_insert_with(|| (*live.backends).clone())
                    .insert(id.clone(), wanted.clone());
            }
        }
    }

    let mut next_files = live.files.clone();
    let maps_resolvable =
        sections_equal || backends.keys().all(|id| live.backends.contains_key(id));
    let maps = desired
        .files
        .iter()
        .filter(|(path, _)| path.starts_with("maps/"));
    for (path, file) in maps {
        if live.files.get(path) == Some(&file.hash) || !maps_resolvable {
            continue;
        }
        commands.push(RuntimeCommand::ReplaceMap {
            map: path.clone(),
            content: file.bytes.clone(),
        });
        next_files.insert(path.clone(), file.hash);
    }

    let certificate_files = |files: &mut dyn Iterator<Item = &String>| -> BTreeSet<String> {
        files
            .filter(|p| p.starts_with("certs/") && p.as_str() != CRT_LIST)
            .cloned()
            .collect()
    };
    let live_certs = certificate_files(&mut live.files.keys());
    let desired_certs = certificate_files(&mut desired.files.keys());
    if live_certs != desired_certs || desired_hash(CRT_LIST) != live.files.get(CRT_LIST).copied() {
        reload.insert(ReloadReason::Certificates);
    }
    for path in live_certs.intersection(&desired_certs) {
        let Some(file) = desired.files.get(path) else {
            continue;
        };
        if live.files.get(path) == Some(&file.hash) {
            continue;
        }
        if file.bytes.len() > MAX_CERTIFICATE_PAYLOAD {
            reload.insert(ReloadReason::Certificates);
            continue;
        }
        commands.push(RuntimeCommand::UpdateCertificate {
            file: path.clone(),
            content: file.bytes.clone(),
        });
        next_files.insert(path.clone(), file.hash);
    }

    let next = if reload.is_empty() {
        LiveState {
            backends: backends.clone(),
            files: next_files,
            draining,
        }
    } else {
        LiveState {
            backends: next_backends.map_or_else(|| live.backends.clone(), Arc::new),
            files: next_files,
            draining,
        }
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
    let live_servers: BTreeSet<&model::Server> = live.servers.iter().collect();
    let wanted_servers: BTreeSet<&model::Server> = wanted.servers.iter().collect();
    for server in live_servers.difference(&wanted_servers) {
        let server = server_ref(server);
        draining.insert(server.clone());
        commands.push(RuntimeCommand::RemoveServer(server));
    }
    for server in wanted_servers.difference(&live_servers) {
        let reference = server_ref(server);
        if draining.remove(&reference) {
            commands.push(RuntimeCommand::ReadyServer(reference));
        } else {
            commands.push(RuntimeCommand::AddServer {
                server: reference,
                address: SocketAddr::new(server.address, server.port),
            });
        }
    }
}
