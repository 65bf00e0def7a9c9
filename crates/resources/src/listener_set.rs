//! A ListenerSet's listeners as Gateway listeners: the two generated types have the same
//! fields (the specification's `ListenerEntry` is a copy of `Listener`), so everything
//! that serves a Gateway listener serves a ListenerSet's through this one mapping.

use crate::gateway::{
    GatewayListeners, GatewayListenersAllowedRoutes, GatewayListenersAllowedRoutesKinds,
    GatewayListenersAllowedRoutesNamespaces, GatewayListenersAllowedRoutesNamespacesFrom,
    GatewayListenersAllowedRoutesNamespacesSelector,
    GatewayListenersAllowedRoutesNamespacesSelectorMatchExpressions, GatewayListenersTls,
    GatewayListenersTlsCertificateRefs, GatewayListenersTlsMode, ListenerSetListeners,
    ListenerSetListenersAllowedRoutesNamespacesFrom, ListenerSetListenersTlsMode,
};

/// A ListenerSet's listener, field for field, as a Gateway's.
pub fn as_gateway_listener(listener: &ListenerSetListeners) -> GatewayListeners {
    GatewayListeners {
        allowed_routes: listener.allowed_routes.as_ref().map(|allowed| {
            GatewayListenersAllowedRoutes {
                kinds: allowed.kinds.as_ref().map(|kinds| {
                    kinds
                        .iter()
                        .map(|kind| GatewayListenersAllowedRoutesKinds {
                            group: kind.group.clone(),
                            kind: kind.kind.clone(),
                        })
                        .collect()
                }),
                namespaces: allowed.namespaces.as_ref().map(|namespaces| {
                    GatewayListenersAllowedRoutesNamespaces {
                        from: namespaces.from.as_ref().map(|from| match from {
                            ListenerSetListenersAllowedRoutesNamespacesFrom::All => {
                                GatewayListenersAllowedRoutesNamespacesFrom::All
                            }
                            ListenerSetListenersAllowedRoutesNamespacesFrom::Selector => {
                                GatewayListenersAllowedRoutesNamespacesFrom::Selector
                            }
                            ListenerSetListenersAllowedRoutesNamespacesFrom::Same => {
                                GatewayListenersAllowedRoutesNamespacesFrom::Same
                            }
                        }),
                        selector: namespaces.selector.as_ref().map(|selector| {
                            GatewayListenersAllowedRoutesNamespacesSelector {
                                match_expressions: selector.match_expressions.as_ref().map(
                                    |expressions| {
                                        expressions
                                            .iter()
                                            .map(|e| {
                                                GatewayListenersAllowedRoutesNamespacesSelectorMatchExpressions {
                                                    key: e.key.clone(),
                                                    operator: e.operator.clone(),
                                                    values: e.values.clone(),
                                                }
                                            })
                                            .collect()
                                    },
                                ),
                                match_labels: selector.match_labels.clone(),
                            }
                        }),
                    }
                }),
            }
        }),
        hostname: listener.hostname.clone(),
        name: listener.name.clone(),
        port: listener.port,
        protocol: listener.protocol.clone(),
        tls: listener.tls.as_ref().map(|tls| GatewayListenersTls {
            certificate_refs: tls.certificate_refs.as_ref().map(|refs| {
                refs.iter()
                    .map(|reference| GatewayListenersTlsCertificateRefs {
                        group: reference.group.clone(),
                        kind: reference.kind.clone(),
                        name: reference.name.clone(),
                        namespace: reference.namespace.clone(),
                    })
                    .collect()
            }),
            mode: tls.mode.as_ref().map(|mode| match mode {
                ListenerSetListenersTlsMode::Terminate => GatewayListenersTlsMode::Terminate,
                ListenerSetListenersTlsMode::Passthrough => GatewayListenersTlsMode::Passthrough,
            }),
            options: tls.options.clone(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_of_a_listener_set_listener_reaches_the_gateway_listener() {
        // Both types read the same JSON: the mapping must give what reading it as a
        // Gateway listener gives, or a field was dropped.
        let json = serde_json::json!({
            "name": "https",
            "hostname": "*.example.com",
            "port": 8443,
            "protocol": "HTTPS",
            "tls": {
                "mode": "Terminate",
                "certificateRefs": [{"group": "", "kind": "Secret", "name": "cert", "namespace": "certs"}],
                "options": {"example.com/option": "on"}
            },
            "allowedRoutes": {
                "kinds": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute"}],
                "namespaces": {
                    "from": "Selector",
                    "selector": {
                        "matchLabels": {"team": "web"},
                        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]
                    }
                }
            }
        });
        let from_set: ListenerSetListeners = serde_json::from_value(json.clone()).unwrap();
        let expected: GatewayListeners = serde_json::from_value(json).unwrap();
        assert_eq!(as_gateway_listener(&from_set), expected);
        for (from, mode) in [("All", "Passthrough"), ("Same", "Terminate")] {
            let json = serde_json::json!({
                "name": "tls", "port": 443, "protocol": "TLS",
                "tls": {"mode": mode},
                "allowedRoutes": {"namespaces": {"from": from}}
            });
            let from_set: ListenerSetListeners = serde_json::from_value(json.clone()).unwrap();
            let expected: GatewayListeners = serde_json::from_value(json).unwrap();
            assert_eq!(as_gateway_listener(&from_set), expected);
        }
    }
}
