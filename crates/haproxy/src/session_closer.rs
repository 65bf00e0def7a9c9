//! Closes a replaced worker's long-lived sessions one by one, so that their clients
//! reconnect a few at a time rather than all at once when `hard-stop-after` ends them.

use std::time::Duration;

use crate::MasterCli;

/// Waits `wait`, then closes the client sessions worker `pid` still has, evenly spread
/// over `window`; returns how many it closed. Stops early once the worker has exited
/// (its last session ended) and gives up quietly on a master CLI error: the worker's
/// `hard-stop-after` still ends whatever is left.
pub async fn close_sessions_gradually(
    master: MasterCli,
    pid: u32,
    wait: Duration,
    window: Duration,
) -> usize {
    tokio::time::sleep(wait).await;
    let deadline = tokio::time::Instant::now() + window;
    let mut closed = 0;
    loop {
        let sessions = match master.worker_sessions(pid).await {
            Ok(Some(sessions)) if !sessions.is_empty() => sessions,
            Ok(_) => return closed,
            Err(err) => {
                tracing::warn!(pid, error = %err, "cannot list a replaced worker's sessions");
                return closed;
            }
        };
        let mut left = sessions.len();
        for session in sessions {
            if let Err(err) = master.shutdown_session(pid, &session).await {
                tracing::warn!(pid, error = %err, "cannot close a replaced worker's session");
                return closed;
            }
            closed += 1;
            left -= 1;
            let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left > 0 && !remaining.is_zero() {
                tokio::time::sleep(remaining / u32::try_from(left + 1).unwrap_or(u32::MAX)).await;
            }
        }
        tracing::info!(pid, closed, "closed the replaced worker's sessions");
        // A closed session may still be listed for a moment; look again shortly, and not
        // past the window (the worker's own hard stop ends what is left).
        if tokio::time::Instant::now() >= deadline {
            return closed;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
