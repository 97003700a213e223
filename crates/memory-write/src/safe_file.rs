//! Opening files the file system may have swapped under us.
//!
//! A path that held a rollout at scan time can hold a FIFO, a device or a folder by the time it
//! is opened. Opening a FIFO for reading blocks until a writer appears, which may be never, so
//! every file the write path reads is opened non-blocking and its type is checked on the open
//! handle (not on the path, which can change between a check and the open). Only regular files
//! are read; anything else is an [`std::io::ErrorKind::InvalidInput`] error naming what it is.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Opens `path` for reading, only if it is a regular file (a link to one is followed).
pub fn open_regular_file(path: &Path) -> io::Result<File> {
    crate::fault::check(crate::fault::FaultPoint::Open, path)?;
    let mut options = File::options();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Non-blocking, so opening a FIFO returns at once; reads of a regular file ignore it.
        let flags = rustix::fs::OFlags::NONBLOCK.bits();
        options.custom_flags(i32::try_from(flags).unwrap_or(0));
    }
    let file = options.open(path)?;
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        Ok(file)
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a regular file ({})", describe(kind)),
        ))
    }
}

/// Reads a whole regular file; `None` when it does not exist.
pub fn read_regular_file(path: &Path) -> io::Result<Option<Vec<u8>>> {
    let mut file = match open_regular_file(path) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error),
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}

/// What a file type is, for messages.
pub fn describe(kind: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_block_device() || kind.is_char_device() {
            return "a device";
        }
    }
    if kind.is_dir() {
        "a folder"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_file() {
        "a regular file"
    } else {
        "not a file"
    }
}
