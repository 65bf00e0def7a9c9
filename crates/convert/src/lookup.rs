//! Snapshot lookups that record what they looked at, so that a change to any of it
//! invalidates the memoized result. Every read of the snapshot by a conversion goes
//! through a [`Recorder`]: what must be converted again is decided by these records
//! alone.

use std::sync::Arc;

use index::Snapshot;
use resources::{EndpointSlice, Endpoints, Kind, Name, Object, ObjectRef};

use crate::gateway::listener::PortProtocols;
use crate::keys::GlobalConfig;
use crate::options::{ConvertOptions, ListenerPorts};

/// One lookup: a change to what it names may change the result.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Dependency {
    /// `get(object)`.
    Object(ObjectRef),
    /// `endpoint_slices(namespace, service)`.
    Slices(Name, Name),
    /// `in_namespace(kind, namespace)`: any object of the kind there.
    Listing(Kind, Name),
    /// `of_kind(kind)`: any object of the kind anywhere.
    Kind(Kind),
    /// `children_of(kind, parent)`: the objects of a kind naming a parent (the routes of
    /// a Gateway or ListenerSet, the ListenerSets of a Gateway).
    Children(Kind, ObjectRef),
    /// `listener_ports()`: the ports from the command line and those found busy.
    ListenerPorts,
    /// `port_protocols()`: the protocols our Gateways' listeners use on each port.
    PortProtocols,
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
        (Object::GatewayClass(x), Object::GatewayClass(y)) => Arc::ptr_eq(x, y),
        (Object::Gateway(x), Object::Gateway(y)) => Arc::ptr_eq(x, y),
        (Object::HttpRoute(x), Object::HttpRoute(y)) => Arc::ptr_eq(x, y),
        (Object::GrpcRoute(x), Object::GrpcRoute(y)) => Arc::ptr_eq(x, y),
        (Object::ReferenceGrant(x), Object::ReferenceGrant(y)) => Arc::ptr_eq(x, y),
        (Object::Pod(x), Object::Pod(y)) => Arc::ptr_eq(x, y),
        (Object::TlsRoute(x), Object::TlsRoute(y)) => Arc::ptr_eq(x, y),
        (Object::BackendTlsPolicy(x), Object::BackendTlsPolicy(y)) => Arc::ptr_eq(x, y),
        (Object::ListenerSet(x), Object::ListenerSet(y)) => Arc::ptr_eq(x, y),
        _ => false,
    };
    same_pointer || a == b
}

/// What every conversion of one snapshot shares: the snapshot, the command line, and
/// the global ConfigMap's keys (read once, recorded by each conversion that uses them).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Context<'a> {
    pub(crate) snapshot: &'a Snapshot,
    pub(crate) options: &'a ConvertOptions,
    pub(crate) listener_ports: &'a ListenerPorts,
    pub(crate) port_protocols: &'a PortProtocols,
    pub(crate) global: &'a GlobalConfig,
    /// The global ConfigMap, when one is configured.
    pub(crate) configmap: Option<&'a ObjectRef>,
    /// Whether lookups are recorded: not for a conversion that has no next one.
    pub(crate) recording: bool,
}

/// A snapshot whose lookups are recorded.
#[derive(Debug)]
pub(crate) struct Recorder<'a> {
    context: Context<'a>,
    pub(crate) dependencies: Vec<Dependency>,
    /// Whether the global ConfigMap is recorded: a conversion reads its keys dozens of
    /// times.
    global_recorded: bool,
    /// The last object looked up, and what was found: an Ingress's paths name their
    /// Service one after another.
    last_get: Option<(ObjectRef, Option<&'a Object>)>,
}

impl<'a> Recorder<'a> {
    pub(crate) fn new(context: Context<'a>) -> Self {
        Self {
            context,
            // An object's conversion looks up a handful of things (its class, the
            // ConfigMap, a Service and its slices): room for them at once. A certificate's
            // or the status's lookups take the same room, given back when kept.
            dependencies: Vec::with_capacity(if context.recording { 8 } else { 0 }),
            global_recorded: false,
            last_get: None,
        }
    }

    /// Records a lookup (made only when lookups are recorded).
    fn record(&mut self, dependency: impl FnOnce() -> Dependency) {
        if self.context.recording {
            self.dependencies.push(dependency());
        }
    }

    /// Records a lookup many reads of one conversion repeat, once.
    fn record_once(&mut self, dependency: Dependency) {
        if self.context.recording && !self.dependencies.contains(&dependency) {
            self.dependencies.push(dependency);
        }
    }

    /// The command-line settings (not part of the snapshot: nothing to record).
    pub(crate) fn options(&self) -> &'a ConvertOptions {
        self.context.options
    }

    /// The ports Gateway listeners are compared with (from the command line, and those
    /// found busy, which change).
    pub(crate) fn listener_ports(&mut self) -> &'a ListenerPorts {
        self.record_once(Dependency::ListenerPorts);
        self.context.listener_ports
    }

    /// The protocols every Gateway of ours uses on each port (a change converts again).
    pub(crate) fn port_protocols(&mut self) -> &'a PortProtocols {
        self.record_once(Dependency::PortProtocols);
        self.context.port_protocols
    }

    /// The global configuration keys; a change to the ConfigMap converts again.
    pub(crate) fn global(&mut self) -> &'a GlobalConfig {
        if let Some(configmap) = self.context.configmap
            && !self.global_recorded
        {
            self.global_recorded = true;
            self.record_once(Dependency::Object(configmap.clone()));
        }
        self.context.global
    }

    pub(crate) fn get(&mut self, object_ref: ObjectRef) -> Option<&'a Object> {
        if let Some((last, found)) = &self.last_get
            && *last == object_ref
        {
            // Recorded already.
            return *found;
        }
        let found = self.context.snapshot.get(&object_ref);
        if self.context.recording {
            self.dependencies
                .push(Dependency::Object(object_ref.clone()));
        }
        self.last_get = Some((object_ref, found));
        found
    }

    pub(crate) fn in_namespace(&mut self, kind: Kind, namespace: &str) -> Vec<&'a Object> {
        self.record(|| Dependency::Listing(kind, namespace.into()));
        self.context
            .snapshot
            .in_namespace(kind, namespace)
            .collect()
    }

    pub(crate) fn of_kind(&mut self, kind: Kind) -> Vec<&'a Object> {
        self.record(|| Dependency::Kind(kind));
        self.context.snapshot.of_kind(kind).collect()
    }

    /// The objects of one kind naming `parent` as theirs: the routes of a Gateway or a
    /// ListenerSet, the ListenerSets of a Gateway.
    pub(crate) fn children_of(&mut self, kind: Kind, parent: &ObjectRef) -> Vec<&'a Object> {
        // Checked first: the key is a copy, made only when it is recorded.
        if self.context.recording {
            self.record_once(Dependency::Children(kind, parent.clone()));
        }
        self.context.snapshot.children_of(kind, parent)
    }

    /// The EndpointSlices of the Service `service`.
    pub(crate) fn endpoint_slices(&mut self, service: &ObjectRef) -> Vec<&'a Arc<EndpointSlice>> {
        let service = (service.namespace.clone(), service.name.clone());
        let slices = self.context.snapshot.endpoint_slices(&service);
        self.record(|| Dependency::Slices(service.0, service.1));
        slices
    }

    pub(crate) fn endpoints(
        &mut self,
        namespace: &str,
        service: &str,
    ) -> Option<&'a Arc<Endpoints>> {
        match self.get(ObjectRef::new(Kind::Endpoints, namespace, service)) {
            Some(Object::Endpoints(endpoints)) => Some(endpoints),
            _ => None,
        }
    }
}

/// What reads Gateways and their ListenerSets: a conversion's [`Recorder`], or a snapshot
/// read unrecorded ([`Unrecorded`]) for what is computed whole at each conversion and
/// compared by value ([`crate::gateway::listener::PortProtocols`], the HTTPS frontend's
/// listener hosts).
pub(crate) trait Reader<'a> {
    /// `get(object)`.
    fn object(&mut self, object: ObjectRef) -> Option<&'a Object>;
    /// `children_of(kind, parent)`.
    fn children(&mut self, kind: Kind, parent: &ObjectRef) -> Vec<&'a Object>;
    /// The ports listeners are compared with.
    fn ports(&mut self) -> &'a ListenerPorts;
}

impl<'a> Reader<'a> for Recorder<'a> {
    fn object(&mut self, object: ObjectRef) -> Option<&'a Object> {
        self.get(object)
    }

    fn children(&mut self, kind: Kind, parent: &ObjectRef) -> Vec<&'a Object> {
        self.children_of(kind, parent)
    }

    fn ports(&mut self) -> &'a ListenerPorts {
        self.listener_ports()
    }
}

/// A snapshot and the listener ports, read without recording.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Unrecorded<'a> {
    pub(crate) snapshot: &'a Snapshot,
    pub(crate) ports: &'a ListenerPorts,
}

impl<'a> Reader<'a> for Unrecorded<'a> {
    fn object(&mut self, object: ObjectRef) -> Option<&'a Object> {
        self.snapshot.get(&object)
    }

    fn children(&mut self, kind: Kind, parent: &ObjectRef) -> Vec<&'a Object> {
        self.snapshot.children_of(kind, parent)
    }

    fn ports(&mut self) -> &'a ListenerPorts {
        self.ports
    }
}
