//! The typed vocabulary of Gateway API status: condition types, statuses and reasons as
//! the specification names them, and what a route's conversion tells status.

use resources::ObjectRef;
use serde::Serialize;

/// A condition's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum ConditionType {
    /// The object is valid and taken.
    Accepted,
    /// Its references resolve.
    ResolvedRefs,
    /// It is served.
    Programmed,
    /// It conflicts with another listener.
    Conflicted,
    /// Some of a route's rules are invalid, and left out.
    PartiallyInvalid,
}

/// A condition's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum ConditionStatus {
    /// The condition holds.
    True,
    /// It does not.
    False,
}

impl ConditionStatus {
    /// `True` when `holds`.
    pub fn of(holds: bool) -> Self {
        if holds { Self::True } else { Self::False }
    }
}

/// A condition's reason, as the specification spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Reason {
    /// `Accepted`.
    Accepted,
    /// `ResolvedRefs`.
    ResolvedRefs,
    /// `Programmed`.
    Programmed,
    /// `Invalid`.
    Invalid,
    /// `NoConflicts`.
    NoConflicts,
    /// `ListenersNotValid`.
    ListenersNotValid,
    /// `AddressNotAssigned`.
    AddressNotAssigned,
    /// `NoMatchingParent`.
    NoMatchingParent,
    /// `NotAllowedByListeners`.
    NotAllowedByListeners,
    /// `NoMatchingListenerHostname`.
    NoMatchingListenerHostname,
    /// `InvalidKind`.
    InvalidKind,
    /// `BackendNotFound`.
    BackendNotFound,
    /// `RefNotPermitted`.
    RefNotPermitted,
    /// `InvalidCertificateRef`.
    InvalidCertificateRef,
    /// `InvalidCACertificateRef`: a client-certificate CA of `spec.tls.frontend`.
    #[serde(rename = "InvalidCACertificateRef")]
    InvalidCaCertificateRef,
    /// `InvalidCACertificateKind`: a client-certificate CA reference of a kind not read.
    #[serde(rename = "InvalidCACertificateKind")]
    InvalidCaCertificateKind,
    /// `InvalidRouteKinds`.
    InvalidRouteKinds,
    /// `PortUnavailable`.
    PortUnavailable,
    /// `ProtocolConflict`.
    ProtocolConflict,
    /// `HostnameConflict`.
    HostnameConflict,
    /// `UnsupportedProtocol`.
    UnsupportedProtocol,
    /// `UnsupportedValue`.
    UnsupportedValue,
    /// `Conflicted`: a policy that an older one targeting the same thing overrides.
    Conflicted,
    /// `NotAllowed`: a ListenerSet its Gateway's `allowedListeners` do not admit.
    NotAllowed,
    /// `NoValidCACertificate`: none of a BackendTLSPolicy's CA references is usable.
    #[serde(rename = "NoValidCACertificate")]
    NoValidCaCertificate,
    /// `InvalidParameters`: a Gateway's `infrastructure.parametersRef` that cannot be read.
    InvalidParameters,
}

/// Why something cannot be served: a status reason, and a message for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The specification's reason.
    pub reason: Reason,
    /// What is wrong.
    pub message: String,
}

impl Refusal {
    /// A refusal with this reason and message.
    pub fn new(reason: Reason, message: impl Into<String>) -> Self {
        Self {
            reason,
            message: message.into(),
        }
    }
}

/// Why a route did or did not attach to one parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParentOutcome {
    /// What the parentRef names: a Gateway or a ListenerSet.
    pub(crate) parent: ObjectRef,
    /// The Gateway the route is served through (the parent, or the ListenerSet's).
    pub(crate) gateway: ObjectRef,
    pub(crate) section_name: Option<String>,
    pub(crate) port: Option<i32>,
    /// Listeners the route attached to (by name); empty: not attached.
    pub(crate) listeners: Vec<String>,
    /// Why it is not attached there.
    pub(crate) refusal: Option<Refusal>,
}

/// What status needs from a route's conversion.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct RouteOutcome {
    pub(crate) parents: Vec<ParentOutcome>,
    /// The first reference that does not resolve.
    pub(crate) unresolved: Option<Refusal>,
    /// The BackendTLSPolicies that target the route's backends (those overridden by an
    /// older one included): the route's Gateways are their ancestors in status.
    pub(crate) policies: std::collections::BTreeSet<ObjectRef>,
    /// The fields of rules and matches left out, or answered with an error, as invalid.
    pub(crate) dropped: Vec<String>,
    /// The filters served without their effect, which portcullis does not support (a
    /// request mirror): the rule is served, and its `Accepted` condition says so.
    pub(crate) unsupported: Vec<String>,
    /// The route's generation, which its status reports as observed: kept here, status
    /// never looks the route up (a one-shot conversion frees each route as it is
    /// converted).
    pub(crate) generation: Option<i64>,
}

impl RouteOutcome {
    /// The outcome of a route at `generation`, before anything is found.
    pub(crate) fn at(generation: Option<i64>) -> Self {
        Self {
            generation,
            ..Self::default()
        }
    }

    /// Drops the room its lists kept for more: an outcome is kept with its route's
    /// contribution.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.parents.shrink_to_fit();
        for parent in &mut self.parents {
            parent.listeners.shrink_to_fit();
        }
    }
}
