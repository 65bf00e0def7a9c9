//! Access logs: where HAProxy sends them, in which syslog framing, and in which format.

use std::fmt;
use std::net::SocketAddr;

/// Where access logs go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogTarget {
    /// Nowhere.
    Off,
    /// HAProxy's standard output, which is the controller's (unframed lines).
    Stdout,
    /// A syslog server over UDP.
    Syslog(SocketAddr),
}

/// The syslog framing of each line (HAProxy's `log ... format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyslogFormat {
    /// RFC 5424.
    Rfc5424,
    /// RFC 3164 (BSD syslog).
    Rfc3164,
    /// The message alone.
    Raw,
    /// Priority and message.
    Short,
    /// Priority, RFC 3339 time and message.
    Iso,
    /// Priority, RFC 3164 time and message.
    Timed,
    /// RFC 5424 priority and message, without header.
    Priority,
}

impl SyslogFormat {
    /// Every format with its keyword.
    pub const ALL: [(SyslogFormat, &'static str); 7] = [
        (SyslogFormat::Rfc5424, "rfc5424"),
        (SyslogFormat::Rfc3164, "rfc3164"),
        (SyslogFormat::Raw, "raw"),
        (SyslogFormat::Short, "short"),
        (SyslogFormat::Iso, "iso"),
        (SyslogFormat::Timed, "timed"),
        (SyslogFormat::Priority, "priority"),
    ];

    /// HAProxy's keyword.
    pub fn keyword(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(format, _)| *format == self)
            .map_or("raw", |(_, keyword)| keyword)
    }
}

/// The syslog tag (HAProxy's `log-tag`): letters, digits, `.`, `_` and `-`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogTag(String);

impl LogTag {
    /// Parses a tag.
    pub fn parse(text: &str) -> Result<Self, String> {
        let ok = !text.is_empty()
            && text.len() <= 32
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
        if ok {
            Ok(Self(text.to_owned()))
        } else {
            Err(format!(
                "'{}' is not a tag of 1 to 32 letters, digits, '.', '_' or '-'",
                text.escape_debug()
            ))
        }
    }
}

impl fmt::Display for LogTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What each HTTP access log line says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpLogFormat {
    /// HAProxy's HTTP log format (`option httplog`).
    Default,
    /// One JSON object per line.
    Json,
    /// A custom format.
    Custom(LogFormat),
}

/// How a TCP frontend logs its connections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TcpLogFormat {
    /// Not at all (`no log`).
    Off,
    /// HAProxy's TCP log format (`option tcplog`).
    Default,
    /// One JSON object per connection.
    Json,
    /// A custom format, of variables a TCP proxy has.
    Custom(LogFormat),
}

/// Log-format variables HAProxy 2.6 refuses in a TCP proxy (they need HTTP): each one
/// makes `haproxy -c` fail there, as measured on 2.6.12.
const HTTP_ONLY_VARIABLES: &[&str] = &[
    "CC", "CS", "HM", "HP", "HPO", "HQ", "HU", "HV", "Ta", "Ti", "Tq", "TR", "Tr", "r", "tr",
    "trg", "trl",
];

/// A custom log format (HAProxy's `log-format` syntax), validated on creation: its text is
/// printed between single quotes, and every `%` variable is one HAProxy 2.6 knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFormat(String);

/// The log-format variables of HAProxy 2.6 (configuration manual, 8.2.6).
const LOG_VARIABLES: &[&str] = &[
    "o", "B", "CC", "CS", "H", "HM", "HP", "HPO", "HQ", "HU", "HV", "ID", "ST", "T", "Ta", "Tc",
    "Td", "Tl", "Th", "Ti", "Tq", "TR", "Tr", "Ts", "Tt", "Tu", "Tw", "U", "ac", "b", "bc", "bi",
    "bp", "bq", "ci", "cp", "f", "fc", "fi", "fp", "ft", "lc", "hr", "hrl", "hs", "hsl", "ms",
    "pid", "r", "rc", "rt", "s", "sc", "si", "sp", "sq", "sslc", "sslv", "t", "tr", "trg", "trl",
    "ts", "tsc",
];

/// Sample fetches a format may use in `%[...]`: those HAProxy 2.6 can still evaluate
/// when a request is logged (the request's headers are gone by then; the frontends keep
/// the host in `txn.host`).
const FETCHES: &[&str] = &[
    "src",
    "src_port",
    "dst",
    "dst_port",
    "method",
    "status",
    "ssl_fc",
    "ssl_fc_sni",
    "ssl_fc_protocol",
    "ssl_fc_cipher",
    "fe_name",
    "be_name",
    "srv_name",
    "uuid",
    "unique-id",
    "hostname",
    "capture.req.uri",
    "capture.req.method",
    "capture.req.ver",
    "capture.res.ver",
];

/// Converters a format may apply, without arguments.
const CONVERTERS: &[&str] = &["lower", "upper", "base64", "hex", "json"];

/// Longest format accepted: the whole `log-format` line stays within HAProxy's 2048-byte
/// line limit.
const MAX_FORMAT_LEN: usize = 1500;

impl LogFormat {
    /// Parses a log format.
    pub fn parse(text: &str) -> Result<Self, String> {
        let shown = || text.escape_debug().to_string();
        if text.trim().is_empty() {
            return Err("the log format is empty".to_owned());
        }
        if text.len() > MAX_FORMAT_LEN {
            return Err(format!(
                "the log format is {} bytes long; at most {MAX_FORMAT_LEN} are accepted",
                text.len()
            ));
        }
        if let Some(bad) = text
            .chars()
            .find(|c| !(' '..='~').contains(c) || matches!(c, '\'' | '\\'))
        {
            return Err(format!(
                "'{}' holds '{}': a log format is printable ASCII without quotes ' or backslashes",
                shown(),
                bad.escape_debug()
            ));
        }
        let mut rest = text;
        while let Some(at) = rest.find('%') {
            rest = &rest[at + 1..];
            if let Some(after) = rest.strip_prefix('%') {
                rest = after;
                continue;
            }
            if let Some(after) = rest.strip_prefix('{') {
                let Some((flags, after)) = after.split_once('}') else {
                    return Err(format!("'{}' has a '%{{' without its '}}'", shown()));
                };
                check_flags(flags).map_err(|why| format!("'{}': {why}", shown()))?;
                rest = after;
            }
            if let Some(after) = rest.strip_prefix('[') {
                let Some((expression, after)) = after.split_once(']') else {
                    return Err(format!("'{}' has a '%[' without its ']'", shown()));
                };
                check_sample(expression).map_err(|why| format!("'{}': {why}", shown()))?;
                rest = after;
                continue;
            }
            let name_end = rest
                .find(|c: char| !c.is_ascii_alphabetic())
                .unwrap_or(rest.len());
            let name = &rest[..name_end];
            if !LOG_VARIABLES.contains(&name) {
                return Err(format!(
                    "'{}' uses '%{}', which is not a log-format variable of HAProxy (write %% for a percent sign)",
                    shown(),
                    name.escape_debug()
                ));
            }
            rest = &rest[name_end..];
        }
        Ok(Self(text.to_owned()))
    }

    /// Parses a log format for a TCP proxy: as [`LogFormat::parse`], without the
    /// variables only an HTTP proxy has.
    pub fn parse_tcp(text: &str) -> Result<Self, String> {
        let format = Self::parse(text)?;
        if let Some(name) = variables(text).find(|name| HTTP_ONLY_VARIABLES.contains(name)) {
            return Err(format!(
                "'{}' uses '%{name}', which needs HTTP: this format is a TCP proxy's",
                text.escape_debug()
            ));
        }
        Ok(format)
    }

    /// The validated text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The `%` variables of a format (not its `%[...]` samples), in order.
fn variables(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        loop {
            let at = rest.find('%')?;
            rest = &rest[at + 1..];
            if let Some(after) = rest.strip_prefix('%') {
                rest = after;
                continue;
            }
            if let Some(after) = rest.strip_prefix('{') {
                rest = after.split_once('}').map_or("", |(_, after)| after);
            }
            if let Some(after) = rest.strip_prefix('[') {
                rest = after.split_once(']').map_or("", |(_, after)| after);
                continue;
            }
            let end = rest
                .find(|c: char| !c.is_ascii_alphabetic())
                .unwrap_or(rest.len());
            let (name, after) = rest.split_at(end);
            rest = after;
            return Some(name);
        }
    })
}

impl fmt::Display for LogFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn check_flags(flags: &str) -> Result<(), String> {
    for flag in flags.split(',') {
        let name = flag
            .strip_prefix('+')
            .or_else(|| flag.strip_prefix('-'))
            .unwrap_or(flag);
        if !matches!(name, "Q" | "X" | "E") {
            return Err(format!(
                "'{}' is not a log-format flag (+Q, -Q, +X, -X, +E or -E)",
                flag.escape_debug()
            ));
        }
    }
    Ok(())
}

fn check_sample(expression: &str) -> Result<(), String> {
    let mut parts = expression.split(',');
    let fetch = parts.next().unwrap_or_default();
    let variable = fetch
        .strip_prefix("var(")
        .and_then(|rest| rest.strip_suffix(')'))
        .and_then(|name| {
            name.strip_prefix("txn.")
                .or_else(|| name.strip_prefix("sess."))
        });
    let known_fetch = FETCHES.contains(&fetch)
        || variable.is_some_and(|name| {
            !name.is_empty()
                && name.len() <= 64
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
        });
    if !known_fetch {
        return Err(format!(
            "'%[{}]' is not one of the samples accepted: {}, var(txn.<name>) or var(sess.<name>)",
            expression.escape_debug(),
            FETCHES.join(", "),
        ));
    }
    for converter in parts {
        if !CONVERTERS.contains(&converter) {
            return Err(format!(
                "'{}' is not one of the converters accepted: {}",
                converter.escape_debug(),
                CONVERTERS.join(", ")
            ));
        }
    }
    Ok(())
}

/// Where and how HAProxy writes access logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logging {
    /// Where.
    pub target: LogTarget,
    /// Syslog framing (a syslog target only; standard output gets bare lines).
    pub syslog_format: SyslogFormat,
    /// Longest line, longer ones are cut (HAProxy's `len`, 80 to 65535).
    pub max_length: u32,
    /// The syslog tag.
    pub tag: LogTag,
    /// The HTTP frontends' line format.
    pub http_format: HttpLogFormat,
    /// The TLS-passthrough frontend's (which reads the SNI in TCP mode) line format.
    pub sni_format: TcpLogFormat,
    /// The TCP services' frontends' line format (`tcp-log-format`), where a service sets
    /// none of its own.
    pub tcp_format: TcpLogFormat,
    /// Connections that sent nothing are not logged (`option dontlognull`).
    pub dont_log_null: bool,
}

impl Default for Logging {
    fn default() -> Self {
        Self {
            target: LogTarget::Stdout,
            syslog_format: SyslogFormat::Rfc5424,
            max_length: 1024,
            tag: LogTag("ingress".to_owned()),
            http_format: HttpLogFormat::Default,
            sni_format: TcpLogFormat::Off,
            tcp_format: TcpLogFormat::Default,
            dont_log_null: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_formats_hold_only_variables_and_fetches_haproxy_knows() {
        for good in [
            "%ci:%cp [%tr] %ft %b/%s %ST %B %{+Q}r",
            "{\"status\":%ST,\"host\":\"%{+E}[var(txn.host),lower]\"}",
            "100%% %[src] %[capture.req.uri,json]",
            "%{+Q,-X}o %HM",
        ] {
            assert_eq!(
                LogFormat::parse(good).map(|f| f.to_string()),
                Ok(good.into())
            );
        }
        for (bad, why) in [
            ("", "empty"),
            ("%ci'x", "without quotes"),
            ("%ci\n%cp", "printable ASCII"),
            ("a\\b", "backslashes"),
            ("%zz", "'%zz'"),
            ("50%", "'%'"),
            ("%[src", "without its ']'"),
            ("%[lua.evil]", "not one of the samples"),
            ("%[req.hdr(host)]", "not one of the samples"),
            ("%[var(txn.a b)]", "not one of the samples"),
            ("%[var(bad)]", "not one of the samples"),
            ("%[src,field(1)]", "not one of the converters"),
            ("%{+Z}ci", "not a log-format flag"),
            ("%{+Q", "without its '}'"),
            ("\u{e9}", "printable ASCII"),
        ] {
            let error = LogFormat::parse(bad).unwrap_err();
            assert!(error.contains(why), "{bad:?}: {error}");
        }
        assert!(LogFormat::parse(&"%ci".repeat(600)).is_err());
    }

    #[test]
    fn tags_are_one_plain_word() {
        assert!(LogTag::parse("ingress-1.a_b").is_ok());
        for bad in ["", "a b", "a\nb", "x'y", &"a".repeat(33)] {
            assert!(LogTag::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_tcp_format_has_no_http_variable() {
        assert!(
            LogFormat::parse_tcp("%ci:%cp [%t] %ft %b/%s %Tw/%Tc/%Tt %B %ts %[var(txn.sni)]")
                .is_ok()
        );
        assert_eq!(
            LogFormat::parse_tcp("%ci %{+Q}r"),
            Err(
                "'%ci %{+Q}r' uses '%r', which needs HTTP: this format is a TCP proxy's".to_owned()
            )
        );
        assert!(
            LogFormat::parse_tcp("%%HM %[src] %ST").is_ok(),
            "%% is a percent sign"
        );
        assert!(LogFormat::parse_tcp("%HM").is_err());
        assert!(
            LogFormat::parse("%HM").is_ok(),
            "an HTTP format may have it"
        );
    }
}
