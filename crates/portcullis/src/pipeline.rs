//! The pure middle of the pipeline, shared by `run`, `render` and `check`.

use convert::ConvertOptions;

use crate::cli::ConfigArgs;

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
/// its output, the section that line belongs to, and the objects that made it.
pub fn blame(output: &str, model: &model::ProxyModel) -> Vec<String> {
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
        let Ok(text) = std::fs::read_to_string(file.trim()) else {
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
