//! What one watcher last delivered, by resourceVersion, so that a relist sends again only
//! the objects that changed and the controller never holds the cluster twice.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use index::SourceEvent;
use kube::Resource;
use resources::{Kind, Object, ObjectRef};

/// The resourceVersion of every object one watcher delivered. Both the identity
/// (namespace and name) and the version are kept as 64-bit hashes: 16 bytes an object
/// (twice that with the table's room), where a relist would otherwise hold a second copy
/// of every object until it ends. Two objects of one watcher would have to collide on
/// both hashes for a changed object to be taken for unchanged.
#[derive(Debug, Default)]
pub(crate) struct Delivered {
    versions: HashMap<u64, u64>,
    /// The versions the list in progress has listed so far.
    listing: Option<HashMap<u64, u64>>,
}

impl Delivered {
    /// A list (or relist) begins: what it lists replaces what was delivered.
    pub(crate) fn list_began(&mut self) {
        self.listing = Some(HashMap::with_capacity(self.versions.len()));
    }

    /// The event for a listed object: the object itself, or, when it is the very version
    /// delivered last (the same resourceVersion), only its identity, and the object is
    /// dropped here.
    pub(crate) fn listed<K: Resource>(
        &mut self,
        object: K,
        kind: Kind,
        wrap: impl FnOnce(K) -> Object,
    ) -> SourceEvent {
        let identity = identity(&object);
        let version = version(&object);
        if let (Some(listing), Some(version)) = (self.listing.as_mut(), version) {
            listing.insert(identity, version);
        }
        let unchanged = version.is_some() && self.versions.get(&identity) == version.as_ref();
        if unchanged {
            let meta = object.meta();
            SourceEvent::InitUnchanged(ObjectRef::new(
                kind,
                meta.namespace.clone().unwrap_or_default(),
                meta.name.clone().unwrap_or_default(),
            ))
        } else {
            SourceEvent::InitApply(wrap(object))
        }
    }

    /// The list is complete: what it listed is what was delivered.
    pub(crate) fn list_done(&mut self) {
        if let Some(listed) = self.listing.take() {
            self.versions = listed;
        }
    }

    /// An object was created or changed, outside a list.
    pub(crate) fn applied<K: Resource>(&mut self, object: &K) {
        match version(object) {
            Some(version) => self.versions.insert(identity(object), version),
            None => self.versions.remove(&identity(object)),
        };
    }

    /// An object was deleted.
    pub(crate) fn deleted<K: Resource>(&mut self, object: &K) {
        self.versions.remove(&identity(object));
    }
}

fn identity<K: Resource>(object: &K) -> u64 {
    let meta = object.meta();
    let mut hasher = DefaultHasher::new();
    (meta.namespace.as_deref(), meta.name.as_deref()).hash(&mut hasher);
    hasher.finish()
}

/// The object's resourceVersion, hashed; `None` without one (never taken as unchanged).
fn version<K: Resource>(object: &K) -> Option<u64> {
    let version = object.meta().resource_version.as_deref()?;
    let mut hasher = DefaultHasher::new();
    version.hash(&mut hasher);
    Some(hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use resources::WatchedService;

    fn service(name: &str, version: Option<&str>) -> WatchedService {
        WatchedService {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some("web".to_owned()),
                resource_version: version.map(str::to_owned),
                ..ObjectMeta::default()
            },
            ..WatchedService::default()
        }
    }

    fn wrap(service: WatchedService) -> Object {
        Object::Service(std::sync::Arc::new(service.into()))
    }

    /// The events of one list: `-name` for an unchanged object, `+name` for one sent.
    fn list(delivered: &mut Delivered, objects: &[(&str, Option<&str>)]) -> Vec<String> {
        delivered.list_began();
        let events = objects
            .iter()
            .map(|(name, version)| {
                match delivered.listed(service(name, *version), Kind::Service, wrap) {
                    SourceEvent::InitUnchanged(object) => {
                        assert_eq!(object, ObjectRef::new(Kind::Service, "web", *name));
                        format!("-{name}")
                    }
                    SourceEvent::InitApply(object) => format!("+{}", object.object_ref().name),
                    other => panic!("{other:?}"),
                }
            })
            .collect();
        delivered.list_done();
        events
    }

    #[test]
    fn a_relist_sends_only_what_changed_since_it_was_delivered() {
        let mut delivered = Delivered::default();
        let first = [
            ("a", Some("1")),
            ("b", Some("2")),
            ("c", Some("3")),
            ("x", None),
        ];
        assert_eq!(list(&mut delivered, &first), ["+a", "+b", "+c", "+x"]);

        // Changes between lists: `b` changed, `c` deleted, `d` created.
        delivered.applied(&service("b", Some("4")));
        delivered.deleted(&service("c", Some("3")));
        delivered.applied(&service("d", Some("5")));
        // The relist: `a` as delivered by the first list, `b` and `d` as delivered by
        // the watch, `c` again (recreated with the version it had: sent again, as it was
        // deleted), `x` without a version (always sent), `e` new.
        let relist = [
            ("a", Some("1")),
            ("b", Some("4")),
            ("c", Some("3")),
            ("d", Some("5")),
            ("x", None),
            ("e", Some("6")),
        ];
        assert_eq!(
            list(&mut delivered, &relist),
            ["-a", "-b", "+c", "-d", "+x", "+e"]
        );
        // What a relist listed is what counts afterwards: `a` changed since.
        let again = [("a", Some("7")), ("c", Some("3"))];
        assert_eq!(list(&mut delivered, &again), ["+a", "-c"]);
        // `b` was not listed again (deleted while the watch was down): were it to come
        // back with its old version, it is sent.
        assert_eq!(list(&mut delivered, &[("b", Some("4"))]), ["+b"]);
    }
}
