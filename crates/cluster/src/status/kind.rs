//! What the one status writer needs to know about a kind: its typed status, how our
//! desired status merges into what the object holds now, and where to patch it.

use std::borrow::Cow;
use std::fmt::Debug;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use resources::{Kind, ObjectRef};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A kind whose status the leader writes. A new kind adds one impl of this trait and
/// hands the writer its [`Target`]s; the writer loop is shared.
pub trait StatusKind:
    kube::Resource<DynamicType = ()>
    + Clone
    + Debug
    + PartialEq
    + DeserializeOwned
    + Send
    + Sync
    + 'static
{
    /// The kind, for the object's reference.
    const KIND: Kind;
    /// The object's whole `status`.
    type Status: Clone + Debug + Default + PartialEq + Serialize + Send + Sync;
    /// What this controller wants the status to say: for kinds whose status other
    /// controllers share (routes), only our part. Readable from JSON, for desired
    /// statuses computed in other types.
    type Desired: Clone + Debug + PartialEq + DeserializeOwned + Send + Sync;

    /// The object's status as last seen.
    fn status(&self) -> Option<&Self::Status>;

    /// The status to write: `current` with our part replaced by `desired`, everything
    /// other controllers own kept as it is, and each condition's `lastTransitionTime`
    /// kept from `current` while the condition's status holds. When nothing of ours
    /// changes, this must equal `current`: equality is what decides that nothing is
    /// written.
    fn merge(
        current: &Self::Status,
        desired: &Self::Desired,
        context: &MergeContext<'_>,
    ) -> Self::Status;
}

/// What a merge needs beyond the two statuses.
#[derive(Debug, Clone, Copy)]
pub struct MergeContext<'a> {
    /// Our controller name: status entries that carry another are not ours to change.
    pub controller_name: &'a str,
    /// The transition time of a condition whose status changes now.
    pub now: &'a Time,
}

/// An object whose status the leader keeps, as last seen, and what its status should
/// say.
#[derive(Debug, Clone)]
pub struct Target<K: StatusKind> {
    /// The object, with the status and resourceVersion it was seen with.
    pub object: Arc<K>,
    /// Our desired status for it (shared: handing all the targets over again copies no
    /// status).
    pub desired: Arc<K::Desired>,
}

/// Equal values. A writer is handed all its targets again for every change, most of
/// them the very objects it holds: the same pointer settles those without a deep
/// comparison.
impl<K: StatusKind> PartialEq for Target<K> {
    fn eq(&self, other: &Self) -> bool {
        (Arc::ptr_eq(&self.object, &other.object) || self.object == other.object)
            && (Arc::ptr_eq(&self.desired, &other.desired) || self.desired == other.desired)
    }
}

impl<K: StatusKind> Target<K> {
    /// The object's identity.
    pub fn object_ref(&self) -> ObjectRef {
        let metadata = self.object.meta();
        ObjectRef::new(
            K::KIND,
            metadata.namespace.clone().unwrap_or_default(),
            metadata.name.clone().unwrap_or_default(),
        )
    }

    /// The version the status was read at.
    pub fn resource_version(&self) -> &str {
        self.object
            .meta()
            .resource_version
            .as_deref()
            .unwrap_or_default()
    }

    /// The status to write, or `None` when the object already says what we want.
    pub fn status_to_write(&self, context: &MergeContext<'_>) -> Option<K::Status> {
        // An object without a status compares as an empty one: nothing to write when we
        // want nothing of it either.
        let current = self
            .object
            .status()
            .map_or_else(|| Cow::Owned(K::Status::default()), Cow::Borrowed);
        let merged = K::merge(&current, &self.desired, context);
        (merged != *current).then_some(merged)
    }
}
