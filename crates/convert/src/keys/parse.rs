//! Parsers shared by the keys: each checks a value in the key's own syntax.

use model::{Cidr, ForwardFor, HaproxyDuration, HeaderName};

pub(super) fn parse_bool(text: &str) -> Result<bool, String> {
    match text.trim() {
        "true" => Ok(true),
        "false" => Ok(false),
        other => Err(format!("'{other}' is not true or false")),
    }
}

pub(super) fn parse_duration(text: &str) -> Result<HaproxyDuration, String> {
    HaproxyDuration::parse(text)
}

pub(super) fn parse_redirect_code(text: &str) -> Result<u16, String> {
    match text.trim().parse::<u16>() {
        Ok(code @ (301 | 302 | 303 | 307 | 308)) => Ok(code),
        _ => Err(format!(
            "'{}' is not one of 301, 302, 303, 307, 308",
            text.trim()
        )),
    }
}

pub(super) fn parse_max_connections(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(n) if (1..=1_000_000).contains(&n) => Ok(n),
        _ => Err(format!(
            "'{}' is not a whole number from 1 to 1000000",
            text.trim()
        )),
    }
}

pub(super) fn parse_forward_for(text: &str) -> Result<ForwardFor, String> {
    match text.trim() {
        "add" => Ok(ForwardFor::Add),
        "update" => Ok(ForwardFor::Update),
        "ifmissing" => Ok(ForwardFor::IfMissing),
        "ignore" => Ok(ForwardFor::Ignore),
        other => Err(format!(
            "'{}' is not add, update, ifmissing or ignore",
            other.escape_debug()
        )),
    }
}

/// A header name, or nothing when empty.
pub(super) fn parse_optional_header(text: &str) -> Result<Option<HeaderName>, String> {
    let text = text.trim();
    if text.is_empty() {
        Ok(None)
    } else {
        HeaderName::parse(text).map(Some)
    }
}

pub(super) fn parse_cidr_list(text: &str) -> Result<Vec<Cidr>, String> {
    text.split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(Cidr::parse)
        .collect()
}
