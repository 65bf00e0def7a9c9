//! The lines every frontend starts with: what backends are told about the client
//! (`X-Forwarded-For`, `X-Real-IP`, `X-Forwarded-Proto`, `-Host`, `-Port`), replacing
//! what the client claims unless it is a trusted proxy; and which requests a fronting
//! proxy that terminates TLS says came over HTTPS.

use std::fmt::Write;

use model::{ForwardFor, ForwardedHeaders, FrontingPort, FrontingProxy};

/// The ACL naming a fronting proxy's HTTPS requests, in a frontend it sends them to.
pub(crate) const FRONTED_HTTPS: &str = "fronted_https";

/// The variable set on a fronting proxy's HTTPS requests, which rules shared by every
/// frontend read (the ACL exists only where the proxy's requests come).
const FRONTED_HTTPS_VAR: &str = "txn.fronted_https";

/// `condition`, on requests that came over HTTPS: over TLS to HAProxy, or to a fronting
/// proxy that says so. `condition` is a conjunction of terms (no `||`).
pub(crate) fn over_https(condition: &str) -> String {
    format!("{condition} {{ ssl_fc }} || {condition} {{ var({FRONTED_HTTPS_VAR}) -m bool }}")
}

/// Whether a frontend takes a fronting proxy's requests (see `FrontingProxy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fronted {
    /// It does not: every request's scheme is the connection's.
    No,
    /// It is the HTTP port the proxy shares with every other client.
    Shared(FrontingProxy),
    /// It is the proxy's own port.
    Own(FrontingProxy),
}

impl Fronted {
    /// How the plain-HTTP frontend on the HTTP port takes the fronting proxy `proxy`.
    pub(crate) fn on_http_port(proxy: Option<FrontingProxy>) -> Self {
        match proxy {
            Some(proxy) if proxy.port == FrontingPort::Shared => Self::Shared(proxy),
            _ => Self::No,
        }
    }
}

/// The frontend lines for `forwarded`; `tls` says whether the frontend terminates TLS,
/// `fronted` whether a fronting proxy's HTTPS requests come to it (which then match the
/// ACL `FRONTED_HTTPS`).
pub(crate) fn frontend_lines(forwarded: &ForwardedHeaders, tls: bool, fronted: Fronted) -> String {
    let mut text = String::new();
    // What a trusted proxy in front said is kept; everyone else's claims are replaced.
    let (untrusted, trusted) = if forwarded.trusted.is_empty() {
        ("", None)
    } else {
        let mut names = String::new();
        for cidr in &forwarded.trusted {
            let _ = write!(names, " {cidr}");
        }
        let _ = writeln!(text, "    acl forwarded_trusted src{names}");
        (" !forwarded_trusted", Some(" forwarded_trusted"))
    };
    // Read before the header is replaced below. On a shared port only a trusted proxy is
    // believed, when some are named; the last header is the one the nearest proxy set.
    let fronted_by = match fronted {
        Fronted::No => None,
        Fronted::Shared(proxy) => Some((proxy, trusted.unwrap_or(""))),
        Fronted::Own(proxy) => Some((proxy, "")),
    };
    if let Some((proxy, believed)) = fronted_by {
        let https = if proxy.use_forwarded_proto {
            " { req.hdr(x-forwarded-proto,-1) -i https }"
        } else {
            ""
        };
        let condition = condition(&format!("{believed}{https}"));
        let _ = writeln!(
            text,
            "    http-request set-var({FRONTED_HTTPS_VAR}) bool(true){condition}\n    acl {FRONTED_HTTPS} var({FRONTED_HTTPS_VAR}) -m bool"
        );
        if trusted.is_some() {
            // Whether a trusted proxy named its own port, before the header is set below.
            let _ = writeln!(
                text,
                "    http-request set-var(txn.forwarded_port_kept) bool(true) if forwarded_trusted {{ req.hdr(x-forwarded-port) -m found }}"
            );
        }
    }
    match forwarded.forward_for {
        ForwardFor::Add => {
            if let Some(header) = &forwarded.original_header {
                let _ = writeln!(
                    text,
                    "    http-request set-header {header} %[req.fhdr(x-forwarded-for)] if {{ req.fhdr(x-forwarded-for) -m found }}{untrusted}"
                );
            }
            let _ = writeln!(
                text,
                "    http-request del-header x-forwarded-for{}",
                condition(untrusted)
            );
            text.push_str("    option forwardfor\n");
        }
        ForwardFor::Update => text.push_str("    option forwardfor\n"),
        ForwardFor::IfMissing => text.push_str("    option forwardfor if-none\n"),
        ForwardFor::Ignore => {}
    }
    let scheme = if tls { "https" } else { "http" };
    let mut set = |header: &str, value: &str, missing_check: &str| {
        let _ = writeln!(
            text,
            "    http-request set-header {header} {value}{}",
            condition(untrusted)
        );
        if let Some(trusted) = trusted {
            let _ = writeln!(
                text,
                "    http-request set-header {header} {value} if{trusted} !{{ req.hdr({missing_check}) -m found }}"
            );
        }
    };
    if let Some(header) = &forwarded.real_ip_header {
        let name = header.to_string();
        set(&name, "%[src]", &name.to_ascii_lowercase());
    }
    set("X-Forwarded-Proto", scheme, "x-forwarded-proto");
    set("X-Forwarded-Port", "%[dst_port]", "x-forwarded-port");
    if fronted_by.is_some() {
        // The client's port is the proxy's HTTPS port, unless a trusted proxy said another.
        let kept = if trusted.is_some() {
            " !{ var(txn.forwarded_port_kept) -m bool }"
        } else {
            ""
        };
        let _ = writeln!(
            text,
            "    http-request set-header X-Forwarded-Proto https if {FRONTED_HTTPS}\n    http-request set-header X-Forwarded-Port 443 if {FRONTED_HTTPS}{kept}"
        );
    }
    let _ = writeln!(
        text,
        "    http-request set-header X-Forwarded-Host %[req.hdr(host)] if {{ req.hdr(host) -m found }}{untrusted}"
    );
    if trusted.is_some() {
        let _ = writeln!(
            text,
            "    http-request set-header X-Forwarded-Host %[req.hdr(host)] if {{ req.hdr(host) -m found }} forwarded_trusted !{{ req.hdr(x-forwarded-host) -m found }}"
        );
    }
    let _ = writeln!(
        text,
        "    http-request del-header forwarded{}",
        condition(untrusted)
    );
    text
}

/// ` if <acl>` for a non-empty ACL reference.
fn condition(acl: &str) -> String {
    if acl.is_empty() {
        String::new()
    } else {
        format!(" if{acl}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::Cidr;

    #[test]
    fn by_default_every_client_claim_is_replaced() {
        assert_eq!(
            frontend_lines(&ForwardedHeaders::default(), true, Fronted::No),
            "    http-request set-header X-Original-Forwarded-For %[req.fhdr(x-forwarded-for)] if { req.fhdr(x-forwarded-for) -m found }
    http-request del-header x-forwarded-for
    option forwardfor
    http-request set-header X-Real-IP %[src]
    http-request set-header X-Forwarded-Proto https
    http-request set-header X-Forwarded-Port %[dst_port]
    http-request set-header X-Forwarded-Host %[req.hdr(host)] if { req.hdr(host) -m found }
    http-request del-header forwarded
"
        );
    }

    #[test]
    fn a_trusted_proxy_keeps_its_headers() {
        let forwarded = ForwardedHeaders {
            forward_for: ForwardFor::Add,
            original_header: None,
            real_ip_header: None,
            trusted: vec![Cidr::parse("10.0.0.0/8").unwrap_or_else(|e| panic!("{e}"))],
            fronting_proxy: None,
        };
        assert_eq!(
            frontend_lines(&forwarded, false, Fronted::No),
            "    acl forwarded_trusted src 10.0.0.0/8
    http-request del-header x-forwarded-for if !forwarded_trusted
    option forwardfor
    http-request set-header X-Forwarded-Proto http if !forwarded_trusted
    http-request set-header X-Forwarded-Proto http if forwarded_trusted !{ req.hdr(x-forwarded-proto) -m found }
    http-request set-header X-Forwarded-Port %[dst_port] if !forwarded_trusted
    http-request set-header X-Forwarded-Port %[dst_port] if forwarded_trusted !{ req.hdr(x-forwarded-port) -m found }
    http-request set-header X-Forwarded-Host %[req.hdr(host)] if { req.hdr(host) -m found } !forwarded_trusted
    http-request set-header X-Forwarded-Host %[req.hdr(host)] if { req.hdr(host) -m found } forwarded_trusted !{ req.hdr(x-forwarded-host) -m found }
    http-request del-header forwarded if !forwarded_trusted
"
        );
        for mode in [
            ForwardFor::Update,
            ForwardFor::IfMissing,
            ForwardFor::Ignore,
        ] {
            let lines = frontend_lines(
                &ForwardedHeaders {
                    forward_for: mode,
                    ..ForwardedHeaders::default()
                },
                false,
                Fronted::No,
            );
            assert!(!lines.contains("del-header x-forwarded-for"), "{lines}");
            assert_eq!(lines.contains("if-none"), mode == ForwardFor::IfMissing);
            assert_eq!(
                lines.contains("option forwardfor"),
                mode != ForwardFor::Ignore
            );
        }
    }

    #[test]
    fn a_fronting_proxys_https_requests_are_told_apart_before_the_header_is_replaced() {
        let proxy = |use_forwarded_proto| FrontingProxy {
            port: FrontingPort::Shared,
            use_forwarded_proto,
        };
        let trusted = ForwardedHeaders {
            forward_for: ForwardFor::Ignore,
            original_header: None,
            real_ip_header: None,
            trusted: vec![Cidr::parse("10.0.0.0/8").unwrap_or_else(|e| panic!("{e}"))],
            fronting_proxy: None,
        };
        // On the shared port, a trusted proxy alone is believed, by its last header.
        assert_eq!(
            frontend_lines(&trusted, false, Fronted::Shared(proxy(true))),
            "    acl forwarded_trusted src 10.0.0.0/8
    http-request set-var(txn.fronted_https) bool(true) if forwarded_trusted { req.hdr(x-forwarded-proto,-1) -i https }
    acl fronted_https var(txn.fronted_https) -m bool
    http-request set-var(txn.forwarded_port_kept) bool(true) if forwarded_trusted { req.hdr(x-forwarded-port) -m found }
    http-request set-header X-Forwarded-Proto http if !forwarded_trusted
    http-request set-header X-Forwarded-Proto http if forwarded_trusted !{ req.hdr(x-forwarded-proto) -m found }
    http-request set-header X-Forwarded-Port %[dst_port] if !forwarded_trusted
    http-request set-header X-Forwarded-Port %[dst_port] if forwarded_trusted !{ req.hdr(x-forwarded-port) -m found }
    http-request set-header X-Forwarded-Proto https if fronted_https
    http-request set-header X-Forwarded-Port 443 if fronted_https !{ var(txn.forwarded_port_kept) -m bool }
    http-request set-header X-Forwarded-Host %[req.hdr(host)] if { req.hdr(host) -m found } !forwarded_trusted
    http-request set-header X-Forwarded-Host %[req.hdr(host)] if { req.hdr(host) -m found } forwarded_trusted !{ req.hdr(x-forwarded-host) -m found }
    http-request del-header forwarded if !forwarded_trusted
"
        );
        // On its own port every client is the proxy; without the header's reading, every
        // request is an HTTPS one.
        let own = frontend_lines(&trusted, false, Fronted::Own(proxy(true)));
        assert!(
            own.contains("    http-request set-var(txn.fronted_https) bool(true) if { req.hdr(x-forwarded-proto,-1) -i https }\n"),
            "{own}"
        );
        let always = frontend_lines(
            &ForwardedHeaders::default(),
            false,
            Fronted::Own(proxy(false)),
        );
        assert!(
            always.starts_with(
                "    http-request set-var(txn.fronted_https) bool(true)\n    acl fronted_https"
            ),
            "{always}"
        );
        let untrusted = frontend_lines(
            &ForwardedHeaders::default(),
            false,
            Fronted::Shared(proxy(true)),
        );
        assert!(
            untrusted.starts_with("    http-request set-var(txn.fronted_https) bool(true) if { req.hdr(x-forwarded-proto,-1) -i https }\n"),
            "{untrusted}"
        );
        assert!(!frontend_lines(&trusted, false, Fronted::No).contains("fronted"));
    }
}
