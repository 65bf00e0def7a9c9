//! The Gateway API objects the tests serve.

pub const GATEWAY: &str = r#"
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: portcullis}
spec: {controllerName: portcullis.dev/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: someone-else}
spec: {controllerName: example.com/another-controller}
---
apiVersion: v1
kind: Namespace
metadata: {name: team, labels: {access: granted}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, namespace: default}
spec:
  gatewayClassName: portcullis
  listeners:
  - name: http
    protocol: HTTP
    port: 80
    allowedRoutes: {namespaces: {from: All}}
  - name: https
    protocol: HTTPS
    port: 443
    hostname: "*.secure.test"
    tls: {mode: Terminate, certificateRefs: [{name: secure-tls}]}
  - name: internal
    protocol: HTTP
    port: 80
    hostname: internal.test
  - name: labelled
    protocol: HTTP
    port: 80
    hostname: labelled.test
    allowedRoutes: {namespaces: {from: Selector, selector: {matchLabels: {access: granted}}}}
  - name: alt
    protocol: HTTP
    port: ALT_PORT
  - name: kinds
    protocol: HTTP
    port: 80
    hostname: kinds.test
    allowedRoutes: {kinds: [{kind: GRPCRoute}]}
  - name: vaulted
    protocol: HTTPS
    port: 443
    hostname: vaulted.test
    tls: {certificateRefs: [{name: vault-tls, namespace: vault}]}
  - name: securealt
    protocol: HTTPS
    port: SECURE_PORT
    hostname: "*.secure.test"
    tls: {mode: Terminate, certificateRefs: [{name: secure-tls}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: foreign, namespace: default}
spec:
  gatewayClassName: someone-else
  listeners:
  - {name: http, protocol: HTTP, port: 80}
"#;

pub const ROUTES: &str = r#"
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: http}]
  hostnames: [app.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /api}}]
    backendRefs: [{name: api, port: 80}]
  - matches: [{path: {type: Exact, value: /exact}}]
    backendRefs: [{name: other, port: 80}]
  - backendRefs: [{name: app, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: HTTPRoute
metadata: {name: secure, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: https}, {name: web, sectionName: securealt}]
  hostnames: [shop.secure.test, shop.elsewhere.test]
  rules:
  - backendRefs: [{name: app, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ignored, namespace: default}
spec:
  parentRefs: [{name: foreign}]
  hostnames: [foreign.test]
  rules:
  - backendRefs: [{name: app, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: team, namespace: team}
spec:
  parentRefs:
  - {name: web, namespace: default, sectionName: http}
  hostnames: [team.test]
  rules:
  - backendRefs: [{name: other, namespace: default, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: listeners, namespace: team}
spec:
  parentRefs:
  - {name: web, namespace: default, sectionName: internal}
  - {name: web, namespace: default, sectionName: labelled}
  rules:
  - backendRefs: [{name: other, namespace: default, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: unsupported, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: http}]
  hostnames: [unsupported.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /}}]
    filters: [{type: RequestMirror, requestMirror: {backendRef: {name: api, port: 80}}}]
    backendRefs: [{name: api, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /plain}}]
    backendRefs: [{name: app, port: 80}]
"#;

pub const WILD_ROUTE: &str = r#"
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: wild, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: http}]
  hostnames: ["*.wild.test"]
  rules: [{backendRefs: [{name: other, port: 80}]}]
"#;

pub const MORE_ROUTES: &str = r#"
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: kinds, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: kinds}]
  rules: [{backendRefs: [{name: app, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: by-port, namespace: default}
spec:
  parentRefs: [{name: web, port: ALT_PORT}]
  hostnames: [byport.test]
  rules:
  - backendRefs: [{name: other, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /moved}}]
    filters:
    - type: RequestRedirect
      requestRedirect: {hostname: app.test, statusCode: 301}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: vaulted, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: vaulted}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /elsewhere}}]
    filters:
    - type: RequestRedirect
      requestRedirect: {scheme: http, hostname: app.test, path: {type: ReplaceFullPath, replaceFullPath: /landing}, statusCode: 302}
  - backendRefs: [{name: api, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: gateways-may-use-certificates, namespace: vault}
spec:
  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: default}]
  to: [{group: "", kind: Secret, name: vault-tls}]
"#;

pub const DUAL_ROUTES: &str = r#"
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: dual-http, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: http}]
  hostnames: [dual.secure.test]
  rules: [{backendRefs: [{name: other, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: dual-https, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: https}]
  hostnames: [dual.secure.test]
  rules: [{backendRefs: [{name: api, port: 80}]}]
"#;

pub const ALT_ROUTE: &str = r#"
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: alt, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: alt}]
  hostnames: [alt.test, "*.alt.test"]
  rules:
  - matches: [{path: {type: Exact, value: /exact}}]
    backendRefs: [{name: other, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /api}}]
    backendRefs: [{name: api, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /}, headers: [{name: x-other, value: "1"}]}]
    backendRefs: [{name: other, port: 80}]
  - backendRefs: [{name: app, port: 80}]
"#;

pub const GRANT: &str = r#"
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: team-may-use-other, namespace: default}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: team}]
  to: [{group: "", kind: Service, name: other}]
"#;

/// A younger Gateway whose HTTPS listener has no hostname, and so matches every name.
pub const ANY_NAME_GATEWAY: &str = r#"
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: any-name, namespace: default}
spec:
  gatewayClassName: portcullis
  listeners:
  - name: https
    protocol: HTTPS
    port: 443
    tls: {certificateRefs: [{name: any-tls}]}
"#;
