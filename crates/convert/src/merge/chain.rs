//! How the claims on one host and path become its route: the oldest plain claim (Ingress
//! semantics), or a chain of rules in the Gateway API's order of precedence.

use std::borrow::Cow;
use std::sync::Arc;

use model::{BackendId, Condition, GatewayRule, RouteTarget};

use super::claims::{Claims, Held, Position};
use crate::contribution::{ClaimedRule, Contribution};
use crate::diagnostic::Diagnostic;

/// A backend used by a winning claim, at the claim's position.
pub(super) type Use = (Position, BackendId, Arc<Contribution>);

/// The claims on a host and path with those of every Ingress but the oldest one taken
/// out and reported: under Ingress semantics the oldest Ingress owns the path, whatever
/// conditions a younger one's rule carries (app-root's `^/$` would otherwise be tried
/// first), but for a younger one of the owner's namespace whose rule matches headers
/// (`http-header-match`: a canary by header, tried first for the requests it matches). When the owner's claims all carry conditions (a regex path, which claims the
/// host's `/` for the requests its pattern matches), the oldest Ingress with a plain
/// claim there keeps serving the rest, as it would without the owner. Gateway API route
/// claims are ordered by the Gateway API's precedence among themselves, but one of
/// another namespace than the owning Ingress's, younger than it, on a frontend it
/// serves, is taken out and reported too: a condition (a method, a header) would
/// otherwise put it before the owner and take its requests.
pub(super) fn oldest_ingress_only<'a>(
    claims: &'a Claims<Held>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Cow<'a, Claims<Held>> {
    let is_ingress = |claim: &Held| matches!(claim.route().rule, ClaimedRule::Ingress { .. });
    let plain_ingress = |claim: &Held| is_ingress(claim) && claim.route().conditions().is_empty();
    let Some((owner_position, owner_claim)) = claims.iter().find(|(_, claim)| is_ingress(claim))
    else {
        return Cow::Borrowed(claims);
    };
    let owner = Some(&owner_claim.contribution.object);
    let owned_frontends = &owner_claim.route().frontends;
    // A younger Gateway API claim of another tenant on a frontend the owner serves.
    let intrudes = |position: &Position, claim: &Held| {
        let frontends = &claim.route().frontends;
        !is_ingress(claim)
            && position > owner_position
            && claim.contribution.object.namespace != owner_claim.contribution.object.namespace
            && ((frontends.http && owned_frontends.http)
                || (frontends.https && owned_frontends.https))
    };
    // Nearly always: one claim, or one Ingress's claims only, and nothing to take out.
    if claims.iter().all(|(position, claim)| {
        (!is_ingress(claim) || Some(&claim.contribution.object) == owner)
            && !intrudes(position, claim)
    }) {
        return Cow::Borrowed(claims);
    }
    let owned_plain = claims
        .values()
        .any(|claim| plain_ingress(claim) && Some(&claim.contribution.object) == owner);
    let rest = if owned_plain {
        None
    } else {
        claims
            .values()
            .find(|claim| plain_ingress(claim))
            .map(|claim| &claim.contribution.object)
    };
    // A younger Ingress of the owner's namespace whose rule matches headers too (a canary
    // by header): it takes only the requests it matches, so it stands before the owner.
    let canary = |claim: &Held| {
        claim.contribution.object.namespace == owner_claim.contribution.object.namespace
            && claim
                .route()
                .conditions()
                .iter()
                .any(|condition| matches!(condition, Condition::Header(_)))
    };
    let kept_object = |claim: &Held| {
        let object = Some(&claim.contribution.object);
        object == owner || object == rest || canary(claim)
    };
    let mut kept = Claims::default();
    for (position, claim) in claims.iter() {
        if (is_ingress(claim) && !kept_object(claim)) || intrudes(position, claim) {
            if claim.contribution.origin != owner_claim.contribution.origin {
                diagnostics.push(conflict(claim, owner_claim));
            }
            continue;
        }
        kept.insert(position.clone(), claim.clone());
    }
    Cow::Owned(kept)
}

/// Ingress semantics: the oldest claim wins, every other one is reported.
pub(super) fn plain_route(
    claims: &Claims<Held>,
    uses: &mut Vec<Use>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<(RouteTarget, Held)> {
    let mut ordered = claims.iter();
    let (position, claim) = ordered.next()?;
    for (_, other) in ordered {
        if other.contribution.origin != claim.contribution.origin {
            diagnostics.push(conflict(other, claim));
        }
    }
    let backend = claim.route().backends().first()?.id.clone();
    uses.push((
        position.clone(),
        backend.clone(),
        claim.contribution.clone(),
    ));
    Some((RouteTarget::Backend(backend), claim.clone()))
}

/// Gateway API semantics: every claim on the path is a rule, tried in the order of
/// precedence (a regular-expression path first, a GRPCRoute's with the longer service
/// then the longer method pattern before the others, then a method match, then more header
/// matches, then more query matches, then the older route, then the rule's place in
/// it); a rule with the same conditions as one before it, or after one without
/// conditions, is never reached and is reported.
pub(super) fn chain_route(
    claims: &Claims<Held>,
    https_redirect: &dyn Fn(&Held) -> Option<u16>,
    uses: &mut Vec<Use>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<(RouteTarget, Held)> {
    let mut ordered: Vec<(&Position, &Held)> = claims.iter().collect();
    ordered.sort_by_cached_key(|(position, claim)| {
        let conditions = claim.route().conditions();
        let count =
            |wanted: fn(&Condition) -> bool| conditions.iter().filter(|c| wanted(c)).count();
        (
            std::cmp::Reverse(count(|c| matches!(c, Condition::Path(_)))),
            std::cmp::Reverse(claim.route().method_precedence()),
            std::cmp::Reverse(count(|c| matches!(c, Condition::Method(_)))),
            std::cmp::Reverse(count(|c| matches!(c, Condition::Header(_)))),
            std::cmp::Reverse(count(|c| matches!(c, Condition::Query(_)))),
            (*position).clone(),
        )
    });
    // Routes of different listeners share the path: each rule keeps to its own.
    let union = ordered
        .iter()
        .map(|(_, claim)| claim.route().frontends.clone())
        .reduce(|a, b| a.union(&b))
        .unwrap_or_default();
    let mut chain: Vec<GatewayRule> = Vec::new();
    let mut chained: Vec<Held> = Vec::new();
    let mut takes_all: Option<Held> = None;
    for (position, claim) in ordered {
        let rule = claim.route();
        let mut conditions = rule.conditions().to_vec();
        if rule.frontends != union {
            conditions.push(Condition::Frontends(rule.frontends.clone()));
        }
        let shadowing = takes_all.clone().or_else(|| {
            chain
                .iter()
                .position(|entry| entry.conditions == conditions)
                .and_then(|index| chained.get(index).cloned())
        });
        if let Some(earlier) = shadowing {
            if earlier.contribution.origin != claim.contribution.origin {
                diagnostics.push(conflict(claim, &earlier));
            }
            continue;
        }
        for backend in rule.backends() {
            uses.push((
                position.clone(),
                backend.id.clone(),
                claim.contribution.clone(),
            ));
        }
        if conditions.is_empty() {
            takes_all = Some(claim.clone());
        }
        chain.push(GatewayRule {
            conditions,
            action: rule.action(),
            origin: claim.contribution.origin.clone(),
            https_redirect: https_redirect(claim),
        });
        chained.push(claim.clone());
    }
    let winner = chained.first()?.clone();
    Some((RouteTarget::Rules(chain.into()), winner))
}

/// A later claim on a path already routed by an older one.
fn conflict(later: &Held, earlier: &Held) -> Diagnostic {
    let rule = later.route();
    Diagnostic {
        object: later.contribution.object.clone(),
        field: rule.field.clone(),
        message: format!(
            "host {} path '{}' is already routed by {}, which is older; this path is ignored",
            rule.host, rule.path_text, earlier.contribution.origin
        ),
    }
}
