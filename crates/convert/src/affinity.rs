//! A backend's cookie affinity from its keys, with options HAProxy would refuse together
//! reported and left out.

use model::{CookieAffinity, CookieKeyword, CookieStrategy, CookieValue};
use resources::ObjectRef;

use crate::diagnostic::Diagnostic;
use crate::keys::{self, Keys};

/// The backend's sticky-session cookie, when `affinity: cookie`.
pub(crate) fn cookie_affinity(
    keys: &Keys<'_>,
    service: &ObjectRef,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<CookieAffinity> {
    if !keys.get(&keys::AFFINITY) {
        return None;
    }
    let strategy = keys.get(&keys::SESSION_COOKIE_STRATEGY);
    let mut keywords = keys.get(&keys::SESSION_COOKIE_KEYWORDS);
    if keywords.is_empty() && strategy == CookieStrategy::Insert {
        keywords = vec![
            CookieKeyword::Indirect,
            CookieKeyword::NoCache,
            CookieKeyword::HttpOnly,
        ];
    }
    // Reported on the object that sets the key (the Ingress, its class's ConfigMap or
    // the Service), where its Events and its author are.
    let mut report = |key: &'static str, message: &str| {
        let (object, field) = keys
            .set_at(key)
            .unwrap_or_else(|| (service.clone(), key.to_owned()));
        diagnostics.push(Diagnostic {
            object,
            field,
            message: message.to_owned(),
        });
    };
    if strategy == CookieStrategy::Rewrite && keywords.contains(&CookieKeyword::Indirect) {
        report(
            keys::SESSION_COOKIE_KEYWORDS.name,
            "'indirect' cannot be combined with the 'rewrite' strategy; it is left out",
        );
        keywords.retain(|k| *k != CookieKeyword::Indirect);
    }
    let mut preserve_from = keys::SESSION_COOKIE_KEYWORDS.name;
    if keys.get(&keys::SESSION_COOKIE_PRESERVE) && !keywords.contains(&CookieKeyword::Preserve) {
        keywords.push(CookieKeyword::Preserve);
        preserve_from = keys::SESSION_COOKIE_PRESERVE.name;
    }
    if keywords.contains(&CookieKeyword::Preserve)
        && strategy != CookieStrategy::Insert
        && !keywords.contains(&CookieKeyword::Indirect)
    {
        report(
            preserve_from,
            "'preserve' needs the 'insert' strategy or 'indirect'; it is left out",
        );
        keywords.retain(|k| *k != CookieKeyword::Preserve);
    }
    if keys.get(&keys::SESSION_COOKIE_SAME_SITE) {
        keywords.push(CookieKeyword::Attr(model::CookieAttr::same_site_none()));
        if !keywords.contains(&CookieKeyword::Secure) {
            keywords.push(CookieKeyword::Secure);
        }
    }
    if let Some(domain) = keys.get(&keys::SESSION_COOKIE_DOMAIN) {
        keywords.push(CookieKeyword::Domain(domain));
    }
    let value = if keys.get(&keys::SESSION_COOKIE_DYNAMIC) {
        CookieValue::Dynamic(keys.get(&keys::COOKIE_KEY))
    } else {
        CookieValue::ServerName
    };
    let name = keys.get(&keys::SESSION_COOKIE_NAME);
    match CookieAffinity::new(name, strategy, keywords, value) {
        Ok(affinity) => Some(affinity),
        // The conflicts were removed above; this is a guard should HAProxy's rules and
        // these drift apart.
        Err(why) => {
            diagnostics.push(Diagnostic {
                object: service.clone(),
                field: keys::AFFINITY.name.to_owned(),
                message: format!("{why}; the backend has no affinity"),
            });
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::keys::{Annotations, GlobalConfig};

    fn affinity(pairs: &[(&str, &str)]) -> (Option<CookieAffinity>, Vec<String>) {
        let service = ObjectRef::new(resources::Kind::Service, "web", "app");
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (format!("portcullis.dev/{k}"), (*v).to_owned()))
            .collect();
        let mut diagnostics = Vec::new();
        let annotations = Annotations::new(Some(&map), &service, &mut diagnostics);
        let global = GlobalConfig::default();
        let keys = Keys {
            service: Some(&annotations),
            object: None,
            global: &global,
        };
        let cookie = cookie_affinity(&keys, &service, &mut diagnostics);
        (
            cookie,
            diagnostics.iter().map(ToString::to_string).collect(),
        )
    }

    #[test]
    fn insert_defaults_to_haproxy_ingress_s_keywords_and_a_dynamic_value() {
        assert_eq!(affinity(&[]).0, None);
        let (cookie, diagnostics) = affinity(&[("affinity", "cookie")]);
        let cookie = cookie.unwrap_or_else(|| panic!("{diagnostics:?}"));
        assert_eq!(cookie.name().to_string(), "INGRESSCOOKIE");
        assert_eq!(
            cookie.keywords(),
            [
                CookieKeyword::Indirect,
                CookieKeyword::NoCache,
                CookieKeyword::HttpOnly
            ]
        );
        assert!(matches!(cookie.value(), CookieValue::Dynamic(k) if k.to_string() == "'Ingress'"));
    }

    #[test]
    fn options_haproxy_refuses_together_are_reported_and_left_out() {
        let (cookie, diagnostics) = affinity(&[
            ("affinity", "cookie"),
            ("session-cookie-strategy", "rewrite"),
            ("session-cookie-keywords", "indirect httponly"),
            ("session-cookie-preserve", "true"),
            ("session-cookie-same-site", "true"),
            ("session-cookie-dynamic", "false"),
        ]);
        let cookie = cookie.unwrap_or_else(|| panic!("{diagnostics:?}"));
        let words: Vec<String> = cookie.keywords().iter().map(ToString::to_string).collect();
        assert_eq!(words, ["httponly", "attr SameSite=None", "secure"]);
        assert_eq!(*cookie.value(), CookieValue::ServerName);
        assert_eq!(
            diagnostics,
            [
                "Service web/app: metadata.annotations[portcullis.dev/session-cookie-keywords]: 'indirect' cannot be combined with the 'rewrite' strategy; it is left out",
                "Service web/app: metadata.annotations[portcullis.dev/session-cookie-preserve]: 'preserve' needs the 'insert' strategy or 'indirect'; it is left out",
            ]
        );
    }

    #[test]
    fn a_conflict_is_reported_on_the_object_that_sets_the_key() {
        let service = ObjectRef::new(resources::Kind::Service, "web", "app");
        let ingress = ObjectRef::new(resources::Kind::Ingress, "web", "site");
        let map: BTreeMap<String, String> = [
            ("affinity", "cookie"),
            ("session-cookie-strategy", "rewrite"),
            ("session-cookie-keywords", "indirect"),
        ]
        .iter()
        .map(|(k, v)| (format!("haproxy-ingress.github.io/{k}"), (*v).to_owned()))
        .collect();
        let mut diagnostics = Vec::new();
        let on_ingress = Annotations::new(Some(&map), &ingress, &mut diagnostics);
        let on_service = Annotations::new(None, &service, &mut diagnostics);
        let global = GlobalConfig::default();
        let keys = Keys {
            service: Some(&on_service),
            object: Some(&on_ingress),
            global: &global,
        };
        cookie_affinity(&keys, &service, &mut diagnostics);
        let reported: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
        assert_eq!(
            reported,
            [
                "Ingress web/site: metadata.annotations[haproxy-ingress.github.io/session-cookie-keywords]: 'indirect' cannot be combined with the 'rewrite' strategy; it is left out"
            ]
        );
    }
}
