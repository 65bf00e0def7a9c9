//! The one place that reads a conversion: model, diagnostics and status as stable lines.

use convert::Conversion;
use convert::gateway_status::StatusReport;
use model::{
    Condition, Frontends, HeaderEdits, HostKey, PathChange, PathKind, PathMatch, RouteTarget,
    RuleAction,
};
use serde_json::Value;

/// Which lines a table states (diagnostics always).
#[derive(Debug, Clone, Copy)]
pub struct Show {
    /// Routes, certificates and the default backend.
    pub routes: bool,
    /// Backends and their servers.
    pub backends: bool,
    /// Gateway API status.
    pub status: bool,
}

impl Show {
    /// Routes, certificates, default backend, diagnostics.
    pub const ROUTES: Show = Show {
        routes: true,
        backends: false,
        status: false,
    };
    /// And backends.
    pub const BACKENDS: Show = Show {
        routes: true,
        backends: true,
        status: false,
    };
    /// Gateway API status and diagnostics.
    pub const STATUS: Show = Show {
        routes: false,
        backends: false,
        status: true,
    };
}

/// The lines of a conversion and its status, so the cases never name a model type:
///
/// - `route <host> <path> <type>[ [frontends]][ (https redirect <code>)] -> <backend>`:
///   a host is `a.test`, `*.a.test` (one label, as an Ingress means it), `**.a.test` (one
///   or more labels, as the Gateway API means it) or `(any host)`; a type is `Exact`,
///   `Prefix` (without its trailing slash) or `ImplementationSpecific`; frontends are
///   left out when both the HTTP and the HTTPS one serve the route, else `[http]`,
///   `[https]`, `[http:8080]`, `[https:8443]`; a backend is `<namespace>_<service>_<port>`.
/// - A route with conditions, filters or several backends (Gateway API) gives one line
///   per rule, in the order they are tried: `route ... #1 if <conditions> -> <action>`
///   (`via [frontends]` is the condition that keeps a rule to its listener's frontends;
///   `500` is the share answered with 500, `503` with 503).
/// - `tls <host> <namespace>/<secret>`: the certificate served for the host by SNI.
/// - `default -> <backend>`: the default backend.
/// - `passthrough <host> -> <backend>`: TLS connections whose SNI the host matches go
///   untouched to the backend (`refused`: they are refused).
/// - `backend <name> servers <address:port>...` (with `balance <algorithm>` when not
///   `roundrobin`, and `h1-ssl`, `h2` or `h2-ssl` when the servers are not spoken to in
///   clear HTTP/1.1), shown by tables that ask for backends.
/// - `diagnostic <object>: <field>: <message>`, always shown.
/// - A backend a BackendTLSPolicy governs adds `verify <ca> host <name> sni <name>`: `<ca>`
///   is the policy (`namespace/name`) whose CA bundle is used, or `@system-ca`.
/// - `status <object>: <conditions>`, `status <gateway> listener <name>: ...`, `status
///   <route> parent [ListenerSet ]<parent>[#section][:port]: ...`, `status <policy> ancestor
///   <gateway>: ...`, shown by tables that ask for status;
///   a condition is `Type=Status` when its reason is its type, else
///   `Type=Status(Reason)`, then `generation <n>` when observed; a Gateway with accepted
///   ListenerSets ends with `, listener sets <n>` (none: 0); a ListenerSet's listeners are
///   `status <listener set> listener <name>: ...` as a Gateway's; `status (none)` when
///   nothing has status.
pub fn summary(conversion: &Conversion, status: &StatusReport, show: Show) -> Vec<String> {
    let model = &conversion.model;
    let mut lines = Vec::new();
    if show.routes {
        for (key, host) in &model.hosts {
            for (path, route) in &host.routes {
                let mut head = format!("route {} {}", host_text(key), path_text(path));
                head.push_str(&frontends(&route.frontends));
                if let Some(code) = route.https_redirect {
                    head.push_str(&format!(" (https redirect {code})"));
                }
                match &route.target {
                    RouteTarget::Backend(id) => {
                        lines.push(format!("{head} -> {}", id.section_name()));
                    }
                    RouteTarget::Rules(rules) => {
                        let numbered = rules.len() > 1 || !rules[0].conditions.is_empty();
                        for (index, rule) in rules.iter().enumerate() {
                            let mut line = head.clone();
                            if numbered {
                                line.push_str(&format!(" #{}", index + 1));
                            }
                            if !rule.conditions.is_empty() {
                                let conditions: Vec<String> =
                                    rule.conditions.iter().map(condition_text).collect();
                                line.push_str(&format!(" if {}", conditions.join(", ")));
                            }
                            line.push_str(&format!(" -> {}", action_text(&rule.action)));
                            lines.push(line);
                        }
                    }
                }
            }
            if !host.tls.is_empty() {
                let options = &host.tls;
                let word = |w: &Option<model::TlsWord>| {
                    w.as_ref().map_or("-".to_owned(), ToString::to_string)
                };
                let flags: Vec<String> = options.options.iter().map(ToString::to_string).collect();
                lines.push(format!(
                    "tls-options {} ciphers {} suites {} alpn {} options [{}]",
                    host_text(key),
                    word(&options.ciphers),
                    word(&options.cipher_suites),
                    word(&options.alpn),
                    flags.join(" ")
                ));
            }
            if let Some(cert) = &host.cert {
                lines.push(format!(
                    "tls {} {}/{}",
                    host_text(key),
                    cert.namespace,
                    cert.name
                ));
            }
        }
        if let Some(id) = &model.default_backend {
            lines.push(format!("default -> {}", id.section_name()));
        }
        for (key, passthrough) in &model.passthrough {
            let target = passthrough
                .backend
                .as_ref()
                .map_or_else(|| "refused".to_owned(), |id| id.section_name());
            lines.push(format!("passthrough {} -> {target}", host_text(key)));
        }
        for (port, service) in &model.tcp_services {
            let mut settings = Vec::new();
            if let Some(tls) = &service.tls {
                let certs: Vec<String> = tls
                    .certs
                    .iter()
                    .map(|c| format!("{}/{}", c.namespace, c.name))
                    .collect();
                settings.push(format!("tls [{}]", certs.join(" ")));
                if let Some(ca) = &tls.client_ca {
                    settings.push(format!(
                        "client-ca {}/{}",
                        ca.secret.namespace, ca.secret.name
                    ));
                }
            }
            if service.accept_proxy {
                settings.push("accept-proxy".to_owned());
            }
            lines.push(
                format!("tcp {port} {}", settings.join(" "))
                    .trim_end()
                    .to_owned(),
            );
            for (key, route) in &service.routes {
                let targets: Vec<String> = route
                    .backends
                    .iter()
                    .map(|(id, weight)| {
                        let name = id
                            .as_ref()
                            .map_or_else(|| "refused".to_owned(), |id| id.section_name());
                        format!("{name}*{weight}")
                    })
                    .collect();
                let targets = if targets.is_empty() {
                    "refused".to_owned()
                } else {
                    targets.join(" ")
                };
                lines.push(format!("tcp {port} {} -> {targets}", host_text(key)));
            }
        }
    }
    if show.backends {
        for (id, backend) in &model.backends {
            let mut line = format!("backend {}", id.section_name());
            if !backend.is_http() {
                line.push_str(" mode tcp");
            }
            if backend.settings.balance != convert::keys::BALANCE_ALGORITHM.default_value() {
                line.push_str(&format!(" balance {}", backend.settings.balance));
            }
            let options = &backend.server_options;
            match (options.protocol, options.tls.is_some()) {
                (model::Protocol::Http1, false) => {}
                (model::Protocol::Http1, true) => line.push_str(" h1-ssl"),
                (model::Protocol::Http2, false) => line.push_str(" h2"),
                (model::Protocol::Http2, true) => line.push_str(" h2-ssl"),
            }
            if let Some(tls) = &options.tls
                && let model::TlsVerify::Policy { ca, hostname } = &tls.verify
            {
                let ca = ca.as_ref().map_or("@system-ca".to_owned(), |ca| {
                    format!("{}/{}", ca.secret.namespace, ca.secret.name)
                });
                let sni = match &tls.sni {
                    Some(model::Sni::Fixed(name)) => name.to_string(),
                    other => format!("{other:?}"),
                };
                line.push_str(&format!(" verify {ca} host {hostname} sni {sni}"));
            }
            if let Some(proxy) = options.send_proxy {
                line.push_str(&format!(" {}", proxy.keyword()));
            }
            // A TCP service's checks, where they are not every backend's default (2s).
            if backend.id.mode == model::BackendMode::Tcp {
                match &options.health {
                    None => line.push_str(" no-check"),
                    Some(health) if health.interval.as_str() != "2s" => {
                        line.push_str(&format!(" check {}", health.interval));
                    }
                    Some(_) => {}
                }
            }
            let servers: Vec<String> = backend
                .servers
                .iter()
                .map(|s| format!("{}:{}", s.address, s.port))
                .collect();
            if servers.is_empty() {
                line.push_str(" servers (none)");
            } else {
                line.push_str(&format!(" servers {}", servers.join(" ")));
            }
            lines.push(line);
        }
    }
    for diagnostic in &conversion.diagnostics {
        lines.push(format!("diagnostic {diagnostic}"));
    }
    if show.status {
        for (object, status) in status {
            status_lines(
                &object.to_string(),
                &serde_json::to_value(status).unwrap(),
                &mut lines,
            );
        }
        if status.is_empty() {
            lines.push("status (none)".to_owned());
        }
    }
    lines
}

fn host_text(key: &HostKey) -> String {
    match key {
        HostKey::Exact(name) => name.to_string(),
        HostKey::Wildcard(suffix) => format!("*.{suffix}"),
        HostKey::Suffix(suffix) => format!("**.{suffix}"),
        HostKey::Regex(pattern) => format!("~{pattern}"),
        HostKey::CatchAll => "(any host)".to_owned(),
    }
}

fn path_text(path: &PathMatch) -> String {
    let shown = if path.path.is_empty() {
        "/"
    } else {
        &path.path
    };
    let kind = match path.kind {
        PathKind::Exact => "Exact",
        PathKind::Prefix => "Prefix",
        PathKind::Begin => "ImplementationSpecific",
    };
    format!("{shown} {kind}")
}

fn frontends(listeners: &Frontends) -> String {
    if *listeners == Frontends::BOTH {
        return String::new();
    }
    let mut names = Vec::new();
    if listeners.http {
        names.push("http".to_owned());
    }
    if listeners.https {
        names.push("https".to_owned());
    }
    names.extend(listeners.ports.iter().map(|p| format!("http:{p}")));
    names.extend(listeners.tls_ports.iter().map(|p| format!("https:{p}")));
    format!(" [{}]", names.join(","))
}

fn condition_text(condition: &Condition) -> String {
    match condition {
        Condition::Path(pattern) => format!("path ~ {pattern}"),
        Condition::Method(method) => format!("method {method}"),
        Condition::Header(header) => format!(
            "header {} {} {}",
            header.name,
            if header.regex { "~" } else { "=" },
            header.value
        ),
        Condition::Query(query) => format!(
            "query {} {} {}",
            query.name,
            if query.regex { "~" } else { "=" },
            query.value
        ),
        Condition::Frontends(listeners) => format!("via{}", frontends(listeners)),
    }
}

fn edits_text(what: &str, edits: &HeaderEdits, parts: &mut Vec<String>) {
    for (name, value) in edits.set() {
        parts.push(format!("{what} set {name}: {value}"));
    }
    for (name, value) in edits.add() {
        parts.push(format!("{what} add {name}: {value}"));
    }
    for name in edits.remove() {
        parts.push(format!("{what} remove {name}"));
    }
}

fn path_change_text(change: &PathChange) -> String {
    match change {
        PathChange::Full(path) => format!("path {path}"),
        PathChange::Prefix {
            matched,
            replacement,
        } => format!("prefix {matched} => {replacement}"),
        PathChange::Begins {
            matched,
            replacement,
        } => format!("begins {matched} => {replacement}"),
    }
}

/// What a rule does: its filters, then where its traffic goes.
fn action_text(action: &RuleAction) -> String {
    let mut parts = Vec::new();
    edits_text("request", &action.request_headers, &mut parts);
    edits_text("response", &action.response_headers, &mut parts);
    if let Some(rewrite) = &action.rewrite {
        if let Some(host) = &rewrite.hostname {
            parts.push(format!("rewrite host {host}"));
        }
        if let Some(path) = &rewrite.path {
            parts.push(format!("rewrite {}", path_change_text(path)));
        }
    }
    if let Some(redirect) = &action.redirect {
        let mut text = format!("redirect {}", redirect.code);
        if let Some(scheme) = &redirect.scheme {
            text.push_str(&format!(" scheme {scheme}"));
        }
        if let Some(host) = &redirect.hostname {
            text.push_str(&format!(" host {host}"));
        }
        if let Some(port) = redirect.port {
            text.push_str(&format!(" port {port}"));
        }
        if let Some(path) = &redirect.path {
            text.push_str(&format!(" {}", path_change_text(path)));
        }
        parts.push(text);
    }
    if let Some(timeout) = &action.server_timeout {
        parts.push(format!("server timeout {timeout}"));
    }
    match action.hsts {
        model::HstsRule::Inherit => {}
        model::HstsRule::Off => parts.push("hsts off".to_owned()),
        model::HstsRule::On(hsts) => parts.push(format!("hsts '{}'", hsts.header_value())),
    }
    if let Some(cors) = &action.cors {
        let origins = match &cors.origins {
            model::CorsOrigins::Any => "*".to_owned(),
            model::CorsOrigins::Listed { exact, regex } => exact
                .iter()
                .chain(regex)
                .cloned()
                .collect::<Vec<_>>()
                .join(" "),
        };
        parts.push(format!(
            "cors {origins} methods {} headers {} expose {} credentials {} max-age {}",
            cors.allow_methods.join(","),
            cors.allow_headers.join(","),
            cors.expose_headers.join(","),
            cors.allow_credentials,
            cors.max_age
        ));
    }
    if let Some(access) = &action.access {
        access_text(access, &mut parts);
    }
    let weighted = action.backends.len() > 1 || action.unavailable_weight > 0;
    let mut targets: Vec<String> = action
        .backends
        .iter()
        .map(|backend| {
            let mut text = backend.id.section_name();
            if weighted {
                text.push_str(&format!(" weight {}", backend.weight));
            }
            let mut own = Vec::new();
            edits_text("request", &backend.request_headers, &mut own);
            edits_text("response", &backend.response_headers, &mut own);
            if let Some(rewrite) = &backend.rewrite {
                if let Some(host) = &rewrite.hostname {
                    own.push(format!("rewrite host {host}"));
                }
                if let Some(path) = &rewrite.path {
                    own.push(format!("rewrite {}", path_change_text(path)));
                }
            }
            if let Some(redirect) = &backend.redirect {
                own.push(format!("redirect {}", redirect.code));
            }
            if !own.is_empty() {
                text.push_str(&format!(" ({})", own.join(", ")));
            }
            text
        })
        .collect();
    if action.unavailable_weight > 0 {
        let answer = match action.unavailable_answer {
            model::Unavailable::InternalError => "500",
            model::Unavailable::ServiceUnavailable => "503",
        };
        if action.backends.is_empty() {
            targets.push(answer.to_owned());
        } else {
            targets.push(format!("{answer} weight {}", action.unavailable_weight));
        }
    }
    if !targets.is_empty() {
        parts.push(targets.join(", "));
    }
    parts.join("; ")
}

/// Who a rule refuses: `refuse all`, or `allow [...]` / `deny [...]` (exceptions with
/// `!`) and the header the client address comes from.
fn access_text(access: &model::SourceAccess, parts: &mut Vec<String>) {
    if access.refuse_all {
        parts.push("refuse all".to_owned());
        return;
    }
    for (word, rule) in [("allow", &access.allow), ("deny", &access.deny)] {
        if let Some(rule) = rule {
            let entries: Vec<String> = rule
                .ranges
                .iter()
                .map(ToString::to_string)
                .chain(rule.exceptions.iter().map(|e| format!("!{e}")))
                .collect();
            parts.push(format!("{word} [{}]", entries.join(" ")));
        }
    }
    if let Some(header) = &access.source_header {
        parts.push(format!("client from {header}"));
    }
}

/// A list of conditions, trimmed to type, status and reason.
fn conditions_text(conditions: &Value) -> String {
    let mut parts = Vec::new();
    for condition in conditions.as_array().into_iter().flatten() {
        let kind = condition["type"].as_str().unwrap_or_default();
        let status = condition["status"].as_str().unwrap_or_default();
        let reason = condition["reason"].as_str().unwrap_or_default();
        if reason == kind {
            parts.push(format!("{kind}={status}"));
        } else {
            parts.push(format!("{kind}={status}({reason})"));
        }
    }
    if let Some(generation) = conditions[0]["observedGeneration"].as_i64() {
        parts.push(format!("generation {generation}"));
    }
    parts.join(" ")
}

fn status_lines(object: &str, status: &Value, lines: &mut Vec<String>) {
    if let Some(ancestors) = status["ancestors"].as_array() {
        for ancestor in ancestors {
            let reference = &ancestor["ancestorRef"];
            lines.push(format!(
                "status {object} ancestor {}/{}: {}",
                reference["namespace"].as_str().unwrap_or_default(),
                reference["name"].as_str().unwrap_or_default(),
                conditions_text(&ancestor["conditions"])
            ));
        }
        return;
    }
    if let Some(parents) = status["parents"].as_array() {
        for parent in parents {
            let reference = &parent["parentRef"];
            // A Gateway parent is shown as before; any other kind is named.
            let kind = match reference["kind"].as_str().unwrap_or_default() {
                "Gateway" => String::new(),
                other => format!("{other} "),
            };
            let mut name = format!(
                "{kind}{}/{}",
                reference["namespace"].as_str().unwrap_or_default(),
                reference["name"].as_str().unwrap_or_default()
            );
            if let Some(section) = reference["sectionName"].as_str() {
                name.push_str(&format!("#{section}"));
            }
            if let Some(port) = reference["port"].as_i64() {
                name.push_str(&format!(":{port}"));
            }
            lines.push(format!(
                "status {object} parent {name}: {}",
                conditions_text(&parent["conditions"])
            ));
        }
        return;
    }
    let mut line = format!(
        "status {object}: {}",
        conditions_text(&status["conditions"])
    );
    if let Some(sets) = status["attachedListenerSets"].as_u64().filter(|n| *n > 0) {
        line.push_str(&format!(", listener sets {sets}"));
    }
    lines.push(line);
    for listener in status["listeners"].as_array().into_iter().flatten() {
        let kinds: Vec<&str> = listener["supportedKinds"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|k| k["kind"].as_str())
            .collect();
        lines.push(format!(
            "status {object} listener {}: routes {}, kinds [{}], {}",
            listener["name"].as_str().unwrap_or_default(),
            listener["attachedRoutes"],
            kinds.join(","),
            conditions_text(&listener["conditions"])
        ));
    }
}
