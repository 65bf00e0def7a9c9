//! An HTTPRoute rule's matches and filters, validated into model conditions and actions.
//! Every value that reaches the configuration is checked here: names are tokens, values
//! hold no control character and no single quote, paths and hosts only URL-safe
//! characters. The generated Gateway API types are read field by field, so a field the
//! specification renames stops compiling instead of silently becoming a default.

use std::collections::BTreeSet;

use model::{Condition, HeaderEdits, PathChange, Redirect, Rewrite, RuleAction, ValueMatch};
use resources::gateway::{
    HttpRouteRulesBackendRefsFilters, HttpRouteRulesBackendRefsFiltersRequestRedirectPathType,
    HttpRouteRulesBackendRefsFiltersRequestRedirectScheme, HttpRouteRulesBackendRefsFiltersType,
    HttpRouteRulesBackendRefsFiltersUrlRewritePathType, HttpRouteRulesFilters,
    HttpRouteRulesFiltersRequestRedirectPathType, HttpRouteRulesFiltersRequestRedirectScheme,
    HttpRouteRulesFiltersType, HttpRouteRulesFiltersUrlRewritePathType, HttpRouteRulesMatches,
    HttpRouteRulesMatchesHeadersType, HttpRouteRulesMatchesMethod,
    HttpRouteRulesMatchesQueryParamsType, HttpRouteRulesTimeouts,
};

use crate::names;
use model::HaproxyDuration;

/// The conditions of a match beyond its path.
pub(crate) fn conditions(matched: &HttpRouteRulesMatches) -> Result<Vec<Condition>, String> {
    let mut conditions = Vec::new();
    if let Some(method) = &matched.method {
        conditions.push(Condition::Method(method_name(method).to_owned()));
    }
    let headers = matched.headers.as_deref().unwrap_or_default();
    let headers = headers.iter().map(|header| {
        let regex = matches!(
            header.r#type,
            Some(HttpRouteRulesMatchesHeadersType::RegularExpression)
        );
        (header.name.as_str(), header.value.as_str(), regex)
    });
    for header in value_matches(headers, "headers", true)? {
        conditions.push(Condition::Header(ValueMatch {
            name: header.name.to_ascii_lowercase(),
            ..header
        }));
    }
    let queries = matched.query_params.as_deref().unwrap_or_default();
    let queries = queries.iter().map(|query| {
        let regex = matches!(
            query.r#type,
            Some(HttpRouteRulesMatchesQueryParamsType::RegularExpression)
        );
        (query.name.as_str(), query.value.as_str(), regex)
    });
    for query in value_matches(queries, "queryParams", false)? {
        conditions.push(Condition::Query(query));
    }
    Ok(conditions)
}

fn method_name(method: &HttpRouteRulesMatchesMethod) -> &'static str {
    match method {
        HttpRouteRulesMatchesMethod::Get => "GET",
        HttpRouteRulesMatchesMethod::Head => "HEAD",
        HttpRouteRulesMatchesMethod::Post => "POST",
        HttpRouteRulesMatchesMethod::Put => "PUT",
        HttpRouteRulesMatchesMethod::Delete => "DELETE",
        HttpRouteRulesMatchesMethod::Connect => "CONNECT",
        HttpRouteRulesMatchesMethod::Options => "OPTIONS",
        HttpRouteRulesMatchesMethod::Trace => "TRACE",
        HttpRouteRulesMatchesMethod::Patch => "PATCH",
    }
}

/// The most header matches, and the most query-parameter matches, one match takes (the
/// specification's limit).
const MAX_VALUE_MATCHES: usize = 16;

/// Header or query-parameter matches (name, value, whether a regular expression),
/// validated. Of entries with equivalent names (header names are case-insensitive) only
/// the first is considered, as the specification says.
fn value_matches<'a>(
    entries: impl ExactSizeIterator<Item = (&'a str, &'a str, bool)>,
    field: &str,
    names_ignore_case: bool,
) -> Result<Vec<ValueMatch>, String> {
    let count = entries.len();
    if count > MAX_VALUE_MATCHES {
        return Err(format!(
            "{field}: {count} entries; at most {MAX_VALUE_MATCHES} are accepted"
        ));
    }
    let mut seen = BTreeSet::new();
    entries
        .enumerate()
        .filter(|(_, (name, _, _))| {
            seen.insert(if names_ignore_case {
                name.to_ascii_lowercase()
            } else {
                (*name).to_owned()
            })
        })
        .map(|(index, (name, text, regex))| {
            let at = |part: &str, why: String| format!("{field}[{index}].{part}: {why}");
            let checked = if regex {
                names::parse_regex(text, false)
            } else if text.is_empty() {
                // HAProxy ends a pattern list at an empty word: it would match nothing.
                Err("an empty value".to_owned())
            } else {
                value(text)
            };
            Ok(ValueMatch {
                name: token(name).map_err(|why| at("name", why))?,
                value: checked.map_err(|why| at("value", why))?,
                regex,
            })
        })
        .collect()
}

/// How long a rule's backend may take to answer: `backendRequest` (one attempt), else
/// `request` (the whole exchange, the same here since a rule does not retry). HAProxy's
/// server timeout runs until the response starts, so a slower response is answered 504.
/// Zero disables the timeout, which HAProxy cannot: the longest time it takes instead.
pub(crate) fn server_timeout(
    timeouts: Option<&HttpRouteRulesTimeouts>,
) -> Result<Option<HaproxyDuration>, FieldError> {
    let Some(timeouts) = timeouts else {
        return Ok(None);
    };
    let (field, text) = match (&timeouts.backend_request, &timeouts.request) {
        (Some(backend), _) => ("backendRequest", backend),
        (None, Some(request)) => ("request", request),
        (None, None) => return Ok(None),
    };
    let at = |why: String| (field.to_owned(), why);
    let milliseconds = gateway_duration(text).map_err(at)?;
    let milliseconds = match milliseconds {
        0 => HaproxyDuration::MAX_MILLISECONDS,
        other => other.min(HaproxyDuration::MAX_MILLISECONDS),
    };
    HaproxyDuration::parse(&format!("{milliseconds}ms"))
        .map(Some)
        .map_err(at)
}

/// A Gateway API duration (`1h30m`, `500ms`: one to four parts of up to five digits,
/// each with `h`, `m`, `s` or `ms`), in milliseconds.
fn gateway_duration(text: &str) -> Result<u64, String> {
    let invalid = || {
        format!(
            "'{}' is not a duration such as 1h30m, 10s or 500ms",
            text.escape_debug()
        )
    };
    let mut rest = text;
    let mut total: u64 = 0;
    let mut parts = 0;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 5 {
            return Err(invalid());
        }
        let value: u64 = rest[..digits].parse().map_err(|_| invalid())?;
        rest = &rest[digits..];
        let (unit, length) = if rest.starts_with("ms") {
            (1, 2)
        } else if rest.starts_with('h') {
            (3_600_000, 1)
        } else if rest.starts_with('m') {
            (60_000, 1)
        } else if rest.starts_with('s') {
            (1_000, 1)
        } else {
            return Err(invalid());
        };
        rest = &rest[length..];
        total += value * unit;
        parts += 1;
    }
    if parts == 0 || parts > 4 {
        return Err(invalid());
    }
    Ok(total)
}

/// A problem at a field below the rule: the field's path, and what is wrong.
pub(crate) type FieldError = (String, String);

/// A header modifier's entries, whichever generated type (rule or backendRef filter,
/// request or response) holds them.
struct Modifier<'a> {
    set: Vec<(&'a str, &'a str)>,
    add: Vec<(&'a str, &'a str)>,
    remove: &'a [String],
}

/// Reads a generated header modifier into a [`Modifier`].
macro_rules! modifier {
    ($modifier:expr) => {{
        let modifier = $modifier;
        Modifier {
            set: modifier
                .set
                .iter()
                .flatten()
                .map(|entry| (entry.name.as_str(), entry.value.as_str()))
                .collect(),
            add: modifier
                .add
                .iter()
                .flatten()
                .map(|entry| (entry.name.as_str(), entry.value.as_str()))
                .collect(),
            remove: modifier.remove.as_deref().unwrap_or_default(),
        }
    }};
}

/// A redirect's fields, whichever generated type (rule or backendRef filter) holds them.
struct RedirectFields<'a> {
    status_code: Option<i64>,
    /// `http` or `https`.
    scheme: Option<&'static str>,
    hostname: Option<&'a str>,
    port: Option<i32>,
    path: Option<PathFields<'a>>,
}

/// A path modifier's fields: whether it replaces the matched prefix, and its values.
struct PathFields<'a> {
    replaces_prefix: bool,
    full: Option<&'a str>,
    prefix: Option<&'a str>,
}

/// A URL rewrite's fields, whichever generated type holds them.
struct RewriteFields<'a> {
    hostname: Option<&'a str>,
    path: Option<PathFields<'a>>,
}

/// Reads a generated `RequestRedirect` with its scheme and path-type enums.
macro_rules! redirect_fields {
    ($redirect:expr, $scheme:ident, $path_type:ident) => {{
        let redirect = $redirect;
        RedirectFields {
            status_code: redirect.status_code,
            scheme: redirect.scheme.as_ref().map(|scheme| match scheme {
                $scheme::Http => "http",
                $scheme::Https => "https",
            }),
            hostname: redirect.hostname.as_deref(),
            port: redirect.port,
            path: redirect.path.as_ref().map(|path| PathFields {
                replaces_prefix: matches!(path.r#type, $path_type::ReplacePrefixMatch),
                full: path.replace_full_path.as_deref(),
                prefix: path.replace_prefix_match.as_deref(),
            }),
        }
    }};
}

/// Reads a generated `URLRewrite` with its path-type enum.
macro_rules! rewrite_fields {
    ($rewrite:expr, $path_type:ident) => {{
        let rewrite = $rewrite;
        RewriteFields {
            hostname: rewrite.hostname.as_deref(),
            path: rewrite.path.as_ref().map(|path| PathFields {
                replaces_prefix: matches!(path.r#type, $path_type::ReplacePrefixMatch),
                full: path.replace_full_path.as_deref(),
                prefix: path.replace_prefix_match.as_deref(),
            }),
        }
    }};
}

/// The modifier a filter of a header-modifier type must carry.
fn required<'a, T>(modifier: Option<&'a T>, name: &str) -> Result<&'a T, String> {
    modifier.ok_or_else(|| format!("a {name} filter needs its {name} field"))
}

/// A rule's filters as an action (without backends). `matched_prefix` is the path
/// prefix the match matched, which `ReplacePrefixMatch` replaces.
pub(crate) fn filters(
    filters: &[HttpRouteRulesFilters],
    matched_prefix: Option<&str>,
) -> Result<RuleAction, FieldError> {
    let mut action = RuleAction::default();
    for (index, filter) in filters.iter().enumerate() {
        let at = |why: String| (format!("filters[{index}]"), why);
        match filter.r#type {
            HttpRouteRulesFiltersType::RequestHeaderModifier => {
                let modifier = required(
                    filter.request_header_modifier.as_ref(),
                    "requestHeaderModifier",
                )
                .map_err(at)?;
                header_edits(&modifier!(modifier), &mut action.request_headers).map_err(at)?;
            }
            HttpRouteRulesFiltersType::ResponseHeaderModifier => {
                let modifier = required(
                    filter.response_header_modifier.as_ref(),
                    "responseHeaderModifier",
                )
                .map_err(at)?;
                header_edits(&modifier!(modifier), &mut action.response_headers).map_err(at)?;
            }
            HttpRouteRulesFiltersType::RequestRedirect => {
                let wanted =
                    required(filter.request_redirect.as_ref(), "requestRedirect").map_err(at)?;
                action.redirect = Some(Box::new(
                    redirect(
                        &redirect_fields!(
                            wanted,
                            HttpRouteRulesFiltersRequestRedirectScheme,
                            HttpRouteRulesFiltersRequestRedirectPathType
                        ),
                        matched_prefix,
                    )
                    .map_err(at)?,
                ));
            }
            HttpRouteRulesFiltersType::UrlRewrite => {
                let wanted = required(filter.url_rewrite.as_ref(), "urlRewrite").map_err(at)?;
                action.rewrite = Some(Box::new(
                    rewrite(
                        &rewrite_fields!(wanted, HttpRouteRulesFiltersUrlRewritePathType),
                        matched_prefix,
                    )
                    .map_err(at)?,
                ));
            }
            HttpRouteRulesFiltersType::Cors => {
                let policy = required(filter.cors.as_ref(), "cors").map_err(at)?;
                action.cors = Some(Box::new(super::cors::cors(policy).map_err(at)?));
            }
            ref other => {
                return Err(at(format!(
                    "filter type {} is not supported",
                    filter_name(other)
                )));
            }
        }
    }
    if action.redirect.is_some() && action.rewrite.is_some() {
        return Err((
            "filters".to_owned(),
            "RequestRedirect and URLRewrite cannot be combined".to_owned(),
        ));
    }
    Ok(action)
}

fn filter_name(kind: &HttpRouteRulesFiltersType) -> &'static str {
    match kind {
        HttpRouteRulesFiltersType::RequestHeaderModifier => "RequestHeaderModifier",
        HttpRouteRulesFiltersType::ResponseHeaderModifier => "ResponseHeaderModifier",
        HttpRouteRulesFiltersType::RequestMirror => "RequestMirror",
        HttpRouteRulesFiltersType::RequestRedirect => "RequestRedirect",
        HttpRouteRulesFiltersType::UrlRewrite => "URLRewrite",
        HttpRouteRulesFiltersType::ExtensionRef => "ExtensionRef",
        HttpRouteRulesFiltersType::Cors => "CORS",
    }
}

fn backend_filter_name(kind: &HttpRouteRulesBackendRefsFiltersType) -> &'static str {
    match kind {
        HttpRouteRulesBackendRefsFiltersType::RequestHeaderModifier => "RequestHeaderModifier",
        HttpRouteRulesBackendRefsFiltersType::ResponseHeaderModifier => "ResponseHeaderModifier",
        HttpRouteRulesBackendRefsFiltersType::RequestMirror => "RequestMirror",
        HttpRouteRulesBackendRefsFiltersType::RequestRedirect => "RequestRedirect",
        HttpRouteRulesBackendRefsFiltersType::UrlRewrite => "URLRewrite",
        HttpRouteRulesBackendRefsFiltersType::ExtensionRef => "ExtensionRef",
        HttpRouteRulesBackendRefsFiltersType::Cors => "CORS",
    }
}

/// What a backendRef's filters do when that backend is chosen.
#[derive(Debug, Default)]
pub(crate) struct BackendEdits {
    pub(crate) request: HeaderEdits,
    pub(crate) response: HeaderEdits,
    pub(crate) redirect: Option<Box<Redirect>>,
    pub(crate) rewrite: Option<Box<Rewrite>>,
}

/// A backendRef's filters. The rule's backends serve each of its matches, so a
/// `ReplacePrefixMatch` here leaves the matched prefix empty; [`for_match`] fills it.
pub(crate) fn backend_filters(
    filters: &[HttpRouteRulesBackendRefsFilters],
) -> Result<BackendEdits, FieldError> {
    let mut edits = BackendEdits::default();
    let (request, response) = (&mut edits.request, &mut edits.response);
    for (index, filter) in filters.iter().enumerate() {
        let at = |why: String| (format!("filters[{index}]"), why);
        match filter.r#type {
            HttpRouteRulesBackendRefsFiltersType::RequestHeaderModifier => {
                let modifier = required(
                    filter.request_header_modifier.as_ref(),
                    "requestHeaderModifier",
                )
                .map_err(at)?;
                header_edits(&modifier!(modifier), request).map_err(at)?;
            }
            HttpRouteRulesBackendRefsFiltersType::ResponseHeaderModifier => {
                let modifier = required(
                    filter.response_header_modifier.as_ref(),
                    "responseHeaderModifier",
                )
                .map_err(at)?;
                header_edits(&modifier!(modifier), response).map_err(at)?;
            }
            HttpRouteRulesBackendRefsFiltersType::RequestRedirect => {
                let wanted =
                    required(filter.request_redirect.as_ref(), "requestRedirect").map_err(at)?;
                edits.redirect = Some(Box::new(
                    redirect(
                        &redirect_fields!(
                            wanted,
                            HttpRouteRulesBackendRefsFiltersRequestRedirectScheme,
                            HttpRouteRulesBackendRefsFiltersRequestRedirectPathType
                        ),
                        Some(""),
                    )
                    .map_err(at)?,
                ));
            }
            HttpRouteRulesBackendRefsFiltersType::UrlRewrite => {
                let wanted = required(filter.url_rewrite.as_ref(), "urlRewrite").map_err(at)?;
                edits.rewrite = Some(Box::new(
                    rewrite(
                        &rewrite_fields!(
                            wanted,
                            HttpRouteRulesBackendRefsFiltersUrlRewritePathType
                        ),
                        Some(""),
                    )
                    .map_err(at)?,
                ));
            }
            ref other => {
                return Err(at(format!(
                    "filter type {} is not supported on a backendRef",
                    backend_filter_name(other)
                )));
            }
        }
    }
    if edits.redirect.is_some() && edits.rewrite.is_some() {
        return Err((
            "filters".to_owned(),
            "RequestRedirect and URLRewrite cannot be combined".to_owned(),
        ));
    }
    Ok(edits)
}

/// A chosen backend's redirect and rewrite for one match: the prefix a
/// `ReplacePrefixMatch` replaces is the one this match matched (`None`: not a prefix
/// match, which such a filter cannot serve).
pub(crate) fn for_match(
    backend: &model::RuleBackend,
    matched_prefix: Option<&str>,
) -> Result<model::RuleBackend, String> {
    let mut backend = backend.clone();
    let paths = [
        backend.redirect.as_mut().and_then(|r| r.path.as_mut()),
        backend.rewrite.as_mut().and_then(|r| r.path.as_mut()),
    ];
    for path in paths.into_iter().flatten() {
        if let PathChange::Prefix { matched, .. } = path {
            let Some(prefix) = matched_prefix else {
                return Err("ReplacePrefixMatch needs a PathPrefix match".to_owned());
            };
            *matched = replaced_prefix(prefix)?;
        }
    }
    Ok(backend)
}

fn header_edits(modifier: &Modifier<'_>, edits: &mut HeaderEdits) -> Result<(), String> {
    let pairs = |list: &[(&str, &str)]| -> Result<Vec<(String, String)>, String> {
        list.iter()
            .map(|(name, text)| Ok((token(name)?, value(text)?)))
            .collect()
    };
    let set = pairs(&modifier.set)?;
    let add = pairs(&modifier.add)?;
    let remove = modifier
        .remove
        .iter()
        .map(|name| token(name))
        .collect::<Result<Vec<_>, _>>()?;
    let mut lists = std::mem::take(edits).into_lists();
    lists.set.extend(set);
    lists.add.extend(add);
    lists.remove.extend(remove);
    *edits = HeaderEdits::new(lists);
    Ok(())
}

fn redirect(
    redirect: &RedirectFields<'_>,
    matched_prefix: Option<&str>,
) -> Result<Redirect, String> {
    let code = match redirect.status_code.unwrap_or(302) {
        code @ (301 | 302 | 303 | 307 | 308) => u16::try_from(code).unwrap_or(302),
        code => {
            return Err(format!(
                "statusCode {code} is not 301, 302, 303, 307 or 308"
            ));
        }
    };
    let port = match redirect.port {
        None => None,
        Some(port) => Some(
            u16::try_from(port)
                .ok()
                .filter(|p| *p > 0)
                .ok_or(format!("port {port} is out of range"))?,
        ),
    };
    Ok(Redirect {
        scheme: redirect.scheme.map(str::to_owned),
        hostname: optional_host(redirect.hostname)?,
        port,
        path: path_fields(redirect.path.as_ref(), matched_prefix)?,
        code,
    })
}

fn rewrite(rewrite: &RewriteFields<'_>, matched_prefix: Option<&str>) -> Result<Rewrite, String> {
    Ok(Rewrite {
        hostname: optional_host(rewrite.hostname)?,
        path: path_fields(rewrite.path.as_ref(), matched_prefix)?,
    })
}

fn path_fields(
    path: Option<&PathFields<'_>>,
    matched_prefix: Option<&str>,
) -> Result<Option<PathChange>, String> {
    path.map(|path| path_change(path.replaces_prefix, path.full, path.prefix, matched_prefix))
        .transpose()
}

/// A path modifier: the whole path (`ReplaceFullPath`) or the matched prefix
/// (`ReplacePrefixMatch`) replaced.
fn path_change(
    replaces_prefix: bool,
    full: Option<&str>,
    prefix: Option<&str>,
    matched_prefix: Option<&str>,
) -> Result<PathChange, String> {
    if !replaces_prefix {
        return Ok(PathChange::Full(url_path(full.unwrap_or("/"))?));
    }
    let Some(matched) = matched_prefix else {
        return Err("ReplacePrefixMatch needs a PathPrefix match".to_owned());
    };

    // An empty replacement takes the prefix away (`/foo/bar` → `/bar`, `/foo` → `/`),
    // as the specification's table of `ReplacePrefixMatch` says.
    let replacement = match prefix {
        Some("") => String::new(),
        prefix => url_path(prefix.unwrap_or("/"))?,
    };
    Ok(PathChange::Prefix {
        matched: replaced_prefix(matched)?,
        replacement,
    })
}

/// The prefix a `ReplacePrefixMatch` replaces, as printed. It is printed inside a
/// redirect's sample expression, where a comma, a parenthesis or a quote would end it:
/// such a match path keeps to the characters that cannot. Empty while a backend's own
/// filter waits for the match it serves ([`for_match`]).
fn replaced_prefix(matched: &str) -> Result<String, String> {
    if !matched.is_empty() {
        url_path(matched).map_err(|why| format!("ReplacePrefixMatch: the match's {why}"))?;
    }
    Ok(matched.trim_end_matches('/').to_owned())
}

fn optional_host(host: Option<&str>) -> Result<Option<String>, String> {
    match host {
        None => Ok(None),
        Some(host) => match names::parse_host(host)? {
            model::HostKey::Exact(name) => Ok(Some(name.to_string())),
            _ => Err(format!("hostname {host} must be an exact host name")),
        },
    }
}

/// A header or parameter name: an HTTP token of the characters HAProxy takes as is.
pub(crate) fn token(name: &str) -> Result<String, String> {
    let ok = !name.is_empty()
        && name.len() <= 256
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~'));
    if ok {
        Ok(name.to_owned())
    } else {
        Err(format!(
            "'{}' is not a name of letters, digits, '-', '_', '.', '~'",
            name.escape_debug()
        ))
    }
}

/// A value printed in single quotes: printable, without a single quote.
pub(crate) fn value(text: &str) -> Result<String, String> {
    if text.len() <= 4096 && text.chars().all(|c| !c.is_control() && c != '\'') {
        Ok(text.to_owned())
    } else {
        Err("values may not hold control characters or a single quote (')".to_owned())
    }
}

/// A path regular expression, printed in single quotes (HAProxy reads it as PCRE2).
pub(crate) fn path_pattern(pattern: &str) -> Result<String, String> {
    names::parse_regex(pattern, false)
}

/// A path printed in configuration and regular expressions: URL-safe characters only.
pub(crate) fn url_path(path: &str) -> Result<String, String> {
    if path.len() > names::MAX_PATH_BYTES {
        return Err(format!(
            "path is {} bytes long; at most {} are accepted",
            path.len(),
            names::MAX_PATH_BYTES
        ));
    }
    let ok = path.starts_with('/')
        && path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'_' | b'.' | b'~'));
    if ok {
        Ok(path.to_owned())
    } else {
        Err(format!(
            "path '{}' must start with '/' and hold only letters, digits, '/', '-', '_', '.', '~'",
            path.escape_debug()
        ))
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn gateway_durations_are_read_as_the_specification_writes_them() {
        assert_eq!(super::gateway_duration("1h30m"), Ok(5_400_000));
        assert_eq!(super::gateway_duration("500ms"), Ok(500));
        assert_eq!(super::gateway_duration("1m1s1ms"), Ok(61_001));
        assert_eq!(super::gateway_duration("0s"), Ok(0));
        for bad in ["", "1", "1d", "123456s", "1h1m1s1ms1h", "-1s", "1.5s", "s"] {
            assert!(super::gateway_duration(bad).is_err(), "{bad}");
        }
        let timeouts = |backend: Option<&str>, request: Option<&str>| HttpRouteRulesTimeouts {
            backend_request: backend.map(str::to_owned),
            request: request.map(str::to_owned),
        };
        let text = |t: &HttpRouteRulesTimeouts| {
            super::server_timeout(Some(t)).map(|d| d.map(|d| d.to_string()))
        };
        assert_eq!(
            text(&timeouts(None, Some("2s"))),
            Ok(Some("2000ms".to_owned()))
        );
        assert_eq!(
            text(&timeouts(Some("500ms"), Some("2s"))),
            Ok(Some("500ms".to_owned()))
        );
        assert_eq!(
            text(&timeouts(None, Some("0s"))),
            Ok(Some("2147483647ms".to_owned()))
        );
        assert_eq!(
            text(&timeouts(None, Some("soon"))).map_err(|(field, _)| field),
            Err("request".to_owned())
        );
    }

    use super::*;
    use serde_json::{Value, json};

    fn matches(value: Value) -> Result<Vec<Condition>, String> {
        conditions(&serde_json::from_value(value).map_err(|e| e.to_string())?)
    }

    #[test]
    fn nothing_that_could_break_out_of_a_configuration_line_is_accepted() {
        let refused = [
            json!({"headers": [{"name": "x", "value": "a' || true"}]}),
            json!({"headers": [{"name": "x", "value": "a\nhttp-request deny"}]}),
            json!({"headers": [{"name": "x y", "value": "a"}]}),
            json!({"queryParams": [{"name": "q)", "value": "a"}]}),
        ];
        for value in refused {
            assert!(matches(value.clone()).is_err(), "{value}");
        }
        assert!(url_path("/a b").is_err());
        assert!(url_path("/a'b").is_err());
        assert!(url_path("relative").is_err());
        assert!(path_pattern("^/x'").is_err());
        assert!(path_pattern("^/x(").is_err());
        for value in [
            json!({"headers": [{"name": "x", "type": "RegularExpression", "value": "[z-a]"}]}),
            json!({"queryParams": [{"name": "q", "type": "RegularExpression", "value": "(?P<"}]}),
            json!({"headers": [{"name": "x", "value": ""}]}),
        ] {
            assert!(matches(value.clone()).is_err(), "{value}");
        }
        let filters: Vec<HttpRouteRulesFilters> = serde_json::from_value(json!([
            {"type": "RequestHeaderModifier", "requestHeaderModifier": {"set": [{"name": "x", "value": "v\r\nx: y"}]}}
        ]))
        .unwrap();
        assert!(super::filters(&filters, None).is_err());
    }

    #[test]
    fn matches_become_conditions_with_lowercase_header_names() {
        let conditions = matches(json!({
            "method": "POST",
            "headers": [{"name": "X-Env", "value": "canary one"}, {"name": "v", "type": "RegularExpression", "value": "^[0-9]+$"}],
            "queryParams": [{"name": "Debug", "value": "1"}],
        }))
        .unwrap();
        let value = |name: &str, value: &str, regex| ValueMatch {
            name: name.into(),
            value: value.into(),
            regex,
        };
        assert_eq!(
            conditions,
            [
                Condition::Method("POST".into()),
                Condition::Header(value("x-env", "canary one", false)),
                Condition::Header(value("v", "^[0-9]+$", true)),
                Condition::Query(value("Debug", "1", false)),
            ]
        );
    }
}
