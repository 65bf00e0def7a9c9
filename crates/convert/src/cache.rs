//! The memo of the previous conversion. What changed is found by comparing the snapshot
//! with the previous one; what to compute again is decided in one place, by what each
//! memoized result looked up through its [`Recorder`]: an object's contribution, a
//! certificate, and the Gateway API status are each computed again exactly when one of
//! their lookups changed. An empty cache computes everything.

use std::collections::BTreeSet;
use std::sync::Arc;

use index::Snapshot;
use model::{CertId, Global, OrdSet, ProxyModel, Timeouts, TlsCert};
use resources::{Kind, Object, ObjectRef};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::contribution::Contribution;
use crate::conversion::{Conversion, Exclusions, automatic_shards};
use crate::dependents::Dependents;
use crate::diagnostic::Diagnostic;
use crate::gateway::listener::PortProtocols;
use crate::gateway::status::{self, StatusReport};
use crate::keys::{self, GlobalConfig};
use crate::lookup::{Context, Dependency, Recorder, same_object};
use crate::merge::{Claiming, Merger};
use crate::options::{ConvertOptions, ListenerPorts};
use crate::{class, gateway, ingress, tls};

/// A memoized result.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Memo {
    /// An object's contribution (or that it contributes nothing).
    Object(ObjectRef),
    /// A TLS Secret loaded as a certificate.
    Certificate(CertId),
    /// The Gateway API status report.
    Status,
}

/// Whether objects of this kind are converted into contributions.
fn converted(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Ingress
            | Kind::HttpRoute
            | Kind::GrpcRoute
            | Kind::TlsRoute
            | Kind::TcpRoute
            | Kind::UdpRoute
            | Kind::ConfigMap
    )
}

/// The ConfigMap of TCP services, when one is configured.
fn tcp_services_configmap(options: &ConvertOptions) -> Option<ObjectRef> {
    options
        .tcp_services_configmap
        .as_ref()
        .map(|(namespace, name)| ObjectRef::new(Kind::ConfigMap, namespace.as_str(), name.as_str()))
}

/// What a set of changes makes stale.
#[derive(Debug, Default)]
struct Stale {
    objects: BTreeSet<ObjectRef>,
    certificates: BTreeSet<CertId>,
    status: bool,
}

/// What the proxy-wide settings were computed from: the command line's part, and the
/// ports found busy.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SettingsKey {
    bind_address: std::net::IpAddr,
    http_port: u16,
    https_port: u16,
    reserved_ports: Vec<u16>,
    /// The global keys' own ports (the stats page's, ...) are not opened on these.
    busy_ports: std::collections::BTreeSet<u16>,
    backend_shards: u32,
}

impl SettingsKey {
    fn of(options: &ConvertOptions) -> Self {
        Self {
            bind_address: options.bind_address,
            http_port: options.http_port,
            https_port: options.https_port,
            reserved_ports: options.reserved_ports.clone(),
            busy_ports: options.busy_ports.clone(),
            backend_shards: options.backend_shards,
        }
    }
}

/// The global ConfigMap's keys, checked, and the proxy-wide settings made of them: kept
/// while the ConfigMap and the command line are the same, so a change elsewhere parses
/// none of it again.
#[derive(Debug)]
struct Settings {
    key: SettingsKey,
    configmap: Option<Object>,
    global: GlobalConfig,
    model: Global,
    diagnostics: Vec<Diagnostic>,
}

/// The kinds no stage after the conversion of each object reads: the objects a
/// converted Ingress or route looked up. Certificates (Secrets), Gateways and ConfigMaps
/// are read again while the merge settles.
const CONVERSION_ONLY: [Kind; 4] = [
    Kind::Service,
    Kind::EndpointSlice,
    Kind::Endpoints,
    Kind::Pod,
];

/// The converted kinds no conversion looks up and no stage after the exclusions are
/// found reads (a test checks every lookup of the examples): a cache that records
/// nothing hands each of these objects to its own conversion, which frees it. In
/// [`Kind`] order, as [`jobs`] reads them.
const HANDED_TO_CONVERSION: [Kind; 1] = [Kind::Ingress];

/// [`HANDED_TO_CONVERSION`], and the HTTPRoutes too when `snapshot` holds no GRPCRoute:
/// only a GRPCRoute's conversion looks HTTPRoutes up (the older of an HTTPRoute and a
/// GRPCRoute on one listener and host wins it), and status reads a route's outcome,
/// never the route.
fn handed_to_conversion(snapshot: &Snapshot) -> Vec<Kind> {
    let mut kinds = HANDED_TO_CONVERSION.to_vec();
    if snapshot.count(Kind::GrpcRoute) == 0 {
        kinds.push(Kind::HttpRoute);
    }
    kinds
}

/// The snapshot a conversion reads: lent by a caller that keeps it, or given by one
/// that does not.
enum Input<'a> {
    Lent(&'a Snapshot),
    Given(Box<Snapshot>),
}

impl Input<'_> {
    fn snapshot(&self) -> &Snapshot {
        match self {
            Input::Lent(snapshot) => snapshot,
            Input::Given(snapshot) => snapshot,
        }
    }
}

/// Memo of the previous conversion.
#[derive(Debug, Default)]
pub struct ConvertCache {
    previous: Option<Snapshot>,
    dependents: Dependents,
    merger: Merger,
    certificates: FxHashMap<CertId, Result<TlsCert, String>>,
    status: Arc<StatusReport>,
    /// The objects left out by the previous conversion.
    excluded: FxHashSet<ObjectRef>,
    /// The Ingresses that contribute.
    served_ingresses: OrdSet<ObjectRef>,
    /// The listener ports of the previous conversion.
    listener_ports: Option<ListenerPorts>,
    /// The protocols our Gateways used on each port in the previous conversion.
    port_protocols: Option<PortProtocols>,
    /// The proxy-wide settings of the previous conversion.
    settings: Option<Arc<Settings>>,
}

impl ConvertCache {
    /// A cache that keeps nothing a next conversion could reuse (no lookups recorded, no
    /// previous snapshot), so each of its conversions is a full one: for a process that
    /// converts once, where recording what a next change would make stale only costs
    /// time and memory.
    pub fn one_shot() -> Self {
        Self {
            dependents: Dependents::not_recording(),
            ..Self::default()
        }
    }

    /// Converts a snapshot, reusing what the previous conversion already produced.
    pub fn convert(&mut self, snapshot: &Snapshot, options: &ConvertOptions) -> Conversion {
        self.convert_excluding(snapshot, options, &Exclusions::new())
    }

    /// Converts a snapshot given up by its caller. A cache that records nothing frees
    /// each Ingress once it is converted, and each HTTPRoute when no GRPCRoute is there
    /// to look it up ([`handed_to_conversion`]), and, once every
    /// object is converted and before the merge settles, the objects only conversion
    /// reads ([`CONVERSION_ONLY`]), so the conversion's, the merge's and the render's
    /// memory reuse theirs: a cluster's objects are most of a cold start's peak. The
    /// result is [`Self::convert`]'s.
    pub fn convert_given(&mut self, snapshot: Snapshot, options: &ConvertOptions) -> Conversion {
        self.convert_input(
            Input::Given(Box::new(snapshot)),
            options,
            &Exclusions::new(),
        )
    }

    /// Converts a snapshot leaving out the `exclusions` that still hold the version
    /// refused (each reported); an exclusion whose object changed or went away no longer
    /// applies. Leaving an object out, or taking it back, converts again only it (and
    /// the keys it claimed), as any change does.
    pub fn convert_excluding(
        &mut self,
        snapshot: &Snapshot,
        options: &ConvertOptions,
        exclusions: &Exclusions,
    ) -> Conversion {
        self.convert_input(Input::Lent(snapshot), options, exclusions)
    }

    fn convert_input(
        &mut self,
        mut input: Input<'_>,
        options: &ConvertOptions,
        exclusions: &Exclusions,
    ) -> Conversion {
        let mut diagnostics = Vec::new();
        // Found before anything is handed over: an exclusion names an object of any kind.
        let excluded = still_excluded(input.snapshot(), exclusions, &mut diagnostics);
        let handed = match &mut input {
            Input::Given(given) if !self.dependents.is_recording() => {
                let kinds = handed_to_conversion(given);
                given.shed(&kinds).into_objects()
            }
            _ => Vec::new(),
        };
        let snapshot = input.snapshot();
        let configmap = options.global_configmap.as_ref().map(|(namespace, name)| {
            ObjectRef::new(Kind::ConfigMap, namespace.as_str(), name.as_str())
        });
        let configmap_object = configmap.as_ref().and_then(|r| snapshot.get(r));
        let settings_key = SettingsKey::of(options);
        let reusable = self.settings.as_ref().is_some_and(|settings| {
            settings.key == settings_key
                && match (&settings.configmap, configmap_object) {
                    (Some(before), Some(now)) => same_object(before, now),
                    (None, None) => true,
                    _ => false,
                }
        });
        let settings = match self.settings.clone().filter(|_| reusable) {
            Some(settings) => settings,
            None => {
                let data = match configmap_object {
                    Some(Object::ConfigMap(map)) => map.data.as_ref(),
                    _ => None,
                };
                let mut found = Vec::new();
                let global = GlobalConfig::new(data, configmap.as_ref(), &mut found);
                let model = global_settings(options, &global, configmap.as_ref(), &mut found);
                let settings = Arc::new(Settings {
                    key: settings_key,
                    configmap: configmap_object.cloned(),
                    global,
                    model,
                    diagnostics: found,
                });
                self.settings = Some(settings.clone());
                settings
            }
        };
        diagnostics.extend(settings.diagnostics.iter().cloned());
        let global = &settings.global;
        let mut listener_ports = options.listener_ports();
        // The global keys' own listeners' ports: no Gateway listener or TCP service may
        // share them.
        listener_ports
            .reserved
            .extend(settings.model.own_listener_ports());
        let port_protocols = PortProtocols::of_our_gateways(snapshot, &listener_ports);
        let context = Context {
            snapshot,
            options,
            listener_ports: &listener_ports,
            port_protocols: &port_protocols,
            global,
            configmap: configmap.as_ref(),
            recording: self.dependents.is_recording(),
        };

        let stale = match self.previous.take() {
            Some(previous) => {
                // Only a cache that records keeps a previous snapshot, and it is handed
                // nothing: what changed is found by comparing the snapshots whole.
                debug_assert!(handed.is_empty());
                let mut stale = self.stale(&snapshot.changes_since(&previous));
                if self.listener_ports.as_ref() != Some(&listener_ports) {
                    self.stale_by(&Dependency::ListenerPorts, &mut stale);
                }
                if self.port_protocols.as_ref() != Some(&port_protocols) {
                    self.stale_by(&Dependency::PortProtocols, &mut stale);
                }
                // Objects left out, or taken back, since the previous conversion.
                stale
                    .objects
                    .extend(self.excluded.symmetric_difference(&excluded).cloned());
                stale
            }
            None => {
                *self = Self {
                    dependents: self.dependents.emptied(),
                    ..Self::default()
                };
                Stale {
                    objects: [
                        Kind::Ingress,
                        Kind::HttpRoute,
                        Kind::GrpcRoute,
                        Kind::TlsRoute,
                        Kind::TcpRoute,
                        Kind::UdpRoute,
                    ]
                    .into_iter()
                    .flat_map(|kind| snapshot.refs_of_kind(kind).cloned())
                    .chain(handed.iter().map(|(object, _)| object.clone()))
                    .chain(tcp_services_configmap(options))
                    .collect(),
                    certificates: BTreeSet::new(),
                    status: true,
                }
            }
        };
        if self.dependents.is_recording() {
            self.previous = Some(snapshot.clone());
        }
        self.listener_ports = Some(listener_ports.clone());
        self.port_protocols = Some(port_protocols.clone());

        let recording = self.dependents.is_recording();
        // A cache that records nothing converts every snapshot in full, so its merge is
        // never followed by another.
        let mut merger = if recording {
            std::mem::take(&mut self.merger)
        } else {
            Merger::one_pass()
        };
        let mut claiming = Claiming::default();
        // One record per object converted.
        let mut recorded = Vec::with_capacity(if recording { stale.objects.len() } else { 0 });
        let mut updates = Vec::new();
        let served_ingresses = &mut self.served_ingresses;
        let mut note = |object: &ObjectRef, contribution: &Option<Arc<Contribution>>, lookups| {
            if recording {
                recorded.push((Memo::Object(object.clone()), lookups));
            }
            if object.kind == Kind::Ingress {
                if contribution.is_some() {
                    served_ingresses.insert(object.clone());
                } else {
                    served_ingresses.remove(object);
                }
            }
        };
        let rebuild = if merger.len() == 0 && pipelined(stale.objects.len()) {
            // A merge from nothing claims each object's contribution as soon as it is
            // converted, while the pool converts the next ones: claiming is a serial
            // pass, and waiting for every conversion first left a core idle through it.
            let jobs = jobs(stale.objects, handed);
            // How many routes they claim is known only once converted: one each at least.
            merger.reserve(jobs.len(), jobs.len(), &mut claiming);
            convert_streaming(
                &jobs,
                context,
                &excluded,
                |(object, contribution, lookups)| {
                    note(&object, &contribution, lookups);
                    merger.replace(object, contribution, &mut claiming);
                },
            );
            true
        } else {
            let converted = convert_all(jobs(stale.objects, handed), context, &excluded);
            updates.reserve(converted.len());
            for (object, contribution, lookups) in converted {
                note(&object, &contribution, lookups);
                updates.push((object, contribution));
            }
            // When most contributions changed (a global key, a class every Ingress
            // reads), merging them all into an empty merger is cheaper than taking each
            // old one out first; the two give the same result, as a full and an
            // incremental merge must.
            let rebuild = updates.len() * 2 > merger.len();
            if rebuild {
                let emptied = merger.emptied();
                let mut contributions = merger.into_contributions();
                for (object, contribution) in updates {
                    match contribution {
                        Some(contribution) => contributions.insert(object, contribution),
                        None => contributions.remove(&object),
                    };
                }
                updates = contributions
                    .into_iter()
                    .map(|(object, contribution)| (object, Some(contribution)))
                    .collect();
                merger = emptied;
            }
            rebuild
        };
        // Every object is converted: what only conversion reads can go before the merge
        // settles, freed by the pool beside it (freeing a cluster's objects one by one
        // takes a while: ~0.25 s of one core at 100k services).
        if let Input::Given(given) = &mut input
            && !recording
        {
            given.shed(&CONVERSION_ONLY).drop_on_pool();
        }
        let snapshot = input.snapshot();
        let context = Context {
            snapshot,
            options,
            listener_ports: &listener_ports,
            port_protocols: &port_protocols,
            global,
            configmap: configmap.as_ref(),
            recording,
        };
        self.excluded = excluded;
        for id in &stale.certificates {
            self.certificates.remove(id);
            self.dependents
                .remember(Memo::Certificate(id.clone()), Vec::new());
        }
        // What the converted objects looked up is recorded while they are merged: the
        // two touch nothing in common, and for a large batch each is a serial pass of its
        // own. The certificates the merge loads record theirs after.
        let recorded_len = recorded.len();
        let mut dependents = std::mem::take(&mut self.dependents);
        let certificates = &mut self.certificates;
        let mut certificate_lookups = Vec::new();
        let record = move || {
            dependents.remember_all(recorded);
            dependents
        };
        let merge = || {
            merger.replace_all(updates, &mut claiming);
            merger.settle(claiming, &stale.certificates, |id| {
                load_certificate(certificates, context, id, &mut certificate_lookups)
            })
        };
        let (dependents, outcomes_changed) = if recorded_len >= PARALLEL_FROM {
            rayon::join(record, merge)
        } else {
            (record(), merge())
        };
        self.dependents = dependents;
        for (memo, lookups) in certificate_lookups {
            self.dependents.remember(memo, lookups);
        }
        let outcomes_changed = outcomes_changed || rebuild;

        let mut model = ProxyModel {
            global: settings.model.clone(),
            default_cert: options.fallback_certificate.clone(),
            ..ProxyModel::default()
        };
        merger.fill(&mut model);
        let mut wanted: FxHashSet<CertId> = merger.certificates_in_use().cloned().collect();
        diagnostics.extend(merger.diagnostics().cloned());
        if stale.status || outcomes_changed {
            let mut lookups = Recorder::new(context);
            let report = status::report(&mut lookups, &merger.route_outcomes());
            if *self.status != report {
                self.status = Arc::new(report);
            }
            self.dependents.remember(Memo::Status, lookups.dependencies);
        }
        self.merger = merger;
        if let Some((namespace, name)) = &options.default_ssl_certificate {
            let id = CertId {
                namespace: namespace.clone(),
                name: name.clone(),
            };
            match self.certificate(context, &id) {
                Ok(cert) => model.default_cert = cert,
                Err(why) => diagnostics.push(Diagnostic {
                    object: ObjectRef::new(Kind::Secret, namespace.as_str(), name.as_str()),
                    field: "--default-ssl-certificate".to_owned(),
                    message: format!(
                        "{why}; a generated self-signed certificate is served instead"
                    ),
                }),
            }
            wanted.insert(id);
        }
        // A Gateway's hostname-less HTTPS listener claims every name, so its certificate
        // is the one served when no host's matches, above the controller's fallback.
        let gateways = gateway::listener::https_frontend_gateways(snapshot, &listener_ports);
        model.https_listener_hosts =
            gateway::listener::https_listener_hosts(&gateways, &port_protocols, &listener_ports);
        model.own_port_listeners =
            gateway::listener::own_port_listeners(&gateways, &port_protocols, &listener_ports);
        if let Some(id) = gateway::listener::catch_all_certificate(
            snapshot,
            &gateways,
            &port_protocols,
            &listener_ports,
        ) {
            if let Ok(cert) = self.certificate(context, &id) {
                model.default_cert = cert;
            }
            wanted.insert(id);
        }
        self.global_secrets(context, options, &mut model, &mut wanted, &mut diagnostics);
        let unwanted: Vec<CertId> = self
            .certificates
            .keys()
            .filter(|id| !wanted.contains(*id))
            .cloned()
            .collect();
        for id in unwanted {
            self.certificates.remove(&id);
            self.dependents.remember(Memo::Certificate(id), Vec::new());
        }
        if options.backend_shards == 0 {
            model.global.backend_shards = automatic_shards(model.backends.len());
        }
        diagnostics.sort();
        diagnostics.dedup();
        Conversion {
            model,
            diagnostics,
            gateway_status: self.status.clone(),
            served_ingresses: self.served_ingresses.clone(),
        }
    }

    /// What the changes make stale: every memoized result that looked up a changed
    /// object, and every changed object that is converted.
    fn stale(&self, changes: &[index::Change]) -> Stale {
        let mut stale = Stale::default();
        for change in changes {
            // A status write (most often ours: every route's, every Gateway's) changes
            // nothing a conversion reads; taken as a change, one to a Gateway would convert
            // every route attached to it again.
            if let (Some(before), Some(after)) = (&change.before, &change.after)
                && before.changed_only_in_status(after)
            {
                continue;
            }
            let object = &change.object_ref;
            if converted(object.kind) {
                stale.objects.insert(object.clone());
            }
            let keys = lookups_touched(change);
            for key in keys {
                self.stale_by(&key, &mut stale);
            }
        }
        stale
    }

    /// Marks stale what looked `key` up.
    fn stale_by(&self, key: &Dependency, stale: &mut Stale) {
        for memo in self.dependents.of(key) {
            match memo {
                Memo::Object(object) => {
                    stale.objects.insert(object.clone());
                }
                Memo::Certificate(id) => {
                    stale.certificates.insert(id.clone());
                }
                Memo::Status => stale.status = true,
            }
        }
    }

    /// The Secrets global keys name: the stats page's certificate (memoized as every
    /// certificate, and kept among the wanted ones) and the DH parameters (read again on
    /// every conversion: one small Secret).
    fn global_secrets(
        &mut self,
        context: Context<'_>,
        options: &ConvertOptions,
        model: &mut ProxyModel,
        wanted: &mut FxHashSet<CertId>,
        diagnostics: &mut Vec<Diagnostic>,
    ) {
        let namespace = options
            .global_configmap
            .as_ref()
            .map_or("default", |(namespace, _)| namespace.as_str());
        let secret = |name: keys::SecretName| CertId {
            namespace: name.namespace.unwrap_or_else(|| namespace.to_owned()),
            name: name.name,
        };
        let report = |key: &str, why: String, outcome: &str| Diagnostic {
            object: context
                .configmap
                .cloned()
                .unwrap_or_else(|| ObjectRef::new(Kind::ConfigMap, "", "")),
            field: format!("data.{key}"),
            message: format!("{why}; {outcome}"),
        };
        if let Some(name) = context.global.get(&keys::STATS_SSL_CERT)
            && model.global.observers.stats.is_some()
        {
            let id = secret(name);
            match self.certificate(context, &id) {
                Ok(cert) => {
                    if let Some(stats) = &mut model.global.observers.stats {
                        stats.cert = Some(cert);
                    }
                }
                Err(why) => diagnostics.push(report(
                    keys::STATS_SSL_CERT.name,
                    why,
                    "the statistics page is served over plain HTTP",
                )),
            }
            wanted.insert(id);
        }
        if let Some(name) = context.global.get(&keys::SSL_DH_PARAM) {
            let mut lookups = Recorder::new(context);
            match tls::load_dh_params(&mut lookups, &secret(name)) {
                Ok(params) => model.global.https.dh_params = Some(params),
                Err(why) => diagnostics.push(report(
                    keys::SSL_DH_PARAM.name,
                    why,
                    "HAProxy's own parameters are used",
                )),
            }
        }
    }

    /// A certificate, loaded once while its Secret is unchanged.
    fn certificate(&mut self, context: Context<'_>, id: &CertId) -> Result<TlsCert, String> {
        let mut recorded = Vec::new();
        let result = load_certificate(&mut self.certificates, context, id, &mut recorded);
        for (memo, lookups) in recorded {
            self.dependents.remember(memo, lookups);
        }
        result
    }
}

/// A TLS Secret loaded as a certificate, memoized in `certificates`; a load (not a
/// memoized result) adds what it looked up to `recorded`.
fn load_certificate(
    certificates: &mut FxHashMap<CertId, Result<TlsCert, String>>,
    context: Context<'_>,
    id: &CertId,
    recorded: &mut Vec<(Memo, Vec<Dependency>)>,
) -> Result<TlsCert, String> {
    if let Some(result) = certificates.get(id) {
        return result.clone();
    }
    let mut lookups = Recorder::new(context);
    let result = tls::load_certificate(&mut lookups, id);
    certificates.insert(id.clone(), result.clone());
    recorded.push((Memo::Certificate(id.clone()), lookups.dependencies));
    result
}

/// Every lookup whose answer a change may have changed.
fn lookups_touched(change: &index::Change) -> Vec<Dependency> {
    let object = &change.object_ref;
    let mut keys = vec![
        Dependency::Object(object.clone()),
        Dependency::Listing(object.kind, object.namespace.clone()),
        Dependency::Kind(object.kind),
    ];
    for version in change.before.iter().chain(change.after.iter()) {
        for parent in version.parents() {
            keys.push(Dependency::Children(object.kind, parent));
        }
        if let Object::EndpointSlice(slice) = version
            && let Some(service) = &slice.service_name
        {
            keys.push(Dependency::Slices(object.namespace.clone(), service.into()));
        }
    }
    keys
}

/// The exclusions that still hold the version refused, each reported.
fn still_excluded(
    snapshot: &Snapshot,
    exclusions: &Exclusions,
    diagnostics: &mut Vec<Diagnostic>,
) -> FxHashSet<ObjectRef> {
    let mut excluded = FxHashSet::default();
    for (object_ref, exclusion) in exclusions {
        let current = snapshot.get(object_ref);
        if current.is_some_and(|current| exclusion.holds_for(current)) {
            excluded.insert(object_ref.clone());
            diagnostics.push(Diagnostic {
                object: object_ref.clone(),
                field: "(whole object)".to_owned(),
                message: format!(
                    "HAProxy refused the configuration this object renders to, so it is left out until it changes: {}",
                    exclusion.reason
                ),
            });
        }
    }
    excluded
}

/// The proxy-wide settings: the command line's and the global keys'.
fn global_settings(
    options: &ConvertOptions,
    global: &GlobalConfig,
    configmap: Option<&ObjectRef>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Global {
    let (observers, fronting_proxy) = keys::own_listeners(global, options, configmap, diagnostics);
    Global {
        bind_address: options.bind_address,
        http_port: options.http_port,
        https_port: options.https_port,
        max_connections: global.get(&keys::MAX_CONNECTIONS),
        timeouts: Timeouts {
            client: global.get(&keys::TIMEOUT_CLIENT),
            client_fin: global.get(&keys::TIMEOUT_CLIENT_FIN),
            http_request: global.get(&keys::TIMEOUT_HTTP_REQUEST),
            keep_alive: global.get(&keys::TIMEOUT_KEEP_ALIVE),
        },
        backend_shards: options.backend_shards.max(1),
        forwarded: model::ForwardedHeaders {
            forward_for: global.get(&keys::FORWARDFOR),
            original_header: global.get(&keys::ORIGINAL_FORWARDED_FOR_HDR),
            real_ip_header: global.get(&keys::REAL_IP_HDR),
            trusted: global.get(&keys::FORWARDFOR_TRUSTED_CIDRS),
            fronting_proxy,
        },
        https: model::HttpsPolicy {
            redirect_exceptions: global.get(&keys::NO_TLS_REDIRECT_LOCATIONS),
            hsts: crate::ingress_keys::global_hsts(global),
            tls: model::TlsOptions {
                ciphers: global.get(&keys::SSL_CIPHERS),
                cipher_suites: global.get(&keys::SSL_CIPHER_SUITES),
                alpn: Some(global.get(&keys::TLS_ALPN)),
                options: global.get(&keys::SSL_OPTIONS).options,
                client_auth: None,
            },
            dh_params: None,
        },
        timeout_stop: global.get(&keys::TIMEOUT_STOP),
        process: model::Process {
            threads: global.get(&keys::NBTHREAD),
            max_reloads: global.get(&keys::WORKER_MAX_RELOADS),
        },
        close_sessions_window: keys::close_sessions_window(global, configmap, diagnostics),
        logging: model::Logging {
            target: global.get(&keys::SYSLOG_ENDPOINT),
            syslog_format: global.get(&keys::SYSLOG_FORMAT),
            max_length: global.get(&keys::SYSLOG_LENGTH),
            tag: global.get(&keys::SYSLOG_TAG),
            http_format: global.get(&keys::HTTP_LOG_FORMAT),
            sni_format: global.get(&keys::HTTPS_LOG_FORMAT),
            tcp_format: global.get(&keys::TCP_LOG_FORMAT),
            dont_log_null: global.get(&keys::DONTLOGNULL),
        },
        observers,
        responses: model::Responses {
            error_pages: keys::HTTP_RESPONSE_KEYS
                .iter()
                .filter_map(|(code, key)| Some((*code, global.get(*key)?)))
                .collect(),
            server_header: global.get(&keys::SERVER_HEADER),
            max_body_size: global.get(&keys::PROXY_BODY_SIZE),
            not_found_redirect: global.get(&keys::DEFAULT_BACKEND_REDIRECT).map(|redirect| {
                model::Redirect {
                    code: global.get(&keys::DEFAULT_BACKEND_REDIRECT_CODE),
                    ..redirect
                }
            }),
        },
        accept_proxy: accept_proxy(global),
        resolvers: model::Resolvers {
            sections: global.get(&keys::DNS_RESOLVERS),
            accepted_payload_size: global.get(&keys::DNS_ACCEPTED_PAYLOAD_SIZE),
            hold_obsolete: global.get(&keys::DNS_HOLD_OBSOLETE),
            hold_valid: global.get(&keys::DNS_HOLD_VALID),
            timeout_retry: global.get(&keys::DNS_TIMEOUT_RETRY),
        },
        backends: model::BackendDefaults {
            balance: global.get(&keys::BALANCE_ALGORITHM),
            timeout_connect: global.get(&keys::TIMEOUT_CONNECT),
            timeout_server: global.get(&keys::TIMEOUT_SERVER),
            timeout_queue: global.get(&keys::TIMEOUT_QUEUE),
            timeout_tunnel: global.get(&keys::TIMEOUT_TUNNEL),
            timeout_server_fin: global.get(&keys::TIMEOUT_SERVER_FIN),
            // As a backend reads it: the deprecated name only where the current one is
            // not set.
            check_interval: global
                .value(&keys::HEALTH_CHECK_INTERVAL)
                .or_else(|| global.value(&keys::BACKEND_CHECK_INTERVAL))
                .unwrap_or_else(|| global.get(&keys::HEALTH_CHECK_INTERVAL)),
        },
        normalize_paths: global.get(&keys::NORMALIZE_PATHS),
    }
}

/// Which clients send the PROXY protocol, from `use-proxy-protocol` and its sources.
fn accept_proxy(global: &GlobalConfig) -> model::AcceptProxy {
    if !global.get(&keys::USE_PROXY_PROTOCOL) {
        return model::AcceptProxy::Nobody;
    }
    match global.get(&keys::USE_PROXY_PROTOCOL_TRUSTED_CIDRS) {
        sources if sources.is_empty() => model::AcceptProxy::Everyone,
        sources => model::AcceptProxy::From(sources),
    }
}

/// One object converted: its contribution (`None`: it contributes nothing) and what its
/// conversion looked up (nothing when it is gone).
type Converted = (ObjectRef, Option<Arc<Contribution>>, Vec<Dependency>);

/// Below this many objects, converting on the calling thread is faster than sharing
/// them out to the pool.
const PARALLEL_FROM: usize = 512;

fn convert_one(job: &Job, context: Context<'_>, excluded: &FxHashSet<ObjectRef>) -> Converted {
    let object = job.object.clone();
    // Freed when this conversion ends, on the thread that converted it.
    let given = job
        .given
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    let mut lookups = Recorder::new(context);
    let found = match &given {
        Some(given) => Some(given),
        None => lookups.get(object.clone()),
    };
    let contribution = match found {
        // Gone: nothing to remember.
        None => return (object, None, Vec::new()),
        _ if excluded.contains(&object) => None,
        Some(Object::Ingress(ingress)) => class::is_ours(ingress, &mut lookups)
            .then(|| ingress::convert_ingress(object.clone(), ingress, &mut lookups)),
        Some(Object::HttpRoute(route)) => Some(gateway::route::convert_http_route(
            object.clone(),
            route,
            &mut lookups,
        )),
        Some(Object::GrpcRoute(route)) => Some(gateway::grpc::convert_grpc_route(
            object.clone(),
            route,
            &mut lookups,
        )),
        Some(Object::TlsRoute(route)) => Some(gateway::tls_route::convert_tls_route(
            object.clone(),
            route,
            &mut lookups,
        )),
        Some(Object::TcpRoute(route)) => Some(gateway::tcp_route::convert_tcp_route(
            object.clone(),
            route,
            &mut lookups,
        )),
        Some(Object::UdpRoute(route)) => Some(gateway::tcp_route::convert_udp_route(
            object.clone(),
            route,
            &mut lookups,
        )),
        Some(Object::ConfigMap(configmap))
            if tcp_services_configmap(context.options).as_ref() == Some(&object) =>
        {
            Some(crate::tcp_services::convert_tcp_configmap(
                object.clone(),
                configmap,
                &mut lookups,
            ))
        }
        Some(_) => None,
    };
    // An Ingress not ours, or a route attached to none of our Gateways, contributes
    // nothing, but what it looked up still says when that may change.
    let contribution = contribution.map(|mut contribution| {
        contribution.shrink_to_fit();
        Arc::new(contribution)
    });
    (object, contribution, lookups.dependencies)
}

/// Converts objects, independent of one another, on every core for large batches.
fn convert_all(
    jobs: Vec<Job>,
    context: Context<'_>,
    excluded: &FxHashSet<ObjectRef>,
) -> Vec<Converted> {
    crate::parallel::map_in_order(&jobs, PARALLEL_FROM, |job| {
        convert_one(job, context, excluded)
    })
}

/// An object to convert, and the object itself when the snapshot handed it over.
struct Job {
    object: ObjectRef,
    given: std::sync::Mutex<Option<Object>>,
}

/// The jobs that convert `objects`, each given its object where `handed` has it. Both
/// are in key order; a handed object no job converts is freed here.
fn jobs(objects: BTreeSet<ObjectRef>, handed: Vec<(ObjectRef, Object)>) -> Vec<Job> {
    debug_assert!(handed.is_sorted_by(|a, b| a.0 < b.0));
    let mut handed = handed.into_iter().peekable();
    objects
        .into_iter()
        .map(|object| {
            while handed.next_if(|(next, _)| *next < object).is_some() {}
            let own = handed
                .next_if(|(next, _)| *next == object)
                .map(|(_, own)| own);
            Job::new(object, own)
        })
        .collect()
}

impl Job {
    fn new(object: ObjectRef, given: Option<Object>) -> Self {
        Self {
            object,
            given: std::sync::Mutex::new(given),
        }
    }
}

/// Objects converted in each piece of work of [`convert_streaming`].
const STREAMED_CHUNK: usize = 128;

/// Whether `objects` are converted by [`convert_streaming`]: enough of them to pay for
/// sharing out, a pool to share them with, and a caller that is not one of its threads
/// (which would wait for chunks in place of converting them).
fn pipelined(objects: usize) -> bool {
    crate::parallel::streams(objects, PARALLEL_FROM)
}

/// Converts `objects` on the pool's threads and hands each result to `take` on the
/// calling thread as soon as its chunk is converted, in no particular order. Called only
/// when [`pipelined`].
fn convert_streaming(
    jobs: &[Job],
    context: Context<'_>,
    excluded: &FxHashSet<ObjectRef>,
    mut take: impl FnMut(Converted),
) {
    crate::parallel::map_streamed(
        jobs,
        0,
        STREAMED_CHUNK,
        |job| convert_one(job, context, excluded),
        |_, converted| take(converted),
    );
}

#[cfg(test)]
#[path = "cache_tests.rs"]
pub(crate) mod tests;
