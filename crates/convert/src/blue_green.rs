//! Blue-green groups of a backend's servers: weights from their pods' labels, and the
//! group label a request header or cookie can name.

use std::collections::BTreeMap;

use model::{GroupSelector, Server, ServerWeight, Word};
use resources::{Kind, Object, ObjectRef};

use crate::diagnostic::Diagnostic;
use crate::keys::{self, BlueGreenMode, GroupWeight, Keys, SelectorPair};
use crate::lookup::Recorder;

/// haproxy-ingress's `initial-weight` default: the weight the smallest group's pods get
/// in `deploy` mode, before scaling to HAProxy's range.
const INITIAL_WEIGHT: f32 = 1.0;

/// An endpoint and the name of the pod its `targetRef` names in the Service's namespace,
/// if any: a reference is made of it only when blue-green keys read the pod.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Endpoint<'a> {
    pub(crate) server: Server,
    pub(crate) pod: Option<&'a str>,
}

/// Sets the servers' weights and groups from the blue-green keys, looking their pods up
/// (recorded, so a pod's label change converts the backend again), and returns the
/// selector to render. Does nothing, and reads no pod, when no blue-green key is set.
pub(crate) fn apply(
    lookups: &mut Recorder<'_>,
    keys: &Keys<'_>,
    service: &ObjectRef,
    endpoints: Vec<Endpoint<'_>>,
    diagnostics: &mut Vec<Diagnostic>,
) -> (Vec<Server>, Option<GroupSelector>) {
    let balance = keys
        .get(&keys::BLUE_GREEN_BALANCE)
        .or_else(|| keys.get(&keys::BLUE_GREEN_DEPLOY));
    let selector = selector(keys, service, diagnostics);
    if balance.is_none() && selector.is_none() {
        return (endpoints.into_iter().map(|e| e.server).collect(), None);
    }
    let mut report = |endpoint: &Endpoint<'_>, why: String| {
        diagnostics.push(Diagnostic {
            object: service.clone(),
            field: format!(
                "endpoints[{}]",
                std::net::SocketAddr::new(endpoint.server.address, endpoint.server.port)
            ),
            message: why,
        });
    };
    let mut labels = Vec::with_capacity(endpoints.len());
    for endpoint in &endpoints {
        let pod_labels = match &endpoint.pod {
            None => {
                report(
                    endpoint,
                    "the endpoint's targetRef names no pod of its namespace: it gets blue-green weight 0 and no group".to_owned(),
                );
                None
            }
            Some(pod) => {
                let pod = ObjectRef {
                    kind: Kind::Pod,
                    namespace: service.namespace.clone(),
                    name: (*pod).into(),
                };
                match lookups.get(pod.clone()) {
                    Some(Object::Pod(found)) => {
                        Some(found.metadata.labels.clone().unwrap_or_default())
                    }
                    _ => {
                        report(
                            endpoint,
                            format!(
                                "{pod} not found: the endpoint gets blue-green weight 0 and no group"
                            ),
                        );
                        None
                    }
                }
            }
        };
        labels.push(pod_labels);
    }
    let weights = balance.map(|terms| {
        let mode = keys.get(&keys::BLUE_GREEN_MODE);
        weights(&terms, &labels, mode)
    });
    let group_label = selector.as_ref().map(|(_, label)| label.clone());
    let servers = endpoints
        .into_iter()
        .enumerate()
        .map(|(position, endpoint)| {
            let mut server = endpoint.server;
            server.weight = weights
                .as_ref()
                .map(|w| ServerWeight::clamped(u64::from(w[position])));
            server.group = group_label.as_ref().and_then(|label| {
                let value = labels[position].as_ref()?.get(label)?;
                Word::parse(value).ok()
            });
            server
        })
        .collect();
    (servers, selector.map(|(selector, _)| selector))
}

/// The header and cookie selectors, when set and naming the same label.
fn selector(
    keys: &Keys<'_>,
    service: &ObjectRef,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<(GroupSelector, String)> {
    let header = keys.get(&keys::BLUE_GREEN_HEADER);
    let cookie = keys.get(&keys::BLUE_GREEN_COOKIE);
    let label = match (&header, &cookie) {
        (None, None) => return None,
        (Some(SelectorPair { label, .. }), None) | (None, Some(SelectorPair { label, .. })) => {
            label.clone()
        }
        (Some(header), Some(cookie)) if header.label == cookie.label => header.label.clone(),
        (Some(header), Some(cookie)) => {
            let (object, field) = keys
                .set_at(keys::BLUE_GREEN_HEADER.name)
                .unwrap_or_else(|| (service.clone(), keys::BLUE_GREEN_HEADER.name.to_owned()));
            diagnostics.push(Diagnostic {
                object,
                field,
                message: format!(
                    "blue-green-header and blue-green-cookie name different labels ('{}' and '{}'): neither is used",
                    header.label, cookie.label
                ),
            });
            return None;
        }
    };
    let selector = GroupSelector {
        header: header.map(|pair| pair.name),
        cookie: cookie.map(|pair| pair.name),
    };
    Some((selector, label))
}

/// Each endpoint's weight: its group's, divided among the group's pods in `deploy`
/// mode; 0 for an endpoint of no group. An endpoint whose pod carries several of the
/// labels counts in each of those groups and takes the last one's weight, as in
/// haproxy-ingress.
fn weights(
    terms: &[GroupWeight],
    labels: &[Option<BTreeMap<String, String>>],
    mode: BlueGreenMode,
) -> Vec<u16> {
    let mut members = vec![0usize; terms.len()];
    let groups: Vec<Option<usize>> = labels
        .iter()
        .map(|pod_labels| {
            let pod_labels = pod_labels.as_ref()?;
            let mut last = None;
            for (index, term) in terms.iter().enumerate() {
                if pod_labels.get(&term.label) == Some(&term.value) {
                    members[index] += 1;
                    last = Some(index);
                }
            }
            last
        })
        .collect();
    let group_weights: Vec<u16> = match mode {
        BlueGreenMode::Pod => terms.iter().map(|t| t.weight).collect(),
        BlueGreenMode::Deploy => rebalance(
            &terms.iter().map(|t| t.weight).collect::<Vec<_>>(),
            &members,
            INITIAL_WEIGHT,
        ),
    };
    groups
        .iter()
        .map(|group| group.map_or(0, |index| group_weights[index]))
        .collect()
}

/// The per-pod weight of each group so that groups get traffic in proportion to their
/// weights whatever their pod counts (`members`), the smallest per-pod weight being
/// `initial` where HAProxy's range of 0 to 256 allows: haproxy-ingress's arithmetic, so
/// the same annotations give the same weights.
fn rebalance(weights: &[u16], members: &[usize], initial: f32) -> Vec<u16> {
    fn gcd(mut a: u64, mut b: u64) -> u64 {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    }
    let lcm = members
        .iter()
        .filter(|&&count| count > 0)
        .fold(0u64, |lcm, &count| {
            let count = count as u64;
            if lcm == 0 {
                count
            } else {
                lcm / gcd(lcm, count) * count
            }
        });
    if lcm == 0 {
        return weights.to_vec();
    }
    // Each group's weight per pod, over a common denominator.
    let per_pod = |index: usize| u64::from(weights[index]) * lcm / members[index] as u64;
    let active: Vec<usize> = (0..weights.len())
        .filter(|&i| members[i] > 0 && weights[i] > 0)
        .collect();
    let divisor = active.iter().fold(0, |g, &i| gcd(g, per_pod(i)));
    if divisor == 0 {
        return weights.to_vec();
    }
    let min = active.iter().map(|&i| per_pod(i)).min().unwrap_or(1);
    let max = active.iter().map(|&i| per_pod(i)).max().unwrap_or(1);
    // f32 as in haproxy-ingress, so that rounding agrees too.
    let factor_min = initial * divisor as f32 / min as f32;
    let overflow = factor_min * max as f32 / (256 * divisor) as f32;
    (0..weights.len())
        .map(|i| {
            if members[i] == 0 {
                return weights[i];
            }
            let weight = factor_min * (u64::from(weights[i]) * lcm) as f32
                / (members[i] as u64 * divisor) as f32;
            let weight = if overflow > 1.0 {
                let scaled = (weight / overflow) as u16;
                if scaled == 0 && weights[i] > 0 {
                    1
                } else {
                    scaled
                }
            } else {
                weight as u16
            };
            weight.min(ServerWeight::MAX)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// haproxy-ingress's own cases (its tests use an initial weight of 100).
    #[test]
    fn deploy_mode_weights_match_haproxy_ingress() {
        let cases: [(&[u16], &[usize], &[u16]); 9] = [
            (&[50, 50], &[1, 1], &[100, 100]),
            (&[50, 25], &[1, 1], &[200, 100]),
            (&[50, 25], &[1, 2], &[256, 64]),
            (&[256, 2], &[1, 1], &[256, 2]),
            (&[60, 3], &[1, 4], &[256, 3]),
            (&[70, 3], &[1, 4], &[256, 2]),
            (&[50, 25, 25], &[1, 2, 1], &[256, 64, 128]),
            (&[50, 0, 25], &[1, 2, 1], &[200, 0, 100]),
            (&[255, 2], &[1, 4], &[256, 1]),
        ];
        for (weights, members, expected) in cases {
            assert_eq!(
                rebalance(weights, members, 100.0),
                expected,
                "{weights:?} {members:?}"
            );
        }
        assert_eq!(rebalance(&[0, 0], &[1, 1], 100.0), [0, 0]);
        assert_eq!(rebalance(&[1, 4], &[1, 1], INITIAL_WEIGHT), [1, 4]);
        assert_eq!(rebalance(&[1, 1], &[1, 3], INITIAL_WEIGHT), [3, 1]);
    }

    #[test]
    fn endpoints_of_no_group_or_no_pod_get_weight_zero() {
        let terms = [
            GroupWeight {
                label: "v".into(),
                value: "1".into(),
                weight: 50,
            },
            GroupWeight {
                label: "v".into(),
                value: "2".into(),
                weight: 25,
            },
        ];
        let pod = |v: &str| Some(BTreeMap::from([("v".to_owned(), v.to_owned())]));
        let labels = [pod("1"), pod("2"), pod("3"), None];
        assert_eq!(weights(&terms, &labels, BlueGreenMode::Pod), [50, 25, 0, 0]);
        assert_eq!(
            weights(&terms, &labels, BlueGreenMode::Deploy),
            [2, 1, 0, 0]
        );
    }
}
