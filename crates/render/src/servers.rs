//! A backend's server settings: the options of its servers, which `add server` repeats
//! word for word, and the section lines they depend on.

use std::fmt::Write;

use model::{
    Backend, BackendDefaults, CookieValue, Protocol, Server, ServerOptions, Sni, TlsVerify,
};

use crate::layout::{backend_ca_file, backend_crt_file, backend_policy_ca_file, from_shard_file};

/// The options a server of the backend carries after its address, each preceded by a
/// space: the same words in `add server` as in the shard file (its section's
/// `default-server` line or the `defaults` section's, then its server line), so a server
/// added at runtime is exactly one loaded from the file.
pub fn server_options(backend: &Backend, server: &Server) -> String {
    let mut text = shared_options(backend);
    own_options(&mut text, backend, server);
    text
}

/// The options every server of the backend carries alike.
pub(crate) fn shared_options(backend: &Backend) -> String {
    let mut text = String::new();
    // Writing to a String cannot fail.
    let _ = write_options(&mut text, &backend.server_options);
    text
}

/// Appends the options that differ from server to server.
pub(crate) fn own_options(text: &mut String, backend: &Backend, server: &Server) {
    if let Some(weight) = server.weight {
        let _ = write!(text, " weight {weight}");
    }
    if let Some(cookie) = &backend.server_options.cookie
        && *cookie.value() == CookieValue::ServerName
    {
        let _ = write!(text, " cookie {}", server.name());
    }
}

/// The id of a server of a hashing (or `balance first`) backend's file, and of any server
/// added at runtime.
/// HAProxy places a server on a consistent-hash ring by its id: were the ids the ones
/// HAProxy numbers the file's servers with (1, 2, ...), a reload after servers were added
/// live (ids of their own) would move clients to other servers while the servers stay
/// the same. Derived from the server's name alone (xxh3, the same in every run and build),
/// above the ids HAProxy numbers servers with and below 2^20: the ring's points are
/// `id * 4096` in 32 bits, so ids 2^20 apart would share them.
pub fn server_id(name: &str) -> u32 {
    const HALF_RING: u64 = 1 << 19;
    u32::try_from(HALF_RING + xxhash_rust::xxh3::xxh3_64(name.as_bytes()) % HALF_RING)
        .unwrap_or(1 << 19)
}

/// The id of each server of `backend`, in its order: its name's [`server_id`], or, when
/// an earlier server of the backend holds that one (two names of one hash), the next one
/// free. A hashing backend's file gives its servers these, and `add server` gives a
/// server added live the same, so the running servers are the file's.
pub fn server_ids(backend: &Backend) -> Vec<u32> {
    let mut taken = std::collections::HashSet::with_capacity(backend.servers.len());
    backend
        .servers
        .iter()
        .map(|server| {
            let id = free_id(server_id(&server.name()), &taken);
            taken.insert(id);
            id
        })
        .collect()
}

/// `id`, or the next one of the range `taken` does not hold (after its last, its first);
/// with the whole range taken (2^19 servers in one backend), `id` itself, which HAProxy
/// then refuses by name.
fn free_id(id: u32, taken: &std::collections::HashSet<u32>) -> u32 {
    const TOP: u32 = (1 << 20) - 1;
    let mut free = id;
    for _ in 0..(1u32 << 19) {
        if !taken.contains(&free) {
            return free;
        }
        free = if free >= TOP { 1 << 19 } else { free + 1 };
    }
    id
}

/// Appends the backend's server lines.
pub(crate) fn server_lines(text: &mut String, backend: &Backend) {
    // Where a server's id decides where its clients go: its place on a hash ring, or
    // its turn under `balance first` (the lowest id first).
    let pinned =
        backend.settings.balance.hashes() || backend.settings.balance == model::Balance::First;
    let ids = if pinned {
        server_ids(backend)
    } else {
        Vec::new()
    };
    for (index, server) in backend.servers.iter().enumerate() {
        text.push_str("    server ");
        server.push_name(text);
        text.push(' ');
        server.push_address_port(text);
        if let Some(id) = ids.get(index) {
            let _ = write!(text, " id {id}");
        }
        own_options(text, backend, server);
        text.push('\n');
    }
}

/// Whether a server's options can all be given to `add server`: HAProxy 2.6 refuses
/// `cookie`, so servers named by their cookie are added by a reload.
pub fn adds_servers_live(backend: &Backend) -> bool {
    backend
        .server_options
        .cookie
        .as_ref()
        .is_none_or(|cookie| *cookie.value() != CookieValue::ServerName)
}

/// Whether HAProxy derives each server's cookie from its address (`dynamic`): HAProxy
/// 2.6's `add server` does not, so a server added live has its address set again, which
/// does.
pub fn derives_server_cookies(backend: &Backend) -> bool {
    backend
        .server_options
        .cookie
        .as_ref()
        .is_some_and(|cookie| matches!(cookie.value(), CookieValue::Dynamic(_)))
}

fn write_options(text: &mut String, options: &ServerOptions) -> std::fmt::Result {
    if options.protocol == Protocol::Http2 {
        text.push_str(" proto h2");
        if options.tls.is_some() {
            text.push_str(" alpn h2");
        }
    }
    if let Some(maxconn) = options.maxconn {
        write!(text, " maxconn {maxconn}")?;
    }
    if let Some(maxqueue) = options.maxqueue {
        write!(text, " maxqueue {maxqueue}")?;
    }
    if let Some(slowstart) = &options.slowstart {
        write!(text, " slowstart {slowstart}")?;
    }
    if let Some(tls) = &options.tls {
        text.push_str(" ssl");
        if let Some(cert) = &tls.client_cert {
            // Unlike a `ca-file`, HAProxy 2.6 loads a server's `crt` after parsing, when
            // `default-path config` no longer applies: the path is relative to HAProxy's
            // working directory, which holds the state directory's `backend-tls/`.
            write!(text, " crt {}", backend_crt_file(&cert.secret))?;
        }
        match &tls.sni {
            None => {}
            Some(Sni::FromClient) => text.push_str(" sni ssl_fc_sni"),
            Some(Sni::FromHost) => text.push_str(" sni req.hdr(host),field(1,:)"),
            Some(Sni::Fixed(name)) => write!(text, " sni str({name})")?,
        }
        match &tls.verify {
            TlsVerify::None => text.push_str(" verify none"),
            TlsVerify::Required { ca, hostname } => {
                write!(
                    text,
                    " verify required ca-file {}",
                    from_shard_file(&backend_ca_file(&ca.secret))
                )?;
                if let Some(hostname) = hostname {
                    write!(text, " verifyhost {hostname}")?;
                }
            }
            TlsVerify::Policy { ca, hostname } => {
                let ca_file = match ca {
                    Some(ca) => from_shard_file(&backend_policy_ca_file(&ca.secret)),
                    None => "@system-ca".to_owned(),
                };
                write!(
                    text,
                    " verify required ca-file {ca_file} verifyhost {hostname}"
                )?;
            }
        }
    }
    if let Some(send_proxy) = options.send_proxy {
        write!(text, " {}", send_proxy.keyword())?;
    }
    if let Some(health) = &options.health {
        text.push_str(" check");
        // HAProxy checks a server of the files over TLS when it is spoken to over TLS
        // and its check has no port or address of its own; it does not for a server
        // added at runtime, whose check would be clear text (a TLS server resets it, and
        // the only server of a backend was down after a rolling update): said outright.
        if options.tls.is_some() && health.port.is_none() && health.addr.is_none() {
            text.push_str(" check-ssl");
        }
        // A server that requires the PROXY protocol refuses checks without it.
        if options.send_proxy.is_some() {
            text.push_str(" check-send-proxy");
        }
        // An HTTP check of an HTTP/2 server must speak HTTP/2 too.
        if http_check(options).is_some() && options.protocol == Protocol::Http2 {
            text.push_str(" check-proto h2");
        }
        if let Some(port) = health.port {
            write!(text, " port {port}")?;
        }
        // HAProxy reads a bare IPv6 address as a host and a port.
        match health.addr {
            Some(std::net::IpAddr::V6(addr)) => write!(text, " addr [{addr}]")?,
            Some(addr) => write!(text, " addr {addr}")?,
            None => {}
        }
        write!(text, " inter {}", health.interval)?;
        if let Some(rise) = health.rise {
            write!(text, " rise {rise}")?;
        }
        if let Some(fall) = health.fall {
            write!(text, " fall {fall}")?;
        }
    }
    Ok(())
}

/// Whether the backend's servers are health-checked: a server added at runtime must
/// have its checks enabled explicitly.
pub fn checks_servers(backend: &Backend) -> bool {
    backend.server_options.health.is_some()
}

/// The lines the `defaults` section before the shard files adds to the common ones: what
/// every backend gets where no annotation says otherwise (the ConfigMap's values or the
/// keys' defaults). A backend section writes only what differs, since HAProxy parses
/// each line again for each of thousands of sections (at 10k backends, the lines these
/// replace were a quarter of its parse).
pub(crate) fn backend_defaults_lines(defaults: &BackendDefaults) -> String {
    format!(
        "    balance {}
    timeout queue {}
    timeout tunnel {}
    timeout server-fin {}
    option redispatch
    default-server{}
",
        defaults.balance,
        defaults.timeout_queue,
        defaults.timeout_tunnel,
        defaults.timeout_server_fin,
        default_server_options(defaults)
    )
}

/// The server options the `defaults` section before the shard files gives every server
/// of a backend that has no `default-server` line of its own: the health check every
/// backend has unless told otherwise ([`default_server_line`] compares with these words).
fn default_server_options(defaults: &BackendDefaults) -> String {
    format!(" check inter {}", defaults.check_interval)
}

/// The section's `default-server` line: the options its servers share, which HAProxy then
/// parses once rather than once per server line. None when they are the `defaults`
/// section's. A section's line adds to that section's (it cannot reset it), so a backend
/// whose servers are not checked says `no-check`; every other option of the defaults'
/// line (`inter`) is written again by a backend that checks. Servers added at runtime read
/// neither line: `add server` is given [`server_options`].
pub(crate) fn default_server_line(
    text: &mut String,
    backend: &Backend,
    defaults: &BackendDefaults,
) {
    let shared = shared_options(backend);
    // Compared in place, without formatting the defaults' options for every backend.
    if shared.strip_prefix(" check inter ") == Some(defaults.check_interval.as_str()) {
        return;
    }
    text.push_str("    default-server");
    text.push_str(&shared);
    if backend.server_options.health.is_none() {
        text.push_str(" no-check");
    }
    text.push('\n');
}

/// The section lines that come before the server lines: balance, timeouts, retries and
/// the health check's request, where they differ from the backends' `defaults` section.
pub(crate) fn section_settings(text: &mut String, backend: &Backend, defaults: &BackendDefaults) {
    let settings = &*backend.settings;
    if settings.balance != defaults.balance {
        let _ = writeln!(text, "    balance {}", settings.balance);
    }
    if settings.balance.hashes() {
        // HAProxy takes servers at runtime into hashing backends only when consistent.
        text.push_str("    hash-type consistent\n");
    }
    let timeouts = &settings.timeouts;
    for (name, value, default) in [
        (
            "connect",
            Some(&settings.timeout_connect),
            Some(&defaults.timeout_connect),
        ),
        (
            "server",
            Some(&settings.timeout_server),
            Some(&defaults.timeout_server),
        ),
        (
            "queue",
            timeouts.queue.as_ref(),
            Some(&defaults.timeout_queue),
        ),
        (
            "tunnel",
            timeouts.tunnel.as_ref(),
            Some(&defaults.timeout_tunnel),
        ),
        (
            "server-fin",
            timeouts.server_fin.as_ref(),
            Some(&defaults.timeout_server_fin),
        ),
    ] {
        if let Some(value) = value
            && Some(value) != default
        {
            let _ = writeln!(text, "    timeout {name} {value}");
        }
    }
    if let Some(uri) = http_check(&backend.server_options) {
        let _ = writeln!(text, "    option httpchk {uri}");
    }
    if let Some(cookie) = &backend.server_options.cookie {
        crate::affinity::cookie_lines(text, cookie);
    }
    crate::access::backend_lines(&settings.client_limits, text);
}

/// `use-server` lines sending a request whose header, then cookie, names a blue-green
/// group to the first server of that group that is up. They follow every `http-request`
/// rule of the section, which HAProxy processes first whatever their order.
pub(crate) fn group_selection(text: &mut String, backend: &Backend) {
    let Some(selector) = &backend.settings.selector else {
        return;
    };
    let fetches = [
        selector
            .header
            .as_ref()
            .map(|name| format!("req.hdr({name})")),
        selector
            .cookie
            .as_ref()
            .map(|name| format!("req.cook({name})")),
    ];
    for fetch in fetches.iter().flatten() {
        for (server, group) in backend.grouped_servers() {
            let _ = writeln!(
                text,
                "    use-server {} if {{ {fetch} -m str {group} }}",
                server.name()
            );
        }
    }
}

/// The URI a server's health check requests, if its check is an HTTP one. HAProxy 2.6's
/// HTTP/2 checks over TLS never complete (every such server went down, `L7TOUT`, while
/// it answered the same request to clients), so an HTTP/2 server spoken to over TLS is
/// checked by its TLS handshake instead.
fn http_check(options: &model::ServerOptions) -> Option<&model::CheckUri> {
    let uri = options.health.as_ref()?.uri.as_ref()?;
    (options.protocol != Protocol::Http2 || options.tls.is_none()).then_some(uri)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_id_is_its_name_s_within_half_the_ring_and_a_taken_one_moves_to_the_next() {
        let id = server_id("10.0.0.4_8080");
        assert_eq!(id, 596_691, "the same in every run and build");
        assert!((1 << 19..1 << 20).contains(&id));
        let taken = std::collections::HashSet::from([id]);
        // Another name of the same hash takes the next id.
        assert_eq!(free_id(id, &taken), id + 1);
        // After the range's last id comes its first.
        let top = (1 << 20) - 1;
        assert_eq!(
            free_id(top, &std::collections::HashSet::from([top])),
            1 << 19
        );
        assert_eq!(
            free_id(top, &std::collections::HashSet::from([top, 1 << 19])),
            (1 << 19) + 1
        );
    }
}
