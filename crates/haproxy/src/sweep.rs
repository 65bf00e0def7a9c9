//! The sweep: the managed places hold managed entries only.
//!
//! An entry that is not a regular file with a UTF-8 name (a symlink, a FIFO, a socket, a
//! subdirectory, a name we never write) is removed, and so is a regular file nothing
//! manages. Symlinks are never followed: the link itself goes, wherever it points.
//! `run/` keeps HAProxy's two sockets and nothing else.

use std::fs;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt};
use std::path::Path;

use render::layout::{ADMIN_SOCKET, MASTER_SOCKET, TERMINATE_SOCKET};

use crate::state_dir::{StateDirError, error};

/// Removes every entry of `dir` that `keep` (given its UTF-8 name and its own type, not
/// its target's) refuses; an entry whose name is not UTF-8 is removed unasked.
pub(crate) fn sweep(
    dir: &Path,
    mut keep: impl FnMut(&str, fs::FileType) -> bool,
) -> Result<(), StateDirError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(error(dir)(err)),
    };
    for entry in entries {
        let entry = entry.map_err(error(dir))?;
        let path = entry.path();
        // The entry's own type: `DirEntry::file_type` does not follow symlinks.
        let file_type = entry.file_type().map_err(error(&path))?;
        let kept = entry
            .file_name()
            .to_str()
            .is_some_and(|name| keep(name, file_type));
        if !kept {
            tracing::warn!(path = %path.display(), kind = kind(file_type), "removing an unmanaged entry");
            remove(&path, file_type)?;
        }
    }
    Ok(())
}

/// Keeps `path` if it is a regular file (returns whether it is there), removes it if it
/// is anything else.
pub(crate) fn sweep_file(path: &Path) -> Result<bool, StateDirError> {
    match fs::symlink_metadata(path) {
        Ok(metadata) if metadata.is_file() => Ok(true),
        Ok(metadata) => {
            tracing::warn!(path = %path.display(), kind = kind(metadata.file_type()), "removing an unmanaged entry");
            remove(path, metadata.file_type())?;
            Ok(false)
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(error(path)(err)),
    }
}

/// Makes `path` a real directory, created with `mode` if missing: anything else there (a
/// symlink above all, which would send writes elsewhere) is removed first.
pub(crate) fn ensure_dir(path: &Path, mode: u32) -> Result<(), StateDirError> {
    match fs::symlink_metadata(path) {
        Ok(metadata) if metadata.is_dir() => return Ok(()),
        Ok(metadata) => {
            tracing::warn!(path = %path.display(), kind = kind(metadata.file_type()), "removing an unmanaged entry");
            remove(path, metadata.file_type())?;
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => return Err(error(path)(err)),
    }
    fs::DirBuilder::new()
        .mode(mode)
        .create(path)
        .map_err(error(path))
}

/// Keeps only HAProxy's sockets in `run_dir` (the HTTPS frontend's too, which it binds
/// while some TLS connections are passed through).
pub(crate) fn sweep_sockets(run_dir: &Path) -> Result<(), StateDirError> {
    sweep(run_dir, |name, file_type| {
        file_type.is_socket()
            && (name == MASTER_SOCKET || name == ADMIN_SOCKET || name == TERMINATE_SOCKET)
    })
}

/// Removes whatever is at `path`, if anything; a directory with its content.
pub(crate) fn remove_entry(path: &Path) -> Result<(), StateDirError> {
    match fs::symlink_metadata(path) {
        Ok(metadata) => remove(path, metadata.file_type()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(error(path)(err)),
    }
}

fn remove(path: &Path, file_type: fs::FileType) -> Result<(), StateDirError> {
    // `remove_dir_all` follows no symlink inside the tree either.
    let removed = if file_type.is_dir() {
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    };
    match removed {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => Err(error(path)(err)),
        _ => Ok(()),
    }
}

/// What an entry is, for the log.
fn kind(file_type: fs::FileType) -> &'static str {
    if file_type.is_symlink() {
        "symlink"
    } else if file_type.is_dir() {
        "directory"
    } else if file_type.is_fifo() {
        "fifo"
    } else if file_type.is_socket() {
        "socket"
    } else if file_type.is_file() {
        "file"
    } else {
        "device"
    }
}
