//! Gateway API routes and policies read one at a time: an object whose content does not
//! fit the types portcullis knows (a value a newer version of the API added, say a filter
//! type) is left out and reported, where it would otherwise fail the list of its whole
//! kind and take every other tenant's routes with it.

use std::borrow::Cow;

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
    Unreadable {
        metadata: Box<ObjectMeta>,
        why: String,
    },
}

impl<'de, K: DeserializeOwned> Deserialize<'de> for Lenient<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Kept as a tree, so that the object can be read a second time for its metadata
        // alone: kube-rs hands watch events' objects over through serde's buffer, which
        // a borrowed raw value cannot come from.
        let value = serde_json::Value::deserialize(deserializer)?;
        if let Ok(object) = K::deserialize(&value) {
            return Ok(Lenient::Read(object));
        }
        // The field's path is tracked only once reading failed: every object pays for it
        // otherwise, and nearly every object reads.
        match serde_path_to_error::deserialize::<_, K>(&value) {
            Ok(object) => Ok(Lenient::Read(object)),
            Err(err) => {
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
            Lenient::Read(object) => object.meta(),
            Lenient::Unreadable { metadata, .. } => metadata,
        }
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        match self {
            Lenient::Read(object) => object.meta_mut(),
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
        Event::Delete(Lenient::Read(object)) => Event::Delete(object),
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

/// An object of which only the metadata is known, to name it in a delete.
fn only<K: Resource + Default>(metadata: ObjectMeta) -> K {
    let mut object = K::default();
    *object.meta_mut() = metadata;
    object
}

fn report<K: Resource<DynamicType = ()>>(metadata: &ObjectMeta, why: &str) {
    tracing::warn!(
        "{} {}/{}: cannot be read ({why}); it is not served until it is fixed (a value of a newer version of its API?), and the other objects of its kind are",
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
