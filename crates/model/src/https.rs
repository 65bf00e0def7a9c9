//! HTTPS policy: the paths the plain-HTTP redirect spares, HSTS, and the TLS handshake's
//! options (proxy-wide and per host, as the certificate list carries them).

use std::fmt;

/// The `Strict-Transport-Security` header's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Hsts {
    /// `max-age`, in seconds.
    pub max_age: u32,
    /// `includeSubDomains`.
    pub include_subdomains: bool,
    /// `preload`.
    pub preload: bool,
}

impl Hsts {
    /// The header value: digits and fixed words only, so it needs no quoting.
    pub fn header_value(&self) -> String {
        let mut value = format!("max-age={}", self.max_age);
        if self.include_subdomains {
            value.push_str("; includeSubDomains");
        }
        if self.preload {
            value.push_str("; preload");
        }
        value
    }
}

/// What a path does about HSTS, when it differs from the HTTPS frontends' default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum HstsRule {
    /// The frontends' default ([`HttpsPolicy::hsts`]).
    #[default]
    Inherit,
    /// No header on this path's HTTPS responses.
    Off,
    /// This header on this path's HTTPS responses.
    On(Hsts),
}

/// Proxy-wide HTTPS settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpsPolicy {
    /// Plain-HTTP requests whose path begins with one of these are never redirected to
    /// HTTPS (ACME HTTP-01 challenges). Each one starts with `/` and holds only URL path
    /// characters, validated on the way in.
    pub redirect_exceptions: Vec<String>,
    /// Added to HTTPS responses, unless a path says otherwise.
    pub hsts: Option<Hsts>,
    /// The TLS handshake's options for every host without its own.
    pub tls: TlsOptions,
    /// Diffie-Hellman parameters for the DHE key exchanges (`ssl-dh-param`); `None`
    /// leaves HAProxy's own.
    pub dh_params: Option<DhParams>,
}

/// Diffie-Hellman parameters: one PEM `DH PARAMETERS` block, checked on the way in to
/// be a DER sequence of integers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DhParams {
    /// The PEM text, as HAProxy loads it.
    pub pem: String,
}

impl Default for HttpsPolicy {
    /// haproxy-ingress's defaults, as the configuration keys state them.
    fn default() -> Self {
        // Constants, parsed by every test that builds a default model.
        #[allow(clippy::expect_used)]
        let word = |text: &str| TlsWord::parse(text).expect("default TLS words are valid");
        Self {
            redirect_exceptions: vec!["/.well-known/acme-challenge".to_owned()],
            hsts: Some(Hsts {
                max_age: 15_768_000,
                include_subdomains: false,
                preload: false,
            }),
            tls: TlsOptions {
                alpn: Some(word("h2,http/1.1")),
                options: ["no-sslv3", "no-tlsv10", "no-tlsv11", "no-tls-tickets"]
                    .map(word)
                    .to_vec(),
                ..TlsOptions::default()
            },
            dh_params: None,
        }
    }
}

/// One word of HAProxy's TLS settings (a cipher list, an ALPN protocol list, a bind
/// option or its argument), validated on creation: printable ASCII without spaces or
/// quotes, not starting with `-`, so it stays one word wherever it is printed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TlsWord(String);

impl TlsWord {
    /// The longest word accepted (a long cipher list is about 700 bytes).
    pub const MAX_BYTES: usize = 2048;

    /// Checks a word.
    pub fn parse(text: &str) -> Result<Self, String> {
        let ok = !text.is_empty()
            && text.len() <= Self::MAX_BYTES
            && !text.starts_with('-')
            && text.bytes().all(crate::plain_word_byte);
        if ok {
            Ok(Self(text.to_owned()))
        } else {
            Err(format!(
                "'{}' is not one word of printable characters without quotes, '\\' or '#', not starting with '-'",
                text.escape_debug()
            ))
        }
    }

    /// The word.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TlsWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The TLS handshake's options: proxy-wide, or one host's (where unset, the proxy-wide
/// value applies).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TlsOptions {
    /// TLS up to 1.2 (`ciphers`).
    pub ciphers: Option<TlsWord>,
    /// TLS 1.3 (`ciphersuites`).
    pub cipher_suites: Option<TlsWord>,
    /// Protocols offered by ALPN, comma-separated (`alpn`).
    pub alpn: Option<TlsWord>,
    /// Bind options (`ssl-min-ver TLSv1.2`, `no-tls-tickets`...), each word validated
    /// against the options HAProxy knows.
    pub options: Vec<TlsWord>,
    /// Client certificates the host asks for (a host's options only).
    pub client_auth: Option<ClientAuth>,
}

/// How a host checks client certificates (`auth-tls-verify-client`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ClientVerify {
    /// A valid certificate is required: none is answered 496, an invalid one 495.
    On,
    /// A certificate is asked for, not required; one that is sent must be valid (495).
    Optional,
    /// A certificate is asked for and passed on unverified.
    OptionalNoCa,
}

/// The kind of object a CA bundle comes from: a Secret and a ConfigMap of one name are
/// two bundles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum CaSource {
    /// A Secret's `ca.crt` (and `ca.crl`).
    #[default]
    Secret,
    /// A ConfigMap's `ca.crt` (a Gateway's `frontendValidation`).
    ConfigMap,
}

/// The CA bundle (and revocation list) client certificates are checked against, from a
/// Secret or a ConfigMap, checked PEM.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClientCa {
    /// The object's namespace and name.
    pub secret: crate::CertId,
    /// Which kind of object `secret` names.
    pub source: CaSource,
    /// `ca.crt`: CERTIFICATE blocks.
    pub ca: String,
    /// `ca.crl`: X509 CRL blocks, if any.
    pub crl: Option<String>,
}

/// A host's client-certificate authentication.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClientAuth {
    /// The CA; `None` when the Secret could not be used: every request to the host is
    /// then refused (496), never served unauthenticated.
    pub ca: Option<ClientCa>,
    /// What the host requires.
    pub verify: ClientVerify,
    /// The TLS handshake itself requires a certificate (`verify required`), so a client
    /// without one gets no HTTP answer at all.
    pub strict: bool,
    /// Where a refused client is redirected instead of the 495/496 answer: an absolute
    /// URL of URL-safe characters, validated on the way in.
    pub error_page: Option<String>,
}

impl TlsOptions {
    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}
