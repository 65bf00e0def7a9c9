//! Gateway API rule chains as frontend lines. The route maps give a chained path the
//! value `_gw_<hash>`; the frontend then picks the first rule of that chain whose
//! conditions hold (`txn.rule`), applies its filters, and sends the request on. A chain
//! that may fall through continues with the rules of the shorter paths that also match,
//! and finally answers 404, so the precedence between paths stays that of the maps.

use std::collections::BTreeMap;
use std::fmt::Write;

use model::{
    BackendId, BodyLimit, Condition, GatewayRule, HeaderEdits, Host, HostKey, Origin, PathChange,
    PathKind, PathMatch, Redirect, Rewrite, Route, RouteTarget, RuleBackend,
};

use crate::escape::{quoted_regex_literal, regex_literal};
use crate::responses::SERVER_HEADER_REMOVED;

/// Answers a rule whose backends are all invalid, as the Gateway API requires of an
/// HTTPRoute.
pub const GATEWAY_500_BACKEND: &str = "_gateway_500";
/// Answers a GRPCRoute rule whose backends are all invalid: gRPC clients read 503 as
/// `UNAVAILABLE`, the status the Gateway API requires there.
pub const GATEWAY_503_BACKEND: &str = "_gateway_503";
/// The prefix of every chained route's map value.
pub const DISPATCH_PREFIX: &str = "_gw_";

/// The map value of a chained route.
pub fn dispatch_name(host: &HostKey, path: &PathMatch) -> String {
    let kind = match path.kind {
        PathKind::Exact => "exact",
        PathKind::Prefix => "prefix",
        PathKind::Begin => "begin",
    };
    let identity = format!("{}#{}#{kind}", host.map_key(), path.path);
    format!(
        "{DISPATCH_PREFIX}{:016x}",
        xxhash_rust::xxh3::xxh3_64(identity.as_bytes())
    )
}

/// The variable holding a request's body limit: the frontends' (`proxy-body-size`),
/// replaced by its path's rule; requests announcing a larger body are answered 413.
pub(crate) const BODY_LIMIT_VAR: &str = "txn.max_body";

/// One host's frontend lines, by the place they take in the frontend.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct HostRuleLines {
    /// `http-request` lines: choose the rule, then its request filters.
    pub(crate) requests: String,
    /// `use_backend` lines.
    pub(crate) backends: String,
    /// `http-response` lines.
    pub(crate) responses: String,
    /// Every line above with the object it came from (for [`crate::origins`]).
    pub(crate) origins: Vec<(String, Origin)>,
    /// Whether a rule sets a body limit of its own.
    pub(crate) limits_body: bool,
    /// The address list files the lines name: path → content.
    pub(crate) files: BTreeMap<String, String>,
    /// The userlists its rules' Basic authentication checks.
    pub(crate) userlists: Vec<std::sync::Arc<model::Userlist>>,
    /// Whether a rule asks an external authentication service (the Lua action).
    pub(crate) uses_lua: bool,
    /// Whether a rule redirects plain HTTP to HTTPS (`TLS_REDIRECT`).
    pub(crate) redirects_to_https: bool,
}

/// An entry of an effective chain.
enum Entry<'a> {
    Rule(&'a GatewayRule),
    /// A plain route of a shorter path: takes every request left, redirecting plain HTTP
    /// as that route does.
    Plain(&'a BackendId, &'a Origin, Option<u16>),
}

impl Entry<'_> {
    fn origin(&self) -> &Origin {
        match self {
            Entry::Rule(rule) => &rule.origin,
            Entry::Plain(_, origin, _) => origin,
        }
    }

    fn https_redirect(&self) -> Option<u16> {
        match self {
            Entry::Rule(rule) => rule.https_redirect,
            Entry::Plain(_, _, redirect) => *redirect,
        }
    }
}

/// The HTTPS redirect code a chain's entry asks for: the plain-HTTP frontends redirect
/// the requests it takes (see `https_redirect_lines`).
pub(crate) const TLS_REDIRECT: &str = "txn.tls_redirect";

pub(crate) fn host_rule_lines(key: &HostKey, host: &Host) -> HostRuleLines {
    let mut lines = HostRuleLines::default();
    for (path, route) in &host.routes {
        let RouteTarget::Rules(rules) = &route.target else {
            continue;
        };
        let dispatch = dispatch_name(key, path);
        let mut chain: Vec<Entry<'_>> = rules.iter().map(Entry::Rule).collect();
        if !rules.iter().any(|rule| rule.conditions.is_empty()) {
            chain.extend(fallback(host, path));
        }
        chain_lines(&dispatch, &chain, &mut lines);
        let takes_all = chain.iter().any(|entry| match entry {
            Entry::Rule(rule) => rule.conditions.is_empty(),
            Entry::Plain(..) => true,
        });
        // What an Ingress path's rules leave goes on to the default backend, as for a
        // path no rule claims; a Gateway hostname answers 404 (the specification's).
        if !takes_all && !route.origin.is_gateway_route() {
            let _ = writeln!(
                lines.requests,
                "    http-request unset-var(txn.backend) if {{ var(txn.backend) -m str {dispatch} }} !{{ var(txn.rule) -m found }}"
            );
        }
    }
    lines
}

/// The map value the requests no route takes get when the default backend has a rule.
pub const DEFAULT_DISPATCH: &str = "_gw_default";

/// The lines of the default backend's rule: the requests no route took (`txn.backend`
/// unset once every host's lines had their turn) take it, its filters and checks first.
pub(crate) fn default_rule_lines(rule: &GatewayRule) -> HostRuleLines {
    let mut lines = HostRuleLines::default();
    let _ = writeln!(
        lines.requests,
        "    http-request set-var(txn.backend) str({DEFAULT_DISPATCH}) if !{{ var(txn.backend) -m found }}"
    );
    lines
        .origins
        .push((lines.requests.trim_end().to_owned(), rule.origin.clone()));
    chain_lines(DEFAULT_DISPATCH, &[Entry::Rule(rule)], &mut lines);
    lines
}

/// The lines of one chain: each entry's choice, then its action or its backend.
fn chain_lines(dispatch: &str, chain: &[Entry<'_>], lines: &mut HostRuleLines) {
    for (index, entry) in chain.iter().enumerate() {
        let before = [
            lines.requests.len(),
            lines.backends.len(),
            lines.responses.len(),
        ];
        let rule_id = format!("{dispatch}_{index}");
        let chosen = format!("{{ var(txn.rule) -m str {rule_id} }}");
        // Each condition is a named ACL of its own line, so the rule's line names them
        // in one word each and stays within HAProxy's 64 words whatever it holds.
        let mut acl_names = String::new();
        if let Entry::Rule(rule) = entry {
            for (position, condition) in rule.conditions.iter().enumerate() {
                let name = format!("{rule_id}_{position}");
                for expression in acl_expressions(condition) {
                    let _ = writeln!(lines.requests, "    acl {name} {expression}");
                }
                acl_names.push(' ');
                acl_names.push_str(&name);
            }
        }
        let _ = writeln!(
            lines.requests,
            "    http-request set-var(txn.rule) str({rule_id}) if {{ var(txn.backend) -m str {dispatch} }} !{{ var(txn.rule) -m found }}{acl_names}"
        );
        if let Some(code) = entry.https_redirect() {
            let _ = writeln!(
                lines.requests,
                "    http-request set-var({TLS_REDIRECT}) int({code}) if {chosen}"
            );
            lines.redirects_to_https = true;
        }
        match entry {
            Entry::Plain(backend, ..) => {
                let _ = writeln!(
                    lines.backends,
                    "    use_backend {} if {chosen}",
                    backend.section_name()
                );
            }
            Entry::Rule(rule) => action_lines(rule, &chosen, lines),
        }
        let written: Vec<String> = [&lines.requests, &lines.backends, &lines.responses]
            .into_iter()
            .zip(before)
            .flat_map(|(text, from)| text.get(from..).unwrap_or_default().lines())
            .map(str::to_owned)
            .collect();
        for line in written {
            lines.origins.push((line, entry.origin().clone()));
        }
    }
}

/// The routes of shorter paths that match every request this path matches, most
/// specific first, up to the first that takes every request.
fn fallback<'a>(host: &'a Host, path: &PathMatch) -> Vec<Entry<'a>> {
    let mut covering: Vec<(&PathMatch, &Route)> = host
        .routes
        .iter()
        .filter(|(other, _)| *other != path && covers(other, path))
        .collect();
    covering.sort_by_key(|(other, _)| {
        std::cmp::Reverse((other.path.len(), other.kind == PathKind::Prefix))
    });
    let mut entries = Vec::new();
    for (_, route) in covering {
        match &route.target {
            RouteTarget::Backend(id) => {
                entries.push(Entry::Plain(id, &route.origin, route.https_redirect));
                return entries;
            }
            RouteTarget::Rules(rules) => {
                entries.extend(rules.iter().map(Entry::Rule));
                if rules.iter().any(|rule| rule.conditions.is_empty()) {
                    return entries;
                }
            }
        }
    }
    entries
}

/// Whether every request `path` matches is matched by `other` too.
fn covers(other: &PathMatch, path: &PathMatch) -> bool {
    match other.kind {
        PathKind::Exact => false,
        // A `begin` path of the same text matches more (`/apix` for `/api`).
        PathKind::Prefix => {
            other.path.is_empty()
                || (path.path == other.path && path.kind != PathKind::Begin)
                || path.path.starts_with(&format!("{}/", other.path))
        }
        PathKind::Begin => path.path.starts_with(&*other.path),
    }
}

/// How many frontend names one ACL line lists (several lines of one name are OR-ed).
const NAMES_PER_ACL_LINE: usize = 32;

/// A condition as ACL expressions (several when it must be split over lines, which
/// HAProxy OR-s). Every value pattern comes after `--`, so no value can be read as a flag.
fn acl_expressions(condition: &Condition) -> Vec<String> {
    let matcher = |regex: bool| if regex { "reg" } else { "str" };
    match condition {
        Condition::Path(pattern) => vec![format!("path -m reg -- '{pattern}'")],
        Condition::Method(method) => vec![format!("method {method}")],
        Condition::Header(m) => vec![format!(
            "req.fhdr({}) -m {} -- '{}'",
            m.name,
            matcher(m.regex),
            m.value
        )],
        Condition::Query(m) => vec![format!(
            "urlp({}) -m {} -- '{}'",
            m.name,
            matcher(m.regex),
            m.value
        )],
        Condition::Frontends(frontends) => {
            let mut names: Vec<String> = Vec::new();
            if frontends.http {
                names.push("http".to_owned());
            }
            if frontends.https {
                names.push("https".to_owned());
            }
            names.extend(
                frontends
                    .ports
                    .iter()
                    .chain(&frontends.tls_ports)
                    .map(|port| format!("port_{port}")),
            );
            names
                .chunks(NAMES_PER_ACL_LINE)
                .map(|chunk| format!("var({SERVED_AS}) -m str {}", chunk.join(" ")))
                .collect()
        }
    }
}

/// The frontend a request is served as, which a frontend sets first: its own name, but
/// `https` for a fronting proxy's HTTPS requests on a plain-HTTP frontend (`http` on the
/// proxy's own port otherwise), so that a route of an HTTPS listener takes them and one
/// of an HTTP listener does not.
pub(crate) const SERVED_AS: &str = "txn.served_as";

/// A value printed inside a log-format string: `%` is literal.
fn literal(text: &str) -> String {
    text.replace('%', "%%")
}

/// A header value as a quoted log-format argument. HAProxy 2.6 reads an empty argument
/// as a missing one and refuses the line, so an empty value is written as an empty
/// sample expression.
fn header_value(text: &str) -> String {
    if text.is_empty() {
        "'%[str()]'".to_owned()
    } else {
        format!("'{}'", literal(text))
    }
}

fn header_lines(directive: &str, edits: &HeaderEdits, chosen: &str, out: &mut String) {
    for (name, value) in edits.set() {
        let _ = writeln!(
            out,
            "    {directive} set-header {name} {} if {chosen}",
            header_value(value)
        );
    }
    for (name, value) in edits.add() {
        let _ = writeln!(
            out,
            "    {directive} add-header {name} {} if {chosen}",
            header_value(value)
        );
    }
    for name in edits.remove() {
        let _ = writeln!(out, "    {directive} del-header {name} if {chosen}");
        if directive == "http-response" && name.eq_ignore_ascii_case("server") {
            // The frontend's own `Server` fills in only a header the backend did not send.
            let _ = writeln!(
                out,
                "    http-response set-var({SERVER_HEADER_REMOVED}) bool(true) if {chosen}"
            );
        }
    }
}

fn action_lines(rule: &GatewayRule, chosen: &str, lines: &mut HostRuleLines) {
    let action = &rule.action;
    // Refused clients are answered before the rule does anything else.
    if let Some(access) = &action.access {
        crate::access::rule_lines(access, chosen, &mut lines.requests, &mut lines.files);
    }
    // A frontend cannot set a server timeout; the backend takes it from this variable.
    if let Some(timeout) = &action.server_timeout {
        let _ = writeln!(
            lines.requests,
            "    http-request set-var(txn.server_timeout) int({}) if {chosen}",
            timeout.to_std().as_millis()
        );
    }
    if let Some(cors) = &action.cors {
        crate::cors::cors_lines(cors, chosen, &mut lines.requests, &mut lines.responses);
    }
    // Authentication comes after the address lists and the CORS preflight (which a
    // browser sends without credentials): a refused client is never asked for them.
    if let Some(auth) = &action.auth {
        crate::auth::auth_lines(auth, chosen, &mut lines.requests);
        if let Some(model::BasicAuth::Users { userlist, .. }) = &auth.basic {
            lines.userlists.push(userlist.clone());
        }
        lines.uses_lua |= crate::auth::uses_lua(auth);
    }
    header_lines(
        "http-request",
        &action.request_headers,
        chosen,
        &mut lines.requests,
    );
    if let Some(rewrite) = &action.rewrite {
        rewrite_lines(rewrite, chosen, &mut lines.requests);
    }
    match action.body_limit {
        BodyLimit::Inherit => {}
        BodyLimit::Bytes(limit) => {
            lines.limits_body = true;
            let _ = writeln!(
                lines.requests,
                "    http-request set-var({BODY_LIMIT_VAR}) int({limit}) if {chosen}"
            );
        }
        BodyLimit::Unlimited => {
            let _ = writeln!(
                lines.requests,
                "    http-request unset-var({BODY_LIMIT_VAR}) if {chosen}"
            );
        }
    }
    if let Some(redirect) = &action.redirect {
        redirect_line(redirect, chosen, &mut lines.requests);
        header_lines(
            "http-response",
            &action.response_headers,
            chosen,
            &mut lines.responses,
        );
        return;
    }
    header_lines(
        "http-response",
        &action.response_headers,
        chosen,
        &mut lines.responses,
    );
    crate::https::rule_hsts_line(action.hsts, chosen, &mut lines.responses);
    let mut targets: Vec<(String, u64, Option<&RuleBackend>)> = action
        .backends
        .iter()
        .map(|backend| {
            (
                backend.id.section_name(),
                u64::from(backend.weight),
                Some(backend),
            )
        })
        .collect();
    if action.unavailable_weight > 0 || targets.is_empty() {
        let answer = match action.unavailable_answer {
            model::Unavailable::InternalError => GATEWAY_500_BACKEND,
            model::Unavailable::ServiceUnavailable => GATEWAY_503_BACKEND,
        };
        targets.push((
            answer.to_owned(),
            u64::from(action.unavailable_weight.max(1)),
            None,
        ));
    }
    let weighted = targets.len() > 1;
    if weighted {
        // Summed wide: weights are bounded when converted, and a sum never wraps.
        let total: u64 = targets.iter().map(|(_, weight, _)| *weight).sum();
        let _ = writeln!(
            lines.requests,
            "    http-request set-var(txn.pick) rand({total}) if {chosen}"
        );
    }
    let mut below: u64 = 0;
    for (position, (section, weight, backend)) in targets.iter().enumerate() {
        let from = below;
        below += weight;
        let last = position + 1 == targets.len();
        // The condition that this target takes the request.
        let takes = match (weighted, last) {
            (false, _) => chosen.to_owned(),
            (true, true) => format!("{chosen} {{ var(txn.pick) -m int ge {from} }}"),
            (true, false) => format!(
                "{chosen} {{ var(txn.pick) -m int ge {from} }} {{ var(txn.pick) -m int lt {below} }}"
            ),
        };
        if let Some(backend) = backend {
            header_lines(
                "http-request",
                &backend.request_headers,
                &takes,
                &mut lines.requests,
            );
            if let Some(rewrite) = &backend.rewrite {
                rewrite_lines(rewrite, &takes, &mut lines.requests);
            }
            if let Some(redirect) = &backend.redirect {
                redirect_line(redirect, &takes, &mut lines.requests);
            }
            header_lines(
                "http-response",
                &backend.response_headers,
                &takes,
                &mut lines.responses,
            );
        }
        let _ = writeln!(lines.backends, "    use_backend {section} if {takes}");
    }
}

/// The lines of a request rewrite, under `condition`.
fn rewrite_lines(rewrite: &Rewrite, condition: &str, out: &mut String) {
    if let Some(hostname) = &rewrite.hostname {
        let _ = writeln!(
            out,
            "    http-request set-header host '{hostname}' if {condition}"
        );
    }
    match &rewrite.path {
        Some(PathChange::Full(path)) => {
            let _ = writeln!(
                out,
                "    http-request set-path '{}' if {condition}",
                literal(path)
            );
        }
        Some(PathChange::Prefix {
            matched,
            replacement,
        }) => {
            let pattern = quoted_regex_literal(matched);
            let trimmed = replacement.trim_end_matches('/');
            let whole = if replacement.is_empty() {
                "/"
            } else {
                replacement.as_str()
            };
            // Longer paths first: the result of the whole-prefix line could match it.
            let _ = writeln!(
                out,
                "    http-request replace-path '^{pattern}(/.*)$' '{}\\1' if {condition}",
                literal(trimmed)
            );
            if !matched.is_empty() {
                let _ = writeln!(
                    out,
                    "    http-request replace-path '^{pattern}$' '{}' if {condition}",
                    literal(whole)
                );
            }
        }
        Some(PathChange::Begins {
            matched,
            replacement,
        }) => {
            // One line, so that no line rewrites another's result: a replacement ending
            // in `/` takes the rest's own leading `/` (`/img/x` and `/imgs` becoming
            // `/y/x` and `/y/s` under `/y/`), any other is followed by the rest as it is.
            let slash = if replacement.ends_with('/') { "/?" } else { "" };
            let _ = writeln!(
                out,
                "    http-request replace-path '^{}{slash}(.*)$' '{}\\1' if {condition}",
                quoted_regex_literal(matched),
                literal(replacement)
            );
        }
        None => {}
    }
}

/// The line of a redirect, under `condition`: two when it keeps the request's scheme,
/// which is HTTPS over TLS or from a fronting proxy that says so (HAProxy 2.6 has no
/// sample that ORs the two).
fn redirect_line(redirect: &Redirect, condition: &str, out: &mut String) {
    if redirect.scheme.is_some() {
        let _ = writeln!(
            out,
            "    http-request redirect location '{}' code {} if {condition}",
            location(redirect),
            redirect.code
        );
        return;
    }
    let _ = writeln!(
        out,
        "    http-request redirect location '{}' code {} if {}",
        location_with_scheme(redirect, "https"),
        redirect.code,
        crate::forwarded::over_https(condition)
    );
    let _ = writeln!(
        out,
        "    http-request redirect location '{}' code {} if {condition}",
        location_with_scheme(redirect, "http"),
        redirect.code
    );
}

/// The Location of a redirect, as a log-format string; one that keeps the request's
/// scheme takes the connection's.
pub(crate) fn location(redirect: &Redirect) -> String {
    location_with_scheme(redirect, "%[ssl_fc,iif(https,http)]")
}

/// The Location of a redirect, `request_scheme` standing for the request's scheme.
fn location_with_scheme(redirect: &Redirect, request_scheme: &str) -> String {
    let scheme = match &redirect.scheme {
        Some(scheme) => scheme.clone(),
        None => request_scheme.to_owned(),
    };
    let host = redirect
        .hostname
        .clone()
        .unwrap_or_else(|| "%[var(txn.host)]".to_owned());
    let well_known = match redirect.scheme.as_deref() {
        Some("https") => Some(443),
        Some("http") => Some(80),
        _ => None,
    };
    let port = match redirect.port {
        Some(port)
            if Some(port) != well_known
                && !(well_known.is_none() && (port == 80 || port == 443)) =>
        {
            format!(":{port}")
        }
        Some(_) => String::new(),
        // Neither scheme nor port: the listener's port, which a frontend of its own sets
        // (the HTTP and HTTPS frontends set the port of the request's Host, if any).
        None if redirect.scheme.is_none() => "%[var(txn.listener_port)]".to_owned(),
        None => String::new(),
    };
    let path = match &redirect.path {
        None => "%[capture.req.uri]".to_owned(),
        Some(PathChange::Full(path)) => literal(path),
        // A redirect's path is the Gateway API's, never matched character-wise.
        Some(
            PathChange::Prefix {
                matched,
                replacement,
            }
            | PathChange::Begins {
                matched,
                replacement,
            },
        ) => {
            let trimmed = replacement.trim_end_matches('/');
            if matched.is_empty() {
                format!("{}%[pathq]", literal(trimmed))
            } else if trimmed.is_empty() {
                format!("%[pathq,regsub(^{}/?,/)]", regex_literal(matched))
            } else {
                format!(
                    "%[pathq,regsub(^{},{})]",
                    regex_literal(matched),
                    literal(trimmed)
                )
            }
        }
    };
    format!("{scheme}://{host}{port}{path}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(path: &str, kind: PathKind) -> PathMatch {
        PathMatch {
            path: path.into(),
            kind,
        }
    }

    #[test]
    fn a_shorter_path_covers_only_what_it_matches_whole() {
        use PathKind::{Begin, Exact, Prefix};
        for (other, path, covered) in [
            (at("", Prefix), at("/api", Begin), true),
            (at("/api", Prefix), at("/api", Exact), true),
            (at("/api", Prefix), at("/api/v1", Prefix), true),
            (at("/api", Prefix), at("/api/v1", Begin), true),
            // `begin /api` matches `/apix`, which `Prefix /api` does not.
            (at("/api", Prefix), at("/api", Begin), false),
            (at("/api", Prefix), at("/apix", Prefix), false),
            (at("/api", Begin), at("/apix", Prefix), true),
            (at("/api", Begin), at("/api", Prefix), true),
            (at("/api", Exact), at("/api", Begin), false),
        ] {
            assert_eq!(covers(&other, &path), covered, "{other:?} over {path:?}");
        }
    }
}
