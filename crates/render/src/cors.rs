//! A chained rule's CORS lines: the request's Origin checked against the policy (kept in
//! `txn.cors_origin` when allowed), preflights answered by HAProxy, responses decorated:
//! those HAProxy makes itself too (`http-after-response`: a 401 of authentication, a 413,
//! a 429 of a rate limit), which a browser would otherwise show its page as a CORS error.

use std::fmt::Write;

use model::{Cors, CorsOrigins};

/// How many origins or regexes one line lists, well within HAProxy's 64 words.
const PATTERNS_PER_LINE: usize = 16;

/// Preflight: `OPTIONS` with an Origin and the method it asks for.
const PREFLIGHT: &str =
    "METH_OPTIONS { req.hdr(origin) -m found } { req.hdr(access-control-request-method) -m found }";
const ALLOWED: &str = "{ var(txn.cors_origin) -m found }";

/// A list header's value. Browsers refuse `*` on a credentialed request, so with
/// credentials a `*` list echoes what the preflight asks for.
fn list_value(cors: &Cors, list: &[String], asked: &str) -> String {
    if cors.allow_credentials && list.iter().any(|entry| entry == "*") {
        format!("%[{asked}]")
    } else {
        list.join(", ")
    }
}

/// Appends the request lines (origin check, preflight answers) and the response lines.
pub(crate) fn cors_lines(cors: &Cors, chosen: &str, requests: &mut String, responses: &mut String) {
    let allow = |condition: String, out: &mut String| {
        let _ = writeln!(
            out,
            "    http-request set-var(txn.cors_origin) req.hdr(origin) if {chosen} {condition}"
        );
    };
    match &cors.origins {
        CorsOrigins::Any => allow("{ req.hdr(origin) -m found }".to_owned(), requests),
        CorsOrigins::Listed { exact, regex } => {
            for chunk in exact.chunks(PATTERNS_PER_LINE) {
                allow(
                    format!("{{ req.hdr(origin) -m str -- {} }}", chunk.join(" ")),
                    requests,
                );
            }
            for chunk in regex.chunks(PATTERNS_PER_LINE) {
                let patterns: Vec<String> = chunk.iter().map(|r| format!("'{r}'")).collect();
                allow(
                    format!("{{ req.hdr(origin) -m reg -- {} }}", patterns.join(" ")),
                    requests,
                );
            }
        }
    }
    let origin = if matches!(cors.origins, CorsOrigins::Any) && !cors.allow_credentials {
        "*"
    } else {
        "%[var(txn.cors_origin)]"
    };
    let vary = if cors.varies_by_origin() {
        " hdr Vary Origin"
    } else {
        ""
    };
    let credentials = if cors.allow_credentials {
        " hdr Access-Control-Allow-Credentials true"
    } else {
        ""
    };
    // HAProxy 2.6 reads an empty argument as a missing one: an empty list sends no header.
    let mut preflight =
        format!("    http-request return status 204 hdr Access-Control-Allow-Origin \"{origin}\"");
    if !cors.allow_methods.is_empty() {
        let _ = write!(
            preflight,
            " hdr Access-Control-Allow-Methods \"{}\"",
            list_value(
                cors,
                &cors.allow_methods,
                "req.hdr(access-control-request-method)"
            )
        );
    }
    if !cors.allow_headers.is_empty() {
        let _ = write!(
            preflight,
            " hdr Access-Control-Allow-Headers \"{}\"",
            list_value(
                cors,
                &cors.allow_headers,
                "req.fhdr(access-control-request-headers)"
            )
        );
    }
    // The Gateway API's conformance asks for it on the preflight answer too.
    if !cors.expose_headers.is_empty() {
        let _ = write!(
            preflight,
            " hdr Access-Control-Expose-Headers \"{}\"",
            cors.expose_headers.join(", ")
        );
    }
    let _ = writeln!(
        preflight,
        " hdr Access-Control-Max-Age {}{credentials}{vary} if {chosen} {PREFLIGHT} {ALLOWED}",
        cors.max_age
    );
    requests.push_str(&preflight);
    // A refused origin's preflight gets no CORS header: the browser stops there, and
    // the backend never sees it.
    let _ = writeln!(
        requests,
        "    http-request return status 204{vary} if {chosen} {PREFLIGHT} !{ALLOWED}"
    );
    let _ = writeln!(
        responses,
        "    http-after-response set-header Access-Control-Allow-Origin \"{origin}\" if {chosen} {ALLOWED}"
    );
    if cors.allow_credentials {
        let _ = writeln!(
            responses,
            "    http-after-response set-header Access-Control-Allow-Credentials true if {chosen} {ALLOWED}"
        );
    }
    if !cors.expose_headers.is_empty() {
        let _ = writeln!(
            responses,
            "    http-after-response set-header Access-Control-Expose-Headers \"{}\" if {chosen} {ALLOWED}",
            cors.expose_headers.join(", ")
        );
    }
    // Unless the answer says it already (a preflight's does): `hdr` takes each of the
    // header's comma-separated values, compared whole (`X-Originating-IP` is not it).
    if cors.varies_by_origin() {
        let _ = writeln!(
            responses,
            "    http-after-response add-header Vary Origin if {chosen} !{{ res.hdr(vary) -m str -i origin }}"
        );
    }
}
