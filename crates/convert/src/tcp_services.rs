//! TCP services: the `tcp-services` ConfigMap (`--tcp-services-configmap`), each entry
//! a port of HAProxy and the Service whose connections it carries, and the checks every
//! TCP service port goes through, whoever declares it.
//!
//! An entry is `<namespace>/<service>:<port>[:<in-proxy>[:<out-proxy>[:<tls-secret>
//! [:<check-interval>[:<ca-secret>]]]]]`, as haproxy-ingress reads it: `PROXY` in the
//! third field reads a PROXY header from clients, `PROXY`/`PROXY-V2`/`PROXY-V1` in the
//! fourth sends one to the servers, a TLS Secret terminates TLS on the port, the check
//! interval (2s by default, `-` for none) checks the servers, and a CA Secret requires
//! client certificates it signed.

use std::collections::BTreeMap;
use std::sync::Arc;

use model::{CertId, HostKey, SendProxy};
use resources::{ConfigMap, ObjectRef, ServiceBackendPort};

use crate::contribution::{Contribution, MergeOrder, TcpClaim, TcpPortSettings};
use crate::endpoints;
use crate::keys::Keys;
use crate::lookup::Recorder;

/// Why a TCP service may not take `port`, if it may not: HAProxy's HTTP ports, the
/// controller's and its observers' ports, and the Gateway listeners' ports are taken.
pub(crate) fn port_refusal(lookups: &mut Recorder<'_>, port: u16) -> Option<String> {
    let ports = lookups.listener_ports();
    if port == ports.http || port == ports.https {
        return Some(format!("port {port} is one of HAProxy's HTTP ports"));
    }
    if ports.reserved.contains(&port) {
        return Some(format!(
            "port {port} is taken by the controller's admin endpoint, or by HAProxy's stats page, exporter, health check or fronting proxy port"
        ));
    }
    if ports.busy.contains(&port) {
        return Some(format!(
            "port {port} is in use by another process on this machine"
        ));
    }
    if lookups.port_protocols().uses(port) {
        return Some(format!("port {port} is a Gateway listener's"));
    }
    None
}

/// Converts the ConfigMap of TCP services.
pub(crate) fn convert_tcp_configmap(
    object: ObjectRef,
    configmap: &ConfigMap,
    lookups: &mut Recorder<'_>,
) -> Contribution {
    let order = MergeOrder::of(configmap.metadata.creation_timestamp.as_ref(), &object);
    let mut output = Contribution::new(object, "ConfigMap", order);
    let entries: BTreeMap<String, String> = configmap.data.clone().unwrap_or_default();
    for (key, value) in &entries {
        let field = format!("data.{key}");
        match entry_claim(key, value, lookups, &mut output) {
            Ok(Some(claim)) => output.tcp.push(TcpClaim { field, ..claim }),
            Ok(None) => {}
            Err(why) => output.report(field, format!("{why}; the entry is skipped")),
        }
    }
    output
}

/// One entry's claim; `Ok(None)` when the Service is not usable (reported).
fn entry_claim(
    key: &str,
    value: &str,
    lookups: &mut Recorder<'_>,
    output: &mut Contribution,
) -> Result<Option<TcpClaim>, String> {
    let port: u16 = key
        .trim()
        .parse()
        .ok()
        .filter(|port| *port > 0)
        .ok_or_else(|| {
            format!(
                "'{}' is not a port number from 1 to 65535",
                key.escape_debug()
            )
        })?;
    if let Some(why) = port_refusal(lookups, port) {
        return Err(why);
    }
    let fields: Vec<&str> = value.trim().split(':').collect();
    if fields.len() > 7 {
        return Err(format!(
            "'{}' has more than the 7 fields <namespace>/<service>:<port>:<in-proxy>:<out-proxy>:<tls-secret>:<check-interval>:<ca-secret>",
            value.escape_debug()
        ));
    }
    let field = |index: usize| fields.get(index).map_or("", |f| f.trim());
    let (namespace, service) = field(0)
        .split_once('/')
        .filter(|(namespace, name)| !namespace.is_empty() && !name.is_empty())
        .ok_or_else(|| {
            format!(
                "'{}' does not start with <namespace>/<service>",
                value.escape_debug()
            )
        })?;
    let service_port = match field(1) {
        "" => return Err("the Service port (second field) is missing".to_owned()),
        text => match text.parse::<i32>() {
            Ok(number) => ServiceBackendPort {
                number: Some(number),
                name: None,
            },
            Err(_) => ServiceBackendPort {
                number: None,
                name: Some(text.to_owned()),
            },
        },
    };
    let accept_proxy = match field(2).to_ascii_uppercase().as_str() {
        "" => false,
        "PROXY" => true,
        other => {
            return Err(format!(
                "the third field is '{other}': only PROXY or nothing"
            ));
        }
    };
    let send_proxy = match field(3).to_ascii_uppercase().as_str() {
        "" => None,
        "PROXY" | "PROXY-V2" => Some(SendProxy::V2),
        "PROXY-V1" => Some(SendProxy::V1),
        other => {
            return Err(format!(
                "the fourth field is '{other}': only PROXY, PROXY-V1, PROXY-V2 or nothing"
            ));
        }
    };
    let own_namespace = output.object.namespace.clone();
    let cert = secret_field(field(4), &own_namespace, "fifth")?;
    let interval = match field(5) {
        "" => Some(model::HaproxyDuration::parse("2s")),
        "-" => None,
        text => Some(model::HaproxyDuration::parse(text)),
    }
    .transpose()
    .map_err(|why| format!("the check interval (sixth field): {why}"))?;
    if interval.as_ref().is_some_and(|i| i.to_std().is_zero()) {
        return Err(
            "the check interval (sixth field) must be above 0; '-' turns checks off".to_owned(),
        );
    }
    let client_ca = match secret_field(field(6), &own_namespace, "seventh")? {
        None => None,
        Some(id) => Some(crate::client_auth::load_client_ca(lookups, id)?),
    };
    if client_ca.is_some() && cert.is_none() {
        return Err(
            "a CA Secret (seventh field) checks client certificates, which needs TLS: name a TLS Secret in the fifth field"
                .to_owned(),
        );
    }
    let keys = Keys {
        service: None,
        object: None,
        global: lookups.global(),
    };
    let mut built = BTreeMap::new();
    let backend = endpoints::service_backend(
        lookups,
        &mut built,
        &resources::Name::from(namespace),
        service,
        &service_port,
        keys,
        &output.origin,
        &mut output.diagnostics,
    );
    let backend = match backend {
        Ok((backend, _)) => {
            let mut backend = (*backend).clone().for_tcp();
            // Each entry's PROXY and check settings are its own: a section per entry,
            // even when two entries name one Service port.
            backend.id.port = format!("{}-on-{port}", backend.id.port).into();
            let server_options = Arc::make_mut(&mut backend.server_options);
            if send_proxy.is_some() {
                server_options.send_proxy = send_proxy;
            }
            server_options.health = interval.map(|interval| model::HealthCheck {
                interval,
                rise: None,
                fall: None,
                port: None,
                addr: None,
                uri: None,
            });
            vec![(Some(Arc::new(backend)), 1)]
        }
        // Its connections are refused rather than the port left unbound, so that a
        // client sees the service down, never another one.
        Err(why) => {
            output.report(
                format!("data.{key}"),
                format!("{why}; the port refuses its connections"),
            );
            Vec::new()
        }
    };
    Ok(Some(TcpClaim {
        port,
        host: HostKey::CatchAll,
        backends: backend,
        cert: cert.clone(),
        port_settings: TcpPortSettings {
            tls: cert.is_some(),
            client_ca,
            accept_proxy,
            log_format: None,
        },
        field: String::new(),
    }))
}

/// A `<namespace>/<name>` Secret field (the ConfigMap's namespace when it has no `/`).
fn secret_field(text: &str, own_namespace: &str, position: &str) -> Result<Option<CertId>, String> {
    if text.is_empty() {
        return Ok(None);
    }
    if text.starts_with("file://") {
        return Err(format!(
            "the {position} field names a file ('{}'): only Secrets are read",
            text.escape_debug()
        ));
    }
    let (namespace, name) = text.split_once('/').unwrap_or((own_namespace, text));
    if namespace.is_empty() || name.is_empty() || name.contains('/') {
        return Err(format!(
            "the {position} field '{}' is not <namespace>/<secret>",
            text.escape_debug()
        ));
    }
    Ok(Some(CertId {
        namespace: namespace.to_owned(),
        name: name.to_owned(),
    }))
}
