//! The manifests under `deploy/` are valid Kubernetes objects (every field exists in the
//! k8s-openapi types), grant exactly what the controller asks the API server for, and
//! run the binary with flags it accepts.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::Path;

use clap::Parser as _;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, PodSpec, Service, ServiceAccount};
use k8s_openapi::api::networking::v1::IngressClass;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use portcullis::cli::{Cli, Command};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn deploy_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../deploy"))
}

/// Every document of every YAML file under `deploy/`, with its file name.
fn documents() -> Vec<(String, Value)> {
    let mut files: Vec<_> = std::fs::read_dir(deploy_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 7, "{files:?}");
    files
        .iter()
        .flat_map(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            let docs: Vec<Value> = serde_saphyr::from_multiple(&text)
                .unwrap_or_else(|err| panic!("{}: {err}", path.display()));
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            docs.into_iter().map(move |doc| (name.clone(), doc))
        })
        .collect()
}

/// Decodes into the typed object and encodes again: a misspelt or unknown field is
/// dropped on the way, so the result differs from the document.
fn typed<T: DeserializeOwned + Serialize>(file: &str, document: &Value) -> T {
    let object: T = serde_json::from_value(document.clone())
        .unwrap_or_else(|err| panic!("{file}: {} does not decode: {err}", document["kind"]));
    let again = serde_json::to_value(&object).unwrap();
    let mut lost = Vec::new();
    differences("", document, &again, &mut lost);
    assert!(
        lost.is_empty(),
        "{file}: fields the {} type does not have: {lost:?}",
        document["kind"]
    );
    object
}

fn differences(path: &str, wanted: &Value, got: &Value, out: &mut Vec<String>) {
    match (wanted, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (key, value) in w {
                let at = format!("{path}.{key}");
                match g.get(key) {
                    Some(other) => differences(&at, value, other, out),
                    None => out.push(at),
                }
            }
        }
        (Value::Array(w), Value::Array(g)) if w.len() == g.len() => {
            for (i, (a, b)) in w.iter().zip(g).enumerate() {
                differences(&format!("{path}[{i}]"), a, b, out);
            }
        }
        (w, g) if w != g => out.push(format!("{path}: {w} became {g}")),
        _ => {}
    }
}

#[derive(Default)]
struct Objects {
    cluster_roles: Vec<ClusterRole>,
    roles: Vec<Role>,
    bindings: Vec<(String, Value)>,
    service_accounts: Vec<ServiceAccount>,
    services: Vec<Service>,
    config_maps: Vec<ConfigMap>,
    classes: Vec<IngressClass>,
    pod_specs: Vec<(String, PodSpec)>,
}

fn objects() -> Objects {
    let mut objects = Objects::default();
    for (file, doc) in documents() {
        let kind = doc["kind"].as_str().unwrap_or_default().to_owned();
        match kind.as_str() {
            "Namespace" => drop(typed::<Namespace>(&file, &doc)),
            "ServiceAccount" => objects.service_accounts.push(typed(&file, &doc)),
            "ClusterRole" => objects.cluster_roles.push(typed(&file, &doc)),
            "Role" => objects.roles.push(typed(&file, &doc)),
            "ClusterRoleBinding" => {
                drop(typed::<ClusterRoleBinding>(&file, &doc));
                objects.bindings.push((kind, doc));
            }
            "RoleBinding" => {
                drop(typed::<RoleBinding>(&file, &doc));
                objects.bindings.push((kind, doc));
            }
            "Service" => objects.services.push(typed(&file, &doc)),
            "ConfigMap" => objects.config_maps.push(typed(&file, &doc)),
            "IngressClass" => objects.classes.push(typed(&file, &doc)),
            "Deployment" => {
                let deployment: Deployment = typed(&file, &doc);
                let spec = deployment.spec.unwrap().template.spec.unwrap();
                objects.pod_specs.push((file, spec));
            }
            "DaemonSet" => {
                let daemon_set: DaemonSet = typed(&file, &doc);
                let spec = daemon_set.spec.unwrap().template.spec.unwrap();
                objects.pod_specs.push((file, spec));
            }
            other => panic!("{file}: unexpected kind {other}"),
        }
    }
    objects
}

#[test]
fn every_document_is_a_valid_object_of_its_kind() {
    let objects = objects();
    assert_eq!(objects.pod_specs.len(), 2, "a Deployment and a DaemonSet");
    assert_eq!(objects.classes.len(), 1);
    assert_eq!(
        objects.classes[0]
            .spec
            .as_ref()
            .unwrap()
            .controller
            .as_deref(),
        Some(convert::class::CONTROLLER_NAME)
    );
}

#[test]
fn the_roles_grant_exactly_what_the_controller_asks_for() {
    let objects = objects();
    let granted = |rules: &[k8s_openapi::api::rbac::v1::PolicyRule], grant: cluster::Grant| {
        rules
            .iter()
            .flat_map(|rule| {
                let groups = rule.api_groups.clone().unwrap_or_default();
                let resources = rule.resources.clone().unwrap_or_default();
                let verbs = rule.verbs.clone();
                groups.into_iter().flat_map(move |group| {
                    let verbs = verbs.clone();
                    resources.clone().into_iter().flat_map(move |resource| {
                        let group = group.clone();
                        verbs.clone().into_iter().map(move |verb| {
                            (group.clone(), resource.clone(), verb, format!("{grant:?}"))
                        })
                    })
                })
            })
            .collect::<Vec<_>>()
    };
    let mut in_manifests = BTreeSet::new();
    for role in &objects.cluster_roles {
        in_manifests.extend(granted(
            role.rules.as_deref().unwrap_or_default(),
            cluster::Grant::Cluster,
        ));
    }
    for role in &objects.roles {
        in_manifests.extend(granted(
            role.rules.as_deref().unwrap_or_default(),
            cluster::Grant::OwnNamespace,
        ));
    }
    let asked: BTreeSet<_> = cluster::API_ACCESS
        .iter()
        .flat_map(|access| {
            access.verbs.iter().map(move |verb| {
                (
                    access.group.to_owned(),
                    access.resource.to_owned(),
                    (*verb).to_owned(),
                    format!("{:?}", access.grant),
                )
            })
        })
        .collect();
    assert_eq!(in_manifests, asked);
    // Every binding gives its role to the ServiceAccount the pods run as.
    let account = objects.service_accounts[0].metadata.name.clone().unwrap();
    for (kind, binding) in &objects.bindings {
        assert_eq!(binding["subjects"][0]["name"], account.as_str(), "{kind}");
        assert_eq!(binding["roleRef"]["name"], "portcullis", "{kind}");
    }
    for (file, pod) in &objects.pod_specs {
        assert_eq!(
            pod.service_account_name.as_deref(),
            Some(account.as_str()),
            "{file}"
        );
    }
}

#[test]
fn the_pods_run_the_binary_with_flags_it_accepts_and_probe_its_admin_server() {
    let objects = objects();
    let service = &objects.services[0];
    let service_ref = format!(
        "{}/{}",
        service.metadata.namespace.as_deref().unwrap(),
        service.metadata.name.as_deref().unwrap()
    );
    let config_map = &objects.config_maps[0];
    let config_map_ref = format!(
        "{}/{}",
        config_map.metadata.namespace.as_deref().unwrap(),
        config_map.metadata.name.as_deref().unwrap()
    );
    for (file, pod) in &objects.pod_specs {
        let container = &pod.containers[0];
        let args = container.args.clone().unwrap();
        let cli = Cli::try_parse_from(std::iter::once("portcullis".to_owned()).chain(args))
            .unwrap_or_else(|err| panic!("{file}: {err}"));
        let Command::Run(run) = cli.command else {
            panic!("{file}: not `run`");
        };
        assert!(
            run.manifests.is_none(),
            "{file}: in-cluster mode reads the API server"
        );
        assert_eq!(
            run.config
                .configmap
                .as_ref()
                .map(|(ns, n)| format!("{ns}/{n}")),
            Some(config_map_ref.clone()),
            "{file}"
        );
        if let Some((namespace, name)) = &run.cluster.publish_service {
            assert_eq!(format!("{namespace}/{name}"), service_ref, "{file}");
        }
        let env: BTreeSet<(String, String)> = container
            .env
            .clone()
            .unwrap_or_default()
            .into_iter()
            .filter_map(|e| Some((e.name, e.value_from?.field_ref?.field_path)))
            .collect();
        assert!(
            env.contains(&("POD_NAME".into(), "metadata.name".into())),
            "{file}"
        );
        assert!(
            env.contains(&("POD_NAMESPACE".into(), "metadata.namespace".into())),
            "{file}"
        );
        let ports = container.ports.clone().unwrap();
        let port = |name: &str| {
            ports
                .iter()
                .find(|p| p.name.as_deref() == Some(name))
                .map(|p| u16::try_from(p.container_port).unwrap())
        };
        assert_eq!(port("admin"), Some(run.admin_bind.port()), "{file}");
        assert_eq!(port("http"), Some(run.config.http_port), "{file}");
        assert_eq!(port("https"), Some(run.config.https_port), "{file}");
        let readiness = container.readiness_probe.clone().unwrap().http_get.unwrap();
        assert_eq!(readiness.path.as_deref(), Some("/readyz"), "{file}");
        let liveness = container.liveness_probe.clone().unwrap().http_get.unwrap();
        assert_eq!(liveness.path.as_deref(), Some("/healthz"), "{file}");
        let mount = &container.volume_mounts.clone().unwrap()[0];
        assert_eq!(
            Path::new(&mount.mount_path),
            run.state_dir,
            "{file}: the state directory is writable"
        );
    }
    // The Service sends traffic to the pods.
    let selector = service.spec.as_ref().unwrap().selector.clone().unwrap();
    let deployment_labels = documents()
        .into_iter()
        .find(|(_, d)| d["kind"] == "Deployment")
        .map(|(_, d)| d["spec"]["template"]["metadata"]["labels"].clone())
        .unwrap();
    for (key, value) in selector {
        assert_eq!(deployment_labels[&key], value.as_str());
    }
}

#[test]
fn the_image_puts_the_binary_beside_haproxy_from_debian() {
    let dockerfile = std::fs::read_to_string(deploy_dir().join("Dockerfile")).unwrap();
    let lines: Vec<&str> = dockerfile.lines().map(str::trim).collect();
    assert!(
        lines.iter().any(|l| l.starts_with("FROM debian:")),
        "{dockerfile}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("apt-get install") && l.contains(" haproxy")),
        "{dockerfile}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("RUN cargo build --release --locked -p portcullis")),
        "{dockerfile}"
    );
    assert!(
        lines.contains(
            &"COPY --from=build /src/target/release/portcullis /usr/local/bin/portcullis"
        ),
        "{dockerfile}"
    );
    assert!(
        lines.contains(&"USER 10001"),
        "runs as the user the pods require: {dockerfile}"
    );
}

#[test]
fn the_pods_expose_and_annotate_haproxy_s_exporter_on_the_port_the_configmap_opens() {
    let objects = objects();
    let config_map = objects.config_maps.first().unwrap();
    let data = config_map.data.clone().unwrap_or_default();
    let exporter_port = data["prometheus-port"].clone();
    assert!(matches!(
        (convert::keys::PROMETHEUS_PORT.parse)(&exporter_port),
        Ok(Some(_))
    ));
    let mut pods = 0;
    for (file, doc) in documents() {
        if !matches!(doc["kind"].as_str(), Some("Deployment" | "DaemonSet")) {
            continue;
        }
        pods += 1;
        let template = &doc["spec"]["template"];
        let annotations = &template["metadata"]["annotations"];
        assert_eq!(annotations["prometheus.io/scrape"], "true", "{file}");
        assert_eq!(
            annotations["prometheus.io/port"],
            exporter_port.as_str(),
            "{file}"
        );
        assert_eq!(annotations["prometheus.io/path"], "/metrics", "{file}");
        let ports = template["spec"]["containers"][0]["ports"]
            .as_array()
            .unwrap();
        assert!(
            ports.iter().any(|port| port["name"] == "prometheus"
                && port["containerPort"] == exporter_port.parse::<u64>().unwrap()),
            "{file}: no container port named prometheus on {exporter_port}"
        );
    }
    assert_eq!(pods, 2);
}
