//! Watching the manifest directory: file-system events, debounced into batches.

use std::time::Duration;

use index::SourceEvent;
use notify::{RecursiveMode, Watcher};
use tokio::sync::mpsc;

use crate::{ManifestDir, ManifestProblem};

/// One batch of changes, with every problem the directory has now.
#[derive(Debug)]
pub struct SourceBatch {
    /// Events to apply, in order.
    pub events: Vec<SourceEvent>,
    /// The directory's current problems (they replace the previous batch's).
    pub problems: Vec<ManifestProblem>,
}

/// Sends the initial list, then one batch per burst of file changes once the directory
/// has been quiet for `quiet`. Ends when the receiver is dropped.
pub async fn watch_manifest_dir(
    mut manifests: ManifestDir,
    quiet: Duration,
    batches: mpsc::Sender<SourceBatch>,
) -> Result<(), notify::Error> {
    let (notify_tx, mut notify_rx) = mpsc::unbounded_channel();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        // Our own reads of the files are access events: reacting to them would loop.
        if event
            .as_ref()
            .is_ok_and(|e| matches!(e.kind, notify::EventKind::Access(_)))
        {
            return;
        }
        // A closed channel means the source is shutting down; nothing to do.
        let _ = notify_tx.send(event);
    })?;
    // Watch before the first scan, so a change during the scan is not missed.
    watcher.watch(manifests.root(), RecursiveMode::Recursive)?;

    let (events, problems) = manifests.initial_events();
    let mut last_problems = problems.clone();
    if batches
        .send(SourceBatch { events, problems })
        .await
        .is_err()
    {
        return Ok(());
    }
    loop {
        match notify_rx.recv().await {
            None => return Ok(()),
            Some(Err(err)) => tracing::warn!(error = %err, "watching the manifest directory"),
            Some(Ok(_)) => {}
        }
        // Debounce: keep draining until the directory is quiet.
        loop {
            match tokio::time::timeout(quiet, notify_rx.recv()).await {
                Ok(Some(_)) => continue,
                Ok(None) => return Ok(()),
                Err(_elapsed) => break,
            }
        }
        let started = std::time::Instant::now();
        let (events, problems) = manifests.change_events();
        tracing::debug!(
            events = events.len(),
            elapsed_ms = started.elapsed().as_millis(),
            "manifest directory rescanned"
        );
        if events.is_empty() && problems == last_problems {
            continue;
        }
        last_problems = problems.clone();
        if batches
            .send(SourceBatch { events, problems })
            .await
            .is_err()
        {
            return Ok(());
        }
    }
}
