//! An HTTP/1.1 echo backend: answers every request with JSON describing what it saw.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

/// A running echo backend; stops when dropped.
#[derive(Debug)]
pub struct EchoServer {
    /// Its port on 127.0.0.1.
    pub port: u16,
    stop: Arc<AtomicBool>,
}

impl EchoServer {
    /// Starts a backend named `name` on a free port of 127.0.0.1.
    pub fn start(name: &str) -> std::io::Result<Self> {
        Self::start_on(name, 0)
    }

    /// Starts a backend named `name` on `port` (0 picks a free one).
    pub fn start_on(name: &str, port: u16) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", port))?;
        let port = listener.local_addr()?.port();
        let stop = Arc::new(AtomicBool::new(false));
        let (name, flag) = (name.to_owned(), stop.clone());
        thread::spawn(move || {
            for stream in listener.incoming() {
                if flag.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let name = name.clone();
                thread::spawn(move || serve(stream, &name, None));
            }
        });
        Ok(Self { port, stop })
    }
}

impl Drop for EchoServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Answers requests on one connection (plain, or TLS already set up, with the SNI the
/// client sent) until it closes.
fn serve(stream: impl Read + Write, name: &str, sni: Option<String>) {
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = request_line.split_whitespace();
        let method = parts.next().unwrap_or("").to_owned();
        let target = parts.next().unwrap_or("").to_owned();
        let mut headers = serde_json::Map::new();
        let mut content_length = 0usize;
        let mut close = false;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((key, value)) = line.split_once(':') {
                let key = key.trim().to_ascii_lowercase();
                let value = value.trim().to_owned();
                if key == "content-length" {
                    content_length = value.parse().unwrap_or(0);
                }
                if key == "connection" && value.eq_ignore_ascii_case("close") {
                    close = true;
                }
                headers.insert(key, serde_json::Value::String(value));
            }
        }
        let mut body = vec![0; content_length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let (path, query) = target.split_once('?').unwrap_or((target.as_str(), ""));
        let reply = serde_json::json!({
            "server": name,
            "method": method,
            "path": path,
            "query": query,
            "host": headers.get("host").cloned().unwrap_or_default(),
            "headers": headers,
            "sni": sni,
        })
        .to_string();
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nx-echo-server: {name}\r\n{}\r\n{reply}",
            reply.len(),
            if close { "connection: close\r\n" } else { "" }
        );
        let written = reader.get_mut().write_all(response.as_bytes());
        if written.and_then(|()| reader.get_mut().flush()).is_err() || close {
            return;
        }
    }
}

/// An echo backend that terminates TLS itself with a certificate of its own (a TLS
/// passthrough backend); stops when dropped.
#[derive(Debug)]
pub struct TlsEchoServer {
    /// Its port on 127.0.0.1.
    pub port: u16,
    stop: Arc<AtomicBool>,
}

impl TlsEchoServer {
    /// Starts a backend named `name` on a free port of 127.0.0.1, presenting a
    /// self-signed certificate whose common name is `common_name`.
    pub fn start(name: &str, common_name: &str) -> std::io::Result<Self> {
        Self::start_with(name, self_signed_der(common_name)?)
    }

    /// Starts a backend named `name` presenting the server certificate of `pki` (signed
    /// by its CA); each answer says the SNI the client sent (`"sni"`).
    pub fn start_signed(name: &str, pki: &crate::ServerPki) -> std::io::Result<Self> {
        let key = rustls::pki_types::PrivateKeyDer::try_from(pki.server_key_der.clone())
            .map_err(std::io::Error::other)?;
        let certificate = rustls::pki_types::CertificateDer::from(pki.server_der.clone());
        Self::start_with(name, (certificate, key))
    }

    fn start_with(name: &str, (certificate, key): DerPair) -> std::io::Result<Self> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(std::io::Error::other)?
            .with_no_client_auth()
            .with_single_cert(vec![certificate], key)
            .map_err(std::io::Error::other)?;
        let config = Arc::new(config);
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let port = listener.local_addr()?.port();
        let stop = Arc::new(AtomicBool::new(false));
        let (name, flag) = (name.to_owned(), stop.clone());
        thread::spawn(move || {
            for stream in listener.incoming() {
                if flag.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let Ok(mut connection) = rustls::ServerConnection::new(config.clone()) else {
                    continue;
                };
                let name = name.clone();
                thread::spawn(move || {
                    let mut stream = stream;
                    // The handshake first: the SNI is known only once it is done.
                    while connection.is_handshaking() {
                        if connection.complete_io(&mut stream).is_err() {
                            return;
                        }
                    }
                    let sni = connection.server_name().map(str::to_owned);
                    serve(rustls::StreamOwned::new(connection, stream), &name, sni);
                });
            }
        });
        Ok(Self { port, stop })
    }
}

impl Drop for TlsEchoServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

type DerPair = (
    rustls::pki_types::CertificateDer<'static>,
    rustls::pki_types::PrivateKeyDer<'static>,
);

fn self_signed_der(common_name: &str) -> std::io::Result<DerPair> {
    let mut params = rcgen::CertificateParams::new(vec![common_name.to_owned()])
        .map_err(std::io::Error::other)?;
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, common_name);
    let key = rcgen::KeyPair::generate().map_err(std::io::Error::other)?;
    let certificate = params.self_signed(&key).map_err(std::io::Error::other)?;
    let key = rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der())
        .map_err(std::io::Error::other)?;
    Ok((certificate.der().clone(), key))
}
