//! Keys haproxy-ingress or ingress-nginx users set that portcullis does not implement:
//! named and explained when set, rather than reported as unknown or silently ignored.

/// A key, or a family of keys by prefix, and why it is not supported.
#[derive(Debug, Clone, Copy)]
pub struct Unsupported {
    /// The key's name, or the family's prefix (ending in `-`).
    pub name: &'static str,
    /// Whether `name` is a prefix.
    pub prefix: bool,
    /// Why, and what happens instead.
    pub why: &'static str,
}

const NO_WAF: &str = "portcullis has no web application firewall (no ModSecurity or Coraza agent over SPOE): requests are not inspected, and the key is ignored";

/// Every unsupported key or family.
pub static UNSUPPORTED_KEYS: &[Unsupported] = &[
    Unsupported {
        name: "waf",
        prefix: false,
        why: NO_WAF,
    },
    Unsupported {
        name: "waf-mode",
        prefix: false,
        why: NO_WAF,
    },
    Unsupported {
        name: "modsecurity-",
        prefix: true,
        why: NO_WAF,
    },
    Unsupported {
        name: "enable-modsecurity",
        prefix: false,
        why: NO_WAF,
    },
    Unsupported {
        name: "enable-owasp-core-rules",
        prefix: false,
        why: NO_WAF,
    },
    Unsupported {
        name: "config-",
        prefix: true,
        why: "raw HAProxy configuration snippets (config-backend, config-frontend, config-defaults, config-global, ...) are not taken: a snippet could reach every tenant's traffic and files, and no rendered file could be checked for it; ask for the setting as a key of its own",
    },
    Unsupported {
        name: "session-cookie-shared",
        prefix: false,
        why: "one cookie naming every domain of a backend is refused by today's browsers (haproxy-ingress deprecates it); use session-cookie-domain",
    },
];

/// Why a key is not supported, when it is one of those.
pub(crate) fn why(name: &str) -> Option<&'static str> {
    UNSUPPORTED_KEYS
        .iter()
        .find(|key| {
            if key.prefix {
                name.starts_with(key.name)
            } else {
                name == key.name
            }
        })
        .map(|key| key.why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waf_and_modsecurity_keys_are_known_as_unsupported() {
        for name in [
            "waf",
            "waf-mode",
            "modsecurity-endpoints",
            "modsecurity-use-coraza",
            "enable-modsecurity",
            "enable-owasp-core-rules",
        ] {
            assert_eq!(why(name), Some(NO_WAF), "{name}");
        }
        assert_eq!(why("wafer"), None);
        assert_eq!(why("timeout-server"), None);
    }

    #[test]
    fn configuration_snippets_are_known_as_unsupported() {
        for name in [
            "config-backend",
            "config-frontend",
            "config-defaults",
            "config-global",
        ] {
            assert!(
                why(name).is_some_and(|why| why.contains("snippets")),
                "{name}"
            );
        }
        assert_eq!(why("configuration"), None);
    }
}
