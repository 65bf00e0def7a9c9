//! Keys that change request and response headers, as haproxy-ingress names them.

use super::parse::{parse_header_list, parse_header_names};
use super::{Applied, Key, Scope};

/// Headers to set or add, as `(name, value)`; a value may hold `%[namespace]` and
/// `%[service]`, replaced with the backend's Service's.
pub type HeaderList = Vec<(String, String)>;

const HEADER_LINES: &str = "one header a line, its name and value separated by ':' and/or spaces, such as `X-Env: prod`; names of letters, digits and '-_.~'; values without control characters or single quotes; %[namespace] and %[service] in a value are the Service's; at most 64";
const HEADER_NAMES: &str =
    "header names separated by commas, such as `Server, X-Powered-By`; at most 64";
const PER_PATH: &str = "Applied per path: two Ingresses routing to one Service keep their own headers, where haproxy-ingress gives the backend the oldest Ingress's.";

/// `headers`.
pub static HEADERS: Key<HeaderList> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "headers",
    scope: Scope::Backend,
    default: "",
    accepted_values: HEADER_LINES,
    parse: parse_header_list,
    doc: "Another name of `request-set-headers`, ignored when that one is set.",
    applied: Applied::Reload,
    differs: PER_PATH,
};
/// `request-set-headers`.
pub static REQUEST_SET_HEADERS: Key<HeaderList> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "request-set-headers",
    scope: Scope::Backend,
    default: "",
    accepted_values: HEADER_LINES,
    parse: parse_header_list,
    doc: "Headers set on requests before they reach the backend, replacing the client's.",
    applied: Applied::Reload,
    differs: PER_PATH,
};
/// `request-add-headers`.
pub static REQUEST_ADD_HEADERS: Key<HeaderList> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "request-add-headers",
    scope: Scope::Backend,
    default: "",
    accepted_values: HEADER_LINES,
    parse: parse_header_list,
    doc: "Headers added to requests before they reach the backend, after the client's of the same name.",
    applied: Applied::Reload,
    differs: PER_PATH,
};
/// `request-del-headers`.
pub static REQUEST_DEL_HEADERS: Key<Vec<String>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "request-del-headers",
    scope: Scope::Backend,
    default: "",
    accepted_values: HEADER_NAMES,
    parse: parse_header_names,
    doc: "Headers removed from requests before they reach the backend.",
    applied: Applied::Reload,
    differs: PER_PATH,
};
/// `response-set-headers`.
pub static RESPONSE_SET_HEADERS: Key<HeaderList> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "response-set-headers",
    scope: Scope::Backend,
    default: "",
    accepted_values: HEADER_LINES,
    parse: parse_header_list,
    doc: "Headers set on responses, replacing the backend's.",
    applied: Applied::Reload,
    differs: PER_PATH,
};
/// `response-add-headers`.
pub static RESPONSE_ADD_HEADERS: Key<HeaderList> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "response-add-headers",
    scope: Scope::Backend,
    default: "",
    accepted_values: HEADER_LINES,
    parse: parse_header_list,
    doc: "Headers added to responses, after the backend's of the same name.",
    applied: Applied::Reload,
    differs: PER_PATH,
};
/// `response-del-headers`.
pub static RESPONSE_DEL_HEADERS: Key<Vec<String>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "response-del-headers",
    scope: Scope::Backend,
    default: "",
    accepted_values: HEADER_NAMES,
    parse: parse_header_names,
    doc: "Headers removed from responses.",
    applied: Applied::Reload,
    differs: PER_PATH,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_lines_split_name_and_value_on_a_colon_or_spaces() {
        assert_eq!(REQUEST_SET_HEADERS.default_value(), Vec::new());
        assert_eq!(
            (REQUEST_SET_HEADERS.parse)("X-A: 1\nX-B 2"),
            Ok(vec![
                ("X-A".to_owned(), "1".to_owned()),
                ("X-B".to_owned(), "2".to_owned())
            ])
        );
        assert_eq!(
            (RESPONSE_SET_HEADERS.parse)("X-A: it's"),
            Err("header X-A: values may not hold control characters or a single quote (')".into())
        );
    }

    #[test]
    fn header_names_are_tokens() {
        assert_eq!(REQUEST_DEL_HEADERS.default_value(), Vec::<String>::new());
        assert_eq!(
            (RESPONSE_DEL_HEADERS.parse)("X-A, X-B"),
            Ok(vec!["X-A".to_owned(), "X-B".to_owned()])
        );
        assert_eq!(
            (REQUEST_DEL_HEADERS.parse)("X A"),
            Err("'X A' is not a name of letters, digits, '-', '_', '.', '~'".into())
        );
    }
}
