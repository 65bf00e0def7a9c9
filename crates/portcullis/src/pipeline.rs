//! The pure middle of the pipeline, shared by `run`, `render` and `check`: snapshot to
//! model to files, reusing what did not change since the previous call.

use std::collections::BTreeMap;

use convert::{Conversion, ConvertOptions};
use index::Snapshot;
use model::{CertId, TlsCert};
use render::RenderedConfig;

use crate::cli::ConfigArgs;

/// What one reconciliation produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reconciled {
    /// The model and its diagnostics.
    pub conversion: Conversion,
    /// The files.
    pub rendered: RenderedConfig,
    /// Refused certificates that were left out (still present with the refused content).
    pub excluded_certificates: std::collections::BTreeSet<CertId>,
}

/// An incremental result differed from a full one (only with verification on).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// What differed.
    pub detail: String,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "incremental reconciliation differs from a full one: {}",
            self.detail
        )
    }
}

impl std::error::Error for Divergence {}

/// Turns snapshots into files. Work is memoized between calls; a full reconciliation is
/// the same code with empty caches, so the two cannot disagree, and with verification on
/// every result is checked against a full reconciliation anyway.
#[derive(Debug)]
pub struct Reconciler {
    options: ConvertOptions,
    verify: bool,
    convert_cache: convert::ConvertCache,
    render_cache: render::RenderCache,
}

impl Reconciler {
    /// The options every conversion takes.
    pub fn options(&self) -> &ConvertOptions {
        &self.options
    }

    /// A reconciler with empty caches.
    pub fn new(options: ConvertOptions) -> Self {
        Self {
            options,
            verify: false,
            convert_cache: convert::ConvertCache::default(),
            render_cache: render::RenderCache::default(),
        }
    }

    /// Checks every result against a full reconciliation.
    pub fn verify_incremental(mut self, verify: bool) -> Self {
        self.verify = verify;
        self
    }

    /// Sets the ports another process holds, which no Gateway listener can be served on.
    pub fn set_busy_ports(&mut self, ports: std::collections::BTreeSet<u16>) {
        self.options.busy_ports = ports;
    }

    /// Converts and renders a snapshot, leaving out certificates HAProxy refused.
    pub fn reconcile(
        &mut self,
        snapshot: &Snapshot,
        refused_certificates: &BTreeMap<CertId, TlsCert>,
    ) -> Result<Reconciled, Divergence> {
        self.reconcile_excluding(snapshot, refused_certificates, &convert::Exclusions::new())
    }

    /// Converts and renders a snapshot, leaving out the certificates and the objects
    /// HAProxy refused (as long as they are unchanged).
    pub fn reconcile_excluding(
        &mut self,
        snapshot: &Snapshot,
        refused_certificates: &BTreeMap<CertId, TlsCert>,
        refused_objects: &convert::Exclusions,
    ) -> Result<Reconciled, Divergence> {
        let mut conversion =
            self.convert_cache
                .convert_excluding(snapshot, &self.options, refused_objects);
        let excluded_certificates =
            convert::exclude_certificates(&mut conversion, refused_certificates);
        let rendered = self.render_cache.render(&conversion.model);
        let reconciled = Reconciled {
            conversion,
            rendered,
            excluded_certificates,
        };
        if self.verify {
            let full = Reconciler::new(self.options.clone()).reconcile_excluding(
                snapshot,
                refused_certificates,
                refused_objects,
            )?;
            if full != reconciled {
                return Err(Divergence {
                    detail: describe_difference(&reconciled, &full),
                });
            }
        }
        Ok(reconciled)
    }
}

fn describe_difference(incremental: &Reconciled, full: &Reconciled) -> String {
    if incremental.conversion.model != full.conversion.model {
        return "the models differ".to_owned();
    }
    if incremental.conversion.diagnostics != full.conversion.diagnostics {
        return "the diagnostics differ".to_owned();
    }
    let files = &incremental.rendered.files;
    let full_files = &full.rendered.files;
    let differing: Vec<&String> = files
        .keys()
        .chain(full_files.keys())
        .filter(|path| files.get(*path) != full_files.get(*path))
        .collect();
    format!("files differ: {differing:?}")
}

/// Conversion options from the command line plus the fallback certificate.
pub fn convert_options(args: &ConfigArgs, fallback_certificate: model::TlsCert) -> ConvertOptions {
    ConvertOptions {
        ingress_class: args.ingress_class.clone(),
        controller_class: args.controller_class.clone(),
        gateway_controller: args.gateway_controller.clone(),
        watch_ingress_without_class: args.watch_ingress_without_class,
        global_configmap: args.configmap.clone(),
        tcp_services_configmap: args.tcp_services_configmap.clone(),
        default_ssl_certificate: args.default_ssl_certificate.clone(),
        fallback_certificate,
        bind_address: args.bind_address,
        http_port: args.http_port,
        https_port: args.https_port,
        backend_shards: args.backend_shards,
        reserved_ports: Vec::new(),
        busy_ports: std::collections::BTreeSet::new(),
    }
}

/// How many times a refused configuration is narrowed to fewer objects before the
/// refusal is taken as it is (by `run`, which keeps the last good configuration; by
/// `check --haproxy-bin`, which says so): HAProxy names every broken line in one check,
/// so one round is the rule; more cover lines it reports only once others are gone.
pub const MAX_NARROWING_ROUNDS: u32 = 4;

/// What a configuration HAProxy refused comes down to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Narrowed {
    /// The objects behind the lines HAProxy named, each with what it said of them.
    pub objects: BTreeMap<model::Origin, String>,
    /// The certificates whose files HAProxy named.
    pub certificates: BTreeMap<CertId, String>,
    /// What HAProxy said that no object explains (the last good configuration stays).
    pub unexplained: Vec<String>,
}

/// Narrows HAProxy's refusal of the configuration checked in `checked_dir` to objects:
/// each `[file:line]` it names is looked up in the origin table (the rendered line's
/// objects), and each certificate file it names in quotes is matched exactly against
/// the rendered certificate paths.
pub fn narrow(
    output: &str,
    checked_dir: &std::path::Path,
    table: &render::OriginTable<'_>,
) -> Narrowed {
    let prefix = format!("{}/", checked_dir.display());
    let relative = |path: &str| path.strip_prefix(&prefix).unwrap_or(path).to_owned();
    let mut narrowed = Narrowed::default();
    for alert in output.lines() {
        let summary = alert.contains("Error(s) found in configuration file")
            || alert.contains("Fatal errors found in configuration");
        if summary || alert.trim().is_empty() {
            continue;
        }
        let message = alert
            .split_once(" : config : ")
            .or_else(|| alert.split_once(" : "))
            .map_or(alert, |(_, rest)| rest)
            .trim()
            .to_owned();
        let quoted = alert.split('\'').skip(1).step_by(2);
        let certificates: Vec<CertId> = quoted
            .filter_map(|token| table.certificate(&relative(token)))
            .collect();
        if !certificates.is_empty() {
            for id in certificates {
                narrowed.certificates.insert(id, message.clone());
            }
            continue;
        }
        let mut found = false;
        for location in alert
            .split('[')
            .skip(1)
            .filter_map(|s| s.split_once(']').map(|(l, _)| l))
        {
            let Some((file, line)) = location.rsplit_once(':') else {
                continue;
            };
            let Ok(line) = line.parse::<usize>() else {
                continue;
            };
            for origin in table.line(&relative(file.trim()), line) {
                narrowed.objects.insert(origin, message.clone());
                found = true;
            }
        }
        // A certificate list line's bad ciphers are named by the frontend's `bind` line,
        // with their value.
        for (marker, option) in [
            ("unable to set SSL cipher list to '", "ciphers"),
            ("unable to set TLS 1.3 cipher suites to '", "ciphersuites"),
        ] {
            let Some((value, _)) = alert
                .split_once(marker)
                .and_then(|(_, rest)| rest.split_once('\''))
            else {
                continue;
            };
            for origin in table.crt_list_option(option, value) {
                narrowed.objects.insert(origin, message.clone());
                found = true;
            }
        }
        // A map's bad pattern is named by its line: "at line N of file 'F'".
        for (_, after) in alert
            .match_indices("at line ")
            .map(|(i, _)| alert.split_at(i + 8))
        {
            let Some((line, rest)) = after.split_once(" of file '") else {
                continue;
            };
            let (Ok(line), Some((file, _))) = (line.parse::<usize>(), rest.split_once('\'')) else {
                continue;
            };
            for origin in table.line(&relative(file), line) {
                narrowed.objects.insert(origin, message.clone());
                found = true;
            }
        }
        if !found {
            narrowed.unexplained.push(message);
        }
    }
    narrowed
}

/// A refusal no object explains, said of the global ConfigMap when there is one: HAProxy
/// named lines no Ingress, route or Secret gives, which leaves the global settings (the
/// ConfigMap's keys, or the command line). The ConfigMap is not left out: some of its
/// keys fail closed, and leaving them out would open what they close.
pub fn unexplained_problem(
    narrowed: &Narrowed,
    options: &ConvertOptions,
) -> Option<convert::Diagnostic> {
    if narrowed.unexplained.is_empty() {
        return None;
    }
    let (namespace, name) = options.global_configmap.as_ref()?;
    Some(convert::Diagnostic {
        object: resources::ObjectRef::new(
            resources::Kind::ConfigMap,
            namespace.as_str(),
            name.as_str(),
        ),
        field: "data".to_owned(),
        message: format!(
            "HAProxy refuses a line no Ingress, route or Secret gives, so one of the global settings (this ConfigMap's keys, or the command line) is likely the cause; the last good configuration stays live: {}",
            narrowed.unexplained.join("; ")
        ),
    })
}

/// Adds what a refusal was narrowed to, to what is left out: the certificates HAProxy
/// named (their hosts get the default certificate) and the objects behind the lines it
/// named, each then reported by the conversion's diagnostics with HAProxy's words. Says
/// whether anything new was left out.
pub fn leave_out(
    snapshot: &Snapshot,
    conversion: &Conversion,
    narrowed: &Narrowed,
    certificates: &mut BTreeMap<CertId, TlsCert>,
    objects: &mut convert::Exclusions,
) -> bool {
    let mut progress = false;
    for id in narrowed.certificates.keys() {
        if let Some(cert) = conversion.model.certs.get(id) {
            progress |= certificates.insert(id.clone(), cert.clone()).is_none();
        }
    }
    for (origin, reason) in &narrowed.objects {
        let Some(kind) = resources::Kind::ALL
            .into_iter()
            .find(|k| k.name() == origin.kind)
        else {
            continue;
        };
        let object_ref = resources::ObjectRef::new(kind, &*origin.namespace, &*origin.name);
        let Some(object) = snapshot.get(&object_ref) else {
            continue;
        };
        progress |= objects
            .insert(
                object_ref,
                convert::Excluded {
                    object: object.clone(),
                    reason: reason.clone(),
                },
            )
            .is_none();
    }
    progress
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_narrowed_to_the_objects_behind_the_named_lines_and_certificates() {
        let id = model::BackendId {
            namespace: "web".into(),
            service: "app".into(),
            port: "80".into(),
            mode: model::BackendMode::Http,
        };
        let origin = model::Origin {
            kind: "Ingress",
            namespace: "web".into(),
            name: "site".into(),
        };
        let mut proxy = model::ProxyModel::default();
        proxy.backends.insert(
            id.clone(),
            std::sync::Arc::new(model::Backend {
                id,
                servers: Vec::new(),
                server_options: Default::default(),
                settings: std::sync::Arc::new(model::BackendSettings::plain(
                    model::HaproxyDuration::parse("5s").unwrap_or_else(|_| unreachable!()),
                    model::HaproxyDuration::parse("50s").unwrap_or_else(|_| unreachable!()),
                )),
                origins: vec![origin.clone()],
            }),
        );
        for name in ["tls", "prod-tls"] {
            let cert = CertId {
                namespace: "web".into(),
                name: name.into(),
            };
            proxy.certs.insert(cert, TlsCert::default());
        }
        let rendered = render::render(&proxy);
        let table = render::OriginTable::new(&proxy, &rendered);
        let staging = std::path::Path::new("/var/lib/portcullis/staging");
        let output = "[ALERT]    (1) : config : parsing [/var/lib/portcullis/staging/backends/shard-000.cfg:4] : unknown keyword\n\
                      [ALERT]    (1) : config : parsing [/var/lib/portcullis/staging/haproxy.cfg:40] : 'bind :443' : 'crt-list' : inconsistencies between private key and certificate loaded 'certs/web_prod-tls.pem'.\n\
                      [ALERT]    (1) : config : parsing [/var/lib/portcullis/staging/haproxy.cfg:3] : something global\n\
                      [ALERT]    (1) : config : Fatal errors found in configuration.";
        let narrowed = narrow(output, staging, &table);
        assert_eq!(narrowed.objects.keys().collect::<Vec<_>>(), [&origin]);
        // Exactly the certificate named: not `web_tls.pem`, whose name a substring
        // search would also find in `web_prod-tls.pem`... and the other way round.
        assert_eq!(
            narrowed
                .certificates
                .keys()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>(),
            ["prod-tls"]
        );
        assert_eq!(
            narrowed.unexplained,
            ["parsing [/var/lib/portcullis/staging/haproxy.cfg:3] : something global"]
        );
    }

    #[test]
    fn a_bad_pattern_of_a_map_is_narrowed_to_the_objects_of_its_line() {
        let origin = model::Origin {
            kind: "Ingress",
            namespace: "evil".into(),
            name: "alias".into(),
        };
        let id = model::BackendId {
            namespace: "evil".into(),
            service: "web".into(),
            port: "80".into(),
            mode: model::BackendMode::Http,
        };
        let mut proxy = model::ProxyModel::default();
        let mut host = model::Host {
            routes: Default::default(),
            cert: None,
            tls: Default::default(),
        };
        host.routes.insert(
            model::PathMatch {
                path: "/".into(),
                kind: model::PathKind::Prefix,
            },
            model::Route {
                frontends: model::Frontends::BOTH,
                target: model::RouteTarget::Backend(id),
                https_redirect: None,
                origin: origin.clone(),
            },
        );
        proxy
            .hosts
            .insert(model::HostKey::Regex(r"(a)\1\.evil\.test".into()), host);
        let rendered = render::render(&proxy);
        let table = render::OriginTable::new(&proxy, &rendered);
        let output = "[ALERT]    (1) : config : parsing [/var/lib/portcullis/staging/haproxy.cfg:47] : error detected in frontend 'http' while parsing 'http-request set-var(txn.hostkey)' rule : invalid args in converter 'map_reg' : regex '(a)\\1\\.evil\\.test' is invalid (error=reference to non-existent subpattern, erroffset=4) at line 1 of file 'maps/regex-hosts.map'.";
        let narrowed = narrow(
            output,
            std::path::Path::new("/var/lib/portcullis/staging"),
            &table,
        );
        assert_eq!(narrowed.objects.keys().collect::<Vec<_>>(), [&origin]);
        assert!(
            narrowed.unexplained.is_empty(),
            "{:?}",
            narrowed.unexplained
        );
    }

    #[test]
    fn a_line_s_ciphers_haproxy_refuses_are_traced_to_the_hosts_that_set_them() {
        let (cert, key) = test_support::self_signed("a.test", &["a.test", "b.test"]);
        let yaml = test_support::backend("default", "web", 80, None, &[(8080, true)])
            + &test_support::tls_secret("default", "tls", &cert, &key)
            + "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: bounded\n  annotations: {portcullis.dev/ssl-options-host: 'ssl-min-ver TLSv1.2', portcullis.dev/ssl-ciphers: 'ECDHE+AESGCM'}\nspec:\n  tls: [{hosts: [a.test], secretName: tls}]\n  rules:\n  - host: a.test\n    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}\n"
            + "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: plain}\nspec:\n  tls: [{hosts: [b.test], secretName: tls}]\n  rules:\n  - host: b.test\n    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}\n";
        let decoded = resources::decode_manifest(&yaml, false);
        assert!(decoded.errors.is_empty(), "{:?}", decoded.errors);
        let mut index = index::Index::new();
        for object in decoded.objects {
            index.handle(index::SourceEvent::Apply(object));
        }
        let mut options = convert_options(
            &<crate::cli::ConfigArgs as clap::FromArgMatches>::from_arg_matches(
                &<crate::cli::ConfigArgs as clap::Args>::augment_args(clap::Command::new("t"))
                    .get_matches_from(["t"]),
            )
            .unwrap_or_else(|e| panic!("{e}")),
            TlsCert::default(),
        );
        options.watch_ingress_without_class = true;
        let conversion = convert::convert(&index.snapshot(), &options);
        let rendered = render::render(&conversion.model);
        let table = render::OriginTable::new(&conversion.model, &rendered);
        let staging = std::path::Path::new("/var/lib/portcullis/staging");
        let bounded = model::Origin {
            kind: "Ingress",
            namespace: "default".into(),
            name: "bounded".into(),
        };
        let alert = "[ALERT]    (1) : config : Proxy 'https': unable to set SSL cipher list to 'ECDHE+AESGCM' for bind '0.0.0.0:443' at [/var/lib/portcullis/staging/haproxy.cfg:66].";
        let narrowed = narrow(alert, staging, &table);
        assert_eq!(narrowed.objects.keys().collect::<Vec<_>>(), [&bounded]);
    }
}
