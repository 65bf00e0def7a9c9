//! Converts a snapshot of cluster objects into the proxy model. Pure: no I/O, no clock;
//! the same snapshot and options always give the same model and diagnostics.

#![forbid(unsafe_code)]

mod affinity;
mod auth;
mod backend_settings;
mod blue_green;
mod cache;
pub mod class;
mod client_auth;
mod contribution;
mod conversion;
mod dependents;
mod diagnostic;
mod endpoints;
pub mod gateway;
mod ingress;
mod ingress_keys;
mod ingress_passthrough;
mod ingress_tcp;
pub mod key_docs;
mod key_match;
pub mod keys;
mod lookup;
mod merge;
mod names;
mod oauth;
mod options;
mod outcome;
mod parallel;
mod recent;
mod small_set;
mod tcp_services;
mod tls;

pub use cache::ConvertCache;
pub use conversion::{Conversion, Excluded, Exclusions, automatic_shards};
pub use diagnostic::{Diagnostic, one_line};
pub use gateway::status as gateway_status;
pub use names::{parse_host, parse_path};
pub use options::{ConvertOptions, ListenerPorts};

use model::TlsCert;

/// Converts a snapshot from scratch, keeping nothing for a next conversion.
pub fn convert(snapshot: &index::Snapshot, options: &ConvertOptions) -> Conversion {
    ConvertCache::one_shot().convert(snapshot, options)
}

/// As [`convert`], for a caller that gives the snapshot up: the objects only conversion
/// reads are freed before the merge settles (see [`ConvertCache::convert_given`]).
pub fn convert_given(snapshot: index::Snapshot, options: &ConvertOptions) -> Conversion {
    ConvertCache::one_shot().convert_given(snapshot, options)
}

/// Removes certificates HAProxy refused to load (same Secret, same content), so their
/// hosts fall back to the default certificate and nothing else is held back. Returns the
/// ones removed.
pub fn exclude_certificates(
    conversion: &mut Conversion,
    rejected: &std::collections::BTreeMap<model::CertId, TlsCert>,
) -> std::collections::BTreeSet<model::CertId> {
    let refused: Vec<model::CertId> = conversion
        .model
        .certs
        .iter()
        .filter(|(id, cert)| rejected.get(id) == Some(cert))
        .map(|(id, _)| id.clone())
        .collect();
    for id in &refused {
        conversion.model.certs.remove(id);
        let served: Vec<model::HostKey> = conversion
            .model
            .hosts
            .iter()
            .filter(|(_, host)| host.cert.as_ref() == Some(id))
            .map(|(key, _)| key.clone())
            .collect();
        for key in served {
            if let Some(host) = conversion.model.hosts.get_mut(&key) {
                host.cert = None;
            }
        }
        conversion.diagnostics.push(Diagnostic {
            object: resources::ObjectRef::new(resources::Kind::Secret, id.namespace.as_str(), id.name.as_str()),
            field: "data".to_owned(),
            message: "haproxy cannot load this certificate and key (do they match?); the default certificate is served instead".to_owned(),
        });
    }
    conversion.diagnostics.sort();
    refused.into_iter().collect()
}
