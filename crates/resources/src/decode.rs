//! Decoding of manifest files (multi-document YAML, JSON, `kind: List`) into objects.
//!
//! Each YAML document is decoded on its own, so one broken document costs only itself.
//! Documents are decoded untyped first, then dispatched on API group and kind. A document
//! in the plain subset of YAML manifests are written in is read by the fast reader; any
//! other by serde-saphyr, with its budgets (aliases, depth, size) and error reporting.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::names::{NameRule, check_name};
use crate::node::{Node, from_node};
use crate::object::{Kind, Object};
use crate::{LogSafe, ObjectMeta};

/// Why one document of a manifest could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("document {document} (line {line}): {}", LogSafe(reason))]
pub struct DecodeError {
    /// 1-based index of the document within its file.
    pub document: usize,
    /// 1-based line where the document starts.
    pub line: usize,
    /// What was wrong, naming the object and field where known. Values from the file
    /// in it are quoted and escaped; the rest is escaped when displayed.
    pub reason: String,
    /// Whether the document could be read at all.
    pub failure: DecodeFailure,
}

/// How far decoding a document got, which tells its file's reader what to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeFailure {
    /// The text is not YAML or JSON: which objects the document defines is unknown (it
    /// may be in the middle of being written).
    Syntax,
    /// The document was read, but its object is invalid: it is left out.
    Invalid,
}

/// What one manifest file held.
#[derive(Debug, Clone, Default)]
pub struct Decoded {
    /// The objects of kinds portcullis reads, in file order.
    pub objects: Vec<Object>,
    /// Documents that failed.
    pub errors: Vec<DecodeError>,
    /// `apiVersion/kind` of documents of kinds portcullis does not read.
    pub ignored: Vec<String>,
}

/// Decodes a manifest file's text. `json` selects JSON instead of YAML. Nothing is kept
/// for a next version of the file (see [`decode_manifest_reusing`]).
pub fn decode_manifest(text: &str, json: bool) -> Decoded {
    decode_with(text, json, None, YamlReaders::FastFirst).0
}

/// Each YAML document's decoded content by a hash of its text, so decoding a file again
/// after an edit decodes only the documents that changed.
#[derive(Debug, Clone, Default)]
pub struct DocumentCache {
    documents: HashMap<u64, Decoded>,
}

/// Decodes a manifest file's text, reusing the documents `previous` (the cache of the
/// file's earlier content) already decoded; returns the cache of this content.
pub fn decode_manifest_reusing(
    text: &str,
    json: bool,
    previous: &DocumentCache,
) -> (Decoded, DocumentCache) {
    decode_with(text, json, Some(previous), YamlReaders::FastFirst)
}

/// Decodes a manifest file's text with serde-saphyr alone, as before the fast reader: the
/// reference the decoder is compared with in tests and benchmarks.
pub fn decode_manifest_with_serde_saphyr(text: &str, json: bool) -> Decoded {
    decode_with(text, json, None, YamlReaders::SerdeSaphyr).0
}

/// Which reader reads a YAML document.
#[derive(Clone, Copy)]
enum YamlReaders {
    /// The fast reader, and serde-saphyr for a document it declines.
    FastFirst,
    /// serde-saphyr alone.
    SerdeSaphyr,
}

/// Decodes `text`; with a `previous` cache, reuses its documents and returns the cache
/// of this text (without one, no cache is built: a single pass has no next version).
fn decode_with(
    text: &str,
    json: bool,
    previous: Option<&DocumentCache>,
    reader: YamlReaders,
) -> (Decoded, DocumentCache) {
    let mut decoded = Decoded::default();
    let mut cache = DocumentCache::default();
    if json {
        match serde_json::from_str::<Value>(text) {
            Ok(value) => classify(Node::borrowing(&value), 1, 1, &mut decoded),
            Err(err) => decoded.errors.push(DecodeError {
                document: 1,
                line: err.line(),
                reason: format!("invalid JSON: {err}"),
                failure: DecodeFailure::Syntax,
            }),
        }
        return (decoded, cache);
    }
    for (index, (line, document)) in split_documents(text).into_iter().enumerate() {
        let document_number = index + 1;
        let place = |error: &DecodeError| DecodeError {
            document: document_number,
            line,
            reason: error.reason.clone(),
            failure: error.failure,
        };
        let Some(previous) = previous else {
            let mut one = Decoded::default();
            read_yaml(document, reader, &mut one);
            decoded.objects.append(&mut one.objects);
            decoded.ignored.append(&mut one.ignored);
            decoded.errors.extend(one.errors.iter().map(place));
            continue;
        };
        let hash = xxhash_rust::xxh3::xxh3_64(document.as_bytes());
        // A document's objects do not depend on where it is; its errors name the place.
        let one = previous.documents.get(&hash).cloned().unwrap_or_else(|| {
            let mut one = Decoded::default();
            read_yaml(document, reader, &mut one);
            one
        });
        decoded.objects.extend(one.objects.iter().cloned());
        decoded.ignored.extend(one.ignored.iter().cloned());
        decoded.errors.extend(one.errors.iter().map(place));
        cache.documents.insert(hash, one);
    }
    (decoded, cache)
}

/// Decodes one YAML document: read by the fast reader when it is in its subset, by
/// serde-saphyr otherwise (with the same value, checked by the `cross-check` feature in
/// tests and the fuzzer).
fn read_yaml(document: &str, reader: YamlReaders, out: &mut Decoded) {
    if let YamlReaders::FastFirst = reader
        && let Some(node) = crate::fast_yaml::parse(document)
    {
        #[cfg(feature = "cross-check")]
        {
            let fast = node.to_value();
            let general = serde_saphyr::from_str_with_options::<Value>(document, yaml_options());
            assert!(
                general.as_ref().is_ok_and(|general| *general == fast),
                "the fast YAML reader read {fast:?} where serde-saphyr read {general:?} from {document:?}"
            );
        }
        classify(node, 0, 0, out);
        return;
    }
    match serde_saphyr::from_str_with_options::<Value>(document, yaml_options()) {
        Ok(value) => classify(Node::borrowing(&value), 0, 0, out),
        Err(err) => out.errors.push(DecodeError {
            document: 0,
            line: 0,
            reason: format!("invalid YAML: {}", first_line(&err.to_string())),
            failure: DecodeFailure::Syntax,
        }),
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}

pub(crate) fn yaml_options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        // Kubernetes reads YAML 1.1 octals (0755 = 493).
        legacy_octal_numbers: true,
    }
}

/// `text.split_inclusive('\n')`, from one scan for line breaks.
fn lines_inclusive(text: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    memchr::memchr_iter(b'\n', text.as_bytes())
        .map(|end| end + 1)
        .chain((!text.ends_with('\n') && !text.is_empty()).then_some(text.len()))
        .map(move |end| {
            let line = &text[start..end];
            start = end;
            line
        })
}

/// Splits a YAML stream at `---` lines; yields (1-based start line, text) of every
/// document that holds more than comments and blank lines.
fn split_documents(text: &str) -> Vec<(usize, &str)> {
    let mut documents = Vec::new();
    let mut start = 0;
    let mut start_line = 1;
    let mut offset = 0;
    for (number, line) in lines_inclusive(text).enumerate() {
        let bare = line.trim_end_matches(['\n', '\r']);
        let is_marker = bare == "---" || bare.starts_with("--- ") || bare == "...";
        if is_marker && offset > start {
            documents.push((start_line, &text[start..offset]));
        }
        if is_marker {
            // `--- key: value` keeps its content in the new document.
            start = if bare.starts_with("--- ") {
                offset
            } else {
                offset + line.len()
            };
            start_line = if bare.starts_with("--- ") {
                number + 1
            } else {
                number + 2
            };
        }
        offset += line.len();
    }
    if offset > start {
        documents.push((start_line, &text[start..]));
    }
    documents.retain(|(_, doc)| {
        doc.lines().any(|l| {
            let l = l.trim();
            !l.is_empty() && !l.starts_with('#') && l != "---"
        })
    });
    documents
}

fn classify(mut value: Node<'_>, document: usize, line: usize, out: &mut Decoded) {
    if value.is_null() {
        return;
    }
    let api_version = value
        .get("apiVersion")
        .and_then(Node::as_str)
        .unwrap_or("")
        .to_owned();
    let kind = value
        .get("kind")
        .and_then(Node::as_str)
        .unwrap_or("")
        .to_owned();
    let fail = |reason: String| DecodeError {
        document,
        line,
        reason,
        failure: DecodeFailure::Invalid,
    };
    if kind.is_empty() || api_version.is_empty() {
        out.errors
            .push(fail("apiVersion and kind are required".to_owned()));
        return;
    }
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    let decoded = match (group, kind.as_str()) {
        ("", "List") => {
            if let Some(Node::Seq(items)) = value.remove("items") {
                for item in items {
                    classify(item, document, line, out);
                }
            }
            return;
        }
        ("", "Namespace") => typed(value, Kind::Namespace, Object::Namespace),
        ("", "Service") => typed(value, Kind::Service, Object::Service),
        ("", "Endpoints") => typed(value, Kind::Endpoints, Object::Endpoints),
        ("", "Secret") => {
            unread_secret_keys_dropped(&mut value);
            typed(value, Kind::Secret, |secret| {
                Object::secret(Arc::unwrap_or_clone(secret))
            })
        }
        ("", "ConfigMap") => typed(value, Kind::ConfigMap, Object::ConfigMap),
        ("", "Pod") => typed(value, Kind::Pod, Object::Pod),
        ("discovery.k8s.io", "EndpointSlice") => {
            typed(value, Kind::EndpointSlice, Object::EndpointSlice)
        }
        ("networking.k8s.io", "IngressClass") => {
            typed(value, Kind::IngressClass, Object::IngressClass)
        }
        ("networking.k8s.io", "Ingress") if api_version == "networking.k8s.io/v1" => {
            typed(value, Kind::Ingress, Object::Ingress)
        }
        // The beta versions' fields differ (`serviceName`, `servicePort`, `spec.backend`):
        // read as v1, their paths would lose their backends without a word.
        ("networking.k8s.io" | "extensions", "Ingress") => Err(Unreadable::from(format!(
            "Ingress: apiVersion {api_version} is not served (networking.k8s.io/v1; the beta versions were removed in Kubernetes 1.22)"
        ))),
        (GATEWAY_GROUP, "GatewayClass") => custom(value, Kind::GatewayClass, Object::GatewayClass),
        (GATEWAY_GROUP, "Gateway") => custom(value, Kind::Gateway, Object::Gateway),
        (GATEWAY_GROUP, "HTTPRoute") => custom(value, Kind::HttpRoute, Object::HttpRoute),
        (GATEWAY_GROUP, "GRPCRoute") => custom(value, Kind::GrpcRoute, Object::GrpcRoute),
        (GATEWAY_GROUP, "TLSRoute") => tls_route(value),
        (GATEWAY_GROUP, "TCPRoute") => l4_route(value, Kind::TcpRoute, Object::TcpRoute),
        (GATEWAY_GROUP, "UDPRoute") => l4_route(value, Kind::UdpRoute, Object::UdpRoute),
        (GATEWAY_GROUP, "BackendTLSPolicy") => backend_tls_policy(value),
        (GATEWAY_GROUP, "ListenerSet") => listener_set(value),
        (GATEWAY_GROUP, "ReferenceGrant") => {
            custom(value, Kind::ReferenceGrant, Object::ReferenceGrant)
        }
        // A Gateway API kind that is not read would otherwise vanish without a word: its
        // author expects it to be served.
        (GATEWAY_GROUP | EXPERIMENTAL_GATEWAY_GROUP, _) => {
            let metadata = |field: &str| {
                value
                    .get("metadata")
                    .and_then(|m| m.get(field))
                    .and_then(Node::as_str)
                    .unwrap_or("")
                    .to_owned()
            };
            out.errors.push(fail(format!(
                "{api_version:?} {kind:?} {:?}: this Gateway API kind is not served by portcullis (docs/gateway-api.md lists what is); the object is left out",
                format!("{}/{}", metadata("namespace"), metadata("name"))
            )));
            return;
        }
        _ => {
            out.ignored.push(format!("{api_version}/{kind}"));
            return;
        }
    };
    match decoded {
        Ok(object) => out.objects.push(object),
        Err(Unreadable {
            why,
            read_for_parents,
        }) => {
            out.objects.extend(read_for_parents);
            out.errors.push(fail(why));
        }
    }
}

/// The Gateway API's group.
const GATEWAY_GROUP: &str = "gateway.networking.k8s.io";
/// The group of the Gateway API's experimental kinds.
const EXPERIMENTAL_GATEWAY_GROUP: &str = "gateway.networking.x-k8s.io";

/// A Gateway API object of one of the `versions` it is served in, all with the v1
/// schema for the fields read here: its `apiVersion` set to v1, or why it is refused.
fn as_v1<'a>(mut value: Node<'a>, kind: Kind, versions: &[&str]) -> Result<Node<'a>, String> {
    let version = value
        .get("apiVersion")
        .and_then(Node::as_str)
        .unwrap_or_default();
    let served = version
        .strip_prefix("gateway.networking.k8s.io/")
        .is_some_and(|v| versions.contains(&v));
    if !served {
        let (last, others) = versions.split_last().unwrap_or((&"v1", &[]));
        let listed = if others.is_empty() {
            (*last).to_owned()
        } else {
            format!("{} or {last}", others.join(", "))
        };
        return Err(format!(
            "{}: apiVersion {version} is not served ({listed})",
            kind.name()
        ));
    }
    value.set(
        "apiVersion",
        Node::String(Cow::Borrowed("gateway.networking.k8s.io/v1")),
    );
    Ok(value)
}

/// A Gateway API object: v1beta1 has the same schema as v1 for the kinds read here, so
/// both decode into the v1 types.
fn custom<T: DeserializeOwned>(
    value: Node<'_>,
    kind: Kind,
    wrap: fn(Arc<T>) -> Object,
) -> Result<Object, Unreadable> {
    typed(as_v1(value, kind, &["v1", "v1beta1"])?, kind, wrap)
}

/// A TLSRoute: v1 (standard since Gateway API v1.5), or v1alpha2/v1alpha3 as clusters
/// with the experimental channel still serve it; the older versions have the same
/// fields, `hostnames` being optional there.
fn tls_route(value: Node<'_>) -> Result<Object, Unreadable> {
    let mut value = as_v1(value, Kind::TlsRoute, &["v1", "v1alpha3", "v1alpha2"])?;
    if let Some(spec @ Node::Map(_)) = value.get_mut("spec") {
        for field in ["hostnames", "rules"] {
            if spec.get(field).is_none() {
                spec.set(field, Node::Seq(Vec::new()));
            }
        }
    }
    typed(value, Kind::TlsRoute, Object::TlsRoute)
}

/// A TCPRoute or UDPRoute: v1 (standard since Gateway API v1.6), or v1alpha2 as the
/// experimental channel and older clusters serve it, with the same fields.
fn l4_route<T: DeserializeOwned>(
    value: Node<'_>,
    kind: Kind,
    wrap: fn(Arc<T>) -> Object,
) -> Result<Object, Unreadable> {
    typed(as_v1(value, kind, &["v1", "v1alpha2"])?, kind, wrap)
}

/// A BackendTLSPolicy: v1 (standard since Gateway API v1.4), or v1alpha3 as clusters
/// with the experimental channel of v1.3 serve it, with the same fields.
fn backend_tls_policy(value: Node<'_>) -> Result<Object, Unreadable> {
    let value = as_v1(value, Kind::BackendTlsPolicy, &["v1", "v1alpha3"])?;
    typed(value, Kind::BackendTlsPolicy, Object::BackendTlsPolicy)
}

/// A ListenerSet: v1 only (standard since Gateway API v1.5; the experimental channel's
/// earlier form is another kind, XListenerSet, in another group).
fn listener_set(value: Node<'_>) -> Result<Object, Unreadable> {
    let version = value
        .get("apiVersion")
        .and_then(Node::as_str)
        .unwrap_or_default();
    if version != "gateway.networking.k8s.io/v1" {
        return Err(format!("ListenerSet: apiVersion {version} is not served (v1)").into());
    }
    typed(value, Kind::ListenerSet, Object::ListenerSet)
}

/// Drops, before the object is typed and stored, what no stage reads and what can dwarf
/// the rest of it: manifests saved with `kubectl get -o yaml` carry the field managers'
/// bookkeeping and kubectl's copy of the whole last-applied object, and every object of
/// a cluster its owners, finalizers and generated-name prefix. Done before typing, so
/// none of it is decoded; [`drop_unread_metadata`] drops the same from a typed object
/// (the cluster watcher's, which kube-rs types).
fn slim_metadata(kind: Kind, meta: &mut Node<'_>) {
    for unread in crate::METADATA_UNREAD {
        meta.remove(unread);
    }
    if !kind.labels_are_read() {
        meta.remove("labels");
    }
    if !kind.annotations_are_read() {
        meta.remove("annotations");
    } else if let Some(annotations) = meta.get_mut("annotations") {
        annotations.remove(crate::LAST_APPLIED_ANNOTATION);
    }
}

/// Drops from typed metadata what [`slim_metadata`] drops before typing:
/// [`crate::METADATA_UNREAD`], kubectl's last-applied copy, and the labels and annotations
/// of a kind whose labels or annotations no stage reads.
pub fn drop_unread_metadata(kind: Kind, meta: &mut ObjectMeta) {
    let ObjectMeta {
        managed_fields,
        owner_references,
        finalizers,
        generate_name,
        self_link,
        labels,
        annotations,
        ..
    } = meta;
    *managed_fields = None;
    *owner_references = None;
    *finalizers = None;
    *generate_name = None;
    *self_link = None;
    if !kind.labels_are_read() {
        *labels = None;
    }
    if !kind.annotations_are_read() {
        // Only portcullis's own mark of a route read for its parents alone stays.
        *annotations = annotations
            .take()
            .and_then(|mut all| all.remove_entry(crate::UNREADABLE_SPEC_ANNOTATION))
            .map(|mark| std::collections::BTreeMap::from([mark]));
    } else if let Some(annotations) = annotations.as_mut() {
        annotations.remove(crate::LAST_APPLIED_ANNOTATION);
    }
}

/// Drops a Secret's keys that no stage reads before they are decoded (their base64 is
/// never checked, nor kept): see [`crate::SECRET_KEYS_READ`].
fn unread_secret_keys_dropped(secret: &mut Node<'_>) {
    for field in ["data", "stringData"] {
        if let Some(data) = secret.get_mut(field) {
            data.retain_keys(|key| crate::SECRET_KEYS_READ.contains(&key));
        }
    }
}

fn typed<T: DeserializeOwned>(
    mut value: Node<'_>,
    kind: Kind,
    wrap: fn(Arc<T>) -> Object,
) -> Result<Object, Unreadable> {
    let fail = |reason: String| Unreadable::from(format!("{}: {reason}", kind.name()));
    let name = match value.get("metadata").and_then(|meta| meta.get("name")) {
        None | Some(Node::Null) => return Err(fail("metadata.name is required".to_owned())),
        Some(Node::String(name)) => name.to_string(),
        Some(_) => return Err(fail("metadata.name must be a string".to_owned())),
    };
    if name.is_empty() {
        return Err(fail("metadata.name is required".to_owned()));
    }
    check_name("metadata.name", &name, NameRule::for_name_of(kind))
        .map_err(|invalid| fail(invalid.to_string()))?;
    let Some(meta @ Node::Map(_)) = value.get_mut("metadata") else {
        return Err(fail("metadata must be a mapping".to_owned()));
    };
    let namespace = if kind.is_namespaced() {
        let namespace = match meta.get("namespace") {
            None | Some(Node::Null) => String::new(),
            Some(Node::String(namespace)) => namespace.to_string(),
            Some(_) => return Err(fail("metadata.namespace must be a string".to_owned())),
        };
        if namespace.is_empty() {
            meta.set("namespace", Node::String(Cow::Borrowed("default")));
            "default".to_owned()
        } else {
            check_name("metadata.namespace", &namespace, NameRule::NAMESPACE)
                .map_err(|invalid| fail(invalid.to_string()))?;
            namespace
        }
    } else {
        // The API server drops a namespace given to a cluster-scoped object; so does its
        // identity here.
        meta.remove("namespace");
        String::new()
    };
    slim_metadata(kind, meta);
    let err = match from_node::<T>(&value) {
        Ok(object) => return Ok(wrap(Arc::new(object))),
        Err(err) => err,
    };
    let label = if namespace.is_empty() {
        name
    } else {
        format!("{namespace}/{name}")
    };
    let why = format!("{} {label}: {err}", kind.name());
    match read_for_parents::<T>(&value.to_value(), &err.to_string()) {
        Some(object) => Err(Unreadable {
            why: format!(
                "{why}; it is not served until it is fixed, and its status says so to its parents"
            ),
            read_for_parents: Some(wrap(Arc::new(object))),
        }),
        None => Err(why.into()),
    }
}

/// Why a document was not read; a route whose spec does not fit the types is read for
/// its parents alone, its status to say why.
struct Unreadable {
    why: String,
    read_for_parents: Option<Object>,
}

impl From<String> for Unreadable {
    fn from(why: String) -> Self {
        Self {
            why,
            read_for_parents: None,
        }
    }
}

/// A route whose spec does not fit its type, read for its `parentRefs` alone and marked
/// with why (see [`crate::UNREADABLE_SPEC_ANNOTATION`]), its status kept as it is (the
/// status writer keeps the other controllers' entries of it); `None` for another kind, or
/// when its parents or its status cannot be read either. Manifests and the Kubernetes
/// API's objects alike.
pub fn read_for_parents<T: DeserializeOwned>(value: &Value, why: &str) -> Option<T> {
    let kind = value.get("kind")?.as_str()?;
    if !matches!(
        kind,
        "HTTPRoute" | "GRPCRoute" | "TLSRoute" | "TCPRoute" | "UDPRoute"
    ) {
        return None;
    }
    let mut metadata = value.get("metadata")?.clone();
    metadata.as_object_mut()?.insert(
        "annotations".to_owned(),
        serde_json::json!({ crate::UNREADABLE_SPEC_ANNOTATION: crate::shortened(why) }),
    );
    let mut skeleton = serde_json::json!({
        "apiVersion": value.get("apiVersion"),
        "kind": kind,
        "metadata": metadata,
        "spec": {
            "parentRefs": value.get("spec")?.get("parentRefs")?,
            "hostnames": [],
            "rules": [],
        },
    });
    if let Some(status) = value.get("status") {
        skeleton
            .as_object_mut()?
            .insert("status".to_owned(), status.clone());
    }
    T::deserialize(&skeleton).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_document_yaml_with_list_and_unknown_kind() {
        let text = "# leading comment\n---\napiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\n---\n# only a comment\n---\napiVersion: v1\nkind: List\nitems:\n- apiVersion: networking.k8s.io/v1\n  kind: Ingress\n  metadata: {name: i, namespace: web}\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n";
        let decoded = decode_manifest(text, false);
        assert_eq!(decoded.errors, vec![]);
        let refs: Vec<String> = decoded
            .objects
            .iter()
            .map(|o| o.object_ref().to_string())
            .collect();
        assert_eq!(refs, ["Service default/a", "Ingress web/i"]);
        assert_eq!(decoded.ignored, ["example.com/v1/Widget"]);
    }

    #[test]
    fn typed_metadata_loses_what_decoding_drops() {
        let full = serde_json::json!({
            "name": "web", "namespace": "shop", "uid": "d3b0", "resourceVersion": "7",
            "labels": {"app": "web"},
            "annotations": {crate::LAST_APPLIED_ANNOTATION: "{}", "example.com/kept": "yes"},
            "managedFields": [{"manager": "kubectl"}], "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": "o", "uid": "1"}],
            "finalizers": ["a/b"], "generateName": "we", "selfLink": "/api/v1/x",
        });
        for kind in [Kind::Service, Kind::Namespace] {
            let mut meta: ObjectMeta = serde_json::from_value(full.clone()).expect("metadata");
            drop_unread_metadata(kind, &mut meta);
            let typed = serde_json::to_value(&meta).expect("serializes");
            let mut node = Node::borrowing(&full);
            slim_metadata(kind, &mut node);
            let decoded: ObjectMeta = from_node(&node).expect("metadata");
            assert_eq!(
                typed,
                serde_json::to_value(&decoded).expect("serializes"),
                "{kind:?}"
            );
            for unread in crate::METADATA_UNREAD {
                assert!(typed.get(unread).is_none(), "{unread} of a {kind:?}");
            }
            assert_eq!(typed.get("labels").is_some(), kind == Kind::Namespace);
            assert_eq!(typed["uid"], "d3b0");
        }
    }

    #[test]
    fn labels_are_kept_only_where_some_stage_reads_them() {
        let text = "apiVersion: v1\nkind: Service\nmetadata: {name: web, labels: {app: web}}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: team, labels: {shared-gateway: 'yes'}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: web-0, labels: {group: blue}}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: web-1, labels: {kubernetes.io/service-name: web, app: web}}\naddressType: IPv4\n";
        let decoded = decode_manifest(text, false);
        assert_eq!(decoded.errors, vec![]);
        let labels: Vec<(String, Option<Vec<&str>>)> = decoded
            .objects
            .iter()
            .map(|object| {
                let keys = object.metadata().labels;
                let keys = keys.map(|labels| labels.keys().map(String::as_str).collect());
                (object.object_ref().to_string(), keys)
            })
            .collect();
        assert_eq!(
            labels,
            [
                ("Service default/web".to_owned(), None),
                ("Namespace team".to_owned(), Some(vec!["shared-gateway"])),
                ("Pod default/web-0".to_owned(), Some(vec!["group"])),
                ("EndpointSlice default/web-1".to_owned(), None),
            ]
        );
        let Some(Object::EndpointSlice(slice)) = decoded.objects.last() else {
            panic!("an EndpointSlice is last");
        };
        assert_eq!(slice.service_name.as_deref(), Some("web"));
    }

    #[test]
    fn annotations_are_kept_only_where_some_stage_reads_them() {
        let kept = "{a.example/key: v}";
        let text = format!(
            "apiVersion: v1\nkind: Service\nmetadata: {{name: web, annotations: {kept}}}\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: web, annotations: {kept}}}\n---\napiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {{name: haproxy, annotations: {kept}}}\n---\napiVersion: v1\nkind: Secret\nmetadata: {{name: tls, annotations: {{cert-manager.io/issuer-name: letsencrypt}}}}\ntype: kubernetes.io/tls\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{name: web-1, labels: {{kubernetes.io/service-name: web}}, annotations: {{endpoints.kubernetes.io/last-change-trigger-time: '2026-01-01T00:00:00Z'}}}}\naddressType: IPv4\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: global, annotations: {kept}}}\n"
        );
        let decoded = decode_manifest(&text, false);
        assert_eq!(decoded.errors, vec![]);
        let kept: Vec<(String, bool)> = decoded
            .objects
            .iter()
            .map(|object| {
                let kind = object.kind();
                assert_eq!(
                    object.kind().annotations_are_read(),
                    object.metadata().annotations.is_some(),
                    "{kind:?}"
                );
                (
                    object.object_ref().to_string(),
                    object.metadata().annotations.is_some(),
                )
            })
            .collect();
        assert_eq!(
            kept,
            [
                ("Service default/web".to_owned(), true),
                ("Ingress default/web".to_owned(), true),
                ("IngressClass haproxy".to_owned(), true),
                ("Secret default/tls".to_owned(), false),
                ("EndpointSlice default/web-1".to_owned(), false),
                ("ConfigMap default/global".to_owned(), false),
            ]
        );
    }

    #[test]
    fn field_managers_and_the_last_applied_copy_are_not_stored() {
        // As `kubectl get -o yaml` saves an object, in YAML and in JSON.
        let yaml = "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: web\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: |\n      {\"apiVersion\":\"networking.k8s.io/v1\",\"kind\":\"Ingress\"}\n    haproxy-ingress.github.io/timeout-server: 30s\n  managedFields:\n  - apiVersion: networking.k8s.io/v1\n    fieldsType: FieldsV1\n    fieldsV1: {f:spec: {f:rules: {}}}\n    manager: kubectl-client-side-apply\n    operation: Update\nspec: {defaultBackend: {service: {name: web, port: {number: 80}}}}\n";
        // A ConfigMap keeps the generated metadata; a Service, an EndpointSlice, an
        // Ingress and a Pod keep `StoredMeta`, which has no place for these fields.
        let json = r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web", "managedFields": [{"manager": "kubectl", "operation": "Update"}], "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}, "generateName": "we", "finalizers": ["a/b"], "selfLink": "/api/v1/x", "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": "o", "uid": "1"}], "uid": "d3b0"}}"#;
        for (text, is_json) in [(yaml, false), (json, true)] {
            let decoded = decode_manifest(text, is_json);
            assert_eq!(decoded.errors, vec![], "{text}");
            let [object] = decoded.objects.as_slice() else {
                panic!("one object expected: {decoded:?}");
            };
            assert_eq!(matches!(object, Object::ConfigMap(_)), is_json, "{text}");
            if let Object::ConfigMap(map) = object {
                let meta = &map.metadata;
                assert_eq!(meta.managed_fields, None, "{text}");
                assert_eq!(
                    (
                        &meta.owner_references,
                        &meta.finalizers,
                        &meta.generate_name,
                        &meta.self_link
                    ),
                    (&None, &None, &None, &None),
                    "{text}"
                );
            }
            // What is read stays.
            let meta = object.metadata();
            assert_eq!(meta.uid, is_json.then_some("d3b0"), "{text}");
            let annotations: Vec<&String> = meta
                .annotations
                .into_iter()
                .flatten()
                .map(|(k, _)| k)
                .collect();
            let expected: &[&str] = if is_json {
                &[]
            } else {
                &["haproxy-ingress.github.io/timeout-server"]
            };
            assert_eq!(annotations, expected, "{text}");
        }
    }

    #[test]
    fn a_secret_keeps_only_the_keys_some_stage_reads_and_an_unread_key_cannot_break_it() {
        // An image-pull Secret's credentials are never stored; an unread key whose base64
        // is broken no longer makes the Secret unreadable.
        let text = "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: web}\ntype: Opaque\ndata:\n  tls.crt: Y2VydA==\n  .dockerconfigjson: eyJhdXRocyI6e319\n  broken: '%%%'\nstringData:\n  auth: 'user:{PLAIN}pass'\n  config.yaml: 'a: b'\n";
        let decoded = decode_manifest(text, false);
        assert_eq!(decoded.errors, vec![]);
        let [Object::Secret(secret)] = decoded.objects.as_slice() else {
            panic!("one Secret expected: {decoded:?}");
        };
        fn keys<V>(map: &Option<std::collections::BTreeMap<String, V>>) -> Vec<&str> {
            map.iter().flatten().map(|(k, _)| k.as_str()).collect()
        }
        // The keys of `data` and of `stringData`.
        fn both(secret: &k8s_openapi::api::core::v1::Secret) -> (Vec<&str>, Vec<&str>) {
            (keys(&secret.data), keys(&secret.string_data))
        }
        assert_eq!(both(secret), (vec!["tls.crt"], vec!["auth"]));
        // The same Secret as the cluster watcher stores it.
        let listed: k8s_openapi::api::core::v1::Secret =
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "s", "namespace": "web"},
                "data": {"ca.crt": "Y2E=", "ca.crl": "Y3Js", ".dockerconfigjson": "e30="},
                "stringData": {"dhparam.pem": "p", "tls.key": "k", "token": "t"},
            }))
            .expect("a valid Secret");
        let Object::Secret(stored) = Object::secret(listed) else {
            panic!("a Secret is stored as a Secret");
        };
        assert_eq!(
            both(&stored),
            (vec!["ca.crl", "ca.crt"], vec!["dhparam.pem", "tls.key"])
        );
    }

    #[test]
    fn gateway_api_kinds_not_served_are_reported_not_ignored() {
        let text = "apiVersion: gateway.networking.x-k8s.io/v1alpha1\nkind: XListenerSet\nmetadata: {name: dns, namespace: web}\n---\napiVersion: gateway.networking.x-k8s.io/v1alpha1\nkind: XBackendTrafficPolicy\nmetadata: {name: p}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n";
        let decoded = decode_manifest(text, false);
        let errors: Vec<String> = decoded.errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            errors,
            [
                "document 1 (line 1): \"gateway.networking.x-k8s.io/v1alpha1\" \"XListenerSet\" \"web/dns\": this Gateway API kind is not served by portcullis (docs/gateway-api.md lists what is); the object is left out",
                "document 2 (line 5): \"gateway.networking.x-k8s.io/v1alpha1\" \"XBackendTrafficPolicy\" \"/p\": this Gateway API kind is not served by portcullis (docs/gateway-api.md lists what is); the object is left out",
            ]
        );
        assert_eq!(decoded.ignored, ["apps/v1/Deployment"]);
    }

    #[test]
    fn listener_sets_are_read_and_a_broken_one_is_reported_by_name() {
        let text = "apiVersion: gateway.networking.k8s.io/v1\nkind: ListenerSet\nmetadata: {name: extra}\nspec:\n  parentRef: {name: edge}\n  listeners: [{name: web, port: 8080, protocol: HTTP}]\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: ListenerSet\nmetadata: {name: broken, namespace: web}\nspec: {listeners: []}\n---\napiVersion: gateway.networking.k8s.io/v1beta1\nkind: ListenerSet\nmetadata: {name: old}\nspec: {parentRef: {name: edge}, listeners: []}\n";
        let decoded = decode_manifest(text, false);
        let refs: Vec<String> = decoded
            .objects
            .iter()
            .map(|o| o.object_ref().to_string())
            .collect();
        assert_eq!(refs, ["ListenerSet default/extra"]);
        let Some(Object::ListenerSet(set)) = decoded.objects.first() else {
            panic!("{:?}", decoded.objects);
        };
        assert_eq!(set.spec.listeners[0].port, 8080);
        assert_eq!(
            decoded.objects[0].parents(),
            [crate::ObjectRef::new(Kind::Gateway, "default", "edge")]
        );
        let errors: Vec<&str> = decoded.errors.iter().map(|e| e.reason.as_str()).collect();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(
            errors[0].starts_with("ListenerSet web/broken: spec: missing field `parentRef`"),
            "{errors:?}"
        );
        assert_eq!(
            errors[1],
            "ListenerSet: apiVersion gateway.networking.k8s.io/v1beta1 is not served (v1)"
        );
    }

    #[test]
    fn a_value_that_does_not_fit_names_its_field() {
        let text = "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r}\nspec:\n  rules:\n  - matches: [{path: {type: PathPrefix, value: /}}]\n  - filters: [{type: ExternalAuth}]\n";
        let decoded = decode_manifest(text, false);
        let errors: Vec<&str> = decoded.errors.iter().map(|e| e.reason.as_str()).collect();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0].starts_with(
                "HTTPRoute default/r: spec.rules[1].filters[0].type: unknown variant `ExternalAuth`"
            ),
            "{errors:?}"
        );
    }

    #[test]
    fn a_broken_document_costs_only_itself() {
        let text = "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: [unclosed\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i}\nspec: {rules: 5}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n";
        let decoded = decode_manifest(text, false);
        let refs: Vec<String> = decoded
            .objects
            .iter()
            .map(|o| o.object_ref().to_string())
            .collect();
        assert_eq!(refs, ["Service default/a", "ConfigMap default/c"]);
        assert_eq!(decoded.errors.len(), 2);
        assert_eq!((decoded.errors[0].document, decoded.errors[0].line), (2, 5));
        assert!(
            decoded.errors[0].reason.starts_with("invalid YAML"),
            "{:?}",
            decoded.errors
        );
        assert_eq!((decoded.errors[1].document, decoded.errors[1].line), (3, 9));
        assert!(
            decoded.errors[1].reason.starts_with("Ingress default/i: "),
            "{:?}",
            decoded.errors
        );
    }

    #[test]
    fn missing_name_and_wrong_version_are_reported() {
        let text = "apiVersion: v1\nkind: Service\nmetadata: {}\n---\napiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: old}\n";
        let decoded = decode_manifest(text, false);
        assert!(decoded.objects.is_empty());
        assert_eq!(
            decoded.errors[0].reason,
            "Service: metadata.name is required"
        );
        assert_eq!(
            decoded.errors[1].reason,
            "Ingress: apiVersion extensions/v1beta1 is not served (networking.k8s.io/v1; the beta versions were removed in Kubernetes 1.22)"
        );
        let beta = "apiVersion: networking.k8s.io/v1beta1\nkind: Ingress\nmetadata: {name: old}\nspec:\n  backend: {serviceName: web, servicePort: 80}\n";
        let decoded = decode_manifest(beta, false);
        assert!(decoded.objects.is_empty());
        assert_eq!(
            decoded.errors[0].reason,
            "Ingress: apiVersion networking.k8s.io/v1beta1 is not served (networking.k8s.io/v1; the beta versions were removed in Kubernetes 1.22)"
        );
        let unknown = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n";
        assert_eq!(
            decode_manifest(unknown, false).ignored,
            ["example.com/v1/Widget"]
        );
    }

    #[test]
    fn invalid_names_and_namespaces_are_refused_and_the_rest_is_kept() {
        let service =
            |metadata: &str| format!("apiVersion: v1\nkind: Service\nmetadata: {metadata}\n---\n");
        let text = [
            service("{name: first}"),
            service(r#"{name: a, namespace: "../../.."}"#),
            service(r#"{name: b, namespace: "web\nERROR forged line"}"#),
            service("{name: 1st}"),
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: Web}\n---\n".to_owned(),
            "apiVersion: v1\nkind: Secret\nmetadata: {name: tls.example.com, namespace: web}\n---\n"
                .to_owned(),
            "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: a_b}\n---\n"
                .to_owned(),
            "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: c, namespace: ignored}\n"
                .to_owned(),
        ]
        .concat();
        let decoded = decode_manifest(&text, false);
        let refs: Vec<String> = decoded
            .objects
            .iter()
            .map(|o| o.object_ref().to_string())
            .collect();
        assert_eq!(
            refs,
            [
                "Service default/first",
                "Secret web/tls.example.com",
                "IngressClass c"
            ]
        );
        let errors: Vec<(usize, usize, String)> = decoded
            .errors
            .iter()
            .map(|e| (e.document, e.line, e.to_string()))
            .collect();
        assert_eq!(errors.len(), 5, "{errors:?}");
        assert!(
            decoded
                .errors
                .iter()
                .all(|e| e.failure == DecodeFailure::Invalid)
        );
        let (document, line, message) = &errors[0];
        assert_eq!((*document, *line), (2, 5));
        assert!(
            message.starts_with(
                "document 2 (line 5): Service: metadata.namespace \"../../..\" is invalid: it must be a DNS-1123 label"
            ),
            "{message}"
        );
        let (document, _, message) = &errors[1];
        assert_eq!(*document, 3);
        assert!(
            message.contains(r#"metadata.namespace "web\nERROR forged line" is invalid"#),
            "{message}"
        );
        assert!(!message.contains('\n'), "{message}");
        assert!(
            errors[2].2.contains(
                r#"Service: metadata.name "1st" is invalid: it must be a DNS-1035 label"#
            ),
            "{errors:?}"
        );
        assert!(
            errors[3].2.contains(
                r#"Namespace: metadata.name "Web" is invalid: it must be a DNS-1123 label"#
            ),
            "{errors:?}"
        );
        assert!(
            errors[4].2.contains(
                r#"Ingress: metadata.name "a_b" is invalid: it must be a DNS-1123 subdomain"#
            ),
            "{errors:?}"
        );
    }

    #[test]
    fn a_reason_shown_from_a_file_cannot_break_a_line() {
        let error = DecodeError {
            document: 1,
            line: 1,
            reason: "unknown variant `a\nERROR forged`".to_owned(),
            failure: DecodeFailure::Invalid,
        };
        assert_eq!(
            error.to_string(),
            "document 1 (line 1): unknown variant `a\\nERROR forged`"
        );
    }

    #[test]
    fn syntax_errors_are_told_apart_from_invalid_objects() {
        let decoded = decode_manifest(
            "kind: [\n---\napiVersion: v1\nkind: Service\nmetadata: {}\n",
            false,
        );
        let failures: Vec<DecodeFailure> = decoded.errors.iter().map(|e| e.failure).collect();
        assert_eq!(failures, [DecodeFailure::Syntax, DecodeFailure::Invalid]);
        assert_eq!(
            decode_manifest("{", true).errors[0].failure,
            DecodeFailure::Syntax
        );
    }

    #[test]
    fn json_list() {
        let text = r#"{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"web"}}]}"#;
        let decoded = decode_manifest(text, true);
        let refs: Vec<String> = decoded
            .objects
            .iter()
            .map(|o| o.object_ref().to_string())
            .collect();
        assert_eq!(refs, ["Namespace web"]);
        assert!(
            decode_manifest("{", true).errors[0]
                .reason
                .starts_with("invalid JSON")
        );
    }

    #[test]
    fn decoding_again_reuses_unchanged_documents_and_places_errors_anew() {
        let service =
            |name: &str| format!("apiVersion: v1\nkind: Service\nmetadata: {{name: {name}}}\n");
        let first = format!("{}---\n{}", service("one"), service("two"));
        let (before, cache) = decode_manifest_reusing(&first, false, &DocumentCache::default());
        let edited = format!("kind: [\n---\n{}---\n{}", service("one"), service("three"));
        let (after, _) = decode_manifest_reusing(&edited, false, &cache);
        let same = match (&before.objects[0], &after.objects[0]) {
            (Object::Service(a), Object::Service(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        assert!(same, "the unchanged document was not decoded again");
        assert_eq!(after.objects.len(), 2);
        assert_eq!(after.errors.len(), 1);
        assert_eq!((after.errors[0].document, after.errors[0].line), (1, 1));
        // The same broken document, now second: its error names its new place.
        let moved = format!("{}---\nkind: [\n", service("one"));
        let (again, _) = decode_manifest_reusing(&moved, false, &cache);
        assert_eq!((again.errors[0].document, again.errors[0].line), (2, 5));
    }
}
