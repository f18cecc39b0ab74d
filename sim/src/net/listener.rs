//! [`SimListener`]: a turmoil TCP listener that `axum::serve` can accept connections from, so the
//! real routers (peer RPC, client API) run unchanged on simulated sockets.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use turmoil::net::TcpListener;
use turmoil::net::TcpStream;

/// A bound turmoil TCP listener, served with `axum::serve(SimListener, router)`.
pub struct SimListener(TcpListener);

impl std::fmt::Debug for SimListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SimListener")
            .field(&self.0.local_addr().ok())
            .finish()
    }
}

impl SimListener {
    /// Binds `0.0.0.0:port` on the current simulated host.
    ///
    /// Must be called from host software inside a running simulation.
    pub async fn bind(port: u16) -> io::Result<Self> {
        TcpListener::bind(("0.0.0.0", port)).await.map(Self)
    }
}

impl axum::serve::Listener for SimListener {
    type Io = TcpStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.0.accept().await {
                Ok(accepted) => return accepted,
                Err(error) => {
                    // A failed handshake only concerns that one connection; back off a little
                    // (virtual time) so a persistent failure does not spin the host.
                    tracing::debug!(%error, "sim accept failed");
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.0.local_addr()
    }
}
