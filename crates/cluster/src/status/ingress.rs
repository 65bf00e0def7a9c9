//! Ingress `status.loadBalancer`: the address HAProxy is reached at, written by the
//! leader to every Ingress this controller serves, and only where it differs.

use std::borrow::Cow;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::networking::v1::{
    Ingress, IngressLoadBalancerIngress, IngressLoadBalancerStatus, IngressStatus,
};
use kube::{Api, Client};
use resources::{Kind, Service, WatchedService};

use super::kind::{MergeContext, StatusKind, Target};
use super::writer::TargetSource;

/// How often the published address is looked up again when nothing else happens (a
/// load balancer may get its address long after the Service was created).
pub(crate) const RECHECK: Duration = Duration::from_secs(30);

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

/// What the Ingress status writer works from, as the controller last saw it.
#[derive(Debug, Clone)]
pub struct ServedIngresses {
    /// Where the published address comes from.
    pub publish: Publish,
    /// The Ingresses this controller serves, as stored.
    pub ingresses: Vec<Arc<resources::Ingress>>,
    /// The `--publish-service` Service, when a watched namespace holds it; else the
    /// writer reads it from the API server.
    pub publish_service: Option<Arc<Service>>,
}

/// Equal values. The writer is handed every served Ingress again for every change, most
/// of them the very objects it holds: the same pointer settles those without a deep
/// comparison.
impl PartialEq for ServedIngresses {
    fn eq(&self, other: &Self) -> bool {
        let same =
            |a: &Arc<resources::Ingress>, b: &Arc<resources::Ingress>| Arc::ptr_eq(a, b) || a == b;
        self.publish == other.publish
            && self.publish_service == other.publish_service
            && self.ingresses.len() == other.ingresses.len()
            && (self.ingresses.iter().zip(&other.ingresses)).all(|(a, b)| same(a, b))
    }
}

impl ServedIngresses {
    /// Nothing served yet.
    pub fn none(publish: Publish) -> Self {
        Self {
            publish,
            ingresses: Vec::new(),
            publish_service: None,
        }
    }
}

/// The addresses to publish now: the fixed ones, or the Service's (`known`: as the
/// controller last saw it; else read from the API server).
pub(crate) async fn published_addresses(
    publish: &Publish,
    known: Option<&Service>,
    client: &Client,
) -> Result<Vec<IngressLoadBalancerIngress>, kube::Error> {
    match (publish, known) {
        (Publish::Addresses(addresses), _) => Ok(from_addresses(addresses)),
        (Publish::Service { .. }, Some(service)) => Ok(from_service(service)),
        (Publish::Service { namespace, name }, None) => {
            let services: Api<WatchedService> = Api::namespaced(client.clone(), namespace);
            Ok(services
                .get_opt(name)
                .await?
                .map(|service| from_service(&service.into()))
                .unwrap_or_default())
        }
    }
}

impl TargetSource<Ingress> for ServedIngresses {
    const RECHECK: Option<Duration> = Some(RECHECK);

    async fn targets(&self, client: &Client) -> Result<Cow<'_, [Target<Ingress>]>, kube::Error> {
        let desired = Arc::new(
            published_addresses(&self.publish, self.publish_service.as_deref(), client).await?,
        );
        Ok(Cow::Owned(
            self.ingresses
                .iter()
                .map(|ingress| Target {
                    object: Arc::new(ingress.for_status()),
                    desired: desired.clone(),
                })
                .collect(),
        ))
    }
}

/// `status.loadBalancer` is ours alone: the desired addresses replace the current ones
/// unless they are the same in another order.
impl StatusKind for Ingress {
    const KIND: Kind = Kind::Ingress;
    type Status = IngressStatus;
    type Desired = Vec<IngressLoadBalancerIngress>;

    fn status(&self) -> Option<&IngressStatus> {
        self.status.as_ref()
    }

    fn merge(
        current: &IngressStatus,
        desired: &Vec<IngressLoadBalancerIngress>,
        _context: &MergeContext<'_>,
    ) -> IngressStatus {
        let addresses = current
            .load_balancer
            .as_ref()
            .and_then(|lb| lb.ingress.clone())
            .unwrap_or_default();
        if sorted(addresses) == sorted(desired.clone()) {
            return current.clone();
        }
        IngressStatus {
            load_balancer: Some(IngressLoadBalancerStatus {
                ingress: Some(desired.clone()),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::testing::{at_now, metadata};
    use crate::status::writer::{Settled, Written, pending};
    use k8s_openapi::api::core::v1::{LoadBalancerIngress, LoadBalancerStatus};
    use resources::{ObjectRef, ServiceSpec, ServiceStatus};
    use std::collections::BTreeMap;

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

    fn ingress(
        name: &str,
        version: &str,
        addresses: Option<Vec<IngressLoadBalancerIngress>>,
    ) -> Target<Ingress> {
        Target {
            object: Arc::new(Ingress {
                metadata: metadata(name, version),
                status: addresses.map(|addresses| IngressStatus {
                    load_balancer: Some(IngressLoadBalancerStatus {
                        ingress: Some(addresses),
                    }),
                }),
                ..Ingress::default()
            }),
            desired: Arc::new(vec![ip("10.0.0.1")]),
        }
    }

    #[test]
    fn only_ingresses_whose_status_differs_and_not_yet_written_at_their_version_are_outdated() {
        let served = |name: &str, version: &str, addresses: Vec<IngressLoadBalancerIngress>| {
            ingress(name, version, Some(addresses))
        };
        let ingresses = [
            served("right", "1", vec![ip("10.0.0.1")]),
            served("empty", "2", vec![]),
            served("stale", "3", vec![ip("10.0.0.9")]),
            served("written", "4", vec![]),
        ];
        let mut written = Written(BTreeMap::from([(
            ObjectRef::new(Kind::Ingress, "default", "written"),
            Settled::WrittenAt("4".to_owned()),
        )]));
        let outdated: Vec<String> = at_now(|context| pending(&ingresses, &mut written, context))
            .into_iter()
            .map(|patch| patch.object.name.to_string())
            .collect();
        assert_eq!(outdated, ["empty", "stale"]);
    }

    #[test]
    fn the_published_addresses_replace_the_current_ones_unless_they_are_the_same_in_another_order()
    {
        let stale = ingress("web", "1", Some(vec![ip("10.0.0.9")]));
        let written = at_now(|context| stale.status_to_write(context));
        assert_eq!(
            written,
            Some(IngressStatus {
                load_balancer: Some(IngressLoadBalancerStatus {
                    ingress: Some(vec![ip("10.0.0.1")]),
                }),
            })
        );

        let mut reordered = ingress("web", "1", Some(vec![ip("10.0.0.1"), host("lb.example")]));
        reordered.desired = Arc::new(vec![host("lb.example"), ip("10.0.0.1")]);
        assert_eq!(at_now(|context| reordered.status_to_write(context)), None);

        let mut nothing = ingress("web", "1", None);
        nothing.desired = Arc::new(Vec::new());
        assert_eq!(at_now(|context| nothing.status_to_write(context)), None);
    }
}
