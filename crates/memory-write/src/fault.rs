//! Injected faults for the reliability tests (feature `fault-injection`): an I/O error at a
//! chosen point for every path under a chosen folder. Tests run in parallel in one process, so
//! faults are keyed by folder (each test has its own temporary folder) and removed when their
//! guard drops. Without the feature every check is a no-op the compiler removes.

use std::io;
use std::path::Path;

/// Where a fault can be injected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultPoint {
    /// Opening a file for reading (rollouts, memory-root files).
    Open,
    /// Listing a folder during a scan.
    ReadDir,
    /// Writing a memory-root file (the temporary file before its rename).
    Write,
}

#[cfg(feature = "fault-injection")]
mod registry {
    use std::io;
    use std::path::{Path, PathBuf};
    use std::sync::{Mutex, PoisonError};

    use super::FaultPoint;

    type Entry = (u64, PathBuf, FaultPoint, io::ErrorKind);
    static FAULTS: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
    static NEXT: Mutex<u64> = Mutex::new(0);

    /// Removes its fault when dropped.
    #[derive(Debug)]
    pub struct FaultGuard(u64);

    impl Drop for FaultGuard {
        fn drop(&mut self) {
            FAULTS
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .retain(|(id, ..)| *id != self.0);
        }
    }

    /// Makes `point` fail with `kind` for every path under `folder` until the guard drops.
    pub fn inject(folder: &Path, point: FaultPoint, kind: io::ErrorKind) -> FaultGuard {
        let mut next = NEXT.lock().unwrap_or_else(PoisonError::into_inner);
        *next += 1;
        FAULTS.lock().unwrap_or_else(PoisonError::into_inner).push((
            *next,
            folder.to_path_buf(),
            point,
            kind,
        ));
        FaultGuard(*next)
    }

    pub(crate) fn check(point: FaultPoint, path: &Path) -> io::Result<()> {
        let faults = FAULTS.lock().unwrap_or_else(PoisonError::into_inner);
        match faults
            .iter()
            .find(|(_, folder, at, _)| *at == point && path.starts_with(folder))
        {
            Some((.., kind)) => Err(io::Error::new(*kind, format!("injected fault: {kind}"))),
            None => Ok(()),
        }
    }
}

#[cfg(feature = "fault-injection")]
pub use registry::{FaultGuard, inject};

/// Fails when a test injected a fault at `point` for `path`.
#[cfg(feature = "fault-injection")]
pub(crate) fn check(point: FaultPoint, path: &Path) -> io::Result<()> {
    registry::check(point, path)
}

/// Fails when a test injected a fault at `point` for `path` (never, without the feature).
#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
pub(crate) fn check(_point: FaultPoint, _path: &Path) -> io::Result<()> {
    Ok(())
}
