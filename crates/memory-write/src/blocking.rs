//! Running file, SQLite and CPU-bound work from async code.

use crate::error::Result;

/// Runs `work` on tokio's blocking pool, so it never stalls a runtime worker; a task that
/// panicked or was cancelled becomes [`crate::Error::Task`].
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work).await?
}
