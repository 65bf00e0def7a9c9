//! BackendTLSPolicy: which policy a route's Service port takes, what it asks of HAProxy
//! (TLS toward the servers, verified against its CAs for one name), and its status.
//!
//! A policy naming the port (`sectionName`) takes precedence over one naming the whole
//! Service; among policies with the same target the oldest wins (then `namespace/name`),
//! and the others are `Conflicted`. A policy that cannot be honoured exactly (no usable
//! CA, a name HAProxy cannot check) withholds the port's servers, so its traffic is
//! answered 503: never sent without the verification the policy asks for.

use std::collections::BTreeSet;
use std::sync::Arc;

use model::{Backend, BackendTls, CertId, DnsName, SecretPem, Sni, TlsVerify};
use resources::backend_tls_policy::{
    BackendTlsPolicyTargetRefs, BackendTlsPolicyValidation,
    BackendTlsPolicyValidationSubjectAltNamesType as SanType,
};
use resources::{BackendTlsPolicy, Kind, Object, ObjectRef};

use crate::contribution::MergeOrder;
use crate::lookup::Recorder;
use crate::outcome::{Reason, Refusal};
use crate::tls::{encode_pem, pem_blocks};

/// What a policy asks of the connections to the servers, or why it cannot be honoured
/// (the `Accepted` condition's reason and message).
type Verification = Result<TlsVerify, Refusal>;

/// A policy's conditions: `Accepted` (`None` when it holds) and `ResolvedRefs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PolicyConditions {
    /// Why it is not accepted.
    pub(crate) refused: Option<Refusal>,
    /// The first CA reference that does not resolve.
    pub(crate) unresolved: Option<Refusal>,
}

/// The backend as the policies of its Service port make it, and every policy targeting
/// that port (`targeting`, for status). A backend without a policy is returned as it is.
pub(crate) fn apply(
    lookups: &mut Recorder<'_>,
    backend: Arc<Backend>,
    targeting: &mut BTreeSet<ObjectRef>,
) -> Arc<Backend> {
    let id = &backend.id;
    let policies = lookups.in_namespace(Kind::BackendTlsPolicy, &id.namespace);
    let mut section = Vec::new();
    let mut whole = Vec::new();
    for object in policies {
        let Object::BackendTlsPolicy(policy) = object else {
            continue;
        };
        for target in service_targets(policy) {
            if *target.name != *id.service {
                continue;
            }
            match target.section_name.as_deref() {
                Some(name) if name == &*id.port => section.push(policy),
                None => whole.push(policy),
                Some(_) => continue,
            }
            targeting.insert(object.object_ref());
        }
    }
    let winner = oldest(&section).or_else(|| oldest(&whole));
    let Some(policy) = winner else {
        return backend;
    };
    let mut changed = (*backend).clone();
    match verification(lookups, policy).0 {
        Ok(verify) => {
            // The policy's hostname is the SNI even where a subjectAltName is the name
            // verified (the specification's "certificate selection").
            let sni = DnsName::parse(&policy.spec.validation.hostname)
                .ok()
                .map(Sni::Fixed);
            let client_cert = changed
                .server_options
                .tls
                .as_ref()
                .and_then(|tls| tls.client_cert.clone());
            Arc::make_mut(&mut changed.server_options).tls = Some(BackendTls {
                verify,
                sni,
                client_cert,
            });
        }
        Err(_) => {
            // Its status says why; the connections it governs must fail, not go out
            // unverified.
            changed.servers.clear();
            let settings = changed.settings_mut();
            settings.named = None;
            settings.selector = None;
        }
    }
    Arc::new(changed)
}

/// A policy's `Accepted` and `ResolvedRefs` conditions, as of `lookups`.
pub(crate) fn conditions(
    lookups: &mut Recorder<'_>,
    policy: &BackendTlsPolicy,
) -> PolicyConditions {
    let (verify, unresolved) = verification(lookups, policy);
    let refused = match verify {
        Err(refusal) => Some(refusal),
        Ok(_) => conflict(lookups, policy),
    };
    PolicyConditions {
        refused,
        unresolved,
    }
}

/// The targetRefs naming a core Service (the only kind portcullis applies policies to).
fn service_targets(policy: &BackendTlsPolicy) -> impl Iterator<Item = &BackendTlsPolicyTargetRefs> {
    policy
        .spec
        .target_refs
        .iter()
        .filter(|target| target.group.is_empty() && target.kind == "Service")
}

/// The policy that takes precedence among `policies`: the oldest, then the first by
/// `namespace/name`.
fn oldest<'p>(policies: &[&'p Arc<BackendTlsPolicy>]) -> Option<&'p Arc<BackendTlsPolicy>> {
    policies.iter().copied().min_by_key(|policy| order(policy))
}

fn order(policy: &BackendTlsPolicy) -> MergeOrder {
    let object = ObjectRef::new(
        Kind::BackendTlsPolicy,
        policy.metadata.namespace.clone().unwrap_or_default(),
        policy.metadata.name.clone().unwrap_or_default(),
    );
    MergeOrder::of(policy.metadata.creation_timestamp.as_ref(), &object)
}

/// `Conflicted` when an older policy has one of this policy's targets (the same Service,
/// with the same `sectionName` or none).
fn conflict(lookups: &mut Recorder<'_>, policy: &BackendTlsPolicy) -> Option<Refusal> {
    let namespace = policy.metadata.namespace.clone().unwrap_or_default();
    let mine = order(policy);
    for object in lookups.in_namespace(Kind::BackendTlsPolicy, &namespace) {
        let Object::BackendTlsPolicy(other) = object else {
            continue;
        };
        if order(other) >= mine {
            continue;
        }
        for target in service_targets(policy) {
            let same = service_targets(other)
                .any(|o| o.name == target.name && o.section_name == target.section_name);
            if same {
                let port = target
                    .section_name
                    .as_deref()
                    .map(|s| format!(" port {s}"))
                    .unwrap_or_default();
                return Some(Refusal::new(
                    Reason::Conflicted,
                    format!(
                        "BackendTLSPolicy {}, which is older, already targets Service {}{port}; this policy is not applied there",
                        other.metadata.name.as_deref().unwrap_or_default(),
                        target.name
                    ),
                ));
            }
        }
    }
    None
}

/// What the policy asks of the connections, and the first CA reference that does not
/// resolve.
fn verification(
    lookups: &mut Recorder<'_>,
    policy: &BackendTlsPolicy,
) -> (Verification, Option<Refusal>) {
    let validation = &policy.spec.validation;
    let namespace = policy.metadata.namespace.clone().unwrap_or_default();
    let name = policy.metadata.name.clone().unwrap_or_default();
    let invalid = |message: String| (Err(Refusal::new(Reason::Invalid, message)), None);
    let hostname = match DnsName::parse(&validation.hostname) {
        Ok(hostname) => hostname,
        Err(why) => return invalid(format!("spec.validation.hostname: {why}")),
    };
    let verified = match verified_name(validation, hostname) {
        Ok(name) => name,
        Err(why) => return invalid(why),
    };
    let refs = validation
        .ca_certificate_refs
        .as_deref()
        .unwrap_or_default();
    let well_known = validation
        .well_known_ca_certificates
        .as_deref()
        .filter(|w| !w.is_empty());
    match (refs.is_empty(), well_known) {
        (true, Some("System")) => (
            Ok(TlsVerify::Policy {
                ca: None,
                hostname: verified,
            }),
            None,
        ),
        (true, Some(other)) => invalid(format!(
            "spec.validation.wellKnownCACertificates: {:?} is not known; portcullis knows System",
            crate::diagnostic::one_line(other)
        )),
        (true, None) => invalid(
            "spec.validation: caCertificateRefs or wellKnownCACertificates is required".to_owned(),
        ),
        (false, Some(_)) => invalid(
            "spec.validation: caCertificateRefs and wellKnownCACertificates exclude each other"
                .to_owned(),
        ),
        (false, None) => {
            let mut pem = String::new();
            let mut unresolved = None;
            for (index, reference) in refs.iter().enumerate() {
                let field = format!("spec.validation.caCertificateRefs[{index}]");
                let loaded = if reference.group.is_empty() && reference.kind == "ConfigMap" {
                    configmap_ca(lookups, &namespace, &reference.name)
                        .map_err(|why| Refusal::new(Reason::InvalidCaCertificateRef, why))
                } else {
                    Err(Refusal::new(
                        Reason::InvalidKind,
                        format!(
                            "{} {:?} is not supported: a CA reference must be a core ConfigMap",
                            crate::diagnostic::one_line(&reference.group),
                            crate::diagnostic::one_line(&reference.kind)
                        ),
                    ))
                };
                match loaded {
                    Ok(bundle) => pem.push_str(&bundle),
                    Err(refusal) => {
                        unresolved.get_or_insert(Refusal::new(
                            refusal.reason,
                            format!("{field}: {}", refusal.message),
                        ));
                    }
                }
            }
            let verify = if pem.is_empty() {
                Err(Refusal::new(
                    Reason::NoValidCaCertificate,
                    "no CA certificate reference is usable; the Service's traffic is refused (503) rather than sent unverified",
                ))
            } else {
                Ok(TlsVerify::Policy {
                    ca: Some(SecretPem {
                        secret: CertId { namespace, name },
                        pem,
                    }),
                    hostname: verified,
                })
            };
            (verify, unresolved)
        }
    }
}

/// The one name the servers' certificates must carry: the hostname, or the one
/// subjectAltName of type Hostname. HAProxy's `verifyhost` checks a single DNS name, so
/// URI names, or several names, cannot be checked as the specification asks.
fn verified_name(
    validation: &BackendTlsPolicyValidation,
    hostname: DnsName,
) -> Result<DnsName, String> {
    let names = validation.subject_alt_names.as_deref().unwrap_or_default();
    match names {
        [] => Ok(hostname),
        [only] if only.r#type == SanType::Hostname => {
            let name = only.hostname.as_deref().unwrap_or_default();
            DnsName::parse(name).map_err(|why| {
                format!("spec.validation.subjectAltNames[0].hostname: {why}; HAProxy checks one exact host name")
            })
        }
        [only] => Err(format!(
            "spec.validation.subjectAltNames[0]: a URI name ({:?}) cannot be checked by HAProxy, which verifies one host name; the Service's traffic is refused (503) rather than sent without the check",
            crate::diagnostic::one_line(only.uri.as_deref().unwrap_or_default())
        )),
        _ => Err(format!(
            "spec.validation.subjectAltNames: {} names cannot be checked by HAProxy, which verifies one host name; the Service's traffic is refused (503) rather than sent without the check",
            names.len()
        )),
    }
}

/// The `ca.crt` of a ConfigMap in the policy's namespace: X.509 certificates in PEM.
pub(crate) fn configmap_ca(
    lookups: &mut Recorder<'_>,
    namespace: &str,
    name: &str,
) -> Result<String, String> {
    let object = ObjectRef::new(Kind::ConfigMap, namespace, name);
    let Some(Object::ConfigMap(map)) = lookups.get(object) else {
        return Err(format!("ConfigMap {namespace}/{name} not found"));
    };
    let bundle = map
        .data
        .as_ref()
        .and_then(|data| data.get(resources::CA_CONFIG_MAP_KEY))
        .filter(|value| !value.trim().is_empty())
        .ok_or_else(|| format!("ConfigMap {namespace}/{name} has no ca.crt"))?;
    let blocks = pem_blocks(bundle.as_bytes())
        .map_err(|e| format!("ConfigMap {namespace}/{name}: ca.crt is not PEM: {e}"))?;
    if blocks.is_empty() || blocks.iter().any(|p| p.label != "CERTIFICATE") {
        return Err(format!(
            "ConfigMap {namespace}/{name}: ca.crt must hold only CERTIFICATE blocks"
        ));
    }
    let mut pem = String::new();
    for block in &blocks {
        block.parse_x509().map_err(|e| {
            format!("ConfigMap {namespace}/{name}: ca.crt is not a valid X.509 certificate: {e}")
        })?;
        pem.push_str(&encode_pem(&block.label, &block.contents));
    }
    Ok(pem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_hostname_san_is_verified_and_uri_or_several_are_refused() {
        let hostname = || DnsName::parse("abc.example.com").unwrap_or_else(|e| panic!("{e}"));
        let san = |kind: SanType, value: &str| {
            resources::backend_tls_policy::BackendTlsPolicyValidationSubjectAltNames {
                hostname: (kind == SanType::Hostname).then(|| value.to_owned()),
                uri: (kind == SanType::Uri).then(|| value.to_owned()),
                r#type: kind,
            }
        };
        let validation = |sans: Vec<_>| BackendTlsPolicyValidation {
            hostname: "abc.example.com".into(),
            subject_alt_names: Some(sans),
            ..BackendTlsPolicyValidation::default()
        };
        assert_eq!(
            verified_name(&validation(vec![]), hostname()).map(|n| n.to_string()),
            Ok("abc.example.com".to_owned())
        );
        assert_eq!(
            verified_name(
                &validation(vec![san(SanType::Hostname, "other.example.com")]),
                hostname()
            )
            .map(|n| n.to_string()),
            Ok("other.example.com".to_owned())
        );
        for refused in [
            vec![san(SanType::Uri, "spiffe://abc.example.com/x")],
            vec![
                san(SanType::Hostname, "a.example.com"),
                san(SanType::Hostname, "b.example.com"),
            ],
            vec![san(SanType::Hostname, "*.example.com")],
        ] {
            assert!(verified_name(&validation(refused), hostname()).is_err());
        }
    }
}
