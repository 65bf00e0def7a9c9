//! Raw HTTP/1.1 clients: every header is sent exactly as given (a Host with a port or in
//! upper case, say), and the response is returned as a user would see it.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

/// A response.
#[derive(Debug, Clone)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Headers, names lowercase.
    pub headers: BTreeMap<String, String>,
    /// Body.
    pub body: String,
}

impl Response {
    /// The echo backend's JSON report, if the body is one.
    pub fn echo(&self) -> Option<serde_json::Value> {
        serde_json::from_str(&self.body).ok()
    }

    /// Which echo backend answered, if one did.
    pub fn server(&self) -> Option<String> {
        self.echo()
            .and_then(|v| v.get("server").and_then(|s| s.as_str()).map(str::to_owned))
    }

    /// A field of the echo report (`path`, `host`, `method`, `query`).
    pub fn seen(&self, field: &str) -> Option<String> {
        self.echo()
            .and_then(|v| v.get(field).and_then(|s| s.as_str()).map(str::to_owned))
    }
}

/// A response over TLS, with the certificate the server presented.
#[derive(Debug, Clone)]
pub struct TlsResponse {
    /// The HTTP response.
    pub response: Response,
    /// Common name of the server certificate.
    pub certificate_cn: String,
}

/// Who answers `GET path` for `host`: the echo backend's name, else the status code, else
/// the error; one string a test can compare.
pub fn answer(port: u16, host: &str, path: &str) -> String {
    match http_get(port, host, path) {
        Ok(r) if r.status == 200 => r.server().unwrap_or_default(),
        Ok(r) => r.status.to_string(),
        Err(err) => format!("error: {err}"),
    }
}

/// `GET path` with the given Host header, over plain HTTP.
pub fn http_get(port: u16, host: &str, path: &str) -> std::io::Result<Response> {
    http_request(
        port,
        &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
    )
}

/// Sends a raw request over plain HTTP.
pub fn http_request(port: u16, request: &str) -> std::io::Result<Response> {
    exchange(TcpStream::connect(("127.0.0.1", port))?, request.as_bytes())
}

/// Sends raw bytes (a PROXY protocol header and a request, say) over a connected stream
/// and reads the response until the server closes.
pub fn exchange(mut stream: TcpStream, bytes: &[u8]) -> std::io::Result<Response> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    stream.write_all(bytes)?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    parse(&raw)
}

/// `GET path` over TLS with the given SNI and Host; the certificate is not verified but
/// reported.
pub fn https_get(port: u16, sni: &str, host: &str, path: &str) -> std::io::Result<TlsResponse> {
    https_request(port, sni, host, path, None)
}

/// As [`https_get`], presenting a client certificate (DER) and its PKCS#8 key (DER) when
/// the server asks for one.
pub fn https_request(
    port: u16,
    sni: &str,
    host: &str,
    path: &str,
    client: Option<(&[u8], &[u8])>,
) -> std::io::Result<TlsResponse> {
    let mut tls = tls_connect_as(port, sni, &[], client)?;
    tls.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").as_bytes(),
    )?;
    let mut raw = Vec::new();
    match tls.read_to_end(&mut raw) {
        Ok(_) => {}
        // HAProxy may close without close_notify after `Connection: close`.
        Err(err) if err.kind() == std::io::ErrorKind::UnexpectedEof && !raw.is_empty() => {}
        Err(err) => return Err(err),
    }
    let certificate_cn = tls
        .conn
        .peer_certificates()
        .and_then(|certs| certs.first())
        .and_then(|der| {
            let (_, cert) = x509_parser::parse_x509_certificate(der.as_ref()).ok()?;
            let cn = cert
                .subject()
                .iter_common_name()
                .next()?
                .as_str()
                .ok()?
                .to_owned();
            Some(cn)
        })
        .unwrap_or_default();
    Ok(TlsResponse {
        response: parse(&raw)?,
        certificate_cn,
    })
}

/// What a TLS handshake agreed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handshake {
    /// `TLSv1.2` or `TLSv1.3`.
    pub version: String,
    /// The protocol chosen by ALPN, if any.
    pub alpn: Option<String>,
}

/// Completes a TLS handshake (TLS 1.2 or 1.3) with the given SNI, offering `alpn`, and
/// reports what was agreed.
pub fn tls_handshake(port: u16, sni: &str, alpn: &[&str]) -> std::io::Result<Handshake> {
    let mut tls = tls_connect(port, sni, alpn)?;
    while tls.conn.is_handshaking() {
        tls.conn.complete_io(&mut tls.sock)?;
    }
    let version = match tls.conn.protocol_version() {
        Some(rustls::ProtocolVersion::TLSv1_2) => "TLSv1.2".to_owned(),
        Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3".to_owned(),
        other => format!("{other:?}"),
    };
    let alpn = tls
        .conn
        .alpn_protocol()
        .map(|p| String::from_utf8_lossy(p).into_owned());
    Ok(Handshake { version, alpn })
}

/// A TLS client stream to 127.0.0.1:`port` that accepts any certificate, offering TLS
/// 1.2 and 1.3 and the `alpn` protocols; the handshake runs on first use.
fn tls_connect(
    port: u16,
    sni: &str,
    alpn: &[&str],
) -> std::io::Result<rustls::StreamOwned<rustls::ClientConnection, TcpStream>> {
    tls_connect_as(port, sni, alpn, None)
}

fn tls_connect_as(
    port: u16,
    sni: &str,
    alpn: &[&str],
    client: Option<(&[u8], &[u8])>,
) -> std::io::Result<rustls::StreamOwned<rustls::ClientConnection, TcpStream>> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(std::io::Error::other)?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AcceptAny(provider)));
    let mut config = match client {
        None => builder.with_no_client_auth(),
        Some((cert, key)) => builder
            .with_client_auth_cert(
                vec![rustls::pki_types::CertificateDer::from(cert.to_vec())],
                rustls::pki_types::PrivateKeyDer::Pkcs8(key.to_vec().into()),
            )
            .map_err(std::io::Error::other)?,
    };
    config.alpn_protocols = alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
    let name =
        rustls::pki_types::ServerName::try_from(sni.to_owned()).map_err(std::io::Error::other)?;
    let connection =
        rustls::ClientConnection::new(Arc::new(config), name).map_err(std::io::Error::other)?;
    let socket = TcpStream::connect(("127.0.0.1", port))?;
    socket.set_read_timeout(Some(Duration::from_secs(10)))?;
    Ok(rustls::StreamOwned::new(connection, socket))
}

fn parse(raw: &[u8]) -> std::io::Result<Response> {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| std::io::Error::other(format!("no HTTP response: {text:?}")))?;
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line: {head:?}")))?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Ok(Response {
        status,
        headers,
        body: body.to_owned(),
    })
}

#[derive(Debug)]
struct AcceptAny(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AcceptAny {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
