//! Snapshot lookups that record what they looked at, so that a change to any of it
//! invalidates the memoized result.

use std::sync::Arc;

use index::Snapshot;
use resources::{EndpointSlice, Endpoints, Object, ObjectRef};

/// One lookup: a change to what it names may change the result.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Dependency {
    /// `get(object)`.
    Object(ObjectRef),
    /// `endpoint_slices(namespace, service)`.
    Slices(String, String),
    /// `in_namespace(kind, namespace)`: any object of the kind there.
    Listing(resources::Kind, String),
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
        self.dependencies.push(Dependency::Object(object_ref));
        found
    }

    pub(crate) fn in_namespace(
        &mut self,
        kind: resources::Kind,
        namespace: &str,
    ) -> Vec<&'a Object> {
        self.dependencies
            .push(Dependency::Listing(kind, namespace.to_owned()));
        self.snapshot.in_namespace(kind, namespace).collect()
    }

    pub(crate) fn endpoint_slices(
        &mut self,
        namespace: &str,
        service: &str,
    ) -> Vec<&'a Arc<EndpointSlice>> {
        let slices = self.snapshot.endpoint_slices(namespace, service);
        self.dependencies
            .push(Dependency::Slices(namespace.to_owned(), service.to_owned()));
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
