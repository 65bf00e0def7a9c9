//! Synthetic clusters for benchmarks and end-to-end runs: N services, each with a Service,
//! an EndpointSlice of a few endpoints and an Ingress; a share of them with TLS and with
//! annotations. The same seed always gives the same objects.

use std::fmt::Write;

/// The shape of a synthetic cluster.
#[derive(Debug, Clone)]
pub struct SyntheticCluster {
    /// Number of services (each with its Ingress).
    pub services: usize,
    /// Namespaces the services are spread over.
    pub namespaces: usize,
    /// Seed of the endpoint addresses and counts.
    pub seed: u64,
    /// Every `tls_every`-th service has a TLS host (0: none).
    pub tls_every: usize,
    /// Certificate and key (PEM) of the per-namespace wildcard TLS Secret.
    pub certificate: Option<(String, String)>,
    /// Write every object as `kubectl get -o yaml` saves it: with kubectl's copy of the
    /// object as last applied (a literal block scalar) and a managedFields entry.
    pub saved_by_kubectl: bool,
    /// Put the endpoints on loopback addresses where nothing listens (127.x.y.z), so a
    /// health check is refused at once, costing about what one to a pod that answers
    /// costs; the default addresses (10.x.y.z) never answer, and every check waits out
    /// its timeout.
    pub refusing_endpoints: bool,
}

impl SyntheticCluster {
    /// `services` services over 10 namespaces, a fifth of them with TLS.
    pub fn new(services: usize, seed: u64) -> Self {
        Self {
            services,
            namespaces: 10,
            seed,
            tls_every: 5,
            certificate: None,
            saved_by_kubectl: false,
            refusing_endpoints: false,
        }
    }

    /// The cluster the command-line tools (`synth-cluster`, `fake-apiserver`) make, from
    /// their arguments `[--as-saved-by-kubectl] [--refusing-endpoints] SERVICES DIR
    /// [SEED]`: with a wildcard certificate for `*.example.test`. Returns it with `DIR`,
    /// or the usage line's error.
    pub fn from_args(tool: &str) -> Result<(Self, String), String> {
        const SAVED: &str = "--as-saved-by-kubectl";
        const REFUSING: &str = "--refusing-endpoints";
        let mut args: Vec<String> = std::env::args().collect();
        let saved_by_kubectl = args.iter().any(|arg| arg == SAVED);
        let refusing_endpoints = args.iter().any(|arg| arg == REFUSING);
        args.retain(|arg| arg != SAVED && arg != REFUSING);
        let (Some(services), Some(dir)) = (
            args.get(1).and_then(|s| s.parse::<usize>().ok()),
            args.get(2),
        ) else {
            return Err(format!(
                "usage: {tool} [{SAVED}] [{REFUSING}] SERVICES DIR [SEED]"
            ));
        };
        let seed = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
        let mut cluster = Self::new(services, seed);
        cluster.saved_by_kubectl = saved_by_kubectl;
        cluster.refusing_endpoints = refusing_endpoints;
        cluster.certificate = Some(crate::self_signed(
            "synthetic wildcard",
            &["*.example.test"],
        ));
        Ok((cluster, dir.clone()))
    }

    /// Namespace of service `index`.
    pub fn namespace(&self, index: usize) -> String {
        format!("ns-{}", index % self.namespaces.max(1))
    }

    /// Manifests of the services `range`, as one multi-document YAML text.
    pub fn manifests(&self, range: std::ops::Range<usize>) -> String {
        let mut text = String::with_capacity(range.len() * 1400);
        for index in range {
            self.write_service(&mut text, index);
        }
        self.finish(text)
    }

    fn finish(&self, text: String) -> String {
        if self.saved_by_kubectl {
            as_saved_by_kubectl(&text)
        } else {
            text
        }
    }

    /// The per-namespace objects: Namespace and, with a certificate, the TLS Secret.
    pub fn namespace_manifests(&self) -> String {
        let mut text = String::new();
        for namespace in 0..self.namespaces.max(1) {
            let _ = write!(
                text,
                "---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: ns-{namespace}}}\n"
            );
            if let Some((certificate, key)) = &self.certificate {
                text.push_str(&crate::tls_secret(
                    &format!("ns-{namespace}"),
                    "wildcard-tls",
                    certificate,
                    key,
                ));
            }
        }
        self.finish(text)
    }

    fn write_service(&self, text: &mut String, index: usize) {
        let namespace = self.namespace(index);
        let mut random = self.seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut next = || {
            // xorshift64*: small, fast and the same everywhere.
            random ^= random >> 12;
            random ^= random << 25;
            random ^= random >> 27;
            random.wrapping_mul(0x2545_F491_4F6C_DD1D)
        };
        let name = format!("svc-{index}");
        let _ = write!(
            text,
            "---\napiVersion: v1\nkind: Service\nmetadata: {{name: {name}, namespace: {namespace}}}\nspec:\n  ports:\n  - {{name: http, port: 80, targetPort: 8080}}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: {name}-abc\n  namespace: {namespace}\n  labels: {{kubernetes.io/service-name: {name}}}\naddressType: IPv4\nports:\n- {{name: http, port: 8080}}\nendpoints:\n"
        );
        let endpoints = 2 + next() % 3;
        let network = if self.refusing_endpoints { 127 } else { 10 };
        for _ in 0..endpoints {
            let address = next();
            let _ = writeln!(
                text,
                "- addresses: [{network}.{}.{}.{}]",
                (address >> 16) % 256,
                (address >> 8) % 256,
                address % 254 + 1
            );
        }
        let host = format!("{name}.{namespace}.example.test");
        let mut annotations = String::new();
        if index.is_multiple_of(7) {
            annotations.push_str("portcullis.dev/balance-algorithm: leastconn, ");
        }
        if index.is_multiple_of(11) {
            annotations.push_str("portcullis.dev/timeout-server: 30s, ");
        }
        let tls = if self.tls_every > 0
            && index.is_multiple_of(self.tls_every)
            && self.certificate.is_some()
        {
            format!("  tls:\n  - {{hosts: [{host}], secretName: wildcard-tls}}\n")
        } else {
            String::new()
        };
        let _ = write!(
            text,
            "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: {name}\n  namespace: {namespace}\n  annotations: {{{}}}\nspec:\n{tls}  rules:\n  - host: {host}\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: {name}, port: {{name: http}}}}}}}}\n      - {{path: /api, pathType: Prefix, backend: {{service: {{name: {name}, port: {{number: 80}}}}}}}}\n",
            annotations.trim_end_matches(", ")
        );
    }
}

/// The documents of `text` as `kubectl get -o yaml` saves objects: each with kubectl's
/// last-applied copy of it (JSON, a literal block scalar) and a managedFields entry in
/// its metadata, written by serde-saphyr.
fn as_saved_by_kubectl(text: &str) -> String {
    let mut saved = String::with_capacity(text.len() * 4);
    for document in text.split("---\n").filter(|d| !d.trim().is_empty()) {
        let Ok(mut object) = serde_saphyr::from_str::<serde_json::Value>(document) else {
            saved.push_str("---\n");
            saved.push_str(document);
            continue;
        };
        let applied = format!("{object}\n");
        let api_version = object["apiVersion"].clone();
        if let Some(meta) = object
            .get_mut("metadata")
            .and_then(serde_json::Value::as_object_mut)
        {
            let annotations = meta
                .entry("annotations")
                .or_insert_with(|| serde_json::json!({}));
            if let Some(annotations) = annotations.as_object_mut() {
                annotations.insert(
                    "kubectl.kubernetes.io/last-applied-configuration".to_owned(),
                    applied.into(),
                );
            }
            meta.insert(
                "managedFields".to_owned(),
                serde_json::json!([{
                    "apiVersion": api_version,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:metadata": {"f:annotations": {
                            ".": {},
                            "f:kubectl.kubernetes.io/last-applied-configuration": {},
                        }},
                        "f:spec": {".": {}, "f:ports": {
                            ".": {},
                            "k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}, "f:name": {}, "f:port": {}},
                        }},
                    },
                    "manager": "kubectl-client-side-apply",
                    "operation": "Update",
                    "time": "2026-01-01T00:00:00Z",
                }]),
            );
        }
        saved.push_str("---\n");
        saved.push_str(&serde_saphyr::to_string(&object).unwrap_or_default());
    }
    saved
}
