//! Cutting a watched object's lists to their length before it is stored.
//!
//! serde builds a list of unknown length by pushing, and JSON gives no length, so a list
//! decoded from the API server keeps the room it grew into (four elements for one) for as
//! long as its object is stored. A manifest's lists decode with their length known, and
//! fitting them does nothing.

use crate::gateway::{GrpcRoute, HttpRoute, TlsRoute};
use crate::{L4RouteSpec, L4RouteStatus, TcpRoute, UdpRoute};

/// Cuts a list to its length.
pub(crate) fn fit_list<T>(list: &mut Option<Vec<T>>) {
    if let Some(list) = list {
        list.shrink_to_fit();
    }
}

/// A watched object whose lists can be cut to their length before it is stored.
pub trait FitToLength {
    /// Cuts the lists an object of the kind usually holds to their length.
    fn fit_to_length(&mut self);
}

/// Cuts a route status's parents, and each parent's conditions, to their length. A macro:
/// every route kind's status has its own generated parent type, with the same fields.
macro_rules! fit_route_status {
    ($status:expr) => {
        if let Some(status) = $status {
            for parent in &mut status.parents {
                parent.conditions.shrink_to_fit();
            }
            status.parents.shrink_to_fit();
        }
    };
}

/// [`FitToLength`] for an HTTPRoute or a GRPCRoute: generated types with the same shape,
/// whose matches may hold more lists (`$match_list`).
macro_rules! fit_rule_route {
    ($route:ty $(, $match_list:ident)*) => {
        impl FitToLength for $route {
            fn fit_to_length(&mut self) {
                let spec = &mut self.spec;
                fit_list(&mut spec.parent_refs);
                fit_list(&mut spec.hostnames);
                for rule in spec.rules.iter_mut().flatten() {
                    for matched in rule.matches.iter_mut().flatten() {
                        fit_list(&mut matched.headers);
                        $(fit_list(&mut matched.$match_list);)*
                    }
                    for backend in rule.backend_refs.iter_mut().flatten() {
                        fit_list(&mut backend.filters);
                    }
                    fit_list(&mut rule.matches);
                    fit_list(&mut rule.backend_refs);
                    fit_list(&mut rule.filters);
                }
                fit_list(&mut spec.rules);
                fit_route_status!(&mut self.status);
            }
        }
    };
}

fit_rule_route!(HttpRoute, query_params);
fit_rule_route!(GrpcRoute);

impl FitToLength for TlsRoute {
    fn fit_to_length(&mut self) {
        let spec = &mut self.spec;
        fit_list(&mut spec.parent_refs);
        spec.hostnames.shrink_to_fit();
        for rule in &mut spec.rules {
            rule.backend_refs.shrink_to_fit();
        }
        spec.rules.shrink_to_fit();
        fit_route_status!(&mut self.status);
    }
}

/// The lists of a TCPRoute's or a UDPRoute's spec and status.
fn fit_l4_route(spec: &mut L4RouteSpec, status: Option<&mut L4RouteStatus>) {
    fit_list(&mut spec.parent_refs);
    for rule in &mut spec.rules {
        rule.backend_refs.shrink_to_fit();
    }
    spec.rules.shrink_to_fit();
    fit_route_status!(status);
}

impl FitToLength for TcpRoute {
    fn fit_to_length(&mut self) {
        fit_l4_route(&mut self.spec, self.status.as_mut());
    }
}

impl FitToLength for UdpRoute {
    fn fit_to_length(&mut self) {
        fit_l4_route(&mut self.spec, self.status.as_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every list a route usually holds, one element each, as the API server lists it.
    const HTTP_ROUTE: &str = r#"{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
      "metadata": {"name": "web", "namespace": "shop"},
      "spec": {"parentRefs": [{"name": "gw"}], "hostnames": ["web.example"],
        "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": "/"},
            "headers": [{"name": "x-canary", "value": "yes"}], "queryParams": [{"name": "a", "value": "b"}]}],
          "filters": [{"type": "RequestHeaderModifier", "requestHeaderModifier": {"set": [{"name": "x", "value": "y"}]}}],
          "backendRefs": [{"name": "web", "port": 80,
            "filters": [{"type": "RequestHeaderModifier", "requestHeaderModifier": {"remove": ["z"]}}]}]}]},
      "status": {"parents": [{"parentRef": {"name": "gw"}, "controllerName": "example.com/c",
        "conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted", "message": "",
          "lastTransitionTime": "2026-01-01T00:00:00Z"}]}]}}"#;

    /// Decodes an HTTPRoute or a GRPCRoute, fits it, and checks the lists both kinds
    /// hold; returns the fitted route for the kind's own lists.
    macro_rules! fitted_rule_route {
        ($route:ty, $text:expr) => {{
            let mut route: $route = serde_json::from_str($text).expect("decodes");
            // A clone's lists are allocated at their length: only the decoded value shows
            // what serde left.
            let expected = route.clone();
            assert!(route.spec.rules.as_ref().map_or(0, Vec::capacity) > 1);
            route.fit_to_length();
            assert_eq!(route, expected);
            let spec = &route.spec;
            assert_eq!(spec.parent_refs.as_ref().map(Vec::capacity), Some(1));
            assert_eq!(spec.hostnames.as_ref().map(Vec::capacity), Some(1));
            let rules = spec.rules.as_ref().expect("rules");
            assert_eq!(rules.capacity(), 1);
            let matches = rules[0].matches.as_ref().expect("matches");
            assert_eq!(matches.capacity(), 1);
            assert_eq!(matches[0].headers.as_ref().map(Vec::capacity), Some(1));
            assert_eq!(rules[0].filters.as_ref().map(Vec::capacity), Some(1));
            let backends = rules[0].backend_refs.as_ref().expect("backends");
            assert_eq!(backends.capacity(), 1);
            assert_eq!(backends[0].filters.as_ref().map(Vec::capacity), Some(1));
            let status = route.status.as_ref().expect("status");
            assert_eq!(status.parents.capacity(), 1);
            assert_eq!(status.parents[0].conditions.capacity(), 1);
            route
        }};
    }

    #[test]
    fn a_watched_http_route_is_stored_without_spare_room() {
        let route = fitted_rule_route!(HttpRoute, HTTP_ROUTE);
        let rules = route.spec.rules.expect("rules");
        let matches = rules[0].matches.as_ref().expect("matches");
        assert_eq!(matches[0].query_params.as_ref().map(Vec::capacity), Some(1));
    }

    #[test]
    fn a_watched_grpc_route_is_stored_without_spare_room() {
        let text = HTTP_ROUTE
            .replace("HTTPRoute", "GRPCRoute")
            .replace(
                r#""path": {"type": "PathPrefix", "value": "/"},"#,
                r#""method": {"service": "shop.Cart"},"#,
            )
            .replace(r#", "queryParams": [{"name": "a", "value": "b"}]"#, "");
        // Its matches hold no query parameters: what both kinds hold is all there is.
        let _fitted = fitted_rule_route!(GrpcRoute, &text);
    }

    #[test]
    fn a_watched_tls_route_and_tcp_route_are_stored_without_spare_room() {
        let spec = r#""spec": {"parentRefs": [{"name": "gw"}], "hostnames": ["db.example"],
          "rules": [{"backendRefs": [{"name": "db", "port": 5432}]}]},
          "status": {"parents": [{"parentRef": {"name": "gw"}, "controllerName": "example.com/c",
            "conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted", "message": "",
              "lastTransitionTime": "2026-01-01T00:00:00Z"}]}]}"#;
        let text = |kind: &str| {
            format!(
                r#"{{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "{kind}", "metadata": {{"name": "db", "namespace": "shop"}}, {spec}}}"#
            )
        };
        let mut tls: TlsRoute = serde_json::from_str(&text("TLSRoute")).expect("decodes");
        let expected = tls.clone();
        assert!(tls.spec.rules.capacity() > 1);
        tls.fit_to_length();
        assert_eq!(tls, expected);
        assert_eq!(tls.spec.parent_refs.as_ref().map(Vec::capacity), Some(1));
        assert_eq!(tls.spec.hostnames.capacity(), 1);
        assert_eq!(tls.spec.rules.capacity(), 1);
        assert_eq!(tls.spec.rules[0].backend_refs.capacity(), 1);
        let parents = &tls.status.as_ref().expect("status").parents;
        assert_eq!(
            (parents.capacity(), parents[0].conditions.capacity()),
            (1, 1)
        );
        let mut tcp: TcpRoute = serde_json::from_str(&text("TCPRoute")).expect("decodes");
        let expected = tcp.clone();
        assert!(tcp.spec.rules.capacity() > 1);
        tcp.fit_to_length();
        assert_eq!(tcp, expected);
        assert_eq!(tcp.spec.parent_refs.as_ref().map(Vec::capacity), Some(1));
        assert_eq!(tcp.spec.rules.capacity(), 1);
        assert_eq!(tcp.spec.rules[0].backend_refs.capacity(), 1);
        let parents = &tcp.status.as_ref().expect("status").parents;
        assert_eq!(
            (parents.capacity(), parents[0].conditions.capacity()),
            (1, 1)
        );
    }
}
