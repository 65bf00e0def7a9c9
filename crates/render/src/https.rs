//! HTTPS lines: the TLS handshake's options (global section, bind line, certificate
//! list), the plain-HTTP redirect's exceptions, and HSTS.

use std::fmt::Write;

use model::{HostKey, Hsts, HstsRule, HttpsPolicy, TlsOptions};

use crate::RenderedFile;
use crate::layout::{CRT_LIST, DEFAULT_CERT, MapFile};

/// The `global` section's defaults for every TLS bind line.
pub(crate) fn global_lines(tls: &TlsOptions) -> String {
    let mut text = String::new();
    if let Some(ciphers) = &tls.ciphers {
        let _ = writeln!(text, "    ssl-default-bind-ciphers {ciphers}");
    }
    if let Some(suites) = &tls.cipher_suites {
        let _ = writeln!(text, "    ssl-default-bind-ciphersuites {suites}");
    }
    if !tls.options.is_empty() {
        let _ = writeln!(text, "    ssl-default-bind-options{}", words(&tls.options));
    }
    text
}

fn words(options: &[model::TlsWord]) -> String {
    options.iter().map(|word| format!(" {word}")).collect()
}

/// What follows the address on a TLS frontend's bind line.
pub(crate) fn bind_options(tls: &TlsOptions) -> String {
    let alpn = tls
        .alpn
        .as_ref()
        .map(|alpn| format!(" alpn {alpn}"))
        .unwrap_or_default();
    format!(" ssl crt {DEFAULT_CERT} crt-list {CRT_LIST}{alpn}")
}

/// A host's options in its certificate-list line (`[...]`), empty when it has none.
pub(crate) fn crt_list_options(tls: &TlsOptions) -> String {
    if tls.is_empty() {
        return String::new();
    }
    let mut parts: Vec<String> = Vec::new();
    if let Some(alpn) = &tls.alpn {
        parts.push(format!("alpn {alpn}"));
    }
    if let Some(ciphers) = &tls.ciphers {
        parts.push(format!("ciphers {ciphers}"));
    }
    if let Some(suites) = &tls.cipher_suites {
        parts.push(format!("ciphersuites {suites}"));
    }
    parts.extend(tls.options.iter().map(ToString::to_string));
    if let Some(auth) = &tls.client_auth {
        crate::client_auth::crt_list_options(auth, &mut parts);
    }
    if parts.is_empty() {
        return String::new();
    }
    format!(" [{}]", parts.join(" "))
}

/// How many path prefixes one ACL line lists.
const PATHS_PER_LINE: usize = 16;

/// The plain-HTTP frontend's lines that spare the exceptions the HTTPS redirect: such a
/// request is routed by the HTTPS frontend's maps, where the route names its backend.
pub(crate) fn redirect_exception_lines(exceptions: &[String]) -> String {
    if exceptions.is_empty() {
        return String::new();
    }
    let mut text = String::new();
    for chunk in exceptions.chunks(PATHS_PER_LINE) {
        let _ = writeln!(
            text,
            "    acl tls_redirect_exempt path_beg -- {}",
            chunk.join(" ")
        );
    }
    text.push_str(
        "    http-request unset-var(txn.backend) if tls_redirect_exempt { var(txn.backend) -m beg _redirect_ }\n",
    );
    text.push_str(&https_route_lines("tls_redirect_exempt"));
    text
}

/// A plain-HTTP frontend's lines routing a request as the HTTPS frontend would (its
/// maps), under `condition`, when nothing chose its backend yet.
pub(crate) fn https_route_lines(condition: &str) -> String {
    let exact = MapFile::exact_paths(false).path();
    let prefix = MapFile::path_prefixes(false).path();
    format!(
        "    http-request set-var(txn.backend) var(txn.route),map_str({exact}) if {condition} !{{ var(txn.backend) -m found }}
    http-request set-var(txn.backend) var(txn.route),map_beg({prefix}) if {condition} !{{ var(txn.backend) -m found }}
"
    )
}

const HSTS_HEADER: &str = "Strict-Transport-Security";

/// The TLS frontends' default HSTS line, under the ACL `condition` when one is named;
/// rule chains after it may replace or remove it.
pub(crate) fn hsts_line(hsts: Option<&Hsts>, condition: &str) -> String {
    let condition = if condition.is_empty() {
        String::new()
    } else {
        format!(" if {condition}")
    };
    match hsts {
        Some(hsts) => format!(
            "    http-response set-header {HSTS_HEADER} \"{}\"{condition}\n",
            hsts.header_value()
        ),
        None => String::new(),
    }
}

/// A chained rule's HSTS line, on TLS connections only (chains serve both frontends),
/// and on a fronting proxy's HTTPS requests (see `forwarded::Fronted`).
pub(crate) fn rule_hsts_line(rule: HstsRule, chosen: &str, out: &mut String) {
    let over_tls = crate::forwarded::over_https(chosen);
    match rule {
        HstsRule::Inherit => {}
        HstsRule::Off => {
            let _ = writeln!(
                out,
                "    http-response del-header {HSTS_HEADER} if {over_tls}"
            );
        }
        HstsRule::On(hsts) => {
            let _ = writeln!(
                out,
                "    http-response set-header {HSTS_HEADER} \"{}\" if {over_tls}",
                hsts.header_value()
            );
        }
    }
}

/// The DH parameters file and its `global` line, when `ssl-dh-param` names one.
pub(crate) fn dh_params(https: &HttpsPolicy) -> Option<(String, RenderedFile)> {
    let params = https.dh_params.as_ref()?;
    Some((
        crate::layout::global_tls_file("dhparam", &params.pem),
        RenderedFile::new(params.pem.clone(), false),
    ))
}

/// The `global` section's `ssl-dh-param-file` line, if any.
pub(crate) fn dh_params_line(https: &HttpsPolicy) -> String {
    dh_params(https).map_or_else(String::new, |(path, _)| {
        format!("    ssl-dh-param-file {path}\n")
    })
}

/// The HTTPS frontend's check that a request's `Host` belongs to the listener its SNI
/// chose (Gateway API listener isolation): each is resolved to the first listener host
/// name that matches it (`*` when none does: the hostname-less listeners), and a
/// request whose two differ is answered 421 Misdirected Request. No lines without
/// listener host names, and none for a connection without SNI.
pub(crate) fn misdirected_lines(listener_hosts: &[HostKey]) -> String {
    if listener_hosts.is_empty() {
        return String::new();
    }
    let mut text = String::new();
    for (variable, name) in [
        ("txn.host_listener", "var(txn.host)"),
        ("txn.sni_listener", "ssl_fc_sni,lower"),
    ] {
        for (index, host) in listener_hosts.iter().enumerate() {
            let test = match host {
                HostKey::Exact(exact) => format!("-m str {exact}"),
                HostKey::Wildcard(suffix) | HostKey::Suffix(suffix) => format!("-m end .{suffix}"),
                HostKey::CatchAll | HostKey::Regex(_) => continue,
            };
            let _ = writeln!(
                text,
                "    http-request set-var({variable}) int({index}) if !{{ var({variable}) -m found }} {{ {name} {test} }}"
            );
        }
        let _ = writeln!(
            text,
            "    http-request set-var({variable}) int(-1) if !{{ var({variable}) -m found }}"
        );
    }
    text.push_str(
        "    http-request return status 421 content-type text/plain string \"421 Misdirected Request\" if { ssl_fc_sni -m found } !{ var(txn.sni_listener),sub(txn.host_listener) -m int 0 }\n",
    );
    text
}
