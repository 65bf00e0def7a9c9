//! Keys of DNS resolution: HAProxy `resolvers` sections and the backends that use them.

use std::net::{IpAddr, SocketAddr};

use model::{DnsName, HaproxyDuration, Resolver, Word};

use super::parse::parse_duration;
use super::{Applied, DURATION_VALUES, Key, Scope};

/// `dns-resolvers`.
pub static DNS_RESOLVERS: Key<Vec<Resolver>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "dns-resolvers",
    scope: Scope::Global,
    default: "",
    accepted_values: "one resolver a line, name=ip[:port],ip[:port]... such as `kubernetes=10.96.0.10:53`; a name server without a port is asked on port 53; empty lines are skipped",
    parse: parse_resolvers,
    doc: "HAProxy `resolvers` sections, each with its name servers (`ns01`, `ns02`, ... in the order given). A backend uses one with `use-resolver`.",
    applied: Applied::Reload,
    differs: "haproxy-ingress skips a misconfigured line and accepts host names as name servers; portcullis refuses the whole value (reported, no resolver) and takes IP addresses only, since HAProxy reads name servers once at start.",
};
/// `dns-accepted-payload-size`.
pub static DNS_ACCEPTED_PAYLOAD_SIZE: Key<u16> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "dns-accepted-payload-size",
    scope: Scope::Global,
    default: "8192",
    accepted_values: "a whole number of bytes from `512` to `65535`",
    parse: parse_payload_size,
    doc: "The largest DNS answer announced to the name servers (`accepted_payload_size` of every `resolvers` section).",
    applied: Applied::Reload,
    differs: "",
};
/// `dns-hold-obsolete`.
pub static DNS_HOLD_OBSOLETE: Key<HaproxyDuration> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "dns-hold-obsolete",
    scope: Scope::Global,
    default: "0s",
    accepted_values: DURATION_VALUES,
    parse: parse_duration,
    doc: "How long an address that a new answer no longer lists keeps its server (`hold obsolete`).",
    applied: Applied::Reload,
    differs: "",
};
/// `dns-hold-valid`.
pub static DNS_HOLD_VALID: Key<HaproxyDuration> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "dns-hold-valid",
    scope: Scope::Global,
    default: "1s",
    accepted_values: DURATION_VALUES,
    parse: parse_duration,
    doc: "How long an answer is used before the name is asked again (`hold valid`); keep it in line with the cluster DNS's cache.",
    applied: Applied::Reload,
    differs: "",
};
/// `dns-timeout-retry`.
pub static DNS_TIMEOUT_RETRY: Key<HaproxyDuration> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "dns-timeout-retry",
    scope: Scope::Global,
    default: "1s",
    accepted_values: DURATION_VALUES,
    parse: parse_duration,
    doc: "Time between two queries when no valid answer came (`timeout retry`).",
    applied: Applied::Reload,
    differs: "",
};
/// `dns-cluster-domain`.
pub static DNS_CLUSTER_DOMAIN: Key<DnsName> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "dns-cluster-domain",
    scope: Scope::Global,
    default: "cluster.local",
    accepted_values: "a DNS domain such as `cluster.local`",
    parse: DnsName::parse,
    doc: "The cluster's DNS domain: a backend with `use-resolver` resolves `<service>.<namespace>.svc.<domain>`.",
    applied: Applied::Reload,
    differs: "",
};
/// `use-resolver`.
pub static USE_RESOLVER: Key<Option<Word>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "use-resolver",
    scope: Scope::Backend,
    default: "",
    accepted_values: "the name of a `dns-resolvers` resolver, such as `kubernetes`",
    parse: parse_resolver_name,
    doc: "HAProxy finds the backend's servers itself by resolving `<service>.<namespace>.svc.<dns-cluster-domain>` through this resolver (`server-template` with as many servers as the service has endpoints, at least one), instead of the controller listing its endpoints; use it with headless Services, whose name resolves to the pods. A name no `dns-resolvers` line declares is reported and the backend's endpoints are used.",
    applied: Applied::Reload,
    differs: "",
};

fn parse_resolver_name(text: &str) -> Result<Option<Word>, String> {
    match text.trim() {
        "" => Ok(None),
        name => Word::parse(name).map(Some),
    }
}

fn parse_payload_size(text: &str) -> Result<u16, String> {
    match text.trim().parse::<u16>() {
        Ok(size) if size >= 512 => Ok(size),
        _ => Err(format!(
            "'{}' is not a whole number from 512 to 65535",
            text.trim().escape_debug()
        )),
    }
}

fn parse_resolvers(text: &str) -> Result<Vec<Resolver>, String> {
    let mut resolvers: Vec<Resolver> = Vec::new();
    for line in text.lines().map(str::trim).filter(|line| !line.is_empty()) {
        let invalid = |why: &str| format!("resolver line '{}': {why}", line.escape_debug());
        let Some((name, servers)) = line.split_once('=') else {
            return Err(invalid("not name=ip[:port],..."));
        };
        let name = Word::parse(name.trim()).map_err(|why| invalid(&why))?;
        if resolvers.iter().any(|r| r.name == name) {
            return Err(invalid("the name is declared twice"));
        }
        let nameservers = servers
            .split(',')
            .map(str::trim)
            .filter(|server| !server.is_empty())
            .map(|server| {
                server
                    .parse::<SocketAddr>()
                    .or_else(|_| server.parse::<IpAddr>().map(|ip| SocketAddr::new(ip, 53)))
                    .ok()
                    .filter(|address| address.port() != 0)
                    .ok_or_else(|| {
                        invalid(&format!(
                            "'{}' is not an IP address with an optional port",
                            server.escape_debug()
                        ))
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if nameservers.is_empty() {
            return Err(invalid("no name server"));
        }
        resolvers.push(Resolver { name, nameservers });
    }
    Ok(resolvers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_haproxy_ingress_s() {
        assert!(DNS_RESOLVERS.default_value().is_empty());
        assert_eq!(DNS_ACCEPTED_PAYLOAD_SIZE.default_value(), 8192);
        assert_eq!(DNS_HOLD_OBSOLETE.default_value().as_str(), "0s");
        assert_eq!(DNS_HOLD_VALID.default_value().as_str(), "1s");
        assert_eq!(DNS_TIMEOUT_RETRY.default_value().as_str(), "1s");
        assert_eq!(
            DNS_CLUSTER_DOMAIN.default_value().to_string(),
            "cluster.local"
        );
        assert_eq!(USE_RESOLVER.default_value(), None);
    }

    #[test]
    fn resolver_lines_parse_as_haproxy_ingress_s_and_bad_ones_say_why() {
        let parsed = (DNS_RESOLVERS.parse)(
            "\nk8s1=10.0.1.11\nk8s2=10.0.1.21:53,10.0.1.22:53,\n\nk8s3=10.0.1.31:10053,[fd00::1]:10053\n",
        )
        .unwrap_or_default();
        let shown: Vec<String> = parsed
            .iter()
            .map(|r| {
                let servers: Vec<String> = r.nameservers.iter().map(ToString::to_string).collect();
                format!("{}={}", r.name, servers.join(","))
            })
            .collect();
        assert_eq!(
            shown,
            [
                "k8s1=10.0.1.11:53",
                "k8s2=10.0.1.21:53,10.0.1.22:53",
                "k8s3=10.0.1.31:10053,[fd00::1]:10053"
            ]
        );
        assert_eq!(
            (DNS_RESOLVERS.parse)("k8s=kube-dns:53"),
            Err("resolver line 'k8s=kube-dns:53': 'kube-dns:53' is not an IP address with an optional port".into())
        );
        assert_eq!(
            (DNS_RESOLVERS.parse)("10.0.0.1"),
            Err("resolver line '10.0.0.1': not name=ip[:port],...".into())
        );
        assert!((DNS_RESOLVERS.parse)("a=10.0.0.1\na=10.0.0.2").is_err());
        assert_eq!(
            (DNS_ACCEPTED_PAYLOAD_SIZE.parse)("100"),
            Err("'100' is not a whole number from 512 to 65535".into())
        );
        assert!((USE_RESOLVER.parse)("bad name").is_err());
    }
}
