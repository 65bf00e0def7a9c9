//! Resolving a service port to the ready endpoints behind it.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;

use model::{Backend, BackendId, Origin, Server};
use resources::{Kind, Name, Object, ObjectRef, Service, ServiceBackendPort, ServicePort};

use crate::backend_settings;
use crate::blue_green::{self, Endpoint};
use crate::diagnostic::Diagnostic;
use crate::keys::{self, Annotations, Keys};
use crate::lookup::Recorder;
use crate::recent::Recent;

/// A backend as one converted object sees it: the backend, and the annotations of its
/// Service (which take precedence over the object's for backend and path keys).
pub(crate) type ServiceBackend = (Arc<Backend>, Arc<Annotations>);

/// The backend of a service port, built once per converted object: `built` holds those
/// this object's conversion already made. `keys` are the object's layers; the Service's
/// annotations are put above them, and their problems reported in `diagnostics`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn service_backend(
    lookups: &mut Recorder<'_>,
    built: &mut BTreeMap<BackendId, ServiceBackend>,
    namespace: &Name,
    service_name: &str,
    port: &ServiceBackendPort,
    keys: Keys<'_>,
    origin: &Origin,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<ServiceBackend, String> {
    // The namespace is the object's, shared rather than copied.
    let service_ref = ObjectRef::new(Kind::Service, namespace.clone(), service_name);
    let (canonical_port, service, endpoint_port) = resolve_port(lookups, &service_ref, port)?;
    let id = BackendId {
        namespace: shared_namespace(namespace),
        service: service_ref.name.shared_text(),
        port: canonical_port.into(),
        mode: model::BackendMode::Http,
    };
    // The same Service and port named again (by its number where it was named by its
    // name): its endpoints were read, and the lookup recorded, the first time.
    if let Some(backend) = built.get(&id) {
        return Ok(backend.clone());
    }
    let endpoints = endpoint_port
        .map(|port_name| ready_endpoints(lookups, &service_ref, port_name, diagnostics))
        .unwrap_or_default();
    let service_keys = Arc::new(Annotations::new(
        service.metadata.annotations.as_ref(),
        &service_ref,
        diagnostics,
    ));
    let keys = keys.with_service(&service_keys);
    let named = named_servers(&keys, service, &service_ref, port, &endpoints, diagnostics)?;
    let (servers, selector) = if named.is_some() {
        // HAProxy finds these servers itself.
        (Vec::new(), None)
    } else {
        blue_green::apply(lookups, &keys, &service_ref, endpoints, diagnostics)
    };
    let app_protocol = find_port(service, port).and_then(|p| p.app_protocol.as_deref());
    let (server_options, servers) = match backend_settings::server_options(
        lookups,
        &keys,
        &service_ref,
        app_protocol,
        diagnostics,
    ) {
        Ok(options) => (options, servers),
        Err(()) => (model::ServerOptions::default(), Vec::new()),
    };
    let settings = model::BackendSettings {
        balance: keys.get(&keys::BALANCE_ALGORITHM),
        selector,
        named,
        timeouts: backend_settings::timeouts(&keys),
        timeout_connect: keys.get(&keys::TIMEOUT_CONNECT),
        timeout_server: keys.get(&keys::TIMEOUT_SERVER),
        client_cert_header: keys.get(&keys::AUTH_TLS_CERT_HEADER),
        error_pages: backend_settings::error_pages(&keys),
        client_limits: backend_settings::client_limits(&keys),
    };
    let backend = Arc::new(Backend {
        id: id.clone(),
        servers,
        server_options: RECENT_OPTIONS.with_borrow_mut(|recent| recent.share(server_options)),
        settings: RECENT_SETTINGS.with_borrow_mut(|recent| recent.share(settings)),
        origins: vec![origin.clone()],
    });
    let resolved = (backend, service_keys);
    built.insert(id, resolved.clone());
    Ok(resolved)
}

/// Finds the service port a backend names (by number or by name). Returns the port's
/// canonical name (its name, or its number when unnamed, so a port referred to both ways
/// is one backend), the Service, and the name its endpoints give the port (`None` for an
/// ExternalName Service, whose server is its external name, resolved by HAProxy).
pub(crate) fn resolve_port<'a>(
    snapshot: &mut Recorder<'a>,
    service_ref: &ObjectRef,
    port: &ServiceBackendPort,
) -> Result<(String, &'a Arc<Service>, Option<&'a str>), String> {
    let (namespace, service_name) = (&*service_ref.namespace, &*service_ref.name);
    let Some(Object::Service(service)) = snapshot.get(service_ref.clone()) else {
        return Err(format!("service {namespace}/{service_name} not found"));
    };
    if is_external_name(service) {
        // Like haproxy-ingress, an ExternalName Service without ports takes the port
        // number the route gives.
        return match (find_port(service, port), port.number) {
            (Some(found), _) => Ok((canonical_port(found), service, None)),
            (None, Some(number)) if service_ports(service).is_empty() && number > 0 => {
                Ok((number.to_string(), service, None))
            }
            _ => Err(no_port(namespace, service_name, port)),
        };
    }
    let service_port =
        find_port(service, port).ok_or_else(|| no_port(namespace, service_name, port))?;
    let port_name = service_port.name.as_deref().unwrap_or_default();
    Ok((canonical_port(service_port), service, Some(port_name)))
}

/// A Service's ready endpoints on the port its endpoints name `port_name`: from its
/// EndpointSlices, or from its Endpoints object when it has no slice.
fn ready_endpoints<'a>(
    snapshot: &mut Recorder<'a>,
    service_ref: &ObjectRef,
    port_name: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Endpoint<'a>> {
    let (namespace, service_name) = (&*service_ref.namespace, &*service_ref.name);
    let slices = snapshot.endpoint_slices(service_ref);
    let mut servers = Vec::with_capacity(
        slices
            .iter()
            .map(|slice| slice.endpoints.as_ref().map_or(0, Vec::len))
            .sum(),
    );
    if slices.is_empty()
        && let Some(endpoints) = snapshot.endpoints(namespace, service_name)
    {
        for (index, subset) in endpoints.subsets.iter().flatten().enumerate() {
            let Some(port) = subset
                .ports
                .iter()
                .flatten()
                .find(|p| same_port_name(p.name.as_deref(), port_name))
            else {
                continue;
            };
            for (at, address) in subset.addresses.iter().flatten().enumerate() {
                let ip = match server_address(&address.ip) {
                    Ok(ip) => ip,
                    Err(why) => {
                        let endpoints = ObjectRef::new(Kind::Endpoints, namespace, service_name);
                        let field = format!("subsets[{index}].addresses[{at}].ip");
                        diagnostics.push(left_out(endpoints, &field, why));
                        continue;
                    }
                };
                let pod = address.target_ref.as_ref().and_then(|target| {
                    pod_of(
                        target.kind.as_deref(),
                        target.name.as_deref(),
                        target.namespace.as_deref(),
                        namespace,
                    )
                });
                push_server(&mut servers, ip, port.port, pod);
            }
        }
    }
    for slice in slices {
        if slice.address_type == "FQDN" {
            continue;
        }
        let slice_ref = || {
            let name = slice.metadata.name.as_deref().unwrap_or_default();
            ObjectRef::new(Kind::EndpointSlice, namespace, name)
        };
        let Some(port) = slice
            .ports
            .iter()
            .flatten()
            .find(|p| same_port_name(p.name.as_deref(), port_name))
        else {
            continue;
        };
        let Some(port_number) = port.port else {
            continue;
        };
        for (index, endpoint) in slice.endpoints.iter().flatten().enumerate() {
            // The API defines an absent `ready` as ready.
            let ready = endpoint
                .conditions
                .as_ref()
                .and_then(|c| c.ready)
                .unwrap_or(true);
            if !ready {
                continue;
            }
            let pod = endpoint.target_ref.as_deref().and_then(|target| {
                pod_of(
                    target.kind.as_deref(),
                    target.name.as_deref(),
                    target.namespace.as_deref(),
                    namespace,
                )
            });
            // The API gives the addresses after the first no meaning, and kube-proxy
            // reads the first only: the others would each have been a server of their own.
            if let Some(address) = endpoint.addresses.first() {
                match server_address(address) {
                    Ok(ip) => push_server(&mut servers, ip, port_number, pod),
                    Err(why) => {
                        let field = format!("endpoints[{index}].addresses[0]");
                        diagnostics.push(left_out(slice_ref(), &field, why));
                    }
                }
            }
        }
    }
    servers.sort();
    servers.dedup_by(|a, b| a.server == b.server);
    servers
}

/// A service port's name, or its number when it has none.
fn canonical_port(service_port: &ServicePort) -> String {
    match service_port.name.as_deref() {
        Some(name) if !name.is_empty() => name.to_owned(),
        _ => service_port.port.to_string(),
    }
}

fn no_port(namespace: &str, service_name: &str, port: &ServiceBackendPort) -> String {
    let wanted = match (&port.name, port.number) {
        (Some(name), _) if !name.is_empty() => format!("named '{name}'"),
        (_, Some(number)) => number.to_string(),
        _ => "(none given)".to_owned(),
    };
    format!("service {namespace}/{service_name} has no port {wanted}")
}

fn is_external_name(service: &Service) -> bool {
    service.spec.as_ref().and_then(|s| s.type_.as_deref()) == Some("ExternalName")
}

fn service_ports(service: &Service) -> &[ServicePort] {
    service
        .spec
        .as_ref()
        .and_then(|s| s.ports.as_deref())
        .unwrap_or_default()
}

/// Servers HAProxy resolves by name: every backend with `use-resolver` (when the
/// resolver is declared), and ExternalName Services (at load, by the system resolver,
/// otherwise). `None` for a backend of listed endpoints. A bad external name is an
/// error for the path.
fn named_servers(
    keys: &Keys<'_>,
    service: &Service,
    service_ref: &ObjectRef,
    port: &ServiceBackendPort,
    endpoints: &[Endpoint<'_>],
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Option<model::NamedServers>, String> {
    let external = is_external_name(service);
    let service_port = find_port(service, port);
    let port_number = if external {
        service_port.map(|p| p.port).or(port.number)
    } else {
        // The port the endpoints listen on, which the name resolves for.
        endpoints
            .first()
            .map(|e| i32::from(e.server.port))
            .or_else(|| {
                service_port.and_then(|p| match &p.target_port {
                    Some(resources::IntOrString::Int(number)) => Some(*number),
                    _ => None,
                })
            })
            .or_else(|| service_port.map(|p| p.port))
    };
    let port_number = port_number
        .and_then(|n| u16::try_from(n).ok())
        .filter(|n| *n > 0);
    if let Some(resolver) = keys.get(&keys::USE_RESOLVER) {
        let declared = keys
            .global
            .get(&keys::DNS_RESOLVERS)
            .iter()
            .any(|r| r.name == resolver);
        match (declared, port_number) {
            (true, Some(port)) => {
                let domain = keys.global.get(&keys::DNS_CLUSTER_DOMAIN);
                let host = model::DnsName::parse(&format!(
                    "{}.{}.svc.{domain}",
                    service_ref.name, service_ref.namespace
                ))?;
                let slots = u16::try_from(endpoints.len().max(1)).unwrap_or(u16::MAX);
                return Ok(Some(model::NamedServers {
                    host,
                    port,
                    resolution: model::Resolution::Resolver {
                        name: resolver,
                        slots,
                    },
                }));
            }
            (false, _) => {
                let (object, field) = keys
                    .set_at(keys::USE_RESOLVER.name)
                    .unwrap_or_else(|| (service_ref.clone(), keys::USE_RESOLVER.name.to_owned()));
                diagnostics.push(Diagnostic {
                    object,
                    field,
                    message: format!(
                        "no dns-resolvers line declares the resolver '{resolver}': the service's endpoints are used"
                    ),
                });
            }
            (true, None) => {}
        }
    }
    if !external {
        return Ok(None);
    }
    let name = service
        .spec
        .as_ref()
        .and_then(|s| s.external_name.as_deref())
        .unwrap_or_default();
    let host = model::DnsName::parse(name.trim_end_matches('.'))
        .map_err(|why| format!("service {service_ref} has an invalid externalName: {why}"))?;
    let port = port_number.ok_or_else(|| format!("service {service_ref} has no usable port"))?;
    Ok(Some(model::NamedServers {
        host,
        port,
        resolution: model::Resolution::AtLoad,
    }))
}

fn find_port<'a>(service: &'a Service, wanted: &ServiceBackendPort) -> Option<&'a ServicePort> {
    let ports = service.spec.as_ref()?.ports.as_ref()?;
    match (&wanted.name, wanted.number) {
        (Some(name), _) if !name.is_empty() => ports
            .iter()
            .find(|p| p.name.as_deref() == Some(name.as_str())),
        (_, Some(number)) => ports.iter().find(|p| p.port == number),
        _ => None,
    }
}

/// Endpoint ports match the service port by name; an absent name is the empty name.
fn same_port_name(name: Option<&str>, wanted: &str) -> bool {
    name.unwrap_or("") == wanted
}

/// The name of the pod an endpoint's `targetRef` names. A Service's pods are in its
/// namespace: a reference to another namespace's pod is not followed, so a tenant's
/// slices cannot read another tenant's pod labels.
fn pod_of<'a>(
    kind: Option<&str>,
    name: Option<&'a str>,
    target_namespace: Option<&str>,
    namespace: &str,
) -> Option<&'a str> {
    if kind != Some("Pod") || target_namespace.is_some_and(|ns| ns != namespace) {
        return None;
    }
    name.filter(|n| !n.is_empty())
}

/// Whether HAProxy can use `address` as a server's. The unspecified address (`0.0.0.0`,
/// `::`) is its transparent mode, where the server is whatever address the client
/// connected to (HAProxy itself, or the node's other ports); multicast and broadcast
/// addresses are no single server.
fn server_address(address: &str) -> Result<IpAddr, String> {
    let why = match address.parse::<IpAddr>() {
        Err(_) => "not an IP address",
        // `::ffff:0.0.0.0` is `0.0.0.0` to HAProxy.
        Ok(ip) if ip.to_canonical().is_unspecified() => "the unspecified address",
        Ok(ip) if ip.to_canonical().is_multicast() => "a multicast address",
        Ok(ip) if ip.to_canonical() == IpAddr::V4(std::net::Ipv4Addr::BROADCAST) => {
            "the broadcast address"
        }
        Ok(ip) => return Ok(ip),
    };
    // Enough of it to find it, not a whole file.
    let shown: String = address.chars().take(64).collect();
    let more = if shown.len() < address.len() {
        "..."
    } else {
        ""
    };
    Err(format!(
        "'{}'{more} is {why}, which HAProxy cannot use as a server's",
        shown.escape_debug()
    ))
}

/// A report of an endpoint address left out.
fn left_out(object: ObjectRef, field: &str, why: String) -> Diagnostic {
    Diagnostic {
        object,
        field: field.to_owned(),
        message: format!("{why}; the endpoint is left out"),
    }
}

fn push_server<'a>(
    servers: &mut Vec<Endpoint<'a>>,
    address: IpAddr,
    port: i32,
    pod: Option<&'a str>,
) {
    // Out-of-range ports cannot be HAProxy servers'.
    if let Ok(port) = u16::try_from(port)
        && port != 0
    {
        servers.push(Endpoint {
            server: Server::at(address, port),
            pod,
        });
    }
}

#[cfg(test)]
mod address_tests {
    #[test]
    fn only_single_unicast_addresses_are_servers() {
        for usable in ["10.1.2.3", "127.0.0.1", "::1", "fd00::5", "192.168.0.255"] {
            assert_eq!(
                super::server_address(usable).map(|ip| ip.to_string()),
                Ok(usable.to_owned()),
            );
        }
        for (unusable, why) in [
            ("0.0.0.0", "the unspecified address"),
            ("::", "the unspecified address"),
            ("224.0.0.1", "a multicast address"),
            ("ff02::1", "a multicast address"),
            ("255.255.255.255", "the broadcast address"),
            ("::ffff:0.0.0.0", "the unspecified address"),
            ("::ffff:224.0.0.1", "a multicast address"),
            ("999.1.1.1", "not an IP address"),
            ("localhost", "not an IP address"),
            ("1.2.3.4:80", "not an IP address"),
        ] {
            assert_eq!(
                super::server_address(unusable),
                Err(format!(
                    "'{unusable}' is {why}, which HAProxy cannot use as a server's"
                ))
            );
        }
        let long = "9".repeat(100_000);
        let message = super::server_address(&long).unwrap_err();
        assert!(message.len() < 200 && message.contains("'..."), "{message}");
    }
}

thread_local! {
    /// Server options and section settings this thread built recently: most backends of
    /// a cluster have the same, and each copy was hundreds of bytes a backend.
    static RECENT_OPTIONS: RefCell<Recent<model::ServerOptions>> =
        const { RefCell::new(Recent::new()) };
    static RECENT_SETTINGS: RefCell<Recent<model::BackendSettings>> =
        const { RefCell::new(Recent::new()) };
}

/// `namespace` shared with the last backend id built on this thread, when it is the same
/// (objects are converted in order, namespace by namespace), else the object's own: a
/// backend outlives the object that made it in a `render`, which frees the objects once
/// converted.
fn shared_namespace(namespace: &Name) -> Arc<str> {
    thread_local! {
        static LAST: std::cell::RefCell<Option<Arc<str>>> = const { std::cell::RefCell::new(None) };
    }
    LAST.with_borrow_mut(|last| match last {
        Some(last) if **last == **namespace => Arc::clone(last),
        _ => {
            let namespace = namespace.shared_text();
            *last = Some(Arc::clone(&namespace));
            namespace
        }
    })
}
