//! Decoding of manifest files (multi-document YAML, JSON, `kind: List`) into objects.
//!
//! Each YAML document is decoded on its own, so one broken document costs only itself.
//! Documents are decoded untyped first, then dispatched on API group and kind.

use std::collections::HashMap;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::object::{Kind, Object};

/// Why one document of a manifest could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("document {document} (line {line}): {reason}")]
pub struct DecodeError {
    /// 1-based index of the document within its file.
    pub document: usize,
    /// 1-based line where the document starts.
    pub line: usize,
    /// What was wrong, naming the object and field where known.
    pub reason: String,
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

/// Decodes a manifest file's text. `json` selects JSON instead of YAML.
pub fn decode_manifest(text: &str, json: bool) -> Decoded {
    decode_manifest_reusing(text, json, &DocumentCache::default()).0
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
    let mut decoded = Decoded::default();
    let mut cache = DocumentCache::default();
    if json {
        match serde_json::from_str::<Value>(text) {
            Ok(value) => classify(value, 1, 1, &mut decoded),
            Err(err) => decoded.errors.push(DecodeError {
                document: 1,
                line: err.line(),
                reason: format!("invalid JSON: {err}"),
            }),
        }
        return (decoded, cache);
    }
    for (index, (line, document)) in split_documents(text).into_iter().enumerate() {
        let document_number = index + 1;
        let hash = xxhash_rust::xxh3::xxh3_64(document.as_bytes());
        // A document's objects do not depend on where it is; its errors name the place.
        let one = previous.documents.get(&hash).cloned().unwrap_or_else(|| {
            let mut one = Decoded::default();
            match serde_saphyr::from_str_with_options::<Value>(document, yaml_options()) {
                Ok(value) => classify(value, 0, 0, &mut one),
                Err(err) => one.errors.push(DecodeError {
                    document: 0,
                    line: 0,
                    reason: format!("invalid YAML: {}", first_line(&err.to_string())),
                }),
            }
            one
        });
        decoded.objects.extend(one.objects.iter().cloned());
        decoded.ignored.extend(one.ignored.iter().cloned());
        decoded
            .errors
            .extend(one.errors.iter().map(|error| DecodeError {
                document: document_number,
                line,
                reason: error.reason.clone(),
            }));
        cache.documents.insert(hash, one);
    }
    (decoded, cache)
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}

fn yaml_options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        // Kubernetes reads YAML 1.1 octals (0755 = 493).
        legacy_octal_numbers: true,
    }
}

/// Splits a YAML stream at `---` lines; yields (1-based start line, text) of every
/// document that holds more than comments and blank lines.
fn split_documents(text: &str) -> Vec<(usize, &str)> {
    let mut documents = Vec::new();
    let mut start = 0;
    let mut start_line = 1;
    let mut offset = 0;
    for (number, line) in text.split_inclusive('\n').enumerate() {
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

fn classify(value: Value, document: usize, line: usize, out: &mut Decoded) {
    if value.is_null() {
        return;
    }
    let api_version = value
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let kind = value
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let fail = |reason: String| DecodeError {
        document,
        line,
        reason,
    };
    if kind.is_empty() || api_version.is_empty() {
        out.errors
            .push(fail("apiVersion and kind are required".to_owned()));
        return;
    }
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    let decoded = match (group, kind.as_str()) {
        ("", "List") => {
            if let Some(Value::Array(items)) = value.get("items") {
                for item in items {
                    classify(item.clone(), document, line, out);
                }
            }
            return;
        }
        ("", "Namespace") => typed(value, Kind::Namespace, Object::Namespace),
        ("", "Service") => typed(value, Kind::Service, Object::Service),
        ("", "Endpoints") => typed(value, Kind::Endpoints, Object::Endpoints),
        ("", "Secret") => typed(value, Kind::Secret, Object::Secret),
        ("", "ConfigMap") => typed(value, Kind::ConfigMap, Object::ConfigMap),
        ("discovery.k8s.io", "EndpointSlice") => {
            typed(value, Kind::EndpointSlice, Object::EndpointSlice)
        }
        ("networking.k8s.io", "IngressClass") => {
            typed(value, Kind::IngressClass, Object::IngressClass)
        }
        ("networking.k8s.io", "Ingress") => typed(value, Kind::Ingress, Object::Ingress),
        (GATEWAY_GROUP, "GatewayClass") => custom(value, Kind::GatewayClass, Object::GatewayClass),
        (GATEWAY_GROUP, "Gateway") => custom(value, Kind::Gateway, Object::Gateway),
        (GATEWAY_GROUP, "HTTPRoute") => custom(value, Kind::HttpRoute, Object::HttpRoute),
        (GATEWAY_GROUP, "ReferenceGrant") => {
            custom(value, Kind::ReferenceGrant, Object::ReferenceGrant)
        }
        _ => {
            out.ignored.push(format!("{api_version}/{kind}"));
            return;
        }
    };
    match decoded {
        Ok(object) => out.objects.push(object),
        Err(reason) => out.errors.push(fail(reason)),
    }
}

/// The Gateway API's group.
const GATEWAY_GROUP: &str = "gateway.networking.k8s.io";

/// A Gateway API object: v1beta1 has the same schema as v1 for the kinds read here, so
/// both decode into the v1 types.
fn custom<T: DeserializeOwned>(
    mut value: Value,
    kind: Kind,
    wrap: fn(Arc<T>) -> Object,
) -> Result<Object, String> {
    let version = value
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !matches!(
        version,
        "gateway.networking.k8s.io/v1" | "gateway.networking.k8s.io/v1beta1"
    ) {
        return Err(format!(
            "{}: apiVersion {version} is not served (v1 or v1beta1)",
            kind.name()
        ));
    }
    value["apiVersion"] = Value::from("gateway.networking.k8s.io/v1");
    typed(value, kind, wrap)
}

fn typed<T: DeserializeOwned>(
    mut value: Value,
    kind: Kind,
    wrap: fn(Arc<T>) -> Object,
) -> Result<Object, String> {
    let name = value
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    if name.is_empty() {
        return Err(format!("{}: metadata.name is required", kind.name()));
    }
    if kind.is_namespaced() {
        let namespace = value.pointer("/metadata/namespace").and_then(Value::as_str);
        if namespace.is_none_or(str::is_empty)
            && let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut)
        {
            meta.insert("namespace".to_owned(), Value::from("default"));
        }
    }
    let namespace = value
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let label = if namespace.is_empty() {
        name
    } else {
        format!("{namespace}/{name}")
    };
    serde_json::from_value::<T>(value)
        .map(|object| wrap(Arc::new(object)))
        .map_err(|err| format!("{} {label}: {err}", kind.name()))
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
        assert_eq!(decoded.ignored, ["extensions/v1beta1/Ingress"]);
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
