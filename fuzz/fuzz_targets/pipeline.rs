//! Invariant I5 under a fuzzer: whatever the manifests hold, portcullis renders a
//! configuration HAProxy accepts, and the victim tenant beside them, there first, is
//! served. The input
//! is either raw manifest text (decoding's robustness) or, more often, values put into
//! every field of an Ingress, an HTTPRoute and the global ConfigMap that reaches HAProxy
//! (depth that raw text rarely reaches). `haproxy -c` is the oracle; a configuration
//! already checked is not checked again.

#![no_main]

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::net::IpAddr;
use std::sync::{Mutex, OnceLock};

use convert::ConvertOptions;
use index::{Index, SourceEvent};
use libfuzzer_sys::fuzz_target;
use model::{HostKey, TlsCert};
use serde_json::{Value, json};

/// The victim tenant, a Gateway every namespace may attach to, and the attacker's
/// Service.
const BASE: &str = r#"
apiVersion: v1
kind: Service
metadata: {name: app, namespace: victim}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: app-1, namespace: victim, labels: {kubernetes.io/service-name: app}}
addressType: IPv4
ports: [{name: http, port: 8080}]
endpoints: [{addresses: [127.0.0.1]}]
---
apiVersion: v1
kind: Service
metadata: {name: app, namespace: attacker}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: site, namespace: victim, creationTimestamp: "2020-01-01T00:00:00Z"}
spec:
  rules:
  - host: victim.test
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: portcullis}
spec: {controllerName: portcullis.dev/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: victim}
spec:
  gatewayClassName: portcullis
  listeners:
  - {name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}
"#;

/// A real certificate for the default one: HAProxy refuses an empty file.
fn fallback_certificate() -> TlsCert {
    static CERT: OnceLock<TlsCert> = OnceLock::new();
    CERT.get_or_init(|| {
        let params = rcgen::CertificateParams::new(vec!["fallback.test".to_owned()])
            .expect("a certificate for a valid name");
        let key = rcgen::KeyPair::generate().expect("a key pair");
        let cert = params.self_signed(&key).expect("a self-signed certificate");
        TlsCert {
            pem_bundle: format!("{}{}", cert.pem(), key.serialize_pem()),
        }
    })
    .clone()
}

fn options() -> ConvertOptions {
    ConvertOptions {
        ingress_class: "portcullis".into(),
        controller_class: convert::class::CONTROLLER_NAME.into(),
        gateway_controller: convert::gateway::GATEWAY_CONTROLLER.into(),
        watch_ingress_without_class: true,
        global_configmap: Some(("attacker".into(), "global".into())),
        tcp_services_configmap: Some(("attacker".into(), "tcp".into())),
        default_ssl_certificate: None,
        fallback_certificate: fallback_certificate(),
        bind_address: IpAddr::from([127, 0, 0, 1]),
        http_port: 8080,
        https_port: 8443,
        backend_shards: 2,
        reserved_ports: vec![10254],
        busy_ports: Default::default(),
    }
}

/// The attacker's objects, every field that reaches HAProxy taken from `fields`.
fn attacker_manifests(fields: &[String]) -> String {
    let field = |index: usize| fields.get(index).cloned().unwrap_or_default();
    let path_types = ["Exact", "Prefix", "ImplementationSpecific"];
    let path_type = path_types[field(2).len() % path_types.len()];
    let route_path_types = ["Exact", "PathPrefix", "RegularExpression"];
    let route_path_type = route_path_types[field(7).len() % route_path_types.len()];
    let weight: i64 = field(12).parse().unwrap_or(1);
    let objects: Vec<Value> = vec![
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
               "metadata": {"name": "evil", "namespace": "attacker",
                            "creationTimestamp": "2030-01-01T00:00:00Z", "annotations": {
                   "portcullis.dev/timeout-server": field(3),
                   "portcullis.dev/balance-algorithm": field(4),
                   "haproxy-ingress.github.io/ssl-redirect-code": field(5)}},
               "spec": {"tls": [{"hosts": [field(0)], "secretName": field(6)}],
                        "rules": [{"host": field(0), "http": {"paths": [
                   {"path": field(1), "pathType": path_type,
                    "backend": {"service": {"name": "app", "port": {"number": 80}}}}]}}]}}),
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
               "metadata": {"name": "evil", "namespace": "attacker",
                            "creationTimestamp": "2030-01-01T00:00:00Z"},
               "spec": {"parentRefs": [{"name": "gw", "namespace": "victim"}],
                        "hostnames": [field(13)],
                        "rules": [{"matches": [{"path": {"type": route_path_type, "value": field(7)},
                                                "headers": [{"name": field(8), "value": field(9)}],
                                                "queryParams": [{"name": field(10), "value": field(11)}]}],
                                   "filters": [{"type": "RequestHeaderModifier",
                                                "requestHeaderModifier": {"set": [{"name": field(8), "value": field(14)}]}}],
                                   "backendRefs": [{"name": "app", "port": 80, "weight": weight}]}]}}),
        // A TCP service by the ConfigMap (each field from the input) and by an Ingress.
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tcp", "namespace": "attacker"},
               "data": {field(16): format!("attacker/app:{}:{}:{}:{}:{}", field(3), field(5), field(4), field(6), field(15))}}),
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
               "metadata": {"name": "evil-tcp", "namespace": "attacker",
                            "creationTimestamp": "2030-01-01T00:00:00Z", "annotations": {
                   "portcullis.dev/tcp-service-port": field(16),
                   "portcullis.dev/tcp-service-log-format": field(4),
                   "portcullis.dev/tcp-service-proxy-protocol": field(5)}},
               "spec": {"tls": [{"hosts": [field(0)], "secretName": field(6)}],
                        "rules": [{"host": field(0), "http": {"paths": [
                   {"path": "/", "pathType": "Prefix",
                    "backend": {"service": {"name": "app", "port": {"number": 80}}}}]}}]}}),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "global", "namespace": "attacker"},
               "data": {"timeout-client": field(15), "max-connections": field(16),
                        "forwardfor": field(17), "forwardfor-trusted-cidrs": field(18),
                        "real-ip-hdr": field(19)}}),
    ];
    objects
        .iter()
        .map(|object| format!("---\n{object}\n"))
        .collect()
}

fn haproxy_binary() -> &'static str {
    ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"]
        .into_iter()
        .find(|path| std::path::Path::new(path).exists())
        .unwrap_or("haproxy")
}

/// The configurations already checked, by hash.
static CHECKED: Mutex<Option<HashSet<u64>>> = Mutex::new(None);

/// Checks one input: HAProxy accepts what portcullis renders and, when
/// `victim_first` (the attacker's objects are all younger than the victim's), the victim
/// is still served: a host and path belong to the oldest object that routes them.
fn check(attacker: &str, victim_first: bool) {
    let mut index = Index::new();
    for text in [BASE, attacker] {
        // Decoding must never panic, whatever the text; what it refuses is reported.
        let decoded = resources::decode_manifest(text, false);
        for object in decoded.objects {
            index.handle(SourceEvent::Apply(object));
        }
    }
    let conversion = convert::convert(&index.snapshot(), &options());
    let served_victim = conversion
        .model
        .hosts
        .get(&HostKey::Exact("victim.test".into()))
        .is_some_and(|host| {
            host.routes
                .values()
                .any(|r| &*r.origin.namespace == "victim")
        });
    assert!(
        served_victim || !victim_first,
        "the victim is not served: {:?}",
        conversion.diagnostics
    );
    let rendered = render::render(&conversion.model);
    let mut hasher = DefaultHasher::new();
    for (path, file) in &rendered.files {
        path.hash(&mut hasher);
        file.text().hash(&mut hasher);
    }
    let digest = hasher.finish();
    if let Ok(mut checked) = CHECKED.lock()
        && !checked.get_or_insert_with(HashSet::new).insert(digest)
    {
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (path, file) in &rendered.files {
        let target = dir.path().join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).expect("a directory for the rendered files");
        }
        std::fs::write(&target, file.text().as_bytes()).expect("the rendered file written");
    }
    let output = std::process::Command::new(haproxy_binary())
        .arg("-c")
        .arg("-f")
        .arg(dir.path().join("haproxy.cfg"))
        .arg("-f")
        .arg(dir.path().join("backends"))
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("haproxy runs");
    assert!(
        output.status.success(),
        "haproxy -c refused what portcullis accepted:\n{}\ninput:\n{attacker}\ndiagnostics: {:#?}",
        String::from_utf8_lossy(&output.stderr),
        conversion.diagnostics
    );
}

fuzz_target!(|data: &[u8]| {
    let Some((mode, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    if mode % 4 == 0 {
        // Raw text may write any object, an older claim on the victim's host or the
        // victim's own objects: HAProxy's acceptance is the only oracle.
        check(&text, false);
    } else {
        let fields: Vec<String> = text.split('\u{1f}').map(str::to_owned).collect();
        check(&attacker_manifests(&fields), true);
    }
});
