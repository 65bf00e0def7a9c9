//! Watching the API server: one kube-rs watcher per kind (and per watched namespace),
//! merged into the batches the controller consumes, with nothing sent before every
//! watcher has finished its initial list.

use std::fmt::Debug;

use futures::StreamExt as _;
use futures::stream::BoxStream;
use index::{ListScope, SourceEvent};
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::api::networking::v1::IngressClass;
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Api, Client, Resource};
use resources::{
    BackendTlsPolicy, FitToLength as _, Gateway, GatewayClass, GrpcRoute, HttpRoute, Kind,
    ListenerSet, Object, ReferenceGrant, TcpRoute, TlsRoute, UdpRoute, WatchedEndpointSlice,
    WatchedIngress, WatchedPod, WatchedService,
};
use serde::de::DeserializeOwned;
use source::SourceBatch;
use std::sync::Arc;
use tokio::sync::mpsc;

use crate::delivered::Delivered;
use crate::lenient::{self, Lenient};

/// What the cluster source watches.
#[derive(Debug, Clone, Default)]
pub struct WatchScope {
    /// Namespaces to watch; empty means every namespace.
    pub namespaces: Vec<String>,
    /// The global ConfigMap (namespace, name): with the TCP services' one, the only
    /// ConfigMaps read unless the Gateway API is watched (BackendTLSPolicies' CAs are
    /// ConfigMaps).
    pub configmap: Option<(String, String)>,
    /// The ConfigMap of TCP services (namespace, name).
    pub tcp_services_configmap: Option<(String, String)>,
    /// Watch the Gateway API kinds too.
    pub gateway_api: bool,
    /// `--default-ssl-certificate` (namespace, name): watched by name when `namespaces`
    /// leaves its namespace out.
    pub default_ssl_certificate: Option<(String, String)>,
}

/// The field selector that keeps Secrets nothing can refer to out of memory: Helm's
/// release records (often the largest objects of a cluster) and service-account tokens.
/// Every other type stays: besides TLS Secrets, Opaque ones hold what `auth-secret`
/// (htpasswd), `auth-tls-secret` and `secure-verify-ca-secret` (`ca.crt`) name.
pub const USABLE_SECRETS: &str =
    "type!=helm.sh/release.v1,type!=kubernetes.io/service-account-token";

/// One watcher's contribution: a whole list bracket, or one change.
type Delivery = (usize, Vec<SourceEvent>);

/// Starts every watcher and forwards their events as batches. The first batch holds the
/// initial list of every watcher at once; then each change, or relist, follows on its own
/// (what is already waiting is sent together). Returns when the receiver is dropped.
pub async fn watch_cluster(client: Client, scope: WatchScope, batches: mpsc::Sender<SourceBatch>) {
    let (deliveries_tx, mut deliveries) = mpsc::channel::<Delivery>(1024);
    let watchers = start_watchers(&client, &scope, &deliveries_tx);
    drop(deliveries_tx);

    let mut listed = vec![false; watchers];
    let mut pending = Vec::new();
    while listed.iter().any(|done| !done) {
        let Some((watcher_id, events)) = deliveries.recv().await else {
            return;
        };
        if matches!(events.last(), Some(SourceEvent::InitDone))
            && let Some(done) = listed.get_mut(watcher_id)
        {
            *done = true;
        }
        pending.extend(events);
    }
    tracing::info!(
        watchers,
        events = pending.len(),
        "every watcher has listed; rendering can start"
    );
    let mut events = pending;
    loop {
        while let Ok((_, more)) = deliveries.try_recv() {
            events.extend(more);
        }
        let batch = SourceBatch {
            events: std::mem::take(&mut events),
            problems: Vec::new(),
        };
        if batches.send(batch).await.is_err() {
            return;
        }
        match deliveries.recv().await {
            Some((_, more)) => events = more,
            None => return,
        }
    }
}

fn start_watchers(
    client: &Client,
    scope: &WatchScope,
    deliveries: &mpsc::Sender<Delivery>,
) -> usize {
    let mut watchers = Watchers {
        deliveries,
        started: 0,
    };
    let namespaces: Vec<Option<String>> = if scope.namespaces.is_empty() {
        vec![None]
    } else {
        scope.namespaces.iter().cloned().map(Some).collect()
    };
    let all = watcher::Config::default();
    for namespace in &namespaces {
        watchers.start(
            in_namespace(client, namespace),
            namespace,
            all.clone(),
            Kind::Service,
            |o: WatchedService| Object::Service(Arc::new(o.into())),
        );
        watchers.start(
            in_namespace(client, namespace),
            namespace,
            all.clone(),
            Kind::EndpointSlice,
            |o: WatchedEndpointSlice| Object::EndpointSlice(Arc::new(o.into())),
        );
        watchers.start(
            in_namespace(client, namespace),
            namespace,
            all.clone().fields(USABLE_SECRETS),
            Kind::Secret,
            // Only the keys some stage reads are kept (resources::SECRET_KEYS_READ).
            Object::secret,
        );
        watchers.start(
            in_namespace(client, namespace),
            namespace,
            all.clone(),
            Kind::Ingress,
            |o: WatchedIngress| Object::Ingress(Arc::new(o.into())),
        );
        // Pods: their labels put endpoints into blue-green groups (their specs and
        // statuses are skipped unbuilt; name, namespace and labels are stored).
        watchers.start(
            in_namespace(client, namespace),
            namespace,
            all.clone(),
            Kind::Pod,
            |o: WatchedPod| Object::Pod(Arc::new(o.into())),
        );
    }
    watchers.start(
        Api::all(client.clone()),
        &None,
        all.clone(),
        Kind::IngressClass,
        |o: IngressClass| Object::IngressClass(Arc::new(o)),
    );
    // Namespaces: their labels decide which routes a Gateway listener admits.
    watchers.start(
        Api::all(client.clone()),
        &None,
        all.clone(),
        Kind::Namespace,
        |o: Namespace| Object::Namespace(Arc::new(o)),
    );
    if scope.gateway_api {
        watchers.start_lenient(
            Api::all(client.clone()),
            &None,
            all.clone(),
            Kind::GatewayClass,
            lenient::keeping_last_readable(),
            |o: GatewayClass| Object::GatewayClass(Arc::new(o)),
        );
        for namespace in &namespaces {
            watchers.start_lenient(
                in_namespace(client, namespace),
                namespace,
                all.clone(),
                Kind::Gateway,
                lenient::keeping_last_readable(),
                |o: Gateway| Object::Gateway(Arc::new(o)),
            );
            watchers.start_lenient(
                in_namespace(client, namespace),
                namespace,
                all.clone(),
                Kind::HttpRoute,
                lenient::readable,
                |mut o: HttpRoute| {
                    o.fit_to_length();
                    Object::HttpRoute(Arc::new(o))
                },
            );
            watchers.start_lenient(
                in_namespace(client, namespace),
                namespace,
                all.clone(),
                Kind::GrpcRoute,
                lenient::readable,
                |mut o: GrpcRoute| {
                    o.fit_to_length();
                    Object::GrpcRoute(Arc::new(o))
                },
            );
            watchers.start_lenient(
                in_namespace(client, namespace),
                namespace,
                all.clone(),
                Kind::TlsRoute,
                lenient::readable,
                |mut o: TlsRoute| {
                    o.fit_to_length();
                    Object::TlsRoute(Arc::new(o))
                },
            );
            watchers.start_lenient(
                in_namespace(client, namespace),
                namespace,
                all.clone(),
                Kind::TcpRoute,
                lenient::readable,
                |mut o: TcpRoute| {
                    o.fit_to_length();
                    Object::TcpRoute(Arc::new(o))
                },
            );
            watchers.start_lenient(
                in_namespace(client, namespace),
                namespace,
                all.clone(),
                Kind::UdpRoute,
                lenient::readable,
                |mut o: UdpRoute| {
                    o.fit_to_length();
                    Object::UdpRoute(Arc::new(o))
                },
            );
            watchers.start_lenient(
                in_namespace(client, namespace),
                namespace,
                all.clone(),
                Kind::ListenerSet,
                lenient::keeping_last_readable(),
                |o: ListenerSet| Object::ListenerSet(Arc::new(o)),
            );
            watchers.start_lenient(
                in_namespace(client, namespace),
                namespace,
                all.clone(),
                Kind::ReferenceGrant,
                lenient::readable,
                |o: ReferenceGrant| Object::ReferenceGrant(Arc::new(o)),
            );
            watchers.start_lenient(
                in_namespace(client, namespace),
                namespace,
                all.clone(),
                Kind::BackendTlsPolicy,
                lenient::readable,
                |o: BackendTlsPolicy| Object::BackendTlsPolicy(Arc::new(o)),
            );
            // BackendTLSPolicies name ConfigMaps (`ca.crt`) for their CAs.
            watchers.start(
                in_namespace(client, namespace),
                namespace,
                all.clone(),
                Kind::ConfigMap,
                stored_config_map(scope),
            );
        }
    }
    // The controller's namespace (the global ConfigMap's) and the TCP services' ConfigMap
    // get a watcher of their own unless one above lists their namespace already: two
    // watchers of one kind and namespace would each take the other's objects for deleted
    // when they relist. The controller's namespace is listed whole, for the ConfigMaps
    // IngressClasses name as their parameters.
    let covered = |configmap_namespace: &str| {
        scope.gateway_api
            && namespaces
                .iter()
                .any(|n| n.as_deref().is_none_or(|n| n == configmap_namespace))
    };
    let controller_namespace = scope.configmap.as_ref().map(|(namespace, _)| namespace);
    if let Some(namespace) = controller_namespace.filter(|n| !covered(n)) {
        watchers.start(
            Api::namespaced(client.clone(), namespace),
            &Some(namespace.clone()),
            all.clone(),
            Kind::ConfigMap,
            |o: ConfigMap| Object::ConfigMap(Arc::new(o)),
        );
    }
    for (namespace, name) in scope
        .tcp_services_configmap
        .iter()
        .filter(|(n, _)| !covered(n) && Some(n) != controller_namespace)
    {
        // Its list covers its one name: the global and the TCP services' ConfigMaps may
        // share a namespace, and neither watcher's list may delete the other's.
        watchers.start_one(client, namespace, name, Kind::ConfigMap, |o: ConfigMap| {
            Object::ConfigMap(Arc::new(o))
        });
    }
    // The default certificate's Secret, when the watched namespaces leave its own out.
    if let Some((namespace, name)) = &scope.default_ssl_certificate
        && !scope.namespaces.is_empty()
        && !scope.namespaces.contains(namespace)
    {
        watchers.start_one(client, namespace, name, Kind::Secret, Object::secret);
    }
    watchers.started
}

/// How a ConfigMap listed for the Gateway API (every ConfigMap of the watched namespaces)
/// is stored: those of the controller's namespace (the global ConfigMap and the
/// IngressClasses' parameters) and the TCP services' ConfigMap whole, any other with only
/// its `ca.crt` (all a BackendTLSPolicy reads of it), so applications' configuration is
/// never held.
fn stored_config_map(scope: &WatchScope) -> impl Fn(ConfigMap) -> Object + Send + 'static {
    let controller_namespace = scope
        .configmap
        .as_ref()
        .map(|(namespace, _)| namespace.clone());
    let tcp_services = scope.tcp_services_configmap.clone();
    move |map: ConfigMap| {
        let namespace = map.metadata.namespace.as_deref();
        let whole = namespace.is_some() && namespace == controller_namespace.as_deref()
            || tcp_services.as_ref().is_some_and(|(tcp_namespace, name)| {
                namespace == Some(tcp_namespace.as_str())
                    && map.metadata.name.as_deref() == Some(name.as_str())
            });
        if whole {
            Object::ConfigMap(Arc::new(map))
        } else {
            Object::ca_config_map(map)
        }
    }
}

fn in_namespace<K>(client: &Client, namespace: &Option<String>) -> Api<K>
where
    K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>,
{
    match namespace {
        Some(namespace) => Api::namespaced(client.clone(), namespace),
        None => Api::all(client.clone()),
    }
}

struct Watchers<'a> {
    deliveries: &'a mpsc::Sender<Delivery>,
    started: usize,
}

/// Whether the API server answered that it does not serve the kind (404): its CRD is not
/// installed, or was removed. A list gets it at start; an open watch gets it once the CRD
/// is gone, and kube-rs then retries the watch rather than listing again.
fn not_served(err: &watcher::Error) -> bool {
    match err {
        watcher::Error::InitialListFailed(kube::Error::Api(status))
        | watcher::Error::WatchStartFailed(kube::Error::Api(status))
        | watcher::Error::WatchFailed(kube::Error::Api(status)) => status.code == 404,
        watcher::Error::WatchError(status) => status.code == 404,
        _ => false,
    }
}

impl Watchers<'_> {
    /// Starts a task that runs one watcher and delivers its events: list brackets whole,
    /// so that brackets of different watchers never interleave, and in a relist only the
    /// objects that changed since they were delivered (the others by identity alone).
    fn start<K>(
        &mut self,
        api: Api<K>,
        namespace: &Option<String>,
        config: watcher::Config,
        kind: Kind,
        wrap: impl Fn(K) -> Object + Send + 'static,
    ) where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        self.start_named(api, namespace, None, config, kind, wrap);
    }

    /// As [`Self::start`], for a watcher whose `config` selects the one object `name`:
    /// its lists cover only that name.
    fn start_named<K>(
        &mut self,
        api: Api<K>,
        namespace: &Option<String>,
        name: Option<String>,
        config: watcher::Config,
        kind: Kind,
        wrap: impl Fn(K) -> Object + Send + 'static,
    ) where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        let events = watcher(api, config).default_backoff().boxed();
        self.run(events, namespace, name, kind, wrap);
    }

    /// As [`Self::start`], for the one object `name` of `namespace` (by a field selector):
    /// its lists cover only that name.
    fn start_one<K>(
        &mut self,
        client: &Client,
        namespace: &str,
        name: &str,
        kind: Kind,
        wrap: impl Fn(K) -> Object + Send + 'static,
    ) where
        K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + Debug
            + Send
            + Sync
            + 'static,
    {
        let only_it = watcher::Config::default().fields(&format!("metadata.name={name}"));
        self.start_named(
            Api::namespaced(client.clone(), namespace),
            &Some(namespace.to_owned()),
            Some(name.to_owned()),
            only_it,
            kind,
            wrap,
        );
    }

    /// As [`Self::start`], for a Gateway API kind read one object at a time (see
    /// [`crate::lenient`]): `readable` turns each event into what the controller takes,
    /// an object that cannot be read as the type being left out, read for its parents
    /// alone or kept at its last readable version, and reported; never the list of the
    /// kind failing whole.
    fn start_lenient<K>(
        &mut self,
        api: Api<Lenient<K>>,
        namespace: &Option<String>,
        config: watcher::Config,
        kind: Kind,
        mut readable: impl FnMut(watcher::Event<Lenient<K>>) -> Option<watcher::Event<K>>
        + Send
        + 'static,
        wrap: impl Fn(K) -> Object + Send + 'static,
    ) where
        K: Resource<DynamicType = ()>
            + Default
            + Clone
            + DeserializeOwned
            + Debug
            + Send
            + Sync
            + 'static,
    {
        let events = watcher(api, config)
            .default_backoff()
            .filter_map(move |event| {
                std::future::ready(match event {
                    Ok(event) => readable(event).map(Ok),
                    Err(err) => Some(Err(err)),
                })
            })
            .boxed();
        self.run(events, namespace, None, kind, wrap);
    }

    /// Runs one watcher's events in a task of its own.
    fn run<K>(
        &mut self,
        mut stream: BoxStream<'static, Result<watcher::Event<K>, watcher::Error>>,
        namespace: &Option<String>,
        name: Option<String>,
        kind: Kind,
        wrap: impl Fn(K) -> Object + Send + 'static,
    ) where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        let list_scope = ListScope::Kind {
            kind,
            namespace: namespace.clone(),
            name,
        };
        let deliveries = self.deliveries.clone();
        let watcher_id = self.started;
        self.started += 1;
        tokio::spawn(async move {
            let mut bracket: Option<Vec<SourceEvent>> = None;
            let mut delivered = Delivered::default();
            // Whether the kind was last found not served (404) and reported empty: once
            // per absence, at the first list or when a CRD is removed later.
            let mut reported_absent = false;
            while let Some(event) = stream.next().await {
                let event = match event {
                    Ok(event) => event,
                    Err(err) if not_served(&err) => {
                        if reported_absent {
                            tracing::debug!(
                                kind = kind.name(),
                                "still not served by the API server"
                            );
                            continue;
                        }
                        // The kind's CRD is not installed (or was removed): it has no
                        // objects, what this watcher delivered is gone, and rendering need
                        // not wait for it. The watcher keeps trying in the background.
                        tracing::info!(
                            kind = kind.name(),
                            "not served by the API server (CRD not installed?); treated as empty"
                        );
                        reported_absent = true;
                        delivered = Delivered::default();
                        let empty =
                            vec![SourceEvent::Init(list_scope.clone()), SourceEvent::InitDone];
                        if deliveries.send((watcher_id, empty)).await.is_err() {
                            return;
                        }
                        continue;
                    }
                    Err(err) => {
                        tracing::warn!(kind = kind.name(), error = %err, "watch failed; retrying");
                        continue;
                    }
                };
                let delivery = match event {
                    watcher::Event::Init => {
                        reported_absent = false;
                        bracket = Some(vec![SourceEvent::Init(list_scope.clone())]);
                        delivered.list_began();
                        None
                    }
                    watcher::Event::InitApply(object) => {
                        if let Some(bracket) = bracket.as_mut() {
                            bracket.push(delivered.listed(object, kind, |o| wrap(slim(kind, o))));
                        }
                        None
                    }
                    watcher::Event::InitDone => {
                        delivered.list_done();
                        bracket.take().map(|mut events| {
                            events.push(SourceEvent::InitDone);
                            events
                        })
                    }
                    watcher::Event::Apply(object) => {
                        delivered.applied(&object);
                        Some(vec![SourceEvent::Apply(wrap(slim(kind, object)))])
                    }
                    watcher::Event::Delete(object) => {
                        delivered.deleted(&object);
                        Some(vec![SourceEvent::Delete(wrap(object).object_ref())])
                    }
                };
                if let Some(events) = delivery
                    && deliveries.send((watcher_id, events)).await.is_err()
                {
                    return;
                }
            }
        });
    }
}

/// Drops what no stage reads, as manifests lose it when they are decoded
/// (`resources::drop_unread_metadata`).
fn slim<K: Resource>(kind: Kind, mut object: K) -> K {
    resources::drop_unread_metadata(kind, object.meta_mut());
    object
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config_map(namespace: &str, name: &str) -> ConfigMap {
        let data = [
            ("ca.crt", "PEM"),
            ("timeout-server", "30s"),
            ("app.yaml", "a: b"),
        ];
        ConfigMap {
            metadata: kube::api::ObjectMeta {
                namespace: Some(namespace.to_owned()),
                name: Some(name.to_owned()),
                ..Default::default()
            },
            data: Some(data.map(|(k, v)| (k.to_owned(), v.to_owned())).into()),
            binary_data: Some(std::collections::BTreeMap::from([(
                "blob".to_owned(),
                k8s_openapi::ByteString(vec![0; 1024]),
            )])),
            ..Default::default()
        }
    }

    fn keys(object: &Object) -> (Vec<String>, bool) {
        let Object::ConfigMap(map) = object else {
            panic!("a ConfigMap is stored as a ConfigMap");
        };
        (
            map.data.iter().flatten().map(|(k, _)| k.clone()).collect(),
            map.binary_data.is_some(),
        )
    }

    #[test]
    fn what_no_stage_reads_of_an_objects_metadata_is_not_stored() {
        let mut map = config_map("ingress", "global");
        let meta = &mut map.metadata;
        meta.uid = Some("d3b0".to_owned());
        meta.generate_name = Some("glo".to_owned());
        meta.self_link = Some("/api/v1/namespaces/ingress/configmaps/global".to_owned());
        meta.finalizers = Some(vec!["example.com/keep".to_owned()]);
        meta.owner_references = Some(vec![Default::default()]);
        meta.managed_fields = Some(vec![Default::default()]);
        meta.annotations = Some(
            [
                (resources::LAST_APPLIED_ANNOTATION, "{}"),
                ("example.com/kept", "yes"),
            ]
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .into(),
        );
        meta.labels = Some([("app".to_owned(), "web".to_owned())].into());
        let namespace = Namespace {
            metadata: meta.clone(),
            ..Namespace::default()
        };
        let class = k8s_openapi::api::networking::v1::IngressClass {
            metadata: meta.clone(),
            ..Default::default()
        };
        let meta = slim(Kind::ConfigMap, map).metadata;
        assert_eq!(meta.labels, None, "no stage reads a ConfigMap's labels");
        assert_eq!(
            slim(Kind::Namespace, namespace).metadata.labels,
            Some([("app".to_owned(), "web".to_owned())].into()),
            "a Namespace's labels are read"
        );
        assert_eq!(
            (
                meta.generate_name,
                meta.self_link,
                meta.finalizers,
                meta.owner_references,
                meta.managed_fields
            ),
            (None, None, None, None, None)
        );
        assert_eq!(meta.uid.as_deref(), Some("d3b0"));
        assert_eq!(
            meta.annotations, None,
            "no stage reads a ConfigMap's annotations"
        );
        // An IngressClass's are read (the default class), less kubectl's copy.
        let annotations: Vec<String> = slim(Kind::IngressClass, class)
            .metadata
            .annotations
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(annotations, ["example.com/kept"]);
    }

    /// A watched EndpointSlice is slimmed, then converted: its Service's label must
    /// survive the slimming for the conversion to take it.
    #[test]
    fn a_watched_endpoint_slice_keeps_its_service_through_slimming() {
        let slice = WatchedEndpointSlice {
            metadata: kube::api::ObjectMeta {
                namespace: Some("shop".to_owned()),
                name: Some("web-x7k2p".to_owned()),
                labels: Some(
                    [(resources::SERVICE_NAME_LABEL, "web"), ("app", "web")]
                        .map(|(k, v)| (k.to_owned(), v.to_owned()))
                        .into(),
                ),
                ..Default::default()
            },
            address_type: "IPv4".to_owned(),
            ..WatchedEndpointSlice::default()
        };
        let stored = resources::EndpointSlice::from(slim(Kind::EndpointSlice, slice));
        assert_eq!(stored.service_name.as_deref(), Some("web"));
        assert_eq!(stored.metadata.labels, None);
    }

    #[test]
    fn configmaps_listed_for_the_gateway_api_keep_only_their_ca_but_the_controllers_and_the_tcp_services_stay_whole()
     {
        let scope = WatchScope {
            configmap: Some(("ingress".to_owned(), "global".to_owned())),
            tcp_services_configmap: Some(("ops".to_owned(), "tcp".to_owned())),
            gateway_api: true,
            ..WatchScope::default()
        };
        let stored = stored_config_map(&scope);
        let whole = (
            vec![
                "app.yaml".to_owned(),
                "ca.crt".to_owned(),
                "timeout-server".to_owned(),
            ],
            true,
        );
        assert_eq!(keys(&stored(config_map("ingress", "global"))), whole);
        assert_eq!(keys(&stored(config_map("ops", "tcp"))), whole);
        // Any ConfigMap of the controller's namespace: an IngressClass's parameters.
        assert_eq!(keys(&stored(config_map("ingress", "class-keys"))), whole);
        let ca_only = (vec!["ca.crt".to_owned()], false);
        // The same names in other namespaces, another name in the TCP services' namespace.
        assert_eq!(keys(&stored(config_map("apps", "global"))), ca_only);
        assert_eq!(keys(&stored(config_map("apps", "tcp"))), ca_only);
        assert_eq!(
            keys(&stored(config_map("ops", "kube-root-ca.crt"))),
            ca_only
        );
    }
}
