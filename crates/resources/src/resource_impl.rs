//! The `k8s_openapi` traits that make a type of portcullis's own watchable like a
//! generated kind.

/// Implements `k8s_openapi::{Resource, ListableResource, Metadata}` for a namespaced type
/// with an `ObjectMeta` field named `metadata`.
macro_rules! namespaced_resource {
    ($name:ident, group: $group:literal, version: $version:literal, kind: $kind:literal, plural: $plural:literal) => {
        impl k8s_openapi::Resource for $name {
            const API_VERSION: &'static str = if $group.is_empty() {
                $version
            } else {
                concat!($group, "/", $version)
            };
            const GROUP: &'static str = $group;
            const KIND: &'static str = $kind;
            const VERSION: &'static str = $version;
            const URL_PATH_SEGMENT: &'static str = $plural;
            type Scope = k8s_openapi::NamespaceResourceScope;
        }

        impl k8s_openapi::ListableResource for $name {
            const LIST_KIND: &'static str = concat!($kind, "List");
        }

        impl k8s_openapi::Metadata for $name {
            type Ty = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

            fn metadata(&self) -> &Self::Ty {
                &self.metadata
            }

            fn metadata_mut(&mut self) -> &mut Self::Ty {
                &mut self.metadata
            }
        }
    };
}

pub(crate) use namespaced_resource;
