//! Object names and namespaces, checked by the rules the Kubernetes API server applies.

use std::fmt;

use crate::object::Kind;

/// A rule a name must follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameRule {
    /// An RFC 1123 label: namespaces.
    Dns1123Label,
    /// An RFC 1123 subdomain: the names of most kinds.
    Dns1123Subdomain,
    /// An RFC 1035 label (an RFC 1123 label starting with a letter): Service names, which
    /// become DNS labels.
    Dns1035Label,
}

impl NameRule {
    /// The rule for the names of a kind.
    pub(crate) fn for_name_of(kind: Kind) -> Self {
        match kind {
            Kind::Namespace => NameRule::Dns1123Label,
            Kind::Service => NameRule::Dns1035Label,
            Kind::EndpointSlice
            | Kind::Endpoints
            | Kind::Secret
            | Kind::ConfigMap
            | Kind::IngressClass
            | Kind::Ingress
            | Kind::GatewayClass
            | Kind::Gateway
            | Kind::HttpRoute
            | Kind::GrpcRoute
            | Kind::TlsRoute
            | Kind::TcpRoute
            | Kind::UdpRoute
            | Kind::BackendTlsPolicy
            | Kind::ListenerSet
            | Kind::ReferenceGrant
            | Kind::Pod => NameRule::Dns1123Subdomain,
        }
    }

    /// The rule for namespaces.
    pub(crate) const NAMESPACE: NameRule = NameRule::Dns1123Label;

    /// Whether `value` follows the rule.
    pub(crate) fn allows(self, value: &str) -> bool {
        let max_len = match self {
            NameRule::Dns1123Subdomain => 253,
            NameRule::Dns1123Label | NameRule::Dns1035Label => 63,
        };
        if value.is_empty() || value.len() > max_len {
            return false;
        }
        match self {
            NameRule::Dns1123Label => is_label(value),
            NameRule::Dns1035Label => {
                value.starts_with(|c: char| c.is_ascii_lowercase()) && is_label(value)
            }
            NameRule::Dns1123Subdomain => value.split('.').all(is_label),
        }
    }

    fn requirement(self) -> &'static str {
        match self {
            NameRule::Dns1123Label => {
                "a DNS-1123 label: at most 63 lower-case letters, digits or '-', starting and ending with a letter or digit"
            }
            NameRule::Dns1123Subdomain => {
                "a DNS-1123 subdomain: at most 253 characters, dot-separated labels of lower-case letters, digits or '-', each starting and ending with a letter or digit"
            }
            NameRule::Dns1035Label => {
                "a DNS-1035 label: at most 63 lower-case letters, digits or '-', starting with a letter and ending with a letter or digit"
            }
        }
    }
}

/// One RFC 1123 label, its length not checked.
fn is_label(label: &str) -> bool {
    let bytes = label.as_bytes();
    let alphanumeric = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    bytes.first().is_some_and(alphanumeric)
        && bytes.last().is_some_and(alphanumeric)
        && bytes.iter().all(|b| alphanumeric(b) || *b == b'-')
}

/// A name or namespace that breaks its rule: which field, the value (shown escaped and
/// shortened), and the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InvalidName<'a> {
    /// The field, e.g. `metadata.namespace`.
    pub field: &'static str,
    /// The offending value, as read.
    pub value: &'a str,
    /// The rule it breaks.
    pub rule: NameRule,
}

/// How much of an invalid value a report shows: enough to find it, not a whole file.
const SHOWN_CHARS: usize = 80;

impl fmt::Display for InvalidName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown: String = self.value.chars().take(SHOWN_CHARS).collect();
        write!(f, "{} \"{}\"", self.field, shown.escape_debug())?;
        if shown.len() < self.value.len() {
            write!(f, "... ({} bytes)", self.value.len())?;
        }
        write!(f, " is invalid: it must be {}", self.rule.requirement())
    }
}

/// Checks `value` for `field` by `rule`.
pub(crate) fn check_name<'a>(
    field: &'static str,
    value: &'a str,
    rule: NameRule,
) -> Result<(), InvalidName<'a>> {
    if rule.allows(value) {
        Ok(())
    } else {
        Err(InvalidName { field, value, rule })
    }
}

/// Whether `value` is a DNS-1123 subdomain, as the API server checks most object names
/// and the Gateway API its `SectionName`s (a listener's or a rule's name).
pub fn is_dns1123_subdomain(value: &str) -> bool {
    NameRule::Dns1123Subdomain.allows(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_subdomains_and_service_names_follow_the_api_server() {
        let label = NameRule::Dns1123Label;
        let subdomain = NameRule::Dns1123Subdomain;
        let service = NameRule::Dns1035Label;
        for valid in ["a", "0", "web", "team-1", "9lives", "a".repeat(63).as_str()] {
            assert!(label.allows(valid), "{valid}");
        }
        for invalid in [
            "",
            "-a",
            "a-",
            "A",
            "a.b",
            "a_b",
            "..",
            "../../..",
            "a\nb",
            "é",
            "a".repeat(64).as_str(),
        ] {
            assert!(!label.allows(invalid), "{invalid:?}");
        }
        for valid in [
            "a.b",
            "my-app.v1",
            "0.0",
            vec!["a".repeat(63); 3].join(".").as_str(),
        ] {
            assert!(subdomain.allows(valid), "{valid}");
        }
        for invalid in [
            "a..b",
            ".a",
            "a.",
            "a.-b",
            "A.b",
            "a/b",
            "a".repeat(254).as_str(),
        ] {
            assert!(!subdomain.allows(invalid), "{invalid:?}");
        }
        assert!(service.allows("web-1"));
        assert!(
            !service.allows("1web"),
            "a Service name starts with a letter"
        );
        assert!(!service.allows("a.b"));
    }

    #[test]
    fn a_report_escapes_and_shortens_the_value() {
        let long = format!("x\n{}", "y".repeat(200));
        let Err(invalid) = check_name("metadata.name", &long, NameRule::Dns1123Subdomain) else {
            panic!("accepted");
        };
        let shown = invalid.to_string();
        assert!(!shown.contains('\n'), "{shown}");
        assert!(shown.starts_with("metadata.name \"x\\nyyy"), "{shown}");
        assert!(shown.contains("... (202 bytes) is invalid"), "{shown}");
    }
}
