//! The fake API server's objects: one revision counter, an event log for watches, and
//! selectors, the way an API server answers them.

use std::collections::BTreeMap;

use serde_json::{Value, json};

/// A resource the fake serves.
#[derive(Debug, Clone, Copy)]
pub struct Resource {
    pub group: &'static str,
    pub version: &'static str,
    pub plural: &'static str,
    pub kind: &'static str,
    pub namespaced: bool,
}

impl Resource {
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_owned()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

pub const RESOURCES: &[Resource] = &[
    core("services", "Service", true),
    core("secrets", "Secret", true),
    core("configmaps", "ConfigMap", true),
    core("endpoints", "Endpoints", true),
    core("namespaces", "Namespace", false),
    core("pods", "Pod", true),
    grouped("discovery.k8s.io", "endpointslices", "EndpointSlice", true),
    grouped("networking.k8s.io", "ingresses", "Ingress", true),
    grouped("networking.k8s.io", "ingressclasses", "IngressClass", false),
    grouped("coordination.k8s.io", "leases", "Lease", true),
    grouped("events.k8s.io", "events", "Event", true),
    grouped(
        "gateway.networking.k8s.io",
        "gatewayclasses",
        "GatewayClass",
        false,
    ),
    grouped("gateway.networking.k8s.io", "gateways", "Gateway", true),
    grouped("gateway.networking.k8s.io", "httproutes", "HTTPRoute", true),
    grouped("gateway.networking.k8s.io", "grpcroutes", "GRPCRoute", true),
    grouped("gateway.networking.k8s.io", "tlsroutes", "TLSRoute", true),
    grouped("gateway.networking.k8s.io", "tcproutes", "TCPRoute", true),
    grouped("gateway.networking.k8s.io", "udproutes", "UDPRoute", true),
    grouped(
        "gateway.networking.k8s.io",
        "listenersets",
        "ListenerSet",
        true,
    ),
    grouped(
        "gateway.networking.k8s.io",
        "backendtlspolicies",
        "BackendTLSPolicy",
        true,
    ),
    grouped(
        "gateway.networking.k8s.io",
        "referencegrants",
        "ReferenceGrant",
        true,
    ),
];

const fn core(plural: &'static str, kind: &'static str, namespaced: bool) -> Resource {
    Resource {
        group: "",
        version: "v1",
        plural,
        kind,
        namespaced,
    }
}

const fn grouped(
    group: &'static str,
    plural: &'static str,
    kind: &'static str,
    namespaced: bool,
) -> Resource {
    Resource {
        group,
        version: "v1",
        plural,
        kind,
        namespaced,
    }
}

pub fn resource_of_kind(kind: &str) -> Option<Resource> {
    RESOURCES.iter().copied().find(|r| r.kind == kind)
}

pub fn resource_of_plural(group: &str, plural: &str) -> Option<Resource> {
    RESOURCES
        .iter()
        .copied()
        .find(|r| r.group == group && r.plural == plural)
}

/// Identity within the store.
pub type Key = (&'static str, String, String);

/// One entry of the watch log.
#[derive(Debug, Clone)]
pub struct Logged {
    pub revision: u64,
    pub plural: &'static str,
    pub namespace: String,
    pub event_type: &'static str,
    pub object: Value,
}

/// Why a write was refused.
#[derive(Debug)]
pub enum Refusal {
    NotFound,
    AlreadyExists,
    Conflict,
}

#[derive(Debug, Default)]
pub struct Store {
    pub revision: u64,
    pub objects: BTreeMap<Key, Value>,
    pub log: Vec<Logged>,
    /// A watch from a revision older than this must relist (410 Gone).
    pub oldest_watchable: u64,
    /// Bumped to end every open watch.
    pub watch_generation: u64,
    /// Status writes to refuse with 409 before accepting one.
    pub status_conflicts: u32,
    /// Whether status writes wait (see `FakeApiServer::hold_status_writes`).
    pub hold_status_writes: bool,
    /// Status writes waiting now.
    pub held_status_writes: usize,
    /// Every request that is not a GET, as `TOKEN METHOD path`.
    pub writes: Vec<String>,
    /// Resources (plural) the server does not serve, as if their CRD were not installed.
    pub absent: std::collections::BTreeSet<&'static str>,
    /// Resources (plural) whose list requests wait until released.
    pub held_lists: std::collections::BTreeSet<&'static str>,
    /// Clients (by token) whose Lease requests get no answer until released.
    pub held_lease_clients: std::collections::BTreeSet<String>,
    /// Every request, as RBAC would judge it.
    pub requests: Vec<super::ApiRequest>,
    /// Every list (not watch) request, as `path?fieldSelector`.
    pub lists: Vec<String>,
}

impl Store {
    pub fn key(resource: &Resource, namespace: &str, name: &str) -> Key {
        let namespace = if resource.namespaced { namespace } else { "" };
        (resource.plural, namespace.to_owned(), name.to_owned())
    }

    /// Creates or replaces, as the object's owner would; `expected` is the
    /// resourceVersion the writer saw, if it gave one.
    pub fn write(
        &mut self,
        resource: &Resource,
        mut object: Value,
        must_exist: bool,
        must_not_exist: bool,
    ) -> Result<Value, Refusal> {
        let namespace = str_at(&object, "/metadata/namespace").to_owned();
        let name = str_at(&object, "/metadata/name").to_owned();
        let key = Self::key(resource, &namespace, &name);
        let existing = self.objects.get(&key);
        match existing {
            None if must_exist => return Err(Refusal::NotFound),
            Some(_) if must_not_exist => return Err(Refusal::AlreadyExists),
            _ => {}
        }
        let expected = str_at(&object, "/metadata/resourceVersion");
        if let Some(current) = existing
            && !expected.is_empty()
            && expected != str_at(current, "/metadata/resourceVersion")
        {
            return Err(Refusal::Conflict);
        }
        self.revision += 1;
        let revision = self.revision;
        object["apiVersion"] = json!(resource.api_version());
        object["kind"] = json!(resource.kind);
        let metadata = &mut object["metadata"];
        metadata["resourceVersion"] = json!(revision.to_string());
        match existing {
            Some(current) => {
                metadata["uid"] = current["metadata"]["uid"].clone();
                metadata["creationTimestamp"] = current["metadata"]["creationTimestamp"].clone();
            }
            None => {
                metadata["uid"] = json!(format!("uid-{revision}"));
                if metadata.get("creationTimestamp").is_none() {
                    metadata["creationTimestamp"] = json!("2026-01-01T00:00:00Z");
                }
            }
        }
        let event_type = if existing.is_some() {
            "MODIFIED"
        } else {
            "ADDED"
        };
        self.objects.insert(key, object.clone());
        self.log.push(Logged {
            revision,
            plural: resource.plural,
            namespace,
            event_type,
            object: object.clone(),
        });
        Ok(object)
    }

    pub fn delete(
        &mut self,
        resource: &Resource,
        namespace: &str,
        name: &str,
        announce: bool,
    ) -> Option<Value> {
        let key = Self::key(resource, namespace, name);
        let mut object = self.objects.remove(&key)?;
        self.revision += 1;
        object["metadata"]["resourceVersion"] = json!(self.revision.to_string());
        if announce {
            self.log.push(Logged {
                revision: self.revision,
                plural: resource.plural,
                namespace: key.1,
                event_type: "DELETED",
                object: object.clone(),
            });
        }
        Some(object)
    }

    /// Forgets every event so far: any watch that resumes must list again.
    pub fn lose_history(&mut self) {
        self.log.clear();
        self.oldest_watchable = self.revision + 1;
        self.watch_generation += 1;
    }

    /// The objects a list selects from `start` on, at most `limit` of them, and how many
    /// it selects in all.
    pub fn list(
        &self,
        resource: &Resource,
        namespace: Option<&str>,
        selector: &Selector,
        (start, limit): (usize, usize),
    ) -> (Vec<Value>, usize) {
        let selected = self.objects.iter().filter(|((plural, ns, _), object)| {
            *plural == resource.plural
                && namespace.is_none_or(|wanted| wanted == ns)
                && selector.matches(object)
        });
        let mut page = Vec::new();
        let mut total = 0;
        for (_, object) in selected {
            if total >= start && page.len() < limit {
                page.push(object.clone());
            }
            total += 1;
        }
        (page, total)
    }
}

/// Field and label selectors of the equality kind (`a=b`, `a!=b`, comma-separated).
#[derive(Debug, Default, Clone)]
pub struct Selector {
    fields: Vec<(String, String, bool)>,
    labels: Vec<(String, String, bool)>,
}

impl Selector {
    pub fn parse(fields: Option<&String>, labels: Option<&String>) -> Self {
        Self {
            fields: terms(fields),
            labels: terms(labels),
        }
    }

    pub fn matches(&self, object: &Value) -> bool {
        self.fields.iter().all(|(path, value, equal)| {
            let pointer = format!("/{}", path.replace('.', "/"));
            (str_at(object, &pointer) == value) == *equal
        }) && self.labels.iter().all(|(label, value, equal)| {
            let found = object["metadata"]["labels"][label]
                .as_str()
                .unwrap_or_default();
            (found == value) == *equal
        })
    }
}

fn terms(text: Option<&String>) -> Vec<(String, String, bool)> {
    text.map(|t| t.split(',').filter(|s| !s.is_empty()).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|term| {
            if let Some((key, value)) = term.split_once("!=") {
                Some((key.to_owned(), value.to_owned(), false))
            } else {
                let (key, value) = term.split_once('=')?;
                Some((
                    key.to_owned(),
                    value.trim_start_matches('=').to_owned(),
                    true,
                ))
            }
        })
        .collect()
}

pub fn str_at<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// RFC 7386 JSON merge patch.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = json!({});
    }
    if let Value::Object(target) = target {
        for (key, value) in patch {
            if value.is_null() {
                target.remove(key);
            } else {
                merge_patch(target.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

pub fn status_body(code: u16, reason: &str, message: &str) -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_in_pages_gives_every_selected_object_once_in_order() {
        let mut store = Store::default();
        let services = resource_of_kind("Service").expect("Services are served");
        let namespaces = resource_of_kind("Namespace").expect("Namespaces are served");
        for name in ["a", "b", "c", "d", "e"] {
            let service = json!({"metadata": {"name": name, "namespace": "web"}});
            store
                .write(&services, service, false, false)
                .expect("stored");
        }
        store
            .write(
                &namespaces,
                json!({"metadata": {"name": "web"}}),
                false,
                false,
            )
            .expect("stored");
        let names = |page: &[Value]| -> Vec<String> {
            page.iter()
                .map(|o| str_at(o, "/metadata/name").to_owned())
                .collect()
        };
        let everything = Selector::default();
        let mut listed = Vec::new();
        let mut start = 0;
        loop {
            let (page, total) = store.list(&services, None, &everything, (start, 2));
            assert_eq!(total, 5);
            assert!(page.len() <= 2);
            start += page.len();
            listed.extend(names(&page));
            if page.is_empty() || start >= total {
                break;
            }
        }
        assert_eq!(listed, ["a", "b", "c", "d", "e"]);
        // Without a limit, one page; past the end, an empty one.
        let (page, total) = store.list(&services, Some("web"), &everything, (0, usize::MAX));
        assert_eq!((names(&page).len(), total), (5, 5));
        assert_eq!(
            store.list(&services, None, &everything, (9, 2)),
            (Vec::new(), 5)
        );
    }
}
