//! Ingress `status.loadBalancer`: the address HAProxy is reached at, written by the
//! leader to every Ingress this controller serves, and only where it differs.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::{Ingress, IngressLoadBalancerIngress};
use kube::api::{Patch, PatchParams};
use kube::{Api, Client};
use serde_json::json;
use tokio::sync::watch;

/// How often the published address is looked up again when nothing else happens (a
/// load balancer may get its address long after the Service was created).
const RECHECK: Duration = Duration::from_secs(30);
/// How soon a refused or failed write is tried again.
const RETRY: Duration = Duration::from_secs(1);

/// Where the published address comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Publish {
    /// The load-balancer addresses (else the external IPs) of this Service.
    Service {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
    /// Fixed IPs or host names.
    Addresses(Vec<String>),
}

/// A served Ingress, as last seen: enough to tell whether its status is right.
#[derive(Debug, Clone, PartialEq)]
pub struct ServedIngress {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// The version the addresses were read from.
    pub resource_version: String,
    /// `status.loadBalancer.ingress`, sorted.
    pub addresses: Vec<IngressLoadBalancerIngress>,
}

impl ServedIngress {
    /// What an Ingress object says now.
    pub fn of(ingress: &Ingress) -> Self {
        let addresses = ingress
            .status
            .as_ref()
            .and_then(|s| s.load_balancer.as_ref())
            .and_then(|lb| lb.ingress.clone())
            .unwrap_or_default();
        Self {
            namespace: ingress.metadata.namespace.clone().unwrap_or_default(),
            name: ingress.metadata.name.clone().unwrap_or_default(),
            resource_version: ingress
                .metadata
                .resource_version
                .clone()
                .unwrap_or_default(),
            addresses: sorted(addresses),
        }
    }
}

/// The addresses to publish, from fixed addresses: IPs as `ip`, the rest as `hostname`.
pub fn from_addresses(addresses: &[String]) -> Vec<IngressLoadBalancerIngress> {
    sorted(addresses.iter().map(|a| address(a)).collect())
}

/// The addresses to publish, from a Service: its load balancer's, else its external IPs.
pub fn from_service(service: &Service) -> Vec<IngressLoadBalancerIngress> {
    let balancer: Vec<IngressLoadBalancerIngress> = service
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_ref())
        .into_iter()
        .flatten()
        .map(|lb| IngressLoadBalancerIngress {
            hostname: lb.hostname.clone(),
            ip: lb.ip.clone(),
            ports: None,
        })
        .collect();
    if !balancer.is_empty() {
        return sorted(balancer);
    }
    let external = service
        .spec
        .as_ref()
        .and_then(|s| s.external_ips.clone())
        .unwrap_or_default();
    from_addresses(&external)
}

fn address(text: &str) -> IngressLoadBalancerIngress {
    if text.parse::<IpAddr>().is_ok() {
        IngressLoadBalancerIngress {
            ip: Some(text.to_owned()),
            ..IngressLoadBalancerIngress::default()
        }
    } else {
        IngressLoadBalancerIngress {
            hostname: Some(text.to_owned()),
            ..IngressLoadBalancerIngress::default()
        }
    }
}

fn sorted(mut addresses: Vec<IngressLoadBalancerIngress>) -> Vec<IngressLoadBalancerIngress> {
    addresses.sort_by(|a, b| (&a.ip, &a.hostname).cmp(&(&b.ip, &b.hostname)));
    addresses
}

/// The Ingresses whose status differs from `desired`, leaving out any already written
/// at the same version (its update is on its way back through the watch).
pub fn outdated<'a>(
    served: &'a [ServedIngress],
    desired: &[IngressLoadBalancerIngress],
    written: &BTreeMap<(String, String), String>,
) -> Vec<&'a ServedIngress> {
    served
        .iter()
        .filter(|ingress| ingress.addresses != desired)
        .filter(|ingress| {
            written.get(&(ingress.namespace.clone(), ingress.name.clone()))
                != Some(&ingress.resource_version)
        })
        .collect()
}

/// What the status writer works from, as the controller last saw it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatusInput {
    /// The Ingresses this controller serves.
    pub ingresses: Vec<ServedIngress>,
    /// The `--publish-service` Service, when a watched namespace holds it; else the
    /// writer reads it from the API server.
    pub publish_service: Option<Arc<Service>>,
}

/// Writes Ingress status while this replica leads: whenever the served Ingresses, the
/// published Service or the leadership change, and every [`RECHECK`]. Returns when
/// `input` is closed.
pub async fn write_ingress_status(
    client: Client,
    publish: Publish,
    mut leading: watch::Receiver<bool>,
    mut input: watch::Receiver<Arc<StatusInput>>,
) {
    let mut written: BTreeMap<(String, String), String> = BTreeMap::new();
    loop {
        let mut settled = true;
        if *leading.borrow_and_update() {
            let current = input.borrow_and_update().clone();
            let desired = match &current.publish_service {
                Some(service) if matches!(publish, Publish::Service { .. }) => {
                    Ok(from_service(service))
                }
                _ => desired(&client, &publish).await,
            };
            settled = match desired {
                Ok(desired) => {
                    write_outdated(&client, &current.ingresses, &desired, &mut written).await
                }
                Err(err) => {
                    tracing::warn!(error = %err, "cannot read the published address");
                    false
                }
            };
        }
        tokio::select! {
            changed = input.changed() => if changed.is_err() { return },
            _ = leading.changed() => {}
            () = tokio::time::sleep(if settled { RECHECK } else { RETRY }) => {}
        }
    }
}

async fn desired(
    client: &Client,
    publish: &Publish,
) -> Result<Vec<IngressLoadBalancerIngress>, kube::Error> {
    match publish {
        Publish::Addresses(addresses) => Ok(from_addresses(addresses)),
        Publish::Service { namespace, name } => {
            let services: Api<Service> = Api::namespaced(client.clone(), namespace);
            Ok(services
                .get_opt(name)
                .await?
                .map(|service| from_service(&service))
                .unwrap_or_default())
        }
    }
}

async fn write_outdated(
    client: &Client,
    served: &[ServedIngress],
    desired: &[IngressLoadBalancerIngress],
    written: &mut BTreeMap<(String, String), String>,
) -> bool {
    let mut settled = true;
    written.retain(|(namespace, name), _| {
        served
            .iter()
            .any(|s| s.namespace == *namespace && s.name == *name)
    });
    for ingress in outdated(served, desired, written) {
        let ingresses: Api<Ingress> = Api::namespaced(client.clone(), &ingress.namespace);
        // The version makes the write conditional: if the Ingress changed meanwhile, the
        // API server refuses it and the newer version comes back through the watch.
        let patch = json!({
            "metadata": {"resourceVersion": ingress.resource_version},
            "status": {"loadBalancer": {"ingress": desired}},
        });
        match ingresses
            .patch_status(
                &ingress.name,
                &PatchParams::default(),
                &Patch::Merge(&patch),
            )
            .await
        {
            Ok(_) => {
                tracing::info!(ingress = %format!("{}/{}", ingress.namespace, ingress.name), "status written");
                written.insert(
                    (ingress.namespace.clone(), ingress.name.clone()),
                    ingress.resource_version.clone(),
                );
            }
            Err(kube::Error::Api(status)) if status.code == 409 => {
                settled = false;
                tracing::debug!(ingress = %ingress.name, "status write conflicted; the newer version will be compared");
            }
            Err(err) => {
                settled = false;
                tracing::warn!(ingress = %format!("{}/{}", ingress.namespace, ingress.name), error = %err, "cannot write status");
            }
        }
    }
    settled
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{
        LoadBalancerIngress, LoadBalancerStatus, ServiceSpec, ServiceStatus,
    };

    fn ip(address: &str) -> IngressLoadBalancerIngress {
        IngressLoadBalancerIngress {
            ip: Some(address.into()),
            ..IngressLoadBalancerIngress::default()
        }
    }

    fn host(name: &str) -> IngressLoadBalancerIngress {
        IngressLoadBalancerIngress {
            hostname: Some(name.into()),
            ..IngressLoadBalancerIngress::default()
        }
    }

    #[test]
    fn a_service_publishes_its_load_balancer_else_its_external_ips() {
        let mut service = Service {
            spec: Some(ServiceSpec {
                external_ips: Some(vec!["198.51.100.7".into()]),
                ..ServiceSpec::default()
            }),
            ..Service::default()
        };
        assert_eq!(from_service(&service), [ip("198.51.100.7")]);
        service.status = Some(ServiceStatus {
            load_balancer: Some(LoadBalancerStatus {
                ingress: Some(vec![
                    LoadBalancerIngress {
                        ip: Some("192.0.2.9".into()),
                        ..LoadBalancerIngress::default()
                    },
                    LoadBalancerIngress {
                        hostname: Some("lb.example".into()),
                        ..LoadBalancerIngress::default()
                    },
                ]),
            }),
            ..ServiceStatus::default()
        });
        assert_eq!(
            from_service(&service),
            [host("lb.example"), ip("192.0.2.9")]
        );
        assert_eq!(
            from_addresses(&["10.0.0.1".into(), "edge.example".into(), "::1".into()]),
            [host("edge.example"), ip("10.0.0.1"), ip("::1")]
        );
    }

    #[test]
    fn only_ingresses_whose_status_differs_and_not_yet_written_at_their_version_are_outdated() {
        let served =
            |name: &str, version: &str, addresses: Vec<IngressLoadBalancerIngress>| ServedIngress {
                namespace: "default".into(),
                name: name.into(),
                resource_version: version.into(),
                addresses,
            };
        let ingresses = [
            served("right", "1", vec![ip("10.0.0.1")]),
            served("empty", "2", vec![]),
            served("stale", "3", vec![ip("10.0.0.9")]),
            served("written", "4", vec![]),
        ];
        let written =
            BTreeMap::from([(("default".to_owned(), "written".to_owned()), "4".to_owned())]);
        let outdated: Vec<&str> = outdated(&ingresses, &[ip("10.0.0.1")], &written)
            .iter()
            .map(|i| i.name.as_str())
            .collect();
        assert_eq!(outdated, ["empty", "stale"]);
    }
}
