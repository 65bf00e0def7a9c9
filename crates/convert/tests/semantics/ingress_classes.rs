//! Which Ingresses are ours: IngressClass, `--ingress-class`, legacy annotation, default.

// The rule is README's `--ingress-class` and `--watch-ingress-without-class`, spelled out
// on `convert::class::is_ours`. Each case holds one Ingress for `a.test`: served, or
// nothing at all.

use crate::summary::Show;
use crate::support::{Case, check, not_watching_without_class};

const SERVED: &[&str] = &["route a.test / Prefix -> default_web_80"];
const NOT_SERVED: &[&str] = &[];

#[test]
fn class_ownership() {
    check(
        Show::ROUTES,
        &[
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
                "an IngressClass's parameters (haproxy-ingress's class-wide keys) are not read, and said so on each Ingress of the class",
                "
                kind: IngressClass
                metadata: {name: mine}
                spec:
                  controller: portcullis.dev/ingress-controller
                  parameters: {kind: ConfigMap, name: class-keys, namespace: ops, scope: Namespace}
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  ingressClassName: mine
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix -> default_web_80",
                    "diagnostic Ingress default/a: spec.ingressClassName: IngressClass mine names parameters (ConfigMap class-keys), which are not read: set their keys in the global ConfigMap (--configmap) or as the Ingress's annotations",
                ],
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
