//! Gateway API rules: what the route maps cannot say (conditions beyond the path,
//! filters, traffic split), as an ordered chain per host and path.
//!
//! Every string here was validated on the way in: header and query names are tokens,
//! values hold no control character and no single quote (they are printed in single
//! quotes), paths and host names hold only URL-safe characters.

use crate::{BackendId, Origin};

/// A condition beyond the path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Condition {
    /// The request path matches this regular expression.
    Path(String),
    /// The request method, e.g. `GET`.
    Method(String),
    /// A request header (name lowercase).
    Header(ValueMatch),
    /// A query parameter (name as given: query names are case-sensitive).
    Query(ValueMatch),
    /// The request came through one of these frontends (when the routes sharing a path
    /// are attached to different listeners).
    Frontends(crate::Frontends),
}

/// A named value compared exactly or by regular expression.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ValueMatch {
    /// Header or parameter name.
    pub name: String,
    /// Value or PCRE pattern.
    pub value: String,
    /// Whether `value` is a regular expression.
    pub regex: bool,
}

/// Header changes. Most rules and backends change none, and each match of a route holds
/// two per backend and two of its own, so an empty one is a null pointer.
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash)]
pub struct HeaderEdits(Option<Box<HeaderLists>>);

/// The header changes of a [`HeaderEdits`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash)]
pub struct HeaderLists {
    /// Replace (or create) these headers.
    pub set: Vec<(String, String)>,
    /// Append these headers.
    pub add: Vec<(String, String)>,
    /// Remove these headers.
    pub remove: Vec<String>,
}

impl HeaderEdits {
    /// These changes (no lists at all when every list is empty, so equal changes are
    /// equal values).
    pub fn new(lists: HeaderLists) -> Self {
        if lists.set.is_empty() && lists.add.is_empty() && lists.remove.is_empty() {
            Self(None)
        } else {
            Self(Some(Box::new(lists)))
        }
    }

    /// Whether there is nothing to change.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// The headers replaced (or created).
    pub fn set(&self) -> &[(String, String)] {
        self.0.as_ref().map_or(&[], |lists| &lists.set)
    }

    /// The headers appended.
    pub fn add(&self) -> &[(String, String)] {
        self.0.as_ref().map_or(&[], |lists| &lists.add)
    }

    /// The headers removed.
    pub fn remove(&self) -> &[String] {
        self.0.as_ref().map_or(&[], |lists| &lists.remove)
    }

    /// The lists, to change them and make new edits of them.
    pub fn into_lists(self) -> HeaderLists {
        self.0.map(|lists| *lists).unwrap_or_default()
    }
}

/// How a redirect or rewrite changes the path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathChange {
    /// The whole path becomes this.
    Full(String),
    /// The matched prefix (`matched`, without trailing slash) becomes `replacement`.
    Prefix {
        /// The prefix the rule matched.
        matched: String,
        /// What replaces it.
        replacement: String,
    },
    /// The matched beginning (`matched`, an Ingress path matched character-wise, so
    /// `/img` matches `/imgs`) becomes `replacement`: `/imgs` becomes `<replacement>s`.
    Begins {
        /// The beginning the rule matched, without trailing slash.
        matched: String,
        /// What replaces it.
        replacement: String,
    },
}

/// An HTTP redirect.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Redirect {
    /// `http` or `https`; `None` keeps the request's.
    pub scheme: Option<String>,
    /// `None` keeps the request's host.
    pub hostname: Option<String>,
    /// `None`: the scheme's well-known port when the scheme is set, else the request's.
    pub port: Option<u16>,
    /// `None` keeps the path (and the query).
    pub path: Option<PathChange>,
    /// 301, 302, 303, 307 or 308.
    pub code: u16,
}

/// A request rewrite before forwarding.
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash)]
pub struct Rewrite {
    /// The new Host header.
    pub hostname: Option<String>,
    /// The new path.
    pub path: Option<PathChange>,
}

/// What a matching rule does.
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash)]
pub struct RuleAction {
    /// Request headers changed before forwarding.
    pub request_headers: HeaderEdits,
    /// Response headers changed before answering.
    pub response_headers: HeaderEdits,
    /// Answer with a redirect instead of forwarding (boxed, as the rewrite and CORS: most
    /// rules have none, and each route holds a rule per match).
    pub redirect: Option<Box<Redirect>>,
    /// Rewrite the request before forwarding.
    pub rewrite: Option<Box<Rewrite>>,
    /// Where traffic goes, with weights (all above 0).
    pub backends: Vec<RuleBackend>,
    /// The weight of the backends that are invalid: that share of the traffic (all of
    /// it, when there is no valid backend) is answered with `unavailable_answer`.
    pub unavailable_weight: u32,
    /// How that share is answered.
    pub unavailable_answer: Unavailable,
    /// HSTS on HTTPS responses, when it differs from the frontends' default.
    pub hsts: crate::HstsRule,
    /// Cross-origin resource sharing: preflights answered, responses decorated.
    pub cors: Option<Box<crate::Cors>>,
    /// The request body limit, when it differs from the frontends' default.
    pub body_limit: BodyLimit,
    /// How long a backend may take to answer, instead of its own `timeout server`.
    pub server_timeout: Option<crate::HaproxyDuration>,
    /// Which client addresses are served; the others get 403.
    /// `None` serves every client (most rules: the lists take 144 bytes).
    pub access: Option<Box<crate::SourceAccess>>,
    /// Authentication asked before anything else the rule does.
    pub auth: Option<std::sync::Arc<crate::PathAuth>>,
}

/// A path's request body limit (`proxy-body-size`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum BodyLimit {
    /// The frontends' limit.
    #[default]
    Inherit,
    /// Requests announcing a larger body, in bytes, are answered 413.
    Bytes(u64),
    /// No limit, whatever the frontends' is.
    Unlimited,
}

impl RuleAction {
    /// Every backend the action may send traffic to.
    pub fn backend_ids(&self) -> impl Iterator<Item = &BackendId> {
        self.backends.iter().map(|backend| &backend.id)
    }

    /// Whether the action only forwards to one backend, changing nothing: what a route
    /// map can say by itself.
    pub fn forwards_only(&self) -> bool {
        self.request_headers.is_empty()
            && self.response_headers.is_empty()
            && self.redirect.is_none()
            && self.rewrite.is_none()
            && self.unavailable_weight == 0
            && self.hsts == crate::HstsRule::Inherit
            && self.cors.is_none()
            && self.body_limit == BodyLimit::Inherit
            && self.server_timeout.is_none()
            && self
                .access
                .as_deref()
                .is_none_or(crate::SourceAccess::is_open)
            && self.auth.is_none()
            && self.backends.iter().all(RuleBackend::forwards_only)
    }
}

/// How a rule answers the requests it has no valid backend for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Unavailable {
    /// 500, as an HTTPRoute asks.
    #[default]
    InternalError,
    /// 503, which gRPC clients read as `UNAVAILABLE`, as a GRPCRoute asks.
    ServiceUnavailable,
}

/// One backend of a rule, with its weight and its own header changes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RuleBackend {
    /// The backend.
    pub id: BackendId,
    /// Its share of the traffic (above 0).
    pub weight: u32,
    /// Request headers changed when this backend is chosen.
    pub request_headers: HeaderEdits,
    /// Response headers changed when this backend answered.
    pub response_headers: HeaderEdits,
    /// Answer with a redirect when this backend is chosen.
    pub redirect: Option<Box<Redirect>>,
    /// Rewrite the request when this backend is chosen.
    pub rewrite: Option<Box<Rewrite>>,
}

impl RuleBackend {
    /// A backend with a weight and no changes of its own.
    pub fn plain(id: BackendId, weight: u32) -> Self {
        Self {
            id,
            weight,
            request_headers: HeaderEdits::default(),
            response_headers: HeaderEdits::default(),
            redirect: None,
            rewrite: None,
        }
    }

    /// Whether choosing this backend changes nothing of the request or response.
    pub fn forwards_only(&self) -> bool {
        self.request_headers.is_empty()
            && self.response_headers.is_empty()
            && self.redirect.is_none()
            && self.rewrite.is_none()
    }
}

/// One entry of a chain: the first entry whose conditions all hold acts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GatewayRule {
    /// Conditions beyond the path; empty always holds.
    pub conditions: Vec<Condition>,
    /// What it does.
    pub action: RuleAction,
    /// The object that declared it.
    pub origin: Origin,
    /// Plain-HTTP requests it takes are redirected to HTTPS with this status code (an
    /// Ingress path of a host with TLS): decided per rule, since rules of one path may
    /// come from Ingresses that ask differently.
    pub https_redirect: Option<u16>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A route holds an action and its backends for each of its matches, and most set
    /// none of the changes: those take a pointer each, so a plain match stays small.
    #[test]
    fn a_rule_and_its_backends_keep_their_rare_parts_out_of_line() {
        // 688 and 384 bytes when every part was inline.
        assert!(std::mem::size_of::<RuleAction>() <= 144);
        assert!(std::mem::size_of::<RuleBackend>() <= 96);
        assert_eq!(std::mem::size_of::<HeaderEdits>(), 8);
    }
}
