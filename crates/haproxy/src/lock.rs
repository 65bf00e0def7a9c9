//! One portcullis per state directory: an exclusive lock on `portcullis.lock`, held for
//! as long as the process runs, so that a second one sharing the directory (and its
//! HAProxy's sockets) stops at start-up instead of fighting the first over its files.

use std::fs;
use std::io::{Read, Seek, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use rustix::fs::{FlockOperation, flock};

use crate::state_dir::{StateDirError, error};

/// The lock file, at the top of the state directory.
pub const LOCK_FILE: &str = "portcullis.lock";

/// Takes the state directory `root`'s lock, writing this process's id in the file; fails,
/// naming the holder's, when another process holds it. The lock lasts as long as the
/// returned file is open (it is not inherited by HAProxy: files are opened close-on-exec).
pub(crate) fn lock(root: &Path) -> Result<fs::File, StateDirError> {
    let path = root.join(LOCK_FILE);
    let mut file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&path)
        .map_err(error(&path))?;
    if let Err(err) = flock(&file, FlockOperation::NonBlockingLockExclusive) {
        let mut holder = String::new();
        let _ = file.read_to_string(&mut holder);
        let holder = holder.trim();
        let holder = if holder.is_empty() {
            "another process".to_owned()
        } else {
            format!("process {holder}")
        };
        return Err(StateDirError {
            path,
            source: std::io::Error::new(
                std::io::ErrorKind::WouldBlock,
                format!(
                    "the state directory is in use by {holder} ({err}); one portcullis per state directory"
                ),
            ),
        });
    }
    file.set_len(0).map_err(error(&path))?;
    file.rewind().map_err(error(&path))?;
    writeln!(file, "{}", std::process::id()).map_err(error(&path))?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let first = lock(dir.path()).unwrap();
        let refused = lock(dir.path()).unwrap_err().to_string();
        assert!(
            refused.contains(&format!("in use by process {} (", std::process::id())),
            "{refused}"
        );
        drop(first);
        assert!(lock(dir.path()).is_ok());
    }
}
