//! The merge's bookkeeping: claims on one key in merge order, the diagnostics each key
//! produced, and the keys to resolve again.

use std::sync::Arc;

use model::{BackendId, CertId, HostKey, PathMatch};
use resources::ObjectRef;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::contribution::{
    ClaimKind, Contribution, MergeOrder, PassthroughClaim, RouteClaim, TcpClaim, TlsClaim,
};
use crate::diagnostic::Diagnostic;

/// A claim's place in the merge order: its object's order, then which claim of it.
pub(super) type Position = (Arc<MergeOrder>, ClaimKind);

/// The position of a contribution's claim.
pub(super) fn position(contribution: &Contribution, kind: ClaimKind) -> Position {
    (contribution.order.clone(), kind)
}

/// A host and path.
pub(super) type RouteKey = (HostKey, PathMatch);

/// One of a contribution's TLS or route claims, by its index there.
#[derive(Debug, Clone)]
pub(super) struct Held {
    pub(super) contribution: Arc<Contribution>,
    pub(super) index: usize,
}

impl Held {
    /// The route claim held (a `Held` in route claims always indexes `routes`).
    pub(super) fn route(&self) -> &RouteClaim {
        &self.contribution.routes[self.index]
    }

    /// The passthrough claim held (a `Held` in passthrough claims always indexes
    /// `passthrough`).
    pub(super) fn passthrough(&self) -> &PassthroughClaim {
        &self.contribution.passthrough[self.index]
    }

    /// The TCP claim held (a `Held` in TCP claims always indexes `tcp`).
    pub(super) fn tcp(&self) -> &TcpClaim {
        &self.contribution.tcp[self.index]
    }

    /// The TLS claim held (a `Held` in TLS claims always indexes `tls`).
    pub(super) fn tls(&self) -> &TlsClaim {
        &self.contribution.tls[self.index]
    }
}

/// The claims on one key, oldest first. Nearly every key has one claim, so a sorted
/// vector (one small allocation) serves better than a tree.
#[derive(Debug, Clone)]
pub(super) struct Claims<T>(Vec<(Position, T)>);

impl<T> Default for Claims<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<T> Claims<T> {
    pub(super) fn insert(&mut self, position: Position, claim: T) {
        match self.0.binary_search_by(|(p, _)| p.cmp(&position)) {
            Ok(index) => self.0[index] = (position, claim),
            Err(index) => {
                // A first push would make room for four, and nearly every key
                // keeps a single claim for its whole life; later pushes grow as
                // usual, so a key claimed many times is not copied at each claim.
                if self.0.capacity() == 0 {
                    self.0.reserve_exact(1);
                }
                self.0.insert(index, (position, claim));
            }
        }
    }

    pub(super) fn remove(&mut self, position: &Position) {
        if let Ok(index) = self.0.binary_search_by(|(p, _)| p.cmp(position)) {
            self.0.remove(index);
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = (&Position, &T)> {
        self.0.iter().map(|(p, c)| (p, c))
    }

    pub(super) fn values(&self) -> impl Iterator<Item = &T> {
        self.0.iter().map(|(_, c)| c)
    }
}

/// Diagnostics by the key that produced them, so resolving a key replaces its own.
#[derive(Debug, Default)]
pub(super) struct Diagnostics {
    pub(super) objects: FxHashMap<ObjectRef, Vec<Diagnostic>>,
    pub(super) tls: FxHashMap<HostKey, Vec<Diagnostic>>,
    pub(super) routes: FxHashMap<RouteKey, Vec<Diagnostic>>,
    pub(super) backends: FxHashMap<BackendId, Vec<Diagnostic>>,
    pub(super) default: Vec<Diagnostic>,
    pub(super) certificates: FxHashMap<CertId, Vec<Diagnostic>>,
    pub(super) passthrough: FxHashMap<HostKey, Vec<Diagnostic>>,
    pub(super) tcp: FxHashMap<u16, Vec<Diagnostic>>,
}

/// Stores a key's diagnostics; the key is cloned only when there are some.
pub(super) fn set<K: Clone + Eq + std::hash::Hash>(
    map: &mut FxHashMap<K, Vec<Diagnostic>>,
    key: &K,
    diagnostics: Vec<Diagnostic>,
) {
    if diagnostics.is_empty() {
        // Nearly every key reports nothing, and nearly every map is empty.
        if !map.is_empty() {
            map.remove(key);
        }
    } else {
        map.insert(key.clone(), diagnostics);
    }
}

impl Diagnostics {
    pub(super) fn all(&self) -> impl Iterator<Item = &Diagnostic> {
        self.objects
            .values()
            .chain(self.tls.values())
            .chain(self.routes.values())
            .chain(self.backends.values())
            .chain(self.certificates.values())
            .chain(self.passthrough.values())
            .chain(self.tcp.values())
            .flatten()
            .chain(&self.default)
    }
}

/// Keys whose resolution must be redone.
#[derive(Debug, Default)]
pub(super) struct Dirty {
    pub(super) tls: FxHashSet<HostKey>,
    pub(super) routes: FxHashSet<RouteKey>,
    pub(super) default: bool,
    pub(super) backends: FxHashSet<BackendId>,
    pub(super) certificates: FxHashSet<CertId>,
    pub(super) host_certificates: FxHashSet<HostKey>,
    pub(super) passthrough: FxHashSet<HostKey>,
    /// TCP ports.
    pub(super) tcp: std::collections::BTreeSet<u16>,
}
