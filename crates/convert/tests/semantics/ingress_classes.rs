//! Which Ingresses are ours: IngressClass, `--ingress-class`, legacy annotation, default.

// The rule is README's `--ingress-class` and `--watch-ingress-without-class`, spelled out
// on `convert::class::is_ours`. Each case holds one Ingress for `a.test`: served, or
// nothing at all.

use crate::summary::Show;
use crate::support::{Case, check, not_watching_without_class, with_global_configmap};

const SERVED: &[&str] = &["route a.test / Prefix -> default_web_80"];
const NOT_SERVED: &[&str] = &[];

/// A second deployment's `--controller-class`.
fn internal_controller(options: &mut convert::ConvertOptions) {
    options.controller_class = "portcullis.dev/ingress-controller/internal".into();
    options.watch_ingress_without_class = false;
}

#[test]
fn class_ownership() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "README --controller-class: an IngressClass is ours when its spec.controller is --controller-class, so deployments with their own serve their own classes only",
                "
                kind: IngressClass
                metadata: {name: internal}
                spec: {controller: portcullis.dev/ingress-controller/internal}
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  ingressClassName: internal
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                SERVED,
            )
            .with(internal_controller),
            Case::new(
                "README --controller-class: the default deployment does not serve another deployment's class",
                "
                kind: IngressClass
                metadata: {name: internal}
                spec: {controller: portcullis.dev/ingress-controller/internal}
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  ingressClassName: internal
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                NOT_SERVED,
            ),
            Case::new(
                "README --controller-class: a deployment with its own does not serve the default class",
                "
                kind: IngressClass
                metadata: {name: mine}
                spec: {controller: portcullis.dev/ingress-controller}
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  ingressClassName: mine
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                NOT_SERVED,
            )
            .with(internal_controller),
            Case::new(
                "ingressClassName names an IngressClass whose controller is portcullis.dev/ingress-controller: ours",
                "
                kind: IngressClass
                metadata: {name: mine}
                spec: {controller: portcullis.dev/ingress-controller}
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  ingressClassName: mine
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                SERVED,
            )
            .with(not_watching_without_class),
            Case::new(
                "ingressClassName names an IngressClass of another controller: not ours, even when watching Ingresses without class",
                "
                kind: IngressClass
                metadata: {name: nginx}
                spec: {controller: k8s.io/ingress-nginx}
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  ingressClassName: nginx
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                NOT_SERVED,
            ),
            Case::new(
                "ingressClassName names no existing IngressClass but equals --ingress-class: ours",
                "
                kind: Ingress
                metadata: {name: a}
                spec:
                  ingressClassName: portcullis
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                SERVED,
            )
            .with(not_watching_without_class),
            Case::new(
                "ingressClassName names no existing IngressClass and differs from --ingress-class: not ours",
                "
                kind: Ingress
                metadata: {name: a}
                spec:
                  ingressClassName: nobody
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                NOT_SERVED,
            ),
            Case::new(
                "ingressClassName equal to --ingress-class, but an IngressClass of that name belongs to another controller: the class decides, not ours",
                "
                kind: IngressClass
                metadata: {name: portcullis}
                spec: {controller: k8s.io/ingress-nginx}
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  ingressClassName: portcullis
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                NOT_SERVED,
            ),
            Case::new(
                "legacy annotation kubernetes.io/ingress.class equal to --ingress-class: ours",
                "
                kind: Ingress
                metadata: {name: a, annotations: {kubernetes.io/ingress.class: portcullis}}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                SERVED,
            )
            .with(not_watching_without_class),
            Case::new(
                "legacy annotation naming another class: not ours, even when watching Ingresses without class",
                "
                kind: Ingress
                metadata: {name: a, annotations: {kubernetes.io/ingress.class: nginx}}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                NOT_SERVED,
            ),
            Case::new(
                "ingressClassName comes before the legacy annotation: another controller's class with our annotation is not ours",
                "
                kind: IngressClass
                metadata: {name: nginx}
                spec: {controller: k8s.io/ingress-nginx}
                ---
                kind: Ingress
                metadata: {name: a, annotations: {kubernetes.io/ingress.class: portcullis}}
                spec:
                  ingressClassName: nginx
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                NOT_SERVED,
            ),
            Case::new(
                "README: '--watch-ingress-without-class true: serve Ingresses that name no class'",
                "
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                SERVED,
            ),
            Case::new(
                "an Ingress naming no class, not watching those, no default class: not ours",
                "
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                NOT_SERVED,
            )
            .with(not_watching_without_class),
            Case::new(
                "an Ingress naming no class is ours when one of our IngressClasses is the default class (is-default-class)",
                r#"
                kind: IngressClass
                metadata: {name: mine, annotations: {ingressclass.kubernetes.io/is-default-class: "true"}}
                spec: {controller: portcullis.dev/ingress-controller}
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                "#,
                SERVED,
            )
            .with(not_watching_without_class),
            Case::new(
                "another controller's default class does not make an Ingress naming no class ours",
                r#"
                kind: IngressClass
                metadata: {name: nginx, annotations: {ingressclass.kubernetes.io/is-default-class: "true"}}
                spec: {controller: k8s.io/ingress-nginx}
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                "#,
                NOT_SERVED,
            )
            .with(not_watching_without_class),
        ],
    );
}

/// An IngressClass whose parameters name `class-keys`, and one Ingress of the class for
/// `a.test` to `web` and one with its own `balance-algorithm` for `b.test` to `api`.
const PARAMETERS_INGRESSES: &str = "
kind: IngressClass
metadata: {name: mine}
spec:
  controller: portcullis.dev/ingress-controller
  parameters: {kind: ConfigMap, name: class-keys}
---
kind: Ingress
metadata: {name: a}
spec:
  ingressClassName: mine
  rules:
  - host: a.test
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
---
kind: Ingress
metadata: {name: b, annotations: {portcullis.dev/balance-algorithm: roundrobin}}
spec:
  ingressClassName: mine
  rules:
  - host: b.test
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}
";

#[test]
fn class_parameters() {
    check(
        Show::BACKENDS,
        &[
            Case::new(
                "haproxy-ingress keys.md, IngressClass: the keys of the ConfigMap an IngressClass's parameters name, in the controller's namespace, apply to every Ingress of the class under its own annotations",
                "
                kind: ConfigMap
                metadata: {name: class-keys, namespace: default}
                data: {balance-algorithm: leastconn, max-connections: '10', no-such-key: x}
                ",
                &[
                    "route a.test / Prefix -> default_web_80",
                    "route b.test / Prefix -> default_api_80",
                    "backend default_web_80 balance leastconn servers 10.0.0.1:8080",
                    "backend default_api_80 balance roundrobin servers 10.0.0.2:8080",
                    "diagnostic ConfigMap default/class-keys: data.max-connections: 'max-connections' is a global key: set it in the global ConfigMap (an IngressClass's parameters set host, backend and path keys); it is ignored here",
                    "diagnostic ConfigMap default/class-keys: data.no-such-key: unknown configuration key 'no-such-key'",
                ],
            )
            .given(PARAMETERS_INGRESSES)
            .with(with_global_configmap),
            Case::new(
                "an IngressClass's parameters are read in the controller's namespace, the global ConfigMap's: without --configmap they are reported on each Ingress of the class",
                "
                kind: ConfigMap
                metadata: {name: class-keys, namespace: default}
                data: {balance-algorithm: leastconn}
                ",
                &[
                    "route a.test / Prefix -> default_web_80",
                    "route b.test / Prefix -> default_api_80",
                    "backend default_web_80 servers 10.0.0.1:8080",
                    "backend default_api_80 balance roundrobin servers 10.0.0.2:8080",
                    "diagnostic Ingress default/a: spec.ingressClassName: IngressClass mine: its parameters (ConfigMap class-keys) are read in the controller's namespace, the global ConfigMap's, and no --configmap is set; its keys are not applied",
                    "diagnostic Ingress default/b: spec.ingressClassName: IngressClass mine: its parameters (ConfigMap class-keys) are read in the controller's namespace, the global ConfigMap's, and no --configmap is set; its keys are not applied",
                ],
            )
            .given(PARAMETERS_INGRESSES),
            Case::new(
                "a missing parameters ConfigMap is reported on each Ingress of the class, which is served with the other layers' keys",
                "",
                &[
                    "route a.test / Prefix -> default_web_80",
                    "route b.test / Prefix -> default_api_80",
                    "backend default_web_80 servers 10.0.0.1:8080",
                    "backend default_api_80 balance roundrobin servers 10.0.0.2:8080",
                    "diagnostic Ingress default/a: spec.ingressClassName: IngressClass mine names ConfigMap default/class-keys as its parameters, which does not exist; its keys are not applied",
                    "diagnostic Ingress default/b: spec.ingressClassName: IngressClass mine names ConfigMap default/class-keys as its parameters, which does not exist; its keys are not applied",
                ],
            )
            .given(PARAMETERS_INGRESSES)
            .with(with_global_configmap),
            Case::new(
                "parameters of another kind, or in another namespace than the controller's, are reported and not read",
                "
                kind: IngressClass
                metadata: {name: mine}
                spec:
                  controller: portcullis.dev/ingress-controller
                  parameters: {apiGroup: example.com, kind: Settings, name: class-keys}
                ---
                kind: IngressClass
                metadata: {name: elsewhere}
                spec:
                  controller: portcullis.dev/ingress-controller
                  parameters: {kind: ConfigMap, name: class-keys, namespace: ops, scope: Namespace}
                ---
                kind: ConfigMap
                metadata: {name: class-keys, namespace: ops}
                data: {balance-algorithm: leastconn}
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  ingressClassName: mine
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata: {name: b}
                spec:
                  ingressClassName: elsewhere
                  rules:
                  - host: b.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix -> default_web_80",
                    "route b.test / Prefix -> default_api_80",
                    "backend default_web_80 servers 10.0.0.1:8080",
                    "backend default_api_80 servers 10.0.0.2:8080",
                    "diagnostic Ingress default/a: spec.ingressClassName: IngressClass mine: its parameters (Settings class-keys) are not a ConfigMap, the only kind read; its keys are not applied",
                    "diagnostic Ingress default/b: spec.ingressClassName: IngressClass elsewhere: its parameters (ConfigMap class-keys) are in namespace ops; they are read only in the controller's namespace, the global ConfigMap's (default); its keys are not applied",
                ],
            )
            .with(with_global_configmap),
        ],
    );
}
