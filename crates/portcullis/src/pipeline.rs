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

    /// The Gateway API status of every object of ours, as of the last reconciliation.
    pub fn gateway_status(&self, snapshot: &Snapshot) -> convert::gateway_status::StatusReport {
        self.convert_cache.gateway_status(snapshot)
    }

    /// Converts and renders a snapshot, leaving out certificates HAProxy refused.
    pub fn reconcile(
        &mut self,
        snapshot: &Snapshot,
        refused_certificates: &BTreeMap<CertId, TlsCert>,
    ) -> Result<Reconciled, Divergence> {
        let mut conversion = self.convert_cache.convert(snapshot, &self.options);
        let excluded_certificates =
            convert::exclude_certificates(&mut conversion, refused_certificates);
        let rendered = self.render_cache.render(&conversion.model);
        let reconciled = Reconciled {
            conversion,
            rendered,
            excluded_certificates,
        };
        if self.verify {
            let full =
                Reconciler::new(self.options.clone()).reconcile(snapshot, refused_certificates)?;
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
        watch_ingress_without_class: args.watch_ingress_without_class,
        global_configmap: args.configmap.clone(),
        default_ssl_certificate: args.default_ssl_certificate.clone(),
        fallback_certificate,
        bind_address: args.bind_address,
        http_port: args.http_port,
        https_port: args.https_port,
        backend_shards: args.backend_shards,
    }
}

/// Names the objects behind a configuration HAProxy rejected: for each `[file:line]` in
/// its output, the section that line belongs to (read from the rendered file HAProxy
/// checked a copy of), and the objects that made it.
pub fn blame(output: &str, model: &model::ProxyModel, rendered: &RenderedConfig) -> Vec<String> {
    let mut culprits = std::collections::BTreeSet::new();
    for location in output
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
        // HAProxy names the staged copy; the rendered file is the one whose relative path
        // ends that name.
        let file = file.trim();
        let Some(text) = rendered
            .files
            .iter()
            .find(|(path, _)| file.ends_with(&format!("/{path}")))
            .map(|(_, rendered)| rendered.text())
        else {
            continue;
        };
        let section = text
            .lines()
            .take(line)
            .filter_map(|l| l.strip_prefix("backend "))
            .last();
        if let Some(section) = section {
            for backend in model
                .backends
                .values()
                .filter(|b| b.id.section_name() == section)
            {
                culprits.extend(backend.origins.iter().map(ToString::to_string));
            }
        }
    }
    for cert in model.certs.keys() {
        if output.contains(&cert.file_name()) {
            culprits.insert(format!("Secret {}/{}", cert.namespace, cert.name));
        }
    }
    culprits.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blame_names_the_objects_behind_the_rejected_section_and_certificate() {
        let id = model::BackendId {
            namespace: "web".into(),
            service: "app".into(),
            port: "80".into(),
        };
        let origin = model::Origin {
            kind: "Ingress",
            namespace: "web".into(),
            name: "site".into(),
        };
        let mut proxy = model::ProxyModel::default();
        proxy.backends.insert(
            id.clone(),
            model::Backend {
                id,
                servers: Vec::new(),
                balance: model::Balance::RoundRobin,
                timeout_connect: model::HaproxyDuration::parse("5s")
                    .unwrap_or_else(|_| unreachable!()),
                timeout_server: model::HaproxyDuration::parse("50s")
                    .unwrap_or_else(|_| unreachable!()),
                origins: vec![origin],
            },
        );
        let cert = CertId {
            namespace: "web".into(),
            name: "tls".into(),
        };
        proxy.certs.insert(cert, TlsCert::default());
        let rendered = render::render(&proxy);
        let output = "[ALERT] parsing [/var/lib/portcullis/staging/backends/shard-000.cfg:5] : unknown keyword\n\
                      [ALERT] certs/web_tls.pem: no private key";
        assert_eq!(
            blame(output, &proxy, &rendered),
            ["Ingress web/site", "Secret web/tls"]
        );
    }
}
