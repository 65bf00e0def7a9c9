//! The main configuration file: global, defaults, frontends and support backends.

use std::fmt::Write;

use std::collections::BTreeMap;
use std::sync::Arc;

use model::{HostKey, ProxyModel};

use crate::client_auth::ClientAuthLines;
use crate::forwarded::{FRONTED_HTTPS, Fronted};
use crate::layout::{ADMIN_SOCKET, MapFile, RUN_DIR};
use crate::maps::redirect_marker;
use crate::ports::{HostPortLines, LineOrder, PortFrontend};
use crate::rules::{
    DISPATCH_PREFIX, GATEWAY_500_BACKEND, GATEWAY_503_BACKEND, HostRuleLines, SERVED_AS,
    TLS_REDIRECT,
};

/// The rule chains' lines, then the backend the request goes to.
fn selection<'a>(
    text: &mut String,
    rules: impl Iterator<Item = &'a HostRuleLines> + Clone,
    https_redirects: &str,
    responses: &model::Responses,
    default_backend: &str,
) {
    for host in rules.clone() {
        text.push_str(&host.requests);
    }
    text.push_str(https_redirects);
    text.push_str(crate::responses::body_limit_line(
        responses,
        rules.clone().any(|host| host.limits_body),
    ));
    for host in rules.clone() {
        text.push_str(&host.responses);
    }
    for host in rules {
        text.push_str(&host.backends);
    }
    let _ = write!(
        text,
        "    use_backend {NOT_FOUND_BACKEND} if {{ var(txn.backend) -m beg {DISPATCH_PREFIX} }}
    use_backend %[var(txn.backend)] if {{ var(txn.backend) -m found }}
    default_backend {default_backend}
"
    );
}

/// A plain-HTTP frontend's redirects to HTTPS, one per status code, each under the
/// condition `when(code)` gives.
fn https_redirect_lines(https_port: &str, when: impl Fn(u16) -> String) -> String {
    let mut text = String::new();
    for code in REDIRECT_CODES {
        let _ = writeln!(
            text,
            "    http-request redirect location https://%[var(txn.host)]{https_port}%[capture.req.uri] code {code} if {}",
            when(code)
        );
    }
    text
}

/// The redirects to HTTPS of the requests a chain's rule takes when that rule asks for
/// one (`txn.tls_redirect`), but not of a fronting proxy's HTTPS requests, nor of the
/// redirect's exceptions.
fn chain_redirect_lines(https_port: &str, fronted: Fronted, exceptions: &[String]) -> String {
    let mut unless = String::new();
    if fronted != Fronted::No {
        unless.push_str(&format!(" !{FRONTED_HTTPS}"));
    }
    if !exceptions.is_empty() {
        unless.push_str(" !tls_redirect_exempt");
    }
    https_redirect_lines(https_port, |code| {
        format!("{{ var({TLS_REDIRECT}) -m int eq {code} }}{unless}")
    })
}

/// The lines that find the request's host key (`txn.hostkey`) from `txn.host`: the exact
/// name, then wildcards of one to five labels, then the host patterns, then the catch-all.
/// A wildcard stands for whole labels of a host name's characters: an empty first label
/// (`.wild.test`) or one holding others (`a@b.wild.test`) is no label.
fn hostkey_lines() -> String {
    let hosts_map = MapFile::Hosts.path();
    let regex_hosts_map = MapFile::RegexHosts.path();
    format!(
        "    http-request set-var(txn.hostkey) var(txn.host),map_str({hosts_map})
    http-request set-var(txn.hostkey) var(txn.host),regsub(^[a-z0-9_-]+,*),map_str({hosts_map}) if !{{ var(txn.hostkey) -m found }}
    http-request set-var(txn.hostkey) var(txn.host),regsub(^[a-z0-9_-]+,**),map_str({hosts_map}) if !{{ var(txn.hostkey) -m found }}
    http-request set-var(txn.hostkey) var(txn.host),regsub(^[a-z0-9_-]+[.][a-z0-9_-]+,**),map_str({hosts_map}) if !{{ var(txn.hostkey) -m found }}
    http-request set-var(txn.hostkey) var(txn.host),regsub(^[a-z0-9_-]+[.][a-z0-9_-]+[.][a-z0-9_-]+,**),map_str({hosts_map}) if !{{ var(txn.hostkey) -m found }}
    http-request set-var(txn.hostkey) var(txn.host),regsub(^[a-z0-9_-]+[.][a-z0-9_-]+[.][a-z0-9_-]+[.][a-z0-9_-]+,**),map_str({hosts_map}) if !{{ var(txn.hostkey) -m found }}
    http-request set-var(txn.hostkey) var(txn.host),map_reg({regex_hosts_map}) if !{{ var(txn.hostkey) -m found }}
    http-request set-var(txn.hostkey) str(<default>) if !{{ var(txn.hostkey) -m found }}
"
    )
}

/// Answers requests no route claims.
pub const NOT_FOUND_BACKEND: &str = "_default_404";

/// Redirects requests no route and no default backend take (`default-backend-redirect`);
/// a Gateway API hostname still answers 404 to what its rules do not match, as the
/// specification asks.
const NOT_FOUND_REDIRECT_BACKEND: &str = "_default_redirect";

/// The path's normalization before it is routed (`normalize-paths`): unreserved
/// characters decoded first, so that `%2e%2e` is a `..` the next lines resolve.
const NORMALIZE_PATH_LINES: &str = "    http-request normalize-uri percent-decode-unreserved
    http-request normalize-uri path-merge-slashes
    http-request normalize-uri path-strip-dot
    http-request normalize-uri path-strip-dotdot full
";
/// Refuses a Host that names no single host, before any line reads it: HAProxy reads a
/// header's last comma-separated value, so `admin.test, www.test` would be routed (and
/// allowed) as `www.test` while the backend saw `admin.test` first. A `*` names no host
/// (`*.wild.test` would find the wildcard's own entry). An HTTP/1.1 request without one,
/// and one longer than any host (whose X-Forwarded-Host copy overflowed the buffer, a
/// 500), are refused too.
const HOST_CHECK_LINE: &str = "    http-request deny deny_status 400 if { req.fhdr(host) -m sub , } || { req.fhdr(host) -m sub * } || { req.fhdr(host),length gt 1024 } || { req.ver -m str 1.1 } !{ req.hdr(host) -m found }
";

/// The request's host, lower case, without its port and a final dot (`txn.host`).
/// `field(1,:)` alone would cut an IPv6 literal (`[::1]:8080`) at its first colon,
/// leaving `[` for redirects and logs; such a literal is kept whole, brackets included,
/// as a `Location` needs it.
const HOST_LINES: &str = "    http-request set-var(txn.host) req.hdr(host),field(1,:),lower,regsub(\\.$,)
    http-request set-var(txn.host) req.hdr(host),lower,regsub(\\].*$,]) if { req.hdr(host),lower -m reg ^\\[[0-9a-f:.]+\\](:[0-9]+)?$ }
";

/// Every HTTPS redirect code a route may ask for.
const REDIRECT_CODES: [u16; 5] = [301, 302, 303, 307, 308];

pub(crate) fn main_config<'a>(
    model: &ProxyModel,
    (rules, default_rule): (
        impl Iterator<Item = &'a HostRuleLines> + Clone,
        Option<&'a HostRuleLines>,
    ),
    port_lines: &BTreeMap<HostKey, Arc<HostPortLines>>,
    client_auth: &ClientAuthLines,
) -> String {
    let client_bind = if client_auth.any() {
        crate::client_auth::BIND_OPTIONS
    } else {
        ""
    };
    let global = &model.global;
    // Userlists by section name: Ingresses naming one Secret share its section.
    let mut userlists: BTreeMap<String, &model::Userlist> = BTreeMap::new();
    let mut uses_lua = false;
    for host in rules.clone().chain(default_rule) {
        uses_lua |= host.uses_lua;
        for list in &host.userlists {
            userlists.entry(list.section_name()).or_insert(list);
        }
    }
    let mut text = String::with_capacity(4096);
    // `no strict-limits`: HAProxy counts a file descriptor for every health-checked
    // server on top of twice `maxconn`, so 30k servers ask for more than a common 20k
    // limit and HAProxy would refuse to start at all. Checks run a few at a time, so it
    // starts, saying (in its log) what limit it would have liked.
    let _ = write!(
        text,
        "# Generated by portcullis; every change is overwritten.
global
    default-path config
    maxconn {maxconn}
    no strict-limits
    stats socket unix@{RUN_DIR}/{ADMIN_SOCKET} mode 600 level admin expose-fd listeners
{threads}{hard_stop}{max_reloads}{experimental}{lua}{tls_defaults}{dh_params}{global_log}{resolvers}
defaults
{defaults}",
        maxconn = global.max_connections,
        threads = global
            .process
            .threads
            .map_or_else(String::new, |threads| format!("    nbthread {threads}\n")),
        max_reloads = match global.process.max_reloads {
            0 => String::new(),
            reloads => format!("    mworker-max-reloads {reloads}\n"),
        },
        // `normalize-uri` is one of HAProxy 2.6's experimental actions.
        experimental = if global.normalize_paths {
            "    expose-experimental-directives\n"
        } else {
            ""
        },
        tls_defaults = crate::https::global_lines(&global.https.tls),
        dh_params = crate::https::dh_params_line(&global.https),
        lua = if uses_lua {
            format!("    lua-load {}\n", crate::layout::AUTH_LUA_FILE)
        } else {
            // Only a Lua script would use HAProxy's HTTP client (an https `auth-url`
            // verified against the system's CAs). Without one, the client need not load
            // those CAs, which at 10k backends was a sixth of each start's parsing.
            "    httpclient.ssl.verify none\n".to_owned()
        },
        // Zero is no limit: HAProxy has no keyword for it but leaving the line out.
        hard_stop = if global.timeout_stop.to_std().is_zero() {
            String::new()
        } else {
            format!("    hard-stop-after {}\n", global.timeout_stop)
        },
        global_log = crate::logging::global_lines(&global.logging),
        resolvers = crate::dns::resolvers_sections(&global.resolvers),
        // The frontends' section keeps the keys' own connect and server timeouts: only
        // the sections of the backends follow the ConfigMap's.
        defaults = defaults_lines(global, &model::BackendDefaults::default()),
    );
    for list in userlists.values() {
        crate::auth::userlist_section(list, &mut text);
    }
    let response_lines = crate::responses::frontend_lines(&global.responses);
    let default_backend = model
        .default_backend
        .as_ref()
        .filter(|id| model.backends.contains_key(*id))
        .map_or_else(
            || {
                let redirects = global.responses.not_found_redirect.is_some();
                if redirects {
                    NOT_FOUND_REDIRECT_BACKEND
                } else {
                    NOT_FOUND_BACKEND
                }
                .to_owned()
            },
            |id| id.section_name(),
        );
    let address = match global.bind_address {
        std::net::IpAddr::V4(v4) => v4.to_string(),
        std::net::IpAddr::V6(v6) => format!("[{v6}]"),
    };
    let fronting_proxy = global.forwarded.fronting_proxy;
    let mut frontends = vec![
        (
            "http",
            global.http_port,
            false,
            Fronted::on_http_port(fronting_proxy),
        ),
        ("https", global.https_port, true, Fronted::No),
    ];
    if let Some((proxy, port)) = fronting_proxy.and_then(|proxy| Some((proxy, proxy.own_port()?))) {
        frontends.push(("fronting_proxy", port, false, Fronted::Own(proxy)));
    }
    let chains_redirect = rules.clone().any(|host| host.redirects_to_https);
    for (frontend, port, tls, fronted) in frontends {
        let bind_options = if tls {
            crate::https::bind_options(&global.https.tls) + client_bind
        } else {
            String::new()
        };
        let accept_proxy = crate::proxy_protocol::bind_option(&global.accept_proxy);
        if tls && crate::passthrough::enabled(model) {
            // The TCP frontend owns the port and has read the client's PROXY header, if
            // any; it sends its own, naming the client, over the local socket.
            crate::passthrough::sections(
                model,
                &format!("{address}:{port}{accept_proxy}"),
                &mut text,
            );
            let _ = writeln!(
                text,
                "\nfrontend {frontend}\n    bind {} accept-proxy{bind_options}",
                crate::passthrough::terminate_address()
            );
        } else {
            let _ = writeln!(text, "\nfrontend {frontend}");
            let _ = writeln!(
                text,
                "    bind {address}:{port}{bind_options}{accept_proxy}"
            );
            text.push_str(&crate::proxy_protocol::frontend_lines(&global.accept_proxy));
        }
        text.push_str(&response_lines);
        text.push_str(HOST_CHECK_LINE);
        text.push_str(&crate::forwarded::frontend_lines(
            &global.forwarded,
            tls,
            fronted,
        ));
        // Routes of different listeners sharing a path tell them apart by this.
        let served_as = if tls { "https" } else { "http" };
        let _ = writeln!(
            text,
            "    http-request set-var({SERVED_AS}) str({served_as})"
        );
        if fronted != Fronted::No {
            let _ = writeln!(
                text,
                "    http-request set-var({SERVED_AS}) str(https) if {FRONTED_HTTPS}"
            );
        }
        let exact_map = MapFile::exact_paths(!tls).path();
        let prefix_map = MapFile::path_prefixes(!tls).path();
        // A redirect that names no port keeps the one the client asked for (a NodePort,
        // or `--http-port 8080` reached directly), the scheme's own left out. Digits only:
        // a Host such as `good.test:@evil.test` must not make a redirect leave the host.
        let default_port = if tls { 443 } else { 80 };
        if global.normalize_paths {
            text.push_str(NORMALIZE_PATH_LINES);
        }
        let _ = write!(
            text,
            "{HOST_LINES}    http-request set-var(txn.listener_port) req.hdr(host),regsub(^.*:,:) if {{ req.hdr(host) -m reg ':[0-9]+$' }} !{{ req.hdr(host) -m end :{default_port} }}
{hostkey}    http-request set-var-fmt(txn.route) \"%[var(txn.hostkey)]#%[path]\"
    http-request set-var(txn.backend) var(txn.route),map_str({exact_map})
    http-request set-var(txn.backend) var(txn.route),map_beg({prefix_map}) if !{{ var(txn.backend) -m found }}
",
            hostkey = hostkey_lines(),
        );
        if fronted != Fronted::No {
            // The proxy's HTTPS requests are routed as the HTTPS port routes them: no
            // redirect to HTTPS, which they came over. What only a plain-HTTP listener
            // routes (a Gateway with no HTTPS listener, behind the proxy) is still served,
            // unless it is the HTTPS redirect itself.
            let _ = write!(
                text,
                "    http-request set-var(txn.plain_backend) var(txn.backend) if {FRONTED_HTTPS} {{ var(txn.backend) -m found }} !{{ var(txn.backend) -m beg _redirect_ }}
    http-request unset-var(txn.backend) if {FRONTED_HTTPS}
{}    http-request set-var(txn.backend) var(txn.plain_backend) if {FRONTED_HTTPS} !{{ var(txn.backend) -m found }} {{ var(txn.plain_backend) -m found }}
{}",
                crate::https::https_route_lines(FRONTED_HTTPS),
                crate::https::hsts_line(global.https.hsts.as_ref(), FRONTED_HTTPS)
            );
        }
        // The Host's own port is the HTTP one: a redirect names the HTTPS port. A fronting
        // proxy's own port sends clients back to the proxy, whose HTTPS port is not
        // HAProxy's: the scheme's own.
        let https_port_suffix = match (fronted, global.https_port) {
            (Fronted::Own(_), _) | (_, 443) => String::new(),
            (_, port) => format!(":{port}"),
        };
        if !tls {
            text.push_str(&crate::https::redirect_exception_lines(
                &global.https.redirect_exceptions,
            ));
            text.push_str(&https_redirect_lines(&https_port_suffix, |code| {
                format!("{{ var(txn.backend) -m str {} }}", redirect_marker(code))
            }));
        }
        if tls {
            text.push_str(&crate::https::misdirected_lines(
                &model.https_listener_hosts,
            ));
            text.push_str(&crate::https::hsts_line(global.https.hsts.as_ref(), ""));
            text.push_str(&client_auth.tls);
        } else {
            text.push_str(&client_auth.plain);
        }
        // The HTTPS redirect of a chain's rule, on plain HTTP (its map value names the
        // chain, which decides per rule).
        let https_redirects = if tls || !chains_redirect {
            String::new()
        } else {
            chain_redirect_lines(
                &https_port_suffix,
                fronted,
                &global.https.redirect_exceptions,
            )
        };
        selection(
            &mut text,
            rules.clone().chain(default_rule),
            &https_redirects,
            &global.responses,
            &default_backend,
        );
    }
    // Gateway listeners on other ports: a frontend each, its routes listed in order.
    // Every listener's port is bound, routes or none: a listener is served as soon as
    // its Gateway is, and answers 404 until a route attaches.
    let mut by_port: BTreeMap<PortFrontend, Vec<&(LineOrder, String)>> = model
        .own_port_listeners
        .iter()
        .map(|port| (*port, Vec::new()))
        .collect();
    for host in port_lines.values() {
        for (port, lines) in host.iter() {
            by_port.entry(*port).or_default().extend(lines.iter());
        }
    }
    for ((port, tls), mut lines) in by_port {
        lines.sort_by(|a, b| a.0.cmp(&b.0));
        let bind_options = if tls {
            crate::https::bind_options(&global.https.tls) + client_bind
        } else {
            String::new()
        };
        let _ = write!(
            text,
            "\nfrontend port_{port}\n    bind {address}:{port}{bind_options}{}\n{}{response_lines}{HOST_CHECK_LINE}{}    http-request set-var({SERVED_AS}) str(port_{port})\n{}{HOST_LINES}    http-request set-var(txn.listener_port) str(:{port})\n",
            crate::proxy_protocol::bind_option(&global.accept_proxy),
            crate::proxy_protocol::frontend_lines(&global.accept_proxy),
            crate::forwarded::frontend_lines(&global.forwarded, tls, Fronted::No),
            if global.normalize_paths {
                NORMALIZE_PATH_LINES
            } else {
                ""
            }
        );
        for (_, line) in lines {
            text.push_str(line);
        }
        if tls {
            text.push_str(&crate::https::hsts_line(global.https.hsts.as_ref(), ""));
            if client_auth.any() {
                // The checks name hosts by their key, which the port's lines do not need.
                text.push_str(&hostkey_lines());
                text.push_str(&client_auth.tls);
            }
        } else {
            text.push_str(&client_auth.plain_port);
        }
        selection(
            &mut text,
            rules.clone(),
            "",
            &global.responses,
            NOT_FOUND_BACKEND,
        );
    }
    crate::tcp::sections(model, &address, &mut text);
    text.push_str(&crate::observers::frontends(global, &address));
    let _ = write!(
        text,
        "
backend {NOT_FOUND_BACKEND}
{}{}
backend {GATEWAY_500_BACKEND}
    http-request return status 500 content-type text/plain string \"500 No Valid Backend\"

backend {GATEWAY_503_BACKEND}
    http-request return status 503 content-type text/plain string \"503 No Valid Backend\"
",
        crate::responses::not_found_line(&global.responses),
        crate::responses::not_found_redirect(&global.responses, NOT_FOUND_REDIRECT_BACKEND),
    );
    // Last, so that it is what the sections of the shard files follow, and nothing here.
    let _ = write!(
        text,
        "\n# The backends of the shard files: the same defaults, and the settings they share.\ndefaults\n{}{}",
        defaults_lines(global, &global.backends),
        crate::servers::backend_defaults_lines(&global.backends)
    );
    text
}

/// The lines of a `defaults` section, after its header, with the connect and server
/// timeouts of `backends`.
fn defaults_lines(global: &model::Global, backends: &model::BackendDefaults) -> String {
    let timeouts = &global.timeouts;
    let (connect, server) = (&backends.timeout_connect, &backends.timeout_server);
    format!(
        "    mode http
{log}    timeout connect {connect}
    timeout client {client}
    timeout client-fin {client_fin}
    timeout server {server}
    timeout http-request {http_request}
    timeout http-keep-alive {keep_alive}
{error_files}",
        log = crate::logging::defaults_lines(&global.logging),
        client = timeouts.client,
        client_fin = timeouts.client_fin,
        http_request = timeouts.http_request,
        keep_alive = timeouts.keep_alive,
        error_files = crate::responses::defaults_lines(&global.responses),
    )
}
