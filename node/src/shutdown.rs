//! Process signals that end the binary: SIGINT (Ctrl-C) and SIGTERM (service managers, `apiary
//! dev` stopping its replicas) both mean "shut down gracefully".

use tokio::signal::unix::SignalKind;
use tokio::signal::unix::signal;

/// Installs the SIGINT and SIGTERM handlers now (so a failure shows at start-up) and returns a
/// future that resolves at the first of them. Must be called inside a tokio runtime.
pub fn terminate_signal() -> std::io::Result<impl Future<Output = ()>> {
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => tracing::info!("SIGINT received; shutting down"),
            _ = terminate.recv() => tracing::info!("SIGTERM received; shutting down"),
        }
    })
}
