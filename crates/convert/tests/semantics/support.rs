//! Table rows and their runner: a rule, a small YAML input, the expected lines.

// Inputs are YAML manifests (indented as the table likes: the indentation every line
// shares is removed), with two conveniences:
// - a document without `apiVersion` gets the usual one for its `kind`;
// - a `Secret` written without `data` or `stringData` gets a valid generated certificate
//   and key (`tls.crt`, `tls.key`);
// - a `ConfigMap` written without `data` gets that certificate as a CA (`ca.crt`).
//
// Every input also holds `SERVICES`: Services `web` and `api` in namespace `default`, each
// with an unnamed port 80 and one ready endpoint.
//
// Options are `options()` (`--ingress-class portcullis`, `--watch-ingress-without-class`,
// HTTP on 80, HTTPS on 443) unless a case changes them.

use std::fmt::Write as _;
use std::net::IpAddr;
use std::sync::OnceLock;

use convert::{ConvertCache, ConvertOptions};
use index::{Index, SourceEvent};

use crate::summary::{Show, summary};

/// Present in every input.
pub const SERVICES: &str = "
kind: Service
metadata: {name: web}
spec: {ports: [{port: 80}]}
---
kind: EndpointSlice
metadata: {name: web-1, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{port: 8080}]
endpoints: [{addresses: [10.0.0.1]}]
---
kind: Service
metadata: {name: api}
spec: {ports: [{port: 80}]}
---
kind: EndpointSlice
metadata: {name: api-1, labels: {kubernetes.io/service-name: api}}
addressType: IPv4
ports: [{port: 8080}]
endpoints: [{addresses: [10.0.0.2]}]
";

/// A change to the options a case is converted with.
pub type Tweak = fn(&mut ConvertOptions);

/// One row: the rule it states, its input, and every line the conversion must give.
#[derive(Debug, Clone)]
pub struct Case {
    /// The rule, quoting or citing the doc.
    pub rule: &'static str,
    /// YAML manifests (see the module doc).
    pub input: &'static str,
    /// Shared objects the input builds on (see `gateway_fixtures`).
    pub given: &'static str,
    /// Options other than [`options`].
    pub tweak: Tweak,
    /// The summary lines, in any order.
    pub expected: &'static [&'static str],
    /// More expected lines, shared by several cases.
    pub expected_too: &'static [&'static str],
}

impl Case {
    /// A row converted with [`options`].
    pub fn new(rule: &'static str, input: &'static str, expected: &'static [&'static str]) -> Self {
        Self {
            rule,
            input,
            given: "",
            tweak: |_| {},
            expected,
            expected_too: &[],
        }
    }

    /// The row with shared objects besides its input.
    pub fn given(self, given: &'static str) -> Self {
        Self { given, ..self }
    }

    /// The row expecting shared lines besides its own.
    pub fn expecting_too(self, expected_too: &'static [&'static str]) -> Self {
        Self {
            expected_too,
            ..self
        }
    }

    /// The row converted with other options.
    pub fn with(self, tweak: Tweak) -> Self {
        Self { tweak, ..self }
    }
}

/// The options every case starts from.
pub fn options() -> ConvertOptions {
    ConvertOptions {
        ingress_class: "portcullis".into(),
        controller_class: convert::class::CONTROLLER_NAME.into(),
        gateway_controller: convert::gateway::GATEWAY_CONTROLLER.into(),
        watch_ingress_without_class: true,
        global_configmap: None,
        tcp_services_configmap: None,
        default_ssl_certificate: None,
        fallback_certificate: model::TlsCert::default(),
        bind_address: IpAddr::from([127, 0, 0, 1]),
        http_port: 80,
        https_port: 443,
        backend_shards: 1,
        reserved_ports: Vec::new(),
        busy_ports: std::collections::BTreeSet::new(),
    }
}

/// `--watch-ingress-without-class false`.
pub fn not_watching_without_class(options: &mut ConvertOptions) {
    options.watch_ingress_without_class = false;
}

/// `--configmap default/portcullis`.
pub fn with_global_configmap(options: &mut ConvertOptions) {
    options.global_configmap = Some(("default".into(), "portcullis".into()));
}

/// `--tcp-services-configmap default/tcp`.
pub fn with_tcp_services_configmap(options: &mut ConvertOptions) {
    options.tcp_services_configmap = Some(("default".into(), "tcp".into()));
}

/// `--http-port 8080 --https-port 8443`.
pub fn with_ports_8080_and_8443(options: &mut ConvertOptions) {
    options.http_port = 8080;
    options.https_port = 8443;
}

/// The admin endpoint on port 10254, which no listener may take.
pub fn with_admin_port_10254(options: &mut ConvertOptions) {
    options.reserved_ports = vec![10254];
}

/// Converts every case, then fails listing each case whose lines differ.
pub fn check(show: Show, cases: &[Case]) {
    let mut failures = String::new();
    for case in cases {
        let mut actual = lines_of(case, show);
        actual.sort();
        let mut expected: Vec<String> = case
            .expected
            .iter()
            .chain(case.expected_too)
            .map(|l| (*l).to_owned())
            .collect();
        expected.sort();
        if actual != expected {
            let _ = write!(
                failures,
                "\n=== {}\n--- expected\n{}\n--- actual\n{}\n",
                case.rule,
                expected.join("\n"),
                actual.join("\n")
            );
        }
    }
    assert!(
        failures.is_empty(),
        "cases whose conversion differs:{failures}"
    );
}

/// The summary lines of one case's conversion.
fn lines_of(case: &Case, show: Show) -> Vec<String> {
    let manifests = expand(&format!(
        "{SERVICES}---\n{}\n---\n{}",
        dedent(case.given),
        dedent(case.input)
    ));
    let decoded = resources::decode_manifest(&manifests, false);
    assert!(
        decoded.errors.is_empty(),
        "{}: {:?}\n{manifests}",
        case.rule,
        decoded.errors
    );
    let mut index = Index::new();
    for object in decoded.objects {
        index.handle(SourceEvent::Apply(object));
    }
    let snapshot = index.snapshot();
    let mut options = options();
    (case.tweak)(&mut options);
    let conversion = ConvertCache::default().convert(&snapshot, &options);
    summary(&conversion, &conversion.gateway_status, show)
}

/// The text with the indentation its lines share removed, so inputs can be indented in
/// the tables.
fn dedent(text: &str) -> String {
    let indent = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    text.lines()
        .map(|l| l.get(indent..).unwrap_or("").trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The input with every document's conveniences filled in.
fn expand(input: &str) -> String {
    let mut out = String::new();
    let mut document = Vec::new();
    for line in input.lines().chain(["---"]) {
        if line.trim_end() == "---" {
            if document.iter().any(|l: &&str| !l.trim().is_empty()) {
                out.push_str("---\n");
                out.push_str(&complete(&document));
            }
            document.clear();
        } else {
            document.push(line);
        }
    }
    out
}

/// One document with its `apiVersion` and, for a bare Secret, its certificate.
fn complete(document: &[&str]) -> String {
    let field = |name: &str| {
        document
            .iter()
            .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_owned()))
    };
    let mut text = String::new();
    let kind = field("kind:").unwrap_or_default();
    if field("apiVersion:").is_none() {
        let version = match kind.as_str() {
            "Ingress" | "IngressClass" => "networking.k8s.io/v1",
            "EndpointSlice" => "discovery.k8s.io/v1",
            "GatewayClass" | "Gateway" | "HTTPRoute" | "GRPCRoute" | "TLSRoute" | "TCPRoute"
            | "UDPRoute" | "BackendTLSPolicy" | "ListenerSet" => "gateway.networking.k8s.io/v1",
            "ReferenceGrant" => "gateway.networking.k8s.io/v1beta1",
            _ => "v1",
        };
        let _ = writeln!(text, "apiVersion: {version}");
    }
    for line in document {
        let _ = writeln!(text, "{line}");
    }
    if kind == "ConfigMap" && field("data:").is_none() {
        let indented: String = certificate()
            .0
            .lines()
            .map(|l| format!("    {l}\n"))
            .collect();
        let _ = write!(text, "data:\n  ca.crt: |\n{indented}");
    }
    if kind == "Secret" && field("data:").is_none() && field("stringData:").is_none() {
        let (certificate, key) = certificate();
        let indent = |pem: &str| {
            pem.lines()
                .map(|l| format!("    {l}\n"))
                .collect::<String>()
        };
        let _ = write!(
            text,
            "stringData:\n  tls.crt: |\n{}  tls.key: |\n{}",
            indent(certificate),
            indent(key)
        );
    }
    text
}

/// A self-signed certificate and its key (PEM), made once.
fn certificate() -> &'static (String, String) {
    static MADE: OnceLock<(String, String)> = OnceLock::new();
    MADE.get_or_init(|| {
        let params = rcgen::CertificateParams::new(vec!["semantics.test".to_owned()]).unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        (cert.pem(), key.serialize_pem())
    })
}
