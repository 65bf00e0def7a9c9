//! Resolving a service port to the ready endpoints behind it.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;

use model::{Backend, BackendId, Origin, Server};
use resources::{Kind, Object, ObjectRef, Service, ServiceBackendPort, ServicePort};

use crate::backend_settings;
use crate::diagnostic::Diagnostic;
use crate::keys::{self, Annotations, Keys};
use crate::lookup::Recorder;

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
    namespace: &str,
    service_name: &str,
    port: &ServiceBackendPort,
    keys: Keys<'_>,
    origin: &Origin,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<ServiceBackend, String> {
    let (canonical_port, servers, service) =
        resolve_servers(lookups, namespace, service_name, port)?;
    let id = BackendId {
        namespace: namespace.to_owned(),
        service: service_name.to_owned(),
        port: canonical_port,
        mode: model::BackendMode::Http,
    };
    if let Some(backend) = built.get(&id) {
        return Ok(backend.clone());
    }
    let service_ref = ObjectRef::new(Kind::Service, namespace, service_name);
    let service_keys = Arc::new(Annotations::new(
        service.metadata.annotations.as_ref(),
        &service_ref,
        diagnostics,
    ));
    let keys = keys.with_service(&service_keys);
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
    let backend = Arc::new(Backend {
        id: id.clone(),
        servers,
        balance: keys.get(&keys::BALANCE_ALGORITHM),
        server_options,
        timeouts: backend_settings::timeouts(&keys),
        timeout_connect: keys.get(&keys::TIMEOUT_CONNECT),
        timeout_server: keys.get(&keys::TIMEOUT_SERVER),
        client_limits: backend_settings::client_limits(&keys),
        origins: vec![origin.clone()],
    });
    let resolved = (backend, service_keys);
    built.insert(id, resolved.clone());
    Ok(resolved)
}

/// Finds the service port a backend names (by number or by name) and its ready endpoints:
/// from the service's EndpointSlices, or from its Endpoints object when it has no slice.
/// Returns the port's canonical name (its name, or its number when unnamed), so a port
/// referred to both ways is one backend.
pub(crate) fn resolve_servers<'a>(
    snapshot: &mut Recorder<'a>,
    namespace: &str,
    service_name: &str,
    port: &ServiceBackendPort,
) -> Result<(String, Vec<Server>, &'a Arc<Service>), String> {
    let service_ref = ObjectRef::new(Kind::Service, namespace, service_name);
    let Some(Object::Service(service)) = snapshot.get(service_ref) else {
        return Err(format!("service {namespace}/{service_name} not found"));
    };
    let service_port = find_port(service, port).ok_or_else(|| {
        let wanted = match (&port.name, port.number) {
            (Some(name), _) if !name.is_empty() => format!("named '{name}'"),
            (_, Some(number)) => number.to_string(),
            _ => "(none given)".to_owned(),
        };
        format!("service {namespace}/{service_name} has no port {wanted}")
    })?;
    let spec = service.spec.as_ref();
    if spec.and_then(|s| s.type_.as_deref()) == Some("ExternalName") {
        return Err(format!(
            "service {namespace}/{service_name} is of type ExternalName, which is not supported"
        ));
    }
    let port_name = service_port.name.clone().unwrap_or_default();
    let slices = snapshot.endpoint_slices(namespace, service_name);
    let mut servers = Vec::new();
    if slices.is_empty()
        && let Some(endpoints) = snapshot.endpoints(namespace, service_name)
    {
        for subset in endpoints.subsets.iter().flatten() {
            let Some(port) = subset
                .ports
                .iter()
                .flatten()
                .find(|p| same_port_name(p.name.as_deref(), &port_name))
            else {
                continue;
            };
            for address in subset.addresses.iter().flatten() {
                push_server(&mut servers, &address.ip, port.port);
            }
        }
    }
    for slice in slices {
        if slice.address_type == "FQDN" {
            continue;
        }
        let Some(port) = slice
            .ports
            .iter()
            .flatten()
            .find(|p| same_port_name(p.name.as_deref(), &port_name))
        else {
            continue;
        };
        let Some(port_number) = port.port else {
            continue;
        };
        for endpoint in slice.endpoints.iter().flatten() {
            // The API defines an absent `ready` as ready.
            let ready = endpoint
                .conditions
                .as_ref()
                .and_then(|c| c.ready)
                .unwrap_or(true);
            if !ready {
                continue;
            }
            for address in &endpoint.addresses {
                push_server(&mut servers, address, port_number);
            }
        }
    }
    servers.sort();
    servers.dedup();
    let canonical = match service_port.name.as_deref() {
        Some(name) if !name.is_empty() => name.to_owned(),
        _ => service_port.port.to_string(),
    };
    Ok((canonical, servers, service))
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

fn push_server(servers: &mut Vec<Server>, address: &str, port: i32) {
    // Addresses that are not IPs, or out-of-range ports, cannot be HAProxy servers.
    if let (Ok(address), Ok(port)) = (address.parse::<IpAddr>(), u16::try_from(port))
        && port != 0
    {
        servers.push(Server { address, port });
    }
}
