//! Keys of blue-green deployments: weights by pod label, and the header or cookie that
//! chooses a group of servers.

use model::Word;

use super::{Applied, Key, Scope};

/// One `label=value=weight` term of a blue-green balance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupWeight {
    /// Pod label name.
    pub label: String,
    /// Pod label value.
    pub value: String,
    /// Weight of the group, 0 to 256.
    pub weight: u16,
}

/// How a group's weight is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlueGreenMode {
    /// Each pod of a group gets the group's weight: a group with more replicas gets more.
    Pod,
    /// The group's weight is shared by its pods: the groups get their weights' share of
    /// the traffic whatever their replica counts.
    Deploy,
}

/// A `HeaderName:LabelName` or `CookieName:LabelName` pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectorPair {
    /// Header or cookie name.
    pub name: Word,
    /// Pod label whose value names each server's group.
    pub label: String,
}

const BALANCE_VALUES: &str = "comma-separated label=value=weight terms, such as `group=blue=1,group=green=4`; a weight is a whole number, below 0 counts as 0 and above 256 as 256";
const BALANCE_DOC: &str = "Splits the backend's traffic between groups of pods by their labels (HAProxy server weights): with `group=blue=1,group=green=4`, 20% of the requests go to the pods labelled `group=blue` and 80% to those labelled `group=green`. How the weight applies to each pod is `blue-green-mode`. An endpoint whose pod has none of the labels, or whose pod is unknown (no `targetRef` to a Pod of its namespace, or no such Pod), gets weight 0: it keeps its sticky sessions and selected requests but gets no balanced traffic, and an unknown pod is reported. Pods' labels are watched: a label or weight change that only changes weights goes live.";

/// `blue-green-balance`.
pub static BLUE_GREEN_BALANCE: Key<Option<Vec<GroupWeight>>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "blue-green-balance",
    scope: Scope::Backend,
    default: "",
    accepted_values: BALANCE_VALUES,
    parse: parse_balance,
    doc: BALANCE_DOC,
    applied: Applied::Live,
    differs: "",
};

/// `blue-green-deploy`, haproxy-ingress's deprecated name of `blue-green-balance`.
pub static BLUE_GREEN_DEPLOY: Key<Option<Vec<GroupWeight>>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "blue-green-deploy",
    scope: Scope::Backend,
    default: "",
    accepted_values: BALANCE_VALUES,
    parse: parse_balance,
    doc: "Deprecated name of `blue-green-balance`, read when `blue-green-balance` is not set.",
    applied: Applied::Live,
    differs: "",
};

/// `blue-green-mode`.
pub static BLUE_GREEN_MODE: Key<BlueGreenMode> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "blue-green-mode",
    scope: Scope::Backend,
    default: "deploy",
    accepted_values: "`pod` or `deploy`",
    parse: parse_mode,
    doc: "How `blue-green-balance` weights apply. `deploy`: a group's weight is divided among its pods, so each group gets its share of the traffic however many replicas it has (change the split by changing the weights). `pod`: every pod gets its group's weight, so a group with twice the replicas gets twice the traffic (change the split by scaling).",
    applied: Applied::Live,
    differs: "",
};

/// `blue-green-header`.
pub static BLUE_GREEN_HEADER: Key<Option<SelectorPair>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "blue-green-header",
    scope: Scope::Backend,
    default: "",
    accepted_values: "a `HeaderName:LabelName` pair such as `X-Server:group`: letters, digits, -, _ and ., starting and ending with a letter or digit",
    parse: parse_pair,
    doc: "A request whose header `HeaderName` names a group (the value of the pods' label `LabelName`, such as `X-Server: green`) goes to the first healthy server of that group (HAProxy's `use-server`), whatever the balance; otherwise it is balanced as usual. With `blue-green-cookie` too, the header is tried first, and both must name the same label. Servers of a backend with a selector are named in its section: a change of its grouped servers reloads HAProxy.",
    applied: Applied::Reload,
    differs: "",
};

/// `blue-green-cookie`.
pub static BLUE_GREEN_COOKIE: Key<Option<SelectorPair>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "blue-green-cookie",
    scope: Scope::Backend,
    default: "",
    accepted_values: "a `CookieName:LabelName` pair such as `SetServer:group`: letters, digits, -, _ and ., starting and ending with a letter or digit",
    parse: parse_pair,
    doc: "As `blue-green-header`, with the value of the request's cookie `CookieName`; tried after the header.",
    applied: Applied::Reload,
    differs: "",
};

fn parse_balance(text: &str) -> Result<Option<Vec<GroupWeight>>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    text.split(',')
        .map(|term| {
            let term = term.trim();
            let parts: Vec<&str> = term.split('=').collect();
            let [label, value, weight] = parts.as_slice() else {
                return Err(format!(
                    "'{}' is not a label=value=weight term",
                    term.escape_debug()
                ));
            };
            let weight: i64 = weight.parse().map_err(|_| {
                format!(
                    "the weight '{}' of '{}' is not a whole number",
                    weight.escape_debug(),
                    term.escape_debug()
                )
            })?;
            Ok(GroupWeight {
                label: (*label).to_owned(),
                value: (*value).to_owned(),
                weight: u16::try_from(weight.clamp(0, i64::from(model::ServerWeight::MAX)))
                    .unwrap_or(model::ServerWeight::MAX),
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

fn parse_mode(text: &str) -> Result<BlueGreenMode, String> {
    match text.trim() {
        "pod" => Ok(BlueGreenMode::Pod),
        "deploy" => Ok(BlueGreenMode::Deploy),
        other => Err(format!(
            "'{}' is not a blue-green mode (pod or deploy)",
            other.escape_debug()
        )),
    }
}

/// A Kubernetes label name without prefix, as haproxy-ingress accepts in a pair.
fn is_label_word(text: &str) -> bool {
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    edge(text.chars().next())
        && edge(text.chars().last())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

fn parse_pair(text: &str) -> Result<Option<SelectorPair>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    match text.split_once(':') {
        Some((name, label)) if is_label_word(name) && is_label_word(label) => {
            Ok(Some(SelectorPair {
                name: Word::parse(name)?,
                label: label.to_owned(),
            }))
        }
        _ => Err(format!(
            "'{}' is not a Name:LabelName pair of letters, digits, '-', '_' and '.'",
            text.escape_debug()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_off_and_deploy_mode() {
        assert_eq!(BLUE_GREEN_BALANCE.default_value(), None);
        assert_eq!(BLUE_GREEN_DEPLOY.default_value(), None);
        assert_eq!(BLUE_GREEN_MODE.default_value(), BlueGreenMode::Deploy);
        assert_eq!(BLUE_GREEN_HEADER.default_value(), None);
        assert_eq!(BLUE_GREEN_COOKIE.default_value(), None);
    }

    #[test]
    fn balances_parse_and_weights_are_clamped_as_haproxy_ingress_does() {
        let term = |label: &str, value: &str, weight| GroupWeight {
            label: label.into(),
            value: value.into(),
            weight,
        };
        assert_eq!(
            (BLUE_GREEN_BALANCE.parse)("group=blue=1, group=green=4"),
            Ok(Some(vec![
                term("group", "blue", 1),
                term("group", "green", 4)
            ]))
        );
        assert_eq!(
            (BLUE_GREEN_DEPLOY.parse)("v=1=-1,v=2=500"),
            Ok(Some(vec![term("v", "1", 0), term("v", "2", 256)]))
        );
        assert_eq!(
            (BLUE_GREEN_BALANCE.parse)("group=blue"),
            Err("'group=blue' is not a label=value=weight term".into())
        );
        assert_eq!(
            (BLUE_GREEN_BALANCE.parse)("v=1=1.5"),
            Err("the weight '1.5' of 'v=1=1.5' is not a whole number".into())
        );
    }

    #[test]
    fn modes_and_pairs_are_checked() {
        assert_eq!((BLUE_GREEN_MODE.parse)("pod"), Ok(BlueGreenMode::Pod));
        assert_eq!(
            (BLUE_GREEN_MODE.parse)("canary"),
            Err("'canary' is not a blue-green mode (pod or deploy)".into())
        );
        let pair = (BLUE_GREEN_HEADER.parse)("X-Server:group");
        assert_eq!(
            pair.map(|p| p.map(|p| (p.name.to_string(), p.label))),
            Ok(Some(("X-Server".to_owned(), "group".to_owned())))
        );
        for bad in [
            "X-Server",
            "X-Server:",
            ":group",
            "X Server:group",
            "-x:group",
            "x:g:h",
        ] {
            assert!((BLUE_GREEN_COOKIE.parse)(bad).is_err(), "{bad}");
        }
    }
}
