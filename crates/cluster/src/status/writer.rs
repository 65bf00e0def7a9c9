//! The one status writer: while this replica leads, it patches the status of every
//! target whose merged status differs from what the object holds, retrying refused
//! writes, whatever the kind.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Patch, PatchParams};
use resources::ObjectRef;
use serde::Serialize;
use tokio::sync::watch;

use super::kind::{MergeContext, StatusKind, Target};

/// How soon a refused or failed write is tried again the first time; each further
/// failure in a row doubles the wait, up to [`MAX_RETRY`].
const RETRY: Duration = Duration::from_secs(1);
/// The longest wait before writes that keep failing (a missing permission, say) are tried
/// again: a new input still wakes the writer at once.
const MAX_RETRY: Duration = Duration::from_secs(30);

/// The wait after `failures` rounds in a row with a write refused or failed.
fn retry_after(failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(5);
    (RETRY * 2u32.pow(doublings)).min(MAX_RETRY)
}
/// Status patches in flight at once. Sent one at a time, a start that finds 10,000 routes
/// without our status would take tens of seconds, each write waiting out its round trip.
pub const WRITES_IN_FLIGHT: usize = 8;

/// What a writer works from: the targets, or what they are computed from when that
/// needs the API server (a published Service's address).
pub trait TargetSource<K: StatusKind>: Send + Sync + 'static {
    /// How often the targets are computed again when nothing else happens, for a source
    /// that depends on what no watch reports; `None`: only on changes.
    const RECHECK: Option<Duration> = None;

    /// The targets, now.
    fn targets(
        &self,
        client: &Client,
    ) -> impl Future<Output = Result<Cow<'_, [Target<K>]>, kube::Error>> + Send;
}

/// Targets the controller computed whole.
impl<K: StatusKind> TargetSource<K> for Vec<Target<K>> {
    async fn targets(&self, _client: &Client) -> Result<Cow<'_, [Target<K>]>, kube::Error> {
        Ok(Cow::Borrowed(self))
    }
}

/// A running writer for one kind; it stops when this is dropped.
#[derive(Debug)]
pub struct StatusWriter<S> {
    input: watch::Sender<Arc<S>>,
}

impl<S: PartialEq> StatusWriter<S> {
    /// Starts writing the status of kind `K` from `initial`, while `leading` says so.
    /// `controller_name` tells our entries from other controllers'.
    pub fn start<K>(
        client: Client,
        controller_name: String,
        leading: watch::Receiver<bool>,
        initial: S,
    ) -> Self
    where
        K: StatusKind,
        S: TargetSource<K>,
    {
        let (input, receiver) = watch::channel(Arc::new(initial));
        tokio::spawn(write_status::<K, S>(
            client,
            controller_name,
            leading,
            receiver,
        ));
        Self { input }
    }

    /// Hands the writer new input; it is woken only when that differs from the last.
    pub fn update(&self, input: S) {
        self.input.send_if_modified(|current| {
            let modified = **current != input;
            if modified {
                *current = Arc::new(input);
            }
            modified
        });
    }
}

/// Writes while this replica leads: whenever the input or the leadership changes, again
/// after [`retry_after`] while a write is refused, and every [`TargetSource::RECHECK`].
/// Returns when the input or the leadership is closed.
async fn write_status<K: StatusKind, S: TargetSource<K>>(
    client: Client,
    controller_name: String,
    mut leading: watch::Receiver<bool>,
    mut input: watch::Receiver<Arc<S>>,
) {
    let mut written = Written::<K>::default();
    let mut failures = 0;
    loop {
        let mut settled = true;
        if *leading.borrow_and_update() {
            let source = input.borrow_and_update().clone();
            settled = match source.targets(&client).await {
                Ok(targets) => {
                    let now = Time(Timestamp::now());
                    let context = MergeContext {
                        controller_name: &controller_name,
                        now: &now,
                    };
                    write_pending(&client, &targets, &context, &mut written).await
                }
                Err(err) => {
                    tracing::warn!(kind = K::KIND.name(), error = %err, "cannot compute the desired status");
                    false
                }
            };
        }
        failures = if settled { 0 } else { failures + 1 };
        let wake = if settled {
            S::RECHECK
        } else {
            Some(retry_after(failures))
        };
        tokio::select! {
            changed = input.changed() => if changed.is_err() { return },
            changed = leading.changed() => if changed.is_err() { return },
            () = tokio::time::sleep(wake.unwrap_or_default()), if wake.is_some() => {}
        }
    }
}

/// Where each object's status was last settled: the version it was written at (until a
/// newer version comes back through the watch, it is not written again), or the version
/// and desired status it was found to say already (not compared again until either
/// changes: after a start, or once every write has come back, most targets are such).
#[derive(Debug)]
pub(crate) struct Written<K: StatusKind>(pub(crate) BTreeMap<ObjectRef, Settled<K>>);

impl<K: StatusKind> Default for Written<K> {
    fn default() -> Self {
        Self(BTreeMap::new())
    }
}

/// How an object's status was last settled.
#[derive(Debug)]
pub(crate) enum Settled<K: StatusKind> {
    /// Written at this version.
    WrittenAt(String),
    /// Already what this desired status makes it, at this version.
    SaidAt(String, Arc<K::Desired>),
}

impl<K: StatusKind> Settled<K> {
    /// Whether `target` is settled here, and so has nothing to write.
    fn holds_for(&self, target: &Target<K>) -> bool {
        match self {
            Settled::WrittenAt(version) => version == target.resource_version(),
            Settled::SaidAt(version, desired) => {
                version == target.resource_version()
                    && (Arc::ptr_eq(desired, &target.desired) || desired == &target.desired)
            }
        }
    }
}

/// One status patch to send.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StatusPatch<K: StatusKind> {
    pub(crate) object: ObjectRef,
    pub(crate) resource_version: String,
    pub(crate) status: K::Status,
}

/// The patches `targets` ask for: each object whose status would change, unless it was
/// already settled for what it is seen with. Forgets objects no longer targeted.
pub(crate) fn pending<K: StatusKind>(
    targets: &[Target<K>],
    written: &mut Written<K>,
    context: &MergeContext<'_>,
) -> Vec<StatusPatch<K>> {
    let objects: BTreeMap<ObjectRef, &Target<K>> =
        targets.iter().map(|t| (t.object_ref(), t)).collect();
    written.0.retain(|object, _| objects.contains_key(object));
    let mut patches = Vec::new();
    for (object, target) in objects {
        if written
            .0
            .get(&object)
            .is_some_and(|settled| settled.holds_for(target))
        {
            continue;
        }
        let resource_version = target.resource_version().to_owned();
        match target.status_to_write(context) {
            Some(status) => patches.push(StatusPatch {
                object,
                resource_version,
                status,
            }),
            None => {
                let said = Settled::SaidAt(resource_version, target.desired.clone());
                written.0.insert(object, said);
            }
        }
    }
    patches
}

/// Sends the pending patches, [`WRITES_IN_FLIGHT`] at a time; says whether every one was
/// accepted.
async fn write_pending<K: StatusKind>(
    client: &Client,
    targets: &[Target<K>],
    context: &MergeContext<'_>,
    written: &mut Written<K>,
) -> bool {
    let mut settled = true;
    let mut outcomes = futures::stream::iter(pending(targets, written, context))
        .map(|patch| async move {
            let outcome = send(client, &patch).await;
            (patch, outcome)
        })
        .buffer_unordered(WRITES_IN_FLIGHT);
    while let Some((patch, outcome)) = outcomes.next().await {
        match outcome {
            Ok(()) => {
                tracing::info!(object = %patch.object, "status written");
                let settled = Settled::WrittenAt(patch.resource_version);
                written.0.insert(patch.object, settled);
            }
            Err(kube::Error::Api(status)) if status.code == 409 => {
                settled = false;
                tracing::debug!(object = %patch.object, "status write conflicted; the newer version will be compared");
            }
            Err(err) => {
                settled = false;
                tracing::warn!(object = %patch.object, error = %err, "cannot write status");
            }
        }
    }
    settled
}

#[derive(Debug, Serialize)]
struct PatchBody<'a, S> {
    metadata: VersionCheck<'a>,
    status: &'a S,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct VersionCheck<'a> {
    resource_version: &'a str,
}

async fn send<K: StatusKind>(client: &Client, patch: &StatusPatch<K>) -> Result<(), kube::Error> {
    // The version makes the write conditional: if the object changed meanwhile, the API
    // server refuses it and the newer version comes back through the watch.
    let body = PatchBody {
        metadata: VersionCheck {
            resource_version: &patch.resource_version,
        },
        status: &patch.status,
    };
    // The answer is the object as the API server holds it now, which is not read: an
    // object holding a value of a newer version of its API (a route read for its parents
    // alone) could not be read back as `K`, and the write, though made, would count as
    // failed and be made again for every version it creates.
    let resource = kube::api::ApiResource::erase::<K>(&());
    let api: kube::Api<kube::api::DynamicObject> = if patch.object.namespace.is_empty() {
        kube::Api::all_with(client.clone(), &resource)
    } else {
        kube::Api::namespaced_with(client.clone(), &patch.object.namespace, &resource)
    };
    api.patch_status(
        &patch.object.name,
        &PatchParams::default(),
        &Patch::Merge(&body),
    )
    .await
    .map(drop)
}

#[cfg(test)]
mod tests {
    #[test]
    fn writes_that_keep_failing_are_tried_again_ever_less_often() {
        let waits: Vec<u64> = (1..=8).map(|n| super::retry_after(n).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30, 30]);
    }

    use super::*;
    use crate::status::testing::{at_now, metadata};
    use k8s_openapi::api::networking::v1::{
        Ingress, IngressLoadBalancerIngress, IngressLoadBalancerStatus, IngressStatus,
    };
    use resources::Kind;

    fn stale(version: &str) -> Target<Ingress> {
        Target {
            object: Arc::new(Ingress {
                metadata: metadata("web", version),
                ..Ingress::default()
            }),
            desired: Arc::new(vec![IngressLoadBalancerIngress {
                ip: Some("10.0.0.1".into()),
                ..IngressLoadBalancerIngress::default()
            }]),
        }
    }

    #[test]
    fn an_object_written_at_its_version_waits_for_a_newer_one_while_it_stays_a_target() {
        let web = ObjectRef::new(Kind::Ingress, "default", "web");
        let mut written = Written(BTreeMap::from([(
            web.clone(),
            Settled::WrittenAt("1".to_owned()),
        )]));
        let due = |targets: &[Target<Ingress>], written: &mut Written<Ingress>| {
            at_now(|context| pending(targets, written, context))
                .into_iter()
                .map(|patch| (patch.object, patch.resource_version))
                .collect::<Vec<_>>()
        };
        assert_eq!(due(&[stale("1")], &mut written), []);
        assert_eq!(
            due(&[stale("2")], &mut written),
            [(web.clone(), "2".to_owned())]
        );
        // No longer a target: forgotten, so it is compared afresh when it comes back.
        assert_eq!(due(&[], &mut written), []);
        assert_eq!(due(&[stale("1")], &mut written), [(web, "1".to_owned())]);
    }

    #[test]
    fn an_object_that_says_our_status_already_is_settled_until_its_version_or_our_status_changes() {
        let web = ObjectRef::new(Kind::Ingress, "default", "web");
        let ip = |address: &str| IngressLoadBalancerIngress {
            ip: Some(address.into()),
            ..IngressLoadBalancerIngress::default()
        };
        let saying_ours = |version: &str, desired: &Arc<Vec<IngressLoadBalancerIngress>>| {
            let mut object = Ingress {
                metadata: metadata("web", version),
                ..Ingress::default()
            };
            object.status = Some(IngressStatus {
                load_balancer: Some(IngressLoadBalancerStatus {
                    ingress: Some(vec![ip("10.0.0.1")]),
                }),
            });
            Target {
                object: Arc::new(object),
                desired: desired.clone(),
            }
        };
        let due = |targets: &[Target<Ingress>], written: &mut Written<Ingress>| {
            at_now(|context| pending(targets, written, context))
                .into_iter()
                .map(|patch| (patch.object, patch.resource_version))
                .collect::<Vec<_>>()
        };
        let mut written = Written::default();
        let ours = Arc::new(vec![ip("10.0.0.1")]);
        assert_eq!(due(&[saying_ours("5", &ours)], &mut written), []);
        assert!(matches!(
            written.0.get(&web),
            Some(Settled::SaidAt(version, desired)) if version == "5" && Arc::ptr_eq(desired, &ours)
        ));
        // The same status made again (equal, not the same pointer): still settled.
        let again = Arc::new(vec![ip("10.0.0.1")]);
        assert_eq!(due(&[saying_ours("5", &again)], &mut written), []);
        // Our status changes while the object's version does not: written.
        let moved = Arc::new(vec![ip("10.0.0.2")]);
        assert_eq!(
            due(&[saying_ours("5", &moved)], &mut written),
            [(web.clone(), "5".to_owned())]
        );
    }
}
