//! The state directory: managed files are exactly the rendered ones (invariant I1).
//!
//! Writes are atomic (a temporary file beside each, every one of them fsynced, several
//! at once, before any is renamed into place, then an fsync of each directory). The
//! applied state only records what really reached the disk. The managed places hold
//! nothing else: at start-up and before every sync, the sweep removes
//! symlinks (never followed), names that are not UTF-8, FIFOs, sockets, subdirectories
//! and files nothing manages.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use plan::{AppliedFiles, Plan};
use render::layout::{MAIN_CONFIG, ManagedDir, STAGING_DIR};
use render::{RenderedConfig, RenderedFile};
use xxhash_rust::xxh3::xxh3_64;

use crate::check::{CheckError, check_config};
use crate::sockets::Sockets;
use crate::sweep::{ensure_dir, remove_entry, sweep, sweep_file, sweep_sockets};

/// A failed file operation, naming the file.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {source}")]
pub struct StateDirError {
    /// The file or directory.
    pub path: PathBuf,
    /// The error.
    #[source]
    pub source: std::io::Error,
}

pub(crate) fn error(path: &Path) -> impl FnOnce(std::io::Error) -> StateDirError + '_ {
    move |source| StateDirError {
        path: path.to_path_buf(),
        source,
    }
}

/// The managed directories' names.
fn managed_dirs() -> impl Iterator<Item = &'static str> {
    ManagedDir::ALL.iter().copied().map(ManagedDir::name)
}

/// An owned directory of managed files.
#[derive(Debug, Clone)]
pub struct StateDir {
    root: PathBuf,
    /// HAProxy's sockets, once [`StateDir::prepare_sockets`] chose their place.
    sockets: Option<Sockets>,
    /// Every file's content hash in the last configuration HAProxy accepted whole (its
    /// check passed, or HAProxy started on it).
    last_passed: BTreeMap<String, u64>,
    /// The directory's lock, once [`StateDir::lock`] took it.
    lock: Option<std::sync::Arc<fs::File>>,
}

impl StateDir {
    /// Opens (creating if needed) a state directory. The path is made absolute, since
    /// HAProxy is started with it on its command line.
    pub fn open(root: impl Into<PathBuf>) -> Result<Self, StateDirError> {
        let root = root.into();
        fs::create_dir_all(&root).map_err(error(&root))?;
        let root = fs::canonicalize(&root).map_err(error(&root))?;
        for dir in managed_dirs() {
            ensure_dir(&root.join(dir), 0o755)?;
        }
        Ok(Self {
            root,
            sockets: None,
            last_passed: BTreeMap::new(),
            lock: None,
        })
    }

    /// Takes the directory for this process alone, until it exits: fails, naming the
    /// holder, when another process took it.
    pub fn lock(&mut self) -> Result<(), StateDirError> {
        if self.lock.is_none() {
            self.lock = Some(std::sync::Arc::new(crate::lock::lock(&self.root)?));
        }
        Ok(())
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// HAProxy's sockets, once [`StateDir::prepare_sockets`] chose their place.
    pub fn sockets(&self) -> Option<&Sockets> {
        self.sockets.as_ref()
    }

    /// Chooses where HAProxy's sockets live (see [`Sockets`]), creates that directory and
    /// clears it of anything but the sockets; from then on every sync sweeps it too.
    pub fn prepare_sockets(&mut self) -> Result<Sockets, StateDirError> {
        let sockets = Sockets::prepare(&self.root)?;
        sweep_sockets(&sockets.run_dir())?;
        self.sockets = Some(sockets.clone());
        Ok(sockets)
    }

    /// Clears the managed places of everything that is not a managed file, then reads
    /// every managed file with its content hash. Files the configuration no longer has
    /// are deleted by the first sync's plan.
    pub fn scan(&self) -> Result<AppliedFiles, StateDirError> {
        // A check interrupted by a crash.
        remove_entry(&self.root.join(STAGING_DIR))?;
        if let Some(sockets) = &self.sockets {
            sweep_sockets(&sockets.run_dir())?;
        }
        let mut found = Vec::new();
        if sweep_file(&self.root.join(MAIN_CONFIG))? {
            found.push(MAIN_CONFIG.to_owned());
        }
        for dir in managed_dirs() {
            let path = self.root.join(dir);
            ensure_dir(&path, 0o755)?;
            // A `.tmp` file is one a crash left mid-write.
            sweep(&path, |name, file_type| {
                let keep = file_type.is_file() && !name.starts_with(".tmp");
                if keep {
                    found.push(format!("{dir}/{name}"));
                }
                keep
            })?;
        }
        let mut files = BTreeMap::new();
        for relative in found {
            let path = self.root.join(&relative);
            let bytes = fs::read(&path).map_err(error(&path))?;
            files.insert(relative, xxh3_64(&bytes));
        }
        Ok(files)
    }

    /// Carries out a plan's writes and deletes, updating `applied` after each operation
    /// that succeeded, so a failure part-way leaves `applied` true to the disk.
    ///
    /// The managed places are swept first: whatever is neither recorded in `applied` nor
    /// about to be written is removed. A recorded file that vanished is forgotten and
    /// reported as an error once the plan is carried out, so that the caller syncs again
    /// and writes it back.
    pub fn apply(&self, plan: &Plan, applied: &mut AppliedFiles) -> Result<(), StateDirError> {
        let vanished = self.sweep_for_sync(plan, applied)?;
        let mut touched_dirs = BTreeSet::new();
        let written = self.write_all(plan, applied, &mut touched_dirs);
        if written.is_err() {
            // What was renamed before the failure is recorded in `applied`: its directory
            // entries are made durable too, as far as they can be.
            for dir in &touched_dirs {
                let _ = sync_dir(dir);
            }
        }
        written?;
        for dir in touched_dirs {
            sync_dir(&dir)?;
        }
        match vanished.first() {
            None => Ok(()),
            Some(first) => Err(StateDirError {
                path: self.root.join(first),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!(
                        "{} managed file(s) vanished since they were written",
                        vanished.len()
                    ),
                ),
            }),
        }
    }

    /// Writes and deletes what `plan` says, recording in `applied` each file that reached
    /// the disk and in `touched_dirs` each directory changed.
    fn write_all(
        &self,
        plan: &Plan,
        applied: &mut AppliedFiles,
        touched_dirs: &mut BTreeSet<PathBuf>,
    ) -> Result<(), StateDirError> {
        for batch in plan.writes.chunks(WRITE_BATCH) {
            let staged = on_several_threads(batch, |(relative, file)| {
                let path = self.root.join(relative);
                let temp = stage(&path, file)?;
                temp.as_file().sync_all().map_err(error(&path))?;
                Ok((path, temp))
            })?;
            for ((relative, file), (path, temp)) in batch.iter().zip(staged) {
                temp.persist(&path).map_err(|e| StateDirError {
                    path: path.clone(),
                    source: e.error,
                })?;
                applied.insert(relative.clone(), file.hash);
                touched_dirs.insert(path.parent().map(Path::to_path_buf).unwrap_or_default());
            }
        }
        for relative in &plan.deletes {
            let path = self.root.join(relative);
            match fs::remove_file(&path) {
                Ok(()) => {}
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => return Err(StateDirError { path, source: err }),
            }
            applied.remove(relative);
            touched_dirs.insert(path.parent().map(Path::to_path_buf).unwrap_or_default());
        }
        Ok(())
    }

    /// Sweeps the managed places before a sync; returns the recorded files that are gone
    /// (and no longer recorded).
    fn sweep_for_sync(
        &self,
        plan: &Plan,
        applied: &mut AppliedFiles,
    ) -> Result<Vec<String>, StateDirError> {
        if let Some(sockets) = &self.sockets {
            sweep_sockets(&sockets.run_dir())?;
        }
        remove_entry(&self.root.join(STAGING_DIR))?;
        let writes: BTreeSet<&str> = plan.writes.iter().map(|(path, _)| path.as_str()).collect();
        let mut present = BTreeSet::new();
        if sweep_file(&self.root.join(MAIN_CONFIG))? {
            present.insert(MAIN_CONFIG.to_owned());
        }
        for dir in managed_dirs() {
            let path = self.root.join(dir);
            ensure_dir(&path, 0o755)?;
            sweep(&path, |name, file_type| {
                let relative = format!("{dir}/{name}");
                let managed = applied.contains_key(&relative) || writes.contains(&*relative);
                let keep = file_type.is_file() && managed;
                if keep {
                    present.insert(relative);
                }
                keep
            })?;
        }
        let vanished: Vec<String> = applied
            .keys()
            .filter(|relative| !present.contains(*relative) && !writes.contains(relative.as_str()))
            .cloned()
            .collect();
        for relative in &vanished {
            applied.remove(relative);
        }
        Ok(vanished)
    }

    /// Checks `desired` with `haproxy -c` on a copy assembled in `staging/`, which is
    /// removed again whatever the outcome.
    ///
    /// When the main configuration is the one of the last configuration that passed, the
    /// backend shards unchanged since then are staged as stubs: of their sections, only
    /// those the main configuration names, each reduced to its `backend` and `mode`
    /// lines. HAProxy then parses only what changed (at 10k services 0.13 s instead of
    /// 0.7 s). A stub only takes away what a reference could find, so it can make a good
    /// configuration fail but never a bad one pass; a partial check that fails is not
    /// believed, and the whole configuration is checked.
    pub async fn check(
        &mut self,
        haproxy_bin: &Path,
        desired: &RenderedConfig,
        applied: &AppliedFiles,
    ) -> Result<(), CheckError> {
        let main = desired
            .files
            .get(MAIN_CONFIG)
            .map(RenderedFile::text)
            .unwrap_or_default();
        let stubs = Stubs {
            shards: self.unchanged_shards(desired),
            named: main.split_whitespace().collect(),
        };
        let started = std::time::Instant::now();
        let mut result = self
            .check_staged(haproxy_bin, desired, applied, &stubs)
            .await;
        if result.is_err() && !stubs.shards.is_empty() {
            let partial = started.elapsed();
            result = self
                .check_staged(haproxy_bin, desired, applied, &Stubs::default())
                .await;
            if result.is_ok() {
                tracing::warn!(
                    partial_ms = partial.as_millis(),
                    "a partial configuration check failed where the whole one passes"
                );
            }
        }
        tracing::debug!(
            stubbed_shards = stubs.shards.len(),
            elapsed_ms = started.elapsed().as_millis(),
            passed = result.is_ok(),
            "configuration checked"
        );
        if result.is_ok() {
            self.accepted(desired);
        }
        result
    }

    /// Whether HAProxy accepted a configuration in this run (a check passed, or it started).
    pub fn has_accepted(&self) -> bool {
        !self.last_passed.is_empty()
    }

    /// Records that HAProxy accepted `desired`, by a check or by starting on it: the
    /// next check may stage what is unchanged since as stubs.
    pub fn accepted(&mut self, desired: &RenderedConfig) {
        self.last_passed = desired
            .files
            .iter()
            .map(|(path, file)| (path.clone(), file.hash))
            .collect();
    }

    /// The backend shards a check may stage as stubs: those whose content passed last
    /// time, when the main configuration did too.
    fn unchanged_shards<'a>(&self, desired: &'a RenderedConfig) -> BTreeSet<&'a str> {
        let passed =
            |path: &str, file: &RenderedFile| self.last_passed.get(path) == Some(&file.hash);
        match desired.files.get(MAIN_CONFIG) {
            Some(main) if passed(MAIN_CONFIG, main) => desired
                .files
                .iter()
                .filter(|(path, file)| ManagedDir::Backends.holds(path) && passed(path, file))
                .map(|(path, _)| path.as_str())
                .collect(),
            _ => BTreeSet::new(),
        }
    }

    async fn check_staged(
        &self,
        haproxy_bin: &Path,
        desired: &RenderedConfig,
        applied: &AppliedFiles,
        stubs: &Stubs<'_>,
    ) -> Result<(), CheckError> {
        let staging = self.root.join(STAGING_DIR);
        let result = match self.stage(&staging, desired, applied, stubs) {
            Ok(()) => check_config(haproxy_bin, &staging).await,
            Err(err) => Err(CheckError::Staging(err)),
        };
        let cleaned = remove_entry(&staging);
        result?;
        cleaned.map_err(CheckError::Staging)
    }

    /// Makes `staging` hold exactly the desired files, hard-linking those that are
    /// already on disk here with the same content, so a check costs little I/O; the
    /// stubbed shards as [`Stubs`] says.
    fn stage(
        &self,
        staging: &Path,
        desired: &RenderedConfig,
        applied: &AppliedFiles,
        stubs: &Stubs<'_>,
    ) -> Result<(), StateDirError> {
        remove_entry(staging)?;
        // Private: it holds copies of the keys.
        fs::DirBuilder::new()
            .mode(0o700)
            .create(staging)
            .map_err(error(staging))?;
        for dir in managed_dirs() {
            let path = staging.join(dir);
            fs::create_dir(&path).map_err(error(&path))?;
        }
        for (relative, file) in &desired.files {
            let target = staging.join(relative);
            if stubs.shards.contains(relative.as_str()) {
                let stub = RenderedFile::new(stubs.of(&file.text()), false);
                write_new(&target, &stub)?;
                continue;
            }
            let linked = applied.get(relative) == Some(&file.hash)
                && fs::hard_link(self.root.join(relative), &target).is_ok();
            if !linked {
                write_new(&target, file)?;
            }
        }
        Ok(())
    }
}

/// What a partial check stages of the shards that passed before.
#[derive(Debug, Default)]
struct Stubs<'a> {
    /// The shards staged as stubs.
    shards: BTreeSet<&'a str>,
    /// The words of the main configuration: a section it does not name is left out.
    named: std::collections::HashSet<&'a str>,
}

impl Stubs<'_> {
    /// A shard's sections that the main configuration names, reduced to what a reference
    /// to them may look for: their names and proxy modes.
    fn of(&self, shard: &str) -> String {
        let mut stubs = String::new();
        let mut named = false;
        for line in shard.lines() {
            if let Some(name) = line.strip_prefix("backend ") {
                named = self.named.contains(name.trim());
            } else if !(named && line.trim_start().starts_with("mode ")) {
                continue;
            }
            if named {
                stubs.push_str(line);
                stubs.push('\n');
            }
        }
        stubs
    }
}

/// The mode a file is created with: a private key is never readable by others, not even
/// for a moment.
fn creation_mode(file: &RenderedFile) -> u32 {
    if file.private { 0o600 } else { 0o644 }
}

fn write_new(path: &Path, file: &RenderedFile) -> Result<(), StateDirError> {
    let mut out = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(creation_mode(file))
        .open(path)
        .map_err(error(path))?;
    file.write_to(&mut out).map_err(error(path))
}

/// How many files are written to temporaries, synced and renamed at a time: a bound on
/// the files held open at once.
const WRITE_BATCH: usize = 256;

/// Most files written and synced at once: syncs wait on the disk, not on a core, and a
/// disk commits concurrent ones together.
const WRITE_THREADS: usize = 8;

/// Writes a file's content into a temporary beside `path`, not yet synced nor renamed.
fn stage(path: &Path, file: &RenderedFile) -> Result<tempfile::NamedTempFile, StateDirError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mode = creation_mode(file);
    let mut temp = tempfile::Builder::new()
        .prefix(".tmp")
        .permissions(fs::Permissions::from_mode(mode))
        .tempfile_in(dir)
        .map_err(error(dir))?;
    // The creation mode is narrowed by the umask; a file others must read gets it back.
    temp.as_file()
        .set_permissions(fs::Permissions::from_mode(mode))
        .map_err(error(path))?;
    file.write_to(&mut temp).map_err(error(path))?;
    Ok(temp)
}

/// `work` on every item, several items at once, the results in the items' order (or the
/// first error in that order). Writing a batch of files is staged and synced this way,
/// every temporary synced before any is renamed over its file (a rename must never
/// publish content the disk does not hold yet): one file at a time, each waits for its
/// own disk commit, and on a file system without a journal each creation scans for an
/// inode not freed recently, which on a directory rewritten often takes milliseconds.
fn on_several_threads<T: Sync, R: Send>(
    items: &[T],
    work: impl Fn(&T) -> Result<R, StateDirError> + Sync,
) -> Result<Vec<R>, StateDirError> {
    if items.len() < 4 {
        return items.iter().map(&work).collect();
    }
    let per_thread = items.len().div_ceil(WRITE_THREADS);
    let run = |part: &[T]| part.iter().map(&work).collect::<Result<Vec<R>, _>>();
    std::thread::scope(|scope| {
        let mut parts = Vec::new();
        for part in items.chunks(per_thread) {
            // A thread the system refuses (a process limit) leaves its part to this one.
            match std::thread::Builder::new().spawn_scoped(scope, move || run(part)) {
                Ok(handle) => parts.push(Err(handle)),
                Err(_) => parts.push(Ok(run(part))),
            }
        }
        let mut results = Vec::with_capacity(items.len());
        for part in parts {
            let done = part.unwrap_or_else(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            });
            results.extend(done?);
        }
        Ok(results)
    })
}

fn sync_dir(dir: &Path) -> Result<(), StateDirError> {
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(error(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failing_at(item: &usize) -> StateDirError {
        StateDirError {
            path: PathBuf::from(item.to_string()),
            source: std::io::Error::other("refused"),
        }
    }

    #[test]
    fn work_on_several_threads_keeps_the_items_order() {
        for len in [0, 1, 3, 4, 9, 100, 1000] {
            let items: Vec<usize> = (0..len).collect();
            let doubled = on_several_threads(&items, |item| Ok(item * 2)).unwrap();
            assert_eq!(
                doubled,
                items.iter().map(|item| item * 2).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn the_first_failure_in_the_items_order_is_the_one_reported() {
        let items: Vec<usize> = (0..100).collect();
        // Items of several threads' parts fail, the last part's first.
        let failed = on_several_threads(&items, |item| {
            if [30, 70, 99].contains(item) {
                Err(failing_at(item))
            } else {
                Ok(*item)
            }
        })
        .unwrap_err();
        assert_eq!(failed.path, PathBuf::from("30"));
        let few: Vec<usize> = (0..3).collect();
        let failed = on_several_threads(&few, |item| {
            if *item > 0 {
                Err(failing_at(item))
            } else {
                Ok(())
            }
        })
        .unwrap_err();
        assert_eq!(failed.path, PathBuf::from("1"));
    }
}
