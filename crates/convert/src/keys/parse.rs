//! Parsers shared by the keys: each checks a value in the key's own syntax.

use model::{Cidr, ForwardFor, HaproxyDuration, HeaderName, TlsOptions, TlsWord};

/// A boolean as haproxy-ingress reads one (Go's `strconv.ParseBool`), so that values
/// written for it keep their meaning.
pub(super) fn parse_bool(text: &str) -> Result<bool, String> {
    match text.trim() {
        "true" | "True" | "TRUE" | "t" | "T" | "1" => Ok(true),
        "false" | "False" | "FALSE" | "f" | "F" | "0" => Ok(false),
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

/// Comma-separated addresses or address blocks, at most [`MAX_LIST_ENTRIES`] (they are
/// printed on one rule line).
pub(super) fn parse_cidr_list(text: &str) -> Result<Vec<Cidr>, String> {
    let entries: Vec<&str> = text
        .split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .collect();
    if entries.len() > MAX_LIST_ENTRIES {
        return Err(format!(
            "{} addresses; at most {MAX_LIST_ENTRIES} are accepted",
            entries.len()
        ));
    }
    entries.into_iter().map(Cidr::parse).collect()
}

/// At most this many entries in a list value, so every line printing them stays well
/// within HAProxy's 64 words.
const MAX_LIST_ENTRIES: usize = 32;

/// Comma-separated path prefixes.
pub(super) fn parse_redirect_exceptions(text: &str) -> Result<Vec<String>, String> {
    let paths: Vec<&str> = text
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    if paths.len() > MAX_LIST_ENTRIES {
        return Err(format!(
            "{} paths; at most {MAX_LIST_ENTRIES} are accepted",
            paths.len()
        ));
    }
    paths.into_iter().map(url_path).collect()
}

/// A path of URL-safe characters, printed in configuration lines.
fn url_path(text: &str) -> Result<String, String> {
    crate::gateway::rules::url_path(text)
}

/// A path, or nothing when empty.
pub(super) fn parse_url_path(text: &str) -> Result<Option<String>, String> {
    let text = text.trim();
    if text.is_empty() {
        Ok(None)
    } else {
        url_path(text).map(Some)
    }
}

/// `http[s]://host[:port][/path]`, or nothing when empty. The code is `redirect-to-code`'s,
/// set where the key is read.
pub(super) fn parse_redirect_url(text: &str) -> Result<Option<model::Redirect>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let bad = |why: &str| format!("'{}' {why}", text.escape_debug());
    let (scheme, rest) = text
        .split_once("://")
        .filter(|(scheme, _)| matches!(*scheme, "http" | "https"))
        .ok_or_else(|| bad("does not start with http:// or https://"))?;
    let (authority, path) = match rest.find('/') {
        Some(at) => rest.split_at(at),
        None => (rest, "/"),
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) => {
            let port = port
                .parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| bad("has a port that is not a number from 1 to 65535"))?;
            (host, Some(port))
        }
        None => (authority, None),
    };
    let hostname = match crate::names::parse_any_host(host) {
        Ok(model::HostKey::Exact(name)) => name,
        _ => return Err(bad("does not name an exact host")),
    };
    Ok(Some(model::Redirect {
        scheme: Some(scheme.to_owned()),
        hostname: Some(hostname.to_string()),
        port,
        path: Some(model::PathChange::Full(url_path(path)?)),
        code: 302,
    }))
}

pub(super) fn parse_path_type(text: &str) -> Result<super::rewrite::PathType, String> {
    use super::rewrite::PathType;
    match text.trim().to_ascii_lowercase().as_str() {
        "begin" => Ok(PathType::Begin),
        "prefix" => Ok(PathType::Prefix),
        "exact" => Ok(PathType::Exact),
        "regex" => Ok(PathType::Regex),
        _ => Err(format!(
            "'{}' is not begin, prefix, exact or regex",
            text.trim().escape_debug()
        )),
    }
}

pub(super) fn parse_max_age(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(seconds) if seconds <= i32::MAX as u32 => Ok(seconds),
        _ => Err(format!(
            "'{}' is not a whole number of seconds from 0 to 2147483647",
            text.trim().escape_debug()
        )),
    }
}

/// Lines of `name: value` or `name value`.
pub(super) fn parse_header_list(text: &str) -> Result<Vec<(String, String)>, String> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.len() > 2 * MAX_LIST_ENTRIES {
        return Err(format!(
            "{} headers; at most {} are accepted",
            lines.len(),
            2 * MAX_LIST_ENTRIES
        ));
    }
    lines
        .into_iter()
        .map(|line| {
            let end = line
                .find(|c: char| c == ':' || c.is_whitespace())
                .unwrap_or(line.len());
            let (name, rest) = line.split_at(end);
            let value = rest
                .trim_start_matches(|c: char| c == ':' || c.is_whitespace())
                .trim_end();
            let name = crate::gateway::rules::token(name)
                .map_err(|why| format!("header line '{}': {why}", line.escape_debug()))?;
            let value = crate::gateway::rules::value(value)
                .map_err(|why| format!("header {name}: {why}"))?;
            Ok((name, value))
        })
        .collect()
}

/// Comma-separated header names.
pub(super) fn parse_header_names(text: &str) -> Result<Vec<String>, String> {
    let names: Vec<&str> = text
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect();
    if names.len() > 2 * MAX_LIST_ENTRIES {
        return Err(format!(
            "{} headers; at most {} are accepted",
            names.len(),
            2 * MAX_LIST_ENTRIES
        ));
    }
    names
        .into_iter()
        .map(crate::gateway::rules::token)
        .collect()
}

/// OpenSSL's TLS 1.2 cipher names HAProxy's users set (Mozilla's modern, intermediate
/// and old lists), and OpenSSL's keywords: a list of these cannot fail to parse, and
/// matches a cipher whenever one entry is not excluded.
const KNOWN_CIPHERS: &[&str] = &[
    "ECDHE-ECDSA-AES128-GCM-SHA256",
    "ECDHE-RSA-AES128-GCM-SHA256",
    "ECDHE-ECDSA-AES256-GCM-SHA384",
    "ECDHE-RSA-AES256-GCM-SHA384",
    "ECDHE-ECDSA-CHACHA20-POLY1305",
    "ECDHE-RSA-CHACHA20-POLY1305",
    "DHE-RSA-AES128-GCM-SHA256",
    "DHE-RSA-AES256-GCM-SHA384",
    "DHE-RSA-CHACHA20-POLY1305",
    "ECDHE-ECDSA-AES128-SHA256",
    "ECDHE-RSA-AES128-SHA256",
    "ECDHE-ECDSA-AES128-SHA",
    "ECDHE-RSA-AES128-SHA",
    "ECDHE-ECDSA-AES256-SHA384",
    "ECDHE-RSA-AES256-SHA384",
    "ECDHE-ECDSA-AES256-SHA",
    "ECDHE-RSA-AES256-SHA",
    "DHE-RSA-AES128-SHA256",
    "DHE-RSA-AES256-SHA256",
    "AES128-GCM-SHA256",
    "AES256-GCM-SHA384",
    "AES128-SHA256",
    "AES256-SHA256",
    "AES128-SHA",
    "AES256-SHA",
    "DES-CBC3-SHA",
    "HIGH",
    "MEDIUM",
    "LOW",
    "DEFAULT",
    "ALL",
    "COMPLEMENTOFDEFAULT",
    "COMPLEMENTOFALL",
    "ECDHE",
    "EECDH",
    "DHE",
    "EDH",
    "kEDH",
    "kEECDH",
    "AESGCM",
    "AES",
    "AES128",
    "AES256",
    "CHACHA20",
    "SHA256",
    "SHA384",
    "SHA1",
    "SHA",
    "MD5",
    "RC4",
    "DES",
    "3DES",
    "aNULL",
    "eNULL",
    "NULL",
    "EXPORT",
    "PSK",
    "SRP",
    "DSS",
    "aDSS",
    "RSA",
    "kRSA",
    "aRSA",
    "ECDSA",
    "aECDSA",
    "CAMELLIA",
    "SEED",
    "IDEA",
    "ARIA",
    "@STRENGTH",
    "@SECLEVEL=0",
    "@SECLEVEL=1",
    "@SECLEVEL=2",
    "@SECLEVEL=3",
];

/// The TLS 1.3 suites OpenSSL knows.
const KNOWN_CIPHER_SUITES: &[&str] = &[
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
    "TLS_AES_128_CCM_SHA256",
    "TLS_AES_128_CCM_8_SHA256",
];

pub(super) fn parse_ciphers(text: &str) -> Result<Option<TlsWord>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let mut offered = false;
    for entry in text.split(':') {
        let (excluded, name) = match entry.strip_prefix(['!', '-']) {
            Some(name) => (true, name),
            None => (false, entry.strip_prefix('+').unwrap_or(entry)),
        };
        // `A+B` selects the ciphers both name.
        if name.is_empty() || !name.split('+').all(|part| KNOWN_CIPHERS.contains(&part)) {
            return Err(format!(
                "'{}' is not a cipher name or keyword OpenSSL knows",
                entry.escape_debug()
            ));
        }
        offered |= !excluded && !name.starts_with('@');
    }
    if !offered {
        return Err(format!("'{}' excludes every cipher", text.escape_debug()));
    }
    TlsWord::parse(text).map(Some)
}

pub(super) fn parse_cipher_suites(text: &str) -> Result<Option<TlsWord>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    if let Some(bad) = text.split(':').find(|s| !KNOWN_CIPHER_SUITES.contains(s)) {
        return Err(format!(
            "'{}' is not a TLS 1.3 cipher suite",
            bad.escape_debug()
        ));
    }
    TlsWord::parse(text).map(Some)
}

pub(super) fn parse_alpn(text: &str) -> Result<TlsWord, String> {
    let text = text.trim();
    let protocol = |p: &str| {
        !p.is_empty()
            && p.len() <= 32
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'/' | b'-'))
    };
    if text.split(',').count() > 8 || !text.split(',').all(protocol) {
        return Err(format!(
            "'{}' is not a list of up to 8 protocol names separated by commas",
            text.escape_debug()
        ));
    }
    TlsWord::parse(text)
}

const TLS_VERSIONS: [&str; 4] = ["TLSv1.0", "TLSv1.1", "TLSv1.2", "TLSv1.3"];

/// Space-separated options, of `flags` or `ssl-min-ver`/`ssl-max-ver <version>`.
fn tls_option_words(text: &str, flags: &[&str]) -> Result<TlsOptions, String> {
    let mut words = text.split_whitespace();
    let mut options = Vec::new();
    while let Some(word) = words.next() {
        if matches!(word, "ssl-min-ver" | "ssl-max-ver") {
            let version = words
                .next()
                .filter(|v| TLS_VERSIONS.contains(v))
                .ok_or_else(|| format!("'{word}' needs one of {}", TLS_VERSIONS.join(", ")))?;
            options.push(TlsWord::parse(word)?);
            options.push(TlsWord::parse(version)?);
        } else if flags.contains(&word) {
            options.push(TlsWord::parse(word)?);
        } else {
            return Err(format!(
                "'{}' is not one of {}, ssl-min-ver, ssl-max-ver",
                word.escape_debug(),
                flags.join(", ")
            ));
        }
    }
    Ok(TlsOptions {
        options,
        ..TlsOptions::default()
    })
}

pub(super) fn parse_tls_options(text: &str) -> Result<TlsOptions, String> {
    let options = tls_option_words(
        text,
        &[
            "no-sslv3",
            "no-tlsv10",
            "no-tlsv11",
            "no-tlsv12",
            "no-tlsv13",
            "no-tls-tickets",
            "force-tlsv12",
            "force-tlsv13",
        ],
    )?;
    if tls_versions_left(&options, None) {
        Ok(options)
    } else {
        Err(format!(
            "'{}' leaves no TLS version enabled",
            text.trim().escape_debug()
        ))
    }
}

pub(super) fn parse_host_tls_options(text: &str) -> Result<TlsOptions, String> {
    tls_option_words(text, &["no-ca-names", "allow-0rtt"])
}

/// Whether HAProxy would leave some TLS version enabled with `global`'s options, and
/// `host`'s over them in a certificate list. As HAProxy 2.6 measured: a line that sets
/// both `ssl-min-ver` and `ssl-max-ver` takes that range alone; one that sets only one
/// of them narrows the versions the frontend enables (its own bounds, else the versions
/// its `no-*` flags leave), so `ssl-max-ver TLSv1.1` under `no-tlsv10 no-tlsv11` leaves
/// none.
pub(crate) fn tls_versions_left(global: &TlsOptions, host: Option<&TlsOptions>) -> bool {
    let words = |options: &TlsOptions| -> Vec<String> {
        options
            .options
            .iter()
            .map(|w| w.as_str().to_owned())
            .collect()
    };
    let bound = |words: &[String], name: &str| {
        words
            .iter()
            .position(|w| w == name)
            .and_then(|at| words.get(at + 1))
            .and_then(|v| TLS_VERSIONS.iter().position(|known| known == v))
    };
    let global_words = words(global);
    let host_words = host.map(words).unwrap_or_default();
    // `force-tlsv12` enables that version alone (`force-sslv3` none of these).
    const FORCE: [&str; 4] = [
        "force-tlsv10",
        "force-tlsv11",
        "force-tlsv12",
        "force-tlsv13",
    ];
    let forced = global_words
        .iter()
        .any(|w| w.starts_with("force-"))
        .then(|| {
            FORCE
                .iter()
                .position(|flag| global_words.iter().any(|w| w == flag))
        });
    if forced.is_some() && host.is_none() {
        return true;
    }
    let (host_min, host_max) = (
        bound(&host_words, "ssl-min-ver"),
        bound(&host_words, "ssl-max-ver"),
    );
    if let (Some(min), Some(max)) = (host_min, host_max) {
        return min <= max;
    }
    let (global_min, global_max) = (
        bound(&global_words, "ssl-min-ver"),
        bound(&global_words, "ssl-max-ver"),
    );
    const FLAGS: [&str; 4] = ["no-tlsv10", "no-tlsv11", "no-tlsv12", "no-tlsv13"];
    let enabled_by_frontend = |version: usize| {
        if let Some(forced) = forced {
            forced == Some(version)
        } else if global_min.is_some() || global_max.is_some() {
            global_min.unwrap_or(0) <= version
                && version <= global_max.unwrap_or(TLS_VERSIONS.len() - 1)
        } else {
            !global_words.iter().any(|w| w == FLAGS[version])
        }
    };
    (host_min.unwrap_or(0)..=host_max.unwrap_or(TLS_VERSIONS.len() - 1)).any(enabled_by_frontend)
}

/// A port from 1 to 65535, or nothing when empty.
pub(super) fn parse_optional_port(text: &str) -> Result<Option<u16>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    match text.parse::<u16>() {
        Ok(port) if port > 0 => Ok(Some(port)),
        _ => Err(format!(
            "'{}' is not a port from 1 to 65535",
            text.escape_debug()
        )),
    }
}
