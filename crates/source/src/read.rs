//! Reading one manifest file: regular files only, never blocking, never more than a cap.

use std::fs::{File, Metadata};
use std::io::Read as _;
use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
use std::path::Path;

use rustix::fs::{Mode, OFlags};

/// What identifies a file's version without reading it: device, inode, size, modification
/// and change times. A file whose stamp is unchanged is not read again; a change of
/// permissions changes it too, so an unreadable file is noticed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    device: u64,
    inode: u64,
    /// Size in bytes.
    pub len: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl Stamp {
    /// The stamp of a file's metadata (of its target, for a symbolic link followed).
    pub(crate) fn of(metadata: &Metadata) -> Self {
        Self {
            device: metadata.dev(),
            inode: metadata.ino(),
            len: metadata.len(),
            modified: (metadata.mtime(), metadata.mtime_nsec()),
            changed: (metadata.ctime(), metadata.ctime_nsec()),
        }
    }
}

/// Why a file's content could not be had.
#[derive(Debug)]
pub(crate) enum ReadFailure {
    /// It was deleted since it was listed.
    Gone,
    /// It is not a regular file (a FIFO, socket, device or directory): reading it could
    /// block or never end.
    NotRegular(&'static str),
    /// It holds more than the cap.
    TooLarge {
        /// The cap, in bytes.
        max_bytes: u64,
    },
    /// Opening or reading it failed.
    Io(std::io::Error),
}

impl std::fmt::Display for ReadFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadFailure::Gone => f.write_str("deleted while being read"),
            ReadFailure::NotRegular(what) => {
                write!(f, "not a regular file ({what}); not read")
            }
            ReadFailure::TooLarge { max_bytes } => write!(
                f,
                "larger than {max_bytes} bytes (--max-manifest-bytes); not read"
            ),
            ReadFailure::Io(err) => write!(f, "cannot be read: {err}"),
        }
    }
}

/// What a file that is not a regular one is, for reports.
pub(crate) fn describe_non_regular(file_type: std::fs::FileType) -> &'static str {
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else {
        "not a file"
    }
}

/// Reads a regular file of at most `max_bytes`, with the stamp of the version read.
///
/// The file is opened without blocking (a FIFO put in its place after it was listed
/// would otherwise wait for a writer) and checked to be a regular file on the open
/// descriptor, so it cannot be swapped between the check and the read. At most
/// `max_bytes + 1` bytes are read, so a file that grows meanwhile costs no more.
pub(crate) fn read_regular_file(
    path: &Path,
    max_bytes: u64,
) -> Result<(Vec<u8>, Stamp), ReadFailure> {
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let file = match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(descriptor) => File::from(descriptor),
        Err(rustix::io::Errno::NOENT) => return Err(ReadFailure::Gone),
        Err(errno) => return Err(ReadFailure::Io(errno.into())),
    };
    let metadata = file.metadata().map_err(ReadFailure::Io)?;
    if !metadata.is_file() {
        return Err(ReadFailure::NotRegular(describe_non_regular(
            metadata.file_type(),
        )));
    }
    if metadata.len() > max_bytes {
        return Err(ReadFailure::TooLarge { max_bytes });
    }
    let limit = max_bytes.saturating_add(1);
    let expected = usize::try_from(metadata.len().min(limit)).unwrap_or(0);
    let mut bytes = Vec::with_capacity(expected);
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(ReadFailure::Io)?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > max_bytes {
        return Err(ReadFailure::TooLarge { max_bytes });
    }
    Ok((bytes, Stamp::of(&metadata)))
}
