//! Backends and the servers (endpoints) behind them.

use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;

/// Identity of a backend: one service port of one namespace, in one mode.
///
/// `port` is the service port's name, or its number when it has no name, however the
/// referring object named it: one service port is one backend per mode (HTTP, or TLS
/// passed through), since HAProxy refuses an HTTP frontend naming a TCP backend.
///
/// Its parts are shared (`Arc<str>`): an id is a key of many tables (claims, uses,
/// winners, the model), so a copy is three reference counts, not three strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BackendId {
    /// Namespace of the service.
    pub namespace: Arc<str>,
    /// Service name.
    pub service: Arc<str>,
    /// Service port number or name.
    pub port: Arc<str>,
    /// What the backend forwards.
    pub mode: BackendMode,
}

impl Ord for BackendId {
    /// By namespace, service, port and mode, as the fields read. The ids of one namespace
    /// share its text (see `convert`'s namespace sharing), so most comparisons of large
    /// tables' keys skip reading it.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let namespace = if Arc::ptr_eq(&self.namespace, &other.namespace) {
            std::cmp::Ordering::Equal
        } else {
            self.namespace.cmp(&other.namespace)
        };
        namespace
            .then_with(|| self.service.cmp(&other.service))
            .then_with(|| self.port.cmp(&other.port))
            .then_with(|| self.mode.cmp(&other.mode))
    }
}

impl PartialOrd for BackendId {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl BackendId {
    /// The HAProxy section name: `<namespace>_<service>_<port>`.
    ///
    /// Namespaces, service names and port names are DNS labels, which never contain `_`,
    /// so the name is unambiguous. Any other byte (possible only in a manifest nobody
    /// validated) is written `:xx` in hex: `:` is not a DNS character either, so the name
    /// stays unique, and no value can break a configuration line or a runtime command.
    /// A passthrough backend's name ends in `_passthrough`, and a TCP service's in
    /// `_tcp`: a fourth `_`-separated part, which no HTTP backend's name has.
    pub fn section_name(&self) -> String {
        let mut name =
            String::with_capacity(self.namespace.len() + self.service.len() + self.port.len() + 2);
        for (index, part) in [&self.namespace, &self.service, &self.port]
            .into_iter()
            .enumerate()
        {
            if index > 0 {
                name.push('_');
            }
            let plain = |byte: u8| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.');
            // Nearly always a DNS label or a port: copied whole.
            if part.bytes().all(plain) {
                name.push_str(part);
                continue;
            }
            for byte in part.bytes() {
                if plain(byte) {
                    name.push(char::from(byte));
                } else {
                    name.push_str(&format!(":{byte:02x}"));
                }
            }
        }
        match self.mode {
            BackendMode::Http => {}
            BackendMode::TlsPassthrough => name.push_str("_passthrough"),
            BackendMode::Tcp => name.push_str("_tcp"),
            BackendMode::Grpc => name.push_str("_grpc"),
        }
        name
    }
}

impl fmt::Display for BackendId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}:{}", self.namespace, self.service, self.port)?;
        match self.mode {
            BackendMode::Http => Ok(()),
            BackendMode::TlsPassthrough => f.write_str(" (TLS passthrough)"),
            BackendMode::Tcp => f.write_str(" (TCP)"),
            BackendMode::Grpc => f.write_str(" (gRPC)"),
        }
    }
}

/// One ready endpoint of a backend. Its identity is its address and port (its name);
/// weight and group are settings HAProxy changes at runtime or reads from the section.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Server {
    /// Endpoint address.
    pub address: IpAddr,
    /// Endpoint port.
    pub port: u16,
    /// Its share of the load-balanced traffic, when a blue-green balance sets one
    /// (HAProxy's default of 1 otherwise).
    pub weight: Option<crate::ServerWeight>,
    /// The value of its pod's blue-green group label, which a request's header or cookie
    /// may name to choose it.
    pub group: Option<crate::Word>,
}

impl Server {
    /// A server with HAProxy's default weight and no blue-green group.
    pub fn at(address: IpAddr, port: u16) -> Self {
        Self {
            address,
            port,
            weight: None,
            group: None,
        }
    }

    /// Its identity: the address and port it is named after.
    pub fn endpoint(&self) -> (IpAddr, u16) {
        (self.address, self.port)
    }

    /// The HAProxy server name, derived from the endpoint so it is stable across renders:
    /// `address_port`, as `format!("{address}_{port}")` spells it.
    pub fn name(&self) -> String {
        let mut name = String::with_capacity(22);
        self.push_name(&mut name);
        name
    }

    /// Appends [`Server::name`] to `out`.
    pub fn push_name(&self, out: &mut String) {
        self.push_address_and_port(out, b'_');
    }

    /// Appends `address:port` as a server line gives it (an IPv6 address in brackets).
    pub fn push_address_port(&self, out: &mut String) {
        match self.address {
            IpAddr::V4(_) => self.push_address_and_port(out, b':'),
            IpAddr::V6(v6) => {
                use std::fmt::Write;
                let _ = write!(out, "[{v6}]:{}", self.port);
            }
        }
    }

    /// Appends the address, `separator` (an ASCII byte) and the port. An IPv4 address's
    /// text is put together on the stack and appended at once: every server line of a
    /// render has two (its name and its address), and appending them character by
    /// character was most of rendering a backend.
    fn push_address_and_port(&self, out: &mut String, separator: u8) {
        debug_assert!(separator.is_ascii());
        let IpAddr::V4(v4) = self.address else {
            use std::fmt::Write;
            let _ = write!(
                out,
                "{}{}{}",
                self.address,
                char::from(separator),
                self.port
            );
            return;
        };
        // `255.255.255.255`, the separator and `65535`.
        let mut text = [0u8; 21];
        let mut len = 0;
        let mut put = |bytes: &[u8]| {
            text[len..len + bytes.len()].copy_from_slice(bytes);
            len += bytes.len();
        };
        for (index, octet) in v4.octets().into_iter().enumerate() {
            if index > 0 {
                put(b".");
            }
            put(Digits::of(octet.into()).bytes());
        }
        put(&[separator]);
        put(Digits::of(self.port).bytes());
        let text = std::str::from_utf8(&text[..len]);
        debug_assert!(text.is_ok(), "digits, dots and an ASCII separator");
        out.push_str(text.unwrap_or_default());
    }
}

/// A number's decimal digits, written on the stack.
struct Digits {
    digits: [u8; 5],
    start: usize,
}

impl Digits {
    fn of(value: u16) -> Self {
        let mut digits = [0u8; 5];
        let mut start = digits.len();
        let mut rest = value;
        loop {
            start -= 1;
            digits[start] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        Self { digits, start }
    }

    fn bytes(&self) -> &[u8] {
        &self.digits[self.start..]
    }
}

/// A backend section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backend {
    /// Identity and section name.
    pub id: BackendId,
    /// Ready endpoints, sorted and without duplicates.
    pub servers: Vec<Server>,
    /// Settings of every server line.
    pub server_options: std::sync::Arc<crate::ServerOptions>,
    /// The section's own settings. Most backends of a cluster have the same, and kept in
    /// each they were 440 of a backend's 560 bytes: they are shared where equal.
    pub settings: std::sync::Arc<BackendSettings>,
    /// The objects that made this backend, for error reports.
    pub origins: Vec<crate::Origin>,
}

/// What a backend section says besides its servers and their options. All of it is
/// rendered in the section and compared whole: a setting HAProxy can change at runtime
/// belongs beside the servers, not here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendSettings {
    /// Load-balancing algorithm.
    pub balance: crate::Balance,
    /// The request header or cookie whose value names the blue-green group to use.
    pub selector: Option<crate::GroupSelector>,
    /// Servers HAProxy finds by resolving a name, instead of `servers`.
    pub named: Option<crate::NamedServers>,
    /// Timeouts set in the section.
    pub timeouts: crate::BackendTimeouts,
    /// `timeout connect`.
    pub timeout_connect: crate::HaproxyDuration,
    /// `timeout server`.
    pub timeout_server: crate::HaproxyDuration,
    /// Pass the client certificate to the servers (`X-SSL-Client-Cert`).
    pub client_cert_header: bool,
    /// Error pages of this backend's own (`errorfile`), replacing the global ones for the
    /// errors HAProxy answers once the backend is chosen.
    pub error_pages: std::collections::BTreeMap<u16, crate::ErrorPage>,
    /// Per-client request rate and connection limits.
    pub client_limits: crate::ClientLimits,
}

impl BackendSettings {
    /// Round robin and the two timeouts every backend section states, and nothing else.
    pub fn plain(
        timeout_connect: crate::HaproxyDuration,
        timeout_server: crate::HaproxyDuration,
    ) -> Self {
        Self {
            balance: crate::Balance::RoundRobin,
            selector: None,
            named: None,
            timeouts: crate::BackendTimeouts::default(),
            timeout_connect,
            timeout_server,
            client_cert_header: false,
            error_pages: std::collections::BTreeMap::new(),
            client_limits: crate::ClientLimits::default(),
        }
    }
}

/// What a backend forwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum BackendMode {
    /// HTTP requests (`mode http`): every Ingress path and HTTPRoute.
    #[default]
    Http,
    /// Whole TLS connections, untouched (`mode tcp`): TLS passthrough.
    TlsPassthrough,
    /// The bytes of a TCP service's connections (`mode tcp`), decrypted first when the
    /// port terminates TLS.
    Tcp,
    /// A GRPCRoute's requests (`mode http`) to a Service port whose servers speak HTTP/1
    /// to other routes: spoken to in HTTP/2 in a section of their own, so that an
    /// HTTPRoute or Ingress to the same port keeps HTTP/1.
    Grpc,
}

impl Backend {
    /// Whether two backends differ only in their servers (and origins, which are not
    /// rendered): then HAProxy can be brought from one to the other at runtime.
    ///
    /// A backend with a blue-green selector names its grouped servers in `use-server`
    /// lines, which HAProxy reads only from the file: there, the grouped servers are part
    /// of the section.
    pub fn same_section_settings(&self, other: &Backend) -> bool {
        // Destructured without `..` so that a new field must be classified here.
        let Backend {
            id,
            servers: _,
            server_options,
            settings,
            origins: _,
        } = self;
        *id == other.id
            && *server_options == other.server_options
            && *settings == other.settings
            && (settings.selector.is_none()
                || self
                    .grouped_servers()
                    .map(|(server, group)| (server.endpoint(), group))
                    .eq(other
                        .grouped_servers()
                        .map(|(server, group)| (server.endpoint(), group))))
    }

    /// The section's settings, to change: this backend's own copy once they are changed.
    pub fn settings_mut(&mut self) -> &mut BackendSettings {
        std::sync::Arc::make_mut(&mut self.settings)
    }

    /// The servers a selector can choose, with their group, in name order.
    pub fn grouped_servers(&self) -> impl Iterator<Item = (&Server, &crate::Word)> {
        self.servers
            .iter()
            .filter_map(|server| server.group.as_ref().map(|group| (server, group)))
    }

    /// The same backend forwarding whole TLS connections: what only HTTP can do (TLS
    /// toward the servers, HTTP/2, cookies, per-request limits) is left out, since the
    /// client's TLS session reaches the servers untouched.
    pub fn for_passthrough(self) -> Backend {
        self.in_tcp_mode(BackendMode::TlsPassthrough)
    }

    /// The same backend for a TCP service: as [`Backend::for_passthrough`], HTTP-only
    /// settings left out.
    pub fn for_tcp(self) -> Backend {
        self.in_tcp_mode(BackendMode::Tcp)
    }

    /// The same backend for a GRPCRoute whose Service port speaks HTTP/1 to others: its
    /// servers spoken to in HTTP/2, in a section of its own ([`BackendMode::Grpc`]).
    pub fn for_grpc(mut self) -> Backend {
        self.id.mode = BackendMode::Grpc;
        changed_copy(&mut self.server_options, |options| {
            options.protocol = crate::Protocol::Http2;
        });
        self
    }

    /// Whether the backend forwards HTTP requests (`mode http`).
    pub fn is_http(&self) -> bool {
        matches!(self.id.mode, BackendMode::Http | BackendMode::Grpc)
    }

    fn in_tcp_mode(mut self, mode: BackendMode) -> Backend {
        self.id.mode = mode;
        changed_copy(&mut self.server_options, |options| {
            options.tls = None;
            options.protocol = crate::Protocol::default();
            options.cookie = None;
            if let Some(health) = &mut options.health {
                health.uri = None;
            }
        });
        changed_copy(&mut self.settings, |settings| {
            settings.client_limits = crate::ClientLimits::default();
        });
        self
    }
}

/// Applies `change` to a shared value, in a copy of this backend's own only when it
/// changes something: what needs no change stays shared.
fn changed_copy<T: Clone + PartialEq>(shared: &mut std::sync::Arc<T>, change: impl FnOnce(&mut T)) {
    let mut changed = (**shared).clone();
    change(&mut changed);
    if changed != **shared {
        *shared = std::sync::Arc::new(changed);
    }
}

#[cfg(test)]
mod server_name_tests {
    use super::*;

    #[test]
    fn a_server_is_named_and_addressed_as_format_spells_its_address_and_port() {
        let addresses = [
            "0.0.0.0",
            "10.1.2.3",
            "255.255.255.255",
            "192.168.100.9",
            "::1",
            "fd00::12:3",
            "2001:db8::ff00:42:8329",
        ];
        for address in addresses {
            let address: IpAddr = address.parse().unwrap_or(IpAddr::from([0, 0, 0, 0]));
            for port in [0, 7, 80, 443, 8080, 10000, 65535] {
                let server = Server::at(address, port);
                assert_eq!(server.name(), format!("{address}_{port}"));
                let mut line = String::new();
                server.push_address_port(&mut line);
                assert_eq!(line, std::net::SocketAddr::new(address, port).to_string());
            }
        }
    }
}

#[cfg(test)]
mod section_name_tests {
    use super::*;

    fn id(namespace: &str, service: &str, port: &str, mode: BackendMode) -> BackendId {
        BackendId {
            namespace: namespace.into(),
            service: service.into(),
            port: port.into(),
            mode,
        }
    }

    #[test]
    fn labels_are_copied_and_any_other_byte_is_written_in_hex() {
        let http = BackendMode::Http;
        assert_eq!(
            id("shop", "web-v2.a", "80", http).section_name(),
            "shop_web-v2.a_80"
        );
        assert_eq!(id("a_b", "c", "http", http).section_name(), "a:5fb_c_http");
        assert_eq!(id("a", "b c", "é", http).section_name(), "a_b:20c_:c3:a9");
        assert_eq!(id("", "", "", http).section_name(), "__");
        // A name that is hex-escaped cannot be mistaken for one that is not.
        assert_ne!(
            id("a_b", "c", "1", http).section_name(),
            id("a", "b_c", "1", http).section_name()
        );
        assert_eq!(
            id("db", "pg", "5432", BackendMode::Tcp).section_name(),
            "db_pg_5432_tcp"
        );
        assert_eq!(
            id("db", "api", "443", BackendMode::TlsPassthrough).section_name(),
            "db_api_443_passthrough"
        );
    }
}

#[cfg(test)]
mod tcp_mode_tests {
    use super::*;
    use std::sync::Arc;

    fn backend(settings: BackendSettings) -> Backend {
        Backend {
            id: BackendId {
                namespace: "web".into(),
                service: "db".into(),
                port: "5432".into(),
                mode: BackendMode::Http,
            },
            servers: Vec::new(),
            server_options: Arc::default(),
            settings: Arc::new(settings),
            origins: Vec::new(),
        }
    }

    fn duration(text: &str) -> crate::HaproxyDuration {
        crate::HaproxyDuration::parse(text).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn tcp_mode_drops_http_only_settings_and_shares_what_it_leaves_unchanged() {
        let plain = backend(BackendSettings::plain(duration("5s"), duration("50s")));
        let (settings, options) = (plain.settings.clone(), plain.server_options.clone());
        let tcp = plain.for_tcp();
        assert_eq!(tcp.id.mode, BackendMode::Tcp);
        assert!(Arc::ptr_eq(&tcp.settings, &settings));
        assert!(Arc::ptr_eq(&tcp.server_options, &options));

        let mut http_only = BackendSettings::plain(duration("5s"), duration("50s"));
        http_only.timeouts.tunnel = Some(duration("1h"));
        http_only.client_limits.rps = Some(10);
        let passthrough = backend(http_only).for_passthrough();
        let mut expected = BackendSettings::plain(duration("5s"), duration("50s"));
        expected.timeouts.tunnel = Some(duration("1h"));
        assert_eq!(*passthrough.settings, expected);
        assert_eq!(passthrough.id.mode, BackendMode::TlsPassthrough);
    }
}

#[cfg(test)]
mod order_tests {
    use std::sync::Arc;

    use super::{BackendId, BackendMode};

    /// Ids order as their parts' texts do, whether or not two ids share a namespace's
    /// text: the tables keyed by ids (and so every file's section order) never depend on
    /// which copies an id holds.
    #[test]
    fn ids_order_by_their_texts_shared_or_not() {
        let texts = ["", "a", "ab", "b", "b-2"];
        let modes = [
            BackendMode::Http,
            BackendMode::TlsPassthrough,
            BackendMode::Tcp,
        ];
        let shared: Vec<Arc<str>> = texts.iter().map(|t| Arc::from(*t)).collect();
        let mut ids = Vec::new();
        for (n, namespace) in texts.iter().enumerate() {
            for service in ["a", "web"] {
                for port in ["80", "http"] {
                    for mode in modes {
                        for copy in [Arc::clone(&shared[n]), Arc::from(*namespace)] {
                            ids.push(BackendId {
                                namespace: copy,
                                service: service.into(),
                                port: port.into(),
                                mode,
                            });
                        }
                    }
                }
            }
        }
        let parts = |id: &BackendId| {
            (
                id.namespace.to_string(),
                id.service.to_string(),
                id.port.to_string(),
                id.mode,
            )
        };
        for a in &ids {
            for b in &ids {
                assert_eq!(a.cmp(b), parts(a).cmp(&parts(b)), "{a:?} against {b:?}");
                assert_eq!(a.cmp(b).is_eq(), a == b);
            }
        }
    }
}
