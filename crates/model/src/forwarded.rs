//! What the frontends tell backends about the client: `X-Forwarded-*`, `X-Real-IP`.

use std::fmt;
use std::net::IpAddr;

/// How a client's `X-Forwarded-For` is treated (haproxy-ingress's `forwardfor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ForwardFor {
    /// Replace it with the client address (the original kept aside): for untrusted
    /// clients.
    #[default]
    Add,
    /// Keep it and append the client address: behind a trusted proxy.
    Update,
    /// Add the client address only when the request has none.
    IfMissing,
    /// Pass whatever the client sent.
    Ignore,
}

/// An HTTP header name of letters, digits and `-`, validated on creation.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HeaderName(String);

impl HeaderName {
    /// Parses a header name.
    pub fn parse(text: &str) -> Result<Self, String> {
        let ok = !text.is_empty()
            && text.len() <= 128
            && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if ok {
            Ok(Self(text.to_owned()))
        } else {
            Err(format!(
                "'{}' is not a header name of letters, digits and '-'",
                text.escape_debug()
            ))
        }
    }
}

impl fmt::Display for HeaderName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An address block (`10.0.0.0/8`, `2001:db8::/32`), validated on creation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cidr {
    address: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Parses `address[/prefix]`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let address: IpAddr = address
            .parse()
            .map_err(|_| format!("'{}' is not an IP address", text.escape_debug()))?;
        let longest = if address.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => longest,
            Some(prefix) => prefix
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= longest)
                .ok_or_else(|| format!("'{}' has no valid prefix length", text.escape_debug()))?,
        };
        Ok(Self { address, prefix })
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.address, self.prefix)
    }
}

/// The forwarded headers every frontend sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardedHeaders {
    /// `X-Forwarded-For` handling.
    pub forward_for: ForwardFor,
    /// Where a replaced `X-Forwarded-For` is kept; `None` drops it.
    pub original_header: Option<HeaderName>,
    /// Set to the client address; `None` sets none.
    pub real_ip_header: Option<HeaderName>,
    /// Clients whose forwarded headers are kept (a trusted proxy in front).
    pub trusted: Vec<Cidr>,
    /// A proxy in front that terminates TLS itself, and where it sends its requests.
    pub fronting_proxy: Option<FrontingProxy>,
}

/// A proxy in front of HAProxy that terminates TLS itself: the requests it says came
/// over HTTPS are served as the HTTPS port serves them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrontingProxy {
    /// Where it sends its requests: the HTTP port itself, or a port of its own.
    pub port: FrontingPort,
    /// Whether its X-Forwarded-Proto tells HTTPS requests apart; `false` takes every
    /// request on its port for one.
    pub use_forwarded_proto: bool,
}

impl FrontingProxy {
    /// Its port, when it has one of its own (not the HTTP port it shares).
    pub fn own_port(&self) -> Option<u16> {
        match self.port {
            FrontingPort::Own(port) => Some(port),
            FrontingPort::Shared => None,
        }
    }
}

/// Where a fronting proxy sends its requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrontingPort {
    /// The HTTP port, shared with every other client: only a trusted proxy (or any
    /// client, when none is named) is believed.
    Shared,
    /// A port of its own, where every client is the proxy.
    Own(u16),
}

impl Default for ForwardedHeaders {
    fn default() -> Self {
        Self {
            forward_for: ForwardFor::Add,
            original_header: Some(HeaderName("X-Original-Forwarded-For".to_owned())),
            real_ip_header: Some(HeaderName("X-Real-IP".to_owned())),
            trusted: Vec::new(),
            fronting_proxy: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names_and_address_blocks_are_validated() {
        assert!(HeaderName::parse("X-Real-IP").is_ok());
        for bad in ["", "X Real", "X-Real\nIP", "a:b", "x'"] {
            assert!(HeaderName::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            Cidr::parse("10.0.0.0/8").map(|c| c.to_string()),
            Ok("10.0.0.0/8".into())
        );
        assert_eq!(
            Cidr::parse("::1").map(|c| c.to_string()),
            Ok("::1/128".into())
        );
        for bad in [
            "10.0.0.0/33",
            "garbage",
            "10.0.0.0/",
            "1.2.3.4/8 x",
            "::/129",
        ] {
            assert!(Cidr::parse(bad).is_err(), "{bad:?}");
        }
    }
}
