//! The admin HTTP server: `/healthz`, `/readyz`, `/metrics`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

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
    /// The metrics.
    pub metrics: Metrics,
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
        .route("/metrics", get(metrics))
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

async fn metrics(State(state): State<Arc<AdminState>>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.encode(),
    )
}
