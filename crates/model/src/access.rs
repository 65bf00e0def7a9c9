//! Who may reach a path (source address allow and deny lists) and how hard one client
//! may press on a backend (per-client request rate and concurrent connections).

use std::fmt;
use std::sync::Arc;

use crate::{Cidr, HeaderName};

/// The name of an address list's files, derived from what set the list (the object and
/// the key), never from its content: a changed list keeps its files, so HAProxy takes the
/// change over the runtime API without a reload.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ListName(String);

impl ListName {
    /// The name of the list `key` sets on the object `identity` (any text: it is hashed),
    /// such as `allow-3f2a...`; `key` is a key name (letters and `-`).
    pub fn of(key: &str, identity: &str) -> Self {
        let kind: String = key
            .chars()
            .filter(|c| c.is_ascii_lowercase() || *c == '-')
            .take(40)
            .collect();
        let hash = xxhash_rust::xxh3::xxh3_64(format!("{key}\n{identity}").as_bytes());
        Self(format!("{kind}-{hash:016x}"))
    }

    /// The name, of lowercase letters, digits and `-`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ListName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Address blocks that match, except the blocks among them that are exceptions
/// (haproxy-ingress's `!` entries).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AddressRule {
    /// Names the rule's two files: the blocks, and the exceptions.
    pub name: ListName,
    /// The blocks, sorted, without duplicates.
    pub ranges: Arc<[Cidr]>,
    /// The exceptions, sorted, without duplicates.
    pub exceptions: Arc<[Cidr]>,
}

impl AddressRule {
    /// A rule of these blocks and exceptions, each sorted and without duplicates.
    pub fn new(name: ListName, mut ranges: Vec<Cidr>, mut exceptions: Vec<Cidr>) -> Self {
        ranges.sort_unstable();
        ranges.dedup();
        exceptions.sort_unstable();
        exceptions.dedup();
        Self {
            name,
            ranges: ranges.into(),
            exceptions: exceptions.into(),
        }
    }
}

/// Which client addresses a path answers; the others get 403.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SourceAccess {
    /// Only these addresses are served (when set).
    pub allow: Option<AddressRule>,
    /// These addresses are refused, even when allowed.
    pub deny: Option<AddressRule>,
    /// The client address is this header's last address (set by a trusted proxy in
    /// front), when the request has one; the connection's otherwise.
    pub source_header: Option<HeaderName>,
    /// A list could not be read: every client is refused rather than the path served
    /// without the protection it asked for.
    pub refuse_all: bool,
}

impl SourceAccess {
    /// Whether it refuses nobody.
    pub fn is_open(&self) -> bool {
        self.allow.is_none() && self.deny.is_none() && !self.refuse_all
    }

    /// As a rule holds it: nothing when it refuses nobody.
    pub fn unless_open(self) -> Option<Box<Self>> {
        (!self.is_open()).then(|| Box::new(self))
    }
}

/// A status code HAProxy can answer a refused request with by itself (it has a built-in
/// page for each): 400, 401, 403, 404, 405, 407, 408, 410, 413, 425, 429, 500 to 504.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DenyStatus(u16);

impl DenyStatus {
    /// Codes HAProxy 2.6 takes in `deny_status` (others are refused by `haproxy -c`).
    pub const ACCEPTED: [u16; 16] = [
        400, 401, 403, 404, 405, 407, 408, 410, 413, 425, 429, 500, 501, 502, 503, 504,
    ];
    /// 429 Too Many Requests.
    pub const TOO_MANY_REQUESTS: DenyStatus = DenyStatus(429);

    /// Checks a code.
    pub fn new(code: u16) -> Result<Self, String> {
        if Self::ACCEPTED.contains(&code) {
            Ok(Self(code))
        } else {
            Err(format!(
                "{code} is not one of the status codes HAProxy answers by itself ({})",
                Self::ACCEPTED.map(|c| c.to_string()).join(", ")
            ))
        }
    }

    /// The code.
    pub fn code(self) -> u16 {
        self.0
    }
}

/// Per-client limits of a backend, counted in a stick table of the backend.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClientLimits {
    /// Requests per second one client address may send.
    pub rps: Option<u32>,
    /// Concurrent connections one client address may hold.
    pub connections: Option<u32>,
    /// Addresses no limit applies to.
    pub exempt: Vec<Cidr>,
    /// The answer to a request over `rps`.
    pub rps_status: DenyStatus,
    /// The answer to a request over `connections`.
    pub connections_status: DenyStatus,
}

impl Default for ClientLimits {
    fn default() -> Self {
        Self {
            rps: None,
            connections: None,
            exempt: Vec::new(),
            rps_status: DenyStatus::TOO_MANY_REQUESTS,
            connections_status: DenyStatus::TOO_MANY_REQUESTS,
        }
    }
}

impl ClientLimits {
    /// Whether any limit applies.
    pub fn is_active(&self) -> bool {
        self.rps.is_some() || self.connections.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_names_follow_the_setter_not_the_content() {
        let a = ListName::of("allowlist-source-range", "Ingress/web/app");
        assert_eq!(a, ListName::of("allowlist-source-range", "Ingress/web/app"));
        assert_ne!(a, ListName::of("denylist-source-range", "Ingress/web/app"));
        assert_ne!(
            a,
            ListName::of("allowlist-source-range", "Ingress/web/other")
        );
        assert!(a.as_str().starts_with("allowlist-source-range-"), "{a}");
        assert!(
            a.as_str()
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        );
    }

    #[test]
    fn rules_are_sorted_and_deduplicated_and_statuses_checked() {
        let cidr = |t: &str| Cidr::parse(t).unwrap_or_else(|e| panic!("{e}"));
        let rule = AddressRule::new(
            ListName::of("allowlist-source-range", "x"),
            vec![cidr("10.0.0.0/8"), cidr("::1"), cidr("10.0.0.0/8")],
            vec![],
        );
        assert_eq!(rule.ranges.len(), 2);
        assert_eq!(DenyStatus::new(503).map(DenyStatus::code), Ok(503));
        assert!(DenyStatus::new(418).is_err());
        assert!(SourceAccess::default().is_open());
    }
}
