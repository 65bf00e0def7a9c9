//! Keys of client-certificate authentication (mTLS): the CA a host's clients must chain
//! to, how strictly, and what the backend learns of the certificate.

use super::backend_tls::{SecretName, parse_secret_name};
use super::parse::{parse_bool, parse_redirect_url};
use super::{Applied, Key, Scope};

/// `auth-tls-verify-client`'s values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerifyClient {
    /// No client certificate is asked for.
    Off,
    /// As [`model::ClientVerify`].
    Verify(model::ClientVerify),
}

/// Keys whose invalid value refuses the hosts' clients rather than falling back to a
/// wider layer's value, which would serve them without the certificate asked for.
pub(crate) const FAIL_CLOSED: [&str; 1] = ["auth-tls-secret"];

/// `auth-tls-secret`.
pub static AUTH_TLS_SECRET: Key<Option<SecretName>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "auth-tls-secret",
    scope: Scope::Host,
    default: "",
    accepted_values: "a Secret name such as `client-ca`, or `namespace/name` in the Ingress's own namespace; empty for none",
    parse: parse_secret_name,
    doc: "A Secret whose `ca.crt` holds the CA bundle client certificates must chain to, and whose optional `ca.crl` holds revocation lists; the Ingress's TLS hosts then ask clients for a certificate during the TLS handshake (on the shared HTTPS frontend, per SNI name). A request whose Host is such a host but whose SNI names another host is answered 421. A Secret that cannot be used, or a value that is not a Secret name, is reported, and every request to the host is answered 496 until it is fixed: a host is never served without the authentication asked for. New content of the Secret (a rotated CA, a new CRL) goes live over the runtime API; setting or removing the key reloads.",
    applied: Applied::Reload,
    differs: "haproxy-ingress also accepts `file://` paths and Secrets of other namespaces, and serves the host without authentication when the Secret is unusable and `auth-tls-strict` is false; portcullis reads only Secrets of the Ingress's namespace and always refuses such a host's requests. It applies to the hosts of the Ingress's `spec.tls`.",
};
/// `auth-tls-verify-client`.
pub static AUTH_TLS_VERIFY_CLIENT: Key<Option<VerifyClient>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "auth-tls-verify-client",
    scope: Scope::Host,
    default: "",
    accepted_values: "`on`, `optional`, `optional_no_ca` or `off`; empty for `on` when a Secret is set",
    parse: parse_verify_client,
    doc: "`on`: a valid certificate is required; a request without one is answered 496, one with a certificate that fails verification (unknown CA, expired, revoked) 495. `optional`: a request without a certificate passes, one with an invalid certificate is answered 495. `optional_no_ca`: any certificate passes unverified, and is passed on. `off`: no certificate is asked for.",
    applied: Applied::Reload,
    differs: "",
};
/// `auth-tls-strict`.
pub static AUTH_TLS_STRICT: Key<bool> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "auth-tls-strict",
    scope: Scope::Host,
    default: "false",
    accepted_values: "`true` or `false` (also `True`, `TRUE`, `t`, `T`, `1` and `False`, `FALSE`, `f`, `F`, `0`, as haproxy-ingress reads them)",
    parse: parse_bool,
    doc: "With `auth-tls-verify-client: on`, the TLS handshake itself requires a certificate (`verify required`): a client without one gets no HTTP answer (neither 496 nor `auth-tls-error-page`). A certificate that fails verification is still answered 495.",
    applied: Applied::Reload,
    differs: "In haproxy-ingress, `true` refuses a host's requests while its Secret is unusable, which portcullis always does; here it moves the certificate requirement into the TLS handshake.",
};
/// `auth-tls-error-page`.
pub static AUTH_TLS_ERROR_PAGE: Key<Option<model::Redirect>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "auth-tls-error-page",
    scope: Scope::Host,
    default: "",
    accepted_values: "an http:// or https:// URL with a host name, an optional port and an optional path of letters, digits and '/-_.~', such as `https://login.example.com/certificate`; or empty",
    parse: parse_redirect_url,
    doc: "Where a client whose certificate is missing or invalid is redirected (302) instead of the 495/496 answer.",
    applied: Applied::Reload,
    differs: "",
};
/// `auth-tls-cert-header`.
pub static AUTH_TLS_CERT_HEADER: Key<bool> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "auth-tls-cert-header",
    scope: Scope::Backend,
    default: "false",
    accepted_values: "`true` or `false` (also `True`, `TRUE`, `t`, `T`, `1` and `False`, `FALSE`, `f`, `F`, `0`, as haproxy-ingress reads them)",
    parse: parse_bool,
    doc: "Pass the client certificate to the backend, base64-encoded DER, in `X-SSL-Client-Cert`. Whatever this key says, the backend of a request with a client certificate gets `X-SSL-Client-CN`, `X-SSL-Client-DN`, `X-SSL-Client-SHA1` (uppercase hex) and `X-SSL-Client-Verify` (0 when verified, else OpenSSL's error number); as soon as one host asks for client certificates, these headers are removed from every client's request on every frontend first, so they cannot be forged (`X-SSL-Client-Cert` is removed by the backend itself).",
    applied: Applied::Reload,
    differs: "",
};

fn parse_verify_client(text: &str) -> Result<Option<VerifyClient>, String> {
    use model::ClientVerify;
    match text.trim() {
        "" => Ok(None),
        "off" => Ok(Some(VerifyClient::Off)),
        "on" => Ok(Some(VerifyClient::Verify(ClientVerify::On))),
        "optional" => Ok(Some(VerifyClient::Verify(ClientVerify::Optional))),
        "optional_no_ca" => Ok(Some(VerifyClient::Verify(ClientVerify::OptionalNoCa))),
        other => Err(format!(
            "'{}' is not on, optional, optional_no_ca or off",
            other.escape_debug()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auth_tls_keys_parse_as_haproxy_ingress_s() {
        assert_eq!(AUTH_TLS_SECRET.default_value(), None);
        assert_eq!(AUTH_TLS_VERIFY_CLIENT.default_value(), None);
        assert!(!AUTH_TLS_STRICT.default_value());
        assert!(!AUTH_TLS_CERT_HEADER.default_value());
        assert_eq!(AUTH_TLS_ERROR_PAGE.default_value(), None);
        assert_eq!(
            (AUTH_TLS_SECRET.parse)("ca").map(|s| s.map(|s| s.name)),
            Ok(Some("ca".to_owned()))
        );
        assert_eq!(
            (AUTH_TLS_VERIFY_CLIENT.parse)("optional_no_ca"),
            Ok(Some(VerifyClient::Verify(
                model::ClientVerify::OptionalNoCa
            )))
        );
        assert_eq!(
            (AUTH_TLS_VERIFY_CLIENT.parse)("required"),
            Err("'required' is not on, optional, optional_no_ca or off".to_owned())
        );
        assert!((AUTH_TLS_ERROR_PAGE.parse)("javascript:x").is_err());
    }
}
