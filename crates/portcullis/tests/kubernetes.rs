//! Kubernetes API mode against a protocol-level fake API server (no cluster can run
//! here): the real kube-rs client lists and watches it, and a real HAProxy serves what it
//! holds. Covers the initial-list gate, changes flowing live, resumed and relisted
//! watches, leader election with hand-over, status written only by the leader and only
//! when it differs, and Events.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use serde_json::{Value, json};
use test_support::{EchoServer, FakeApiServer, Portcullis, TlsEchoServer};

const BIN: &str = env!("CARGO_BIN_EXE_portcullis");
const WAIT: Duration = Duration::from_secs(20);

fn service(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"ports": [{"name": "http", "port": 80, "targetPort": 8080}]},
    })
}

fn slice(service: &str, servers: &[&EchoServer]) -> Value {
    let endpoints: Vec<Value> = servers
        .iter()
        .map(|_| json!({"addresses": ["127.0.0.1"], "conditions": {"ready": true}}))
        .collect();
    // One slice per port number: EndpointSlice ports apply to every endpoint in it.
    let port = servers.first().map_or(8080, |s| s.port);
    json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": format!("{service}-1"), "namespace": "default",
                     "labels": {"kubernetes.io/service-name": service}},
        "addressType": "IPv4",
        "ports": [{"name": "http", "port": port}],
        "endpoints": endpoints,
    })
}

fn ingress(name: &str, host: &str, service: &str) -> Value {
    json!({
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"rules": [{"host": host, "http": {"paths": [
            {"path": "/", "pathType": "Prefix",
             "backend": {"service": {"name": service, "port": {"number": 80}}}}]}}]},
    })
}

/// Who answers `host`: the echo server's name, or the status code.
fn answer(port: u16, host: &str) -> String {
    test_support::answer(port, host, "/")
}

fn wait_for(portcullis: &mut Portcullis, host: &str, expected: &str) {
    portcullis
        .wait_until(WAIT, |p| answer(p.http_port, host) == expected)
        .unwrap_or_else(|err| panic!("{host} never answered {expected}: {err}"));
}

/// Every request any instance made is one the deployment's RBAC grants
/// ([`cluster::API_ACCESS`], which a test checks against `deploy/`).
fn assert_only_granted_requests(api: &FakeApiServer) {
    let requests = api.requests();
    assert!(!requests.is_empty());
    for request in requests {
        let granted = cluster::API_ACCESS.iter().any(|access| {
            access.group == request.group
                && access.resource == request.resource
                && access.verbs.contains(&request.verb)
                && (access.grant == cluster::Grant::Cluster || request.namespace == "default")
        });
        assert!(granted, "not granted by the deployment's RBAC: {request:?}");
    }
}

struct Instance {
    portcullis: Portcullis,
    _dir: tempfile::TempDir,
}

/// Starts `portcullis run` against the fake, presenting `identity` as its token.
fn launch(api: &FakeApiServer, identity: &str, extra: &[&str]) -> Instance {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = api.write_kubeconfig(dir.path(), identity).unwrap();
    let source = [
        "--kubeconfig".to_owned(),
        kubeconfig.display().to_string(),
        "--identity".to_owned(),
        identity.to_owned(),
    ];
    let portcullis = Portcullis::spawn(BIN, &source, &dir.path().join("state"), extra).unwrap();
    Instance {
        portcullis,
        _dir: dir,
    }
}

#[test]
fn nothing_is_served_before_every_watcher_has_listed_then_changes_flow_to_haproxy() {
    let api = FakeApiServer::start().unwrap();
    let (blue, green) = (
        EchoServer::start("blue").unwrap(),
        EchoServer::start("green").unwrap(),
    );
    api.apply(service("web"));
    api.apply(slice("web", &[&blue]));
    api.apply(ingress("web", "web.test", "web"));
    api.apply(
        json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                     "metadata": {"name": "not-tls", "namespace": "default"}, "data": {}}),
    );
    for name in ["global", "unrelated"] {
        api.apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": name, "namespace": "default"},
                         "data": {"timeout-client": "77s"}}));
    }
    api.hold_lists("Ingress");

    let mut instance = launch(&api, "solo", &["--configmap", "default/global"]);
    let p = &mut instance.portcullis;
    p.wait_until(WAIT, |_| api.lists().len() >= 11).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        !p.state_dir.join("haproxy.cfg").exists(),
        "rendered before the Ingress list completed:\n{}",
        p.log()
    );
    assert_eq!(p.admin("/readyz").unwrap().status, 503);

    api.release_lists();
    p.wait_until_ready(WAIT).unwrap();
    wait_for(p, "web.test", "blue");
    let mut lists = api.lists();
    lists.sort();
    assert_eq!(
        lists,
        [
            "/api/v1/configmaps?fieldSelector=",
            "/api/v1/namespaces?fieldSelector=",
            "/api/v1/pods?fieldSelector=",
            "/api/v1/secrets?fieldSelector=type!=helm.sh/release.v1,type!=kubernetes.io/service-account-token",
            "/api/v1/services?fieldSelector=",
            "/apis/discovery.k8s.io/v1/endpointslices?fieldSelector=",
            "/apis/gateway.networking.k8s.io/v1/backendtlspolicies?fieldSelector=",
            "/apis/gateway.networking.k8s.io/v1/gatewayclasses?fieldSelector=",
            "/apis/gateway.networking.k8s.io/v1/gateways?fieldSelector=",
            "/apis/gateway.networking.k8s.io/v1/grpcroutes?fieldSelector=",
            "/apis/gateway.networking.k8s.io/v1/httproutes?fieldSelector=",
            "/apis/gateway.networking.k8s.io/v1/listenersets?fieldSelector=",
            "/apis/gateway.networking.k8s.io/v1/referencegrants?fieldSelector=",
            "/apis/gateway.networking.k8s.io/v1/tcproutes?fieldSelector=",
            "/apis/gateway.networking.k8s.io/v1/tlsroutes?fieldSelector=",
            "/apis/gateway.networking.k8s.io/v1/udproutes?fieldSelector=",
            "/apis/networking.k8s.io/v1/ingressclasses?fieldSelector=",
            "/apis/networking.k8s.io/v1/ingresses?fieldSelector=",
        ],
        "one list per kind; Secrets only of the TLS type; ConfigMaps (BackendTLSPolicies' CAs, the global one among them) once"
    );
    let config = std::fs::read_to_string(p.state_dir.join("haproxy.cfg")).unwrap();
    assert!(config.contains("timeout client 77s"), "{config}");

    // An endpoint replaced, a route added, a route removed: each reaches HAProxy.
    api.apply(slice("web", &[&green]));
    wait_for(p, "web.test", "green");
    api.apply(ingress("second", "second.test", "web"));
    wait_for(p, "second.test", "green");
    api.delete("Ingress", "default", "web");
    wait_for(p, "web.test", "404");
    assert_eq!(answer(p.http_port, "second.test"), "green");
    assert_eq!(
        p.metric_total("portcullis_reloads_total"),
        0.0,
        "endpoint and route changes are live updates:\n{}",
        p.log()
    );
    assert_only_granted_requests(&api);
}

#[test]
fn pods_are_listed_and_watched_and_their_labels_set_blue_green_weights_live() {
    let api = FakeApiServer::start().unwrap();
    let blue = EchoServer::start("blue").unwrap();
    api.apply(service("web"));
    let mut with_pod = slice("web", &[&blue]);
    with_pod["endpoints"][0]["targetRef"] = json!({"kind": "Pod", "name": "web-1"});
    api.apply(with_pod);
    let mut canary = ingress("web", "web.test", "web");
    canary["metadata"]["annotations"] =
        json!({"haproxy-ingress.github.io/blue-green-balance": "group=blue=1"});
    api.apply(canary);
    let pod = |group: &str| {
        json!({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "web-1", "namespace": "default", "labels": {"group": group}},
               "spec": {"containers": [{"name": "web", "image": "web"}]}})
    };
    api.apply(pod("old"));
    let mut instance = launch(&api, "solo", &[]);
    let p = &mut instance.portcullis;
    p.wait_until_ready(WAIT).unwrap();
    // Its only server has weight 0: nothing to balance to.
    wait_for(p, "web.test", "503");
    api.apply(pod("blue"));
    wait_for(p, "web.test", "blue");
    api.apply(pod("old"));
    wait_for(p, "web.test", "503");
    assert_eq!(
        p.metric_total("portcullis_reloads_total"),
        0.0,
        "a pod's label changes weights live:\n{}",
        p.log()
    );
    assert_only_granted_requests(&api);
}

#[test]
fn dropped_watches_resume_and_lost_history_forces_a_relist_that_deletes_what_vanished() {
    let api = FakeApiServer::start().unwrap();
    let blue = EchoServer::start("blue").unwrap();
    api.apply(service("web"));
    api.apply(slice("web", &[&blue]));
    api.apply(ingress("kept", "kept.test", "web"));
    api.apply(ingress("doomed", "doomed.test", "web"));
    let mut instance = launch(&api, "solo", &[]);
    let p = &mut instance.portcullis;
    p.wait_until_ready(WAIT).unwrap();
    wait_for(p, "doomed.test", "blue");
    let initial_lists = api.lists().len();

    // A broken connection: the watch resumes from its last version, with no new list.
    api.drop_watches();
    api.apply(ingress("added", "added.test", "web"));
    wait_for(p, "added.test", "blue");
    assert_eq!(
        api.lists().len(),
        initial_lists,
        "a dropped watch must resume, not relist"
    );

    // Quiet for longer than the bookmark interval: bookmarks arrive and change nothing.
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(answer(p.http_port, "kept.test"), "blue");

    // History lost while the object was deleted: 410 Gone, a relist, and the deletion is
    // inferred from the object's absence.
    api.delete_and_lose_history("Ingress", "default", "doomed");
    wait_for(p, "doomed.test", "404");
    assert!(
        api.lists().len() > initial_lists,
        "410 Gone must force a relist"
    );
    assert_eq!(answer(p.http_port, "kept.test"), "blue");
    assert_eq!(answer(p.http_port, "added.test"), "blue");
    assert_only_granted_requests(&api);
}

fn lease_holder(api: &FakeApiServer) -> Option<String> {
    let lease = api.get("Lease", "default", "portcullis-leader")?;
    lease["spec"]["holderIdentity"].as_str().map(str::to_owned)
}

fn status_writes(api: &FakeApiServer, ingress: &str) -> Vec<String> {
    let suffix = format!("/ingresses/{ingress}/status");
    api.writes()
        .into_iter()
        .filter(|w| w.ends_with(&suffix))
        .collect()
}

fn published(api: &FakeApiServer, ingress: &str) -> Value {
    api.get("Ingress", "default", ingress).unwrap()["status"]["loadBalancer"]["ingress"].clone()
}

#[test]
fn only_the_leader_writes_status_and_events_only_when_they_differ_and_a_successor_takes_over() {
    let api = FakeApiServer::start().unwrap();
    let blue = EchoServer::start("blue").unwrap();
    api.apply(service("web"));
    api.apply(slice("web", &[&blue]));
    api.apply(ingress("web", "web.test", "web"));
    // The first status write meets a conflict; the leader must try again.
    api.refuse_status_writes(1);

    let flags = [
        "--publish-address",
        "10.0.0.1,lb.example",
        "--lease-duration",
        "3s",
    ];
    let mut first = launch(&api, "first", &flags);
    first.portcullis.wait_until_ready(WAIT).unwrap();
    first
        .portcullis
        .wait_until(WAIT, |_| lease_holder(&api).as_deref() == Some("first"))
        .unwrap();
    let mut second = launch(&api, "second", &flags);
    second.portcullis.wait_until_ready(WAIT).unwrap();

    let expected = json!([{"hostname": "lb.example"}, {"ip": "10.0.0.1"}]);
    first
        .portcullis
        .wait_until(WAIT, |_| published(&api, "web") == expected)
        .unwrap();
    // A configuration problem becomes an Event on the Ingress, from the leader.
    let mut broken = ingress("broken", "broken.test", "web");
    broken["spec"]["tls"] = json!([{"hosts": ["broken.test"], "secretName": "missing"}]);
    api.apply(broken);
    first
        .portcullis
        .wait_until(WAIT, |_| published(&api, "broken") == expected)
        .unwrap();
    let event_writes = |api: &FakeApiServer| -> Vec<String> {
        api.writes()
            .into_iter()
            .filter(|w| w.contains("/apis/events.k8s.io/v1/namespaces/default/events"))
            .collect()
    };
    first
        .portcullis
        .wait_until(WAIT, |_| !event_writes(&api).is_empty())
        .unwrap();

    // Unrelated changes and time pass: the status is right, so nothing is written again.
    api.apply(ingress("other", "other.test", "missing-service"));
    first
        .portcullis
        .wait_until(WAIT, |_| published(&api, "other") == expected)
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    let web_writes = status_writes(&api, "web");
    assert_eq!(
        web_writes,
        ["first PATCH /apis/networking.k8s.io/v1/namespaces/default/ingresses/web/status"; 2],
        "one refused write, one accepted, none from the follower, none repeated"
    );
    assert_eq!(status_writes(&api, "broken").len(), 1);
    let events = event_writes(&api);
    assert!(events.iter().all(|w| w.starts_with("first ")), "{events:?}");
    let published_events = api.objects("Event");
    let on_broken: Vec<&Value> = published_events
        .iter()
        .filter(|e| e["regarding"]["name"] == "broken")
        .collect();
    assert_eq!(on_broken.len(), 1, "{published_events:#?}");
    assert_eq!(on_broken[0]["type"], "Warning");
    assert_eq!(on_broken[0]["reportingInstance"], "first");
    assert_eq!(on_broken[0]["regarding"]["kind"], "Ingress");
    assert!(
        on_broken[0]["regarding"]["uid"]
            .as_str()
            .is_some_and(|uid| uid.starts_with("uid-")),
        "{:#}",
        on_broken[0]
    );
    let note = on_broken[0]["note"].as_str().unwrap_or_default();
    assert!(
        note.starts_with("spec.tls: secret default/missing not found"),
        "{note}"
    );
    // Another problem of the same object is an Event of its own, saying what it is (an
    // Event's series counts one problem's repeats, and shows its first note).
    let mut broken = ingress("broken", "broken.test", "web");
    broken["spec"]["tls"] = json!([{"hosts": ["broken.test"], "secretName": "absent"}]);
    api.apply(broken);
    let notes_on_broken = |api: &FakeApiServer| -> Vec<String> {
        api.objects("Event")
            .iter()
            .filter(|e| e["regarding"]["name"] == "broken")
            .filter_map(|e| e["note"].as_str().map(str::to_owned))
            .collect()
    };
    first
        .portcullis
        .wait_until(WAIT, |_| notes_on_broken(&api).len() == 2)
        .unwrap_or_else(|_| panic!("{:#?}", api.objects("Event")));
    assert!(
        notes_on_broken(&api)
            .iter()
            .any(|note| note.starts_with("spec.tls: secret default/absent not found")),
        "{:?}",
        notes_on_broken(&api)
    );
    assert_eq!(lease_holder(&api).as_deref(), Some("first"));
    assert_eq!(first.portcullis.metric("portcullis_leader"), Some(1.0));
    assert_eq!(second.portcullis.metric("portcullis_leader"), Some(0.0));
    let by_follower: Vec<String> = api
        .writes()
        .into_iter()
        .filter(|w| w.starts_with("second "))
        .collect();
    assert!(
        by_follower.is_empty(),
        "the follower wrote: {by_follower:?}"
    );

    // The leader crashes: once its lease expires, the follower takes over and writes.
    first.portcullis.crash().unwrap();
    second
        .portcullis
        .wait_until(WAIT, |p| {
            lease_holder(&api).as_deref() == Some("second")
                && p.metric("portcullis_leader") == Some(1.0)
        })
        .unwrap();
    let lease = api.get("Lease", "default", "portcullis-leader").unwrap();
    assert_eq!(lease["spec"]["leaseTransitions"], 1, "{lease:#}");
    // The problem the follower found before it led is published once it leads.
    let from_second = |api: &FakeApiServer| -> Vec<String> {
        api.objects("Event")
            .iter()
            .filter(|e| e["regarding"]["name"] == "broken" && e["reportingInstance"] == "second")
            .filter_map(|e| e["note"].as_str().map(str::to_owned))
            .collect()
    };
    second
        .portcullis
        .wait_until(WAIT, |_| !from_second(&api).is_empty())
        .unwrap_or_else(|_| panic!("{:#?}", api.objects("Event")));
    let notes = from_second(&api);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with("spec.tls: secret default/absent not found"),
        "{notes:?}"
    );
    api.apply(ingress("late", "late.test", "web"));
    second
        .portcullis
        .wait_until(WAIT, |_| published(&api, "late") == expected)
        .unwrap();
    assert_eq!(
        status_writes(&api, "late"),
        ["second PATCH /apis/networking.k8s.io/v1/namespaces/default/ingresses/late/status"]
    );

    // The new leader stops cleanly: it gives the lease up, and a third replica takes it
    // without waiting for it to expire.
    let mut third = launch(&api, "third", &flags);
    third.portcullis.wait_until_ready(WAIT).unwrap();
    assert!(second.portcullis.stop().unwrap());
    let lease = api.get("Lease", "default", "portcullis-leader").unwrap();
    assert_ne!(
        lease["spec"]["holderIdentity"], "second",
        "released at shutdown: {lease:#}"
    );
    third
        .portcullis
        .wait_until(WAIT, |_| lease_holder(&api).as_deref() == Some("third"))
        .unwrap();
    // Traffic never depended on leadership.
    assert_eq!(answer(third.portcullis.http_port, "web.test"), "blue");
    assert_only_granted_requests(&api);
}

#[test]
fn status_is_written_only_once_haproxy_serves_what_it_says() {
    let api = FakeApiServer::start().unwrap();
    let blue = EchoServer::start("blue").unwrap();
    let green = EchoServer::start("green").unwrap();
    api.apply(service("web"));
    api.apply(slice("web", &[&blue]));
    api.apply(ingress("web", "web.test", "web"));
    let flags = ["--publish-address", "10.0.0.1", "--reload-interval", "4s"];
    let mut instance = launch(&api, "only", &flags);
    let p = &mut instance.portcullis;
    p.wait_until_ready(WAIT).unwrap();
    let expected = json!([{"ip": "10.0.0.1"}]);
    p.wait_until(WAIT, |_| published(&api, "web") == expected)
        .unwrap();
    // A new Service is a new backend section: HAProxy serves it after a reload, and
    // reloads are at least four seconds apart, so the second one waits.
    for (name, echo) in [("first", &blue), ("second", &green)] {
        api.apply(service(name));
        api.apply(slice(name, &[echo]));
        api.apply(ingress(name, &format!("{name}.test"), name));
    }
    wait_for(p, "first.test", "blue");
    wait_for(p, "second.test", "green");
    // HAProxy runs what was written, its reload counted: the count to compare with.
    p.wait_until(WAIT, |p| p.admin("/syncz").is_ok_and(|r| r.status == 200))
        .unwrap();
    let reloads = p.metric_total("portcullis_reloads_total");
    // The Service first, seen before its Ingress comes: an Ingress without its Service
    // is served at once (a live change, no reload), which is not what this checks.
    api.apply(service("late"));
    api.apply(slice("late", &[&green]));
    p.wait_until(WAIT, |p| {
        p.metric("portcullis_objects{kind=\"Service\"}") == Some(4.0)
            && p.metric("portcullis_objects{kind=\"EndpointSlice\"}") == Some(4.0)
    })
    .unwrap();
    api.apply(ingress("late", "late.test", "late"));
    // Until HAProxy has reloaded onto it (seconds away), the Ingress's status stays
    // unwritten: whenever it is written, the reload is done.
    p.wait_until(WAIT, |p| {
        let written = published(&api, "late") == expected;
        let reloaded = p.metric_total("portcullis_reloads_total") > reloads;
        assert!(
            reloaded || !written,
            "status written before HAProxy's reload"
        );
        written
    })
    .unwrap();
    wait_for(p, "late.test", "green");
}

#[test]
fn status_writes_go_out_several_at_a_time() {
    let api = FakeApiServer::start().unwrap();
    let blue = EchoServer::start("blue").unwrap();
    api.apply(service("web"));
    api.apply(slice("web", &[&blue]));
    let names: Vec<String> = (0..20).map(|n| format!("web-{n}")).collect();
    for name in &names {
        api.apply(ingress(name, &format!("{name}.test"), "web"));
    }
    api.hold_status_writes();
    let mut instance = launch(&api, "only", &["--publish-address", "10.0.0.1"]);
    let p = &mut instance.portcullis;
    p.wait_until_ready(WAIT).unwrap();
    let in_flight = cluster::WRITES_IN_FLIGHT;
    assert!(in_flight > 1 && in_flight < names.len());
    p.wait_until(WAIT, |_| api.held_status_writes() == in_flight)
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(api.held_status_writes(), in_flight, "no more at a time");
    api.release_status_writes();
    let expected = json!([{"ip": "10.0.0.1"}]);
    p.wait_until(WAIT, |_| {
        names.iter().all(|name| published(&api, name) == expected)
    })
    .unwrap();
    for name in &names {
        assert_eq!(status_writes(&api, name).len(), 1, "{name}");
    }
}

fn in_namespace(mut object: Value, namespace: &str) -> Value {
    object["metadata"]["namespace"] = json!(namespace);
    object
}

#[test]
fn watching_one_namespace_serves_and_lists_only_what_is_in_it() {
    let api = FakeApiServer::start().unwrap();
    let blue = EchoServer::start("blue").unwrap();
    for (namespace, host) in [("team-a", "a.test"), ("team-b", "b.test")] {
        api.apply(in_namespace(service("web"), namespace));
        api.apply(in_namespace(slice("web", &[&blue]), namespace));
        api.apply(in_namespace(ingress("web", host, "web"), namespace));
    }
    let mut instance = launch(
        &api,
        "solo",
        &[
            "--watch-namespace",
            "team-a",
            "--watch-gateway-api",
            "false",
        ],
    );
    let p = &mut instance.portcullis;
    p.wait_until_ready(WAIT).unwrap();
    wait_for(p, "a.test", "blue");
    assert_eq!(answer(p.http_port, "b.test"), "404");
    let mut lists = api.lists();
    lists.sort();
    assert_eq!(
        lists,
        [
            "/api/v1/namespaces/team-a/pods?fieldSelector=",
            "/api/v1/namespaces/team-a/secrets?fieldSelector=type!=helm.sh/release.v1,type!=kubernetes.io/service-account-token",
            "/api/v1/namespaces/team-a/services?fieldSelector=",
            "/api/v1/namespaces?fieldSelector=",
            "/apis/discovery.k8s.io/v1/namespaces/team-a/endpointslices?fieldSelector=",
            "/apis/networking.k8s.io/v1/ingressclasses?fieldSelector=",
            "/apis/networking.k8s.io/v1/namespaces/team-a/ingresses?fieldSelector=",
        ]
    );
    // A change in the unwatched namespace never arrives.
    api.apply(in_namespace(ingress("second", "b2.test", "web"), "team-b"));
    api.apply(in_namespace(ingress("second", "a2.test", "web"), "team-a"));
    wait_for(p, "a2.test", "blue");
    assert_eq!(answer(p.http_port, "b2.test"), "404");
}

#[test]
fn an_opaque_htpasswd_secret_protects_a_path_and_helm_releases_are_never_listed() {
    let api = FakeApiServer::start().unwrap();
    let blue = EchoServer::start("blue").unwrap();
    api.apply(service("web"));
    api.apply(slice("web", &[&blue]));
    let mut protected = ingress("web", "web.test", "web");
    protected["metadata"]["annotations"] = json!({
        "haproxy-ingress.github.io/auth-secret": "users",
        "haproxy-ingress.github.io/auth-realm": "Staff",
    });
    api.apply(protected);
    let base64 = |text: &str| {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(text)
    };
    // How `kubectl create secret generic users --from-file=auth` stores an htpasswd file.
    api.apply(
        json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                     "metadata": {"name": "users", "namespace": "default"},
                     "data": {"auth": base64("carol::plain-pass\n")}}),
    );
    api.apply(
        json!({"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
                     "metadata": {"name": "sh.helm.release.v1.web.v1", "namespace": "default"},
                     "data": {"release": "H4sIAAAAAAAA"}}),
    );
    let mut instance = launch(&api, "solo", &["--watch-gateway-api", "false"]);
    let p = &mut instance.portcullis;
    p.wait_until_ready(WAIT).unwrap();
    p.wait_until(WAIT, |p| answer(p.http_port, "web.test") == "401")
        .unwrap();
    let credentials = base64("carol:plain-pass");
    let granted = test_support::http_request(
        p.http_port,
        &format!(
            "GET / HTTP/1.1\r\nHost: web.test\r\nAuthorization: Basic {credentials}\r\nConnection: close\r\n\r\n"
        ),
    )
    .unwrap();
    assert_eq!(granted.server().as_deref(), Some("blue"));
    assert_eq!(
        p.metric("portcullis_objects{kind=\"Secret\"}"),
        Some(1.0),
        "the Helm release is not held"
    );
}

#[test]
fn ingress_status_follows_the_published_services_load_balancer_address() {
    let api = FakeApiServer::start().unwrap();
    let blue = EchoServer::start("blue").unwrap();
    api.apply(service("web"));
    api.apply(slice("web", &[&blue]));
    api.apply(ingress("web", "web.test", "web"));
    let balancer = |address: &str| {
        let mut front = service("front");
        front["status"] = json!({"loadBalancer": {"ingress": [{"ip": address}]}});
        front
    };
    api.apply(balancer("192.0.2.10"));
    // A Gateway of ours is reached at the same address: its `status.addresses` say so.
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
                     "metadata": {"name": "portcullis"},
                     "spec": {"controllerName": "portcullis.dev/gateway-controller"}}),
    );
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                     "metadata": {"name": "edge", "namespace": "default"},
                     "spec": {"gatewayClassName": "portcullis",
                              "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]}}),
    );
    let gateway_addresses = |api: &FakeApiServer| {
        api.get("Gateway", "default", "edge").unwrap()["status"]["addresses"].clone()
    };
    let flags = ["--publish-service", "default/front"];
    let mut instance = launch(&api, "solo", &flags);
    let p = &mut instance.portcullis;
    p.wait_until_ready(WAIT).unwrap();
    p.wait_until(WAIT, |_| {
        published(&api, "web") == json!([{"ip": "192.0.2.10"}])
            && gateway_addresses(&api) == json!([{"type": "IPAddress", "value": "192.0.2.10"}])
    })
    .unwrap();

    // The load balancer moves: well before the periodic recheck, the status follows.
    api.apply(balancer("192.0.2.20"));
    p.wait_until(Duration::from_secs(5), |_| {
        published(&api, "web") == json!([{"ip": "192.0.2.20"}])
            && gateway_addresses(&api) == json!([{"type": "IPAddress", "value": "192.0.2.20"}])
    })
    .unwrap();
    assert_eq!(status_writes(&api, "web").len(), 2);
    assert_only_granted_requests(&api);
}

#[test]
fn gateway_api_objects_are_watched_and_missing_crds_do_not_hold_rendering_back() {
    let api = FakeApiServer::start().unwrap();
    let blue = EchoServer::start("blue").unwrap();
    api.apply(service("web"));
    api.apply(slice("web", &[&blue]));
    api.apply(ingress("web", "web.test", "web"));
    // An API server without the ReferenceGrant CRD.
    api.remove_kind("ReferenceGrant");
    let mut instance = launch(&api, "solo", &[]);
    let p = &mut instance.portcullis;
    p.wait_until_ready(WAIT).unwrap();
    wait_for(p, "web.test", "blue");

    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
                     "metadata": {"name": "portcullis"},
                     "spec": {"controllerName": "portcullis.dev/gateway-controller"}}),
    );
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                     "metadata": {"name": "edge", "namespace": "default"},
                     "spec": {"gatewayClassName": "portcullis",
                              "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]}}),
    );
    let theirs = json!({"parentRef": {"name": "elsewhere"}, "controllerName": "example.com/other",
                        "conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted",
                                        "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
                     "metadata": {"name": "routed", "namespace": "default", "generation": 2},
                     "spec": {"parentRefs": [{"name": "edge"}], "hostnames": ["routed.test"],
                              "rules": [{"backendRefs": [{"name": "web", "port": 80}]}]},
                     "status": {"parents": [theirs.clone()]}}),
    );
    wait_for(p, "routed.test", "blue");

    // A route holding a value this version does not know (a newer API's filter type) is
    // not served and reported, at every list too, and its status says why to its parent,
    // once; the other routes are served.
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
                     "metadata": {"name": "future", "namespace": "default", "generation": 3},
                     "spec": {"parentRefs": [{"name": "edge"}], "hostnames": ["future.test"],
                              "rules": [{"filters": [{"type": "ExternalAuth", "externalAuth": {}}],
                                         "backendRefs": [{"name": "web", "port": 80}]}]}}),
    );
    let unreadable = "HTTPRoute default/future: cannot be read (spec.rules[0].filters[0].type: unknown variant `ExternalAuth`";
    let future_accepted = |api: &FakeApiServer| {
        let route = api.get("HTTPRoute", "default", "future").unwrap();
        route["status"]["parents"][0]["conditions"][0].clone()
    };
    p.wait_until(WAIT, |_| {
        future_accepted(&api)["reason"] == "UnsupportedValue"
    })
    .unwrap();
    let accepted = future_accepted(&api);
    assert_eq!(accepted["status"], "False");
    assert_eq!(accepted["observedGeneration"], 3);
    let reported = p.log().matches(unreadable).count();
    assert!(reported >= 1);
    api.lose_history();
    p.wait_until(WAIT, |p| p.log().matches(unreadable).count() > reported)
        .unwrap();
    assert_eq!(answer(p.http_port, "future.test"), "404");
    assert_eq!(answer(p.http_port, "routed.test"), "blue");
    let future_writes = || {
        api.writes()
            .iter()
            .filter(|w| w.ends_with("/httproutes/future/status"))
            .count()
    };
    assert_eq!(
        future_writes(),
        1,
        "written once, not again for each version"
    );
    api.delete("HTTPRoute", "default", "future");

    // The leader writes Gateway API status to the objects, keeping other controllers'
    // entries, and writes again only when it differs.
    let route_status =
        |api: &FakeApiServer| api.get("HTTPRoute", "default", "routed").unwrap()["status"].clone();
    p.wait_until(WAIT, |_| {
        route_status(&api)["parents"]
            .as_array()
            .is_some_and(|p| p.len() == 2)
    })
    .unwrap();
    let parents = route_status(&api)["parents"].clone();
    assert_eq!(parents[0], theirs);
    assert_eq!(
        parents[1]["controllerName"],
        "portcullis.dev/gateway-controller"
    );
    assert_eq!(parents[1]["conditions"][0]["type"], "Accepted");
    assert_eq!(parents[1]["conditions"][0]["status"], "True");
    assert_eq!(parents[1]["conditions"][0]["observedGeneration"], 2);
    p.wait_until(WAIT, |_| {
        let gateway = api.get("Gateway", "default", "edge").unwrap();
        gateway["status"]["listeners"][0]["attachedRoutes"] == 1
    })
    .unwrap();
    let class = api.get("GatewayClass", "", "portcullis").unwrap();
    assert_eq!(class["status"]["conditions"][0]["reason"], "Accepted");
    let status_writes = |api: &FakeApiServer| {
        api.writes()
            .iter()
            .filter(|w| w.ends_with("/httproutes/routed/status"))
            .count()
    };
    assert_eq!(status_writes(&api), 1);
    api.apply(slice("web", &[&blue, &blue]));
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        status_writes(&api),
        1,
        "unchanged status is not written again"
    );

    // Moved to a Gateway of another controller's: nothing of ours names it any more, and
    // our entry is taken out of its status, theirs kept.
    let mut moved = api.get("HTTPRoute", "default", "routed").unwrap();
    moved["spec"]["parentRefs"] = json!([{"name": "elsewhere"}]);
    api.apply(moved);
    wait_for(p, "routed.test", "404");
    p.wait_until(WAIT, |_| {
        route_status(&api)["parents"] == json!([theirs.clone()])
    })
    .unwrap();
    api.delete("HTTPRoute", "default", "routed");
    wait_for(p, "routed.test", "404");

    // The CRD removed while the watch missed the deletions: the relist's 404 says the
    // kind holds nothing any more, and what it held is no longer served.
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
                     "metadata": {"name": "orphan", "namespace": "default"},
                     "spec": {"parentRefs": [{"name": "edge"}], "hostnames": ["orphan.test"],
                              "rules": [{"backendRefs": [{"name": "web", "port": 80}]}]}}),
    );
    wait_for(p, "orphan.test", "blue");
    api.remove_kind("HTTPRoute");
    api.lose_history();
    wait_for(p, "orphan.test", "404");
    assert_eq!(answer(p.http_port, "web.test"), "blue");
    assert_only_granted_requests(&api);
}

#[test]
fn grpc_route_status_is_written_and_an_http_route_sharing_its_hostname_waits_for_it() {
    let api = FakeApiServer::start().unwrap();
    let blue = EchoServer::start("blue").unwrap();
    api.apply(service("web"));
    api.apply(slice("web", &[&blue]));
    api.apply(service("greeter"));
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
                     "metadata": {"name": "portcullis"},
                     "spec": {"controllerName": "portcullis.dev/gateway-controller"}}),
    );
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                     "metadata": {"name": "edge", "namespace": "default"},
                     "spec": {"gatewayClassName": "portcullis",
                              "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]}}),
    );
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GRPCRoute",
                     "metadata": {"name": "greeter", "namespace": "default", "generation": 3,
                                  "creationTimestamp": "2026-01-01T00:00:00Z"},
                     "spec": {"parentRefs": [{"name": "edge"}], "hostnames": ["shared.test"],
                              "rules": [{"matches": [{"method": {"service": "greet.Greeter"}}],
                                         "backendRefs": [{"name": "greeter", "port": 80}]}]}}),
    );
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
                     "metadata": {"name": "website", "namespace": "default",
                                  "creationTimestamp": "2026-02-01T00:00:00Z"},
                     "spec": {"parentRefs": [{"name": "edge"}], "hostnames": ["shared.test"],
                              "rules": [{"backendRefs": [{"name": "web", "port": 80}]}]}}),
    );
    let mut instance = launch(&api, "solo", &[]);
    let p = &mut instance.portcullis;
    p.wait_until_ready(WAIT).unwrap();

    // The leader writes the GRPCRoute's status, and the younger HTTPRoute's refusal.
    let condition = |api: &FakeApiServer, kind: &str, name: &str| {
        let route = api.get(kind, "default", name).unwrap();
        let accepted = route["status"]["parents"][0]["conditions"][0].clone();
        (accepted["status"].clone(), accepted["reason"].clone())
    };
    // Each kind has a writer of its own: the Gateway's count may come a moment later.
    let attached = |api: &FakeApiServer| {
        let gateway = api.get("Gateway", "default", "edge").unwrap();
        gateway["status"]["listeners"][0]["attachedRoutes"].clone()
    };
    p.wait_until(WAIT, |_| {
        condition(&api, "GRPCRoute", "greeter") == (json!("True"), json!("Accepted"))
            && condition(&api, "HTTPRoute", "website")
                == (json!("False"), json!("HostnameConflict"))
            && attached(&api) == 1
    })
    .unwrap_or_else(|err| panic!("{err}: {:?}", api.get("HTTPRoute", "default", "website")));
    let greeter = api.get("GRPCRoute", "default", "greeter").unwrap();
    let parent = &greeter["status"]["parents"][0];
    assert_eq!(parent["parentRef"]["name"], "edge");
    assert_eq!(
        parent["controllerName"],
        "portcullis.dev/gateway-controller"
    );
    assert_eq!(parent["conditions"][0]["observedGeneration"], 3);
    assert_eq!(parent["conditions"][1]["type"], "ResolvedRefs");
    assert_eq!(parent["conditions"][1]["status"], "True");
    let gateway = api.get("Gateway", "default", "edge").unwrap();
    let listener = &gateway["status"]["listeners"][0];
    assert_eq!(listener["attachedRoutes"], 1);
    assert_eq!(
        listener["supportedKinds"],
        json!([{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute"},
               {"group": "gateway.networking.k8s.io", "kind": "GRPCRoute"}])
    );
    assert!(
        api.writes()
            .iter()
            .any(|w| w.ends_with("/grpcroutes/greeter/status")),
        "{:?}",
        api.writes()
    );
    assert_eq!(answer(p.http_port, "shared.test"), "404");

    // The GRPCRoute goes: the HTTPRoute is accepted and served, converted again because a
    // GRPCRoute naming its Gateway changed.
    api.delete("GRPCRoute", "default", "greeter");
    wait_for(p, "shared.test", "blue");
    p.wait_until(WAIT, |_| {
        condition(&api, "HTTPRoute", "website") == (json!("True"), json!("Accepted"))
    })
    .unwrap();
    assert_only_granted_requests(&api);
}

#[test]
fn a_listener_set_is_watched_served_and_its_status_and_its_gateway_s_written() {
    let api = FakeApiServer::start().unwrap();
    let blue = EchoServer::start("blue").unwrap();
    api.apply(service("web"));
    api.apply(slice("web", &[&blue]));
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
                     "metadata": {"name": "portcullis"},
                     "spec": {"controllerName": "portcullis.dev/gateway-controller"}}),
    );
    let gateway = |allowed: Value| {
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
               "metadata": {"name": "edge", "namespace": "default"},
               "spec": {"gatewayClassName": "portcullis", "allowedListeners": allowed,
                        "listeners": [{"name": "http", "protocol": "HTTP", "port": 80,
                                       "hostname": "gw.test"}]}})
    };
    api.apply(gateway(json!({"namespaces": {"from": "Same"}})));
    let listener_set = |hostname: &str| {
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "ListenerSet",
               "metadata": {"name": "extra", "namespace": "default", "generation": 2},
               "spec": {"parentRef": {"name": "edge"},
                        "listeners": [{"name": "ls", "protocol": "HTTP", "port": 80,
                                       "hostname": hostname}]}})
    };
    api.apply(listener_set("ls.test"));
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
                     "metadata": {"name": "r", "namespace": "default"},
                     "spec": {"parentRefs": [{"kind": "ListenerSet", "name": "extra"}],
                              "rules": [{"backendRefs": [{"name": "web", "port": 80}]}]}}),
    );
    let mut instance = launch(&api, "solo", &[]);
    let p = &mut instance.portcullis;
    p.wait_until_ready(WAIT).unwrap();
    wait_for(p, "ls.test", "blue");
    assert_eq!(
        answer(p.http_port, "gw.test"),
        "404",
        "the route names the ListenerSet only"
    );

    // The leader writes the ListenerSet's status, its Gateway's count, the route's parent.
    let accepted = |api: &FakeApiServer| {
        let set = api.get("ListenerSet", "default", "extra").unwrap();
        let accepted = set["status"]["conditions"][0].clone();
        (accepted["status"].clone(), accepted["reason"].clone())
    };
    // Each kind has a writer of its own: wait for the route's too.
    let route_parent_kind = |api: &FakeApiServer| {
        api.get("HTTPRoute", "default", "r").unwrap()["status"]["parents"][0]["parentRef"]["kind"]
            .clone()
    };
    p.wait_until(WAIT, |_| {
        accepted(&api) == (json!("True"), json!("Accepted"))
            && api.get("Gateway", "default", "edge").unwrap()["status"]["attachedListenerSets"] == 1
            && route_parent_kind(&api) == "ListenerSet"
    })
    .unwrap_or_else(|err| panic!("{err}: {:?}", api.get("ListenerSet", "default", "extra")));
    let set = api.get("ListenerSet", "default", "extra").unwrap();
    assert_eq!(set["status"]["conditions"][0]["observedGeneration"], 2);
    assert_eq!(set["status"]["conditions"][1]["type"], "Programmed");
    let listener = &set["status"]["listeners"][0];
    assert_eq!(listener["name"], "ls");
    assert_eq!(listener["attachedRoutes"], 1);
    let route = api.get("HTTPRoute", "default", "r").unwrap();
    let parent = &route["status"]["parents"][0];
    assert_eq!(parent["parentRef"]["kind"], "ListenerSet");
    assert_eq!(parent["parentRef"]["name"], "extra");
    assert_eq!(parent["conditions"][0]["status"], "True");
    assert!(
        api.writes()
            .iter()
            .any(|w| w.ends_with("/listenersets/extra/status")),
        "{:?}",
        api.writes()
    );

    // A change to the ListenerSet flows to HAProxy.
    api.apply(listener_set("renamed.test"));
    wait_for(p, "renamed.test", "blue");
    assert_eq!(answer(p.http_port, "ls.test"), "404");

    // The Gateway stops admitting ListenerSets: nothing of it is served, its status says
    // why, and the Gateway counts none.
    api.apply(gateway(json!({"namespaces": {"from": "None"}})));
    wait_for(p, "renamed.test", "404");
    p.wait_until(WAIT, |_| {
        accepted(&api) == (json!("False"), json!("NotAllowed"))
            && api.get("Gateway", "default", "edge").unwrap()["status"]["attachedListenerSets"] == 0
    })
    .unwrap_or_else(|err| panic!("{err}: {:?}", api.get("ListenerSet", "default", "extra")));
    assert_only_granted_requests(&api);
}

#[test]
fn a_tls_route_is_served_and_its_status_written_in_kubernetes_mode() {
    let api = FakeApiServer::start().unwrap();
    let secure = TlsEchoServer::start("secure", "secure backend").unwrap();
    api.apply(json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "secure", "namespace": "default"},
        "spec": {"ports": [{"name": "https", "port": 443}]},
    }));
    api.apply(json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "secure-1", "namespace": "default",
                     "labels": {"kubernetes.io/service-name": "secure"}},
        "addressType": "IPv4",
        "ports": [{"name": "https", "port": secure.port}],
        "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}],
    }));
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
               "metadata": {"name": "portcullis"},
               "spec": {"controllerName": "portcullis.dev/gateway-controller"}}),
    );
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
               "metadata": {"name": "edge", "namespace": "default"},
               "spec": {"gatewayClassName": "portcullis",
                        "listeners": [{"name": "tls", "protocol": "TLS", "port": 443,
                                       "hostname": "*.passthrough.test",
                                       "tls": {"mode": "Passthrough"}}]}}),
    );
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "TLSRoute",
               "metadata": {"name": "secure", "namespace": "default", "generation": 3},
               "spec": {"parentRefs": [{"name": "edge"}], "hostnames": ["a.passthrough.test"],
                        "rules": [{"backendRefs": [{"name": "secure", "port": 443}]}]}}),
    );
    let mut instance = launch(&api, "solo", &[]);
    let p = &mut instance.portcullis;
    p.wait_until_ready(WAIT).unwrap();
    p.wait_until(WAIT, |p| {
        test_support::https_get(
            p.https_port,
            "a.passthrough.test",
            "a.passthrough.test",
            "/",
        )
        .is_ok_and(|reply| {
            reply.certificate_cn == "secure backend"
                && reply.response.server().as_deref() == Some("secure")
        })
    })
    .unwrap_or_else(|err| panic!("{err}"));
    let route_status =
        |api: &FakeApiServer| api.get("TLSRoute", "default", "secure").unwrap()["status"].clone();
    p.wait_until(WAIT, |_| {
        route_status(&api)["parents"]
            .as_array()
            .is_some_and(|p| !p.is_empty())
    })
    .unwrap();
    let parent = route_status(&api)["parents"][0].clone();
    assert_eq!(
        parent["controllerName"],
        "portcullis.dev/gateway-controller"
    );
    assert_eq!(parent["parentRef"]["name"], "edge");
    let condition = |kind: &str| {
        parent["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == kind)
            .cloned()
            .unwrap()
    };
    assert_eq!(condition("Accepted")["status"], "True");
    assert_eq!(condition("ResolvedRefs")["status"], "True");
    assert_eq!(condition("Accepted")["observedGeneration"], 3);
    p.wait_until(WAIT, |_| {
        let gateway = api.get("Gateway", "default", "edge").unwrap();
        gateway["status"]["listeners"][0]["attachedRoutes"] == 1
    })
    .unwrap();
    let gateway = api.get("Gateway", "default", "edge").unwrap();
    assert_eq!(
        gateway["status"]["listeners"][0]["supportedKinds"],
        json!([{"group": "gateway.networking.k8s.io", "kind": "TLSRoute"}])
    );
    // The route's name removed: HAProxy terminates it again, live.
    api.delete("TLSRoute", "default", "secure");
    p.wait_until(WAIT, |p| {
        test_support::https_get(
            p.https_port,
            "a.passthrough.test",
            "a.passthrough.test",
            "/",
        )
        .is_ok_and(|reply| reply.certificate_cn == "portcullis default certificate")
    })
    .unwrap();
    assert_only_granted_requests(&api);
}

#[test]
fn tcp_services_and_tcp_routes_are_served_and_route_status_written_in_kubernetes_mode() {
    let api = FakeApiServer::start().unwrap();
    let (database, queue) = (
        EchoServer::start("database").unwrap(),
        EchoServer::start("queue").unwrap(),
    );
    api.apply(service("database"));
    api.apply(slice("database", &[&database]));
    api.apply(service("queue"));
    api.apply(slice("queue", &[&queue]));
    let (configmap_port, listener_port) = (test_support::free_port(), test_support::free_port());
    api.apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": "tcp", "namespace": "default"},
                     "data": {configmap_port.to_string(): "default/database:80"}}));
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
               "metadata": {"name": "portcullis"},
               "spec": {"controllerName": "portcullis.dev/gateway-controller"}}),
    );
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
               "metadata": {"name": "edge", "namespace": "default"},
               "spec": {"gatewayClassName": "portcullis",
                        "listeners": [{"name": "tcp", "protocol": "TCP", "port": listener_port}]}}),
    );
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "TCPRoute",
               "metadata": {"name": "queue", "namespace": "default", "generation": 2},
               "spec": {"parentRefs": [{"name": "edge"}],
                        "rules": [{"backendRefs": [{"name": "queue", "port": 80}]}]}}),
    );
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "UDPRoute",
               "metadata": {"name": "dns", "namespace": "default"},
               "spec": {"parentRefs": [{"name": "edge"}],
                        "rules": [{"backendRefs": [{"name": "queue", "port": 53}]}]}}),
    );
    let mut instance = launch(&api, "solo", &["--tcp-services-configmap", "default/tcp"]);
    let p = &mut instance.portcullis;
    p.wait_until_ready(WAIT).unwrap();
    let through = |port: u16| {
        test_support::KeepAliveClient::new(port)
            .get("any.test", "/")
            .ok()
            .and_then(|r| r.server())
    };
    p.wait_until(WAIT, |_| {
        through(configmap_port).as_deref() == Some("database")
    })
    .unwrap();
    p.wait_until(WAIT, |_| through(listener_port).as_deref() == Some("queue"))
        .unwrap();
    let parent_conditions = |kind: &str, name: &str| -> Vec<(String, String)> {
        let status = api.get(kind, "default", name).unwrap()["status"].clone();
        status["parents"][0]["conditions"]
            .as_array()
            .map(|conditions| {
                conditions
                    .iter()
                    .map(|c| {
                        (
                            c["type"].as_str().unwrap_or_default().to_owned(),
                            format!(
                                "{}/{}",
                                c["status"].as_str().unwrap_or_default(),
                                c["reason"].as_str().unwrap_or_default()
                            ),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    p.wait_until(WAIT, |_| !parent_conditions("TCPRoute", "queue").is_empty())
        .unwrap();
    assert_eq!(
        parent_conditions("TCPRoute", "queue"),
        [
            ("Accepted".to_owned(), "True/Accepted".to_owned()),
            ("ResolvedRefs".to_owned(), "True/ResolvedRefs".to_owned())
        ]
    );
    p.wait_until(WAIT, |_| !parent_conditions("UDPRoute", "dns").is_empty())
        .unwrap();
    assert_eq!(
        parent_conditions("UDPRoute", "dns")[0],
        (
            "Accepted".to_owned(),
            "False/NotAllowedByListeners".to_owned()
        )
    );
    p.wait_until(WAIT, |_| {
        let gateway = api.get("Gateway", "default", "edge").unwrap();
        gateway["status"]["listeners"][0]["attachedRoutes"] == 1
    })
    .unwrap();
    // The route removed: its port no longer has a frontend.
    api.delete("TCPRoute", "default", "queue");
    p.wait_until(WAIT, |_| through(listener_port).is_none())
        .unwrap();
    assert_only_granted_requests(&api);
}

#[test]
fn a_backend_tls_policy_is_watched_applied_and_its_status_written_with_its_ca_configmap() {
    let api = FakeApiServer::start().unwrap();
    let pki = test_support::server_pki("backend CA", &["abc.example.com"]);
    let secure = TlsEchoServer::start_signed("secure", &pki).unwrap();
    api.apply(json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "secure", "namespace": "default"},
        "spec": {"ports": [{"name": "btls", "port": 443}]},
    }));
    api.apply(json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "secure-1", "namespace": "default",
                     "labels": {"kubernetes.io/service-name": "secure"}},
        "addressType": "IPv4",
        "ports": [{"name": "btls", "port": secure.port}],
        "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}],
    }));
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
               "metadata": {"name": "portcullis"},
               "spec": {"controllerName": "portcullis.dev/gateway-controller"}}),
    );
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
               "metadata": {"name": "edge", "namespace": "default"},
               "spec": {"gatewayClassName": "portcullis",
                        "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]}}),
    );
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
               "metadata": {"name": "secure", "namespace": "default"},
               "spec": {"parentRefs": [{"name": "edge"}], "hostnames": ["abc.example.com"],
                        "rules": [{"backendRefs": [{"name": "secure", "port": 443}]}]}}),
    );
    // The policy names a CA ConfigMap that does not exist yet.
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "BackendTLSPolicy",
               "metadata": {"name": "secure", "namespace": "default", "generation": 2},
               "spec": {"targetRefs": [{"group": "", "kind": "Service", "name": "secure",
                                        "sectionName": "btls"}],
                        "validation": {"caCertificateRefs": [{"group": "", "kind": "ConfigMap",
                                                              "name": "backend-ca"}],
                                       "hostname": "abc.example.com"}}}),
    );
    let mut instance = launch(&api, "solo", &[]);
    let p = &mut instance.portcullis;
    p.wait_until_ready(WAIT).unwrap();
    let conditions = |api: &FakeApiServer| {
        let policy = api.get("BackendTLSPolicy", "default", "secure").unwrap();
        let ancestor = &policy["status"]["ancestors"][0];
        let found: Vec<(Value, Value)> = ancestor["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| (c["type"].clone(), c["reason"].clone()))
            .collect();
        (ancestor["ancestorRef"]["name"].clone(), found)
    };
    p.wait_until(WAIT, |_| {
        conditions(&api)
            == (
                json!("edge"),
                vec![
                    (json!("Accepted"), json!("NoValidCACertificate")),
                    (json!("ResolvedRefs"), json!("InvalidCACertificateRef")),
                ],
            )
    })
    .unwrap_or_else(|err| panic!("{err}: {:?}", conditions(&api)));
    assert_eq!(answer(p.http_port, "abc.example.com"), "503");

    // The ConfigMap appears: watched, the backend is reached over verified TLS with the
    // policy's hostname as SNI, and the policy is accepted.
    api.apply(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "backend-ca", "namespace": "default"},
        "data": {"ca.crt": pki.ca_pem},
    }));
    wait_for(p, "abc.example.com", "secure");
    let reply = test_support::http_get(p.http_port, "abc.example.com", "/").unwrap();
    assert_eq!(reply.echo().unwrap()["sni"], "abc.example.com");
    p.wait_until(WAIT, |_| {
        conditions(&api).1
            == vec![
                (json!("Accepted"), json!("Accepted")),
                (json!("ResolvedRefs"), json!("ResolvedRefs")),
            ]
    })
    .unwrap_or_else(|err| panic!("{err}: {:?}", conditions(&api)));
    let policy = api.get("BackendTLSPolicy", "default", "secure").unwrap();
    let ancestor = &policy["status"]["ancestors"][0];
    assert_eq!(
        ancestor["controllerName"],
        "portcullis.dev/gateway-controller"
    );
    assert_eq!(ancestor["conditions"][0]["observedGeneration"], 2);
    assert!(
        api.writes()
            .iter()
            .any(|w| w.ends_with("/backendtlspolicies/secure/status")),
        "{:?}",
        api.writes()
    );
    assert_only_granted_requests(&api);
}

#[test]
fn the_global_and_the_tcp_services_configmaps_of_one_namespace_both_survive_lists_and_relists() {
    let api = FakeApiServer::start().unwrap();
    let database = EchoServer::start("database").unwrap();
    api.apply(service("database"));
    api.apply(slice("database", &[&database]));
    let configmap_port = test_support::free_port();
    api.apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": "global", "namespace": "default"},
                     "data": {"timeout-client": "77s"}}));
    api.apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": "tcp", "namespace": "default"},
                     "data": {configmap_port.to_string(): "default/database:80"}}));
    // Without the Gateway API, each ConfigMap has a watcher of its own, in one namespace.
    let mut instance = launch(
        &api,
        "solo",
        &[
            "--watch-gateway-api",
            "false",
            "--configmap",
            "default/global",
            "--tcp-services-configmap",
            "default/tcp",
        ],
    );
    let p = &mut instance.portcullis;
    p.wait_until_ready(WAIT).unwrap();
    let both_served = |p: &Portcullis| {
        let config = std::fs::read_to_string(p.state_dir.join("haproxy.cfg")).unwrap_or_default();
        let tcp = test_support::KeepAliveClient::new(configmap_port)
            .get("any.test", "/")
            .ok()
            .and_then(|r| r.server());
        config.contains("timeout client 77s") && tcp.as_deref() == Some("database")
    };
    p.wait_until(WAIT, |p| both_served(p))
        .unwrap_or_else(|_| panic!("after the first lists:\n{}", p.log()));

    // Every watcher lists again; neither ConfigMap's list deletes the other one.
    let lists = api.lists().len();
    let reloads = p.metric_total("portcullis_reloads_total");
    api.lose_history();
    p.wait_until(WAIT, |_| api.lists().len() >= 2 * lists)
        .unwrap_or_else(|_| panic!("no relist:\n{:?}", api.lists()));
    std::thread::sleep(Duration::from_millis(500));
    assert!(both_served(p), "after the relists:\n{}", p.log());
    // Nothing changed: nothing to reload.
    assert_eq!(
        p.metric_total("portcullis_reloads_total"),
        reloads,
        "{}",
        p.log()
    );
}

#[test]
fn an_ingress_class_s_parameters_are_read_in_the_controller_s_namespace_and_follow_its_edits() {
    // With the Gateway API, every ConfigMap is listed and the controller's namespace's kept
    // whole; without it, the controller's namespace has a watcher of its own.
    for gateway_api in ["true", "false"] {
        let api = FakeApiServer::start().unwrap();
        let blue = EchoServer::start("blue").unwrap();
        api.apply(service("web"));
        api.apply(slice("web", &[&blue]));
        api.apply(
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
                         "metadata": {"name": "guarded"},
                         "spec": {"controller": "portcullis.dev/ingress-controller",
                                  "parameters": {"kind": "ConfigMap", "name": "class-keys"}}}),
        );
        let class_keys = |range: &str| {
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "class-keys", "namespace": "ingress"},
                   "data": {"allowlist-source-range": range}})
        };
        api.apply(class_keys("10.0.0.0/8"));
        api.apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": "global", "namespace": "ingress"},
                         "data": {"timeout-client": "77s"}}));
        let mut guarded = ingress("web", "web.test", "web");
        guarded["spec"]["ingressClassName"] = json!("guarded");
        api.apply(guarded);
        api.apply(ingress("open", "open.test", "web"));

        let mut instance = launch(
            &api,
            "solo",
            &[
                "--configmap",
                "ingress/global",
                "--watch-gateway-api",
                gateway_api,
            ],
        );
        let p = &mut instance.portcullis;
        p.wait_until_ready(WAIT).unwrap();
        wait_for(p, "open.test", "blue");
        // The class's allow list leaves 127.0.0.1 out; the class-less Ingress has none.
        wait_for(p, "web.test", "403");
        api.apply(class_keys("127.0.0.0/8"));
        wait_for(p, "web.test", "blue");
        assert_eq!(answer(p.http_port, "open.test"), "blue");
        assert_only_granted_requests(&api);
    }
}

#[test]
fn a_leader_whose_lease_requests_hang_steps_down_before_another_takes_the_lease() {
    let api = FakeApiServer::start().unwrap();
    let blue = EchoServer::start("blue").unwrap();
    api.apply(service("web"));
    api.apply(slice("web", &[&blue]));
    api.apply(ingress("web", "web.test", "web"));
    let flags = ["--lease-duration", "3s"];
    let mut first = launch(&api, "first", &flags);
    first.portcullis.wait_until_ready(WAIT).unwrap();
    first
        .portcullis
        .wait_until(WAIT, |_| lease_holder(&api).as_deref() == Some("first"))
        .unwrap();
    let mut second = launch(&api, "second", &flags);
    second.portcullis.wait_until_ready(WAIT).unwrap();

    // The leader's Lease requests get no answer: it steps down at its renew deadline (two
    // thirds of the duration), before the other replica, which waits the whole duration
    // without a renewal, takes the lease; at no moment do both lead.
    api.hang_leases_of("first");
    let leads = |instance: &Instance| instance.portcullis.metric("portcullis_leader") == Some(1.0);
    let deadline = std::time::Instant::now() + WAIT;
    while !leads(&second) {
        assert!(
            !(leads(&first) && leads(&second)),
            "both lead:\n{}",
            first.portcullis.log()
        );
        assert!(
            std::time::Instant::now() < deadline,
            "no takeover:\n{}",
            second.portcullis.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!leads(&first), "{}", first.portcullis.log());
    assert_eq!(lease_holder(&api).as_deref(), Some("second"));
    api.answer_leases_of("first");
    second.portcullis.wait_until_ready(WAIT).unwrap();
    std::thread::sleep(Duration::from_secs(2));
    assert!(!leads(&first) && leads(&second));
    let _ = &mut first;
}

#[test]
fn the_default_certificate_is_read_from_a_namespace_the_watched_ones_leave_out() {
    let api = FakeApiServer::start().unwrap();
    let blue = EchoServer::start("blue").unwrap();
    api.apply(in_namespace(service("web"), "team-a"));
    api.apply(in_namespace(slice("web", &[&blue]), "team-a"));
    api.apply(in_namespace(ingress("web", "a.test", "web"), "team-a"));
    let (cert, key) = test_support::self_signed("fallback.example", &["fallback.example"]);
    let base64 = |text: &str| {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(text)
    };
    api.apply(
        json!({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
                     "metadata": {"name": "default-cert", "namespace": "ingress"},
                     "data": {"tls.crt": base64(&cert), "tls.key": base64(&key)}}),
    );
    let mut instance = launch(
        &api,
        "solo",
        &[
            "--watch-namespace",
            "team-a",
            "--watch-gateway-api",
            "false",
            "--default-ssl-certificate",
            "ingress/default-cert",
        ],
    );
    let p = &mut instance.portcullis;
    p.wait_until_ready(WAIT).unwrap();
    wait_for(p, "a.test", "blue");
    let served = test_support::https_get(p.https_port, "unknown.test", "unknown.test", "/")
        .unwrap()
        .certificate_cn;
    assert_eq!(served, "fallback.example", "{}", p.log());
    assert!(
        api.lists()
            .iter()
            .any(|l| l
                == "/api/v1/namespaces/ingress/secrets?fieldSelector=metadata.name=default-cert"),
        "{:?}",
        api.lists()
    );
    assert_only_granted_requests(&api);
}

#[test]
fn a_gateway_this_version_cannot_read_keeps_its_last_readable_version_and_never_stops_a_start() {
    let api = FakeApiServer::start().unwrap();
    let blue = EchoServer::start("blue").unwrap();
    api.apply(service("web"));
    api.apply(slice("web", &[&blue]));
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
               "metadata": {"name": "portcullis"},
               "spec": {"controllerName": "portcullis.dev/gateway-controller"}}),
    );
    // Another implementation's class, its status in an older API version's shape.
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
               "metadata": {"name": "other"},
               "spec": {"controllerName": "example.com/other"},
               "status": {"conditions": [], "supportedFeatures": ["HTTPRoute"]}}),
    );
    let edge = |tls_mode: &str| {
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
               "metadata": {"name": "edge", "namespace": "default"},
               "spec": {"gatewayClassName": "portcullis",
                        "listeners": [{"name": "http", "protocol": "HTTP", "port": 80},
                                      {"name": "tls", "protocol": "TLS", "port": 443,
                                       "hostname": "tls.test", "tls": {"mode": tls_mode}}]}})
    };
    api.apply(edge("Passthrough"));
    // Another team's Gateway with a value of a newer API version (a TLS mode).
    let mut future = edge("FutureMode");
    future["metadata"]["name"] = json!("future");
    api.apply(future);
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
               "metadata": {"name": "routed", "namespace": "default"},
               "spec": {"parentRefs": [{"name": "edge"}], "hostnames": ["routed.test"],
                        "rules": [{"backendRefs": [{"name": "web", "port": 80}]}]}}),
    );
    let mut instance = launch(&api, "solo", &[]);
    let p = &mut instance.portcullis;
    p.wait_until_ready(WAIT).unwrap();
    wait_for(p, "routed.test", "blue");
    let left_out = "Gateway default/future: cannot be read (spec.listeners[1].tls.mode: unknown variant `FutureMode`";
    p.wait_until(WAIT, |p| p.log().contains(left_out)).unwrap();
    assert!(p.log().contains("it is not served until it is fixed"));

    // The served Gateway changed into something unreadable: its last readable version
    // keeps its routes served, at the change and at a relist.
    api.apply(edge("FutureMode"));
    let kept = "Gateway default/edge: cannot be read (spec.listeners[1].tls.mode: unknown variant `FutureMode`";
    p.wait_until(WAIT, |p| p.log().matches(kept).count() == 1)
        .unwrap();
    api.lose_history();
    p.wait_until(WAIT, |p| p.log().matches(kept).count() == 2)
        .unwrap();
    assert!(
        p.log()
            .contains("its last readable version is served until it is fixed")
    );
    assert_eq!(answer(p.http_port, "routed.test"), "blue");

    // A route added meanwhile attaches to the version served; once the Gateway is
    // fixed, its newer version is read (its listener now takes one hostname only).
    api.apply(
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
               "metadata": {"name": "elsewhere", "namespace": "default"},
               "spec": {"parentRefs": [{"name": "edge"}], "hostnames": ["elsewhere.test"],
                        "rules": [{"backendRefs": [{"name": "web", "port": 80}]}]}}),
    );
    wait_for(p, "elsewhere.test", "blue");
    let mut fixed = edge("Passthrough");
    fixed["spec"]["listeners"][0]["hostname"] = json!("routed.test");
    api.apply(fixed);
    wait_for(p, "elsewhere.test", "404");
    assert_eq!(answer(p.http_port, "routed.test"), "blue");
    api.delete("Gateway", "default", "edge");
    wait_for(p, "routed.test", "404");
}
