//! Prometheus metrics of the controller.

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

type Labels = Vec<(&'static str, String)>;

fn label(name: &'static str, value: &str) -> Labels {
    vec![(name, value.to_owned())]
}

/// Every metric, registered under the `portcullis` prefix.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    /// Reconciliations by outcome: `applied`, `noop`, `rejected`, `failed`.
    pub reconciliations: Family<Labels, Counter>,
    /// Time from snapshot to applied configuration.
    pub reconcile_seconds: Histogram,
    /// Managed files written.
    pub files_written: Counter,
    /// Managed files deleted.
    pub files_deleted: Counter,
    /// HAProxy reloads by reason.
    pub reloads: Family<Labels, Counter>,
    /// Failed HAProxy reloads.
    pub reload_failures: Counter,
    /// HAProxy (re)starts.
    pub haproxy_starts: Counter,
    /// Objects known, by kind.
    pub objects: Family<Labels, Gauge>,
    /// Current configuration errors: manifest problems plus object diagnostics.
    pub config_errors: Gauge,
    /// Configurations `haproxy -c` rejected.
    pub configs_rejected: Counter,
    /// 1 while HAProxy refuses what the current objects give and no object explains it.
    pub refused: Gauge,
    /// Changes that reached HAProxy, by how: `runtime`, `reload`, `start` or `noop`.
    pub updates: Family<Labels, Counter>,
    /// Runtime API requests that succeeded.
    pub runtime_commands: Counter,
    /// Runtime API batches that failed and fell back to a reload.
    pub runtime_failures: Counter,
    /// 1 when HAProxy runs exactly the written files (no reload due or failing).
    pub in_sync: Gauge,
    /// Consecutive failed reload attempts (0 when the last one succeeded).
    pub failing_reloads: Gauge,
    /// 1 while this replica holds the Lease (Kubernetes API mode).
    pub leader: Gauge,
}

impl Metrics {
    /// Creates and registers every metric.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("portcullis");
        let metrics = Self {
            reconciliations: Family::default(),
            reconcile_seconds: Histogram::new(exponential_buckets(0.0005, 2.0, 16)),
            files_written: Counter::default(),
            files_deleted: Counter::default(),
            reloads: Family::default(),
            reload_failures: Counter::default(),
            haproxy_starts: Counter::default(),
            objects: Family::default(),
            config_errors: Gauge::default(),
            configs_rejected: Counter::default(),
            refused: Gauge::default(),
            updates: Family::default(),
            runtime_commands: Counter::default(),
            runtime_failures: Counter::default(),
            in_sync: Gauge::default(),
            failing_reloads: Gauge::default(),
            leader: Gauge::default(),
            registry: Registry::default(),
        };
        registry.register(
            "reconciliations",
            "Reconciliations by outcome",
            metrics.reconciliations.clone(),
        );
        registry.register(
            "reconcile_duration_seconds",
            "Time from snapshot to applied configuration",
            metrics.reconcile_seconds.clone(),
        );
        registry.register(
            "files_written",
            "Managed files written",
            metrics.files_written.clone(),
        );
        registry.register(
            "files_deleted",
            "Managed files deleted",
            metrics.files_deleted.clone(),
        );
        registry.register(
            "reloads",
            "HAProxy reloads by reason",
            metrics.reloads.clone(),
        );
        registry.register(
            "reload_failures",
            "Failed HAProxy reloads",
            metrics.reload_failures.clone(),
        );
        registry.register(
            "haproxy_starts",
            "HAProxy process starts",
            metrics.haproxy_starts.clone(),
        );
        registry.register("objects", "Objects known, by kind", metrics.objects.clone());
        registry.register(
            "configuration_errors",
            "Current configuration errors",
            metrics.config_errors.clone(),
        );
        registry.register(
            "configs_rejected",
            "Configurations rejected by haproxy -c",
            metrics.configs_rejected.clone(),
        );
        registry.register(
            "configuration_refused",
            "1 while HAProxy refuses the configuration the current objects give and no object explains it",
            metrics.refused.clone(),
        );
        registry.register(
            "updates",
            "Changes that reached HAProxy, by mode (runtime, reload, start, noop)",
            metrics.updates.clone(),
        );
        registry.register(
            "runtime_commands",
            "Runtime API requests that succeeded",
            metrics.runtime_commands.clone(),
        );
        registry.register(
            "runtime_failures",
            "Runtime API batches that failed and fell back to a reload",
            metrics.runtime_failures.clone(),
        );
        registry.register(
            "haproxy_in_sync",
            "1 when HAProxy runs exactly the written files",
            metrics.in_sync.clone(),
        );
        registry.register(
            "failing_reloads",
            "Consecutive failed reload attempts",
            metrics.failing_reloads.clone(),
        );
        registry.register(
            "leader",
            "1 while this replica holds the Lease and writes status and Events",
            metrics.leader.clone(),
        );
        // Every series a dashboard or an alert may ask for exists from start, at 0:
        // `rate()` and `increase()` see the first event, and absence means a broken scrape.
        for reason in plan::ReloadReason::ALL {
            let _ = metrics
                .reloads
                .get_or_create(&label("reason", reason.as_str()));
        }
        for outcome in ReconcileOutcome::ALL {
            let _ = metrics
                .reconciliations
                .get_or_create(&label("outcome", outcome.as_str()));
        }
        for mode in UpdateMode::ALL {
            let _ = metrics.updates.get_or_create(&label("mode", mode.as_str()));
        }
        for kind in resources::Kind::ALL {
            let _ = metrics.objects.get_or_create(&label("kind", kind.name()));
        }
        Self {
            registry,
            ..metrics
        }
    }

    /// The text exposition format.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Encoding into a String cannot fail.
        let _ = encode(&mut text, &self.registry);
        text
    }

    /// Counts how a change reached HAProxy.
    pub fn updated(&self, mode: UpdateMode) {
        self.updates
            .get_or_create(&vec![("mode", mode.as_str().to_owned())])
            .inc();
    }

    /// Counts a reconciliation outcome.
    pub fn reconciled(&self, outcome: ReconcileOutcome) {
        self.reconciliations
            .get_or_create(&vec![("outcome", outcome.as_str().to_owned())])
            .inc();
    }
}

/// How a change reached HAProxy: the `mode` label of `portcullis_updates_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateMode {
    /// Nothing to change.
    Noop,
    /// Over the runtime API only.
    Runtime,
    /// A reload is due for what the runtime API cannot change.
    Reload,
    /// HAProxy was not running: it is started on the files.
    Start,
}

impl UpdateMode {
    /// Every mode.
    pub const ALL: [UpdateMode; 4] = [
        UpdateMode::Noop,
        UpdateMode::Runtime,
        UpdateMode::Reload,
        UpdateMode::Start,
    ];

    /// Label value.
    pub fn as_str(self) -> &'static str {
        match self {
            UpdateMode::Noop => "noop",
            UpdateMode::Runtime => "runtime",
            UpdateMode::Reload => "reload",
            UpdateMode::Start => "start",
        }
    }
}

/// How a reconciliation ended: the `outcome` label of `portcullis_reconciliations_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReconcileOutcome {
    /// Its configuration reached the files and HAProxy.
    Applied,
    /// Nothing changed.
    Noop,
    /// HAProxy refuses its configuration and no object explains it.
    Rejected,
    /// The files could not be checked or written; tried again later.
    Failed,
}

impl ReconcileOutcome {
    /// Every outcome.
    pub const ALL: [ReconcileOutcome; 4] = [
        ReconcileOutcome::Applied,
        ReconcileOutcome::Noop,
        ReconcileOutcome::Rejected,
        ReconcileOutcome::Failed,
    ];

    /// Label value.
    pub fn as_str(self) -> &'static str {
        match self {
            ReconcileOutcome::Applied => "applied",
            ReconcileOutcome::Noop => "noop",
            ReconcileOutcome::Rejected => "rejected",
            ReconcileOutcome::Failed => "failed",
        }
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::Metrics;

    #[test]
    fn every_labelled_counter_is_exported_from_start_at_zero() {
        let text = Metrics::new().encode();
        for sample in [
            "portcullis_reloads_total{reason=\"main_config\"} 0",
            "portcullis_reloads_total{reason=\"backend_sections\"} 0",
            "portcullis_reloads_total{reason=\"certificates\"} 0",
            "portcullis_reloads_total{reason=\"runtime_api_failed\"} 0",
            "portcullis_reloads_total{reason=\"drain_timeout\"} 0",
            "portcullis_reconciliations_total{outcome=\"applied\"} 0",
            "portcullis_reconciliations_total{outcome=\"failed\"} 0",
            "portcullis_updates_total{mode=\"runtime\"} 0",
            "portcullis_updates_total{mode=\"start\"} 0",
            "portcullis_objects{kind=\"Ingress\"} 0",
        ] {
            assert!(
                text.lines().any(|line| line == sample),
                "{sample} missing:\n{text}"
            );
        }
    }
}
