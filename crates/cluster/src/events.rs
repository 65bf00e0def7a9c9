//! Kubernetes Events for configuration problems, published by the leader on the object
//! at fault, at most a burst of [`BURST`] and then one per [`REFILL`].

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ObjectReference;
use kube::Client;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use resources::{Kind, ObjectRef};
use tokio::sync::watch;

/// Events allowed at once.
const BURST: u32 = 20;
/// One more event allowed per this much time.
const REFILL: Duration = Duration::from_millis(500);

/// A problem to publish: the object (with its uid, when known), the field, the message.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Problem {
    /// The object at fault.
    pub object: ObjectRef,
    /// Its uid.
    pub uid: Option<String>,
    /// The field, as a path.
    pub field: String,
    /// What is wrong and what was done about it.
    pub message: String,
}

/// The API group and version of a kind, for an object reference.
pub fn api_version(kind: Kind) -> &'static str {
    match kind {
        Kind::Namespace
        | Kind::Service
        | Kind::Endpoints
        | Kind::Secret
        | Kind::ConfigMap
        | Kind::Pod => "v1",
        Kind::EndpointSlice => "discovery.k8s.io/v1",
        Kind::IngressClass | Kind::Ingress => "networking.k8s.io/v1",
        Kind::GatewayClass
        | Kind::Gateway
        | Kind::HttpRoute
        | Kind::GrpcRoute
        | Kind::TlsRoute
        | Kind::TcpRoute
        | Kind::UdpRoute
        | Kind::BackendTlsPolicy
        | Kind::ListenerSet
        | Kind::ReferenceGrant => "gateway.networking.k8s.io/v1",
    }
}

fn reference(problem: &Problem) -> ObjectReference {
    ObjectReference {
        api_version: Some(api_version(problem.object.kind).to_owned()),
        kind: Some(problem.object.kind.name().to_owned()),
        namespace: Some(problem.object.namespace.to_string()).filter(|ns| !ns.is_empty()),
        name: Some(problem.object.name.to_string()),
        uid: problem.uid.clone(),
        ..ObjectReference::default()
    }
}

/// Publishes as a Warning Event each problem that holds (`problems`) and was not
/// published while this replica led without a break: what is new is computed by comparing
/// the problems that hold with those already published, so a replica that comes to lead
/// publishes every problem that holds, and one that went away and came back is new again.
/// A problem beyond the rate gets no Event (it is logged and counted already). Returns
/// when `problems` is closed.
pub async fn publish_events(
    client: Client,
    identity: String,
    mut leading: watch::Receiver<bool>,
    mut problems: watch::Receiver<Arc<[Problem]>>,
) {
    let reporter = Reporter {
        controller: "portcullis".into(),
        instance: Some(identity),
    };
    let recorder = Recorder::new(client, reporter);
    let mut rate = Rate::default();
    let mut published: HashSet<Problem> = HashSet::new();
    let mut election_over = false;
    loop {
        let holding = problems.borrow_and_update().clone();
        if *leading.borrow_and_update() {
            for problem in holding
                .iter()
                .filter(|problem| !published.contains(*problem))
            {
                publish(&recorder, &mut rate, problem).await;
            }
            published = holding.iter().cloned().collect();
        } else {
            published.clear();
        }
        tokio::select! {
            changed = problems.changed() => if changed.is_err() { return },
            changed = leading.changed(), if !election_over => election_over = changed.is_err(),
        }
    }
}

/// Events allowed now: a bucket of [`BURST`] tokens, one more each [`REFILL`].
#[derive(Debug)]
struct Rate {
    tokens: u32,
    refilled: Instant,
}

impl Default for Rate {
    fn default() -> Self {
        Self {
            tokens: BURST,
            refilled: Instant::now(),
        }
    }
}

impl Rate {
    /// Takes a token, if one is left.
    fn take(&mut self) -> bool {
        let earned = self.refilled.elapsed().as_millis() / REFILL.as_millis();
        if earned > 0 {
            self.tokens = self
                .tokens
                .saturating_add(u32::try_from(earned).unwrap_or(u32::MAX))
                .min(BURST);
            self.refilled = Instant::now();
        }
        let allowed = self.tokens > 0;
        self.tokens = self.tokens.saturating_sub(1);
        allowed
    }
}

/// Publishes one problem as a Warning Event, if the rate allows.
async fn publish(recorder: &Recorder, rate: &mut Rate, problem: &Problem) {
    if !rate.take() {
        tracing::debug!(object = %problem.object, "event rate exceeded; not published");
        return;
    }
    let note = truncate(&format!("{}: {}", problem.field, problem.message), 1000);
    let event = Event {
        type_: EventType::Warning,
        reason: "InvalidConfiguration".into(),
        // The recorder counts an Event's repeats by its object, reason and action, not by
        // its note: a problem's own action keeps each problem an Event of its own, whose
        // note says what it is.
        action: format!("Reconcile-{:016x}", stable_hash(&note)),
        note: Some(note),
        secondary: None,
    };
    if let Err(err) = recorder.publish(&event, &reference(problem)).await {
        tracing::warn!(object = %problem.object, error = %err, "cannot publish event");
    }
}

/// A hash of `text` that is the same in every process and every build (xxh3, a fixed
/// algorithm), so replicas, restarts and upgrades name one problem alike.
fn stable_hash(text: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(text.as_bytes())
}

fn truncate(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((cut, _)) => text[..cut].to_owned(),
        None => text.to_owned(),
    }
}
