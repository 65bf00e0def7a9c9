//! Leader election through a coordination.k8s.io Lease: one replica at a time writes
//! status and Events; every replica serves traffic.
//!
//! As in client-go, expiry is judged by this replica's own clock: a lease whose holder
//! and renew time have not changed for a whole lease duration is free, however the
//! holder's clock is set.

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::api::PostParams;
use kube::{Api, Client};
use tokio::sync::watch;

/// Which Lease, held by whom, for how long.
#[derive(Debug, Clone)]
pub struct LeaseConfig {
    /// Namespace of the Lease.
    pub namespace: String,
    /// Name of the Lease (`--election-id`).
    pub name: String,
    /// This replica's identity (the pod name).
    pub identity: String,
    /// How long a lease not renewed stays held.
    pub duration: Duration,
}

impl LeaseConfig {
    /// How often the holder renews, and others look: a third of the duration, so that
    /// two renewals can fail before the lease is lost.
    pub fn retry_period(&self) -> Duration {
        self.duration / 3
    }

    /// How long the holder keeps leading without a renewal: two thirds of the duration,
    /// so that it has stepped down before another replica, which waits the whole
    /// duration, can take the lease (client-go's renew deadline).
    pub fn renew_deadline(&self) -> Duration {
        self.duration * 2 / 3
    }
}

/// What this replica last saw of someone else's lease, and when it first saw it.
#[derive(Debug, PartialEq)]
struct Observed {
    holder: Option<String>,
    renew_time: Option<Timestamp>,
}

/// Runs the election until `leading` has no receivers: tries to acquire or renew every
/// retry period, and publishes whether this replica leads.
pub async fn elect(client: Client, config: LeaseConfig, leading: watch::Sender<bool>) {
    let leases: Api<Lease> = Api::namespaced(client, &config.namespace);
    let mut observed: Option<(Observed, Instant)> = None;
    let mut last_renewal: Option<Instant> = None;
    loop {
        // An answer that never comes is a failed attempt: a replica waiting for it would
        // go on leading after another had taken the lease.
        let outcome = tokio::time::timeout(
            config.retry_period(),
            try_lead(&leases, &config, &mut observed),
        )
        .await;
        let now_leading = match outcome {
            Ok(Ok(true)) => {
                last_renewal = Some(Instant::now());
                true
            }
            Ok(Ok(false)) => false,
            failed => {
                match failed {
                    Ok(Err(err)) => {
                        tracing::warn!(error = %err, lease = %config.name, "leader election");
                    }
                    _ => tracing::warn!(
                        lease = %config.name,
                        timeout_ms = config.retry_period().as_millis(),
                        "leader election: no answer in time"
                    ),
                }
                // Keep leading through a failed renewal until the renew deadline.
                last_renewal.is_some_and(|at| at.elapsed() < config.renew_deadline())
            }
        };
        if !now_leading {
            last_renewal = None;
        }
        if *leading.borrow() != now_leading {
            tracing::info!(
                identity = %config.identity,
                leading = now_leading,
                "leadership changed"
            );
        }
        if leading.send(now_leading).is_err() {
            return;
        }
        tokio::time::sleep(config.retry_period()).await;
    }
}

async fn try_lead(
    leases: &Api<Lease>,
    config: &LeaseConfig,
    observed: &mut Option<(Observed, Instant)>,
) -> Result<bool, kube::Error> {
    let now = Timestamp::now();
    let duration_seconds = i32::try_from(config.duration.as_secs()).unwrap_or(i32::MAX);
    let Some(mut lease) = leases.get_opt(&config.name).await? else {
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(config.name.clone()),
                namespace: Some(config.namespace.clone()),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: Some(config.identity.clone()),
                lease_duration_seconds: Some(duration_seconds),
                acquire_time: Some(MicroTime(now)),
                renew_time: Some(MicroTime(now)),
                lease_transitions: Some(0),
                ..LeaseSpec::default()
            }),
        };
        return written(leases.create(&PostParams::default(), &lease).await);
    };
    let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
    let holder = spec.holder_identity.clone().filter(|h| !h.is_empty());
    let ours = holder.as_deref() == Some(config.identity.as_str());
    if !ours {
        let seen = Observed {
            holder: holder.clone(),
            renew_time: spec.renew_time.as_ref().map(|t| t.0),
        };
        let first_seen = match observed.take() {
            Some((previous, at)) if previous == seen => at,
            _ => Instant::now(),
        };
        let held_for = spec
            .lease_duration_seconds
            .and_then(|s| u64::try_from(s).ok())
            .map_or(config.duration, Duration::from_secs);
        let expired = first_seen.elapsed() >= held_for;
        *observed = Some((seen, first_seen));
        if holder.is_some() && !expired {
            return Ok(false);
        }
        spec.acquire_time = Some(MicroTime(now));
        spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0).saturating_add(1));
    }
    spec.holder_identity = Some(config.identity.clone());
    spec.lease_duration_seconds = Some(duration_seconds);
    spec.renew_time = Some(MicroTime(now));
    // The resourceVersion read above makes this a compare-and-swap: if another replica
    // wrote in between, the API server answers 409 and this round is lost.
    written(
        leases
            .replace(&config.name, &PostParams::default(), &lease)
            .await,
    )
}

fn written(result: Result<Lease, kube::Error>) -> Result<bool, kube::Error> {
    match result {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
        Err(err) => Err(err),
    }
}

/// Gives the lease up (at shutdown), so another replica can take over at once instead of
/// waiting for it to expire.
pub async fn release(client: Client, config: &LeaseConfig) -> Result<(), kube::Error> {
    let leases: Api<Lease> = Api::namespaced(client, &config.namespace);
    let Some(mut lease) = leases.get_opt(&config.name).await? else {
        return Ok(());
    };
    let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
    if spec.holder_identity.as_deref() != Some(config.identity.as_str()) {
        return Ok(());
    }
    spec.holder_identity = None;
    spec.renew_time = None;
    spec.acquire_time = None;
    leases
        .replace(&config.name, &PostParams::default(), &lease)
        .await
        .map(|_| ())
}
