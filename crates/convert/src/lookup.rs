//! Snapshot lookups that record what they saw, so a memoized result can later be checked
//! against the current snapshot: it is reused only if every lookup still gives the same.

use std::sync::Arc;

use index::Snapshot;
use resources::{EndpointSlice, Endpoints, Object, ObjectRef};

/// One lookup and its answer.
#[derive(Debug, Clone)]
pub(crate) enum Dependency {
    /// `get(object)` answered this.
    Object(ObjectRef, Option<Object>),
    /// `endpoint_slices(namespace, service)` answered these.
    Slices(String, String, Vec<Arc<EndpointSlice>>),
}

impl Dependency {
    /// Whether the snapshot still answers the same.
    pub(crate) fn holds(&self, snapshot: &Snapshot) -> bool {
        match self {
            Dependency::Object(object_ref, seen) => match (snapshot.get(object_ref), seen) {
                (None, None) => true,
                (Some(now), Some(seen)) => same_object(now, seen),
                _ => false,
            },
            Dependency::Slices(namespace, service, seen) => {
                let now = snapshot.endpoint_slices(namespace, service);
                now.len() == seen.len()
                    && now
                        .iter()
                        .zip(seen)
                        .all(|(a, b)| Arc::ptr_eq(a, b) || **a == *b)
            }
        }
    }
}

/// Equal values; the pointer comparison is only a shortcut.
pub(crate) fn same_object(a: &Object, b: &Object) -> bool {
    let same_pointer = match (a, b) {
        (Object::Service(x), Object::Service(y)) => Arc::ptr_eq(x, y),
        (Object::Endpoints(x), Object::Endpoints(y)) => Arc::ptr_eq(x, y),
        (Object::Secret(x), Object::Secret(y)) => Arc::ptr_eq(x, y),
        (Object::Ingress(x), Object::Ingress(y)) => Arc::ptr_eq(x, y),
        (Object::ConfigMap(x), Object::ConfigMap(y)) => Arc::ptr_eq(x, y),
        (Object::IngressClass(x), Object::IngressClass(y)) => Arc::ptr_eq(x, y),
        (Object::EndpointSlice(x), Object::EndpointSlice(y)) => Arc::ptr_eq(x, y),
        (Object::Namespace(x), Object::Namespace(y)) => Arc::ptr_eq(x, y),
        _ => false,
    };
    same_pointer || a == b
}

/// A snapshot whose lookups are recorded.
#[derive(Debug)]
pub(crate) struct Recorder<'a> {
    snapshot: &'a Snapshot,
    pub(crate) dependencies: Vec<Dependency>,
}

impl<'a> Recorder<'a> {
    pub(crate) fn new(snapshot: &'a Snapshot) -> Self {
        Self {
            snapshot,
            dependencies: Vec::new(),
        }
    }

    pub(crate) fn get(&mut self, object_ref: ObjectRef) -> Option<&'a Object> {
        let found = self.snapshot.get(&object_ref);
        self.dependencies
            .push(Dependency::Object(object_ref, found.cloned()));
        found
    }

    pub(crate) fn endpoint_slices(
        &mut self,
        namespace: &str,
        service: &str,
    ) -> Vec<&'a Arc<EndpointSlice>> {
        let slices = self.snapshot.endpoint_slices(namespace, service);
        let seen = slices.iter().map(|s| Arc::clone(s)).collect();
        self.dependencies.push(Dependency::Slices(
            namespace.to_owned(),
            service.to_owned(),
            seen,
        ));
        slices
    }

    pub(crate) fn endpoints(
        &mut self,
        namespace: &str,
        service: &str,
    ) -> Option<&'a Arc<Endpoints>> {
        match self.get(ObjectRef::new(
            resources::Kind::Endpoints,
            namespace,
            service,
        )) {
            Some(Object::Endpoints(endpoints)) => Some(endpoints),
            _ => None,
        }
    }
}
