//! Watching the manifest directory: file-system events, debounced into batches.

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use index::SourceEvent;
use notify::{RecursiveMode, Watcher};
use resources::LogSafe;
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
///
/// Besides the directory's own tree, it watches what the scans reached through symbolic
/// links (a link made while running, to a directory or a file elsewhere, is followed
/// from then on), and the directory's parent for the directory itself being replaced
/// (moved away and made again, or a symbolic link to it retargeted): the new one is
/// watched and read.
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
    let root = std::path::absolute(manifests.root()).map_err(notify::Error::io)?;
    // Watch before the first scan, so a change during the scan is not missed.
    let mut watches = Watches::new(&mut watcher, root)?;

    let (mut events, mut problems) = manifests.initial_events();
    watches.scan_again_while_following(&mut watcher, &mut manifests, &mut events, &mut problems);
    let mut last_problems = problems.clone();
    if batches
        .send(SourceBatch { events, problems })
        .await
        .is_err()
    {
        return Ok(());
    }
    loop {
        let mut root_named = match notify_rx.recv().await {
            None => return Ok(()),
            Some(Err(err)) => {
                tracing::warn!(error = %err, "watching the manifest directory");
                false
            }
            Some(Ok(event)) if !watches.concerns(&event) => continue,
            Some(Ok(event)) => watches.names_root(&event),
        };
        // Debounce: keep draining until the directory is quiet (the parent's other
        // entries may be busy: a log file written beside it must not hold it up).
        let mut quiet_since = tokio::time::Instant::now();
        loop {
            let until = quiet_since + quiet;
            match tokio::time::timeout_at(until, notify_rx.recv()).await {
                Ok(Some(Ok(event))) if !watches.concerns(&event) => continue,
                Ok(Some(event)) => {
                    root_named |= event.as_ref().is_ok_and(|e| watches.names_root(e));
                    quiet_since = tokio::time::Instant::now();
                }
                Ok(None) => return Ok(()),
                Err(_elapsed) => break,
            }
        }
        watches.rewatch_if_replaced(&mut watcher, root_named);
        let started = std::time::Instant::now();
        let (mut events, mut problems) = manifests.change_events();
        watches.scan_again_while_following(
            &mut watcher,
            &mut manifests,
            &mut events,
            &mut problems,
        );
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

/// The watches of a manifest directory: its tree (recursive), its parent (for the
/// directory's own name only), and the directories its links lead to (each alone).
struct Watches {
    /// The directory, absolute (not resolved: a link to it may be retargeted).
    root: PathBuf,
    /// What `root` was when its tree was watched: device and inode.
    root_identity: Option<(u64, u64)>,
    /// The root's parent, watched for the root's own name (and linked files there).
    parent: Option<PathBuf>,
    /// The parent, resolved: what the scans' resolved paths are compared with.
    resolved_parent: Option<PathBuf>,
    /// Whether a link leads to the parent itself: then all of it is read.
    parent_linked: bool,
    /// The directories outside the tree that links lead to: all their entries are read.
    linked_dirs: BTreeSet<PathBuf>,
    /// The directories outside the tree that hold a linked file, and no more.
    file_dirs: BTreeSet<PathBuf>,
    /// The files outside the tree that links lead to.
    linked_files: BTreeSet<PathBuf>,
}

impl Watches {
    fn new(watcher: &mut impl Watcher, root: PathBuf) -> Result<Self, notify::Error> {
        watcher.watch(&root, RecursiveMode::Recursive)?;
        let parent = root.parent().map(Path::to_path_buf);
        if let Some(parent) = &parent
            && let Err(err) = watcher.watch(parent, RecursiveMode::NonRecursive)
        {
            tracing::warn!(error = %err, "cannot watch the manifest directory's parent; a replaced directory is not noticed");
        }
        Ok(Self {
            root_identity: identity(&root),
            root,
            resolved_parent: parent.as_ref().and_then(|p| std::fs::canonicalize(p).ok()),
            parent,
            parent_linked: false,
            linked_dirs: BTreeSet::new(),
            file_dirs: BTreeSet::new(),
            linked_files: BTreeSet::new(),
        })
    }

    /// Whether an event may change what the directory holds: of the parent's entries,
    /// and of a directory watched for a linked file, only the directory itself and the
    /// linked files matter (a log written beside the directory must not look like a
    /// change of it).
    fn concerns(&self, event: &notify::Event) -> bool {
        event.paths.is_empty() || event.paths.iter().any(|path| self.concerns_path(path))
    }

    fn concerns_path(&self, path: &Path) -> bool {
        if path == self.root || self.linked_files.contains(path) {
            return true;
        }
        match path.parent() {
            Some(dir) if Some(dir) == self.parent.as_deref() => self.parent_linked,
            Some(dir) => !self.file_dirs.contains(dir) || self.linked_dirs.contains(dir),
            None => true,
        }
    }

    /// Whether an event names the directory itself (made, removed, moved, or its link
    /// retargeted): its tree is watched again, even when the new one reuses the inode.
    fn names_root(&self, event: &notify::Event) -> bool {
        event.paths.contains(&self.root)
    }

    /// Watches the root's tree again when an event named the root, or the root is
    /// another directory than the one watched.
    fn rewatch_if_replaced(&mut self, watcher: &mut impl Watcher, root_named: bool) {
        let now = identity(&self.root);
        if now.is_none() || (!root_named && now == self.root_identity) {
            return;
        }
        let _ = watcher.unwatch(&self.root);
        match watcher.watch(&self.root, RecursiveMode::Recursive) {
            Ok(()) => {
                if now != self.root_identity {
                    tracing::info!(directory = %LogSafe(&self.root.to_string_lossy()), "the manifest directory was replaced; watching the new one");
                }
                self.root_identity = now;
            }
            Err(err) => {
                tracing::warn!(error = %err, "cannot watch the replaced manifest directory")
            }
        }
    }

    /// Follows where the last scan's links led; while that adds a watch, scans again
    /// (appending to `events`, replacing `problems`), so that a change made there
    /// between the scan and the watch is not missed.
    fn scan_again_while_following(
        &mut self,
        watcher: &mut impl Watcher,
        manifests: &mut ManifestDir,
        events: &mut Vec<SourceEvent>,
        problems: &mut Vec<crate::ManifestProblem>,
    ) {
        // Bounded: each round adds a directory, and a directory tree is finite; the bound
        // only guards against one that keeps changing under the scan.
        for _ in 0..8 {
            if !self.follow(watcher, manifests.linked()) {
                return;
            }
            let (more, now) = manifests.change_events();
            events.extend(more);
            *problems = now;
        }
    }

    /// Watches exactly the directories outside the root's tree that links lead to or that
    /// hold a linked file (the parent excepted: it is watched already); returns whether a
    /// watch was added.
    fn follow(
        &mut self,
        watcher: &mut impl Watcher,
        (dirs, files): (&[PathBuf], &[PathBuf]),
    ) -> bool {
        let resolved_root = std::fs::canonicalize(&self.root).ok();
        let outside = |path: &PathBuf| {
            resolved_root
                .as_ref()
                .is_none_or(|root| !path.starts_with(root))
        };
        self.linked_files = files.iter().filter(|file| outside(file)).cloned().collect();
        // The parent is watched already, under the name its events come with.
        let not_parent = |dir: &PathBuf| Some(dir) != self.resolved_parent.as_ref();
        self.parent_linked = dirs.iter().any(|dir| !not_parent(dir));
        let linked_dirs: BTreeSet<PathBuf> = dirs
            .iter()
            .filter(|dir| outside(dir) && not_parent(dir))
            .cloned()
            .collect();
        let file_dirs = self
            .linked_files
            .iter()
            .filter_map(|file| file.parent().map(Path::to_path_buf))
            .filter(not_parent)
            .collect();
        let watched = self.watched();
        self.linked_dirs = linked_dirs;
        self.file_dirs = file_dirs;
        let wanted = self.watched();
        for gone in watched.difference(&wanted) {
            let _ = watcher.unwatch(gone);
        }
        let mut added = false;
        for new in wanted.difference(&watched) {
            match watcher.watch(new, RecursiveMode::NonRecursive) {
                Ok(()) => added = true,
                Err(err) => {
                    tracing::warn!(error = %err, directory = %LogSafe(&new.to_string_lossy()), "cannot watch a directory a link leads to");
                }
            }
        }
        added
    }

    /// The directories watched one by one.
    fn watched(&self) -> BTreeSet<PathBuf> {
        self.linked_dirs.union(&self.file_dirs).cloned().collect()
    }
}

/// A directory's device and inode (of what a link to it names), if it can be read.
fn identity(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path)
        .ok()
        .map(|metadata| (metadata.dev(), metadata.ino()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watches() -> Watches {
        let path = PathBuf::from;
        Watches {
            root: path("/srv/manifests"),
            root_identity: None,
            parent: Some(path("/srv")),
            resolved_parent: Some(path("/srv")),
            parent_linked: false,
            linked_dirs: BTreeSet::from([path("/opt/shared")]),
            file_dirs: BTreeSet::from([path("/etc/extra"), path("/srv")]),
            linked_files: BTreeSet::from([path("/etc/extra/one.yaml"), path("/srv/two.yaml")]),
        }
    }

    #[test]
    fn only_what_the_directory_reads_is_a_change_of_it() {
        let mut watches = watches();
        let concerns = |watches: &Watches, path: &str| watches.concerns_path(Path::new(path));
        for read in [
            "/srv/manifests",
            "/srv/manifests/a.yaml",
            "/srv/manifests/nested/b.yaml",
            "/opt/shared/c.yaml",
            "/etc/extra/one.yaml",
            "/srv/two.yaml",
        ] {
            assert!(concerns(&watches, read), "{read}");
        }
        for beside in ["/srv/state.log", "/srv/other", "/etc/extra/passwd"] {
            assert!(!concerns(&watches, beside), "{beside}");
        }
        // A link to the parent itself: all of it is read.
        watches.parent_linked = true;
        assert!(concerns(&watches, "/srv/state.log"));
    }
}
