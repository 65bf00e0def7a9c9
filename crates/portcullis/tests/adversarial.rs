//! Invariant I5 in its strong form: every object portcullis accepts renders to a
//! configuration HAProxy accepts. Objects with hostile values in every field that reaches
//! HAProxy are generated, converted and rendered beside a victim tenant, and the real
//! `haproxy -c` is the oracle: the configuration must pass, the victim must be served,
//! and every generated object must be either served or named in a diagnostic.
// The hostile Ingress is one `json!` literal with every key that reaches HAProxy.
#![recursion_limit = "256"]
// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::net::IpAddr;
use std::sync::OnceLock;

use convert::ConvertOptions;
use index::{Index, SourceEvent};
use model::{HostKey, TlsCert};
use portcullis::pipeline::Reconciler;
use proptest::prelude::*;
use serde_json::{Value, json};

fn fallback_certificate() -> &'static TlsCert {
    static CERT: OnceLock<TlsCert> = OnceLock::new();
    CERT.get_or_init(|| {
        let (cert, key) = test_support::self_signed("adversarial", &["fallback.test"]);
        TlsCert {
            pem_bundle: format!("{cert}{key}"),
        }
    })
}

fn options() -> ConvertOptions {
    ConvertOptions {
        ingress_class: "portcullis".into(),
        controller_class: convert::class::CONTROLLER_NAME.into(),
        gateway_controller: convert::gateway::GATEWAY_CONTROLLER.into(),
        watch_ingress_without_class: true,
        global_configmap: Some(("ops".into(), "global".into())),
        tcp_services_configmap: Some(("ops".into(), "tcp".into())),
        default_ssl_certificate: None,
        fallback_certificate: fallback_certificate().clone(),
        bind_address: IpAddr::from([127, 0, 0, 1]),
        http_port: 8080,
        https_port: 8443,
        backend_shards: 2,
        reserved_ports: vec![10254],
        busy_ports: std::collections::BTreeSet::new(),
    }
}

/// The victim tenant, a Gateway every namespace may attach to, and the attacker's
/// Service.
fn base_objects() -> Vec<Value> {
    let service = |namespace: &str| {
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "app", "namespace": namespace},
               "spec": {"ports": [{"name": "http", "port": 80, "targetPort": 8080}]}})
    };
    let slice = |namespace: &str| {
        json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
               "metadata": {"name": "app-1", "namespace": namespace, "labels": {"kubernetes.io/service-name": "app"}},
               "addressType": "IPv4", "ports": [{"name": "http", "port": 8080}],
               "endpoints": [{"addresses": ["127.0.0.1"], "targetRef": {"kind": "Pod", "name": "app-0"}}]})
    };
    // The endpoint's pod, whose label values a blue-green selector renders.
    let pod = |namespace: &str| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "app-0", "namespace": namespace,
               "labels": {"group": "blue", "odd": "a_b.c-d"}}})
    };
    vec![
        service("victim"),
        slice("victim"),
        service("attacker"),
        slice("attacker"),
        pod("attacker"),
        // An htpasswd Secret with every kind of line a userlist must not take as it is.
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "users", "namespace": "attacker"},
               "stringData": {"auth": "ok:$6$salt$hash\nq'uote:$6$a$b\nsp ace:$5$a$b\nplain::pa'ss\nplain2::a\\b\nhash:$6$a'b\napr:$apr1$a$b\n#comment\nnocolon\n:$6$a$b\nu:$6$x$y\nuser listen x\nlf::a\rb\n"}}),
        // The victim was there first: an Ingress's host and path belong to the oldest
        // Ingress that routes them, so a later tenant can never take them over.
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
               "metadata": {"name": "site", "namespace": "victim", "creationTimestamp": "2020-01-01T00:00:00Z"},
               "spec": {"rules": [{"host": "victim.test", "http": {"paths": [
                   {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "app", "port": {"number": 80}}}}]}}]}}),
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass", "metadata": {"name": "portcullis"},
               "spec": {"controllerName": "portcullis.dev/gateway-controller"}}),
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": {"name": "gw", "namespace": "victim"},
               "spec": {"gatewayClassName": "portcullis", "listeners": [
                   {"name": "http", "protocol": "HTTP", "port": 80, "allowedRoutes": {"namespaces": {"from": "All"}}},
                   {"name": "tls", "protocol": "TLS", "port": 443, "tls": {"mode": "Passthrough"},
                    "allowedRoutes": {"namespaces": {"from": "All"}}},
                   {"name": "tcp", "protocol": "TCP", "port": 9300, "allowedRoutes": {"namespaces": {"from": "All"}}},
                   {"name": "term", "protocol": "TLS", "port": 9443, "tls": {"mode": "Terminate", "certificateRefs": [{"name": "missing"}]},
                    "allowedRoutes": {"namespaces": {"from": "All"}}}]}}),
    ]
}

/// Text with what breaks configuration lines, map files and commands.
fn hostile_text() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "-f",
            "-m",
            "-u",
            "-i",
            "--",
            "-",
            "<<",
            "x<<",
            "#",
            "a b",
            "'",
            "\"",
            "\\",
            "\n",
            "\r\n",
            "\0",
            "%[src]",
            "%",
            "}",
            "{",
            ";",
            "a;show info",
            "\u{e9}t\u{e9}",
            "\u{202e}",
            "(",
            "[a-",
            "(a+)+$",
            "(?<n>a)(?<n>b)",
            "a{2,1}",
            "^/api/v[0-9]+$",
            ".*",
            "",
            " ",
            "/ok",
        ])
        .prop_map(str::to_owned),
        "[ -~\n\r\t\u{0}#'\"\\\\<>-]{0,24}",
        // Long enough to split a map line, ending in another tenant's route.
        (16_300usize..16_500).prop_map(|n| format!("/{}\nvictim.test#/admin", "x".repeat(n))),
        (1usize..5).prop_map(|n| format!("/{}", "é".repeat(n * 700))),
    ]
}

/// A path: sometimes plausible, sometimes hostile.
fn hostile_path() -> impl Strategy<Value = String> {
    prop_oneof![
        hostile_text().prop_map(|t| format!("/{t}")),
        hostile_text(),
        "/[a-z0-9._~-]{0,12}",
    ]
}

fn hostile_number() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "25d",
            "24d",
            "2147483648",
            "2147483647ms",
            "500us",
            "0",
            "-1s",
            "1.5s",
            "99999999999999d",
            "5s\nlisten x",
            "1e9",
            "",
            "true",
            "false",
        ])
        .prop_map(str::to_owned),
        (0u64..u64::MAX).prop_map(|n| n.to_string()),
        (0u64..100_000).prop_map(|n| format!("{n}d")),
    ]
}

fn ingress(
    index: usize,
    host: String,
    path: String,
    path_type: &str,
    timeout: String,
    balance: String,
) -> Value {
    let mut ingress = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
           "metadata": {"name": format!("evil{index}"), "namespace": "attacker",
                        "creationTimestamp": "2030-01-01T00:00:00Z", "annotations": {
               "portcullis.dev/timeout-server": timeout, "portcullis.dev/balance-algorithm": balance,
               // The same hostile values in every backend key that reaches a server line.
               "portcullis.dev/secure-backends": "true", "portcullis.dev/secure-sni": balance,
               "portcullis.dev/secure-verify-hostname": balance, "portcullis.dev/health-check-uri": balance,
               "portcullis.dev/backend-protocol": balance, "portcullis.dev/health-check-interval": timeout,
               "portcullis.dev/health-check-port": timeout, "portcullis.dev/maxconn-server": timeout,
               "portcullis.dev/slow-start": timeout, "portcullis.dev/timeout-tunnel": timeout,
               "portcullis.dev/affinity": "cookie", "portcullis.dev/session-cookie-name": balance,
               "portcullis.dev/session-cookie-strategy": balance, "portcullis.dev/session-cookie-keywords": balance,
               "portcullis.dev/session-cookie-domain": balance, "portcullis.dev/session-cookie-dynamic": timeout,
               "portcullis.dev/session-cookie-preserve": timeout, "portcullis.dev/session-cookie-same-site": timeout,
               "portcullis.dev/proxy-protocol": balance,
               // And in the request and TLS keys, which reach rule chains and the
               // certificate list (the host has TLS, with a missing Secret).
               "portcullis.dev/server-alias": balance, "portcullis.dev/tls-alpn": balance,
               "portcullis.dev/ssl-options-host": balance, "portcullis.dev/ssl-ciphers": balance,
               "portcullis.dev/rewrite-target": balance, "portcullis.dev/app-root": balance,
               "portcullis.dev/redirect-to": balance, "portcullis.dev/request-set-headers": balance,
               // Blue-green weights and selectors, and servers found by name.
               "portcullis.dev/blue-green-balance": balance, "portcullis.dev/blue-green-mode": balance,
               "portcullis.dev/blue-green-header": balance, "portcullis.dev/blue-green-cookie": balance,
               "portcullis.dev/use-resolver": balance,
               // Host patterns reach the pattern map and, as rule chains, the frontends.
               "portcullis.dev/server-alias-regex": balance, "portcullis.dev/redirect-from-regex": balance,
               "portcullis.dev/redirect-from": balance, "portcullis.dev/proxy-body-size": timeout,
               "portcullis.dev/http-response-502": balance}},
           "spec": {"tls": [{"hosts": [host], "secretName": "missing"}],
                    "rules": [{"host": host, "http": {"paths": [
               {"path": path, "pathType": path_type, "backend": {"service": {"name": "app", "port": {"number": 80}}}}]}}]}});
    // CORS reaches rule chains, client certificates the frontends and the certificate list.
    let hostile = [
        ("cors-enable", "true".to_owned()),
        ("cors-allow-origin", balance.clone()),
        ("cors-allow-origin-regex", balance.clone()),
        ("cors-allow-methods", balance.clone()),
        ("cors-allow-headers", balance.clone()),
        ("cors-expose-headers", balance.clone()),
        ("cors-max-age", timeout.clone()),
        ("auth-tls-secret", balance.clone()),
        ("auth-tls-verify-client", balance.clone()),
        ("auth-tls-error-page", balance.clone()),
        ("auth-tls-strict", timeout.clone()),
        ("auth-tls-cert-header", timeout.clone()),
    ];
    if let Some(annotations) = ingress["metadata"]["annotations"].as_object_mut() {
        for (key, value) in hostile {
            annotations.insert(format!("portcullis.dev/{key}"), Value::String(value));
        }
    }
    // And in the access keys: address lists (pattern files), the source header, and the
    // limits of the backend section.
    if let Some(annotations) = ingress["metadata"]["annotations"].as_object_mut() {
        for (key, value) in [
            ("allowlist-source-range", &balance),
            ("denylist-source-range", &timeout),
            ("allowlist-source-header", &balance),
            ("limit-rps", &timeout),
            ("limit-connections", &timeout),
            ("limit-whitelist", &balance),
            ("limit-req-status-code", &timeout),
        ] {
            annotations.insert(format!("portcullis.dev/{key}"), json!(value));
        }
    }
    // Every third is a TCP service instead, on a hostile port, with hostile log format
    // and PROXY setting (its TLS hosts chosen by SNI).
    if index % 3 == 2
        && let Some(annotations) = ingress["metadata"]["annotations"].as_object_mut()
    {
        annotations.insert("portcullis.dev/tcp-service-port".to_owned(), json!(timeout));
        annotations.insert(
            "portcullis.dev/tcp-service-log-format".to_owned(),
            json!(balance),
        );
        annotations.insert(
            "portcullis.dev/tcp-service-proxy-protocol".to_owned(),
            json!(timeout),
        );
    }
    // Every other Ingress passes its host through (a passthrough map line and a mode tcp
    // backend), with a hostile plain-HTTP port.
    if index % 2 == 1
        && let Some(annotations) = ingress["metadata"]["annotations"].as_object_mut()
    {
        annotations.insert("portcullis.dev/ssl-passthrough".to_owned(), json!("true"));
        annotations.insert(
            "portcullis.dev/ssl-passthrough-http-port".to_owned(),
            json!(timeout),
        );
    }
    // And in the authentication keys, which reach Lua arguments, a redirect and a
    // userlist built from a hostile htpasswd Secret.
    let auth = json!({"portcullis.dev/auth-secret": "users", "portcullis.dev/auth-realm": balance,
                      "portcullis.dev/auth-url": balance, "portcullis.dev/auth-signin": balance,
                      "portcullis.dev/auth-method": balance, "portcullis.dev/auth-headers-request": balance,
                      "portcullis.dev/auth-headers-succeed": balance, "portcullis.dev/auth-headers-fail": balance,
                      "portcullis.dev/auth-timeout": timeout});
    if let (Some(annotations), Value::Object(auth)) =
        (ingress["metadata"]["annotations"].as_object_mut(), auth)
    {
        annotations.extend(auth);
    }
    ingress
}

fn value_match(name: String, value: String, regex: bool) -> Value {
    json!({"name": name, "value": value, "type": if regex { "RegularExpression" } else { "Exact" }})
}

#[derive(Debug, Clone)]
enum Attack {
    Ingress {
        host: String,
        path: String,
        path_type: &'static str,
        timeout: String,
        balance: String,
    },
    Route {
        path: String,
        path_regex: bool,
        headers: Vec<(String, String, bool)>,
        queries: Vec<(String, String, bool)>,
        set_header: String,
        redirect: String,
        weight: i64,
    },
    Global {
        timeout: String,
        max_connections: String,
        forwardfor: String,
        trusted: String,
        observe: Observe,
    },
}

/// Hostile values of the access log, observer and response keys.
#[derive(Debug, Clone)]
struct Observe {
    log_format: String,
    syslog_endpoint: String,
    syslog_tag: String,
    stats_auth: String,
    error_page: String,
    server_header: String,
    body_size: String,
    port: String,
}

/// Text shaped like a log format, often hostile.
fn hostile_log_format() -> impl Strategy<Value = String> {
    prop_oneof![
        hostile_text(),
        prop::sample::select(vec![
            "json",
            "%ci %ST %{+Q}r",
            "%[src,lower] %[var(txn.host),json]",
            "%[req.hdr(host)]",
            "%[path]",
            "%{+E}[var(txn.a b)]",
            "%[src] %",
            "%{+Q",
            "%ci\n%ST",
            "%ci' global",
            "%[capture.req.uri,field(1)]",
        ])
        .prop_map(str::to_owned),
        (hostile_text(), hostile_text()).prop_map(|(a, b)| format!("%ci {a} %[src] {b}")),
    ]
}

fn observe() -> impl Strategy<Value = Observe> {
    (
        hostile_log_format(),
        prop_oneof![
            hostile_text(),
            Just("127.0.0.1:5140".to_owned()),
            Just("stdout".to_owned())
        ],
        hostile_text(),
        prop_oneof![
            hostile_text(),
            hostile_text().prop_map(|p| format!("admin:{p}"))
        ],
        prop_oneof![
            hostile_text(),
            (hostile_text(), hostile_text()).prop_map(|(h, b)| format!("x-a: {h}\n\n{b}")),
            (hostile_text(), hostile_text()).prop_map(|(r, b)| format!("404 {r}\n\n{b}")),
        ],
        hostile_text(),
        hostile_number(),
        prop_oneof![
            hostile_number(),
            Just("8080".to_owned()),
            Just("10254".to_owned())
        ],
    )
        .prop_map(
            |(
                log_format,
                syslog_endpoint,
                syslog_tag,
                stats_auth,
                error_page,
                server_header,
                body_size,
                port,
            )| {
                Observe {
                    log_format,
                    syslog_endpoint,
                    syslog_tag,
                    stats_auth,
                    error_page,
                    server_header,
                    body_size,
                    port,
                }
            },
        )
}

fn attack() -> impl Strategy<Value = Attack> {
    let pair = || {
        (
            prop_oneof!["[a-z-]{1,8}", hostile_text()],
            hostile_text(),
            any::<bool>(),
        )
    };
    prop_oneof![
        (
            prop_oneof![
                "[a-z]{1,8}\\.test",
                hostile_text(),
                Just("victim.test".to_owned())
            ],
            hostile_path(),
            prop::sample::select(vec!["Exact", "Prefix", "ImplementationSpecific", "Regex"]),
            hostile_number(),
            prop_oneof![
                prop::sample::select(vec![
                    "leastconn",
                    "uri len 5 whole",
                    "hdr(X-A) use_domain_only",
                    "url_param a check_post",
                    "random(3)",
                    "h2-ssl",
                    "/healthz",
                    "api.internal",
                    "rewrite",
                    "prefix",
                    "indirect preserve",
                    "attr SameSite=Lax maxidle 30m domain example.com",
                    "v2-ssl-cn",
                    "*.alias.test",
                    "http/1.1",
                    "ssl-max-ver TLSv1.2",
                    "https://moved.test/x",
                    "X-Env: prod",
                    "group=blue=1,odd=a_b.c-d=300",
                    "X-Server:group",
                    "pod",
                    "kubernetes",
                    "http://127.0.0.1:9/oauth2/auth",
                    "svc://app:80/auth",
                    "https://auth.test/oauth2/start?rd=%[hdr(host)]%[path]",
                    "X-Auth-*,X-User",
                    "head",
                ])
                .prop_map(str::to_owned),
                hostile_text()
            ],
        )
            .prop_map(
                |(host, path, path_type, timeout, balance)| Attack::Ingress {
                    host,
                    path,
                    path_type,
                    timeout,
                    balance
                }
            ),
        (
            hostile_path(),
            any::<bool>(),
            prop::collection::vec(pair(), 0..20),
            prop::collection::vec(pair(), 0..20),
            hostile_text(),
            hostile_path(),
            prop_oneof![
                Just(1i64),
                Just(1_000_000),
                Just(1_000_001),
                Just(i64::from(i32::MAX)),
                Just(-5)
            ],
        )
            .prop_map(
                |(path, path_regex, headers, queries, set_header, redirect, weight)| {
                    Attack::Route {
                        path,
                        path_regex,
                        headers,
                        queries,
                        set_header,
                        redirect,
                        weight,
                    }
                }
            ),
        (
            hostile_number(),
            hostile_number(),
            hostile_text(),
            prop_oneof![
                hostile_text(),
                // Address lists long enough to pass a line's 64 words.
                (20usize..80).prop_map(|n| (0..n)
                    .map(|i| format!("10.{}.{}.0/24", i / 250, i % 250))
                    .collect::<Vec<_>>()
                    .join(",")),
            ],
            observe()
        )
            .prop_map(|(timeout, max_connections, forwardfor, trusted, observe)| {
                Attack::Global {
                    timeout,
                    max_connections,
                    forwardfor,
                    trusted,
                    observe,
                }
            }),
    ]
}

fn manifest(index: usize, attack: &Attack) -> Value {
    match attack {
        Attack::Ingress {
            host,
            path,
            path_type,
            timeout,
            balance,
        } => ingress(
            index,
            host.clone(),
            path.clone(),
            path_type,
            timeout.clone(),
            balance.clone(),
        ),
        Attack::Route {
            path,
            path_regex,
            headers,
            queries,
            set_header,
            redirect,
            weight,
        } => {
            let headers: Vec<Value> = headers
                .iter()
                .map(|(n, v, r)| value_match(n.clone(), v.clone(), *r))
                .collect();
            let queries: Vec<Value> = queries
                .iter()
                .map(|(n, v, r)| value_match(n.clone(), v.clone(), *r))
                .collect();
            let path_type = if *path_regex {
                "RegularExpression"
            } else {
                "PathPrefix"
            };
            // The same values in a GRPCRoute's method match, header match and filters
            // (on a host of its own, so that it is served rather than refused for sharing
            // the HTTPRoute's).
            let method_type = if *path_regex {
                "RegularExpression"
            } else {
                "Exact"
            };
            let grpc = json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GRPCRoute",
                   "metadata": {"name": format!("evil-grpc{index}"), "namespace": "attacker"},
                   "spec": {"parentRefs": [{"name": "gw", "namespace": "victim"}], "hostnames": ["grpc.attacker.test"],
                            "rules": [
                                {"matches": [{"method": {"type": method_type, "service": path, "method": redirect}, "headers": headers}],
                                 "filters": [{"type": "RequestHeaderModifier", "requestHeaderModifier": {"set": [{"name": "x-evil", "value": set_header}]}},
                                             {"type": "ResponseHeaderModifier", "responseHeaderModifier": {"add": [{"name": "x-evil", "value": set_header}]}}],
                                 "backendRefs": [{"name": "app", "port": 80, "weight": weight}]}]}});
            // A TLSRoute with the same hostile text as a hostname, beside the HTTPRoute.
            let tls_route = json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "TLSRoute",
                   "metadata": {"name": format!("evil{index}"), "namespace": "attacker"},
                   "spec": {"parentRefs": [{"name": "gw", "namespace": "victim"}],
                            "hostnames": [set_header, "*.attacker.test", "victim.test"],
                            "rules": [{"backendRefs": [{"name": "app", "port": 80, "weight": weight}]}]}});
            let http = json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
                   "metadata": {"name": format!("evil{index}"), "namespace": "attacker"},
                   "spec": {"parentRefs": [{"name": "gw", "namespace": "victim"}], "hostnames": ["attacker.test"],
                            "rules": [
                                {"matches": [{"path": {"type": path_type, "value": path}, "headers": headers, "queryParams": queries}],
                                 "filters": [{"type": "RequestHeaderModifier", "requestHeaderModifier": {"set": [{"name": "x-evil", "value": set_header}]}}],
                                 "backendRefs": [{"name": "app", "port": 80, "weight": weight}, {"name": "app", "port": 80, "weight": weight}]},
                                {"matches": [{"path": {"type": "Exact", "value": "/redirect"}}],
                                 "filters": [{"type": "RequestRedirect", "requestRedirect": {"path": {"type": "ReplaceFullPath", "replaceFullPath": redirect}}}]}]}});
            // A TCPRoute and a TLSRoute on the Terminate listener with the same weights
            // and hostile names.
            let tcp_route = json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "TCPRoute",
                   "metadata": {"name": format!("evil{index}"), "namespace": "attacker"},
                   "spec": {"parentRefs": [{"name": "gw", "namespace": "victim", "sectionName": "tcp"}],
                            "rules": [{"backendRefs": [{"name": "app", "port": 80, "weight": weight}, {"name": set_header, "port": 80, "weight": weight}]}]}});
            let terminated = json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "TLSRoute",
                   "metadata": {"name": format!("evil-term{index}"), "namespace": "attacker"},
                   "spec": {"parentRefs": [{"name": "gw", "namespace": "victim", "sectionName": "term"}],
                            "hostnames": [set_header, "*.term.test"],
                            "rules": [{"backendRefs": [{"name": "app", "port": 80, "weight": weight}]}]}});
            json!({"apiVersion": "v1", "kind": "List", "items": [http, grpc, tls_route, tcp_route, terminated]})
        }
        Attack::Global {
            timeout,
            max_connections,
            forwardfor,
            trusted,
            observe,
        } => {
            // The TCP services' ConfigMap, each field hostile in turn.
            let tcp = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tcp", "namespace": "ops"},
                   "data": {max_connections.clone(): format!("attacker/app:80:{forwardfor}"),
                            "9201": format!("attacker/app:{timeout}::PROXY"),
                            "9202": format!("attacker/app:80:PROXY:PROXY-V1:{forwardfor}:{timeout}"),
                            "9203": format!("attacker/{forwardfor}:80:::attacker/users:-:attacker/{forwardfor}"),
                            "9204": format!("{trusted}")}});
            let global = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "global", "namespace": "ops"},
                   "data": {"timeout-client": timeout, "max-connections": max_connections, "timeout-connect": timeout,
                            "forwardfor": forwardfor, "forwardfor-trusted-cidrs": trusted, "real-ip-hdr": forwardfor,
                            "timeout-stop": timeout, "timeout-client-fin": timeout,
                            "http-log-format": observe.log_format, "https-log-format": observe.log_format, "syslog-endpoint": observe.syslog_endpoint,
                            "syslog-tag": observe.syslog_tag, "syslog-length": observe.body_size,
                            "stats-port": observe.port, "prometheus-port": observe.port, "stats-auth": observe.stats_auth,
                            "http-response-404": observe.error_page, "http-response-503": observe.error_page,
                            "http-response-413": observe.error_page,
                            "server-header": observe.server_header, "proxy-body-size": observe.body_size,
                            "use-proxy-protocol": "true", "use-proxy-protocol-trusted-cidrs": trusted, "cookie-key": forwardfor,
                            "dns-resolvers": format!("kubernetes=10.96.0.10,[fd00::1]:5353\n{forwardfor}=127.0.0.1:53"),
                            "dns-cluster-domain": forwardfor, "dns-hold-valid": timeout, "dns-hold-obsolete": timeout,
                            "dns-timeout-retry": timeout, "dns-accepted-payload-size": max_connections,
                            "tcp-log-format": observe.log_format}});
            json!({"apiVersion": "v1", "kind": "List", "items": [global, tcp]})
        }
    }
}

fn haproxy_binary() -> &'static str {
    ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"]
        .into_iter()
        .find(|path| std::path::Path::new(path).exists())
        .expect("HAProxy is installed (scripts/test.sh installs it)")
}

fn check(attacks: &[Attack]) {
    let mut index = Index::new();
    let mut attackers = BTreeSet::new();
    for (position, object) in base_objects()
        .iter()
        .chain(
            attacks
                .iter()
                .enumerate()
                .map(|(i, a)| manifest(i, a))
                .collect::<Vec<_>>()
                .iter(),
        )
        .enumerate()
    {
        let decoded = resources::decode_manifest(&object.to_string(), true);
        for decoded_object in decoded.objects {
            if position >= base_objects().len()
                && decoded_object.object_ref().kind != resources::Kind::ConfigMap
            {
                attackers.insert(decoded_object.object_ref());
            }
            index.handle(SourceEvent::Apply(decoded_object));
        }
    }
    let reconciled = Reconciler::new(options())
        .reconcile(&index.snapshot(), &std::collections::BTreeMap::new())
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (path, file) in &reconciled.rendered.files {
        let target = dir.path().join(path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(&target, file.text().as_bytes()).unwrap();
    }
    let output = std::process::Command::new(haproxy_binary())
        .arg("-c")
        .arg("-f")
        .arg(dir.path().join("haproxy.cfg"))
        .arg("-f")
        .arg(dir.path().join("backends"))
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let model = &reconciled.conversion.model;
    assert!(
        output.status.success(),
        "haproxy -c refused what portcullis accepted:\n{}\nhaproxy.cfg:\n{}\ndiagnostics: {:#?}",
        String::from_utf8_lossy(&output.stderr),
        reconciled
            .rendered
            .files
            .get("haproxy.cfg")
            .map(|f| f.text())
            .unwrap_or_default(),
        reconciled.conversion.diagnostics
    );
    assert!(
        model
            .hosts
            .get(&HostKey::Exact("victim.test".into()))
            .is_some_and(|host| host
                .routes
                .values()
                .any(|r| &*r.origin.namespace == "victim")),
        "the victim is not served as written"
    );
    // Served on an HTTP host, as TLS passthrough, or on a TCP port (a TCPRoute, or a
    // TLSRoute on a Terminate listener); keyed by kind too, as one attack's routes of
    // several kinds share a name. An object counts as a whole: a diagnostic about any
    // of its claims reports it.
    let http = model.hosts.values().flat_map(|host| host.routes.values());
    let passthrough = model.passthrough.values().map(|route| &route.origin);
    let tcp = model
        .tcp_services
        .values()
        .flat_map(|service| service.routes.values().map(|route| &route.origin));
    let served: BTreeSet<(&str, String, String)> = http
        .map(|route| &route.origin)
        .chain(passthrough)
        .chain(tcp)
        .map(|origin| {
            let (namespace, name) = (origin.namespace.to_string(), origin.name.to_string());
            (origin.kind, namespace, name)
        })
        .collect();
    let reported: BTreeSet<(&str, String, String)> = reconciled
        .conversion
        .diagnostics
        .iter()
        .map(|d| {
            let object = &d.object;
            let (namespace, name) = (object.namespace.to_string(), object.name.to_string());
            (object.kind.name(), namespace, name)
        })
        .collect();
    for attacker in attackers {
        let key = (
            attacker.kind.name(),
            attacker.namespace.to_string(),
            attacker.name.to_string(),
        );
        assert!(
            served.contains(&key) || reported.contains(&key),
            "{attacker} is neither served nor reported"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, max_shrink_iters: 200, ..ProptestConfig::default() })]

    #[test]
    fn every_accepted_object_renders_to_a_configuration_haproxy_accepts(attacks in prop::collection::vec(attack(), 1..5)) {
        check(&attacks);
    }
}

/// The cases the containment issue names, each on its own.
#[test]
fn the_named_attacks_are_contained() {
    let route = |headers: Vec<(String, String, bool)>, path: &str, regex: bool| Attack::Route {
        path: path.into(),
        path_regex: regex,
        headers,
        queries: Vec::new(),
        set_header: "ok".into(),
        redirect: "/new".into(),
        weight: 1,
    };
    let header = |value: &str| ("x-flag".to_owned(), value.to_owned(), false);
    for attack in [
        Attack::Ingress {
            host: "attacker.test".into(),
            path: format!("/{}victim.test#/admin", "x".repeat(16_383)),
            path_type: "ImplementationSpecific",
            timeout: "5s".into(),
            balance: "roundrobin".into(),
        },
        Attack::Ingress {
            host: "attacker.test".into(),
            path: "/".into(),
            path_type: "Prefix",
            timeout: "25d".into(),
            balance: "roundrobin".into(),
        },
        route(vec![header("-f")], "/", false),
        route(vec![header("-m")], "/", false),
        route(vec![header("-u")], "/", false),
        route(vec![("x".into(), "(".into(), true)], "/", false),
        route(Vec::new(), "([", true),
        route(
            (0..16)
                .map(|i| (format!("h{i}"), "v".into(), false))
                .collect(),
            "/",
            false,
        ),
        route(
            (0..17)
                .map(|i| (format!("h{i}"), "v".into(), false))
                .collect(),
            "/",
            false,
        ),
        Attack::Ingress {
            host: "attacker.test".into(),
            path: "/x<<".into(),
            path_type: "Exact",
            timeout: "5s".into(),
            balance: "roundrobin".into(),
        },
    ] {
        check(&[attack]);
    }
}
