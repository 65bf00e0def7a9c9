//! routing.md "TCP services": the `tcp-services` ConfigMap and `tcp-service-port`
//! Ingresses, as conversion tables.

use crate::summary::Show;
use crate::support::{Case, check, with_tcp_services_configmap};

#[test]
fn the_tcp_services_configmap() {
    check(
        Show::BACKENDS,
        &[
            Case::new(
                "routing.md TCP services: each entry is a port and a Service port, a backend section of its own; PROXY in, PROXY out, a TLS Secret and a check interval as haproxy-ingress reads them",
                "
                kind: Secret
                metadata: {name: db-tls}
                type: kubernetes.io/tls
                ---
                kind: ConfigMap
                metadata: {name: tcp}
                data:
                  '5432': default/web:80
                  '5433': 'default/api:80:PROXY:PROXY-V1::-'
                  '5434': 'default/api:80:::db-tls:1s'
                ",
                &[
                    "backend default_api_80-on-5433_tcp mode tcp send-proxy no-check servers 10.0.0.2:8080",
                    "backend default_api_80-on-5434_tcp mode tcp check 1s servers 10.0.0.2:8080",
                    "backend default_web_80-on-5432_tcp mode tcp servers 10.0.0.1:8080",
                    "tcp 5432",
                    "tcp 5432 (any host) -> default_web_80-on-5432_tcp*1",
                    "tcp 5433 accept-proxy",
                    "tcp 5433 (any host) -> default_api_80-on-5433_tcp*1",
                    "tcp 5434 tls [default/db-tls]",
                    "tcp 5434 (any host) -> default_api_80-on-5434_tcp*1",
                ],
            )
            .with(with_tcp_services_configmap),
            Case::new(
                "routing.md TCP services: an unreadable entry is reported and left out, a port of HAProxy's HTTP frontends refused, a Service that does not exist refuses its port's connections",
                "
                kind: ConfigMap
                metadata: {name: tcp}
                data:
                  '80': default/web:80
                  '99999': default/web:80
                  '5000': 'web:80'
                  '5001': 'default/web:80:YES'
                  '5002': 'default/web:80::::::default/ca:extra'
                  '5003': 'default/web:80::::0'
                  '5004': default/nosuch:80
                ",
                &[
                    "diagnostic ConfigMap default/tcp: data.5000: 'web:80' does not start with <namespace>/<service>; the entry is skipped",
                    "diagnostic ConfigMap default/tcp: data.5001: the third field is 'YES': only PROXY or nothing; the entry is skipped",
                    "diagnostic ConfigMap default/tcp: data.5002: 'default/web:80::::::default/ca:extra' has more than the 7 fields <namespace>/<service>:<port>:<in-proxy>:<out-proxy>:<tls-secret>:<check-interval>:<ca-secret>; the entry is skipped",
                    "diagnostic ConfigMap default/tcp: data.5003: the check interval (sixth field) must be above 0; '-' turns checks off; the entry is skipped",
                    "diagnostic ConfigMap default/tcp: data.5004: service default/nosuch not found; the port refuses its connections",
                    "diagnostic ConfigMap default/tcp: data.80: port 80 is one of HAProxy's HTTP ports; the entry is skipped",
                    "diagnostic ConfigMap default/tcp: data.99999: '99999' is not a port number from 1 to 65535; the entry is skipped",
                    "tcp 5004",
                    "tcp 5004 (any host) -> refused",
                ],
            )
            .with(with_tcp_services_configmap),
        ],
    );
}

#[test]
fn ingresses_with_tcp_service_port() {
    check(
        Show::BACKENDS,
        &[
            Case::new(
                "routing.md TCP services: with spec.tls, HAProxy terminates and chooses each host's backend by SNI; the rule without a host takes the other names; the first entry's certificate comes first",
                "
                kind: Secret
                metadata: {name: a-tls}
                type: kubernetes.io/tls
                ---
                kind: Secret
                metadata: {name: rest-tls}
                type: kubernetes.io/tls
                ---
                kind: Ingress
                metadata:
                  name: db
                  annotations: {portcullis.dev/tcp-service-port: '7000', portcullis.dev/tcp-service-proxy-protocol: 'true'}
                spec:
                  tls:
                  - {hosts: [a.db.test], secretName: a-tls}
                  - {secretName: rest-tls}
                  rules:
                  - host: a.db.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                  - http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}
                ",
                &[
                    "backend default_api_80_tcp mode tcp servers 10.0.0.2:8080",
                    "backend default_web_80_tcp mode tcp servers 10.0.0.1:8080",
                    "tcp 7000 tls [default/rest-tls default/a-tls] accept-proxy",
                    "tcp 7000 (any host) -> default_api_80_tcp*1",
                    "tcp 7000 a.db.test -> default_web_80_tcp*1",
                ],
            ),
            Case::new(
                "routing.md TCP services: without spec.tls the port carries one backend; a rule with a host and a path other than / are reported; the older Ingress keeps a shared port",
                "
                kind: Ingress
                metadata:
                  name: older
                  creationTimestamp: '2026-01-01T00:00:00Z'
                  annotations: {portcullis.dev/tcp-service-port: '7001'}
                spec:
                  defaultBackend: {service: {name: web, port: {number: 80}}}
                  rules:
                  - host: named.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}
                  - http: {paths: [{path: /sub, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata:
                  name: younger
                  creationTimestamp: '2026-01-02T00:00:00Z'
                  annotations: {portcullis.dev/tcp-service-port: '7001'}
                spec:
                  defaultBackend: {service: {name: api, port: {number: 80}}}
                ",
                &[
                    "backend default_web_80_tcp mode tcp servers 10.0.0.1:8080",
                    "diagnostic Ingress default/older: spec.rules[0].host: a TCP service port without spec.tls carries no name to choose connections by, so the host named.test is not served; add spec.tls for HAProxy to terminate TLS and choose by SNI, or use ssl-passthrough",
                    "diagnostic Ingress default/older: spec.rules[1].http.paths[0]: a TCP service has no paths: only one path '/' per host is served; '/sub' is skipped",
                    "diagnostic Ingress default/younger: spec.defaultBackend: TCP port 7001 is already served by Ingress default/older, which is older; this one is ignored",
                    "tcp 7001",
                    "tcp 7001 (any host) -> default_web_80_tcp*1",
                ],
            ),
        ],
    );
}

#[test]
fn client_certificates_on_a_tcp_service_port() {
    check(
        Show::BACKENDS,
        &[Case::new(
            "routing.md TCP services: auth-tls-secret requires client certificates in the handshake; a CA Secret that does not load refuses every connection, and without spec.tls the key has no effect",
            "
            kind: Secret
            metadata: {name: db-tls}
            type: kubernetes.io/tls
            ---
            kind: Ingress
            metadata:
              name: missing-ca
              annotations: {portcullis.dev/tcp-service-port: '7100', portcullis.dev/auth-tls-secret: nosuch}
            spec:
              tls: [{secretName: db-tls}]
              defaultBackend: {service: {name: web, port: {number: 80}}}
            ---
            kind: Ingress
            metadata:
              name: plain
              annotations: {portcullis.dev/tcp-service-port: '7101', portcullis.dev/auth-tls-secret: nosuch}
            spec:
              defaultBackend: {service: {name: web, port: {number: 80}}}
            ",
            &[
                "diagnostic Ingress default/missing-ca: metadata.annotations[portcullis.dev/auth-tls-secret]: secret default/nosuch not found; every connection to the TCP service port is refused until it is fixed",
                "diagnostic Ingress default/plain: metadata.annotations[portcullis.dev/auth-tls-secret]: secret default/nosuch not found; every connection to the TCP service port is refused until it is fixed",
                "tcp 7100 tls [default/db-tls]",
                "tcp 7100 (any host) -> refused",
                "tcp 7101",
                "tcp 7101 (any host) -> refused",
            ],
        )],
    );
}
