//! Keys of a backend: balancing and server-side timeouts.

use model::{Balance, HaproxyDuration};

use model::{HeaderName, Word};

use super::parse::parse_duration;
use super::{Applied, DURATION_VALUES, Key, Scope};

/// `balance-algorithm`.
pub static BALANCE_ALGORITHM: Key<Balance> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "balance-algorithm",
    scope: Scope::Backend,
    default: "random(2)",
    accepted_values: "`roundrobin`, `static-rr`, `leastconn`, `first`, `source`, `random`, `random(2)`, `uri`, `uri len 10 depth 2 whole path-only`, `url_param userid`, `url_param userid check_post`, `hdr(X-User)`, `hdr(Host) use_domain_only`, `rdp-cookie` or `rdp-cookie(mstshash)`: HAProxy's algorithms with their options",
    parse: parse_balance,
    doc: "How HAProxy spreads the backend's requests over its servers (HAProxy's `balance`). The default, `random(2)`, picks the less loaded of two random servers. Hashing algorithms (`source`, `uri`, `url_param`, `hdr`, `rdp-cookie`) use consistent hashing (`hash-type consistent`), so a server that comes or goes moves few clients and servers can be added live; each server keeps the place on the ring its name gives it (its `id`), whether it was added live or loaded by a reload, so a reload moves no client. A `static-rr` backend takes no servers at runtime: its endpoint changes reload HAProxy.",
    applied: Applied::Reload,
    differs: "haproxy-ingress passes the value to HAProxy unchecked (so `hash <expression>` works there) and keeps HAProxy's map-based hashing; portcullis checks the algorithms listed and hashes consistently, because HAProxy adds servers at runtime only to consistent-hashing backends.",
};
/// `timeout-connect`.
pub static TIMEOUT_CONNECT: Key<HaproxyDuration> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "timeout-connect",
    scope: Scope::Backend,
    default: "5s",
    accepted_values: DURATION_VALUES,
    parse: parse_duration,
    doc: "Maximum time to connect to a server.",
    applied: Applied::Reload,
    differs: "",
};
/// `timeout-server`.
pub static TIMEOUT_SERVER: Key<HaproxyDuration> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "timeout-server",
    scope: Scope::Backend,
    default: "50s",
    accepted_values: DURATION_VALUES,
    parse: parse_duration,
    doc: "Maximum inactivity time on the server side.",
    applied: Applied::Reload,
    differs: "",
};

fn parse_balance(text: &str) -> Result<Balance, String> {
    let text = text.trim();
    let invalid = |why: &str| {
        format!(
            "'{}' is not a balance algorithm: {why}",
            text.escape_debug()
        )
    };
    let mut words = text.split_whitespace();
    let algorithm = words.next().unwrap_or_default();
    let options: Vec<&str> = words.collect();
    let no_options = |balance: Balance| {
        if options.is_empty() {
            Ok(balance)
        } else {
            Err(invalid(&format!("{algorithm} takes no options")))
        }
    };
    let count = |word: Option<&&str>, what: &str| {
        word.and_then(|w| w.parse::<u32>().ok())
            .filter(|n| (1..=1_000_000).contains(n))
            .ok_or_else(|| invalid(&format!("{what} takes a whole number from 1 to 1000000")))
    };
    match algorithm {
        "roundrobin" => no_options(Balance::RoundRobin),
        "static-rr" => no_options(Balance::StaticRoundRobin),
        "leastconn" => no_options(Balance::LeastConn),
        "first" => no_options(Balance::First),
        "source" => no_options(Balance::Source),
        "random" => no_options(Balance::Random { draws: None }),
        "rdp-cookie" => no_options(Balance::RdpCookie { name: None }),
        "uri" => {
            let (mut len, mut depth, mut whole, mut path_only) = (None, None, false, false);
            let mut rest = options.iter();
            while let Some(option) = rest.next() {
                match *option {
                    "len" => len = Some(count(rest.next(), "len")?),
                    "depth" => depth = Some(count(rest.next(), "depth")?),
                    "whole" => whole = true,
                    "path-only" => path_only = true,
                    other => {
                        return Err(invalid(&format!(
                            "uri takes len, depth, whole and path-only, not '{}'",
                            other.escape_debug()
                        )));
                    }
                }
            }
            Ok(Balance::Uri {
                len,
                depth,
                whole,
                path_only,
            })
        }
        "url_param" => {
            let (name, check_post) = match options.as_slice() {
                [name] => (name, false),
                [name, "check_post"] => (name, true),
                _ => {
                    return Err(invalid(
                        "url_param takes a parameter name and optionally check_post",
                    ));
                }
            };
            let name = Word::parse(name).map_err(|why| invalid(&why))?;
            Ok(Balance::UrlParam { name, check_post })
        }
        call => {
            let (function, argument) = call
                .strip_suffix(')')
                .and_then(|c| c.split_once('('))
                .ok_or_else(|| {
                    invalid(&format!("one of {} is expected", Balance::NAMES.join(", ")))
                })?;
            match function {
                "random" => {
                    let draws = count(Some(&argument), "random()")?;
                    no_options(Balance::Random { draws: Some(draws) })
                }
                "rdp-cookie" => {
                    let name = Word::parse(argument).map_err(|why| invalid(&why))?;
                    no_options(Balance::RdpCookie { name: Some(name) })
                }
                "hdr" => {
                    let name = HeaderName::parse(argument).map_err(|why| invalid(&why))?;
                    let use_domain_only = match options.as_slice() {
                        [] => false,
                        ["use_domain_only"] => true,
                        _ => return Err(invalid("hdr() takes only use_domain_only")),
                    };
                    Ok(Balance::Header {
                        name,
                        use_domain_only,
                    })
                }
                _ => Err(invalid(&format!(
                    "one of {} is expected",
                    Balance::NAMES.join(", ")
                ))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balance_reads_haproxy_s_grammar_and_defaults_to_two_random_choices() {
        assert_eq!(
            BALANCE_ALGORITHM.default_value(),
            Balance::Random { draws: Some(2) }
        );
        for text in [
            "leastconn",
            "uri len 10 depth 2 whole path-only",
            "url_param userid check_post",
            "hdr(X-User) use_domain_only",
            "rdp-cookie(mstshash)",
            "random(3)",
        ] {
            let parsed = (BALANCE_ALGORITHM.parse)(text);
            assert_eq!(parsed.map(|b| b.to_string()), Ok(text.to_owned()));
        }
        let error = |text: &str| (BALANCE_ALGORITHM.parse)(text).err().unwrap_or_default();
        assert_eq!(
            error("leastconn now"),
            "'leastconn now' is not a balance algorithm: leastconn takes no options"
        );
        assert_eq!(
            error("random(0)"),
            "'random(0)' is not a balance algorithm: random() takes a whole number from 1 to 1000000"
        );
        assert_eq!(
            error("hdr(a b)"),
            "'hdr(a b)' is not a balance algorithm: one of roundrobin, static-rr, leastconn, first, source, uri, url_param, hdr, random, rdp-cookie is expected"
        );
        assert!(error("uri len").contains("len takes a whole number"));
        assert!(error("url_param a)b").contains("is not a name"));
        assert!(error("hash path").contains("is expected"));
        assert!(error("").contains("is expected"));
    }
}
