//! The single-writer object store: applies source events and publishes immutable
//! snapshots, with the projections the converters look objects up by.

#![forbid(unsafe_code)]

use std::collections::BTreeMap;

use imbl::{OrdMap, OrdSet};
use std::sync::Arc;

use resources::{EndpointSlice, Endpoints, Kind, Name, Object, ObjectRef};

/// What a source reports. A list (or relist) is bracketed by `Init` and `InitDone`: the
/// objects applied in between replace everything the list covers, so whatever it does not
/// list again is deleted. Brackets do not interleave: a source sends each one whole.
/// [`Index::handle`] says what it does with an event outside that order.
#[derive(Debug, Clone)]
pub enum SourceEvent {
    /// A full list of what the scope covers begins.
    Init(ListScope),
    /// An object of the list in progress.
    InitApply(Object),
    /// An object of the list in progress that is the version the source last delivered
    /// (the same resourceVersion): the store keeps the one it holds, so a relist does not
    /// hold a second copy of every unchanged object.
    InitUnchanged(ObjectRef),
    /// The list is complete.
    InitDone,
    /// A whole list in one event, from a source that holds it whole: the same as
    /// `Init`, an `InitApply` per object and `InitDone`. Each object comes with its
    /// reference, which the source computed where it decoded the object (on every
    /// core), so the store does not compute it again one object at a time.
    List(ListScope, Vec<(ObjectRef, Object)>),
    /// An object was created or changed.
    Apply(Object),
    /// An object was deleted.
    Delete(ObjectRef),
}

/// Which objects a list covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListScope {
    /// Every object (a manifest directory lists everything at once).
    Everything,
    /// One kind, in one namespace or, with `None`, in all of them (one API watcher).
    Kind {
        /// The kind listed.
        kind: Kind,
        /// The namespace listed, if the list is namespaced.
        namespace: Option<String>,
        /// The one name listed, when the watcher selects by name: two such watchers of
        /// one kind and namespace must not take each other's object for deleted.
        name: Option<String>,
    },
}

impl ListScope {
    fn covers(&self, object: &ObjectRef) -> bool {
        match self {
            ListScope::Everything => true,
            ListScope::Kind {
                kind,
                namespace,
                name,
            } => {
                object.kind == *kind
                    && namespace.as_ref().is_none_or(|ns| *ns == object.namespace)
                    && name.as_ref().is_none_or(|name| *name == object.name)
            }
        }
    }
}

/// An immutable view of every object, with lookups by relationship. Persistent maps make
/// taking a snapshot O(1): it shares everything with the store until the store changes.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// One map per kind, in [`Kind::ALL`]'s order (the references' own): a list of many
    /// kinds fills them side by side, and nothing compares a kind to find an object.
    objects: [OrdMap<ObjectRef, Object>; Kind::ALL.len()],
    /// A service's EndpointSlice names, sorted: a service has one or a few, for which a
    /// persistent set's node (hundreds of bytes) would cost more than the names.
    slices_by_service: OrdMap<(Name, Name), Vec<Name>>,
    /// Routes by the Gateways and ListenerSets their `parentRefs` name, and ListenerSets
    /// by the Gateway theirs names: (child kind, parent) → the children.
    children_by_parent: OrdMap<(Kind, ObjectRef), OrdSet<ObjectRef>>,
}

impl Snapshot {
    /// Looks an object up.
    pub fn get(&self, object: &ObjectRef) -> Option<&Object> {
        self.of(object.kind).get(object)
    }

    /// The map of one kind's objects.
    fn of(&self, kind: Kind) -> &OrdMap<ObjectRef, Object> {
        &self.objects[kind_index(kind)]
    }

    /// Every object of one kind, ordered by namespace and name.
    pub fn of_kind(&self, kind: Kind) -> impl Iterator<Item = &Object> {
        self.of(kind).values()
    }

    /// Whether it holds no object.
    fn is_empty(&self) -> bool {
        self.objects.iter().all(OrdMap::is_empty)
    }

    /// The references of every object of one kind, in order: shared with the store, not
    /// computed again from each object.
    pub fn refs_of_kind(&self, kind: Kind) -> impl Iterator<Item = &ObjectRef> {
        self.of(kind).keys()
    }

    /// Every object of one kind in one namespace, ordered by name.
    pub fn in_namespace<'a>(
        &'a self,
        kind: Kind,
        namespace: &str,
    ) -> impl Iterator<Item = &'a Object> + use<'a> {
        let start = ObjectRef::new(kind, namespace, "");
        let namespace = namespace.to_owned();
        self.of(kind)
            .range(start..)
            .take_while(move |(r, _)| r.namespace == namespace)
            .map(|(_, o)| o)
    }

    /// Number of objects of one kind.
    pub fn count(&self, kind: Kind) -> usize {
        self.of(kind).len()
    }

    /// The EndpointSlices labelled for a service (its namespace and name), ordered by
    /// name.
    pub fn endpoint_slices(&self, service: &(Name, Name)) -> Vec<&Arc<EndpointSlice>> {
        let Some(names) = self.slices_by_service.get(service) else {
            return Vec::new();
        };
        names
            .iter()
            .filter_map(|name| {
                let slice = ObjectRef {
                    kind: Kind::EndpointSlice,
                    namespace: service.0.clone(),
                    name: name.clone(),
                };
                match self.get(&slice) {
                    Some(Object::EndpointSlice(slice)) => Some(slice),
                    _ => None,
                }
            })
            .collect()
    }

    /// The objects of one kind that name `parent` as theirs (see [`Object::parents`]):
    /// the routes whose `parentRefs` name a Gateway or a ListenerSet, the ListenerSets
    /// whose `parentRef` names a Gateway. Ordered by namespace and name.
    pub fn children_of(&self, kind: Kind, parent: &ObjectRef) -> Vec<&Object> {
        let key = (kind, parent.clone());
        self.children_by_parent
            .get(&key)
            .into_iter()
            .flatten()
            .filter_map(|route| self.get(route))
            .collect()
    }

    /// The Endpoints object of a service, if any.
    pub fn endpoints(&self, namespace: &str, service: &str) -> Option<&Arc<Endpoints>> {
        match self.get(&ObjectRef::new(Kind::Endpoints, namespace, service)) {
            Some(Object::Endpoints(endpoints)) => Some(endpoints),
            _ => None,
        }
    }
}

/// What [`Snapshot::shed`] took out of a snapshot: dropped where and when its owner
/// chooses (freeing a cluster's objects one by one takes a while).
#[derive(Debug, Default)]
pub struct Shed {
    objects: Vec<OrdMap<ObjectRef, Object>>,
    slices_by_service: Option<OrdMap<(Name, Name), Vec<Name>>>,
}

impl Snapshot {
    /// Takes every object of `kinds` out (and the EndpointSlices' projection with them),
    /// for a reader that needs them no more: the rest reads as a snapshot that never held
    /// them.
    pub fn shed(&mut self, kinds: &[Kind]) -> Shed {
        let mut shed = Shed::default();
        for &kind in kinds {
            shed.objects
                .push(std::mem::take(&mut self.objects[kind_index(kind)]));
            if kind == Kind::EndpointSlice {
                shed.slices_by_service = Some(std::mem::take(&mut self.slices_by_service));
            }
        }
        shed
    }
}

impl Shed {
    /// The objects taken out, kind after kind in the order they were shed, each kind's
    /// in key order, for a reader that frees each once done with it: an object goes when
    /// its last holder drops it. The EndpointSlices' projection, if shed, goes here.
    pub fn into_objects(self) -> Vec<(ObjectRef, Object)> {
        let mut objects = Vec::with_capacity(self.objects.iter().map(OrdMap::len).sum());
        for kind in self.objects {
            objects.extend(kind);
        }
        objects
    }

    /// Drops each kind's objects as a task of the pool's, whose threads decoded most of
    /// them (a thread frees its own allocations fastest), without waiting for it.
    pub fn drop_on_pool(self) {
        for objects in self.objects {
            rayon::spawn(move || drop(objects));
        }
        if let Some(slices_by_service) = self.slices_by_service {
            rayon::spawn(move || drop(slices_by_service));
        }
    }
}

/// One object that differs between two snapshots.
#[derive(Debug, Clone)]
pub struct Change {
    /// Which object.
    pub object_ref: ObjectRef,
    /// Its value in the earlier snapshot, if it existed.
    pub before: Option<Object>,
    /// Its value now, if it exists.
    pub after: Option<Object>,
}

impl Snapshot {
    /// Every object added, changed or removed since `earlier`, in key order. Parts of the
    /// two snapshots that are shared (everything an update did not touch) are not visited,
    /// so this costs in proportion to the changes, not to the cluster.
    pub fn changes_since(&self, earlier: &Snapshot) -> Vec<Change> {
        // The kinds in order: the references' order.
        (earlier.objects.iter().zip(&self.objects))
            .flat_map(|(earlier, now)| earlier.diff(now))
            .map(|item| match item {
                imbl::ordmap::DiffItem::Add(r, o) => Change {
                    object_ref: r.clone(),
                    before: None,
                    after: Some(o.clone()),
                },
                imbl::ordmap::DiffItem::Update {
                    old: (r, before),
                    new: (_, after),
                } => Change {
                    object_ref: r.clone(),
                    before: Some(before.clone()),
                    after: Some(after.clone()),
                },
                imbl::ordmap::DiffItem::Remove(r, o) => Change {
                    object_ref: r.clone(),
                    before: Some(o.clone()),
                    after: None,
                },
            })
            .collect()
    }
}

/// A kind's place in [`Kind::ALL`] (its declaration order, checked by a test).
fn kind_index(kind: Kind) -> usize {
    kind as usize
}

/// The store. Only its owner writes; readers get `Arc<Snapshot>`s.
#[derive(Debug, Default)]
pub struct Index {
    current: Snapshot,
    /// The list between its `Init` and its `InitDone`.
    listing: Option<OpenList>,
}

/// A list in progress: its scope, and what it listed so far (`None`: the object the
/// store holds, unchanged).
#[derive(Debug)]
struct OpenList {
    scope: ListScope,
    listed: BTreeMap<ObjectRef, Option<Object>>,
}

impl Index {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies one event. What changed is not recorded: compare two snapshots
    /// ([`Snapshot::changes_since`]) to find it.
    ///
    /// Events out of the list order are a source's bug. They are logged and handled so
    /// that they delete nothing: an `InitApply` outside a list is applied as a single
    /// change (a list nobody opened has no scope to replace), an `InitDone` without its
    /// `Init` is ignored, and an `Init` inside a list drops the unfinished list.
    pub fn handle(&mut self, event: SourceEvent) {
        match event {
            SourceEvent::Init(scope) => {
                let fresh = OpenList {
                    scope,
                    listed: BTreeMap::new(),
                };
                if let Some(unfinished) = self.listing.replace(fresh) {
                    tracing::warn!(scope = ?unfinished.scope, "a list began inside another; the unfinished one is dropped");
                }
            }
            SourceEvent::InitApply(object) => match &mut self.listing {
                Some(list) => {
                    list.listed.insert(object.object_ref(), Some(object));
                }
                None => {
                    tracing::warn!(object = %object.object_ref(), "a listed object arrived outside a list; applied as a single change");
                    self.apply(object.object_ref(), object);
                }
            },
            SourceEvent::InitUnchanged(object_ref) => match &mut self.listing {
                Some(list) => {
                    list.listed.insert(object_ref, None);
                }
                // Outside a list it would change nothing.
                None => {
                    tracing::warn!(object = %object_ref, "an unchanged listed object arrived outside a list; ignored");
                }
            },
            SourceEvent::InitDone => match self.listing.take() {
                Some(list) => self.replace(list),
                None => tracing::warn!("a list ended that never began; ignored"),
            },
            SourceEvent::List(scope, objects) => {
                if let Some(unfinished) = self.listing.take() {
                    tracing::warn!(scope = ?unfinished.scope, "a whole list arrived inside another; the unfinished one is dropped");
                }
                debug_assert!(objects.iter().all(|(r, o)| *r == o.object_ref()));
                // A first list in reference order (a manifest directory's) fills the
                // empty store as it comes, each kind's map on a core of its own: no
                // ordered copy of it to build first.
                if self.current.is_empty() && objects.is_sorted_by(|a, b| a.0 < b.0) {
                    self.current = Snapshot::filled(objects);
                    return;
                }
                // Built at once: sorted input (as a source's ordered map gives it) makes
                // this a single pass, not one insertion each.
                let listed = objects.into_iter().map(|(r, o)| (r, Some(o))).collect();
                self.replace(OpenList { scope, listed });
            }
            SourceEvent::Apply(object) => self.apply(object.object_ref(), object),
            SourceEvent::Delete(object_ref) => self.current.delete(&object_ref),
        }
    }

    /// Makes what `list` covers exactly what it listed.
    fn replace(&mut self, list: OpenList) {
        let OpenList { scope, listed } = list;
        let covered: Vec<&OrdMap<ObjectRef, Object>> = match &scope {
            ListScope::Everything => self.current.objects.iter().collect(),
            ListScope::Kind { kind, .. } => vec![self.current.of(*kind)],
        };
        let gone: Vec<ObjectRef> = (covered.into_iter())
            .flat_map(OrdMap::keys)
            .filter(|r| scope.covers(r) && !listed.contains_key(r))
            .cloned()
            .collect();
        for object_ref in gone {
            self.current.delete(&object_ref);
        }
        // A first list (a start) fills an empty store: nothing to compare or take back.
        let empty = self.current.is_empty();
        for (object_ref, object) in listed {
            match object {
                Some(object) if empty => self.current.store_absent(object_ref, object),
                Some(object) => self.apply(object_ref, object),
                None if self.current.get(&object_ref).is_none() => {
                    // The source lists as unchanged what it never delivered: its bug. The
                    // object stays unknown until its next change; nothing is invented.
                    tracing::warn!(object = %object_ref, "listed as unchanged, but never delivered; ignored");
                }
                None => {}
            }
        }
    }

    /// The current state, as an immutable snapshot.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        Arc::new(self.current.clone())
    }

    /// Stores `object`, known by `object_ref` (computed once by the caller).
    fn apply(&mut self, object_ref: ObjectRef, object: Object) {
        if self.current.get(&object_ref) == Some(&object) {
            return;
        }
        self.current.unproject(&object_ref);
        self.current.store_absent(object_ref, object);
    }
}

/// Below this many objects, a first fill is faster on the calling thread alone.
const PARALLEL_FILL_FROM: usize = 4096;

/// Each EndpointSlice's service (namespace and name) and name, of `objects` in their
/// order.
fn service_slices(objects: &[(ObjectRef, Object)]) -> Vec<((Name, Name), Name)> {
    (objects.iter())
        .filter_map(|(object_ref, object)| match object {
            Object::EndpointSlice(slice) => slice.service_name.as_ref().map(|service| {
                let service = (object_ref.namespace.clone(), Name::from(service));
                (service, object_ref.name.clone())
            }),
            _ => None,
        })
        .collect()
}

/// The services' slices projected from [`service_slices`] of objects sorted by
/// reference, each once: each service's entry is inserted once, in key order.
fn slices_by_service(mut slices: Vec<((Name, Name), Name)>) -> OrdMap<(Name, Name), Vec<Name>> {
    // Stable: a service's slices are in one namespace, so they come in name order, and
    // stay so. Slices are named after their service, so the order is nearly the
    // services' already, which a stable sort finds in a pass or two.
    slices.sort_by(|a, b| a.0.cmp(&b.0));
    let mut by_service = OrdMap::new();
    let mut slices = slices.into_iter().peekable();
    while let Some((service, first)) = slices.next() {
        let mut names = vec![first];
        while let Some((_, name)) = slices.next_if(|(next, _)| *next == service) {
            names.push(name);
        }
        by_service.insert(service, names);
    }
    by_service
}

impl Snapshot {
    /// The snapshot of `objects`, sorted by reference, each once. Each kind's map (with
    /// the projections its objects make) is filled on its own, on every core, and the
    /// parts put together: a persistent map is filled one insertion at a time, so a
    /// manifest directory's 300k objects took ~0.25 s on one core while the other waited.
    fn filled(objects: Vec<(ObjectRef, Object)>) -> Snapshot {
        use rayon::prelude::*;
        if objects.len() < PARALLEL_FILL_FROM || rayon::current_num_threads() < 2 {
            let mut whole = Snapshot::default();
            for (object_ref, object) in objects {
                whole.store_absent(object_ref, object);
            }
            return whole;
        }
        let fill = |objects: Vec<(ObjectRef, Object)>| {
            // The services' slices are projected apart, beside the objects: filled one
            // slice at a time, looked up then inserted, that projection took twice as
            // long as the slices' own map (~80 ms against ~40 at 100k services).
            let slices = service_slices(&objects);
            let (slices_by_service, mut part) = rayon::join(
                || slices_by_service(slices),
                || {
                    let mut part = Snapshot::default();
                    for (object_ref, object) in objects {
                        part.store_without_slice_projection(object_ref, object);
                    }
                    part
                },
            );
            part.slices_by_service = slices_by_service;
            part
        };
        // Split from the end, so each object is moved once.
        let mut runs = Vec::new();
        let mut rest = objects;
        while let Some((last, _)) = rest.last() {
            let kind = last.kind;
            match rest.partition_point(|(r, _)| r.kind < kind) {
                0 => runs.push(std::mem::take(&mut rest)),
                start => runs.push(rest.split_off(start)),
            }
        }
        let parts: Vec<Snapshot> = runs.into_par_iter().map(fill).collect();
        let mut whole = Snapshot::default();
        for part in parts {
            whole.absorb(part);
        }
        whole
    }

    /// Takes in the objects and projections of a part filled apart. Each part holds
    /// other kinds, and the projections are keyed by the child's kind (routes by parent)
    /// or hold one kind only (EndpointSlices by service): no key is in two parts.
    fn absorb(&mut self, part: Snapshot) {
        fn join<K: Ord + Clone, V: Clone>(into: &mut OrdMap<K, V>, part: OrdMap<K, V>) {
            if into.is_empty() {
                *into = part;
            } else {
                into.extend(part);
            }
        }
        for (into, part) in self.objects.iter_mut().zip(part.objects) {
            join(into, part);
        }
        join(&mut self.slices_by_service, part.slices_by_service);
        join(&mut self.children_by_parent, part.children_by_parent);
    }

    /// Stores an object the store does not hold, with its projections. (The persistent
    /// maps' `entry` looks a key up two or three times: a lookup, then an insertion only
    /// for a new key, looks it up once or twice.)
    fn store_absent(&mut self, object_ref: ObjectRef, object: Object) {
        if let Object::EndpointSlice(slice) = &object
            && let Some(service) = &slice.service_name
        {
            let key = (object_ref.namespace.clone(), Name::from(service));
            match self.slices_by_service.get_mut(&key) {
                Some(names) => {
                    if let Err(at) = names.binary_search(&object_ref.name) {
                        names.insert(at, object_ref.name.clone());
                    }
                }
                None => {
                    self.slices_by_service
                        .insert(key, vec![object_ref.name.clone()]);
                }
            }
        }
        self.store_without_slice_projection(object_ref, object);
    }

    /// [`Snapshot::store_absent`] but for an EndpointSlice's place among its service's
    /// slices, which the caller projects.
    fn store_without_slice_projection(&mut self, object_ref: ObjectRef, object: Object) {
        for parent in object.parents() {
            let key = (object_ref.kind, parent);
            match self.children_by_parent.get_mut(&key) {
                Some(children) => {
                    children.insert(object_ref.clone());
                }
                None => {
                    let children = OrdSet::unit(object_ref.clone());
                    self.children_by_parent.insert(key, children);
                }
            }
        }
        self.objects[kind_index(object_ref.kind)].insert(object_ref, object);
    }

    fn delete(&mut self, object_ref: &ObjectRef) {
        self.unproject(object_ref);
        self.objects[kind_index(object_ref.kind)].remove(object_ref);
    }

    fn unproject(&mut self, object_ref: &ObjectRef) {
        // The field itself, not `get`: the projections are changed while it is read.
        let Some(old) = self.objects[kind_index(object_ref.kind)].get(object_ref) else {
            return;
        };
        for parent in old.parents() {
            let key = (object_ref.kind, parent);
            if let Some(children) = self.children_by_parent.get_mut(&key) {
                children.remove(object_ref);
                if children.is_empty() {
                    self.children_by_parent.remove(&key);
                }
            }
        }
        let Object::EndpointSlice(old) = old else {
            return;
        };
        let Some(service) = &old.service_name else {
            return;
        };
        let key = (object_ref.namespace.clone(), Name::from(service));
        if let Some(names) = self.slices_by_service.get_mut(&key) {
            if let Ok(at) = names.binary_search(&object_ref.name) {
                names.remove(at);
            }
            if names.is_empty() {
                self.slices_by_service.remove(&key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use resources::decode_manifest;

    /// A service's key for [`Snapshot::endpoint_slices`].
    fn service_key(namespace: &str, name: &str) -> (Name, Name) {
        (Name::from(namespace), Name::from(name))
    }

    fn objects(text: &str) -> Vec<Object> {
        let decoded = decode_manifest(text, false);
        assert!(decoded.errors.is_empty(), "{:?}", decoded.errors);
        decoded.objects
    }

    fn slice(name: &str, service: &str) -> Object {
        objects(&format!("apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{name: {name}, labels: {{kubernetes.io/service-name: {service}}}}}\naddressType: IPv4\nendpoints: []\n")).remove(0)
    }

    #[test]
    fn relist_deletes_what_vanished_and_reports_only_real_changes() {
        let mut index = Index::new();
        let empty = index.snapshot();
        index.handle(SourceEvent::Init(ListScope::Everything));
        index.handle(SourceEvent::InitApply(slice("a", "web")));
        index.handle(SourceEvent::InitApply(slice("b", "web")));
        index.handle(SourceEvent::InitDone);
        let listed = index.snapshot();
        assert_eq!(listed.changes_since(&empty).len(), 2);
        assert_eq!(
            index
                .snapshot()
                .endpoint_slices(&service_key("default", "web"))
                .len(),
            2
        );

        index.handle(SourceEvent::Apply(slice("a", "web")));
        assert!(
            index.snapshot().changes_since(&listed).is_empty(),
            "same value"
        );

        index.handle(SourceEvent::Init(ListScope::Everything));
        index.handle(SourceEvent::InitApply(slice("a", "api")));
        index.handle(SourceEvent::InitDone);
        let changed = index.snapshot().changes_since(&listed);
        let names: Vec<&str> = changed.iter().map(|c| c.object_ref.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        let snapshot = index.snapshot();
        assert!(
            snapshot
                .endpoint_slices(&service_key("default", "web"))
                .is_empty()
        );
        assert_eq!(
            snapshot
                .endpoint_slices(&service_key("default", "api"))
                .len(),
            1
        );
        assert_eq!(snapshot.count(Kind::EndpointSlice), 1);
        assert_eq!(
            snapshot.count(Kind::EndpointSlice),
            snapshot.of_kind(Kind::EndpointSlice).count()
        );
    }

    #[test]
    fn the_references_of_a_kind_are_those_of_its_objects_in_order() {
        let mut index = Index::new();
        for object in [
            service("shop", "web"),
            slice("b", "web"),
            service("default", "web"),
            slice("a", "web"),
            service("default", "api"),
        ] {
            index.handle(SourceEvent::Apply(object));
        }
        let snapshot = index.snapshot();
        for kind in [Kind::Service, Kind::EndpointSlice, Kind::Ingress] {
            let refs: Vec<ObjectRef> = snapshot.refs_of_kind(kind).cloned().collect();
            let computed: Vec<ObjectRef> = snapshot.of_kind(kind).map(Object::object_ref).collect();
            assert_eq!(refs, computed);
        }
        let names: Vec<String> = (snapshot.refs_of_kind(Kind::Service))
            .map(|r| format!("{}/{}", r.namespace, r.name))
            .collect();
        assert_eq!(names, ["default/api", "default/web", "shop/web"]);
    }

    #[test]
    fn a_whole_list_event_is_the_same_as_its_bracket() {
        let keyed = |object: Object| (object.object_ref(), object);
        let mut bracketed = Index::new();
        let mut whole = Index::new();
        let lists = [
            vec![
                slice("a", "web"),
                slice("b", "web"),
                service("default", "web"),
            ],
            vec![slice("a", "api"), service("default", "web")],
        ];
        for list in lists {
            bracketed.handle(SourceEvent::Init(ListScope::Everything));
            for object in &list {
                bracketed.handle(SourceEvent::InitApply(object.clone()));
            }
            bracketed.handle(SourceEvent::InitDone);
            let mut keyed_list: Vec<_> = list.into_iter().map(keyed).collect();
            keyed_list.sort_by(|a, b| a.0.cmp(&b.0));
            whole.handle(SourceEvent::List(ListScope::Everything, keyed_list));
            let (bracketed, whole) = (bracketed.snapshot(), whole.snapshot());
            assert!(whole.changes_since(&bracketed).is_empty());
            assert_eq!(
                whole.endpoint_slices(&service_key("default", "api")).len(),
                bracketed
                    .endpoint_slices(&service_key("default", "api"))
                    .len()
            );
            assert_eq!(
                whole.endpoint_slices(&service_key("default", "web")).len(),
                bracketed
                    .endpoint_slices(&service_key("default", "web"))
                    .len()
            );
            assert_eq!(whole.count(Kind::Service), 1);
        }
        // A whole list inside an open one drops the unfinished list, as an `Init` does.
        whole.handle(SourceEvent::Init(ListScope::Everything));
        whole.handle(SourceEvent::InitApply(slice("c", "web")));
        whole.handle(SourceEvent::List(
            ListScope::Everything,
            vec![keyed(service("default", "web"))],
        ));
        whole.handle(SourceEvent::InitDone);
        let snapshot = whole.snapshot();
        assert_eq!(snapshot.count(Kind::EndpointSlice), 0);
        assert_eq!(snapshot.count(Kind::Service), 1);
    }

    /// A first list fills the empty store directly when it is in reference order; out of
    /// order, or naming an object twice (the last one stays), it is sorted first: the
    /// same store either way.
    #[test]
    fn a_first_list_in_any_order_fills_the_same_store() {
        let keyed = |object: Object| (object.object_ref(), object);
        let mut sorted: Vec<_> = [
            slice("a", "web"),
            slice("b", "web"),
            service("default", "web"),
            service("default", "api"),
        ]
        .into_iter()
        .map(keyed)
        .collect();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        let mut in_order = Index::new();
        in_order.handle(SourceEvent::List(ListScope::Everything, sorted.clone()));
        let mut reversed = sorted.clone();
        reversed.reverse();
        let mut twice = sorted.clone();
        twice.insert(2, sorted[0].clone());
        for list in [reversed, twice] {
            let mut index = Index::new();
            index.handle(SourceEvent::List(ListScope::Everything, list));
            let (index, in_order) = (index.snapshot(), in_order.snapshot());
            assert!(index.changes_since(&in_order).is_empty());
            assert_eq!(
                index.endpoint_slices(&service_key("default", "web")).len(),
                2
            );
            assert_eq!(index.count(Kind::Service), 2);
        }
    }

    /// A list large enough to be filled kind by kind on the pool's threads fills the
    /// same store as the same objects applied one at a time.
    #[test]
    fn a_large_first_list_fills_the_same_store_as_single_changes() {
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build_global();
        let mut list: Vec<Object> = Vec::new();
        for n in 0..PARALLEL_FILL_FROM / 2 {
            list.push(service("default", &format!("svc-{n}")));
            list.push(slice(&format!("slice-{n}"), &format!("svc-{}", n / 2)));
        }
        for n in 0..50 {
            list.push(grpc_route(
                &format!("route-{n}"),
                "[{name: gw}, {name: other}]",
            ));
        }
        let mut sorted: Vec<_> = list.iter().map(|o| (o.object_ref(), o.clone())).collect();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        assert!(sorted.len() >= PARALLEL_FILL_FROM);
        let mut filled = Index::new();
        filled.handle(SourceEvent::List(ListScope::Everything, sorted));
        let mut applied = Index::new();
        for object in list.into_iter().rev() {
            applied.handle(SourceEvent::Apply(object));
        }
        let (filled, applied) = (filled.snapshot(), applied.snapshot());
        assert!(filled.changes_since(&applied).is_empty());
        assert!(applied.changes_since(&filled).is_empty());
        for kind in Kind::ALL {
            assert_eq!(filled.count(kind), applied.count(kind), "{kind:?}");
            assert!(filled.of_kind(kind).eq(applied.of_kind(kind)), "{kind:?}");
        }
        assert_eq!(filled.count(Kind::Service), PARALLEL_FILL_FROM / 2);
        assert_eq!(filled.slices_by_service, applied.slices_by_service);
        assert_eq!(filled.children_by_parent, applied.children_by_parent);
        let slices = filled.endpoint_slices(&service_key("default", "svc-7"));
        let names: Vec<_> = slices
            .iter()
            .filter_map(|s| s.metadata.name.as_deref())
            .collect();
        assert_eq!(names, ["slice-14", "slice-15"]);
        let gateway = ObjectRef::new(Kind::Gateway, "team", "gw");
        assert_eq!(filled.children_of(Kind::GrpcRoute, &gateway).len(), 50);
    }

    /// A snapshot that shed kinds reads as one that never held them, and the shed
    /// objects are all handed over.
    #[test]
    fn a_snapshot_that_shed_kinds_reads_as_one_that_never_held_them() {
        let objects = [
            service("default", "web"),
            slice("web-1", "web"),
            grpc_route("route", "[{name: gw}]"),
        ];
        let mut whole = Index::new();
        let mut without = Index::new();
        for object in objects {
            whole.handle(SourceEvent::Apply(object.clone()));
            if !matches!(object.kind(), Kind::Service | Kind::EndpointSlice) {
                without.handle(SourceEvent::Apply(object));
            }
        }
        let mut shedding = Snapshot::clone(&whole.snapshot());
        let shed = shedding.shed(&[Kind::Service, Kind::EndpointSlice]);
        let without = without.snapshot();
        assert!(shedding.changes_since(&without).is_empty());
        assert!(without.changes_since(&shedding).is_empty());
        assert_eq!(shedding.slices_by_service, without.slices_by_service);
        assert!(
            shedding
                .endpoint_slices(&service_key("default", "web"))
                .is_empty()
        );
        assert_eq!(shedding.count(Kind::GrpcRoute), 1);
        let counts: Vec<usize> = shed.objects.iter().map(OrdMap::len).collect();
        assert_eq!(counts, [1, 1]);
        assert_eq!(shed.slices_by_service.map(|by| by.len()), Some(1));
        // The store it came from still holds everything.
        assert_eq!(whole.snapshot().count(Kind::Service), 1);
    }

    #[test]
    fn a_kinds_index_is_its_place_among_every_kind() {
        for (place, kind) in Kind::ALL.into_iter().enumerate() {
            assert_eq!(kind_index(kind), place, "{kind:?}");
        }
    }

    fn service(namespace: &str, name: &str) -> Object {
        objects(&format!(
            "apiVersion: v1\nkind: Service\nmetadata: {{name: {name}, namespace: {namespace}}}\n"
        ))
        .remove(0)
    }

    #[test]
    fn a_relist_keeps_the_objects_it_lists_as_unchanged_and_deletes_what_it_does_not_list() {
        let arc = |object: Option<&Object>| match object {
            Some(Object::Service(service)) => service.clone(),
            other => panic!("a Service expected, not {other:?}"),
        };
        let mut index = Index::new();
        index.handle(SourceEvent::Init(ListScope::Everything));
        for name in ["kept", "changed", "gone"] {
            index.handle(SourceEvent::InitApply(service("default", name)));
        }
        index.handle(SourceEvent::InitDone);
        let before = index.snapshot();
        let kept = ObjectRef::new(Kind::Service, "default", "kept");

        index.handle(SourceEvent::Init(ListScope::Everything));
        index.handle(SourceEvent::InitUnchanged(kept.clone()));
        let mut changed = service("default", "changed");
        if let Object::Service(service) = &mut changed {
            Arc::make_mut(service).spec = Some(Default::default());
        }
        index.handle(SourceEvent::InitApply(changed));
        // Listed as unchanged, but never delivered: nothing is invented.
        index.handle(SourceEvent::InitUnchanged(ObjectRef::new(
            Kind::Service,
            "default",
            "never-seen",
        )));
        index.handle(SourceEvent::InitDone);
        let after = index.snapshot();
        // The very object the store held: no second copy of it was kept.
        assert!(Arc::ptr_eq(&arc(before.get(&kept)), &arc(after.get(&kept))));
        let changes: Vec<String> = after
            .changes_since(&before)
            .iter()
            .map(|c| c.object_ref.to_string())
            .collect();
        assert_eq!(changes, ["Service default/changed", "Service default/gone"]);
        assert_eq!(after.count(Kind::Service), 2);

        // Outside a list it changes nothing.
        index.handle(SourceEvent::InitUnchanged(kept.clone()));
        assert!(index.snapshot().changes_since(&after).is_empty());
    }

    #[test]
    fn a_relist_of_one_kind_in_one_namespace_deletes_only_within_that_scope() {
        let mut index = Index::new();
        for object in [
            slice("a", "web"),
            service("default", "web"),
            service("other", "web"),
        ] {
            index.handle(SourceEvent::Apply(object));
        }
        index.handle(SourceEvent::Init(ListScope::Kind {
            kind: Kind::Service,
            namespace: Some("other".into()),
            name: None,
        }));
        index.handle(SourceEvent::InitDone);
        let snapshot = index.snapshot();
        let left: Vec<String> = [Kind::EndpointSlice, Kind::Service]
            .into_iter()
            .flat_map(|kind| snapshot.of_kind(kind).map(|o| o.object_ref().to_string()))
            .collect();
        assert_eq!(left, ["EndpointSlice default/a", "Service default/web"]);

        // A list of one name (a watcher selecting by name) leaves its kind's other names in
        // the namespace alone: two such watchers do not delete each other's object.
        index.handle(SourceEvent::Apply(service("default", "api")));
        let one = |name: &str| ListScope::Kind {
            kind: Kind::Service,
            namespace: Some("default".into()),
            name: Some(name.into()),
        };
        index.handle(SourceEvent::Init(one("web")));
        index.handle(SourceEvent::InitUnchanged(ObjectRef::new(
            Kind::Service,
            "default",
            "web",
        )));
        index.handle(SourceEvent::InitDone);
        index.handle(SourceEvent::Init(one("gone")));
        index.handle(SourceEvent::InitDone);
        assert_eq!(names(&index.snapshot()), ["api", "web"]);
        index.handle(SourceEvent::Init(one("api")));
        index.handle(SourceEvent::InitDone);
        assert_eq!(names(&index.snapshot()), ["web"]);
    }

    fn names(snapshot: &Snapshot) -> Vec<String> {
        snapshot
            .of_kind(Kind::Service)
            .map(|o| o.object_ref().name.to_string())
            .collect()
    }

    fn grpc_route(name: &str, parents: &str) -> Object {
        objects(&format!(
            "apiVersion: gateway.networking.k8s.io/v1\nkind: GRPCRoute\nmetadata: {{name: {name}, namespace: team}}\nspec:\n  parentRefs: {parents}\n"
        ))
        .remove(0)
    }

    #[test]
    fn routes_are_found_by_the_gateways_they_name_as_their_parents_change() {
        let mut index = Index::new();
        let names = |index: &Index, namespace: &str, gateway: &str| -> Vec<String> {
            index
                .snapshot()
                .children_of(
                    Kind::GrpcRoute,
                    &ObjectRef::new(Kind::Gateway, namespace, gateway),
                )
                .iter()
                .map(|route| route.object_ref().name.to_string())
                .collect()
        };
        index.handle(SourceEvent::Apply(grpc_route(
            "a",
            "[{name: edge}, {name: shared, namespace: infra}, {name: edge, sectionName: http}]",
        )));
        index.handle(SourceEvent::Apply(grpc_route(
            "b",
            "[{name: shared, namespace: infra}, {name: svc, kind: Service, group: ''}]",
        )));
        assert_eq!(names(&index, "team", "edge"), ["a"]);
        assert_eq!(names(&index, "infra", "shared"), ["a", "b"]);
        assert!(
            names(&index, "team", "svc").is_empty(),
            "a Service parent is no Gateway"
        );
        assert!(
            index
                .snapshot()
                .children_of(
                    Kind::HttpRoute,
                    &ObjectRef::new(Kind::Gateway, "infra", "shared")
                )
                .is_empty(),
            "by kind"
        );

        index.handle(SourceEvent::Apply(grpc_route("a", "[{name: other}]")));
        assert!(names(&index, "team", "edge").is_empty());
        assert_eq!(names(&index, "infra", "shared"), ["b"]);
        assert_eq!(names(&index, "team", "other"), ["a"]);
        index.handle(SourceEvent::Delete(grpc_route("b", "[]").object_ref()));
        assert!(names(&index, "infra", "shared").is_empty());
    }

    #[test]
    fn routes_are_found_by_their_listener_sets_and_listener_sets_by_their_gateway() {
        let mut index = Index::new();
        index.handle(SourceEvent::Apply(grpc_route(
            "a",
            "[{name: edge}, {kind: ListenerSet, name: extra}, {kind: ListenerSet, group: example.com, name: other}]",
        )));
        index.handle(SourceEvent::Apply(
            objects(
                "apiVersion: gateway.networking.k8s.io/v1\nkind: ListenerSet\nmetadata: {name: extra, namespace: team}\nspec:\n  parentRef: {name: shared, namespace: infra}\n  listeners: [{name: web, port: 80, protocol: HTTP}]\n",
            )
            .remove(0),
        ));
        let snapshot = index.snapshot();
        let names = |kind: Kind, parent: ObjectRef| -> Vec<String> {
            snapshot
                .children_of(kind, &parent)
                .iter()
                .map(|child| child.object_ref().name.to_string())
                .collect()
        };
        assert_eq!(
            names(
                Kind::GrpcRoute,
                ObjectRef::new(Kind::ListenerSet, "team", "extra")
            ),
            ["a"]
        );
        assert_eq!(
            names(
                Kind::GrpcRoute,
                ObjectRef::new(Kind::Gateway, "team", "edge")
            ),
            ["a"]
        );
        assert!(
            names(
                Kind::GrpcRoute,
                ObjectRef::new(Kind::ListenerSet, "team", "other")
            )
            .is_empty(),
            "a parent of another group is not ours"
        );
        assert_eq!(
            names(
                Kind::ListenerSet,
                ObjectRef::new(Kind::Gateway, "infra", "shared")
            ),
            ["extra"]
        );
    }

    #[test]
    fn events_out_of_list_order_delete_nothing() {
        let mut index = Index::new();
        index.handle(SourceEvent::Apply(service("default", "kept")));

        // No list is open: the object is one more change, and the stray end of a list
        // that never began replaces nothing.
        index.handle(SourceEvent::InitApply(service("default", "stray")));
        assert_eq!(names(&index.snapshot()), ["kept", "stray"]);
        index.handle(SourceEvent::InitDone);
        assert_eq!(names(&index.snapshot()), ["kept", "stray"]);

        // A list that begins inside another drops the unfinished one's objects.
        index.handle(SourceEvent::Init(ListScope::Everything));
        index.handle(SourceEvent::InitApply(service("default", "unfinished")));
        index.handle(SourceEvent::Init(ListScope::Everything));
        index.handle(SourceEvent::InitApply(service("default", "kept")));
        index.handle(SourceEvent::InitDone);
        assert_eq!(names(&index.snapshot()), ["kept"]);
    }
}
