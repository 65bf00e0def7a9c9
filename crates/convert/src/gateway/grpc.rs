//! One GRPCRoute, converted by the HTTPRoute converter: a gRPC call is `POST
//! /<service>/<method>` over HTTP/2, so a GRPCRoute is an HTTPRoute whose method
//! matches are paths, whose backends speak HTTP/2, and whose requests without a valid
//! backend are answered 503 (`UNAVAILABLE`) instead of 500. Parents, hostnames, header
//! matches, header filters, weights, ReferenceGrants and status are the HTTPRoute's.
//!
//! A method match becomes:
//! - service and method, `Exact`: the exact path `/<service>/<method>`;
//! - service only, `Exact`: the path prefix `/<service>` (any method of it);
//! - method only, `Exact`: the regular expression `^/[^/]+/<method>$` on the path;
//! - `RegularExpression`: `^/(?:<service>)/(?:<method>)$` on the whole path, an empty
//!   part matching any name.
//!
//! So exact matches take precedence as paths do (service and method, then the longest
//! service), and the regular expressions of a host are tried after them, the one with
//! the longer service, then the longer method, first (the specification's "characters
//! in a matching service, then method"), then the one with more header matches.

use resources::ObjectRef;
use resources::gateway::{
    GrpcRoute, GrpcRouteRules, GrpcRouteRulesBackendRefsFiltersType, GrpcRouteRulesFiltersType,
    GrpcRouteRulesMatches, GrpcRouteRulesMatchesHeadersType, GrpcRouteRulesMatchesMethod,
    GrpcRouteRulesMatchesMethodType, HttpRoute, HttpRouteParentRefs, HttpRouteRules,
    HttpRouteRulesBackendRefs, HttpRouteRulesBackendRefsFilters,
    HttpRouteRulesBackendRefsFiltersType, HttpRouteRulesFilters, HttpRouteRulesFiltersType,
    HttpRouteRulesMatches, HttpRouteRulesMatchesHeaders, HttpRouteRulesMatchesHeadersType,
    HttpRouteRulesMatchesPath, HttpRouteRulesMatchesPathType, HttpRouteSpec,
};

use super::route::{self, GrpcParts, MatchInput};
use super::rules;
use crate::contribution::Contribution;
use crate::lookup::Recorder;

/// Converts one GRPCRoute; a route attached to none of our Gateways contributes nothing.
pub(crate) fn convert_grpc_route(
    object: ObjectRef,
    route: &GrpcRoute,
    lookups: &mut Recorder<'_>,
) -> Contribution {
    let rules = route.spec.rules.as_deref().unwrap_or_default();
    let parts = GrpcParts {
        matches: rules.iter().map(rule_matches).collect(),
    };
    let as_http = HttpRoute {
        metadata: route.metadata.clone(),
        spec: HttpRouteSpec {
            hostnames: route.spec.hostnames.clone(),
            parent_refs: route.spec.parent_refs.as_ref().map(|parents| {
                parents
                    .iter()
                    .map(|parent| HttpRouteParentRefs {
                        group: parent.group.clone(),
                        kind: parent.kind.clone(),
                        name: parent.name.clone(),
                        namespace: parent.namespace.clone(),
                        port: parent.port,
                        section_name: parent.section_name.clone(),
                    })
                    .collect()
            }),
            rules: route
                .spec
                .rules
                .as_ref()
                .map(|rules| rules.iter().map(as_http_rule).collect()),
        },
        status: None,
    };
    route::convert_route(object, &as_http, Some(&parts), lookups)
}

/// A rule's filters and backends as an HTTPRoute rule's (its matches are [`GrpcParts`]).
fn as_http_rule(rule: &GrpcRouteRules) -> HttpRouteRules {
    HttpRouteRules {
        backend_refs: rule.backend_refs.as_ref().map(|references| {
            references
                .iter()
                .map(|reference| HttpRouteRulesBackendRefs {
                    filters: reference
                        .filters
                        .as_ref()
                        .map(|filters| filters.iter().map(as_http_backend_filter).collect()),
                    group: reference.group.clone(),
                    kind: reference.kind.clone(),
                    name: reference.name.clone(),
                    namespace: reference.namespace.clone(),
                    port: reference.port,
                    weight: reference.weight,
                })
                .collect()
        }),
        filters: rule
            .filters
            .as_ref()
            .map(|filters| filters.iter().map(as_http_filter).collect()),
        matches: None,
        name: rule.name.clone(),
        timeouts: None,
    }
}

/// A header modifier of one generated type as one of another: the same fields.
macro_rules! modifier {
    ($source:expr, $target:ident, $add:ident, $set:ident) => {
        $source
            .as_ref()
            .map(|modifier| resources::gateway::$target {
                add: modifier.add.as_ref().map(|entries| {
                    entries
                        .iter()
                        .map(|entry| resources::gateway::$add {
                            name: entry.name.clone(),
                            value: entry.value.clone(),
                        })
                        .collect()
                }),
                remove: modifier.remove.clone(),
                set: modifier.set.as_ref().map(|entries| {
                    entries
                        .iter()
                        .map(|entry| resources::gateway::$set {
                            name: entry.name.clone(),
                            value: entry.value.clone(),
                        })
                        .collect()
                }),
            })
    };
}

/// A rule filter. `RequestMirror` and `ExtensionRef` keep their type only: the HTTPRoute
/// converter reports them as not supported whatever they hold.
fn as_http_filter(filter: &resources::gateway::GrpcRouteRulesFilters) -> HttpRouteRulesFilters {
    HttpRouteRulesFilters {
        r#type: match filter.r#type {
            GrpcRouteRulesFiltersType::RequestHeaderModifier => {
                HttpRouteRulesFiltersType::RequestHeaderModifier
            }
            GrpcRouteRulesFiltersType::ResponseHeaderModifier => {
                HttpRouteRulesFiltersType::ResponseHeaderModifier
            }
            GrpcRouteRulesFiltersType::RequestMirror => HttpRouteRulesFiltersType::RequestMirror,
            GrpcRouteRulesFiltersType::ExtensionRef => HttpRouteRulesFiltersType::ExtensionRef,
        },
        request_header_modifier: modifier!(
            filter.request_header_modifier,
            HttpRouteRulesFiltersRequestHeaderModifier,
            HttpRouteRulesFiltersRequestHeaderModifierAdd,
            HttpRouteRulesFiltersRequestHeaderModifierSet
        ),
        response_header_modifier: modifier!(
            filter.response_header_modifier,
            HttpRouteRulesFiltersResponseHeaderModifier,
            HttpRouteRulesFiltersResponseHeaderModifierAdd,
            HttpRouteRulesFiltersResponseHeaderModifierSet
        ),
        ..HttpRouteRulesFilters::default()
    }
}

/// A backendRef filter, as [`as_http_filter`].
fn as_http_backend_filter(
    filter: &resources::gateway::GrpcRouteRulesBackendRefsFilters,
) -> HttpRouteRulesBackendRefsFilters {
    HttpRouteRulesBackendRefsFilters {
        r#type: match filter.r#type {
            GrpcRouteRulesBackendRefsFiltersType::RequestHeaderModifier => {
                HttpRouteRulesBackendRefsFiltersType::RequestHeaderModifier
            }
            GrpcRouteRulesBackendRefsFiltersType::ResponseHeaderModifier => {
                HttpRouteRulesBackendRefsFiltersType::ResponseHeaderModifier
            }
            GrpcRouteRulesBackendRefsFiltersType::RequestMirror => {
                HttpRouteRulesBackendRefsFiltersType::RequestMirror
            }
            GrpcRouteRulesBackendRefsFiltersType::ExtensionRef => {
                HttpRouteRulesBackendRefsFiltersType::ExtensionRef
            }
        },
        request_header_modifier: modifier!(
            filter.request_header_modifier,
            HttpRouteRulesBackendRefsFiltersRequestHeaderModifier,
            HttpRouteRulesBackendRefsFiltersRequestHeaderModifierAdd,
            HttpRouteRulesBackendRefsFiltersRequestHeaderModifierSet
        ),
        response_header_modifier: modifier!(
            filter.response_header_modifier,
            HttpRouteRulesBackendRefsFiltersResponseHeaderModifier,
            HttpRouteRulesBackendRefsFiltersResponseHeaderModifierAdd,
            HttpRouteRulesBackendRefsFiltersResponseHeaderModifierSet
        ),
        ..HttpRouteRulesBackendRefsFilters::default()
    }
}

/// A rule's matches as HTTPRoute matches, each with its precedence or why it is left out.
fn rule_matches(rule: &GrpcRouteRules) -> Vec<MatchInput> {
    rule.matches.iter().flatten().map(one_match).collect()
}

fn one_match(matched: &GrpcRouteRulesMatches) -> MatchInput {
    let (path, precedence) = match &matched.method {
        None => (None, (0, 0)),
        Some(method) => {
            let (path, precedence) = method_path(method)?;
            (Some(path), precedence)
        }
    };
    let headers = matched.headers.as_ref().map(|headers| {
        headers
            .iter()
            .map(|header| HttpRouteRulesMatchesHeaders {
                name: header.name.clone(),
                r#type: header.r#type.as_ref().map(|kind| match kind {
                    GrpcRouteRulesMatchesHeadersType::Exact => {
                        HttpRouteRulesMatchesHeadersType::Exact
                    }
                    GrpcRouteRulesMatchesHeadersType::RegularExpression => {
                        HttpRouteRulesMatchesHeadersType::RegularExpression
                    }
                }),
                value: header.value.clone(),
            })
            .collect()
    });
    Ok((
        HttpRouteRulesMatches {
            headers,
            method: None,
            path,
            query_params: None,
        },
        precedence,
    ))
}

/// The path a method match selects, and its precedence (characters of the service, then
/// of the method); an error names the field below the match.
fn method_path(
    method: &GrpcRouteRulesMatchesMethod,
) -> Result<(HttpRouteRulesMatchesPath, (usize, usize)), (String, String)> {
    let service = method.service.as_deref().unwrap_or_default();
    let name = method.method.as_deref().unwrap_or_default();
    if service.is_empty() && name.is_empty() {
        return Err((
            "method".to_owned(),
            "a method match needs a service, a method or both".to_owned(),
        ));
    }
    let precedence = (service.len(), name.len());
    let regex = matches!(
        method.r#type,
        Some(GrpcRouteRulesMatchesMethodType::RegularExpression)
    );
    let path = |kind, value: String| HttpRouteRulesMatchesPath {
        r#type: Some(kind),
        value: Some(value),
    };
    if regex {
        let any = |part: &str| {
            if part.is_empty() {
                "[^/]+".to_owned()
            } else {
                part.to_owned()
            }
        };
        let pattern = format!("^/(?:{})/(?:{})$", any(service), any(name));
        // Each part is checked alone, so a mistake is reported where it was made.
        for (field, part) in [("service", service), ("method", name)] {
            if !part.is_empty() {
                rules::path_pattern(part).map_err(|why| (format!("method.{field}"), why))?;
            }
        }
        rules::path_pattern(&pattern).map_err(|why| ("method".to_owned(), why))?;
        return Ok((
            path(HttpRouteRulesMatchesPathType::RegularExpression, pattern),
            precedence,
        ));
    }
    // A fully qualified protobuf name may start with `.`; the path a call is sent on
    // never does.
    let service = service.strip_prefix('.').unwrap_or(service);
    if !service.is_empty() && !is_service_name(service) {
        return Err((
            "method.service".to_owned(),
            format!(
                "'{}' is not a gRPC service name (names of letters, digits and '_' joined by '.')",
                service.escape_debug()
            ),
        ));
    }
    if !name.is_empty() && !is_identifier(name) {
        return Err((
            "method.method".to_owned(),
            format!(
                "'{}' is not a gRPC method name (letters, digits and '_', not starting with a digit)",
                name.escape_debug()
            ),
        ));
    }
    let found = match (service.is_empty(), name.is_empty()) {
        (false, false) => path(
            HttpRouteRulesMatchesPathType::Exact,
            format!("/{service}/{name}"),
        ),
        (false, true) => path(
            HttpRouteRulesMatchesPathType::PathPrefix,
            format!("/{service}"),
        ),
        // Checked above: the method is a plain identifier, nothing to escape.
        _ => path(
            HttpRouteRulesMatchesPathType::RegularExpression,
            format!("^/[^/]+/{name}$"),
        ),
    };
    Ok((found, precedence))
}

/// A protobuf identifier: a letter or `_`, then letters, digits and `_` (at most the
/// specification's 1024 characters).
fn is_identifier(text: &str) -> bool {
    let mut bytes = text.bytes();
    text.len() <= 1024
        && bytes
            .next()
            .is_some_and(|first| first.is_ascii_alphabetic() || first == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// A fully qualified service name: identifiers joined by `.`.
fn is_service_name(text: &str) -> bool {
    text.len() <= 1024 && text.split('.').all(is_identifier)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn method(service: &str, name: &str, regex: bool) -> GrpcRouteRulesMatchesMethod {
        GrpcRouteRulesMatchesMethod {
            service: Some(service.to_owned()).filter(|s| !s.is_empty()),
            method: Some(name.to_owned()).filter(|s| !s.is_empty()),
            r#type: regex.then_some(GrpcRouteRulesMatchesMethodType::RegularExpression),
        }
    }

    fn path_of(service: &str, name: &str, regex: bool) -> Result<(String, String), String> {
        method_path(&method(service, name, regex))
            .map(|(path, _)| {
                (
                    format!("{:?}", path.r#type.expect("a type")),
                    path.value.expect("a value"),
                )
            })
            .map_err(|(field, _)| field)
    }

    #[test]
    fn method_matches_become_the_paths_grpc_sends_requests_on() {
        let ok = |kind: &str, value: &str| Ok((kind.to_owned(), value.to_owned()));
        assert_eq!(
            path_of("pkg.Echo", "Say", false),
            ok("Exact", "/pkg.Echo/Say")
        );
        assert_eq!(
            path_of("pkg.Echo", "", false),
            ok("PathPrefix", "/pkg.Echo")
        );
        assert_eq!(
            path_of(".pkg.Echo", "Say", false),
            ok("Exact", "/pkg.Echo/Say")
        );
        assert_eq!(
            path_of("", "Say", false),
            ok("RegularExpression", "^/[^/]+/Say$")
        );
        assert_eq!(
            path_of("pkg\\..*", "", true),
            ok("RegularExpression", "^/(?:pkg\\..*)/(?:[^/]+)$")
        );
        assert_eq!(path_of("", "", false), Err("method".to_owned()));
        assert_eq!(
            path_of("pkg/Echo", "Say", false),
            Err("method.service".to_owned())
        );
        assert_eq!(
            path_of("pkg.Echo", "1Say", false),
            Err("method.method".to_owned())
        );
        assert_eq!(
            path_of("pkg.Echo", "Say'", false),
            Err("method.method".to_owned())
        );
        assert_eq!(path_of("(", "", true), Err("method.service".to_owned()));
    }
}
