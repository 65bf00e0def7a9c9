//! Keys of the frontends' TLS handshake: ciphers, protocol versions, ALPN.

use model::{TlsOptions, TlsWord};

use super::backend_tls::{SecretName, parse_secret_name};
use super::parse::{
    parse_alpn, parse_cipher_suites, parse_ciphers, parse_host_tls_options, parse_tls_options,
};
use super::{Applied, Key, Scope};

/// `ssl-dh-param`.
pub static SSL_DH_PARAM: Key<Option<SecretName>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "ssl-dh-param",
    scope: Scope::Global,
    default: "",
    accepted_values: "a Secret name such as `dhparam`, or `namespace/name`; a bare name is in the global ConfigMap's namespace; empty for HAProxy's own parameters",
    parse: parse_secret_name,
    doc: "A Secret whose `dhparam.pem` holds the Diffie-Hellman parameters (one PEM `DH PARAMETERS` block, as `openssl dhparam 2048` writes) of the DHE key exchanges of TLS 1.2, on every HTTPS frontend. A Secret that is missing or holds no such block is reported and HAProxy's own parameters are kept.",
    applied: Applied::Reload,
    differs: "haproxy-ingress also accepts a `file://` path; portcullis reads only Secrets, so that the ConfigMap cannot make HAProxy read any file of the controller's host.",
};

/// `ssl-ciphers`.
pub static SSL_CIPHERS: Key<Option<TlsWord>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "ssl-ciphers",
    scope: Scope::Host,
    default: "",
    accepted_values: "OpenSSL cipher names and keywords (HIGH, ECDHE, aNULL...) separated by ':', each optionally after '!', '-' or '+', at least one not excluded, such as `ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256` or `HIGH:!aNULL`; or empty for HAProxy's default",
    parse: parse_ciphers,
    doc: "The ciphers offered up to TLS 1.2. Set in the global ConfigMap, for every host; as an Ingress annotation, for its hosts.",
    applied: Applied::Reload,
    differs: "Without a value, HAProxy's (OpenSSL's) default list is used, where haproxy-ingress sets Mozilla's intermediate list.",
};
/// `ssl-cipher-suites`.
pub static SSL_CIPHER_SUITES: Key<Option<TlsWord>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "ssl-cipher-suites",
    scope: Scope::Host,
    default: "",
    accepted_values: "TLS 1.3 suites separated by ':', of `TLS_AES_128_GCM_SHA256`, `TLS_AES_256_GCM_SHA384`, `TLS_CHACHA20_POLY1305_SHA256`, `TLS_AES_128_CCM_SHA256`, `TLS_AES_128_CCM_8_SHA256`; or empty for HAProxy's default",
    parse: parse_cipher_suites,
    doc: "The cipher suites offered with TLS 1.3. Set in the global ConfigMap, for every host; as an Ingress annotation, for its hosts.",
    applied: Applied::Reload,
    differs: "",
};
/// `tls-alpn`.
pub static TLS_ALPN: Key<TlsWord> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "tls-alpn",
    scope: Scope::Host,
    default: "h2,http/1.1",
    accepted_values: "up to 8 protocol names of letters, digits and './-', separated by commas, such as `h2,http/1.1` or `http/1.1`",
    parse: parse_alpn,
    doc: "The protocols offered by ALPN, in order of preference: `http/1.1` alone turns HTTP/2 off.",
    applied: Applied::Reload,
    differs: "",
};
/// `ssl-options`.
pub static SSL_OPTIONS: Key<TlsOptions> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "ssl-options",
    scope: Scope::Global,
    default: "no-sslv3 no-tlsv10 no-tlsv11 no-tls-tickets",
    accepted_values: "options separated by spaces, of `no-sslv3`, `no-tlsv10`, `no-tlsv11`, `no-tlsv12`, `no-tlsv13`, `no-tls-tickets`, `force-tlsv12`, `force-tlsv13`, ssl-min-ver and ssl-max-ver followed by a version (TLSv1.0, TLSv1.1, TLSv1.2 or TLSv1.3, as in `ssl-min-ver TLSv1.2`), leaving some TLS version enabled",
    parse: parse_tls_options,
    doc: "The TLS options of every HTTPS frontend.",
    applied: Applied::Reload,
    differs: "",
};
/// `ssl-options-host`.
pub static SSL_OPTIONS_HOST: Key<TlsOptions> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "ssl-options-host",
    scope: Scope::Host,
    default: "",
    accepted_values: "options separated by spaces, of ssl-min-ver and ssl-max-ver followed by a version (TLSv1.0, TLSv1.1, TLSv1.2 or TLSv1.3, as in `ssl-max-ver TLSv1.2`), `no-ca-names` and `allow-0rtt`; or empty",
    parse: parse_host_tls_options,
    doc: "TLS options of the Ingress's hosts, over `ssl-options`.",
    applied: Applied::Reload,
    differs: "Only the options HAProxy 2.6 takes per host (in a certificate list) are accepted; `no-tlsv11` and the like are written `ssl-min-ver` here.",
};

#[cfg(test)]
mod tests {
    use super::*;

    fn words(options: &TlsOptions) -> Vec<&str> {
        options.options.iter().map(TlsWord::as_str).collect()
    }

    #[test]
    fn ciphers_are_checked_against_openssl_names() {
        assert_eq!(SSL_CIPHERS.default_value(), None);
        assert_eq!(
            (SSL_CIPHERS.parse)("HIGH:!aNULL").map(|w| w.map(|w| w.to_string())),
            Ok(Some("HIGH:!aNULL".to_owned()))
        );
        assert_eq!(
            (SSL_CIPHERS.parse)("!ALL"),
            Err("'!ALL' excludes every cipher".into())
        );
        assert_eq!(SSL_CIPHER_SUITES.default_value(), None);
        assert_eq!(
            (SSL_CIPHER_SUITES.parse)("TLS_FOO"),
            Err("'TLS_FOO' is not a TLS 1.3 cipher suite".into())
        );
    }

    #[test]
    fn alpn_is_a_short_list_of_protocol_names() {
        assert_eq!(TLS_ALPN.default_value().as_str(), "h2,http/1.1");
        for bad in ["h2 http/1.1", "", "h2,", "a,b,c,d,e,f,g,h,i"] {
            assert_eq!(
                (TLS_ALPN.parse)(bad),
                Err(format!(
                    "'{bad}' is not a list of up to 8 protocol names separated by commas"
                ))
            );
        }
    }

    #[test]
    fn options_leave_a_tls_version_and_host_options_are_those_a_crt_list_takes() {
        assert_eq!(
            words(&SSL_OPTIONS.default_value()),
            ["no-sslv3", "no-tlsv10", "no-tlsv11", "no-tls-tickets"]
        );
        assert_eq!(
            (SSL_OPTIONS.parse)("no-tlsv12 no-tlsv13 no-tlsv11 no-tlsv10 no-sslv3"),
            Err(
                "'no-tlsv12 no-tlsv13 no-tlsv11 no-tlsv10 no-sslv3' leaves no TLS version enabled"
                    .into()
            )
        );
        assert_eq!(
            (SSL_OPTIONS.parse)("ssl-min-ver"),
            Err("'ssl-min-ver' needs one of TLSv1.0, TLSv1.1, TLSv1.2, TLSv1.3".into())
        );
        assert!(SSL_OPTIONS_HOST.default_value().is_empty());
        assert_eq!(
            (SSL_OPTIONS_HOST.parse)("ssl-max-ver TLSv1.2 no-ca-names")
                .map(|o| words(&o).join(" ")),
            Ok("ssl-max-ver TLSv1.2 no-ca-names".to_owned())
        );
        assert_eq!(
            (SSL_OPTIONS_HOST.parse)("no-tlsv11"),
            Err(
                "'no-tlsv11' is not one of no-ca-names, allow-0rtt, ssl-min-ver, ssl-max-ver"
                    .into()
            )
        );
    }

    #[test]
    fn a_host_s_version_bounds_leave_a_version_as_haproxy_measured() {
        let default = SSL_OPTIONS.default_value();
        let no_13 = (SSL_OPTIONS.parse)("no-sslv3 no-tlsv10 no-tlsv11 no-tlsv13").unwrap();
        let force_12 = (SSL_OPTIONS.parse)("force-tlsv12 no-tls-tickets").unwrap();
        let host = |text: &str| (SSL_OPTIONS_HOST.parse)(text).unwrap();
        // (frontend, host options, whether `haproxy -c` accepted them: HAProxy 2.6.12).
        let measured = [
            (&default, "ssl-max-ver TLSv1.0", false),
            (&default, "ssl-max-ver TLSv1.1", false),
            (&default, "ssl-max-ver TLSv1.2", true),
            (&default, "ssl-max-ver TLSv1.3", true),
            (&default, "ssl-min-ver TLSv1.0", true),
            (&default, "ssl-min-ver TLSv1.3", true),
            (&default, "ssl-min-ver TLSv1.0 ssl-max-ver TLSv1.1", true),
            (&default, "ssl-min-ver TLSv1.1 ssl-max-ver TLSv1.1", true),
            (&no_13, "ssl-min-ver TLSv1.3", false),
            (&no_13, "ssl-max-ver TLSv1.2", true),
            (&no_13, "ssl-min-ver TLSv1.3 ssl-max-ver TLSv1.3", true),
            (&force_12, "ssl-min-ver TLSv1.3", false),
            (&force_12, "ssl-max-ver TLSv1.1", false),
            (&force_12, "ssl-min-ver TLSv1.2", true),
            (&force_12, "ssl-min-ver TLSv1.3 ssl-max-ver TLSv1.3", true),
        ];
        for (frontend, options, accepted) in measured {
            assert_eq!(
                crate::keys::tls_versions_left(frontend, Some(&host(options))),
                accepted,
                "{options} under {:?}",
                words(frontend)
            );
        }
    }

    #[test]
    fn dh_parameters_and_the_stats_certificate_name_secrets() {
        for key in [&SSL_DH_PARAM, &super::super::STATS_SSL_CERT] {
            assert_eq!(key.default_value(), None);
            assert_eq!(
                (key.parse)("ops/dh"),
                Ok(Some(SecretName {
                    namespace: Some("ops".into()),
                    name: "dh".into()
                }))
            );
            assert_eq!(
                (key.parse)("dh"),
                Ok(Some(SecretName {
                    namespace: None,
                    name: "dh".into()
                }))
            );
            assert_eq!(
                (key.parse)("file:///etc/dh.pem"),
                Err("'file:///etc/dh.pem' is not a Secret name, or namespace/name".into())
            );
        }
    }
}
