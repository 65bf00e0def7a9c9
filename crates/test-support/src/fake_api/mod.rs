//! A protocol-level fake Kubernetes API server on 127.0.0.1: list (in pages) and watch with
//! resourceVersions and bookmarks, 410 Gone after lost history, dropped watch
//! connections, create/replace/merge-patch/delete with optimistic concurrency, status
//! subresources with injectable conflicts. The real kube-rs client talks to it.

mod http;
mod store;

use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use http::Request;
use store::{Refusal, Resource, Selector, Store, merge_patch, status_body, str_at};

/// How long a watch may stay silent before it is sent a bookmark.
const BOOKMARK_EVERY: Duration = Duration::from_secs(1);

/// A request as RBAC judges it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiRequest {
    /// The client's bearer token.
    pub token: String,
    /// `get`, `list`, `watch`, `create`, `update`, `patch` or `delete`.
    pub verb: &'static str,
    /// API group; empty for the core group.
    pub group: &'static str,
    /// Resource, with `/status` for the status subresource.
    pub resource: String,
    /// Namespace; empty for a cluster-wide request.
    pub namespace: String,
}

#[derive(Debug, Default)]
struct Shared {
    store: Mutex<Store>,
    changed: Condvar,
    stopping: AtomicBool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Store> {
        self.store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The fake API server; stops accepting when dropped.
#[derive(Debug)]
pub struct FakeApiServer {
    port: u16,
    shared: Arc<Shared>,
}

impl FakeApiServer {
    /// Starts serving on a free port of 127.0.0.1.
    pub fn start() -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let shared = Arc::new(Shared::default());
        let accepting = shared.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if accepting.stopping.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(stream) = stream else { continue };
                let shared = accepting.clone();
                std::thread::spawn(move || serve(&shared, &stream));
            }
        });
        Ok(Self { port, shared })
    }

    /// The server's URL.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Writes a kubeconfig that points at this server into `dir`, for a client that
    /// presents `token` (each write is recorded with it).
    pub fn write_kubeconfig(&self, dir: &Path, token: &str) -> std::io::Result<PathBuf> {
        let path = dir.join(format!("kubeconfig-{token}"));
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: {}\nusers:\n- name: fake\n  user:\n    token: {token}\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\n    namespace: default\ncurrent-context: fake\n",
            self.url()
        );
        std::fs::write(&path, text)?;
        Ok(path)
    }

    /// Creates or replaces an object (as `kubectl apply` would), announcing it to watches.
    pub fn apply(&self, object: Value) -> Value {
        let kind = str_at(&object, "/kind").to_owned();
        let Some(resource) = store::resource_of_kind(&kind) else {
            panic!("the fake API server does not serve kind {kind}");
        };
        let mut object = object;
        if let Some(metadata) = object["metadata"].as_object_mut() {
            metadata.remove("resourceVersion");
        }
        let written = self.shared.lock().write(&resource, object, false, false);
        self.shared.changed.notify_all();
        written.unwrap_or_else(|refusal| panic!("apply refused: {refusal:?}"))
    }

    /// Deletes an object, announcing it to watches.
    pub fn delete(&self, kind: &str, namespace: &str, name: &str) {
        let resource = resource(kind);
        self.shared.lock().delete(&resource, namespace, name, true);
        self.shared.changed.notify_all();
    }

    /// Deletes an object and loses the event history, as a compaction would: every open
    /// watch ends, and a watch that resumes gets 410 Gone and must list again to learn
    /// that the object is gone.
    pub fn delete_and_lose_history(&self, kind: &str, namespace: &str, name: &str) {
        let resource = resource(kind);
        let mut store = self.shared.lock();
        store.delete(&resource, namespace, name, false);
        store.lose_history();
        drop(store);
        self.shared.changed.notify_all();
    }

    /// Loses the event history, as a compaction would: every open watch ends, and every
    /// watcher must list everything again.
    pub fn lose_history(&self) {
        self.shared.lock().lose_history();
        self.shared.changed.notify_all();
    }

    /// Ends every open watch abruptly, as a broken connection would; history is kept.
    pub fn drop_watches(&self) {
        self.shared.lock().watch_generation += 1;
        self.shared.changed.notify_all();
    }

    /// Refuses the next `count` status writes with 409 Conflict.
    pub fn refuse_status_writes(&self, count: u32) {
        self.shared.lock().status_conflicts = count;
    }

    /// An object as stored now.
    pub fn get(&self, kind: &str, namespace: &str, name: &str) -> Option<Value> {
        let resource = resource(kind);
        self.shared
            .lock()
            .objects
            .get(&Store::key(&resource, namespace, name))
            .cloned()
    }

    /// Stops serving a kind, as an API server without its CRD: every request gets 404.
    pub fn remove_kind(&self, kind: &str) {
        self.shared.lock().absent.insert(resource(kind).plural);
    }

    /// Makes list requests for a kind wait until [`Self::release_lists`].
    pub fn hold_lists(&self, kind: &str) {
        self.shared.lock().held_lists.insert(resource(kind).plural);
    }

    /// Leaves the Lease requests of the client presenting `token` unanswered (a hung
    /// connection) until [`Self::answer_leases_of`].
    pub fn hang_leases_of(&self, token: &str) {
        self.shared
            .lock()
            .held_lease_clients
            .insert(token.to_owned());
    }

    /// Answers the held and later Lease requests of `token` again.
    pub fn answer_leases_of(&self, token: &str) {
        self.shared.lock().held_lease_clients.remove(token);
        self.shared.changed.notify_all();
    }

    /// Lets held list requests answer.
    pub fn release_lists(&self) {
        self.shared.lock().held_lists.clear();
        self.shared.changed.notify_all();
    }

    /// Makes status writes wait until [`Self::release_status_writes`].
    pub fn hold_status_writes(&self) {
        self.shared.lock().hold_status_writes = true;
    }

    /// Status writes waiting now.
    pub fn held_status_writes(&self) -> usize {
        self.shared.lock().held_status_writes
    }

    /// Lets held status writes go on.
    pub fn release_status_writes(&self) {
        self.shared.lock().hold_status_writes = false;
        self.shared.changed.notify_all();
    }

    /// Every object of a kind, as stored now.
    pub fn objects(&self, kind: &str) -> Vec<Value> {
        let resource = resource(kind);
        self.shared
            .lock()
            .list(&resource, None, &Selector::default(), (0, usize::MAX))
            .0
    }

    /// Every request so far, as RBAC would judge it.
    pub fn requests(&self) -> Vec<ApiRequest> {
        self.shared.lock().requests.clone()
    }

    /// Every write request so far (`TOKEN METHOD path`), in order.
    pub fn writes(&self) -> Vec<String> {
        self.shared.lock().writes.clone()
    }

    /// Every list request so far (`path?fieldSelector=...`), in order.
    pub fn lists(&self) -> Vec<String> {
        self.shared.lock().lists.clone()
    }
}

impl Drop for FakeApiServer {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        self.drop_watches();
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn resource(kind: &str) -> Resource {
    store::resource_of_kind(kind)
        .unwrap_or_else(|| panic!("the fake API server does not serve kind {kind}"))
}

/// What a request path names.
struct Target {
    resource: Resource,
    namespace: Option<String>,
    name: Option<String>,
    status: bool,
}

fn parse_target(path: &str) -> Option<Target> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, rest) = match segments.as_slice() {
        ["api", "v1", rest @ ..] => ("", rest),
        ["apis", group, "v1", rest @ ..] => (*group, rest),
        _ => return None,
    };
    let (namespace, rest) = match rest {
        ["namespaces", namespace, plural, rest @ ..] => (Some(*namespace), {
            let mut r = vec![*plural];
            r.extend_from_slice(rest);
            r
        }),
        _ => (None, rest.to_vec()),
    };
    let (plural, name, status) = match rest.as_slice() {
        [plural] => (*plural, None, false),
        [plural, name] => (*plural, Some(*name), false),
        [plural, name, "status"] => (*plural, Some(*name), true),
        _ => return None,
    };
    let resource = store::resource_of_plural(group, plural)?;
    Some(Target {
        resource,
        namespace: namespace.map(str::to_owned),
        name: name.map(str::to_owned),
        status,
    })
}

fn serve(shared: &Shared, stream: &TcpStream) {
    let Ok(request) = http::read_request(stream) else {
        return;
    };
    let target = parse_target(&request.path)
        .filter(|target| !shared.lock().absent.contains(target.resource.plural));
    let Some(target) = target else {
        let _ = http::reply(stream, 404, &status_body(404, "NotFound", "no such path"));
        return;
    };
    let watching = request
        .query
        .get("watch")
        .is_some_and(|w| w == "true" || w == "1");
    let verb = match (request.method.as_str(), &target.name) {
        ("GET", None) if watching => "watch",
        ("GET", None) => "list",
        ("GET", Some(_)) => "get",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", _) => "delete",
        _ => "unknown",
    };
    shared.lock().requests.push(ApiRequest {
        token: request.token.clone(),
        verb,
        group: target.resource.group,
        resource: if target.status {
            format!("{}/status", target.resource.plural)
        } else {
            target.resource.plural.to_owned()
        },
        namespace: target.namespace.clone().unwrap_or_default(),
    });
    hang_while_held(shared, &target, &request.token);
    let (status, body) = match (request.method.as_str(), &target.name) {
        ("GET", None)
            if request
                .query
                .get("watch")
                .is_some_and(|w| w == "true" || w == "1") =>
        {
            watch(shared, stream, &target, &request);
            return;
        }
        ("GET", None) => list(shared, &target, &request),
        ("GET", Some(name)) => get(shared, &target, name),
        (method, _) => write(shared, &target, &request, method),
    };
    let _ = http::reply(stream, status, &body);
}

/// Waits while the client's Lease requests are held (see `hang_leases_of`).
fn hang_while_held(shared: &Shared, target: &Target, token: &str) {
    if target.resource.plural != "leases" {
        return;
    }
    let mut store = shared.lock();
    while store.held_lease_clients.contains(token) && !shared.stopping.load(Ordering::SeqCst) {
        store = shared
            .changed
            .wait_timeout(store, Duration::from_millis(250))
            .map(|(guard, _)| guard)
            .unwrap_or_else(|poisoned| poisoned.into_inner().0);
    }
}

fn list(shared: &Shared, target: &Target, request: &Request) -> (u16, Value) {
    let selector = Selector::parse(
        request.query.get("fieldSelector"),
        request.query.get("labelSelector"),
    );
    let mut store = shared.lock();
    while store.held_lists.contains(target.resource.plural)
        && !shared.stopping.load(Ordering::SeqCst)
    {
        store = shared
            .changed
            .wait_timeout(store, Duration::from_millis(250))
            .map(|(guard, _)| guard)
            .unwrap_or_else(|poisoned| poisoned.into_inner().0);
    }
    store.lists.push(format!(
        "{}?fieldSelector={}",
        request.path,
        request
            .query
            .get("fieldSelector")
            .map_or("", String::as_str)
    ));
    // Pages, as clients ask for them (kube-rs watchers list 500 objects at a time): the
    // continue token is the list's revision and where the next page starts. A real API
    // server serves every page from the first one's snapshot; this one has none, so a
    // token from before a change of the resource listed (or before the history it needs
    // was lost) is expired (410), and the client lists again.
    let limit = request
        .query
        .get("limit")
        .and_then(|limit| limit.parse::<usize>().ok())
        .filter(|limit| *limit > 0)
        .unwrap_or(usize::MAX);
    let start = match request.query.get("continue").filter(|t| !t.is_empty()) {
        None => 0,
        Some(token) => {
            let parsed = token.split_once(':').and_then(|(revision, start)| {
                Some((revision.parse::<u64>().ok()?, start.parse::<usize>().ok()?))
            });
            match parsed {
                Some((revision, start))
                    if revision + 1 >= store.oldest_watchable
                        && !store
                            .log
                            .iter()
                            .rev()
                            .take_while(|logged| logged.revision > revision)
                            .any(|logged| logged.plural == target.resource.plural) =>
                {
                    start
                }
                Some(_) => {
                    let message = "the provided continue parameter is too old";
                    return (410, status_body(410, "Expired", message));
                }
                None => {
                    return (
                        400,
                        status_body(400, "BadRequest", "invalid continue token"),
                    );
                }
            }
        }
    };
    let (items, total) = store.list(
        &target.resource,
        target.namespace.as_deref(),
        &selector,
        (start, limit),
    );
    let mut metadata = json!({"resourceVersion": store.revision.to_string()});
    let end = start.saturating_add(items.len());
    if end < total {
        metadata["continue"] = json!(format!("{}:{end}", store.revision));
        metadata["remainingItemCount"] = json!(total - end);
    }
    (
        200,
        json!({
            "apiVersion": target.resource.api_version(),
            "kind": format!("{}List", target.resource.kind),
            "metadata": metadata,
            "items": items,
        }),
    )
}

fn get(shared: &Shared, target: &Target, name: &str) -> (u16, Value) {
    let namespace = target.namespace.as_deref().unwrap_or_default();
    match shared
        .lock()
        .objects
        .get(&Store::key(&target.resource, namespace, name))
    {
        Some(object) => (200, object.clone()),
        None => (
            404,
            status_body(404, "NotFound", &format!("{name} not found")),
        ),
    }
}

fn write(shared: &Shared, target: &Target, request: &Request, method: &str) -> (u16, Value) {
    let mut store = shared.lock();
    if target.status && store.hold_status_writes {
        store.held_status_writes += 1;
        while store.hold_status_writes && !shared.stopping.load(Ordering::SeqCst) {
            store = shared
                .changed
                .wait_timeout(store, Duration::from_millis(250))
                .map(|(guard, _)| guard)
                .unwrap_or_else(|poisoned| poisoned.into_inner().0);
        }
        store.held_status_writes -= 1;
    }
    store
        .writes
        .push(format!("{} {method} {}", request.token, request.path));
    let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
        if method != "DELETE" {
            return (400, status_body(400, "BadRequest", "body is not JSON"));
        }
        return delete(&mut store, shared, target);
    };
    let namespace = target.namespace.clone().unwrap_or_default();
    let name = target.name.clone();
    let current = name
        .as_ref()
        .and_then(|name| {
            store
                .objects
                .get(&Store::key(&target.resource, &namespace, name))
        })
        .cloned();
    let result = match (method, current) {
        ("DELETE", _) => return delete(&mut store, shared, target),
        ("POST", _) => {
            let mut object = body;
            if target.resource.namespaced {
                object["metadata"]["namespace"] = json!(namespace);
            }
            store.write(&target.resource, object, false, true)
        }
        (_, None) => Err(Refusal::NotFound),
        ("PUT", Some(current)) | ("PATCH", Some(current)) => {
            if target.status && store.status_conflicts > 0 {
                store.status_conflicts -= 1;
                Err(Refusal::Conflict)
            } else {
                let mut object = current.clone();
                if method == "PATCH" {
                    merge_patch(&mut object, &body);
                    // A patch without a resourceVersion does not ask for a check.
                    if body.pointer("/metadata/resourceVersion").is_none() {
                        object["metadata"]["resourceVersion"] = Value::Null;
                    }
                } else if target.status {
                    object["status"] = body["status"].clone();
                    object["metadata"]["resourceVersion"] =
                        body["metadata"]["resourceVersion"].clone();
                } else {
                    object = body;
                }
                if object["metadata"]["resourceVersion"].is_null()
                    && let Some(metadata) = object["metadata"].as_object_mut()
                {
                    metadata.remove("resourceVersion");
                }
                store.write(&target.resource, object, true, false)
            }
        }
        _ => return (405, status_body(405, "MethodNotAllowed", method)),
    };
    drop(store);
    shared.changed.notify_all();
    match result {
        Ok(object) => (if method == "POST" { 201 } else { 200 }, object),
        Err(Refusal::NotFound) => (404, status_body(404, "NotFound", "not found")),
        Err(Refusal::AlreadyExists) => (409, status_body(409, "AlreadyExists", "already exists")),
        Err(Refusal::Conflict) => (
            409,
            status_body(
                409,
                "Conflict",
                "the object has been modified; please apply your changes to the latest version and try again",
            ),
        ),
    }
}

fn delete(store: &mut Store, shared: &Shared, target: &Target) -> (u16, Value) {
    let namespace = target.namespace.clone().unwrap_or_default();
    let name = target.name.clone().unwrap_or_default();
    let deleted = store.delete(&target.resource, &namespace, &name, true);
    shared.changed.notify_all();
    match deleted {
        Some(object) => (200, object),
        None => (404, status_body(404, "NotFound", "not found")),
    }
}

/// Streams events after the requested revision until the watch times out, is dropped,
/// or the server stops; sends a bookmark after each quiet second when asked to.
fn watch(shared: &Shared, stream: &TcpStream, target: &Target, request: &Request) {
    let selector = Selector::parse(
        request.query.get("fieldSelector"),
        request.query.get("labelSelector"),
    );
    let bookmarks = request
        .query
        .get("allowWatchBookmarks")
        .is_some_and(|b| b == "true");
    let timeout = request
        .query
        .get("timeoutSeconds")
        .and_then(|t| t.parse().ok())
        .map_or(Duration::from_secs(300), Duration::from_secs);
    let mut sent: u64 = request
        .query
        .get("resourceVersion")
        .and_then(|rv| rv.parse().ok())
        .unwrap_or(0);
    if http::start_stream(stream).is_err() {
        return;
    }
    let started = Instant::now();
    let mut last_sent = Instant::now();
    let mut store = shared.lock();
    if sent < store.oldest_watchable {
        let gone = status_body(
            410,
            "Expired",
            &format!(
                "too old resource version: {sent} ({})",
                store.oldest_watchable
            ),
        );
        drop(store);
        let _ = http::send_chunk(stream, &json!({"type": "ERROR", "object": gone}));
        let _ = http::end_stream(stream);
        return;
    }
    let generation = store.watch_generation;
    loop {
        if store.watch_generation != generation || shared.stopping.load(Ordering::SeqCst) {
            drop(store);
            // Abruptly, with no final chunk: the client sees a broken stream.
            let _ = stream.shutdown(Shutdown::Both);
            return;
        }
        let due: Vec<Value> = store
            .log
            .iter()
            .filter(|event| {
                event.revision > sent
                    && event.plural == target.resource.plural
                    && target
                        .namespace
                        .as_ref()
                        .is_none_or(|ns| *ns == event.namespace)
                    && selector.matches(&event.object)
            })
            .map(|event| json!({"type": event.event_type, "object": event.object}))
            .collect();
        let revision = store.revision;
        drop(store);
        for event in &due {
            if http::send_chunk(stream, event).is_err() {
                return;
            }
        }
        if !due.is_empty() {
            last_sent = Instant::now();
        }
        sent = revision;
        if bookmarks && last_sent.elapsed() >= BOOKMARK_EVERY {
            let bookmark = json!({"type": "BOOKMARK", "object": {
                "apiVersion": target.resource.api_version(),
                "kind": target.resource.kind,
                "metadata": {"resourceVersion": revision.to_string()},
            }});
            if http::send_chunk(stream, &bookmark).is_err() {
                return;
            }
            last_sent = Instant::now();
        }
        if started.elapsed() >= timeout {
            let _ = http::end_stream(stream);
            return;
        }
        store = shared.lock();
        if store.revision == revision {
            store = shared
                .changed
                .wait_timeout(store, Duration::from_millis(250))
                .map(|(guard, _)| guard)
                .unwrap_or_else(|poisoned| poisoned.into_inner().0);
        }
    }
}
