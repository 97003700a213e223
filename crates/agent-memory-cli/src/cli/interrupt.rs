//! Ctrl-C and SIGTERM: a command that holds leases gives them back before it exits, so the
//! next run takes the work at once; a second signal exits at once.

use std::future::Future;

use agent_memory::write::store::WriteStore;

/// Which signal stopped the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signal {
    Interrupt,
    Terminate,
}

/// The command was stopped by a signal, after giving back what it held.
#[derive(Debug, thiserror::Error)]
#[error("stopped by {}: gave back {jobs} job(s){}; the next run takes them at once", signal_name(*.signal), if *.phase_two { " and the consolidation lease" } else { "" })]
pub(crate) struct Stopped {
    pub(crate) signal: Signal,
    pub(crate) jobs: usize,
    pub(crate) phase_two: bool,
}

impl Stopped {
    pub(crate) fn exit_code(&self) -> u8 {
        match self.signal {
            Signal::Interrupt => super::exit::INTERRUPTED,
            Signal::Terminate => super::exit::TERMINATED,
        }
    }
}

fn signal_name(signal: Signal) -> &'static str {
    match signal {
        Signal::Interrupt => "Ctrl-C",
        Signal::Terminate => "SIGTERM",
    }
}

/// Resolves at the next Ctrl-C or SIGTERM.
async fn next_signal() -> Signal {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => tokio::select! {
                _ = tokio::signal::ctrl_c() => Signal::Interrupt,
                _ = term.recv() => Signal::Terminate,
            },
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                Signal::Interrupt
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        Signal::Interrupt
    }
}

/// Runs `work` to its end, unless a signal comes first: then `work` is dropped (its model calls
/// abandoned), every lease this process holds on `store` is given back, and the result is the
/// [`Stopped`] error. A second signal while giving back exits at once.
pub(crate) async fn until_signal<T>(
    store: &dyn WriteStore,
    work: impl Future<Output = anyhow::Result<T>>,
) -> anyhow::Result<T> {
    let signal = tokio::select! {
        result = work => return result,
        signal = next_signal() => signal,
    };
    eprintln!(
        "{}: giving back held work (press Ctrl-C again to exit at once)",
        signal_name(signal)
    );
    let code = Stopped {
        signal,
        jobs: 0,
        phase_two: false,
    }
    .exit_code();
    let released = tokio::select! {
        released = store.release_leases_of_this_process() => released?,
        _ = next_signal() => std::process::exit(i32::from(code)),
    };
    Err(Stopped {
        signal,
        jobs: released.jobs,
        phase_two: released.phase_two,
    }
    .into())
}
