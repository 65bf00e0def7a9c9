//! Whether a change is only what writing an object's status changes: a controller's
//! status write is an update of the object like any other, and nothing but the status
//! writer reads a status.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::{Object, StoredMeta};

impl Object {
    /// Whether `after` is this object with only its status, its `resourceVersion` and its
    /// `managedFields` changed, as a status write leaves it. For the kinds whose status
    /// portcullis writes (Ingresses and the Gateway API's); any other change, or another
    /// kind, is a change.
    pub fn changed_only_in_status(&self, after: &Object) -> bool {
        macro_rules! spec_and_meta {
            ($before:expr, $after:expr) => {
                $before.spec == $after.spec && same_but_version(&$before.metadata, &$after.metadata)
            };
        }
        match (self, after) {
            (Object::Ingress(before), Object::Ingress(after)) => {
                before.spec == after.spec
                    && stored_same_but_version(&before.metadata, &after.metadata)
            }
            (Object::GatewayClass(before), Object::GatewayClass(after)) => {
                spec_and_meta!(before, after)
            }
            (Object::Gateway(before), Object::Gateway(after)) => spec_and_meta!(before, after),
            (Object::ListenerSet(before), Object::ListenerSet(after)) => {
                spec_and_meta!(before, after)
            }
            (Object::HttpRoute(before), Object::HttpRoute(after)) => spec_and_meta!(before, after),
            (Object::GrpcRoute(before), Object::GrpcRoute(after)) => spec_and_meta!(before, after),
            (Object::TlsRoute(before), Object::TlsRoute(after)) => spec_and_meta!(before, after),
            (Object::TcpRoute(before), Object::TcpRoute(after)) => spec_and_meta!(before, after),
            (Object::UdpRoute(before), Object::UdpRoute(after)) => spec_and_meta!(before, after),
            (Object::BackendTlsPolicy(before), Object::BackendTlsPolicy(after)) => {
                spec_and_meta!(before, after)
            }
            _ => false,
        }
    }
}

/// Metadata equal but for what every write changes. Every field of the metadata is named,
/// so a field a new API version adds is compared or set aside on purpose (an object's
/// other parts are its spec, compared whole, and its status).
fn same_but_version(before: &ObjectMeta, after: &ObjectMeta) -> bool {
    let ObjectMeta {
        annotations,
        creation_timestamp,
        deletion_grace_period_seconds,
        deletion_timestamp,
        finalizers,
        generate_name,
        generation,
        labels,
        managed_fields: _,
        name,
        namespace,
        owner_references,
        resource_version: _,
        self_link,
        uid,
    } = before;
    *annotations == after.annotations
        && *creation_timestamp == after.creation_timestamp
        && *deletion_grace_period_seconds == after.deletion_grace_period_seconds
        && *deletion_timestamp == after.deletion_timestamp
        && *finalizers == after.finalizers
        && *generate_name == after.generate_name
        && *generation == after.generation
        && *labels == after.labels
        && *name == after.name
        && *namespace == after.namespace
        && *owner_references == after.owner_references
        && *self_link == after.self_link
        && *uid == after.uid
}

/// [`same_but_version`] for the compact metadata.
fn stored_same_but_version(before: &StoredMeta, after: &StoredMeta) -> bool {
    let StoredMeta {
        name,
        namespace,
        uid,
        resource_version: _,
        generation,
        creation_timestamp,
        annotations,
        labels,
    } = before;
    *name == after.name
        && *namespace == after.namespace
        && *uid == after.uid
        && *generation == after.generation
        && *creation_timestamp == after.creation_timestamp
        && *annotations == after.annotations
        && *labels == after.labels
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;

    fn decoded(text: &str) -> Object {
        let decoded = crate::decode_manifest(text, false);
        let errors = format!("{:?}", decoded.errors);
        decoded
            .objects
            .into_iter()
            .next()
            .unwrap_or_else(|| panic!("{errors}"))
    }

    const ROUTE: &str = "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: web, namespace: team, generation: 2, resourceVersion: '7', uid: u1}\nspec: {parentRefs: [{name: edge}]}\n";

    #[test]
    fn only_a_status_and_version_change_is_a_status_write() {
        let before = decoded(ROUTE);
        let written = decoded(&ROUTE.replace("'7'", "'8'").replace(
            "spec: {parentRefs: [{name: edge}]}\n",
            "spec: {parentRefs: [{name: edge}]}\nstatus: {parents: []}\n",
        ));
        assert!(before.changed_only_in_status(&written));
        for changed in [
            ROUTE.replace("generation: 2", "generation: 3"),
            ROUTE.replace("uid: u1", "uid: u2"),
            ROUTE.replace("name: edge", "name: other"),
        ] {
            assert!(
                !before.changed_only_in_status(&decoded(&changed)),
                "{changed}"
            );
        }
        // An Ingress's annotations are read (a route's are dropped as it is decoded).
        let ingress = "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web, namespace: team, resourceVersion: '7', annotations: {portcullis.dev/timeout-server: 5s}}\nspec: {rules: [{host: web.test}]}\n";
        let published = ingress.replace("'7'", "'8'").replace(
            "spec: {rules: [{host: web.test}]}\n",
            "spec: {rules: [{host: web.test}]}\nstatus: {loadBalancer: {ingress: [{ip: 10.0.0.1}]}}\n",
        );
        assert!(decoded(ingress).changed_only_in_status(&decoded(&published)));
        let annotated = ingress.replace(": 5s}", ": 6s}");
        assert!(!decoded(ingress).changed_only_in_status(&decoded(&annotated)));
        // A kind whose status portcullis does not write compares whole.
        let service =
            decoded("apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: team}\n");
        assert!(!service.changed_only_in_status(&service.clone()));
        assert!(!before.changed_only_in_status(&service));
    }
}
