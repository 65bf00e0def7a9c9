//! Gateway API status written to the objects by the leader, only where it differs.
//!
//! What differs is decided by comparing values: the desired status against the object's
//! current one, ignoring `lastTransitionTime` (kept from the current condition while its
//! status holds, set to now when it changes). On an HTTPRoute only the `parents` entries
//! of our controller are ours; other controllers' entries are written back unchanged.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::{Api, Client};
use resources::{Gateway, GatewayClass, HttpRoute, Kind, ObjectRef};
use serde_json::{Value, json};
use tokio::sync::watch;

/// How soon a refused or failed write is tried again.
const RETRY: Duration = Duration::from_secs(1);

/// One object whose status must be written.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusWrite {
    /// The object.
    pub object: ObjectRef,
    /// The version its current status was read from.
    pub resource_version: String,
    /// The whole new `status`.
    pub status: Value,
}

/// The status writes a report asks for: `desired` is each object's status as computed
/// (conditions without `lastTransitionTime`; for routes, only our `parents` entries),
/// `current` each object's status and resourceVersion now. `controller` names our
/// entries in route status.
pub fn pending_writes(
    desired: &BTreeMap<ObjectRef, Value>,
    current: &BTreeMap<ObjectRef, (String, Value)>,
    controller: &str,
) -> Vec<StatusWrite> {
    let now = Timestamp::now().to_string();
    let mut writes = Vec::new();
    for (object, wanted) in desired {
        let Some((resource_version, existing)) = current.get(object) else {
            continue;
        };
        let status = match object.kind {
            Kind::HttpRoute => {
                let ours = |entry: &&Value| entry["controllerName"] == controller;
                let theirs: Vec<Value> = existing["parents"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|entry| !ours(entry))
                    .cloned()
                    .collect();
                let existing_ours: Vec<&Value> = existing["parents"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(ours)
                    .collect();
                let mut parents = theirs;
                for entry in wanted["parents"].as_array().into_iter().flatten() {
                    let before = existing_ours
                        .iter()
                        .find(|e| e["parentRef"] == entry["parentRef"])
                        .copied();
                    parents.push(with_times(entry, before, &now));
                }
                json!({ "parents": parents })
            }
            _ => with_times(wanted, Some(existing), &now),
        };
        // Only the fields we set are compared: a field someone else keeps is not ours.
        let differs = status.as_object().is_some_and(|fields| {
            fields
                .iter()
                .any(|(key, value)| strip_times(value) != strip_times(&existing[key]))
        });
        if differs {
            writes.push(StatusWrite {
                object: object.clone(),
                resource_version: resource_version.clone(),
                status,
            });
        }
    }
    writes
}

/// `status` with every `conditions` list's `lastTransitionTime` taken from `before`
/// where the same condition type had the same status, else set to `now`.
fn with_times(status: &Value, before: Option<&Value>, now: &str) -> Value {
    match status {
        Value::Object(fields) => {
            let mut out = serde_json::Map::new();
            for (key, value) in fields {
                let previous = before.and_then(|b| b.get(key));
                let value = if key == "conditions" {
                    conditions_with_times(value, previous, now)
                } else if key == "listeners" {
                    let listeners = value.as_array().into_iter().flatten().map(|listener| {
                        let earlier = previous
                            .and_then(Value::as_array)
                            .and_then(|list| list.iter().find(|l| l["name"] == listener["name"]));
                        with_times(listener, earlier, now)
                    });
                    Value::Array(listeners.collect())
                } else {
                    value.clone()
                };
                out.insert(key.clone(), value);
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

fn conditions_with_times(conditions: &Value, before: Option<&Value>, now: &str) -> Value {
    let list = conditions
        .as_array()
        .into_iter()
        .flatten()
        .map(|condition| {
            let kept = before
                .and_then(Value::as_array)
                .and_then(|list| {
                    list.iter().find(|c| {
                        c["type"] == condition["type"] && c["status"] == condition["status"]
                    })
                })
                .and_then(|c| c.get("lastTransitionTime").cloned());
            let mut condition = condition.clone();
            condition["lastTransitionTime"] = kept.unwrap_or_else(|| json!(now));
            condition
        });
    Value::Array(list.collect())
}

/// The status without any `lastTransitionTime`, for comparison.
fn strip_times(value: &Value) -> Value {
    match value {
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .filter(|(key, _)| *key != "lastTransitionTime")
                .map(|(key, value)| (key.clone(), strip_times(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip_times).collect()),
        other => other.clone(),
    }
}

/// Writes Gateway API status while this replica leads, whenever the pending writes or
/// the leadership change. Returns when `pending` is closed.
pub async fn write_gateway_status(
    client: Client,
    mut leading: watch::Receiver<bool>,
    mut pending: watch::Receiver<Arc<Vec<StatusWrite>>>,
) {
    let mut written: BTreeMap<ObjectRef, String> = BTreeMap::new();
    loop {
        let mut settled = true;
        if *leading.borrow_and_update() {
            let writes = pending.borrow_and_update().clone();
            written.retain(|object, _| writes.iter().any(|w| w.object == *object));
            for write in writes.iter() {
                if written.get(&write.object) == Some(&write.resource_version) {
                    continue;
                }
                match patch(&client, write).await {
                    Ok(()) => {
                        tracing::info!(object = %write.object, "status written");
                        written.insert(write.object.clone(), write.resource_version.clone());
                    }
                    Err(kube::Error::Api(status)) if status.code == 409 => settled = false,
                    Err(err) => {
                        settled = false;
                        tracing::warn!(object = %write.object, error = %err, "cannot write status");
                    }
                }
            }
        }
        tokio::select! {
            changed = pending.changed() => if changed.is_err() { return },
            _ = leading.changed() => {}
            () = tokio::time::sleep(RETRY), if !settled => {}
        }
    }
}

async fn patch(client: &Client, write: &StatusWrite) -> Result<(), kube::Error> {
    // The version makes the write conditional: a newer object comes back through the
    // watch and is compared again.
    let body = json!({
        "metadata": {"resourceVersion": write.resource_version},
        "status": write.status,
    });
    let params = PatchParams::default();
    let name = write.object.name.as_str();
    let namespace = write.object.namespace.as_str();
    match write.object.kind {
        Kind::GatewayClass => {
            let api: Api<GatewayClass> = Api::all(client.clone());
            api.patch_status(name, &params, &Patch::Merge(&body))
                .await
                .map(drop)
        }
        Kind::Gateway => {
            let api: Api<Gateway> = Api::namespaced(client.clone(), namespace);
            api.patch_status(name, &params, &Patch::Merge(&body))
                .await
                .map(drop)
        }
        Kind::HttpRoute => {
            let api: Api<HttpRoute> = Api::namespaced(client.clone(), namespace);
            api.patch_status(name, &params, &Patch::Merge(&body))
                .await
                .map(drop)
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route() -> ObjectRef {
        ObjectRef::new(Kind::HttpRoute, "default", "web")
    }

    fn accepted(status: &str) -> Value {
        json!({"type": "Accepted", "status": status, "reason": "Accepted", "message": ""})
    }

    #[test]
    fn only_differences_are_written_and_other_controllers_entries_are_kept() {
        let ours = json!({"parentRef": {"name": "gw"}, "controllerName": "us", "conditions": [accepted("True")]});
        let theirs = json!({"parentRef": {"name": "other"}, "controllerName": "them", "conditions": [accepted("False")]});
        let desired = BTreeMap::from([(route(), json!({"parents": [ours.clone()]}))]);

        // Nothing written yet: ours is added beside theirs, with a transition time.
        let current = BTreeMap::from([(
            route(),
            ("1".to_owned(), json!({"parents": [theirs.clone()]})),
        )]);
        let writes = pending_writes(&desired, &current, "us");
        assert_eq!(writes.len(), 1);
        let parents = writes[0].status["parents"].as_array().unwrap();
        assert_eq!(parents[0], theirs);
        assert_eq!(parents[1]["controllerName"], "us");
        assert!(parents[1]["conditions"][0]["lastTransitionTime"].is_string());

        // Written already (with some transition time): nothing to do.
        let mut stored = ours.clone();
        stored["conditions"][0]["lastTransitionTime"] = json!("2026-01-01T00:00:00Z");
        let current = BTreeMap::from([(
            route(),
            (
                "2".to_owned(),
                json!({"parents": [theirs.clone(), stored.clone()]}),
            ),
        )]);
        assert!(pending_writes(&desired, &current, "us").is_empty());

        // The condition flips: written, with a new transition time.
        let flipped = json!({"parents": [{"parentRef": {"name": "gw"}, "controllerName": "us", "conditions": [accepted("False")]}]});
        let desired = BTreeMap::from([(route(), flipped)]);
        let writes = pending_writes(&desired, &current, "us");
        let condition = &writes[0].status["parents"][1]["conditions"][0];
        assert_eq!(condition["status"], "False");
        assert_ne!(condition["lastTransitionTime"], "2026-01-01T00:00:00Z");
    }
}
