//! The status writer against the protocol-level fake API server, through the real kube-rs
//! client: another controller's HTTPRoute `parents` entry survives every write of ours,
//! a refused write is retried, and an unchanged status is not written again.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use cluster::{StatusWriter, Target};
use kube::{Api, Client};
use resources::HttpRoute;
use resources::gateway::HttpRouteStatus;
use serde_json::{Value, json};
use test_support::FakeApiServer;
use tokio::sync::watch;

const US: &str = "portcullis.dev/gateway-controller";
const WAIT: Duration = Duration::from_secs(10);

fn their_entry(status: &str) -> Value {
    json!({"parentRef": {"name": "elsewhere"}, "controllerName": "example.com/other",
           "conditions": [{"type": "Accepted", "status": status, "reason": "Accepted",
                           "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]})
}

fn route(parents: &[Value]) -> Value {
    json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
           "metadata": {"name": "routed", "namespace": "default"},
           "spec": {"parentRefs": [{"name": "edge"}, {"name": "elsewhere"}],
                    "rules": [{"backendRefs": [{"name": "web", "port": 80}]}]},
           "status": {"parents": parents}})
}

/// Our entry as convert computes it: its transition time is the writer's to set.
fn our_status(accepted: &str) -> HttpRouteStatus {
    serde_json::from_value(json!({"parents": [{
        "parentRef": {"group": "gateway.networking.k8s.io", "kind": "Gateway",
                      "namespace": "default", "name": "edge"},
        "controllerName": US,
        "conditions": [
            {"type": "Accepted", "status": accepted, "reason": "Accepted", "message": "",
             "lastTransitionTime": "1970-01-01T00:00:00Z"},
            {"type": "ResolvedRefs", "status": "True", "reason": "ResolvedRefs", "message": "",
             "lastTransitionTime": "1970-01-01T00:00:00Z"}]}]}))
    .unwrap()
}

fn parents(api: &FakeApiServer) -> Vec<Value> {
    let route = api.get("HTTPRoute", "default", "routed").unwrap();
    route["status"]["parents"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn route_writes(api: &FakeApiServer) -> usize {
    api.writes()
        .iter()
        .filter(|w| w.ends_with("/httproutes/routed/status"))
        .count()
}

async fn wait_until(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !done() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The route as the watch would hand it over now.
async fn seen(client: &Client) -> Arc<HttpRoute> {
    let routes: Api<HttpRoute> = Api::namespaced(client.clone(), "default");
    Arc::new(routes.get("routed").await.unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn another_controllers_route_parent_entry_survives_our_writes() {
    let api = FakeApiServer::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = api.write_kubeconfig(dir.path(), "writer").unwrap();
    let client = cluster::connect(Some(&kubeconfig)).await.unwrap();
    api.apply(route(&[their_entry("True")]));
    let (_leading_tx, leading) = watch::channel(true);
    let writer = StatusWriter::start(client.clone(), US.to_owned(), leading, Vec::new());

    // Our first write is refused: the writer tries again, and adds ours after theirs.
    api.refuse_status_writes(1);
    writer.update(vec![Target {
        object: seen(&client).await,
        desired: Arc::new(our_status("True")),
    }]);
    wait_until("our entry is written", || parents(&api).len() == 2).await;
    let written = parents(&api);
    assert_eq!(written[0], their_entry("True"));
    assert_eq!(written[1]["controllerName"], US);
    assert_eq!(route_writes(&api), 2, "one refused write, one accepted");
    let our_time = written[1]["conditions"][1]["lastTransitionTime"].clone();
    assert_ne!(our_time, "1970-01-01T00:00:00Z");

    // The other controller changes its entry; then our Accepted condition flips.
    api.apply(route(&[their_entry("False"), written[1].clone()]));
    writer.update(vec![Target {
        object: seen(&client).await,
        desired: Arc::new(our_status("False")),
    }]);
    wait_until("our condition flips", || {
        parents(&api)
            .get(1)
            .is_some_and(|ours| ours["conditions"][0]["status"] == "False")
    })
    .await;
    let written = parents(&api);
    assert_eq!(written[0], their_entry("False"), "theirs, as they left it");
    assert_eq!(
        written[1]["conditions"][1]["lastTransitionTime"], our_time,
        "a condition whose status holds keeps its time"
    );
    assert_eq!(route_writes(&api), 3);

    // The route comes back through the watch with our write: nothing differs any more.
    writer.update(vec![Target {
        object: seen(&client).await,
        desired: Arc::new(our_status("False")),
    }]);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        route_writes(&api),
        3,
        "an unchanged status is not written again"
    );
    assert_eq!(parents(&api), written);
}
