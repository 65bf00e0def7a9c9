//! Listing a manifest directory: each directory once, regular manifest files only, and
//! every path that cannot be read reported and remembered, so what it held is kept.

use std::collections::HashMap;
use std::fs::DirEntry;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use crate::ManifestProblem;
use crate::read::{Stamp, describe_non_regular};

/// A manifest file found by the walk.
#[derive(Debug)]
pub(crate) struct ListedFile {
    /// Where to read it.
    pub path: PathBuf,
    /// Its path below the root: its identity.
    pub relative: PathBuf,
    /// Its stamp when listed (of its target, for a symbolic link).
    pub stamp: Stamp,
}

/// What a walk found.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    /// The manifest files that are regular files, in walk order.
    pub files: Vec<ListedFile>,
    /// Paths below the root (empty: the root itself) that exist but could not be listed,
    /// followed or read: every file at or below them keeps what it held.
    pub unreadable: Vec<PathBuf>,
    /// What went wrong, one problem per path.
    pub problems: Vec<ManifestProblem>,
    /// The directories read through symbolic links, resolved, for the watcher to follow
    /// (a watch of the root sees none of them).
    pub linked_dirs: Vec<PathBuf>,
    /// The files read through symbolic links, resolved, likewise.
    pub linked_files: Vec<PathBuf>,
}

impl Listing {
    fn problem(&mut self, relative: &Path, message: String) {
        let file = if relative.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            relative.to_path_buf()
        };
        self.problems.push(ManifestProblem { file, message });
    }

    fn unreadable(&mut self, relative: &Path, message: String) {
        self.problem(relative, format!("{message}; what it held before is kept"));
        self.unreadable.push(relative.to_path_buf());
    }
}

/// Whether a name is hidden (editor droppings, and the `..data` directories of
/// Kubernetes volumes, whose files are reached through the visible links).
fn is_hidden(name: &std::ffi::OsStr) -> bool {
    name.as_encoded_bytes().starts_with(b".")
}

/// Whether a path names a manifest file (by extension; hidden files are skipped).
pub(crate) fn is_manifest(path: &Path) -> bool {
    let hidden = path.file_name().is_some_and(is_hidden);
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    !hidden && matches!(extension, "yaml" | "yml" | "json")
}

/// Walks the directory below `root`, following symbolic links, without blocking on
/// anything and without reading any directory twice: directories are known by device
/// and inode, so a link back to an ancestor (a loop) or a second link to a directory
/// already read is reported and skipped. Entries are visited in name order, so which of
/// two links to one directory is read does not depend on the file system.
pub(crate) fn list(root: &Path) -> Listing {
    let mut listing = Listing::default();
    // Each directory read, by (device, inode), with the path it was read at.
    let mut read_at: HashMap<(u64, u64), PathBuf> = HashMap::new();
    // Each directory to read, and whether a symbolic link led there.
    let mut pending = vec![(PathBuf::new(), false)];
    while let Some((relative_dir, linked)) = pending.pop() {
        let dir = if relative_dir.as_os_str().is_empty() {
            root.to_path_buf()
        } else {
            root.join(&relative_dir)
        };
        let metadata = match std::fs::metadata(&dir) {
            Ok(metadata) => metadata,
            Err(err) => {
                listing.unreadable(&relative_dir, format!("directory cannot be read: {err}"));
                continue;
            }
        };
        if let Some(first) = read_at.get(&(metadata.dev(), metadata.ino())) {
            let message = if relative_dir.starts_with(first) {
                format!(
                    "symbolic-link loop: this is the directory {} again; not read twice",
                    shown(first)
                )
            } else {
                format!("the same directory as {}; read there only", shown(first))
            };
            listing.problem(&relative_dir, message);
            continue;
        }
        read_at.insert((metadata.dev(), metadata.ino()), relative_dir.clone());
        if linked && let Ok(resolved) = std::fs::canonicalize(&dir) {
            listing.linked_dirs.push(resolved);
        }
        let entries = match read_entries(&dir) {
            Ok(entries) => entries,
            Err(err) => {
                listing.unreadable(&relative_dir, format!("directory cannot be read: {err}"));
                continue;
            }
        };
        let mut subdirectories = Vec::new();
        for entry in entries {
            let name = entry.file_name();
            if is_hidden(&name) {
                continue;
            }
            let relative = relative_dir.join(&name);
            let path = entry.path();
            let file_type = match entry.file_type() {
                Ok(file_type) => file_type,
                Err(err) => {
                    listing.unreadable(&relative, format!("cannot be examined: {err}"));
                    continue;
                }
            };
            if file_type.is_dir() {
                subdirectories.push((relative, linked));
                continue;
            }
            let metadata = if file_type.is_symlink() {
                std::fs::metadata(&path)
            } else {
                entry.metadata()
            };
            let metadata = match metadata {
                Ok(metadata) => metadata,
                Err(err) if file_type.is_symlink() => {
                    listing.unreadable(
                        &relative,
                        format!("symbolic link cannot be followed: {err}"),
                    );
                    continue;
                }
                // Deleted since it was listed: it is simply gone.
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
                Err(err) => {
                    listing.unreadable(&relative, format!("cannot be examined: {err}"));
                    continue;
                }
            };
            if metadata.is_dir() {
                subdirectories.push((relative, true));
            } else if !is_manifest(&relative) {
                continue;
            } else if metadata.is_file() {
                if file_type.is_symlink()
                    && let Ok(target) = std::fs::canonicalize(&path)
                {
                    listing.linked_files.push(target);
                }
                listing.files.push(ListedFile {
                    path,
                    relative,
                    stamp: Stamp::of(&metadata),
                });
            } else {
                let what = describe_non_regular(metadata.file_type());
                listing.unreadable(&relative, format!("not a regular file ({what}); not read"));
            }
        }
        // Depth first, in name order.
        pending.extend(subdirectories.into_iter().rev());
    }
    listing
}

/// A directory's entries in name order. An error while listing fails the whole
/// directory: a partial listing would look like deleted files.
fn read_entries(dir: &Path) -> std::io::Result<Vec<DirEntry>> {
    let mut entries = std::fs::read_dir(dir)?.collect::<std::io::Result<Vec<_>>>()?;
    entries.sort_by_key(DirEntry::file_name);
    Ok(entries)
}

/// A path below the root as reports show it.
fn shown(relative: &Path) -> std::path::Display<'_> {
    if relative.as_os_str().is_empty() {
        Path::new(".").display()
    } else {
        relative.display()
    }
}
