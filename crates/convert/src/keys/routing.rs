//! Keys of a host's or a path's routing: the HTTPS redirect, host aliases.

use model::HostKey;

use super::parse::parse_bool;
use super::{Applied, Key, Scope};

/// `ssl-redirect`.
pub const SSL_REDIRECT: Key<bool> = Key {
    name: "ssl-redirect",
    scope: Scope::Path,
    default: "true",
    accepted_values: "`true` or `false`",
    parse: parse_bool,
    doc: "Redirect plain-HTTP requests to HTTPS when the host has TLS.",
    applied: Applied::Live,
    differs: "",
};

/// `server-alias`.
pub const SERVER_ALIAS: Key<Option<HostKey>> = Key {
    name: "server-alias",
    scope: Scope::Host,
    default: "",
    accepted_values: "a host name, or a wildcard of one label in front of a host name, such as `www.example.com` or `*.example.com`; or empty",
    parse: super::redirect::parse_optional_host,
    doc: "Another name of the Ingress's host: requests for it (Host header, and SNI when the host has TLS) are routed as the host's, with its paths, certificate, TLS options and HTTPS redirect. A wildcard covers one label. Only an Ingress with one host may have an alias, set as an Ingress annotation; a ConfigMap value would name one alias for every host, and is not used.",
    applied: Applied::Live,
    differs: "The alias is a host of its own made of the Ingress's paths, so an older Ingress that routes the same name and path keeps it (and the conflict is reported), where haproxy-ingress puts the alias in the host's ACL.",
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_alias_is_one_host_name_or_wildcard() {
        assert_eq!(SERVER_ALIAS.default_value(), None);
        assert_eq!(
            (SERVER_ALIAS.parse)("WWW.Example.com"),
            Ok(Some(HostKey::Exact("www.example.com".into())))
        );
        assert_eq!(
            (SERVER_ALIAS.parse)("*.example.com"),
            Ok(Some(HostKey::Wildcard("example.com".into())))
        );
        assert_eq!((SERVER_ALIAS.parse)(" "), Ok(None));
        for bad in [
            "a.test b.test",
            "a.test,b.test",
            "^a\\.test$",
            "a..test",
            "*",
        ] {
            assert_eq!(
                (SERVER_ALIAS.parse)(bad),
                Err(format!("'{}' is not a valid host name", bad.escape_debug())),
                "{bad}"
            );
        }
    }

    #[test]
    fn ssl_redirect_defaults_to_true() {
        assert!(SSL_REDIRECT.default_value());
        assert_eq!((SSL_REDIRECT.parse)("false"), Ok(false));
        assert!((SSL_REDIRECT.parse)("no").is_err());
    }
}
