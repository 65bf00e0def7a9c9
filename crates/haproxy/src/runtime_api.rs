//! The runtime API: live changes to the running worker over its stats socket, each reply
//! checked against the one HAProxy 2.6 gives on success.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use plan::{RuntimeCommand, ServerRef};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

/// A map payload chunk's size limit: the command and its payload must fit in one HAProxy
/// buffer (16 KiB); a larger payload is dropped silently.
const MAP_CHUNK_BYTES: usize = 12 * 1024;
/// A line of `;`-separated commands stays below this size: HAProxy reads a command
/// line into one buffer (16 KiB) and ignores a longer one.
const BATCH_LINE_BYTES: usize = 12 * 1024;
/// How long one reply may take.
const REPLY_TIMEOUT: Duration = Duration::from_secs(10);
/// The connection pool of a server added at runtime: HAProxy 2.6 gives such a server none
/// (`pool-max-conn 0`), where a server of the files has an unlimited one purged every 5 s.
const DYNAMIC_POOL: &str = " pool-max-conn -1 pool-purge-delay 5s";
/// The prompt that ends every reply in interactive mode.
const PROMPT: &[u8] = b"\n> ";

/// One request and HAProxy's reply (without the prompt), for logs and tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    /// What was sent, payload included.
    pub request: String,
    /// What HAProxy answered, trimmed.
    pub reply: String,
}

/// What a batch of commands did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Applied {
    /// Every exchange, in order.
    pub transcript: Vec<Exchange>,
    /// Servers removed for good.
    pub deleted: Vec<ServerRef>,
}

/// A runtime command HAProxy did not carry out.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The socket failed.
    #[error("runtime API: {0}")]
    Io(#[from] std::io::Error),
    /// HAProxy answered something other than success.
    #[error("runtime API: `{request}` answered {reply:?}")]
    Unexpected {
        /// The request's first line.
        request: String,
        /// The reply.
        reply: String,
    },
}

/// A client of the worker's stats socket.
#[derive(Debug, Clone)]
pub struct RuntimeApi {
    socket: PathBuf,
}

impl RuntimeApi {
    /// A client of the socket at `socket`.
    pub fn new(socket: impl Into<PathBuf>) -> Self {
        Self {
            socket: socket.into(),
        }
    }

    /// Sends commands in order over one interactive session, stopping at the first failure.
    /// A removed server that still has connections stays in maintenance and is not
    /// reported as deleted; [`RuntimeApi::delete_servers`] finishes the job later.
    pub async fn apply(&self, commands: &[RuntimeCommand]) -> Result<Applied, RuntimeError> {
        let mut session = Session::open(&self.socket).await?;
        let mut deleted = Vec::new();
        for command in commands {
            match command {
                RuntimeCommand::AddServer {
                    server,
                    address,
                    options,
                    id,
                    checked,
                    derives_cookie,
                } => {
                    // HAProxy 2.6 derives a server's cookie when its address changes,
                    // not when it is added: such a server is added, in maintenance, on
                    // another port, then moved to its own.
                    let added_at = if *derives_cookie {
                        SocketAddr::new(address.ip(), if address.port() == 1 { 2 } else { 1 })
                    } else {
                        *address
                    };
                    // HAProxy 2.6 places a server it numbers itself wrongly in a
                    // consistent-hash ring (`balance random`, the default, and hash-based
                    // balancing): of three servers added one after the other, the second
                    // got no request (measured). The id is the one the file gives it (a
                    // hashing backend's file writes it), so a reload moves no client. One
                    // that another server of the backend holds live makes `add server`
                    // fail: a reload then loads the file's.
                    // A server added at runtime keeps no idle connection unless told to
                    // (every request then opened a new one, measured): it gets the pool
                    // a server of the files has by default.
                    session
                        .request(
                            &format!(
                                "add server {server} {added_at}{options}{DYNAMIC_POOL} id {id}"
                            ),
                            |r| r == "New server registered.",
                        )
                        .await?;
                    if *derives_cookie {
                        let (ip, port) = (address.ip(), address.port());
                        session
                            .request(&format!("set server {server} addr {ip} port {port}"), |r| {
                                r.contains("port changed")
                            })
                            .await?;
                    }
                    // A server added at runtime starts with its checks disabled.
                    if *checked {
                        session
                            .request(&format!("enable health {server}"), str::is_empty)
                            .await?;
                    }
                    session.set_state(server, "ready").await?;
                }
                RuntimeCommand::ReadyServer(server) => session.set_state(server, "ready").await?,
                RuntimeCommand::SetWeight { server, weight } => {
                    session
                        .request(
                            &format!("set server {server} weight {weight}"),
                            str::is_empty,
                        )
                        .await?;
                }
                RuntimeCommand::RemoveServer(server) => {
                    session.set_state(server, "maint").await?;
                    if session.delete_server(server, false).await? {
                        deleted.push(server.clone());
                    }
                }
                RuntimeCommand::EditMap {
                    map,
                    add,
                    set,
                    delete,
                } => {
                    for (key, value) in add {
                        session
                            .request(&format!("add map {map} {key} {value}"), str::is_empty)
                            .await?;
                    }
                    for (key, value) in set {
                        session
                            .request(&format!("set map {map} {key} {value}"), str::is_empty)
                            .await?;
                    }
                    for key in delete {
                        session
                            .request(&format!("del map {map} {key}"), str::is_empty)
                            .await?;
                    }
                }
                RuntimeCommand::ReplaceMap { map, content } => {
                    session.replace_map(map, content).await?;
                }
                RuntimeCommand::ReplaceAcl { acl, content } => {
                    session.replace_acl(acl, content).await?;
                }
                RuntimeCommand::UpdateCertificate { file, content } => {
                    session.update_certificate(file, content).await?;
                }
                RuntimeCommand::UpdateCaFile { file, crl, content } => {
                    session.update_ca_file(file, *crl, content).await?;
                }
                RuntimeCommand::AddCertificate { file, content } => {
                    session
                        .request(&format!("new ssl cert {file}"), |r| {
                            r.starts_with("New empty certificate store")
                        })
                        .await?;
                    session.update_certificate(file, content).await?;
                }
                RuntimeCommand::AddCrtListEntry { list, entry } => {
                    session
                        .request(&format!("add ssl crt-list {list} <<\n{entry}\n"), |r| {
                            r.ends_with("Success!")
                        })
                        .await?;
                }
                RuntimeCommand::RemoveCrtListEntry { list, entry } => {
                    session.remove_crt_list_entry(list, entry).await?;
                }
                RuntimeCommand::RemoveCertificate { file } => {
                    session
                        .request(&format!("del ssl cert {file}"), |r| {
                            r == format!("Certificate '{file}' deleted!")
                        })
                        .await?;
                }
            }
        }
        Ok(Applied {
            transcript: session.transcript,
            deleted,
        })
    }

    /// Deletes servers left in maintenance with connections; those that are gone already
    /// count as deleted.
    pub async fn delete_servers(&self, servers: &[ServerRef]) -> Result<Applied, RuntimeError> {
        let mut session = Session::open(&self.socket).await?;
        let mut deleted = Vec::new();
        for server in servers {
            if session.delete_server(server, true).await? {
                deleted.push(server.clone());
            }
        }
        Ok(Applied {
            transcript: session.transcript,
            deleted,
        })
    }

    /// One command and its reply, for inspection (`show map`, `show servers state`).
    pub async fn query(&self, command: &str) -> Result<String, RuntimeError> {
        let mut session = Session::open(&self.socket).await?;
        session.send(command).await
    }
}

struct Session {
    stream: UnixStream,
    transcript: Vec<Exchange>,
}

impl Session {
    async fn open(socket: &std::path::Path) -> Result<Self, RuntimeError> {
        let stream = UnixStream::connect(socket).await?;
        let mut session = Session {
            stream,
            transcript: Vec::new(),
        };
        session.stream.write_all(b"prompt\n").await?;
        session.read_reply().await?;
        Ok(session)
    }

    async fn read_reply(&mut self) -> Result<String, RuntimeError> {
        let mut reply = Vec::new();
        let mut buffer = [0_u8; 16 * 1024];
        while !reply.ends_with(PROMPT) && reply != PROMPT[1..] {
            let read = tokio::time::timeout(REPLY_TIMEOUT, self.stream.read(&mut buffer))
                .await
                .map_err(|_| {
                    std::io::Error::new(std::io::ErrorKind::TimedOut, "no reply from HAProxy")
                })??;
            if read == 0 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "HAProxy closed the runtime API session",
                )
                .into());
            }
            reply.extend_from_slice(&buffer[..read]);
        }
        let text = String::from_utf8_lossy(&reply[..reply.len() - PROMPT.len().min(reply.len())]);
        // Payload lines are acknowledged with a continuation prompt each.
        let mut text = text.as_ref();
        while let Some(rest) = text.strip_prefix("+ ") {
            text = rest;
        }
        Ok(text.trim().to_owned())
    }

    async fn send(&mut self, request: &str) -> Result<String, RuntimeError> {
        // An empty line ends a payload, and what follows it would be read as commands:
        // content that holds one is never sent.
        let body = request.trim_end_matches('\n');
        if body.contains("\n\n") || body.contains('\r') {
            return Err(RuntimeError::Unexpected {
                request: request.lines().next().unwrap_or_default().to_owned(),
                reply: "not sent: the payload holds an empty line".to_owned(),
            });
        }
        self.stream.write_all(request.as_bytes()).await?;
        self.stream.write_all(b"\n").await?;
        let reply = self.read_reply().await?;
        self.transcript.push(Exchange {
            request: request.to_owned(),
            reply: reply.clone(),
        });
        Ok(reply)
    }

    async fn request(
        &mut self,
        request: &str,
        success: impl Fn(&str) -> bool,
    ) -> Result<String, RuntimeError> {
        let reply = self.send(request).await?;
        if success(&reply) {
            Ok(reply)
        } else {
            Err(RuntimeError::Unexpected {
                request: request.lines().next().unwrap_or_default().to_owned(),
                reply,
            })
        }
    }

    async fn set_state(&mut self, server: &ServerRef, state: &str) -> Result<(), RuntimeError> {
        self.request(&format!("set server {server} state {state}"), str::is_empty)
            .await
            .map(drop)
    }

    /// Whether the server is gone; `false` while a request is still in flight on it (or
    /// queued for it). Connections only idle in its pool keep `del server` waiting too,
    /// and HAProxy 2.6 closes them only after several `pool-purge-delay`s (some 14 s by
    /// default, measured): they are closed at once by moving the server's port away and
    /// back, which a server in maintenance, taking no requests, does not notice.
    async fn delete_server(
        &mut self,
        server: &ServerRef,
        absent_is_deleted: bool,
    ) -> Result<bool, RuntimeError> {
        if self.try_delete_server(server, absent_is_deleted).await? {
            return Ok(true);
        }
        let stats = self
            .request(&format!("show stat {} 4 -1", server.backend), |r| {
                r.starts_with("# pxname,")
            })
            .await?;
        let Some(stats) = crate::server_stats::server_row(&stats, &server.server) else {
            return Ok(false);
        };
        if !stats.only_idle() {
            return Ok(false);
        }
        let (ip, port) = (stats.address.ip(), stats.address.port());
        let elsewhere = port.checked_add(1).unwrap_or(port - 1);
        for to in [elsewhere, port] {
            self.request(&format!("set server {server} addr {ip} port {to}"), |r| {
                r.contains("port changed")
            })
            .await?;
        }
        self.try_delete_server(server, absent_is_deleted).await
    }

    /// One `del server`: whether the server is gone.
    async fn try_delete_server(
        &mut self,
        server: &ServerRef,
        absent_is_deleted: bool,
    ) -> Result<bool, RuntimeError> {
        let reply = self
            .request(&format!("del server {server}"), |r| {
                r == "Server deleted."
                    || r.starts_with("Server still has connections")
                    || (absent_is_deleted && r == "No such server.")
            })
            .await?;
        Ok(!reply.starts_with("Server still has connections"))
    }

    async fn replace_map(&mut self, map: &str, content: &[u8]) -> Result<(), RuntimeError> {
        let reply = self
            .request(&format!("prepare map {map}"), |r| {
                r.starts_with("New version created: ")
            })
            .await?;
        let version = reply
            .trim_start_matches("New version created: ")
            .trim()
            .parse::<u64>()
            .map_err(|_| RuntimeError::Unexpected {
                request: format!("prepare map {map}"),
                reply: reply.clone(),
            })?;
        let text = String::from_utf8_lossy(content);
        for chunk in chunks(&text, MAP_CHUNK_BYTES) {
            self.request(
                &format!("add map @{version} {map} <<\n{chunk}"),
                str::is_empty,
            )
            .await?;
        }
        self.request(&format!("commit map @{version} {map}"), str::is_empty)
            .await
            .map(drop)
    }

    async fn remove_crt_list_entry(&mut self, list: &str, entry: &str) -> Result<(), RuntimeError> {
        let show = format!("show ssl crt-list -n {list}");
        let listing = self.send(&show).await?;
        let Some(line) = crt_list_line(&listing, entry) else {
            return Err(RuntimeError::Unexpected {
                request: show,
                reply: format!("no entry `{entry}` in {listing:?}"),
            });
        };
        let certificate = entry.split_once(' ').map_or(entry, |(c, _)| c);
        self.request(
            &format!("del ssl crt-list {list} {certificate}:{line}"),
            |r| r.starts_with("Entry '") && r.contains("' deleted in crtlist"),
        )
        .await
        .map(drop)
    }

    /// `set ssl ca-file|crl-file` and `commit`; measured on 2.6.12: "transaction created
    /// for CA <file>!" (or "for CRL", "transaction updated"), then "Success!".
    async fn update_ca_file(
        &mut self,
        file: &str,
        crl: bool,
        content: &[u8],
    ) -> Result<(), RuntimeError> {
        let kind = if crl { "crl-file" } else { "ca-file" };
        let pem = String::from_utf8_lossy(content);
        let set = self
            .request(
                &format!("set ssl {kind} {file} <<\n{}\n", pem.trim_end()),
                |r| r.starts_with("transaction created") || r.starts_with("transaction updated"),
            )
            .await;
        let result = match set {
            Ok(_) => self
                .request(&format!("commit ssl {kind} {file}"), |r| {
                    r.ends_with("Success!")
                })
                .await
                .map(drop),
            Err(err) => Err(err),
        };
        if result.is_err() {
            // Leave no transaction open: the next update must start from HAProxy's state.
            let _ = self.send(&format!("abort ssl {kind} {file}")).await;
        }
        result
    }

    /// Replaces an address list through a new version: HAProxy 2.6's `add acl` takes no
    /// payload, so the entries go as `add acl @<version>` commands, many to a line.
    async fn replace_acl(&mut self, acl: &str, content: &str) -> Result<(), RuntimeError> {
        let prepare = format!("prepare acl {acl}");
        let reply = self
            .request(&prepare, |r| r.starts_with("New version created: "))
            .await?;
        let version = reply
            .trim_start_matches("New version created: ")
            .trim()
            .parse::<u64>()
            .map_err(|_| RuntimeError::Unexpected {
                request: prepare,
                reply: reply.clone(),
            })?;
        let mut line = String::new();
        let mut count = 0;
        for pattern in content.lines().filter(|l| !l.is_empty()) {
            if pattern.contains([';', '\\', ' ', '\'', '"']) {
                return Err(RuntimeError::Unexpected {
                    request: format!("add acl @{version} {acl}"),
                    reply: format!("not sent: {pattern:?} is not one word"),
                });
            }
            let command = format!("add acl @{version} {acl} {pattern}");
            if !line.is_empty() && line.len() + command.len() + 1 > BATCH_LINE_BYTES {
                self.batch(&line, count).await?;
                line.clear();
                count = 0;
            }
            if !line.is_empty() {
                line.push(';');
            }
            line.push_str(&command);
            count += 1;
        }
        if count > 0 {
            self.batch(&line, count).await?;
        }
        self.request(&format!("commit acl @{version} {acl}"), str::is_empty)
            .await
            .map(drop)
    }

    /// Sends `count` commands separated by `;` on one line, each of which answers nothing
    /// on success: HAProxy prints one prompt per command.
    async fn batch(&mut self, line: &str, count: usize) -> Result<(), RuntimeError> {
        self.stream.write_all(line.as_bytes()).await?;
        self.stream.write_all(b"\n").await?;
        let mut reply = Vec::new();
        let mut buffer = [0_u8; 16 * 1024];
        while !(reply.ends_with(PROMPT) && prompts(&reply) >= count) {
            let read = tokio::time::timeout(REPLY_TIMEOUT, self.stream.read(&mut buffer))
                .await
                .map_err(|_| {
                    std::io::Error::new(std::io::ErrorKind::TimedOut, "no reply from HAProxy")
                })??;
            if read == 0 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "HAProxy closed the runtime API session",
                )
                .into());
            }
            reply.extend_from_slice(&buffer[..read]);
        }
        let text = String::from_utf8_lossy(&reply).replace("\n> ", "");
        let text = text.trim().to_owned();
        self.transcript.push(Exchange {
            request: line.to_owned(),
            reply: text.clone(),
        });
        if text.is_empty() {
            Ok(())
        } else {
            Err(RuntimeError::Unexpected {
                request: line.split(';').next().unwrap_or_default().to_owned(),
                reply: text,
            })
        }
    }

    async fn update_certificate(&mut self, file: &str, content: &[u8]) -> Result<(), RuntimeError> {
        let pem = String::from_utf8_lossy(content);
        let set = self
            .request(
                &format!("set ssl cert {file} <<\n{}\n", pem.trim_end()),
                |r| r.starts_with("Transaction created") || r.starts_with("Transaction updated"),
            )
            .await;
        let result = match set {
            Ok(_) => self
                .request(&format!("commit ssl cert {file}"), |r| {
                    r.ends_with("Success!")
                })
                .await
                .map(drop),
            Err(err) => Err(err),
        };
        if result.is_err() {
            // Leave no transaction open: the next update must start from HAProxy's state.
            let _ = self.send(&format!("abort ssl cert {file}")).await;
        }
        result
    }
}

/// How many prompts a reply holds (one per command of a `;`-separated line).
fn prompts(reply: &[u8]) -> usize {
    reply.windows(PROMPT.len()).filter(|w| *w == PROMPT).count()
}

/// The line number of `entry` (`<certificate> [<options>] <filters>`) in `show ssl
/// crt-list -n` output, where each line reads `<certificate>:<line> [<options>] <filters>`.
/// HAProxy 2.6 prints a line's options in an order of its own and ends the ALPN list with
/// a NUL byte, so options are compared as sets of words with their arguments.
fn crt_list_line(listing: &str, entry: &str) -> Option<u64> {
    let (entry_cert, entry_rest) = entry.split_once(' ').unwrap_or((entry, ""));
    let wanted = CrtListTail::parse(entry_rest);
    listing.lines().find_map(|line| {
        let (numbered, rest) = line.split_once(' ').unwrap_or((line, ""));
        let (cert, number) = numbered.rsplit_once(':')?;
        (cert == entry_cert && CrtListTail::parse(rest) == wanted)
            .then(|| number.parse().ok())
            .flatten()
    })
}

/// What follows the certificate on a certificate-list line, in a comparable form.
#[derive(Debug, PartialEq, Eq)]
struct CrtListTail<'a> {
    /// Each option with its argument, if it takes one, sorted.
    options: Vec<(&'a str, Option<&'a str>)>,
    /// The SNI filters, in order.
    filters: Vec<&'a str>,
}

impl<'a> CrtListTail<'a> {
    /// Options of a certificate list that are followed by an argument.
    const WITH_ARGUMENT: [&'static str; 13] = [
        "alpn",
        "npn",
        "ca-file",
        "crl-file",
        "ciphers",
        "ciphersuites",
        "curves",
        "ecdhe",
        "verify",
        "ssl-min-ver",
        "ssl-max-ver",
        "sigalgs",
        "client-sigalgs",
    ];

    fn parse(text: &'a str) -> Self {
        let text = text.trim();
        let (options, filters) = match text.strip_prefix('[').and_then(|rest| rest.split_once(']'))
        {
            Some((options, filters)) => (options, filters),
            None => ("", text),
        };
        let mut words = options.split([' ', '\0']).filter(|word| !word.is_empty());
        let mut parsed = Vec::new();
        while let Some(word) = words.next() {
            let argument = if Self::WITH_ARGUMENT.contains(&word) {
                words.next()
            } else {
                None
            };
            parsed.push((word, argument));
        }
        parsed.sort_unstable();
        Self {
            options: parsed,
            filters: filters.split_whitespace().collect(),
        }
    }
}

/// Whole lines, grouped into chunks of at most `limit` bytes (a longer line is a chunk of
/// its own).
fn chunks(text: &str, limit: usize) -> Vec<&str> {
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut end = 0;
    for line in text.split_inclusive('\n') {
        if end > start && end - start + line.len() > limit {
            chunks.push(&text[start..end]);
            start = end;
        }
        end += line.len();
    }
    if end > start {
        chunks.push(&text[start..end]);
    }
    chunks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_line_of_a_certificate_list_entry() {
        let listing = "# certs/crt-list.txt\ncerts/a.pem:1 a.test\ncerts/a.pem:4 b.test\ncerts/b.pem:3 *.c.test\n";
        assert_eq!(crt_list_line(listing, "certs/a.pem b.test"), Some(4));
        assert_eq!(crt_list_line(listing, "certs/b.pem *.c.test"), Some(3));
        assert_eq!(crt_list_line(listing, "certs/b.pem a.test"), None);
    }

    #[test]
    fn finds_a_certificate_list_entry_with_options_as_haproxy_prints_them() {
        // As HAProxy 2.6 answers, NUL after the ALPN list included.
        let listing = "# certs/crt-list.txt\n\
            certs/a.pem:1 a.test\n\
            certs/a.pem:2 [alpn http/1.1\0 ssl-max-ver TLSv1.2] a.test\n\
            certs/a.pem:3 [alpn h2,http/1.1\0 no-ca-names ciphers HIGH ssl-min-ver TLSv1.2] b.test\n";
        assert_eq!(crt_list_line(listing, "certs/a.pem a.test"), Some(1));
        assert_eq!(
            crt_list_line(
                listing,
                "certs/a.pem [alpn http/1.1 ssl-max-ver TLSv1.2] a.test"
            ),
            Some(2)
        );
        assert_eq!(
            crt_list_line(
                listing,
                "certs/a.pem [alpn h2,http/1.1 ciphers HIGH ssl-min-ver TLSv1.2 no-ca-names] b.test"
            ),
            Some(3)
        );
        assert_eq!(
            crt_list_line(listing, "certs/a.pem [alpn h2 ssl-max-ver TLSv1.2] a.test"),
            None,
            "another ALPN list is another entry"
        );
        assert_eq!(
            crt_list_line(listing, "certs/a.pem [ssl-max-ver TLSv1.2] a.test"),
            None
        );
    }

    #[test]
    fn chunks_keep_whole_lines_under_the_limit() {
        let text = "aaaa\nbbbb\ncccc\ndddddddddddd\ne\n";
        assert_eq!(
            chunks(text, 10),
            ["aaaa\nbbbb\n", "cccc\n", "dddddddddddd\n", "e\n"]
        );
        assert_eq!(chunks("", 10), Vec::<&str>::new());
        assert_eq!(chunks(text, 1000), [text]);
    }
}
