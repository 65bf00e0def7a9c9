//! Gateway API status as YAML: one document per object, as `kubectl get -o yaml` would
//! show its `status` (for `portcullis status` and the admin endpoint `/status`).

use convert::gateway_status::{ObjectStatus, StatusReport};
use serde_json::{Value, json};

/// The report as a multi-document YAML stream.
pub fn status_yaml(report: &StatusReport) -> String {
    let mut text = String::new();
    for (object, status) in report {
        let kind = match status {
            ObjectStatus::Class { .. } => "GatewayClass",
            ObjectStatus::Gateway { .. } => "Gateway",
            ObjectStatus::ListenerSet { .. } => "ListenerSet",
            // A route's status is the same for every route kind; its object says which.
            ObjectStatus::Route { .. } => object.kind.name(),
            ObjectStatus::Policy { .. } => "BackendTLSPolicy",
        };
        let mut metadata = json!({"name": object.name});
        if !object.namespace.is_empty() {
            metadata["namespace"] = json!(object.namespace);
        }
        let document = json!({
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": kind,
            "metadata": metadata,
            "status": serde_json::to_value(status).unwrap_or(Value::Null),
        });
        text.push_str("---\n");
        match serde_saphyr::to_string(&document) {
            Ok(yaml) => text.push_str(&yaml),
            Err(err) => text.push_str(&format!("# cannot print the status of {object}: {err}\n")),
        }
    }
    text
}
