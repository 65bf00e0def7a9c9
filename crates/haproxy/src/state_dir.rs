//! The state directory: managed files are exactly the rendered ones (invariant I1).
//!
//! Writes are atomic (temporary file in the same directory, fsync, rename, fsync of the
//! directory). The applied state only records what really reached the disk.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use plan::{AppliedFiles, Plan};
use render::{MANAGED_ROOTS, RenderedConfig, RenderedFile};
use xxhash_rust::xxh3::xxh3_64;

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

fn error(path: &Path) -> impl FnOnce(std::io::Error) -> StateDirError + '_ {
    move |source| StateDirError {
        path: path.to_path_buf(),
        source,
    }
}

/// An owned directory of managed files.
#[derive(Debug, Clone)]
pub struct StateDir {
    root: PathBuf,
}

impl StateDir {
    /// Opens (creating if needed) a state directory. The path is made absolute, since
    /// HAProxy is started with it on its command line.
    pub fn open(root: impl Into<PathBuf>) -> Result<Self, StateDirError> {
        let root = root.into();
        fs::create_dir_all(&root).map_err(error(&root))?;
        let root = fs::canonicalize(&root).map_err(error(&root))?;
        for dir in ["run", render::BACKENDS_DIR, "maps", "certs"] {
            let path = root.join(dir);
            fs::create_dir_all(&path).map_err(error(&path))?;
        }
        Ok(Self { root })
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Reads every managed file that is on disk, with its content hash.
    pub fn scan(&self) -> Result<AppliedFiles, StateDirError> {
        let mut files = BTreeMap::new();
        for root in MANAGED_ROOTS {
            let path = self.root.join(root);
            if path.is_dir() {
                for entry in fs::read_dir(&path).map_err(error(&path))? {
                    let entry = entry.map_err(error(&path))?;
                    let file_path = entry.path();
                    let is_file = entry.file_type().map_err(error(&file_path))?.is_file();
                    let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                        // Not a name we ever write: remove it as stale under a lossy key.
                        files.insert(format!("{root}/{}", entry.file_name().to_string_lossy()), 0);
                        continue;
                    };
                    if is_file && !name.starts_with(".tmp") {
                        let bytes = fs::read(&file_path).map_err(error(&file_path))?;
                        files.insert(format!("{root}/{name}"), xxh3_64(&bytes));
                    } else if name.starts_with(".tmp") {
                        // A temporary file left by a crash mid-write.
                        let _ = fs::remove_file(&file_path);
                    }
                }
            } else if path.is_file() {
                let bytes = fs::read(&path).map_err(error(&path))?;
                files.insert(root.to_owned(), xxh3_64(&bytes));
            }
        }
        Ok(files)
    }

    /// Carries out a plan's writes and deletes, updating `applied` after each operation
    /// that succeeded, so a failure part-way leaves `applied` true to the disk.
    pub fn apply(&self, plan: &Plan, applied: &mut AppliedFiles) -> Result<(), StateDirError> {
        let mut touched_dirs = std::collections::BTreeSet::new();
        for (relative, file) in &plan.writes {
            let path = self.root.join(relative);
            write_atomic(&path, file)?;
            applied.insert(relative.clone(), file.hash);
            touched_dirs.insert(path.parent().map(Path::to_path_buf).unwrap_or_default());
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
        for dir in touched_dirs {
            sync_dir(&dir)?;
        }
        Ok(())
    }

    /// Makes `staging` hold exactly the desired files, hard-linking those that are
    /// already on disk here with the same content, so a check costs little I/O.
    pub fn stage(
        &self,
        staging: &Path,
        desired: &RenderedConfig,
        applied: &AppliedFiles,
    ) -> Result<(), StateDirError> {
        if staging.exists() {
            fs::remove_dir_all(staging).map_err(error(staging))?;
        }
        for dir in ["run", render::BACKENDS_DIR, "maps", "certs"] {
            let path = staging.join(dir);
            fs::create_dir_all(&path).map_err(error(&path))?;
        }
        for (relative, file) in &desired.files {
            let target = staging.join(relative);
            let linked = applied.get(relative) == Some(&file.hash)
                && fs::hard_link(self.root.join(relative), &target).is_ok();
            if !linked {
                write_plain(&target, file)?;
            }
        }
        Ok(())
    }
}

fn write_plain(path: &Path, file: &RenderedFile) -> Result<(), StateDirError> {
    let mut out = fs::File::create(path).map_err(error(path))?;
    file.write_to(&mut out).map_err(error(path))?;
    if file.private {
        fs::set_permissions(path, fs::Permissions::from_mode(0o600)).map_err(error(path))?;
    }
    Ok(())
}

fn write_atomic(path: &Path, file: &RenderedFile) -> Result<(), StateDirError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut temp = tempfile::Builder::new()
        .prefix(".tmp")
        .tempfile_in(dir)
        .map_err(error(dir))?;
    let mode = if file.private { 0o600 } else { 0o644 };
    temp.as_file()
        .set_permissions(fs::Permissions::from_mode(mode))
        .map_err(error(path))?;
    file.write_to(&mut temp).map_err(error(path))?;
    temp.as_file().sync_all().map_err(error(path))?;
    temp.persist(path).map_err(|e| StateDirError {
        path: path.to_path_buf(),
        source: e.error,
    })?;
    Ok(())
}

fn sync_dir(dir: &Path) -> Result<(), StateDirError> {
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(error(dir))
}
