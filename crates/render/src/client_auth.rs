//! Client-certificate authentication: the certificate-list options asking for a
//! certificate, the CA files, and the frontend lines answering 421/495/496 and passing
//! the certificate's identity to the backends in `X-SSL-Client-*` headers.

use std::fmt::Write;

use model::{ClientAuth, ClientVerify, ProxyModel};

use crate::RenderedFile;
use crate::layout::{client_ca_file, client_crl_file};

/// The headers carrying the client certificate's identity, removed from every request
/// first so that no client can forge them.
const HEADERS: [&str; 5] = [
    "X-SSL-Client-CN",
    "X-SSL-Client-DN",
    "X-SSL-Client-SHA1",
    "X-SSL-Client-Verify",
    "X-SSL-Client-Cert",
];

/// What the hosts' client authentication adds to the configuration.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClientAuthLines {
    /// Lines of every TLS frontend.
    pub(crate) tls: String,
    /// Lines of the plain-HTTP frontend (`--http-port`), which spares the HTTPS
    /// redirect's exceptions.
    pub(crate) plain: String,
    /// Lines of the plain-HTTP frontends of Gateway listeners on other ports: the
    /// identity headers removed. A plain-HTTP listener's hosts are served there as the
    /// Gateway asks (its validation is for the HTTPS listeners).
    pub(crate) plain_port: String,
    /// The CA and CRL files, by path.
    pub(crate) files: Vec<(String, RenderedFile)>,
}

impl ClientAuthLines {
    /// Whether any host asks for client certificates.
    pub(crate) fn any(&self) -> bool {
        !self.tls.is_empty()
    }

    /// Whether both say the same (files compared by content hash).
    pub(crate) fn same_as(&self, other: &Self) -> bool {
        self.tls == other.tls
            && self.plain == other.plain
            && self.plain_port == other.plain_port
            && self.files.len() == other.files.len()
            && self
                .files
                .iter()
                .zip(&other.files)
                .all(|(a, b)| a.0 == b.0 && a.1.hash == b.1.hash)
    }
}

/// The bind options every TLS frontend needs once a host asks for certificates: a
/// certificate that fails verification must still complete the handshake, so that the
/// host answers 495 (or its error page) instead of a bare TLS alert.
pub(crate) const BIND_OPTIONS: &str = " ca-ignore-err all crt-ignore-err all";

/// A host's certificate-list options.
pub(crate) fn crt_list_options(auth: &ClientAuth, parts: &mut Vec<String>) {
    let Some(ca) = &auth.ca else {
        return;
    };
    let verify = if auth.strict { "required" } else { "optional" };
    parts.push(format!("verify {verify} ca-file {}", client_ca_file(ca)));
    if ca.crl.is_some() {
        parts.push(format!("crl-file {}", client_crl_file(&ca.secret)));
    }
}

/// The lines and files of every host with client authentication, in host order.
pub(crate) fn client_auth_lines(model: &ProxyModel, redirect_exceptions: bool) -> ClientAuthLines {
    let mut lines = ClientAuthLines::default();
    let responses = &model.global.responses;
    for (key, host) in &model.hosts {
        let Some(auth) = &host.tls.client_auth else {
            continue;
        };
        let this = format!("{{ var(txn.hostkey) -m str {} }}", key.map_key());
        let refuse = |code: u16, condition: &str| match &auth.error_page {
            Some(url) => {
                format!("    http-request redirect location {url} code 302 if {this}{condition}\n")
            }
            None => format!(
                "    http-request {} if {this}{condition}\n",
                crate::responses::certificate_answer(responses, code)
            ),
        };
        // The certificate was checked against the SNI's host: a request for this host
        // over a connection made for another is refused.
        let _ = writeln!(
            lines.tls,
            "    http-request return status 421 content-type text/plain string \"421 Misdirected Request\" if {this} !{{ ssl_fc_sni,lower,strcmp(txn.host) eq 0 }}"
        );
        let mismatch = " { ssl_c_used } !{ ssl_c_verify eq 0 }";
        match (&auth.ca, auth.verify) {
            (None, _) => lines.tls.push_str(&refuse(496, "")),
            (Some(_), ClientVerify::On) => {
                lines.tls.push_str(&refuse(496, " !{ ssl_c_used }"));
                lines.tls.push_str(&refuse(495, mismatch));
            }
            (Some(_), ClientVerify::Optional) => lines.tls.push_str(&refuse(495, mismatch)),
            (Some(_), ClientVerify::OptionalNoCa) => {}
        }
        // Plain HTTP carries no certificate: a host that requires one is not served
        // there (the HTTPS redirect, and its exceptions, come first).
        if auth.ca.is_none() || auth.verify == ClientVerify::On {
            let exempt = if redirect_exceptions {
                " !tls_redirect_exempt"
            } else {
                ""
            };
            lines.plain.push_str(&refuse(496, exempt));
        }
        if let Some(ca) = &auth.ca {
            ca_files(ca, &mut lines.files);
        }
    }
    // The TCP services' authorities are files of the same directory, changed live the
    // same way.
    let mut tcp_files = Vec::new();
    for service in model.tcp_services.values() {
        if let Some(ca) = service.tls.as_ref().and_then(|tls| tls.client_ca.as_ref()) {
            ca_files(ca, &mut tcp_files);
        }
    }
    if lines.tls.is_empty() {
        tcp_files.sort_by(|a, b| a.0.cmp(&b.0));
        tcp_files.dedup_by(|a, b| a.0 == b.0);
        return ClientAuthLines {
            files: tcp_files,
            ..ClientAuthLines::default()
        };
    }
    lines.files.extend(tcp_files);
    let mut strip = String::new();
    for header in HEADERS {
        let _ = writeln!(strip, "    http-request del-header {header}");
    }
    lines.plain.insert_str(0, &strip);
    lines.plain_port.insert_str(0, &strip);
    let mut identity = strip;
    identity.push_str(&lines.tls);
    for (header, sample) in [
        ("X-SSL-Client-CN", "ssl_c_s_dn(cn)"),
        ("X-SSL-Client-DN", "ssl_c_s_dn"),
        ("X-SSL-Client-SHA1", "ssl_c_sha1,hex"),
        ("X-SSL-Client-Verify", "ssl_c_verify"),
    ] {
        let _ = writeln!(
            identity,
            "    http-request set-header {header} %[{sample}] if {{ ssl_c_used }}"
        );
    }
    lines.tls = identity;
    lines.files.sort_by(|a, b| a.0.cmp(&b.0));
    lines.files.dedup_by(|a, b| a.0 == b.0);
    lines
}

/// The CA bundle and revocation list files of one Secret.
fn ca_files(ca: &model::ClientCa, files: &mut Vec<(String, RenderedFile)>) {
    files.push((client_ca_file(ca), RenderedFile::new(ca.ca.clone(), false)));
    if let Some(crl) = &ca.crl {
        files.push((
            client_crl_file(&ca.secret),
            RenderedFile::new(crl.clone(), false),
        ));
    }
}

/// A backend's lines passing the whole client certificate (`auth-tls-cert-header`).
pub(crate) fn cert_header_lines() -> String {
    "    http-request del-header X-SSL-Client-Cert\n    http-request set-header X-SSL-Client-Cert %[ssl_c_der,base64] if { ssl_c_used }\n".to_owned()
}
