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
        }
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
        text
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
        text
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
        for _ in 0..endpoints {
            let address = next();
            let _ = writeln!(
                text,
                "- addresses: [10.{}.{}.{}]",
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
