//! The admin HTTP server: `/healthz`, `/readyz`, `/syncz`, `/metrics`, `/status`.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;

use crate::metrics::Metrics;

/// How long the controller loop may go without turning before `/healthz` fails. One turn
/// (or one round of a reconciliation that narrows a refused configuration) may
/// legitimately wait for HAProxy loading a large configuration (up to three minutes) and
/// for a `haproxy -c` (up to a minute); a loop silent for longer is stuck.
pub const STALE_AFTER: Duration = Duration::from_secs(300);
/// How often an idle controller loop turns, to show it is alive.
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(10);

/// When the controller loop last turned.
#[derive(Debug)]
pub struct Heartbeat(Mutex<Instant>);

impl Default for Heartbeat {
    fn default() -> Self {
        Self(Mutex::new(Instant::now()))
    }
}

impl Heartbeat {
    /// The loop turned now.
    pub fn beat(&self) {
        if let Ok(mut last) = self.0.lock() {
            *last = Instant::now();
        }
    }

    /// The last turn.
    fn last(&self) -> Option<Instant> {
        self.0.lock().ok().map(|last| *last)
    }
}

/// The health judgement: healthy while the loop turned within [`STALE_AFTER`]; otherwise
/// the reason.
fn health(last_beat: Option<Instant>, now: Instant) -> Result<(), String> {
    let Some(last_beat) = last_beat else {
        return Err("the controller loop's heartbeat is unreadable".to_owned());
    };
    let silent = now.saturating_duration_since(last_beat);
    if silent <= STALE_AFTER {
        Ok(())
    } else {
        Err(format!(
            "the controller loop has not made progress for {} s (limit {} s)",
            silent.as_secs(),
            STALE_AFTER.as_secs()
        ))
    }
}

/// What the admin endpoints report.
#[derive(Debug, Default)]
pub struct AdminState {
    /// A configuration is live in HAProxy.
    pub ready: AtomicBool,
    /// Why HAProxy does not run exactly the written files yet, if it does not.
    pub out_of_sync: Mutex<Option<String>>,
    /// Why the current objects are not served (HAProxy refuses what they give), if so.
    pub refused: Mutex<Option<String>>,
    /// The metrics.
    pub metrics: Metrics,
    /// The Gateway API status of every object of ours, written as YAML when asked for:
    /// it changes with every route added or removed, and is read rarely.
    pub gateway_status: Mutex<Arc<convert::gateway_status::StatusReport>>,
    /// The controller loop's progress, for `/healthz`.
    pub heartbeat: Heartbeat,
}

/// Binds the admin server; the returned future serves until dropped.
pub async fn serve(
    address: SocketAddr,
    state: Arc<AdminState>,
) -> anyhow::Result<impl std::future::Future<Output = std::io::Result<()>>> {
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|e| anyhow::anyhow!("admin server cannot bind {address}: {e}"))?;
    let router = Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/syncz", get(syncz))
        .route("/metrics", get(metrics))
        .route("/status", get(status))
        .with_state(state);
    Ok(axum::serve(listener, router).into_future())
}

/// 200 while the controller loop makes progress; 503 with the reason once it has been
/// silent for [`STALE_AFTER`].
async fn healthz(State(state): State<Arc<AdminState>>) -> impl IntoResponse {
    match health(state.heartbeat.last(), Instant::now()) {
        Ok(()) => (StatusCode::OK, "ok\n".to_owned()),
        Err(reason) => (StatusCode::SERVICE_UNAVAILABLE, format!("{reason}\n")),
    }
}

async fn readyz(State(state): State<Arc<AdminState>>) -> impl IntoResponse {
    if state.ready.load(Ordering::SeqCst) {
        (StatusCode::OK, "ready\n")
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "no configuration is live yet\n",
        )
    }
}

/// 200 when HAProxy runs exactly the written files and they are what the current objects
/// give; 503 with the reason before HAProxy serves anything, while a reload is due or
/// failing, or while HAProxy refuses the current objects' configuration. Not a readiness
/// signal: the previous configuration keeps serving.
async fn syncz(State(state): State<Arc<AdminState>>) -> impl IntoResponse {
    match out_of_sync(&state) {
        None => (StatusCode::OK, "in sync\n".to_owned()),
        Some(reason) => (StatusCode::SERVICE_UNAVAILABLE, format!("{reason}\n")),
    }
}

/// Why HAProxy does not run exactly what the current objects give, if it does not.
fn out_of_sync(state: &AdminState) -> Option<String> {
    let refused = state
        .refused
        .lock()
        .map_or_else(|_| Some("unknown".to_owned()), |s| s.clone());
    if refused.is_some() {
        return refused;
    }
    if !state.ready.load(Ordering::SeqCst) {
        return Some("no configuration is live yet".to_owned());
    }
    state
        .out_of_sync
        .lock()
        .map_or_else(|_| Some("unknown".to_owned()), |s| s.clone())
}

async fn status(State(state): State<Arc<AdminState>>) -> impl IntoResponse {
    let report = state
        .gateway_status
        .lock()
        .map(|report| report.clone())
        .unwrap_or_default();
    (
        [(header::CONTENT_TYPE, "application/yaml")],
        crate::status::status_yaml(&report),
    )
}

async fn metrics(State(state): State<Arc<AdminState>>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.encode(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_fails_once_the_loop_has_been_silent_too_long() {
        let beat = Instant::now();
        assert_eq!(health(Some(beat), beat), Ok(()));
        assert_eq!(health(Some(beat), beat + STALE_AFTER), Ok(()));
        assert_eq!(
            health(Some(beat), beat + STALE_AFTER + Duration::from_secs(1)),
            Err("the controller loop has not made progress for 301 s (limit 300 s)".to_owned())
        );
        // A beat newer than the clock reading (a race between two threads) is healthy.
        assert_eq!(health(Some(beat + Duration::from_secs(1)), beat), Ok(()));
        assert!(health(None, beat).is_err());
        let heartbeat = Heartbeat::default();
        heartbeat.beat();
        assert_eq!(health(heartbeat.last(), Instant::now()), Ok(()));
    }

    #[test]
    fn in_sync_only_once_haproxy_serves_and_nothing_is_due_or_refused() {
        let state = AdminState::default();
        assert_eq!(
            out_of_sync(&state).as_deref(),
            Some("no configuration is live yet")
        );
        // A fresh start whose configuration HAProxy refuses says why.
        *state.refused.lock().unwrap() = Some("refused".to_owned());
        assert_eq!(out_of_sync(&state).as_deref(), Some("refused"));
        *state.refused.lock().unwrap() = None;
        state.ready.store(true, Ordering::SeqCst);
        assert_eq!(out_of_sync(&state), None);
        *state.out_of_sync.lock().unwrap() = Some("a reload is due".to_owned());
        assert_eq!(out_of_sync(&state).as_deref(), Some("a reload is due"));
        *state.refused.lock().unwrap() = Some("refused".to_owned());
        assert_eq!(out_of_sync(&state).as_deref(), Some("refused"));
    }
}
