//! Synthetic clusters for benchmarks and end-to-end runs: N services, each with a Service,
//! an EndpointSlice of a few endpoints and an Ingress (or an HTTPRoute); a share of them
//! with TLS and with annotations. The same seed always gives the same objects.

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
    /// Write every object as `kubectl get -o yaml` saves it from a cluster: with kubectl's
    /// copy of the object as last applied (a literal block scalar), a managedFields entry
    /// and what the API server and its controllers set (UIDs, a Service's cluster address
    /// and defaults, an EndpointSlice's owner, each endpoint's node, zone and pod), with a
    /// Helm chart's labels on Services and Ingresses.
    pub saved_by_kubectl: bool,
    /// Put the endpoints on loopback addresses where nothing listens (127.x.y.z), so a
    /// health check is refused at once, costing about what one to a pod that answers
    /// costs; the default addresses (10.x.y.z) never answer, and every check waits out
    /// its timeout.
    pub refusing_endpoints: bool,
    /// Write a Pod behind each endpoint, as a cluster holds it (its spec and status
    /// whole), and point the endpoint at it: a cluster holds more Pods than anything but
    /// endpoints, and Kubernetes mode watches them all.
    pub with_pods: bool,
    /// Route every service with an HTTPRoute instead of an Ingress, all attached to one
    /// Gateway whose HTTP and HTTPS listeners (the latter with the wildcard certificate)
    /// take routes from every namespace, as a cluster that moved to the Gateway API does.
    pub gateway_api: bool,
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
            with_pods: false,
            gateway_api: false,
        }
    }

    /// The cluster the command-line tools (`synth-cluster`, `fake-apiserver`) make, from
    /// their arguments `[--as-saved-by-kubectl] [--refusing-endpoints] [--with-pods]
    /// [--gateway-api] SERVICES DIR [SEED]`: with a wildcard certificate for
    /// `*.example.test`. Returns it with `DIR`, or the usage line's error.
    pub fn from_args(tool: &str) -> Result<(Self, String), String> {
        const SAVED: &str = "--as-saved-by-kubectl";
        const REFUSING: &str = "--refusing-endpoints";
        const PODS: &str = "--with-pods";
        const GATEWAY_API: &str = "--gateway-api";
        let mut args: Vec<String> = std::env::args().collect();
        let flag = |args: &[String], name: &str| args.iter().any(|arg| arg == name);
        let saved_by_kubectl = flag(&args, SAVED);
        let refusing_endpoints = flag(&args, REFUSING);
        let with_pods = flag(&args, PODS);
        let gateway_api = flag(&args, GATEWAY_API);
        args.retain(|arg| ![SAVED, REFUSING, PODS, GATEWAY_API].contains(&arg.as_str()));
        let (Some(services), Some(dir)) = (
            args.get(1).and_then(|s| s.parse::<usize>().ok()),
            args.get(2),
        ) else {
            return Err(format!(
                "usage: {tool} [{SAVED}] [{REFUSING}] [{PODS}] [{GATEWAY_API}] SERVICES DIR [SEED]"
            ));
        };
        let seed = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
        let mut cluster = Self::new(services, seed);
        cluster.saved_by_kubectl = saved_by_kubectl;
        cluster.refusing_endpoints = refusing_endpoints;
        cluster.with_pods = with_pods;
        cluster.gateway_api = gateway_api;
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

    /// The per-namespace objects: Namespace and, with a certificate, the TLS Secret; for
    /// a Gateway API cluster, its GatewayClass and Gateway (in the first namespace).
    pub fn namespace_manifests(&self) -> String {
        let mut text = String::new();
        if self.gateway_api {
            text.push_str(&self.gateway());
        }
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

    /// The GatewayClass and the Gateway every route attaches to: plain HTTP on port 80,
    /// and, with a certificate, HTTPS on port 443 terminated with the first namespace's
    /// wildcard Secret.
    fn gateway(&self) -> String {
        let https = if self.certificate.is_some() {
            "  - name: https\n    protocol: HTTPS\n    port: 443\n    allowedRoutes: {namespaces: {from: All}}\n    tls: {certificateRefs: [{name: wildcard-tls}]}\n"
        } else {
            ""
        };
        format!(
            "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {{name: portcullis}}\nspec: {{controllerName: portcullis.dev/gateway-controller}}\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {{name: edge, namespace: {}}}\nspec:\n  gatewayClassName: portcullis\n  listeners:\n  - name: http\n    protocol: HTTP\n    port: 80\n    allowedRoutes: {{namespaces: {{from: All}}}}\n{https}",
            self.namespace(0)
        )
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
        let mut pods = String::new();
        for pod in 0..endpoints {
            let address = next();
            let address = format!(
                "{network}.{}.{}.{}",
                (address >> 16) % 256,
                (address >> 8) % 256,
                address % 254 + 1
            );
            let _ = writeln!(text, "- addresses: [{address}]");
            if self.with_pods {
                let pod = format!("{name}-7d9f8b6c5-{pod:05}");
                let _ = writeln!(
                    text,
                    "  targetRef: {{kind: Pod, name: {pod}, namespace: {namespace}}}"
                );
                write_pod(&mut pods, &pod, &namespace, &name, &address);
            }
        }
        text.push_str(&pods);
        let host = format!("{name}.{namespace}.example.test");
        if self.gateway_api {
            // The Ingress's two paths, as an HTTPRoute's two rules.
            let _ = write!(
                text,
                "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: {name}, namespace: {namespace}}}\nspec:\n  parentRefs: [{{name: edge, namespace: {}}}]\n  hostnames: [{host}]\n  rules:\n  - matches: [{{path: {{type: PathPrefix, value: /}}}}]\n    backendRefs: [{{name: {name}, port: 80}}]\n  - matches: [{{path: {{type: PathPrefix, value: /api}}}}]\n    backendRefs: [{{name: {name}, port: 80}}]\n",
                self.namespace(0)
            );
            return;
        }
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

/// A Pod as a cluster holds it: a Deployment's, with its spec and status whole.
fn write_pod(text: &mut String, pod: &str, namespace: &str, app: &str, address: &str) {
    let _ = write!(
        text,
        "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {pod}\n  namespace: {namespace}\n  uid: {}\n  resourceVersion: '1'\n  labels: {{app: {app}, pod-template-hash: 7d9f8b6c5}}\n  annotations: {{kubectl.kubernetes.io/restartedAt: '2026-11-30T10:00:00Z'}}\n  ownerReferences:\n  - {{apiVersion: apps/v1, kind: ReplicaSet, name: {app}-7d9f8b6c5, uid: {}, controller: true, blockOwnerDeletion: true}}\nspec:\n  containers:\n  - name: {app}\n    image: registry.example.test/{app}:1.0.0\n    ports:\n    - {{name: http, containerPort: 8080, protocol: TCP}}\n    env:\n    - {{name: APP_NAME, value: {app}}}\n    resources: {{requests: {{cpu: 100m, memory: 128Mi}}, limits: {{memory: 256Mi}}}}\n    readinessProbe: {{httpGet: {{path: /healthz, port: http}}, periodSeconds: 10}}\n    volumeMounts:\n    - {{name: kube-api-access, mountPath: /var/run/secrets/kubernetes.io/serviceaccount, readOnly: true}}\n  volumes:\n  - name: kube-api-access\n    projected: {{sources: [{{serviceAccountToken: {{path: token, expirationSeconds: 3607}}}}]}}\n  nodeName: node-1\n  serviceAccountName: default\n  tolerations:\n  - {{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}}\nstatus:\n  phase: Running\n  podIP: {address}\n  hostIP: 192.168.0.1\n  conditions:\n  - {{type: Ready, status: 'True'}}\n  - {{type: ContainersReady, status: 'True'}}\n  containerStatuses:\n  - {{name: {app}, ready: true, restartCount: 0, image: registry.example.test/{app}:1.0.0, started: true}}\n",
        uid_of(pod, 0),
        uid_of(app, 0)
    );
}

/// A stable UID for the object named `of` (`salt` tells apart objects of one name).
fn uid_of(of: &str, salt: usize) -> String {
    let hash = of
        .bytes()
        .chain(salt.to_le_bytes())
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        });
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        hash >> 32,
        (hash >> 16) & 0xffff,
        hash & 0xfff,
        (hash >> 20) & 0xfff,
        hash & 0xffff_ffff_ffff
    )
}

/// The documents of `text` as `kubectl get -o yaml` saves objects: each with kubectl's
/// last-applied copy of it (JSON, a literal block scalar) and a managedFields entry in
/// its metadata, written by serde-saphyr.
fn as_saved_by_kubectl(text: &str) -> String {
    let mut saved = String::with_capacity(text.len() * 4);
    // Split at the lines that are `---`: a PEM's `-----END ...-----` line ends the same way.
    let text = format!("\n{text}");
    for document in text.split("\n---\n").filter(|d| !d.trim().is_empty()) {
        let Ok(mut object) = serde_saphyr::from_str::<serde_json::Value>(document) else {
            saved.push_str("---\n");
            saved.push_str(document);
            saved.push('\n');
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
        populate_as_the_api_server_does(&mut object, saved.len());
        saved.push_str("---\n");
        saved.push_str(&serde_saphyr::to_string(&object).unwrap_or_default());
    }
    saved
}

/// Adds what the API server sets on an object and `kubectl get -o yaml` saves with it:
/// identity and bookkeeping in its metadata (and a Helm chart's labels on Services and
/// Ingresses), a Service's addresses and defaults, an
/// EndpointSlice's owner and each endpoint's conditions, node, zone and pod, the empty
/// statuses. `salt` makes each object's UID its own.
fn populate_as_the_api_server_does(object: &mut serde_json::Value, salt: usize) {
    use serde_json::json;
    if !object
        .get("metadata")
        .is_some_and(serde_json::Value::is_object)
    {
        return;
    }
    let kind = object["kind"].as_str().unwrap_or_default().to_owned();
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let namespace = object["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let uid = |of: &str| uid_of(of, salt);
    if matches!(kind.as_str(), "Service" | "Ingress") {
        // What a Helm chart puts on what it installs.
        object["metadata"]["labels"] = json!({
            "app.kubernetes.io/name": name, "app.kubernetes.io/instance": name,
            "app.kubernetes.io/managed-by": "Helm", "helm.sh/chart": "app-1.4.2",
        });
    }
    if let Some(meta) = object["metadata"].as_object_mut() {
        meta.insert("uid".to_owned(), uid(&name).into());
        meta.insert(
            "resourceVersion".to_owned(),
            (salt % 1_000_000).to_string().into(),
        );
        meta.insert(
            "creationTimestamp".to_owned(),
            "2026-01-01T00:00:00Z".into(),
        );
    }
    match kind.as_str() {
        "Service" => {
            let spec = &mut object["spec"];
            let address = format!("10.96.{}.{}", (salt >> 8) % 256, salt % 254 + 1);
            spec["clusterIP"] = address.clone().into();
            spec["clusterIPs"] = json!([address]);
            spec["internalTrafficPolicy"] = "Cluster".into();
            spec["ipFamilies"] = json!(["IPv4"]);
            spec["ipFamilyPolicy"] = "SingleStack".into();
            spec["selector"] = json!({"app": name});
            spec["sessionAffinity"] = "None".into();
            spec["type"] = "ClusterIP".into();
            if let Some(ports) = spec["ports"].as_array_mut() {
                for port in ports {
                    port["protocol"] = "TCP".into();
                }
            }
            object["status"] = json!({"loadBalancer": {}});
        }
        "EndpointSlice" => {
            let service = object["metadata"]["labels"]["kubernetes.io/service-name"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let meta = &mut object["metadata"];
            meta["generateName"] = format!("{service}-").into();
            meta["generation"] = 1.into();
            meta["labels"]["endpointslice.kubernetes.io/managed-by"] =
                "endpointslice-controller.k8s.io".into();
            // What the EndpointSlice controller stamps on every slice it writes.
            meta["annotations"]["endpoints.kubernetes.io/last-change-trigger-time"] =
                "2026-01-01T00:00:00Z".into();
            meta["ownerReferences"] = json!([{
                "apiVersion": "v1", "kind": "Service", "name": service,
                "uid": uid(&service), "blockOwnerDeletion": true, "controller": true,
            }]);
            if let Some(ports) = object["ports"].as_array_mut() {
                for port in ports {
                    port["protocol"] = "TCP".into();
                }
            }
            if let Some(endpoints) = object["endpoints"].as_array_mut() {
                for (index, endpoint) in endpoints.iter_mut().enumerate() {
                    let pod = format!("{service}-7d9f8b6c5-{index:05}");
                    endpoint["conditions"] =
                        json!({"ready": true, "serving": true, "terminating": false});
                    endpoint["nodeName"] = format!("node-{}", (salt + index) % 50).into();
                    endpoint["zone"] = format!("zone-{}", (salt + index) % 3).into();
                    endpoint["targetRef"] = json!({
                        "kind": "Pod", "name": pod, "namespace": namespace, "uid": uid(&pod),
                    });
                }
            }
        }
        "Ingress" => {
            object["metadata"]["generation"] = 1.into();
            object["status"] = json!({"loadBalancer": {}});
        }
        _ => {}
    }
}
