//! Path authentication as frontend lines: HTTP Basic against a `userlist` section, and
//! the external service asked by the shipped Lua action (`lua/auth-request.lua`).

use std::fmt::Write;

use model::{
    AUTH_UNAVAILABLE_STATUS, AUTH_UNUSABLE_STATUS, BasicAuth, ExternalAuth, Password, PathAuth,
    Userlist,
};

/// The Lua action asking an external authentication service, loaded when a path uses one.
pub const AUTH_LUA: &str = include_str!("lua/auth-request.lua");

/// The `http-request` lines of a rule's authentication, before anything else it does.
pub(crate) fn auth_lines(auth: &PathAuth, chosen: &str, out: &mut String) {
    match &auth.basic {
        None => {}
        Some(BasicAuth::Unusable) => {
            // Every request is refused: nothing after this line could let one through.
            let _ = writeln!(
                out,
                "    http-request deny deny_status {AUTH_UNUSABLE_STATUS} if {chosen}"
            );
            return;
        }
        Some(BasicAuth::Users { userlist, realm }) => {
            let _ = writeln!(
                out,
                "    http-request auth realm '{}' if {chosen} !{{ http_auth({}) }}",
                realm.as_str(),
                userlist.section_name()
            );
        }
    }
    match &auth.external {
        None => {}
        Some(ExternalAuth::Unusable) => {
            let _ = writeln!(
                out,
                "    http-request deny deny_status {AUTH_UNUSABLE_STATUS} if {chosen}"
            );
        }
        Some(ExternalAuth::Service(service)) => {
            let _ = writeln!(
                out,
                "    http-request lua.portcullis-auth '{}' '{}' '{}' '{}' '{}' {} {} if {chosen}",
                service.url.as_str(),
                service.method.as_str(),
                service.headers_request.as_str(),
                service.headers_succeed.as_str(),
                service.headers_fail.as_str(),
                service.attempt_timeout_ms,
                u8::from(service.signin.is_some()),
            );
            let refused = "!{ var(txn.auth_ok) -m bool }";
            let _ = writeln!(
                out,
                "    http-request deny deny_status {AUTH_UNAVAILABLE_STATUS} if {chosen} {refused} !{{ var(txn.auth_refused) -m bool }}"
            );
            if let Some(signin) = &service.signin {
                let _ = writeln!(
                    out,
                    "    http-request redirect location '{}' code 302 if {chosen} {refused}",
                    signin.as_str()
                );
            }
            // Reached only if the action did not answer itself: refuse.
            let _ = writeln!(
                out,
                "    http-request deny deny_status {AUTH_UNUSABLE_STATUS} if {chosen} {refused}"
            );
        }
    }
}

/// Whether the authentication asks the external service (and so needs the Lua action).
pub(crate) fn uses_lua(auth: &PathAuth) -> bool {
    matches!(auth.external, Some(ExternalAuth::Service(_)))
}

/// A `userlist` section: the only place a password hash is written.
pub(crate) fn userlist_section(list: &Userlist, out: &mut String) {
    let _ = writeln!(out, "\nuserlist {}", list.section_name());
    for user in &list.users {
        let (keyword, secret) = match &user.password {
            Password::Hash(hash) => ("password", hash),
            Password::Plain(plain) => ("insecure-password", plain),
        };
        let _ = writeln!(
            out,
            "    user '{}' {keyword} '{}'",
            user.name.as_str(),
            secret.as_str()
        );
    }
}
