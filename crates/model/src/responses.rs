//! What HAProxy answers on its own: custom error pages, the `Server` header, the request
//! body limit.

use std::collections::BTreeMap;
use std::fmt;

use crate::HeaderName;

/// A complete HTTP response HAProxy sends instead of one of its own error responses,
/// validated on creation so that HAProxy loads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorPage {
    /// The response as HAProxy reads it from its file (`HTTP/1.1 ...`, CRLF line ends,
    /// a computed `content-length`).
    response: String,
}

/// HAProxy keeps a whole error response in one buffer and leaves room for rewrites: its
/// limit is 16384 - 1024 bytes with the default tuning; this leaves a margin.
pub const MAX_ERROR_PAGE_BYTES: usize = 15_000;

impl ErrorPage {
    /// Parses haproxy-ingress's `http-response-<code>` syntax: an optional first line with
    /// a status code and reason, then header lines, then an empty line and the body. A
    /// missing status line means `code` and its standard reason.
    pub fn parse(code: u16, text: &str) -> Result<Self, String> {
        let lines = text
            .split('\n')
            .map(|line| line.strip_suffix('\r').unwrap_or(line));
        let mut status = code;
        let mut reason = standard_reason(code).to_owned();
        let mut headers: Vec<(HeaderName, String)> = Vec::new();
        let mut first = true;
        let mut body_lines: Vec<&str> = Vec::new();
        let mut in_body = false;
        for (number, line) in lines.enumerate() {
            let number = number + 1;
            if in_body {
                body_lines.push(line);
                continue;
            }
            if line.is_empty() {
                in_body = true;
                first = false;
                continue;
            }
            if first {
                first = false;
                if let Some((parsed, given_reason)) = status_line(line)? {
                    status = parsed;
                    reason = given_reason.unwrap_or(standard_reason(parsed)).to_owned();
                    continue;
                }
            }
            let Some((name, value)) = line.split_once(':') else {
                return Err(format!(
                    "line {number} '{}' is not a header 'name: value' (an empty line starts the body)",
                    line.escape_debug()
                ));
            };
            let name =
                HeaderName::parse(name.trim()).map_err(|why| format!("line {number}: {why}"))?;
            let value = value.trim();
            if value.chars().any(|c| c.is_control() && c != '\t') {
                return Err(format!(
                    "line {number}: the value of header '{name}' holds a control character"
                ));
            }
            // HAProxy needs the length to match the body: it is computed.
            if name.to_string().eq_ignore_ascii_case("content-length") {
                continue;
            }
            headers.push((name, value.to_owned()));
        }
        let body = body_lines.join("\n");
        let mut response = format!("HTTP/1.1 {status} {reason}\r\n");
        for (name, value) in &headers {
            response.push_str(&format!("{name}: {value}\r\n"));
        }
        response.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
        if response.len() > MAX_ERROR_PAGE_BYTES {
            return Err(format!(
                "the response is {} bytes long; HAProxy holds at most {MAX_ERROR_PAGE_BYTES}",
                response.len()
            ));
        }
        Ok(Self { response })
    }

    /// The response file's content.
    pub fn response(&self) -> &str {
        &self.response
    }
}

/// `200` or `302 Found`: a status line; `None` when the line is something else (a header).
fn status_line(line: &str) -> Result<Option<(u16, Option<&str>)>, String> {
    let (digits, reason) = match line.split_once(' ') {
        Some((digits, reason)) => (digits, Some(reason.trim())),
        None => (line, None),
    };
    if digits.len() != 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(None);
    }
    let status: u16 = digits
        .parse()
        .map_err(|_| format!("'{digits}' is not a status code"))?;
    if !(200..=599).contains(&status) {
        return Err(format!("status {status} is not from 200 to 599"));
    }
    let reason = reason.filter(|r| !r.is_empty());
    if let Some(reason) = reason
        && reason.chars().any(|c| c.is_control() || !c.is_ascii())
    {
        return Err(format!(
            "the reason '{}' is not printable ASCII",
            reason.escape_debug()
        ));
    }
    Ok(Some((status, reason)))
}

fn standard_reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        407 => "Proxy Authentication Required",
        408 => "Request Timeout",
        410 => "Gone",
        413 => "Payload Too Large",
        425 => "Too Early",
        495 => "SSL Certificate Error",
        496 => "SSL Certificate Required",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

/// The `Server` header's value: letters, digits, spaces and `._-/()`, so that it prints as
/// a single-quoted word that HAProxy's log-format reading keeps as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerHeader(String);

impl ServerHeader {
    /// Parses a value.
    pub fn parse(text: &str) -> Result<Self, String> {
        let ok = !text.is_empty()
            && text.len() <= 64
            && !text.starts_with(' ')
            && !text.ends_with(' ')
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b" ._-/()".contains(&b));
        if ok {
            Ok(Self(text.to_owned()))
        } else {
            Err(format!(
                "'{}' is not 1 to 64 letters, digits, spaces or '._-/()'",
                text.escape_debug()
            ))
        }
    }
}

impl fmt::Display for ServerHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What HAProxy answers on its own.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Responses {
    /// Custom error pages by the status code they replace.
    pub error_pages: BTreeMap<u16, ErrorPage>,
    /// Sent as `Server` when a response has none; `None` adds nothing.
    pub server_header: Option<ServerHeader>,
    /// Requests with a larger body are answered 413; `None` is no limit.
    pub max_body_size: Option<u64>,
    /// Where requests no route and no default backend takes are redirected, instead of
    /// answered 404.
    pub not_found_redirect: Option<crate::Redirect>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_page_is_a_complete_response_with_its_length() {
        let page = ErrorPage::parse(
            404,
            "content-type: text/plain\nconnection: close\n\nnot here\n",
        )
        .unwrap();
        assert_eq!(
            page.response(),
            "HTTP/1.1 404 Not Found\r\ncontent-type: text/plain\r\nconnection: close\r\ncontent-length: 9\r\n\r\nnot here\n"
        );
        let redirect = ErrorPage::parse(404, "302 Found\nlocation: https://other.test\n").unwrap();
        assert!(
            redirect
                .response()
                .starts_with("HTTP/1.1 302 Found\r\nlocation: https://other.test\r\n")
        );
        let bare = ErrorPage::parse(503, "503").unwrap();
        assert_eq!(
            bare.response(),
            "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n"
        );
        let body_only = ErrorPage::parse(502, "\nbad <b>gateway</b>").unwrap();
        assert!(
            body_only
                .response()
                .ends_with("content-length: 18\r\n\r\nbad <b>gateway</b>")
        );
        let computed = ErrorPage::parse(502, "content-length: 1\n\nabc").unwrap();
        assert!(computed.response().contains("content-length: 3\r\n"));
        assert!(!computed.response().contains("content-length: 1\r\n"));
    }

    #[test]
    fn an_error_page_haproxy_could_not_load_is_refused() {
        for (bad, why) in [
            ("just words", "is not a header"),
            ("x y: z", "header name"),
            ("099 Low", "from 200 to 599"),
            ("404 Not\u{7}Found", "printable ASCII"),
            ("a: b\u{1}c", "control character"),
        ] {
            let error = ErrorPage::parse(404, bad).unwrap_err();
            assert!(error.contains(why), "{bad:?}: {error}");
        }
        let huge = format!("\n{}", "x".repeat(MAX_ERROR_PAGE_BYTES));
        assert!(
            ErrorPage::parse(404, &huge)
                .unwrap_err()
                .contains("bytes long")
        );
    }

    #[test]
    fn a_server_header_is_a_plain_product_name() {
        assert!(ServerHeader::parse("portcullis/1.0 (linux)").is_ok());
        for bad in ["", " x", "a%[src]", "a'b", "a\"b", "a\nb", &"a".repeat(65)] {
            assert!(ServerHeader::parse(bad).is_err(), "{bad:?}");
        }
    }
}
