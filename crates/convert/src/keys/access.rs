//! Keys of access control: source address allow and deny lists per path, and per-client
//! request rate and connection limits per backend.

use model::{Cidr, DenyStatus, HeaderName};

use super::parse::parse_optional_header;
use super::{Applied, Key, Scope};

/// The blocks of an address list and its exceptions (entries written `!<block>`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AddressEntries {
    /// The blocks.
    pub ranges: Vec<Cidr>,
    /// The exceptions.
    pub exceptions: Vec<Cidr>,
}

const ADDRESS_LIST: &str = "IPv4 or IPv6 addresses or address blocks separated by commas, spaces or newlines, such as `10.0.0.0/8, 192.168.1.7, 2001:db8::/32`; an entry written `!10.1.0.0/16` is an exception; up to 100000 entries; empty for none";
const FAILS_CLOSED: &str = "A value with any entry that is not an address or block is reported and the paths it applies to refuse every client (403) until it is fixed: neither the rest of the list nor a wider layer's value is used, so a typo never opens a path.";

/// `allowlist-source-range`.
pub static ALLOWLIST_SOURCE_RANGE: Key<AddressEntries> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "allowlist-source-range",
    scope: Scope::Path,
    default: "",
    accepted_values: ADDRESS_LIST,
    parse: parse_address_list,
    doc: "Only clients whose address is in the list are served; the others get 403, and so do the list's exceptions. The list is kept in a file HAProxy reads (thousands of entries are fine): a change of its entries goes live, setting or removing the key reloads.",
    applied: Applied::Live,
    differs: FAILS_CLOSED,
};
/// `whitelist-source-range`.
pub static WHITELIST_SOURCE_RANGE: Key<AddressEntries> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "whitelist-source-range",
    scope: Scope::Path,
    default: "",
    accepted_values: ADDRESS_LIST,
    parse: parse_address_list,
    doc: "Deprecated name of `allowlist-source-range`, reported as such; ignored when `allowlist-source-range` is set.",
    applied: Applied::Live,
    differs: FAILS_CLOSED,
};
/// `denylist-source-range`.
pub static DENYLIST_SOURCE_RANGE: Key<AddressEntries> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "denylist-source-range",
    scope: Scope::Path,
    default: "",
    accepted_values: ADDRESS_LIST,
    parse: parse_address_list,
    doc: "Clients whose address is in the list get 403, except the list's exceptions. With an allow list too, a client must be allowed and not denied. Kept in a file like the allow list: a change of its entries goes live, setting or removing the key reloads.",
    applied: Applied::Live,
    differs: FAILS_CLOSED,
};
/// `allowlist-source-header`.
pub static ALLOWLIST_SOURCE_HEADER: Key<Option<HeaderName>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "allowlist-source-header",
    scope: Scope::Path,
    default: "",
    accepted_values: "a header name of letters, digits and dashes, such as `X-Real-IP`, or empty",
    parse: parse_optional_header,
    doc: "The allow and deny lists compare the last address of this request header instead of the connection's (which is used when the request has no such address). Only a header a trusted proxy in front sets is safe: `real-ip-hdr` (X-Real-IP by default) is, since HAProxy replaces it unless the client is in `forwardfor-trusted-cidrs`; any other header is whatever the client sent.",
    applied: Applied::Reload,
    differs: "haproxy-ingress changes the request's source address (`set-src`) for the whole backend; here only the lists read the header, and logs and X-Forwarded-For keep the connection's address.",
};
/// `limit-rps`.
pub static LIMIT_RPS: Key<Option<u32>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "limit-rps",
    scope: Scope::Backend,
    default: "",
    accepted_values: "a whole number from `1` to `1000000`; `0` or empty for no limit",
    parse: parse_limit,
    doc: "Requests per second one client address may send to the backend; above it, requests are answered `limit-req-status-code` (429). Counted per HAProxy process: each replica counts on its own, and the counts start again at every reload.",
    applied: Applied::Reload,
    differs: "haproxy-ingress counts new connections per second (`conn_rate`), which lets a keep-alive client through; here requests are counted (`http_req_rate`), as the name says.",
};
/// `limit-connections`.
pub static LIMIT_CONNECTIONS: Key<Option<u32>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "limit-connections",
    scope: Scope::Backend,
    default: "",
    accepted_values: "a whole number from `1` to `1000000`; `0` or empty for no limit",
    parse: parse_limit,
    doc: "Requests one client address may have in progress at once on the backend; above it, requests are answered `limit-conn-status-code` (429). Per replica, like `limit-rps`.",
    applied: Applied::Reload,
    differs: "",
};
/// `limit-whitelist`.
pub static LIMIT_WHITELIST: Key<Vec<Cidr>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "limit-whitelist",
    scope: Scope::Backend,
    default: "",
    accepted_values: "up to 1024 IPv4 or IPv6 addresses or address blocks separated by commas, spaces or newlines, such as `10.0.0.0/8, 2001:db8::/32`; empty for none",
    parse: parse_exempt_list,
    doc: "Client addresses `limit-rps` and `limit-connections` do not apply to (a NAT or a proxy many users share).",
    applied: Applied::Reload,
    differs: "",
};
/// `limit-req-status-code`.
pub static LIMIT_REQ_STATUS_CODE: Key<DenyStatus> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "limit-req-status-code",
    scope: Scope::Backend,
    default: "429",
    accepted_values: "one of `400`, `401`, `403`, `404`, `405`, `407`, `408`, `410`, `413`, `425`, `429`, `500`, `501`, `502`, `503`, `504`",
    parse: parse_deny_status,
    doc: "The status of a request over `limit-rps`.",
    applied: Applied::Reload,
    differs: "haproxy-ingress always answers 429 and has no such key; the name is ingress-nginx's (whose default is 503).",
};
/// `limit-conn-status-code`.
pub static LIMIT_CONN_STATUS_CODE: Key<DenyStatus> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "limit-conn-status-code",
    scope: Scope::Backend,
    default: "429",
    accepted_values: "one of `400`, `401`, `403`, `404`, `405`, `407`, `408`, `410`, `413`, `425`, `429`, `500`, `501`, `502`, `503`, `504`",
    parse: parse_deny_status,
    doc: "The status of a request over `limit-connections`.",
    applied: Applied::Reload,
    differs: "haproxy-ingress always answers 429 and has no such key; the name is ingress-nginx's (whose default is 503).",
};

/// Deprecated key names, with the key that replaces each.
pub(crate) const DEPRECATED: [(&str, &str); 1] =
    [("whitelist-source-range", "allowlist-source-range")];

/// Keys whose invalid value must not fall back to a wider layer's or to the default
/// (which would serve without the protection asked for).
pub(crate) const FAIL_CLOSED: [&str; 3] = [
    "allowlist-source-range",
    "whitelist-source-range",
    "denylist-source-range",
];

/// At most this many entries in an address list.
const MAX_ADDRESSES: usize = 100_000;
/// At most this many entries in `limit-whitelist` (printed in the backend section).
const MAX_EXEMPT: usize = 1024;
/// How many bad entries a message quotes.
const QUOTED_ERRORS: usize = 3;

fn entries(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|entry| !entry.is_empty())
}

/// Each entry parsed, with whether it is an exception (`!`), or a message quoting the
/// first bad entries and counting them all.
fn parse_entries(text: &str, exceptions: bool) -> Result<Vec<(bool, Cidr)>, String> {
    let total = entries(text).count();
    let limit = if exceptions {
        MAX_ADDRESSES
    } else {
        MAX_EXEMPT
    };
    if total > limit {
        return Err(format!("{total} entries; at most {limit} are accepted"));
    }
    let mut parsed = Vec::with_capacity(total);
    let mut errors = Vec::new();
    let mut bad = 0;
    for entry in entries(text) {
        let (exception, block) = match entry.strip_prefix('!') {
            Some(block) if exceptions => (true, block),
            _ => (false, entry),
        };
        match Cidr::parse(block) {
            Ok(block) => parsed.push((exception, block)),
            Err(why) => {
                bad += 1;
                if errors.len() < QUOTED_ERRORS {
                    errors.push(why);
                }
            }
        }
    }
    if bad == 0 {
        Ok(parsed)
    } else {
        Err(format!(
            "{} ({bad} of {total} entries invalid)",
            errors.join("; ")
        ))
    }
}

fn parse_address_list(text: &str) -> Result<AddressEntries, String> {
    let mut list = AddressEntries::default();
    for (exception, block) in parse_entries(text, true)? {
        if exception {
            list.exceptions.push(block);
        } else {
            list.ranges.push(block);
        }
    }
    Ok(list)
}

fn parse_exempt_list(text: &str) -> Result<Vec<Cidr>, String> {
    Ok(parse_entries(text, false)?
        .into_iter()
        .map(|(_, block)| block)
        .collect())
}

fn parse_limit(text: &str) -> Result<Option<u32>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    match text.parse::<u32>() {
        Ok(0) => Ok(None),
        Ok(n) if n <= 1_000_000 => Ok(Some(n)),
        _ => Err(format!(
            "'{}' is not a whole number from 0 to 1000000",
            text.escape_debug()
        )),
    }
}

fn parse_deny_status(text: &str) -> Result<DenyStatus, String> {
    let text = text.trim();
    let code = text
        .parse::<u16>()
        .map_err(|_| format!("'{}' is not a status code", text.escape_debug()))?;
    DenyStatus::new(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cidrs(list: &[&str]) -> Vec<Cidr> {
        list.iter()
            .map(|t| Cidr::parse(t).unwrap_or_else(|e| panic!("{e}")))
            .collect()
    }

    #[test]
    fn address_lists_take_both_families_exceptions_and_any_separator() {
        assert_eq!(
            ALLOWLIST_SOURCE_RANGE.default_value(),
            AddressEntries::default()
        );
        assert_eq!(
            (ALLOWLIST_SOURCE_RANGE.parse)("10.0.0.0/8, !10.100.0.0/16\n2001:db8::/32 192.168.1.7"),
            Ok(AddressEntries {
                ranges: cidrs(&["10.0.0.0/8", "2001:db8::/32", "192.168.1.7"]),
                exceptions: cidrs(&["10.100.0.0/16"]),
            })
        );
        let many: String = (0..5000)
            .map(|i| format!("10.{}.{}.0/24,", i / 256, i % 256))
            .collect();
        let parsed = (DENYLIST_SOURCE_RANGE.parse)(&many).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.ranges.len(), 5000);
    }

    #[test]
    fn a_bad_entry_refuses_the_whole_value_naming_it() {
        assert_eq!(
            (ALLOWLIST_SOURCE_RANGE.parse)("10.0.0.0/8, 10.0.0.300, !garbage, ::/129"),
            Err("'10.0.0.300' is not an IP address; 'garbage' is not an IP address; '::/129' has no valid prefix length (3 of 4 entries invalid)".into())
        );
        assert!((WHITELIST_SOURCE_RANGE.parse)("10.0.0.0/33").is_err());
        let too_many = "1.1.1.1,".repeat(MAX_ADDRESSES + 1);
        assert_eq!(
            (DENYLIST_SOURCE_RANGE.parse)(&too_many),
            Err("100001 entries; at most 100000 are accepted".into())
        );
    }

    #[test]
    fn the_source_header_is_a_header_name() {
        assert_eq!(ALLOWLIST_SOURCE_HEADER.default_value(), None);
        assert_eq!(
            (ALLOWLIST_SOURCE_HEADER.parse)("X-Real-IP").map(|h| h.map(|h| h.to_string())),
            Ok(Some("X-Real-IP".into()))
        );
        assert!((ALLOWLIST_SOURCE_HEADER.parse)("X Real").is_err());
    }

    #[test]
    fn limits_are_counts_zero_meaning_none() {
        assert_eq!(LIMIT_RPS.default_value(), None);
        assert_eq!((LIMIT_RPS.parse)("10"), Ok(Some(10)));
        assert_eq!((LIMIT_CONNECTIONS.parse)("0"), Ok(None));
        assert_eq!(
            (LIMIT_RPS.parse)("-1"),
            Err("'-1' is not a whole number from 0 to 1000000".into())
        );
        assert_eq!(LIMIT_WHITELIST.default_value(), Vec::new());
        assert_eq!(
            (LIMIT_WHITELIST.parse)("10.0.0.0/8 ::1"),
            Ok(cidrs(&["10.0.0.0/8", "::1"]))
        );
        assert!((LIMIT_WHITELIST.parse)("10.0.0.0/8,nope").is_err());
    }

    #[test]
    fn limit_statuses_are_codes_haproxy_answers_itself() {
        assert_eq!(LIMIT_REQ_STATUS_CODE.default_value().code(), 429);
        assert_eq!(LIMIT_CONN_STATUS_CODE.default_value().code(), 429);
        assert_eq!(
            (LIMIT_REQ_STATUS_CODE.parse)("503").map(DenyStatus::code),
            Ok(503)
        );
        assert_eq!(
            (LIMIT_CONN_STATUS_CODE.parse)("soon"),
            Err("'soon' is not a status code".into())
        );
        assert!((LIMIT_REQ_STATUS_CODE.parse)("418").is_err());
    }
}
