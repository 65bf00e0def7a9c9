//! The admin HTTP server: `/healthz`, `/readyz`, `/syncz`, `/metrics`, `/status`.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;

use crate::metrics::Metrics;

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
    /// The Gateway API status of every object of ours, as YAML.
    pub gateway_status: Mutex<Arc<str>>,
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
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/syncz", get(syncz))
        .route("/metrics", get(metrics))
        .route("/status", get(status))
        .with_state(state);
    Ok(axum::serve(listener, router).into_future())
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
/// give; 503 with the reason while a reload is due or failing, or while HAProxy refuses
/// the current objects' configuration. Not a readiness signal: the previous
/// configuration keeps serving.
async fn syncz(State(state): State<Arc<AdminState>>) -> impl IntoResponse {
    let refused = state
        .refused
        .lock()
        .map_or_else(|_| Some("unknown".to_owned()), |s| s.clone());
    let status = refused.or_else(|| {
        state
            .out_of_sync
            .lock()
            .map_or_else(|_| Some("unknown".to_owned()), |s| s.clone())
    });
    match status {
        None => (StatusCode::OK, "in sync\n".to_owned()),
        Some(reason) => (StatusCode::SERVICE_UNAVAILABLE, format!("{reason}\n")),
    }
}

async fn status(State(state): State<Arc<AdminState>>) -> impl IntoResponse {
    let text = state
        .gateway_status
        .lock()
        .map_or_else(|_| Arc::from(""), |s| s.clone());
    (
        [(header::CONTENT_TYPE, "application/yaml")],
        text.to_string(),
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
