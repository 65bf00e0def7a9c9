//! The HTTPRoute `CORS` filter as the same CORS policy the Ingress keys build.

use model::{Cors, CorsOrigins};
use resources::gateway::HttpRouteRulesFiltersCors;

use crate::names;

/// At most this many entries in one of the filter's lists (the CRD's own limit).
const MAX_ENTRIES: usize = 64;

/// The filter's policy; defaults as the specification states them: no credentials,
/// `Access-Control-Max-Age: 5`, and the CORS-safelisted methods when none are listed.
pub(crate) fn cors(filter: &HttpRouteRulesFiltersCors) -> Result<Cors, String> {
    let origins = filter.allow_origins.as_deref().unwrap_or_default();
    if origins.len() > MAX_ENTRIES {
        return Err(format!(
            "allowOrigins: at most {MAX_ENTRIES} origins are accepted"
        ));
    }
    let origins = if origins.iter().any(|origin| origin == "*") {
        CorsOrigins::Any
    } else {
        let mut exact = Vec::new();
        let mut regex = Vec::new();
        for origin in origins {
            if origin.contains('*') {
                regex.push(wildcard_origin(origin)?);
            } else {
                exact.push(
                    model::parse_origin(origin).map_err(|why| format!("allowOrigins: {why}"))?,
                );
            }
        }
        CorsOrigins::Listed { exact, regex }
    };
    let names = |list: Option<&Vec<String>>, field: &str| -> Result<Vec<String>, String> {
        let list = list.map(Vec::as_slice).unwrap_or_default();
        if list.len() > MAX_ENTRIES {
            return Err(format!("{field}: at most {MAX_ENTRIES} names are accepted"));
        }
        list.iter()
            .map(|name| {
                if name == "*" {
                    Ok(name.clone())
                } else {
                    super::rules::token(name).map_err(|why| format!("{field}: {why}"))
                }
            })
            .collect()
    };
    let mut allow_methods = names(filter.allow_methods.as_ref(), "allowMethods")?;
    if allow_methods.is_empty() {
        allow_methods = ["GET", "HEAD", "POST"].map(str::to_owned).to_vec();
    }
    let max_age = match filter.max_age {
        None => 5,
        Some(age) => u32::try_from(age).map_err(|_| "maxAge: below 0".to_owned())?,
    };
    Ok(Cors {
        origins,
        allow_methods,
        allow_headers: names(filter.allow_headers.as_ref(), "allowHeaders")?,
        allow_credentials: filter.allow_credentials.unwrap_or(false),
        expose_headers: names(filter.expose_headers.as_ref(), "exposeHeaders")?,
        max_age,
    })
}

/// An origin whose host holds `*` (any characters, dots included, as the specification
/// says) as an anchored regular expression.
fn wildcard_origin(origin: &str) -> Result<String, String> {
    model::parse_origin(&origin.replace('*', "wildcard")).map_err(|_| {
        format!(
            "allowOrigins: '{}' is not an origin with a wildcard host such as https://*.example.com",
            origin.escape_debug()
        )
    })?;
    let pattern: String = origin
        .split('*')
        .map(literal)
        .collect::<Vec<_>>()
        .join(".*");
    names::parse_regex(&format!("^{pattern}$"), false)
}

/// A checked origin's text as a regular expression matching it literally (origins hold
/// letters, digits and `.+-:[]` only).
fn literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '.' | '+' | '[' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(value: serde_json::Value) -> HttpRouteRulesFiltersCors {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn the_filter_becomes_a_policy_with_the_specification_s_defaults() {
        let policy = cors(&filter(serde_json::json!({
            "allowOrigins": ["https://app.example", "https://*.example.com"],
            "exposeHeaders": ["X-Total"],
        })))
        .unwrap();
        assert_eq!(
            policy.origins,
            CorsOrigins::Listed {
                exact: vec!["https://app.example".to_owned()],
                regex: vec!["^https://.*\\.example\\.com$".to_owned()],
            }
        );
        assert_eq!(policy.allow_methods, ["GET", "HEAD", "POST"]);
        assert_eq!(policy.max_age, 5);
        assert!(!policy.allow_credentials);
        let any = cors(&filter(
            serde_json::json!({"allowOrigins": ["*"], "maxAge": 60}),
        ))
        .unwrap();
        assert_eq!(any.origins, CorsOrigins::Any);
        assert_eq!(any.max_age, 60);
        assert_eq!(
            cors(&filter(
                serde_json::json!({"allowOrigins": ["https://a'b"]})
            ))
            .unwrap_err(),
            "allowOrigins: 'https://a\\'b' is not an origin such as https://app.example or https://app.example:8443"
        );
    }
}
