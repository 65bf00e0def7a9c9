//! A keep-alive HTTP/1.1 client, as a browser or a service mesh sidecar would use one.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::Response;

/// One persistent connection to 127.0.0.1:`port`, reopened when the server closes it.
#[derive(Debug)]
pub struct KeepAliveClient {
    port: u16,
    connection: Option<BufReader<TcpStream>>,
    /// Requests sent again on a new connection because the server had closed the idle
    /// one before reading them.
    pub retried_on_closed_idle_connection: u64,
}

impl KeepAliveClient {
    /// A client with no connection open yet.
    pub fn new(port: u16) -> Self {
        Self {
            port,
            connection: None,
            retried_on_closed_idle_connection: 0,
        }
    }

    /// `GET path` with `host`. A server may close an idle keep-alive connection at any
    /// time (HAProxy does so in an old worker after a reload); a request that got no byte
    /// of answer on a reused connection is sent once more on a new one, which is what
    /// HTTP clients do for idempotent requests (RFC 9110, section 9.2.2).
    pub fn get(&mut self, host: &str, path: &str) -> std::io::Result<Response> {
        let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n");
        if let Some(mut connection) = self.connection.take() {
            match exchange(&mut connection, &request) {
                Ok((response, keep)) => {
                    if keep {
                        self.connection = Some(connection);
                    }
                    return Ok(response);
                }
                Err(Failure::NothingReceived(_)) => self.retried_on_closed_idle_connection += 1,
                Err(Failure::Partial(err)) => return Err(err),
            }
        }
        let stream = TcpStream::connect(("127.0.0.1", self.port))?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        let mut connection = BufReader::new(stream);
        match exchange(&mut connection, &request) {
            Ok((response, keep)) => {
                if keep {
                    self.connection = Some(connection);
                }
                Ok(response)
            }
            Err(Failure::NothingReceived(err) | Failure::Partial(err)) => Err(err),
        }
    }
}

enum Failure {
    NothingReceived(std::io::Error),
    Partial(std::io::Error),
}

/// Sends a request and reads one response; says whether the connection stays open.
fn exchange(
    connection: &mut BufReader<TcpStream>,
    request: &str,
) -> Result<(Response, bool), Failure> {
    connection
        .get_mut()
        .write_all(request.as_bytes())
        .map_err(Failure::NothingReceived)?;
    let mut head = String::new();
    loop {
        let before = head.len();
        let read = connection.read_line(&mut head);
        match read {
            Ok(0) if head.is_empty() => {
                return Err(Failure::NothingReceived(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "connection closed before the response",
                )));
            }
            Ok(0) => {
                return Err(Failure::Partial(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "connection closed in the response head",
                )));
            }
            Ok(_) if head[before..] == *"\r\n" => break,
            Ok(_) => {}
            Err(err) if head.is_empty() => return Err(Failure::NothingReceived(err)),
            Err(err) => return Err(Failure::Partial(err)),
        }
    }
    let mut status = 0;
    let mut length = 0usize;
    let mut close = false;
    let mut headers = std::collections::BTreeMap::new();
    for (index, line) in head.lines().enumerate() {
        if index == 0 {
            status = line
                .split_whitespace()
                .nth(1)
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            continue;
        }
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let (name, value) = (name.trim().to_ascii_lowercase(), value.trim().to_owned());
        if name == "content-length" {
            length = value.parse().unwrap_or(0);
        }
        if name == "connection" && value.eq_ignore_ascii_case("close") {
            close = true;
        }
        headers.insert(name, value);
    }
    let mut body = vec![0; length];
    connection.read_exact(&mut body).map_err(Failure::Partial)?;
    Ok((
        Response {
            status,
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        },
        !close,
    ))
}
