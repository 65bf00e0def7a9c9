//! Keys haproxy-ingress or ingress-nginx users set that portcullis does not implement:
//! named and explained when set, rather than reported as unknown or silently ignored.

/// A key, or a family of keys by prefix, and why it is not supported.
#[derive(Debug, Clone, Copy)]
pub struct Unsupported {
    /// The key's name, or the family's prefix (ending in `-`).
    pub name: &'static str,
    /// Whether `name` is a prefix.
    pub prefix: bool,
    /// Why, and what happens instead.
    pub why: &'static str,
}

const NO_WAF: &str = "portcullis has no web application firewall (no ModSecurity or Coraza agent over SPOE): requests are not inspected, and the key is ignored";

/// Every unsupported key or family.
pub static UNSUPPORTED_KEYS: &[Unsupported] = &[
    Unsupported {
        name: "waf",
        prefix: false,
        why: NO_WAF,
    },
    Unsupported {
        name: "waf-mode",
        prefix: false,
        why: NO_WAF,
    },
    Unsupported {
        name: "modsecurity-",
        prefix: true,
        why: NO_WAF,
    },
    Unsupported {
        name: "enable-modsecurity",
        prefix: false,
        why: NO_WAF,
    },
    Unsupported {
        name: "enable-owasp-core-rules",
        prefix: false,
        why: NO_WAF,
    },
    Unsupported {
        name: "config-",
        prefix: true,
        why: "raw HAProxy configuration snippets (config-backend, config-frontend, config-defaults, config-global, ...) are not taken: a snippet could reach every tenant's traffic and files, and no rendered file could be checked for it; ask for the setting as a key of its own",
    },
    Unsupported {
        name: "session-cookie-shared",
        prefix: false,
        why: "one cookie naming every domain of a backend is refused by today's browsers (haproxy-ingress deprecates it); use session-cookie-domain",
    },
    Unsupported {
        name: "cert-signer",
        prefix: false,
        why: "portcullis issues no ACME certificates; cert-manager (or any issuer) writing the Ingress's TLS Secret is read as usual, and until it exists the host is served with the default certificate",
    },
    Unsupported {
        name: "ssl-fingerprint-lower",
        prefix: false,
        why: "the client certificate's fingerprint goes to the backend as `X-SSL-Client-SHA1` in uppercase hex, always; the key is ignored",
    },
    Unsupported {
        name: "ssl-fingerprint-sha2-bits",
        prefix: false,
        why: "only the SHA-1 fingerprint (`X-SSL-Client-SHA1`) is sent; the key is ignored",
    },
    Unsupported {
        name: "backend-server-naming",
        prefix: false,
        why: "servers are named by their endpoint (`<address>_<port>`), which is what the runtime API, the logs and the metrics show; the key is ignored",
    },
    Unsupported {
        name: "dynamic-scaling",
        prefix: false,
        why: "servers are added and deleted at run time as endpoints change (HAProxy's `add server` and `del server`), so there are no empty slots to size; the key is ignored",
    },
    Unsupported {
        name: "slots-min-free",
        prefix: false,
        why: "servers are added and deleted at run time as endpoints change, so there are no empty slots to keep; the key is ignored",
    },
    Unsupported {
        name: "backend-server-slots-increment",
        prefix: false,
        why: "servers are added and deleted at run time as endpoints change, so there are no empty slots to add; the key is ignored",
    },
    Unsupported {
        name: "http-frontend",
        prefix: false,
        why: "every Ingress is served by the one HTTP and one HTTPS frontend (and the port of `fronting-proxy-port`); the key is ignored",
    },
    Unsupported {
        name: "auth-external-placement",
        prefix: false,
        why: "the external authentication of `auth-url` is asked before the request is routed to its backend, always; the key is ignored",
    },
    Unsupported {
        name: "agent-check-",
        prefix: true,
        why: "HAProxy agent checks are not configured; a server's health is checked by the `health-check-*` keys",
    },
    Unsupported {
        name: "initial-weight",
        prefix: false,
        why: "a server's weight is HAProxy's default, or what blue-green deployment gives it; the key is ignored",
    },
    Unsupported {
        name: "assign-backend-server-id",
        prefix: false,
        why: "the servers of a hash-based (or `balance first`) backend get ids from their names, the same through reloads and in every build, so that each client keeps its server; other backends' servers get HAProxy's own; the key is ignored",
    },
    Unsupported {
        name: "service-upstream",
        prefix: false,
        why: "a Service's endpoints are always its servers; its cluster IP as the one server is not offered, and the key is ignored",
    },
    Unsupported {
        name: "ssl-always-add-https",
        prefix: false,
        why: "every host is served on the HTTPS port too, with its certificate or the default one, whether or not an Ingress lists it under `tls` (haproxy-ingress's `true`); the key is ignored",
    },
    Unsupported {
        name: "ssl-always-follow-redirect",
        prefix: false,
        why: "`ssl-redirect` redirects the hosts an Ingress lists under `tls` only: a host without TLS is served over plain HTTP and never redirected; the key is ignored",
    },
    Unsupported {
        name: "ssl-ciphers-backend",
        prefix: false,
        why: "connections to TLS backends use HAProxy's default ciphers; the key is ignored",
    },
    Unsupported {
        name: "ssl-cipher-suites-backend",
        prefix: false,
        why: "connections to TLS backends use HAProxy's default TLS 1.3 cipher suites; the key is ignored",
    },
    Unsupported {
        name: "ssl-options-backend",
        prefix: false,
        why: "connections to TLS backends use HAProxy's default TLS options; the key is ignored",
    },
    Unsupported {
        name: "var-namespace",
        prefix: false,
        why: "the JSON access log (`syslog-format`) names each request's backend, which holds its namespace; the key is ignored",
    },
    Unsupported {
        name: "source-address-intf",
        prefix: false,
        why: "outgoing connections take the source address the operating system chooses; the key is ignored",
    },
    Unsupported {
        name: "fcgi-app",
        prefix: false,
        why: "backends are spoken to in HTTP/1.1 or HTTP/2 only (see `backend-protocol`); FastCGI is not offered, and the key is ignored",
    },
    Unsupported {
        name: "acme-shared",
        prefix: false,
        why: "portcullis answers no ACME challenge itself: requests for `/.well-known/acme-challenge/` are routed as any other path (to cert-manager's solver, say) and spared the HTTPS redirect by `no-tls-redirect-locations`; the key is ignored",
    },
    Unsupported {
        name: "acme-",
        prefix: true,
        why: "portcullis issues no ACME certificates; cert-manager (or any issuer) writing the Ingress's TLS Secret is read as usual, and until it exists the host is served with the default certificate; the key is ignored",
    },
    Unsupported {
        name: "allow-local-bind",
        prefix: false,
        why: "bind addresses are never taken from annotations: every frontend listens where `--bind-address`, `--http-port`, `--https-port` and `fronting-proxy-port` say; the key is ignored",
    },
    Unsupported {
        name: "auth-log-format",
        prefix: false,
        why: "`auth-url` requests are made by HAProxy's own HTTP client from a Lua action, with no authentication frontend of their own to give a log format; the key is ignored",
    },
    Unsupported {
        name: "auth-proxy",
        prefix: false,
        why: "`auth-url` requests are made by HAProxy's own HTTP client from a Lua action, without a helper frontend or a range of local ports; the key is ignored",
    },
    Unsupported {
        name: "auth-tls-default-secret",
        prefix: false,
        why: "client certificates are asked for by SNI name only, each host against its own `auth-tls-secret`: a connection for a name no such host has is asked for none, and its requests for such a host are answered 421; the key is ignored",
    },
    Unsupported {
        name: "bind-http",
        prefix: false,
        why: "the HTTP frontend listens on `--bind-address` and `--http-port`; bind options are not taken from the ConfigMap, and the key is ignored",
    },
    Unsupported {
        name: "bind-https",
        prefix: false,
        why: "the HTTPS frontend listens on `--bind-address` and `--https-port`; bind options are not taken from the ConfigMap, and the key is ignored",
    },
    Unsupported {
        name: "bind-fronting-proxy",
        prefix: false,
        why: "the port of `fronting-proxy-port` listens on `--bind-address`; bind options are not taken from the ConfigMap, and the key is ignored",
    },
    Unsupported {
        name: "bind-http-passthrough",
        prefix: false,
        why: "the port of `fronting-proxy-port` listens on `--bind-address`; bind options are not taken from the ConfigMap, and the key is ignored",
    },
    Unsupported {
        name: "bind-ip-addr-",
        prefix: true,
        why: "every listener (HTTP, HTTPS, TCP services, the stats page, the exporter, the health check) binds the one `--bind-address`; the key is ignored, set `--bind-address` instead",
    },
    Unsupported {
        name: "cpu-map",
        prefix: false,
        why: "no `cpu-map` is written: HAProxy's threads run on whichever CPUs the process may use (see `nbthread`); the key is ignored",
    },
    Unsupported {
        name: "use-cpu-map",
        prefix: false,
        why: "no `cpu-map` is written: HAProxy's threads run on whichever CPUs the process may use (see `nbthread`); the key is ignored",
    },
    Unsupported {
        name: "create-default-frontends",
        prefix: false,
        why: "the HTTP and HTTPS frontends always listen, whether or not an Ingress or route uses them; the key is ignored",
    },
    Unsupported {
        name: "cross-namespace-secrets-ca",
        prefix: false,
        why: "`auth-tls-secret` and `secure-verify-ca-secret` read only Secrets of the Ingress's or the backend's own namespace, so that one tenant's annotation cannot use another's CA; a Secret of another namespace is reported and treated as an unusable one (the host answers 496, the backend gets no servers); the key is ignored",
    },
    Unsupported {
        name: "cross-namespace-secrets-crt",
        prefix: false,
        why: "`secure-crt-secret` reads only Secrets of the backend's namespace, and an Ingress's `spec.tls` those of its own; a Gateway's certificate in another namespace needs a ReferenceGrant; the key is ignored",
    },
    Unsupported {
        name: "cross-namespace-secrets-passwd",
        prefix: false,
        why: "`auth-secret` reads only Secrets of the Ingress's own namespace; one of another namespace is reported and the path answers 403 to every request; the key is ignored",
    },
    Unsupported {
        name: "cross-namespace-services",
        prefix: false,
        why: "an `auth-url` `svc://` reference names a Service of the Ingress's own namespace only (`svc://service:port/path`: no namespace can be written; another form is reported and the path answers 403); an `http://` URL reaches any address; the key is ignored",
    },
    Unsupported {
        name: "drain-support",
        prefix: false,
        why: "an endpoint that stops being ready or terminates takes no new request, not even one whose `affinity` cookie names it, and its server is removed once the requests it has are done; keeping terminating endpoints for the clients their cookies name is not offered, and the key is ignored",
    },
    Unsupported {
        name: "drain-support-redispatch",
        prefix: false,
        why: "every backend has `option redispatch`: a request whose server cannot be connected to is retried on another one, cookie persistence or not; the key is ignored",
    },
    Unsupported {
        name: "external-has-lua",
        prefix: false,
        why: "portcullis runs its own HAProxy, and its Lua actions (`auth-url`, `oauth`) need nothing beyond HAProxy's own Lua; the key is ignored",
    },
    Unsupported {
        name: "fcgi-enabled-apps",
        prefix: false,
        why: "backends are spoken to in HTTP/1.1 or HTTP/2 only (see `backend-protocol`); FastCGI is not offered, and the key is ignored",
    },
    Unsupported {
        name: "username",
        prefix: false,
        why: "HAProxy runs as a child of the controller, as the controller's own user; no `user` or `group` line is written, and the key is ignored",
    },
    Unsupported {
        name: "groupname",
        prefix: false,
        why: "HAProxy runs as a child of the controller, as the controller's own user; no `user` or `group` line is written, and the key is ignored",
    },
    Unsupported {
        name: "use-haproxy-user",
        prefix: false,
        why: "HAProxy runs as a child of the controller, as the controller's own user; no `user` or `group` line is written, and the key is ignored",
    },
    Unsupported {
        name: "use-chroot",
        prefix: false,
        why: "HAProxy runs as a child of the controller and reads files of its state directory after it starts; no `chroot` line is written, and the key is ignored",
    },
    Unsupported {
        name: "http-frontends",
        prefix: false,
        why: "every Ingress is served by the one HTTP and one HTTPS frontend (`--http-port`, `--https-port`, and the port of `fronting-proxy-port`); the key is ignored",
    },
    Unsupported {
        name: "http-port",
        prefix: false,
        why: "the HTTP port is a command-line flag; the key is ignored, set `--http-port` instead",
    },
    Unsupported {
        name: "https-port",
        prefix: false,
        why: "the HTTPS port is a command-line flag; the key is ignored, set `--https-port` instead",
    },
    Unsupported {
        name: "http-response-prometheus-root",
        prefix: false,
        why: "the exporter answers every path but `/metrics` with 404 \"metrics are at /metrics\"; the key is ignored",
    },
    Unsupported {
        name: "load-server-state",
        prefix: false,
        why: "servers' run-time state is not carried over a reload: the new worker starts its servers as the rendered files describe them; the key is ignored",
    },
    Unsupported {
        name: "master-exit-on-failure",
        prefix: false,
        why: "HAProxy's master exits when its worker fails, and portcullis starts it again on the last good configuration; the key is ignored",
    },
    Unsupported {
        name: "no-redirect-locations",
        prefix: false,
        why: "`redirect-to` redirects only the paths it is set on, so a longer path another rule routes on the same host (an ACME HTTP-01 solver, say) is served by its own backend; the HTTPS redirect's exceptions are `no-tls-redirect-locations`; the key is ignored",
    },
    Unsupported {
        name: "path-type-order",
        prefix: false,
        why: "paths are tried in one fixed order: an exact path, then the longest prefix (or `begin`) path; a `regex` path stands with its host's `/`, where the Ingresses' ages decide between them as for any path two Ingresses claim; the key is ignored",
    },
    Unsupported {
        name: "peers-",
        prefix: true,
        why: "HAProxy peers are not configured: stick tables (`limit-rps`, `limit-connections`) count per HAProxy; the key is ignored",
    },
    Unsupported {
        name: "ssl-dh-default-max-size",
        prefix: false,
        why: "no `tune.ssl.default-dh-param` is written: without `ssl-dh-param`, DHE key exchanges use HAProxy's own parameters; set `ssl-dh-param` for parameters of your own; the key is ignored",
    },
    Unsupported {
        name: "ssl-engine",
        prefix: false,
        why: "no OpenSSL engine is loaded: TLS is computed by the OpenSSL library HAProxy is built with; the key is ignored",
    },
    Unsupported {
        name: "ssl-mode-async",
        prefix: false,
        why: "no OpenSSL engine is loaded, so there are no asynchronous TLS operations to enable; the key is ignored",
    },
    Unsupported {
        name: "strict-host",
        prefix: false,
        why: "a request is routed by the paths of the one host entry it matches (the exact host, else a wildcard, else the rules without a host), and one that matches none of that entry's paths goes to the default backend, as haproxy-ingress's `strict-host: true` does; its default `false`, which also tries the paths of the other entries the host matches, is not offered, and the key is ignored",
    },
    Unsupported {
        name: "ssl-headers-prefix",
        prefix: false,
        why: "the client certificate's identity always reaches backends in `X-SSL-Client-CN`, `-DN`, `-SHA1`, `-Verify` and `-Cert` (see `auth-tls-cert-header`); the key is ignored",
    },
    Unsupported {
        name: "http-response-200",
        prefix: false,
        why: "HAProxy answers 200 itself only on `healthz-port` (`ok`), which is not customized; the key is ignored",
    },
    Unsupported {
        name: "http-response-405",
        prefix: false,
        why: "HAProxy sends no 405 of its own in portcullis's configuration; the key is ignored",
    },
    Unsupported {
        name: "http-response-407",
        prefix: false,
        why: "HAProxy sends no 407 of its own in portcullis's configuration (it is no forward proxy); the key is ignored",
    },
    Unsupported {
        name: "http-response-410",
        prefix: false,
        why: "HAProxy sends no 410 of its own in portcullis's configuration; the key is ignored",
    },
    Unsupported {
        name: "http-response-421",
        prefix: false,
        why: "the 421 Misdirected Request answer (a request for another host than its TLS connection's) is a fixed plain-text one; the key is ignored",
    },
    Unsupported {
        name: "http-response-425",
        prefix: false,
        why: "TLS early data is not accepted, so HAProxy sends no 425 Too Early; the key is ignored",
    },
];

/// Why a key is not supported, when it is one of those.
pub(crate) fn why(name: &str) -> Option<&'static str> {
    UNSUPPORTED_KEYS
        .iter()
        .find(|key| {
            if key.prefix {
                name.starts_with(key.name)
            } else {
                name == key.name
            }
        })
        .map(|key| key.why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waf_and_modsecurity_keys_are_known_as_unsupported() {
        for name in [
            "waf",
            "waf-mode",
            "modsecurity-endpoints",
            "modsecurity-use-coraza",
            "enable-modsecurity",
            "enable-owasp-core-rules",
        ] {
            assert_eq!(why(name), Some(NO_WAF), "{name}");
        }
        assert_eq!(why("wafer"), None);
        assert_eq!(why("timeout-server"), None);
    }

    #[test]
    fn configuration_snippets_are_known_as_unsupported() {
        for name in [
            "config-backend",
            "config-frontend",
            "config-defaults",
            "config-global",
        ] {
            assert!(
                why(name).is_some_and(|why| why.contains("snippets")),
                "{name}"
            );
        }
        assert_eq!(why("configuration"), None);
    }

    /// haproxy-ingress's keys (its v0.17 keys reference and code): each is one of ours or
    /// explained, so that no user moving over is told only "unknown".
    const HAPROXY_INGRESS_KEYS: &[&str] = &[
        "http-response-200",
        "http-response-401",
        "http-response-405",
        "http-response-407",
        "http-response-410",
        "http-response-421",
        "http-response-425",
        "http-response-501",
        "acme-emails",
        "acme-endpoint",
        "acme-expiring",
        "acme-preferred-chain",
        "acme-shared",
        "acme-terms-agreed",
        "affinity",
        "agent-check-addr",
        "agent-check-interval",
        "agent-check-port",
        "agent-check-send",
        "allow-local-bind",
        "allowlist-source-header",
        "allowlist-source-range",
        "app-root",
        "assign-backend-server-id",
        "auth-external-placement",
        "auth-headers-fail",
        "auth-headers-request",
        "auth-headers-succeed",
        "auth-log-format",
        "auth-method",
        "auth-proxy",
        "auth-realm",
        "auth-secret",
        "auth-signin",
        "auth-tls-cert-header",
        "auth-tls-default-secret",
        "auth-tls-error-page",
        "auth-tls-secret",
        "auth-tls-strict",
        "auth-tls-verify-client",
        "auth-url",
        "backend-check-interval",
        "backend-protocol",
        "backend-server-naming",
        "backend-server-slots-increment",
        "balance-algorithm",
        "bind-fronting-proxy",
        "bind-http",
        "bind-http-passthrough",
        "bind-https",
        "bind-ip-addr-healthz",
        "bind-ip-addr-http",
        "bind-ip-addr-prometheus",
        "bind-ip-addr-stats",
        "bind-ip-addr-tcp",
        "blue-green-balance",
        "blue-green-cookie",
        "blue-green-deploy",
        "blue-green-header",
        "blue-green-mode",
        "cert-signer",
        "close-sessions-duration",
        "config-backend-early",
        "config-backend-late",
        "config-defaults",
        "config-frontend-early",
        "config-frontend-late",
        "config-global",
        "config-peers",
        "config-proxy",
        "config-sections",
        "config-tcp",
        "config-tcp-service",
        "cookie-key",
        "cors-allow-credentials",
        "cors-allow-headers",
        "cors-allow-methods",
        "cors-allow-origin",
        "cors-allow-origin-regex",
        "cors-enable",
        "cors-expose-headers",
        "cors-max-age",
        "cpu-map",
        "create-default-frontends",
        "cross-namespace-secrets-ca",
        "cross-namespace-secrets-crt",
        "cross-namespace-secrets-passwd",
        "cross-namespace-services",
        "default-backend-redirect",
        "default-backend-redirect-code",
        "denylist-source-range",
        "dns-accepted-payload-size",
        "dns-cluster-domain",
        "dns-hold-obsolete",
        "dns-hold-valid",
        "dns-resolvers",
        "dns-timeout-retry",
        "drain-support",
        "drain-support-redispatch",
        "dynamic-scaling",
        "external-has-lua",
        "fcgi-app",
        "fcgi-enabled-apps",
        "forwardfor",
        "fronting-proxy-port",
        "groupname",
        "headers",
        "health-check-addr",
        "health-check-fall-count",
        "health-check-interval",
        "health-check-port",
        "health-check-rise-count",
        "health-check-uri",
        "healthz-port",
        "hsts",
        "hsts-include-subdomains",
        "hsts-max-age",
        "hsts-preload",
        "http-frontend",
        "http-frontends",
        "http-header-match",
        "http-header-match-regex",
        "http-log-format",
        "http-passthrough",
        "http-passthrough-port",
        "http-port",
        "http-response-404",
        "http-response-prometheus-root",
        "https-log-format",
        "https-port",
        "https-to-http-port",
        "initial-weight",
        "limit-connections",
        "limit-rps",
        "limit-whitelist",
        "load-server-state",
        "master-exit-on-failure",
        "max-connections",
        "maxconn-server",
        "maxqueue-server",
        "modsecurity-args",
        "modsecurity-endpoints",
        "modsecurity-timeout-hello",
        "modsecurity-timeout-idle",
        "modsecurity-timeout-processing",
        "modsecurity-use-coraza",
        "nbthread",
        "no-redirect-locations",
        "no-tls-redirect-locations",
        "oauth",
        "oauth-headers",
        "oauth-uri-prefix",
        "original-forwarded-for-hdr",
        "path-type",
        "path-type-order",
        "peers-name",
        "peers-port",
        "peers-table",
        "peers-table-global",
        "prometheus-port",
        "proxy-body-size",
        "proxy-protocol",
        "real-ip-hdr",
        "redirect-from",
        "redirect-from-code",
        "redirect-from-regex",
        "redirect-to",
        "redirect-to-code",
        "request-add-headers",
        "request-del-headers",
        "request-set-headers",
        "response-add-headers",
        "response-del-headers",
        "response-set-headers",
        "rewrite-target",
        "secure-backends",
        "secure-crt-secret",
        "secure-sni",
        "secure-verify-ca-secret",
        "secure-verify-hostname",
        "server-alias",
        "server-alias-regex",
        "service-upstream",
        "session-cookie-domain",
        "session-cookie-dynamic",
        "session-cookie-keywords",
        "session-cookie-name",
        "session-cookie-preserve",
        "session-cookie-same-site",
        "session-cookie-shared",
        "session-cookie-strategy",
        "session-cookie-value-strategy",
        "slots-min-free",
        "source-address-intf",
        "ssl-always-add-https",
        "ssl-always-follow-redirect",
        "ssl-cipher-suites",
        "ssl-cipher-suites-backend",
        "ssl-ciphers",
        "ssl-ciphers-backend",
        "ssl-dh-default-max-size",
        "ssl-dh-param",
        "ssl-engine",
        "ssl-fingerprint-lower",
        "ssl-fingerprint-sha2-bits",
        "ssl-headers-prefix",
        "ssl-mode-async",
        "ssl-options",
        "ssl-options-backend",
        "ssl-options-host",
        "ssl-passthrough",
        "ssl-passthrough-http-port",
        "ssl-redirect",
        "ssl-redirect-code",
        "stats-auth",
        "stats-port",
        "stats-proxy-protocol",
        "stats-ssl-cert",
        "strict-host",
        "syslog-endpoint",
        "syslog-format",
        "syslog-length",
        "syslog-tag",
        "tcp-log-format",
        "tcp-service-log-format",
        "tcp-service-port",
        "tcp-service-proxy-protocol",
        "timeout-client",
        "timeout-client-fin",
        "timeout-connect",
        "timeout-http-request",
        "timeout-keep-alive",
        "timeout-queue",
        "timeout-server",
        "timeout-server-fin",
        "timeout-stop",
        "timeout-tunnel",
        "tls-alpn",
        "use-chroot",
        "use-cpu-map",
        "use-forwarded-proto",
        "use-haproxy-user",
        "use-proxy-protocol",
        "use-resolver",
        "username",
        "var-namespace",
        "waf",
        "waf-mode",
        "whitelist-source-range",
        "worker-max-reloads",
    ];

    #[test]
    fn every_haproxy_ingress_key_is_one_of_ours_or_explained() {
        let unknown: Vec<&str> = HAPROXY_INGRESS_KEYS
            .iter()
            .copied()
            .filter(|name| super::super::find_key(name).is_none() && why(name).is_none())
            .collect();
        assert_eq!(unknown, Vec::<&str>::new());
    }
}
