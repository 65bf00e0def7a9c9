//! Process-wide settings: HAProxy's threads, how many reloads an old worker outlives,
//! half-closed clients' timeout, and how long a reload lets old connections live.

use model::HaproxyDuration;
use resources::ObjectRef;

use super::parse::parse_duration;
use super::{Applied, DURATION_VALUES, GlobalConfig, Key, Scope};
use crate::Diagnostic;

/// `timeout-client-fin`.
pub static TIMEOUT_CLIENT_FIN: Key<HaproxyDuration> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "timeout-client-fin",
    scope: Scope::Global,
    default: "50s",
    accepted_values: DURATION_VALUES,
    parse: parse_duration,
    doc: "Maximum inactivity time on the client side once the client closed its half of the connection.",
    applied: Applied::Reload,
    differs: "",
};
/// `timeout-stop`.
pub static TIMEOUT_STOP: Key<HaproxyDuration> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "timeout-stop",
    scope: Scope::Global,
    default: "10m",
    accepted_values: DURATION_VALUES,
    parse: parse_duration,
    doc: "How long a HAProxy worker replaced by a reload keeps serving the connections it has, such as WebSockets and long downloads, before it closes them (HAProxy's `hard-stop-after`). Idle keep-alive connections close at once. `0` waits without limit.",
    applied: Applied::Reload,
    differs: "",
};

/// `nbthread`.
pub static NBTHREAD: Key<Option<u16>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "nbthread",
    scope: Scope::Global,
    default: "",
    accepted_values: "a number of threads from `1` to `64`, or empty",
    parse: parse_threads,
    doc: "How many threads HAProxy runs; empty leaves HAProxy one per CPU it may use.",
    applied: Applied::Reload,
    differs: "haproxy-ingress also pins the threads to CPUs 0 to N-1 (`cpu-map`, unless `use-cpu-map` is false); portcullis writes no `cpu-map`.",
};
/// `worker-max-reloads`.
pub static WORKER_MAX_RELOADS: Key<u32> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "worker-max-reloads",
    scope: Scope::Global,
    default: "10",
    accepted_values: "a whole number up to 2147483647, such as `10`; `0` for no limit",
    parse: parse_max_reloads,
    doc: "A HAProxy worker replaced by a reload and still serving long-lived connections after this many more reloads is stopped, so that a burst of reloads cannot pile up old workers and their memory (HAProxy's `mworker-max-reloads`). `0` sets no limit (`timeout-stop`, unless it is `0`, still ends each).",
    applied: Applied::Reload,
    differs: "haproxy-ingress sets no limit by default; portcullis stops a worker after 10 reloads.",
};

fn parse_threads(text: &str) -> Result<Option<u16>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    match text.parse::<u16>() {
        Ok(threads @ 1..=64) => Ok(Some(threads)),
        _ => Err(format!(
            "'{}' is not a number of threads from 1 to 64",
            text.escape_debug()
        )),
    }
}

fn parse_max_reloads(text: &str) -> Result<u32, String> {
    let text = text.trim();
    // HAProxy reads the value as a signed 32-bit number, and takes a larger one for none.
    text.parse::<u32>()
        .ok()
        .filter(|reloads| i32::try_from(*reloads).is_ok())
        .ok_or_else(|| {
            format!(
                "'{}' is not a whole number of reloads from 0 to 2147483647",
                text.escape_debug()
            )
        })
}

/// How `close-sessions-duration` is written: a time, or a share of `timeout-stop`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CloseSessions {
    /// The last part of `timeout-stop` of this length.
    Last(HaproxyDuration),
    /// The last part of `timeout-stop`, as a percentage of it.
    Percent(u8),
}

/// `close-sessions-duration`.
pub static CLOSE_SESSIONS_DURATION: Key<Option<CloseSessions>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "close-sessions-duration",
    scope: Scope::Global,
    default: "",
    accepted_values: "a duration shorter than timeout-stop (such as `30s`), or a percentage of it from `2%` to `98%`; empty to leave the sessions to timeout-stop",
    parse: parse_close_sessions,
    doc: "After a reload, the replaced worker's long-lived sessions (WebSockets, long downloads) are closed one by one, evenly spread over the last part of `timeout-stop` of this length, so that their clients reconnect to the new worker a few at a time instead of all at once when `timeout-stop` ends. Applies to the workers replaced from then on.",
    applied: Applied::Live,
    differs: "haproxy-ingress also needs its `--track-old-instances` flag; portcullis always reaches its replaced workers through HAProxy's master CLI.",
};

fn parse_close_sessions(text: &str) -> Result<Option<CloseSessions>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    if let Some(number) = text.strip_suffix('%') {
        return match number.parse::<u8>() {
            Ok(percent @ 2..=98) => Ok(Some(CloseSessions::Percent(percent))),
            _ => Err(format!(
                "'{}' is not a percentage from 2% to 98%",
                text.escape_debug()
            )),
        };
    }
    match HaproxyDuration::parse(text)? {
        zero if zero.to_std().is_zero() => {
            Err("'0' closes nothing: leave the key empty".to_owned())
        }
        duration => Ok(Some(CloseSessions::Last(duration))),
    }
}

/// How long the closing of a replaced worker's sessions is spread over, ending when
/// `timeout-stop` does; `None` when they are left to `timeout-stop`. A window that does
/// not fit in `timeout-stop` is reported.
pub(crate) fn close_sessions_window(
    global: &GlobalConfig,
    configmap: Option<&ObjectRef>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<std::time::Duration> {
    let setting = global.get(&CLOSE_SESSIONS_DURATION)?;
    let stop = global.get(&TIMEOUT_STOP).to_std();
    let refuse = |why: String, diagnostics: &mut Vec<Diagnostic>| {
        diagnostics.push(Diagnostic {
            object: configmap
                .cloned()
                .unwrap_or_else(|| ObjectRef::new(resources::Kind::ConfigMap, "", "")),
            field: format!("data.{}", CLOSE_SESSIONS_DURATION.name),
            message: format!("{why}; the sessions are left to timeout-stop"),
        });
        None
    };
    if stop.is_zero() {
        return refuse(
            "timeout-stop is 0 (no limit), so there is no end to spread the closing before"
                .to_owned(),
            diagnostics,
        );
    }
    match setting {
        CloseSessions::Percent(percent) => Some(stop * u32::from(percent) / 100),
        CloseSessions::Last(window) if window.to_std() < stop => Some(window.to_std()),
        CloseSessions::Last(window) => refuse(
            format!(
                "{} is not shorter than timeout-stop ({})",
                window.as_str(),
                global.get(&TIMEOUT_STOP).as_str()
            ),
            diagnostics,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_checks() {
        assert_eq!(TIMEOUT_CLIENT_FIN.default_value().as_str(), "50s");
        assert_eq!(TIMEOUT_STOP.default_value().to_std().as_secs(), 600);
        assert_eq!(
            (TIMEOUT_STOP.parse)("1h").map(|d| d.to_string()),
            Ok("1h".to_owned())
        );
        assert_eq!(
            (TIMEOUT_STOP.parse)("ten").map(|d| d.to_string()),
            Err("'ten' is not a duration such as 5s, 500ms or 1m".to_owned())
        );
    }

    #[test]
    fn close_sessions_is_a_duration_or_a_share_of_timeout_stop() {
        assert_eq!(CLOSE_SESSIONS_DURATION.default_value(), None);
        assert_eq!(
            (CLOSE_SESSIONS_DURATION.parse)("10%"),
            Ok(Some(CloseSessions::Percent(10)))
        );
        assert_eq!(
            (CLOSE_SESSIONS_DURATION.parse)("30s"),
            Ok(Some(CloseSessions::Last(
                HaproxyDuration::parse("30s").unwrap()
            )))
        );
        assert_eq!(
            (CLOSE_SESSIONS_DURATION.parse)("1%"),
            Err("'1%' is not a percentage from 2% to 98%".to_owned())
        );
        assert_eq!(
            (CLOSE_SESSIONS_DURATION.parse)("0"),
            Err("'0' closes nothing: leave the key empty".to_owned())
        );
        assert!((CLOSE_SESSIONS_DURATION.parse)("soon").is_err());

        let window = |pairs: &[(&str, &str)]| {
            let data = pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            let mut diagnostics = Vec::new();
            let global = GlobalConfig::new(Some(&data), None, &mut diagnostics);
            let window = close_sessions_window(&global, None, &mut diagnostics);
            let messages: Vec<String> = diagnostics.into_iter().map(|d| d.message).collect();
            (window, messages)
        };
        let secs = std::time::Duration::from_secs;
        assert_eq!(
            window(&[("close-sessions-duration", "10%")]),
            (Some(secs(60)), vec![])
        );
        assert_eq!(
            window(&[("close-sessions-duration", "2m"), ("timeout-stop", "1h")]),
            (Some(secs(120)), vec![])
        );
        assert_eq!(
            window(&[("close-sessions-duration", "10m")]),
            (
                None,
                vec!["10m is not shorter than timeout-stop (10m); the sessions are left to timeout-stop".to_owned()]
            )
        );
        assert_eq!(
            window(&[("close-sessions-duration", "50%"), ("timeout-stop", "0")]),
            (
                None,
                vec!["timeout-stop is 0 (no limit), so there is no end to spread the closing before; the sessions are left to timeout-stop".to_owned()]
            )
        );
        assert_eq!(window(&[]), (None, vec![]));
    }
}
