//! An HTTPRoute rule's matches and filters, validated into model conditions and actions.
//! Every value that reaches the configuration is checked here: names are tokens, values
//! hold no control character and no single quote, paths and hosts only URL-safe
//! characters.

use model::{Condition, HeaderEdits, PathChange, Redirect, Rewrite, RuleAction, ValueMatch};
use resources::gateway::{HttpRouteRulesFilters, HttpRouteRulesMatches};
use serde_json::Value;

use crate::names;

/// The conditions of a match beyond its path.
pub(crate) fn conditions(matched: &HttpRouteRulesMatches) -> Result<Vec<Condition>, String> {
    let mut conditions = Vec::new();
    if let Some(method) = &matched.method {
        let method = serde_json::to_value(method)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .ok_or("method: not a method")?;
        conditions.push(Condition::Method(method));
    }
    let headers = serde_json::to_value(&matched.headers).unwrap_or(Value::Null);
    for header in value_matches(&headers, "headers")? {
        conditions.push(Condition::Header(ValueMatch {
            name: header.name.to_ascii_lowercase(),
            ..header
        }));
    }
    let queries = serde_json::to_value(&matched.query_params).unwrap_or(Value::Null);
    for query in value_matches(&queries, "queryParams")? {
        conditions.push(Condition::Query(query));
    }
    Ok(conditions)
}

/// The most header matches, and the most query-parameter matches, one match takes (the
/// specification's limit).
const MAX_VALUE_MATCHES: usize = 16;

/// Header or query-parameter matches (`[{name, value, type}]`), validated.
fn value_matches(list: &Value, field: &str) -> Result<Vec<ValueMatch>, String> {
    let count = list.as_array().map_or(0, Vec::len);
    if count > MAX_VALUE_MATCHES {
        return Err(format!(
            "{field}: {count} entries; at most {MAX_VALUE_MATCHES} are accepted"
        ));
    }
    list.as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(index, entry)| {
            let at = |part: &str, why: String| format!("{field}[{index}].{part}: {why}");
            let regex = entry["type"] == "RegularExpression";
            let text = entry["value"].as_str().unwrap_or_default();
            let checked = if regex {
                names::parse_regex(text, false)
            } else if text.is_empty() {
                // HAProxy ends a pattern list at an empty word: it would match nothing.
                Err("an empty value".to_owned())
            } else {
                value(text)
            };
            Ok(ValueMatch {
                name: token(entry["name"].as_str().unwrap_or_default())
                    .map_err(|why| at("name", why))?,
                value: checked.map_err(|why| at("value", why))?,
                regex,
            })
        })
        .collect()
}

/// A problem at a field below the rule: the field's path, and what is wrong.
pub(crate) type FieldError = (String, String);

/// A rule's filters as an action (without backends). `matched_prefix` is the path
/// prefix the match matched, which `ReplacePrefixMatch` replaces.
pub(crate) fn filters(
    filters: &[HttpRouteRulesFilters],
    matched_prefix: Option<&str>,
) -> Result<RuleAction, FieldError> {
    let mut action = RuleAction::default();
    for (index, filter) in filters.iter().enumerate() {
        let at = |why: String| (format!("filters[{index}]"), why);
        let filter = serde_json::to_value(filter).map_err(|e| at(e.to_string()))?;
        match filter["type"].as_str().unwrap_or_default() {
            "RequestHeaderModifier" => {
                header_edits(
                    &filter["requestHeaderModifier"],
                    &mut action.request_headers,
                )
                .map_err(at)?;
            }
            "ResponseHeaderModifier" => {
                header_edits(
                    &filter["responseHeaderModifier"],
                    &mut action.response_headers,
                )
                .map_err(at)?;
            }
            "RequestRedirect" => {
                action.redirect =
                    Some(redirect(&filter["requestRedirect"], matched_prefix).map_err(at)?);
            }
            "URLRewrite" => {
                let rewrite = &filter["urlRewrite"];
                action.rewrite = Some(Rewrite {
                    hostname: optional_host(&rewrite["hostname"]).map_err(at)?,
                    path: path_change(&rewrite["path"], matched_prefix).map_err(at)?,
                });
            }
            other => return Err(at(format!("filter type {other} is not supported"))),
        }
    }
    if action.redirect.is_some() && action.rewrite.is_some() {
        return Err((
            "filters".to_owned(),
            "RequestRedirect and URLRewrite cannot be combined".to_owned(),
        ));
    }
    Ok(action)
}

/// A backendRef's filters: its request and response header changes.
pub(crate) fn backend_filters<T: serde::Serialize>(
    filters: &[T],
) -> Result<(HeaderEdits, HeaderEdits), FieldError> {
    let mut request = HeaderEdits::default();
    let mut response = HeaderEdits::default();
    for (index, filter) in filters.iter().enumerate() {
        let at = |why: String| (format!("filters[{index}]"), why);
        let filter = serde_json::to_value(filter).map_err(|e| at(e.to_string()))?;
        match filter["type"].as_str().unwrap_or_default() {
            "RequestHeaderModifier" => {
                header_edits(&filter["requestHeaderModifier"], &mut request).map_err(at)?;
            }
            "ResponseHeaderModifier" => {
                header_edits(&filter["responseHeaderModifier"], &mut response).map_err(at)?;
            }
            other => {
                return Err(at(format!(
                    "filter type {other} is not supported on a backendRef"
                )));
            }
        }
    }
    Ok((request, response))
}

fn header_edits(modifier: &Value, edits: &mut HeaderEdits) -> Result<(), String> {
    let pairs = |list: &Value| -> Result<Vec<(String, String)>, String> {
        list.as_array()
            .into_iter()
            .flatten()
            .map(|entry| {
                let name = token(entry["name"].as_str().unwrap_or_default())?;
                let value = value(entry["value"].as_str().unwrap_or_default())?;
                Ok((name, value))
            })
            .collect()
    };
    edits.set.extend(pairs(&modifier["set"])?);
    edits.add.extend(pairs(&modifier["add"])?);
    for name in modifier["remove"].as_array().into_iter().flatten() {
        edits.remove.push(token(name.as_str().unwrap_or_default())?);
    }
    Ok(())
}

fn redirect(redirect: &Value, matched_prefix: Option<&str>) -> Result<Redirect, String> {
    let code = match redirect["statusCode"].as_i64().unwrap_or(302) {
        code @ (301 | 302 | 303 | 307 | 308) => u16::try_from(code).unwrap_or(302),
        code => {
            return Err(format!(
                "statusCode {code} is not 301, 302, 303, 307 or 308"
            ));
        }
    };
    let scheme = match redirect["scheme"].as_str() {
        None => None,
        Some(scheme @ ("http" | "https")) => Some(scheme.to_owned()),
        Some(other) => return Err(format!("scheme {other} is not http or https")),
    };
    let port = match redirect["port"].as_i64() {
        None => None,
        Some(port) => Some(
            u16::try_from(port)
                .ok()
                .filter(|p| *p > 0)
                .ok_or(format!("port {port} is out of range"))?,
        ),
    };
    Ok(Redirect {
        scheme,
        hostname: optional_host(&redirect["hostname"])?,
        port,
        path: path_change(&redirect["path"], matched_prefix)?,
        code,
    })
}

fn path_change(path: &Value, matched_prefix: Option<&str>) -> Result<Option<PathChange>, String> {
    match path["type"].as_str() {
        None => Ok(None),
        Some("ReplaceFullPath") => Ok(Some(PathChange::Full(url_path(
            path["replaceFullPath"].as_str().unwrap_or("/"),
        )?))),
        Some("ReplacePrefixMatch") => {
            let Some(matched) = matched_prefix else {
                return Err("ReplacePrefixMatch needs a PathPrefix match".to_owned());
            };
            let replacement = url_path(path["replacePrefixMatch"].as_str().unwrap_or("/"))?;
            Ok(Some(PathChange::Prefix {
                matched: matched.trim_end_matches('/').to_owned(),
                replacement,
            }))
        }
        Some(other) => Err(format!("path type {other} is not supported")),
    }
}

fn optional_host(host: &Value) -> Result<Option<String>, String> {
    match host.as_str() {
        None => Ok(None),
        Some(host) => match names::parse_host(host)? {
            model::HostKey::Exact(name) => Ok(Some(name)),
            _ => Err(format!("hostname {host} must be an exact host name")),
        },
    }
}

/// A header or parameter name: an HTTP token of the characters HAProxy takes as is.
fn token(name: &str) -> Result<String, String> {
    let ok = !name.is_empty()
        && name.len() <= 256
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~'));
    if ok {
        Ok(name.to_owned())
    } else {
        Err(format!(
            "'{}' is not a name of letters, digits, '-', '_', '.', '~'",
            name.escape_debug()
        ))
    }
}

/// A value printed in single quotes: printable, without a single quote.
fn value(text: &str) -> Result<String, String> {
    if text.len() <= 4096 && text.chars().all(|c| !c.is_control() && c != '\'') {
        Ok(text.to_owned())
    } else {
        Err("values may not hold control characters or a single quote (')".to_owned())
    }
}

/// A path regular expression, printed in single quotes (HAProxy reads it as PCRE2).
pub(crate) fn path_pattern(pattern: &str) -> Result<String, String> {
    names::parse_regex(pattern, false)
}

/// A path printed in configuration and regular expressions: URL-safe characters only.
pub(crate) fn url_path(path: &str) -> Result<String, String> {
    if path.len() > names::MAX_PATH_BYTES {
        return Err(format!(
            "path is {} bytes long; at most {} are accepted",
            path.len(),
            names::MAX_PATH_BYTES
        ));
    }
    let ok = path.starts_with('/')
        && path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'_' | b'.' | b'~'));
    if ok {
        Ok(path.to_owned())
    } else {
        Err(format!(
            "path '{}' must start with '/' and hold only letters, digits, '/', '-', '_', '.', '~'",
            path.escape_debug()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn matches(value: Value) -> Result<Vec<Condition>, String> {
        conditions(&serde_json::from_value(value).map_err(|e| e.to_string())?)
    }

    #[test]
    fn nothing_that_could_break_out_of_a_configuration_line_is_accepted() {
        let refused = [
            json!({"headers": [{"name": "x", "value": "a' || true"}]}),
            json!({"headers": [{"name": "x", "value": "a\nhttp-request deny"}]}),
            json!({"headers": [{"name": "x y", "value": "a"}]}),
            json!({"queryParams": [{"name": "q)", "value": "a"}]}),
        ];
        for value in refused {
            assert!(matches(value.clone()).is_err(), "{value}");
        }
        assert!(url_path("/a b").is_err());
        assert!(url_path("/a'b").is_err());
        assert!(url_path("relative").is_err());
        assert!(path_pattern("^/x'").is_err());
        assert!(path_pattern("^/x(").is_err());
        for value in [
            json!({"headers": [{"name": "x", "type": "RegularExpression", "value": "[z-a]"}]}),
            json!({"queryParams": [{"name": "q", "type": "RegularExpression", "value": "(?P<"}]}),
            json!({"headers": [{"name": "x", "value": ""}]}),
        ] {
            assert!(matches(value.clone()).is_err(), "{value}");
        }
        let filters: Vec<HttpRouteRulesFilters> = serde_json::from_value(json!([
            {"type": "RequestHeaderModifier", "requestHeaderModifier": {"set": [{"name": "x", "value": "v\r\nx: y"}]}}
        ]))
        .unwrap();
        assert!(super::filters(&filters, None).is_err());
    }

    #[test]
    fn matches_become_conditions_with_lowercase_header_names() {
        let conditions = matches(json!({
            "method": "POST",
            "headers": [{"name": "X-Env", "value": "canary one"}, {"name": "v", "type": "RegularExpression", "value": "^[0-9]+$"}],
            "queryParams": [{"name": "Debug", "value": "1"}],
        }))
        .unwrap();
        let value = |name: &str, value: &str, regex| ValueMatch {
            name: name.into(),
            value: value.into(),
            regex,
        };
        assert_eq!(
            conditions,
            [
                Condition::Method("POST".into()),
                Condition::Header(value("x-env", "canary one", false)),
                Condition::Header(value("v", "^[0-9]+$", true)),
                Condition::Query(value("Debug", "1", false)),
            ]
        );
    }
}
