//! Where HAProxy's UNIX sockets live: a directory whose paths fit in a socket address.
//!
//! A socket path must fit in `sun_path` (108 bytes), and HAProxy 2.6 refuses any over 97
//! ("socket path ... too long (max 97)"), since it binds `<path>.<pid>.tmp` first. The
//! sockets stay in the state directory's `run/` when that fits; a longer state directory
//! gets a short private one, `$TMPDIR/portcullis-<xxh3-64 of the state directory>/run/`.
//!
//! HAProxy runs with the parent of that `run/` as its working directory: the rendered
//! `stats socket unix@run/admin.sock` is bound relative to the working directory
//! (`default-path config` covers files, not socket addresses), so the rendered files
//! never name the directory and work whichever place is chosen. HAProxy 2.6 also reads
//! servers' client certificates (`crt backend-tls/...`) from its working directory after
//! parsing, so a private socket directory links `backend-tls` to the state directory's.

use std::ffi::OsString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use render::layout::{ADMIN_SOCKET, BACKEND_TLS_DIR, MASTER_SOCKET, RUN_DIR};
use xxhash_rust::xxh3::xxh3_64;

use crate::state_dir::{StateDirError, error};
use crate::sweep::ensure_dir;

/// The longest socket path HAProxy 2.6 binds, in bytes.
pub const MAX_SOCKET_PATH: usize = 97;

/// The place of HAProxy's sockets, chosen for one state directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sockets {
    working_dir: PathBuf,
}

impl Sockets {
    /// HAProxy's working directory: the sockets are in its `run/`.
    pub fn working_dir(&self) -> &Path {
        &self.working_dir
    }

    /// The directory holding the sockets.
    pub fn run_dir(&self) -> PathBuf {
        self.working_dir.join(RUN_DIR)
    }

    /// The master CLI's socket.
    pub fn master(&self) -> PathBuf {
        self.run_dir().join(MASTER_SOCKET)
    }

    /// The runtime API's socket.
    pub fn admin(&self) -> PathBuf {
        self.run_dir().join(ADMIN_SOCKET)
    }

    /// The `-S` argument: the master socket, readable and writable by its owner only.
    pub(crate) fn master_argument(&self) -> OsString {
        let mut argument = self.master().into_os_string();
        argument.push(",mode,600");
        argument
    }

    /// Whether HAProxy can bind both sockets: short enough, and no comma, which would end
    /// the path in `-S <path>,mode,600`.
    fn usable(&self) -> bool {
        let longest = self
            .master()
            .as_os_str()
            .len()
            .max(self.admin().as_os_str().len());
        longest <= MAX_SOCKET_PATH && !self.working_dir.as_os_str().as_bytes().contains(&b',')
    }

    /// Chooses the sockets' place for the (absolute) state directory `root` and creates
    /// its `run/` (mode 0700 when new). Fails, naming the limit and the paths, when
    /// neither place fits.
    pub(crate) fn prepare(root: &Path) -> Result<Self, StateDirError> {
        Self::prepare_with_temp_dir(root, &std::env::temp_dir())
    }

    /// Makes this place exist for the state directory `root`: at start-up, and again at
    /// each HAProxy start, since a cleaner of the temporary directory may have removed a
    /// private one, its `run/` and its link meanwhile.
    pub(crate) fn restore(&self, root: &Path) -> Result<(), StateDirError> {
        if self.working_dir != root {
            create_private_dir(&self.working_dir)?;
            link_backend_tls(&self.working_dir, root)?;
        }
        ensure_dir(&self.run_dir(), 0o700)
    }

    fn prepare_with_temp_dir(root: &Path, temp_dir: &Path) -> Result<Self, StateDirError> {
        let in_place = Self {
            working_dir: root.to_path_buf(),
        };
        if in_place.usable() {
            in_place.restore(root)?;
            return Ok(in_place);
        }
        let short = Self {
            working_dir: temp_dir.join(format!(
                "portcullis-{:016x}",
                xxh3_64(root.as_os_str().as_bytes())
            )),
        };
        if !short.usable() {
            return Err(StateDirError {
                path: root.to_path_buf(),
                source: std::io::Error::other(format!(
                    "HAProxy's sockets need a path of at most {MAX_SOCKET_PATH} bytes without a \
                     comma, and neither {} nor {} is one; use a shorter state directory or TMPDIR",
                    in_place.master().display(),
                    short.master().display()
                )),
            });
        }
        short.restore(root)?;
        Ok(short)
    }
}

/// Makes `working_dir/backend-tls` a symlink to the state directory's, replacing whatever
/// is there (the private directory is ours alone, and a moved state directory leaves a
/// link to its old place).
fn link_backend_tls(working_dir: &Path, root: &Path) -> Result<(), StateDirError> {
    let link = working_dir.join(BACKEND_TLS_DIR);
    let target = root.join(BACKEND_TLS_DIR);
    if fs::read_link(&link).is_ok_and(|current| current == target) {
        return Ok(());
    }
    match fs::symlink_metadata(&link) {
        Ok(metadata) if metadata.is_dir() => fs::remove_dir_all(&link).map_err(error(&link))?,
        Ok(_) => fs::remove_file(&link).map_err(error(&link))?,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => return Err(error(&link)(err)),
    }
    std::os::unix::fs::symlink(&target, &link).map_err(error(&link))
}

/// Creates `dir` with mode 0700, or accepts it if it exists as a directory (not a
/// symlink) of ours that no one else may enter: in a shared temporary directory another
/// user could have created it first.
fn create_private_dir(dir: &Path) -> Result<(), StateDirError> {
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => return Ok(()),
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(err) => return Err(error(dir)(err)),
    }
    let metadata = fs::symlink_metadata(dir).map_err(error(dir))?;
    let ours = metadata.uid() == rustix::process::geteuid().as_raw();
    let private = metadata.permissions().mode() & 0o077 == 0;
    if metadata.is_dir() && ours && private {
        return Ok(());
    }
    Err(error(dir)(std::io::Error::new(
        std::io::ErrorKind::PermissionDenied,
        "exists but is not a private directory of this user (mode 0700); remove it",
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_state_directory_keeps_its_sockets() {
        let sockets = Sockets {
            working_dir: PathBuf::from("/var/lib/portcullis"),
        };
        assert!(sockets.usable());
        assert_eq!(
            sockets.master_argument(),
            "/var/lib/portcullis/run/master.sock,mode,600"
        );
        let comma = Sockets {
            working_dir: PathBuf::from("/var/lib/a,b"),
        };
        assert!(!comma.usable(), "the comma would end the -S path");
        let long = Sockets {
            working_dir: PathBuf::from(format!("/{}", "d".repeat(MAX_SOCKET_PATH))),
        };
        assert!(!long.usable());
    }

    #[test]
    fn no_place_short_enough_is_an_error_naming_the_limit_and_both_paths() {
        let long = PathBuf::from(format!("/{}", "d".repeat(100)));
        let err = Sockets::prepare_with_temp_dir(&long, &long).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("at most 97 bytes"), "{text}");
        assert!(
            text.contains(&format!("{}/run/master.sock", long.display())),
            "{text}"
        );
        assert!(
            text.contains(&format!("{}/portcullis-", long.display())),
            "{text}"
        );
        assert!(!long.exists(), "nothing was created");
    }
}
