//! What HAProxy answers on its own: error page files and the lines naming them, the
//! `Server` header, the request body limit.

use std::fmt::Write;

use model::{ErrorPage, Responses};

use crate::RenderedFile;
use crate::layout::error_page_file;
use crate::rules::BODY_LIMIT_VAR;

/// The error page files, by path. A page's name carries its content hash, so that a new
/// page changes the main configuration, which HAProxy reads the files with.
pub(crate) fn error_page_files(responses: &Responses) -> Vec<(String, RenderedFile)> {
    responses
        .error_pages
        .iter()
        .map(|(code, page)| {
            (
                page_path(*code, page),
                RenderedFile::new(page.response().to_owned(), false),
            )
        })
        .collect()
}

/// The file of an error page, named by its content.
pub(crate) fn page_path(code: u16, page: &ErrorPage) -> String {
    error_page_file(code, xxhash_rust::xxh3::xxh3_64(page.response().as_bytes()))
}

/// The defaults section's `errorfile` lines: every proxy answers its own errors with them.
pub(crate) fn defaults_lines(responses: &Responses) -> String {
    let mut text = String::new();
    // HAProxy's `errorfile` takes only the codes it answers itself; the client
    // certificate pages are named by the lines answering them.
    for (code, page) in responses
        .error_pages
        .iter()
        .filter(|(code, _)| !CERTIFICATE_CODES.contains(*code))
    {
        let _ = writeln!(text, "    errorfile {code} {}", page_path(*code, page));
    }
    text
}

/// Set when a rule removed the response's `Server` header, which the frontend then does
/// not add back.
pub(crate) const SERVER_HEADER_REMOVED: &str = "txn.server_header_removed";

/// The start of every HTTP frontend: the body limit, the `Server` header.
pub(crate) fn frontend_lines(responses: &Responses) -> String {
    let mut text = String::new();
    if let Some(limit) = responses.max_body_size {
        // Checked once the path's rule had its say (see `body_limit_line`).
        let _ = writeln!(
            text,
            "    http-request set-var({BODY_LIMIT_VAR}) int({limit})"
        );
    }
    if let Some(server) = &responses.server_header {
        let _ = writeln!(
            text,
            "    http-after-response set-header Server '{server}' if !{{ res.hdr(server) -m found }} !{{ var({SERVER_HEADER_REMOVED}) -m found }}"
        );
    }
    text
}

/// The answers to a refused client certificate (495) and a missing one (496).
pub(crate) const CERTIFICATE_CODES: [u16; 2] = [495, 496];

/// What answers with `code` (495 or 496): the custom page, or a plain-text body.
pub(crate) fn certificate_answer(responses: &Responses, code: u16) -> String {
    match responses.error_pages.get(&code) {
        Some(page) => format!("return status {code} errorfile {}", page_path(code, page)),
        None => {
            let reason = if code == 495 {
                "SSL Certificate Error"
            } else {
                "SSL Certificate Required"
            };
            format!("return status {code} content-type text/plain string \"{code} {reason}\"")
        }
    }
}

/// The 413 answer to a request announcing a body larger than its limit (the advertised
/// length: Content-Length, or what a chunked body buffered so far), after the rules that
/// may change the limit; nothing when no limit is set anywhere.
pub(crate) fn body_limit_line(responses: &Responses, any_rule_limit: bool) -> &'static str {
    if responses.max_body_size.is_none() && !any_rule_limit {
        return "";
    }
    concat!(
        "    http-request deny deny_status 413 if { var(txn.max_body) -m found } ",
        "{ req.body_size,sub(txn.max_body) gt 0 }\n"
    )
}

/// The section redirecting what no route and no default backend take, when
/// `default-backend-redirect` asks for one.
pub(crate) fn not_found_redirect(responses: &Responses, section: &str) -> String {
    responses
        .not_found_redirect
        .as_ref()
        .map_or_else(String::new, |redirect| {
            format!(
                "\nbackend {section}\n    http-request redirect location '{}' code {}\n",
                crate::rules::location(redirect),
                redirect.code
            )
        })
}

/// The response of requests no route claims.
pub(crate) fn not_found_line(responses: &Responses) -> String {
    match responses.error_pages.get(&404) {
        Some(page) => format!(
            "    http-request return status 404 errorfile {}\n",
            page_path(404, page)
        ),
        None => {
            "    http-request return status 404 content-type text/plain string \"404 Not Found\"\n"
                .to_owned()
        }
    }
}
