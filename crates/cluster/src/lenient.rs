//! Gateway API routes and policies read one at a time: an object whose content does not
//! fit the types portcullis knows (a value a newer version of the API added, say a filter
//! type) is left out and reported, where it would otherwise fail the list of its whole
//! kind and take every other tenant's routes with it. A Gateway, GatewayClass or
//! ListenerSet that cannot be read keeps its last readable version instead.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use kube::runtime::watcher;
use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer, Error as _};

/// An object as the API server sent it: read whole, or only its metadata and why the
/// rest could not be read.
#[derive(Debug, Clone)]
pub(crate) enum Lenient<K> {
    Read(K),
    /// A route whose spec does not fit the type, read for its `parentRefs` alone and
    /// marked with why (see [`resources::UNREADABLE_SPEC_ANNOTATION`]): not served, its
    /// status says why to its parents.
    ReadForParents {
        object: K,
        why: String,
    },
    Unreadable {
        metadata: Box<ObjectMeta>,
        why: String,
    },
}

impl<'de, K: DeserializeOwned + Resource> Deserialize<'de> for Lenient<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Kept as a tree, so that the object can be read a second time for its metadata
        // alone: kube-rs hands watch events' objects over through serde's buffer, which
        // a borrowed raw value cannot come from.
        let value = serde_json::Value::deserialize(deserializer)?;
        if let Ok(object) = K::deserialize(&value) {
            return Ok(Lenient::Read(unmarked(object)));
        }
        // The field's path is tracked only once reading failed: every object pays for it
        // otherwise, and nearly every object reads.
        match serde_path_to_error::deserialize::<_, K>(&value) {
            Ok(object) => Ok(Lenient::Read(unmarked(object))),
            Err(err) => {
                let why = err.to_string();
                if let Some(object) = resources::read_for_parents::<K>(&value, &why) {
                    return Ok(Lenient::ReadForParents { object, why });
                }
                let metadata = match value.get("metadata") {
                    Some(metadata) => {
                        ObjectMeta::deserialize(metadata).map_err(D::Error::custom)?
                    }
                    None => ObjectMeta::default(),
                };
                Ok(Lenient::Unreadable {
                    metadata: Box::new(metadata),
                    why: err.to_string(),
                })
            }
        }
    }
}

/// The object without the annotation only portcullis may set (a route's other
/// annotations are dropped before it is stored, that one kept).
fn unmarked<K: Resource>(mut object: K) -> K {
    if let Some(annotations) = object.meta_mut().annotations.as_mut() {
        annotations.remove(resources::UNREADABLE_SPEC_ANNOTATION);
    }
    object
}

impl<K: Resource> Resource for Lenient<K> {
    type DynamicType = K::DynamicType;
    type Scope = K::Scope;

    fn kind(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::kind(dt)
    }

    fn group(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::group(dt)
    }

    fn version(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::version(dt)
    }

    fn plural(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::plural(dt)
    }

    fn meta(&self) -> &ObjectMeta {
        match self {
            Lenient::Read(object) | Lenient::ReadForParents { object, .. } => object.meta(),
            Lenient::Unreadable { metadata, .. } => metadata,
        }
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        match self {
            Lenient::Read(object) | Lenient::ReadForParents { object, .. } => object.meta_mut(),
            Lenient::Unreadable { metadata, .. } => metadata,
        }
    }
}

/// The event as the controller takes it: an unreadable object that is listed is left
/// out (so the list takes it away if an earlier version was served), one that changed
/// is deleted, and each is reported.
pub(crate) fn readable<K>(event: watcher::Event<Lenient<K>>) -> Option<watcher::Event<K>>
where
    K: Resource<DynamicType = ()> + Default,
{
    use watcher::Event;
    Some(match event {
        Event::Init => Event::Init,
        Event::InitDone => Event::InitDone,
        Event::InitApply(Lenient::Read(object)) => Event::InitApply(object),
        Event::Apply(Lenient::Read(object)) => Event::Apply(object),
        Event::Delete(Lenient::Read(object) | Lenient::ReadForParents { object, .. }) => {
            Event::Delete(object)
        }
        Event::InitApply(Lenient::ReadForParents { object, why }) => {
            report_serving::<K>(object.meta(), &why, FOR_PARENTS);
            Event::InitApply(object)
        }
        Event::Apply(Lenient::ReadForParents { object, why }) => {
            report_serving::<K>(object.meta(), &why, FOR_PARENTS);
            Event::Apply(object)
        }
        Event::InitApply(Lenient::Unreadable { metadata, why }) => {
            report::<K>(&metadata, &why);
            return None;
        }
        Event::Apply(Lenient::Unreadable { metadata, why }) => {
            report::<K>(&metadata, &why);
            Event::Delete(only(*metadata))
        }
        Event::Delete(Lenient::Unreadable { metadata, .. }) => Event::Delete(only(*metadata)),
    })
}

/// The events of a kind whose objects carry others (Gateways, GatewayClasses,
/// ListenerSets: one left out takes every route on it away), as the controller takes
/// them: an unreadable object keeps its last readable version served, and one never read
/// is left out, each reported. The rest of the kind is read, where a list failed whole
/// before (and a start stopped on one object a newer API version wrote).
#[derive(Debug)]
pub(crate) struct LastReadable<K> {
    /// Each object's last readable version, by namespace and name.
    read: HashMap<(String, String), K>,
    /// The objects a list in progress has named, to forget the others' versions when it ends.
    listed: Option<HashSet<(String, String)>>,
}

impl<K> Default for LastReadable<K> {
    fn default() -> Self {
        Self {
            read: HashMap::new(),
            listed: None,
        }
    }
}

impl<K: Resource<DynamicType = ()> + Default + Clone> LastReadable<K> {
    /// The event as the controller takes it, if it takes one.
    pub(crate) fn take(&mut self, event: watcher::Event<Lenient<K>>) -> Option<watcher::Event<K>> {
        use watcher::Event;
        match event {
            Event::Init => {
                self.listed = Some(HashSet::new());
                Some(Event::Init)
            }
            Event::InitDone => {
                if let Some(listed) = self.listed.take() {
                    self.read.retain(|key, _| listed.contains(key));
                }
                Some(Event::InitDone)
            }
            Event::InitApply(object) => {
                let key = key(object.meta());
                if let Some(listed) = &mut self.listed {
                    listed.insert(key.clone());
                }
                self.read_or_last(key, object).map(Event::InitApply)
            }
            Event::Apply(object) => {
                let key = key(object.meta());
                self.read_or_last(key, object).map(Event::Apply)
            }
            Event::Delete(object) => {
                self.read.remove(&key(object.meta()));
                Some(Event::Delete(match object {
                    Lenient::Read(object) | Lenient::ReadForParents { object, .. } => object,
                    Lenient::Unreadable { metadata, .. } => only(*metadata),
                }))
            }
        }
    }

    /// The object as read, remembered; or, unreadable, its last readable version.
    fn read_or_last(&mut self, key: (String, String), object: Lenient<K>) -> Option<K> {
        match object {
            // Only routes are read for their parents alone; were one, it is what is read.
            Lenient::Read(object) | Lenient::ReadForParents { object, .. } => {
                self.read.insert(key, object.clone());
                Some(object)
            }
            Lenient::Unreadable { metadata, why } => {
                // The same object (not one deleted and made again under its name, whose
                // delete was missed), at the version the API server holds: status is
                // written against it, and a write at the last readable version would be
                // refused for ever. Its generation stays the one last read, which its
                // status then says was observed.
                let last = self
                    .read
                    .get(&key)
                    .filter(|last| last.meta().uid == metadata.uid)
                    .cloned()
                    .map(|mut last| {
                        last.meta_mut()
                            .resource_version
                            .clone_from(&metadata.resource_version);
                        last
                    });
                let served = if last.is_some() {
                    "its last readable version is served until it is fixed"
                } else {
                    "it is not served until it is fixed"
                };
                report_serving::<K>(&metadata, &why, served);
                last
            }
        }
    }
}

fn key(metadata: &ObjectMeta) -> (String, String) {
    (
        metadata.namespace.clone().unwrap_or_default(),
        metadata.name.clone().unwrap_or_default(),
    )
}

/// What [`LastReadable`] makes of a kind's events, as a watcher's filter.
pub(crate) fn keeping_last_readable<K>()
-> impl FnMut(watcher::Event<Lenient<K>>) -> Option<watcher::Event<K>> + Send + 'static
where
    K: Resource<DynamicType = ()> + Default + Clone + Send + 'static,
{
    let mut kept = LastReadable::default();
    move |event| kept.take(event)
}

/// An object of which only the metadata is known, to name it in a delete.
fn only<K: Resource + Default>(metadata: ObjectMeta) -> K {
    let mut object = K::default();
    *object.meta_mut() = metadata;
    object
}

/// What becomes of a route read for its parents alone.
const FOR_PARENTS: &str =
    "it is not served until it is fixed, and its status says so to its parents";

fn report<K: Resource<DynamicType = ()>>(metadata: &ObjectMeta, why: &str) {
    report_serving::<K>(metadata, why, "it is not served until it is fixed");
}

fn report_serving<K: Resource<DynamicType = ()>>(metadata: &ObjectMeta, why: &str, served: &str) {
    tracing::warn!(
        "{} {}/{}: cannot be read ({why}); {served} (a value of a newer version of its API?), and the other objects of its kind are",
        K::kind(&()),
        metadata.namespace.as_deref().unwrap_or_default(),
        metadata.name.as_deref().unwrap_or_default(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use resources::HttpRoute;

    fn read(json: &str) -> Lenient<HttpRoute> {
        serde_json::from_str(json).expect("the metadata is readable")
    }

    #[test]
    fn an_object_that_does_not_fit_its_type_keeps_its_metadata_and_says_where() {
        let route = read(
            r#"{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute",
                "metadata":{"name":"r","namespace":"team","resourceVersion":"7"},
                "spec":{"rules":[{"filters":[{"type":"ExternalAuth"}]}]}}"#,
        );
        let Lenient::Unreadable { metadata, why } = route else {
            panic!("read: {route:?}");
        };
        assert_eq!(metadata.name.as_deref(), Some("r"));
        assert_eq!(metadata.resource_version.as_deref(), Some("7"));
        assert!(
            why.starts_with("spec.rules[0].filters[0].type: unknown variant `ExternalAuth`"),
            "{why}"
        );
    }

    #[test]
    fn an_unreadable_gateway_keeps_its_last_readable_version_and_one_never_read_is_left_out() {
        use resources::Gateway;
        let made = |name: &str, uid: &str, version: &str, class: &str| -> Lenient<Gateway> {
            serde_json::from_str(&format!(
                r#"{{"metadata":{{"name":"{name}","namespace":"edge","uid":"{uid}","resourceVersion":"{version}"}},
                    "spec":{{"gatewayClassName":{class},"listeners":[]}}}}"#
            ))
            .expect("the metadata is readable")
        };
        let gateway = |name: &str, version: &str, readable: bool| {
            made(
                name,
                "u1",
                version,
                if readable { "\"portcullis\"" } else { "7" },
            )
        };
        // The name, the version and the spec (its class) the controller is handed.
        let version = |event: Option<watcher::Event<Gateway>>| -> Option<(String, String)> {
            match event? {
                watcher::Event::InitApply(g) | watcher::Event::Apply(g) => Some((
                    g.metadata.name.unwrap_or_default(),
                    format!(
                        "{} {}",
                        g.metadata.resource_version.unwrap_or_default(),
                        g.spec.gateway_class_name
                    ),
                )),
                other => panic!("{other:?}"),
            }
        };
        let mut kept = LastReadable::default();
        assert!(matches!(
            kept.take(watcher::Event::Init),
            Some(watcher::Event::Init)
        ));
        // Never read: left out, the others of the list are served.
        assert_eq!(
            version(kept.take(watcher::Event::InitApply(gateway("new", "1", false)))),
            None
        );
        assert_eq!(
            version(kept.take(watcher::Event::InitApply(gateway("a", "1", true)))),
            Some(("a".into(), "1 portcullis".into()))
        );
        assert!(matches!(
            kept.take(watcher::Event::InitDone),
            Some(watcher::Event::InitDone)
        ));
        // Changed into something unreadable: the last readable spec stays, at a change as
        // at a relist, at the version the API server holds (status is written against
        // it).
        assert_eq!(
            version(kept.take(watcher::Event::Apply(gateway("a", "2", false)))),
            Some(("a".into(), "2 portcullis".into()))
        );
        kept.take(watcher::Event::Init);
        assert_eq!(
            version(kept.take(watcher::Event::InitApply(gateway("a", "3", false)))),
            Some(("a".into(), "3 portcullis".into()))
        );
        kept.take(watcher::Event::InitDone);
        // Another object under the name (its delete missed): never read, left out.
        assert_eq!(
            version(kept.take(watcher::Event::Apply(made("a", "u2", "5", "7")))),
            None
        );
        // Deleted, and a relist without it: forgotten.
        assert!(matches!(
            kept.take(watcher::Event::Delete(gateway("a", "4", false))),
            Some(watcher::Event::Delete(g)) if g.metadata.name.as_deref() == Some("a")
        ));
        assert!(kept.read.is_empty());
        kept.take(watcher::Event::Apply(gateway("b", "1", true)));
        kept.take(watcher::Event::Init);
        kept.take(watcher::Event::InitDone);
        assert!(kept.read.is_empty(), "a list without it forgets it");
    }

    #[test]
    fn a_route_that_does_not_fit_is_read_for_its_parents_with_its_status_and_marked() {
        let route = read(
            r#"{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute",
                "metadata":{"name":"r","namespace":"team","generation":2,
                            "annotations":{"portcullis.dev/unreadable-spec":"forged"}},
                "spec":{"parentRefs":[{"name":"edge"}],"hostnames":["a.test"],
                        "rules":[{"filters":[{"type":"ExternalAuth"}]}]},
                "status":{"parents":[{"controllerName":"c","parentRef":{"name":"edge"},"conditions":[]}]}}"#,
        );
        let Lenient::ReadForParents { object, why } = route else {
            panic!("read: {route:?}");
        };
        assert!(why.contains("unknown variant `ExternalAuth`"), "{why}");
        assert_eq!(
            resources::unreadable_spec(&object.metadata),
            Some(why.as_str())
        );
        assert_eq!(object.metadata.generation, Some(2));
        assert_eq!(object.spec.parent_refs.as_ref().map(Vec::len), Some(1));
        assert_eq!(object.spec.rules.as_ref().map(Vec::len), Some(0));
        assert_eq!(object.status.map(|s| s.parents.len()), Some(1));

        // A status that cannot be read either: left out, as before, rather than written
        // over (the other controllers' entries would go).
        let route = read(
            r#"{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute",
                "metadata":{"name":"r","namespace":"team"},
                "spec":{"parentRefs":[{"name":"edge"}],"rules":[{"filters":[{"type":"ExternalAuth"}]}]},
                "status":{"parents":[{"controllerName":7}]}}"#,
        );
        assert!(matches!(route, Lenient::Unreadable { .. }), "{route:?}");

        // The mark on a route that reads is someone else's doing: gone.
        let route = read(
            r#"{"metadata":{"name":"ok","namespace":"team",
                            "annotations":{"portcullis.dev/unreadable-spec":"forged"}},"spec":{}}"#,
        );
        let Lenient::Read(object) = route else {
            panic!("read: {route:?}");
        };
        assert_eq!(resources::unreadable_spec(&object.metadata), None);
    }

    #[test]
    fn events_of_unreadable_objects_leave_them_out() {
        let unreadable = || Lenient::<HttpRoute>::Unreadable {
            metadata: Box::new(ObjectMeta {
                name: Some("r".to_owned()),
                namespace: Some("team".to_owned()),
                ..ObjectMeta::default()
            }),
            why: "spec: bad".to_owned(),
        };
        assert!(readable(watcher::Event::InitApply(unreadable())).is_none());
        let Some(watcher::Event::Delete(gone)) = readable(watcher::Event::Apply(unreadable()))
        else {
            panic!("a changed unreadable object is deleted");
        };
        assert_eq!(gone.metadata.name.as_deref(), Some("r"));
        let good = read(r#"{"metadata":{"name":"ok","namespace":"team"},"spec":{}}"#);
        assert!(matches!(
            readable(watcher::Event::Apply(good)),
            Some(watcher::Event::Apply(route)) if route.metadata.name.as_deref() == Some("ok")
        ));
    }
}
