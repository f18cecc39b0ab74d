//! The raft runtime: consensus on threads of its own, apart from the HTTP API.
//!
//! Raft (openraft's core, its replication and heartbeat tasks, the state machine's apply and
//! snapshots, the log's blocking file work), the peer listener and every peer call run on a tokio
//! runtime of their own, [`RAFT_WORKER_THREADS`] OS threads named [`THREAD_NAME`]; the HTTP API
//! runs on the binary's main runtime. tokio cannot preempt a task, so on one shared runtime a
//! request that burns CPU (decoding a large body, encoding a large list) held back every
//! heartbeat queued behind it, and a leader whose API was busy lost its leadership. With two
//! runtimes the operating system shares the cores between their threads: request work slows
//! other requests, and raft's threads still run within milliseconds.
//!
//! A separate runtime rather than a bounded pool for heavy request work: a pool protects raft
//! only from the request steps someone moved into it (and one forgotten step starves raft again),
//! a runtime from all of them, known or not, for the price of two mostly idle threads.
//!
//! tokio places work by the runtime that is current, hence the wiring rules:
//! - openraft spawns its tasks, and the log opens its files, on the runtime current at
//!   the replica's start (`wiring::run_host`): [`RaftRuntime::run`] runs it there.
//! - hyper's pooled connections live on the runtime of the request that opened them, and a socket
//!   is served by the I/O driver of the runtime that created it: [`RaftTransport`] makes every
//!   peer call on the raft runtime, the API's own (forwarded writes, read indexes) included. A
//!   call made there already (openraft's replication, votes, heartbeats) runs where it is:
//!   moving it to a task of its own would only add a hand-off, often to the other thread, to
//!   every append it sends.
//! - a listener belongs to the runtime it was bound on: [`RaftRuntime::adopt`] moves the peer
//!   listener over.
//! - a runtime must not be dropped on an async thread: [`RaftRuntime::shutdown`] stops it on a
//!   blocking thread, and dropping one not shut down stops it in the background.
//!
//! The simulation does not use this module: it runs each replica on turmoil's one thread.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use apiary_raft::network::Transport;
use apiary_raft::network::TransportError;
use bytes::Bytes;
use tokio::net::TcpListener;
use tokio::runtime::Handle;
use tokio::runtime::Runtime;
use tokio::task::AbortHandle;
use tokio::task::JoinError;

/// Worker threads of the raft runtime: one keeps heartbeats going while the other applies a
/// large entry or answers a peer.
pub const RAFT_WORKER_THREADS: usize = 2;

/// The name of the raft runtime's threads (`top -H`, `ps -T`, debuggers).
pub const THREAD_NAME: &str = "apiary-raft";

/// How long [`RaftRuntime::shutdown`] waits for blocking work still in flight (a log or
/// snapshot file being written) before it leaves it behind. Raft has stopped by then, so this
/// is a bound on a stuck disk, not on normal work.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// The raft runtime of one replica. Several may run in one process (in-process tests).
#[derive(Debug)]
pub struct RaftRuntime {
    /// `None` once shut down.
    runtime: Option<Runtime>,
    handle: Handle,
}

impl RaftRuntime {
    /// Starts the runtime's threads.
    pub fn start() -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(RAFT_WORKER_THREADS)
            .thread_name(THREAD_NAME)
            .enable_all()
            .build()?;
        let handle = runtime.handle().clone();
        Ok(Self {
            runtime: Some(runtime),
            handle,
        })
    }

    /// Runs `future` on the raft runtime, where the tasks it spawns stay, and waits for its
    /// output. Fails only if the future panicked.
    pub async fn run<F>(&self, future: F) -> Result<F::Output, JoinError>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(future).await
    }

    /// Spawns `future` on the raft runtime.
    pub fn spawn<F>(&self, future: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(future)
    }

    /// Moves `listener`, bound on another runtime, to the raft runtime: its connections are
    /// then accepted and served by the raft runtime's threads.
    pub fn adopt(&self, listener: TcpListener) -> std::io::Result<TcpListener> {
        let listener = listener.into_std()?;
        let _entered = self.handle.enter();
        TcpListener::from_std(listener)
    }

    /// `transport`, making its calls on the raft runtime.
    pub fn transport(&self, transport: Arc<dyn Transport>) -> RaftTransport {
        RaftTransport {
            inner: transport,
            runtime: self.handle.clone(),
        }
    }

    /// Stops the runtime once raft has stopped: drops what is left on it (idle peer
    /// connections) and waits up to [`SHUTDOWN_TIMEOUT`] for blocking work in flight.
    pub async fn shutdown(mut self) {
        let Some(runtime) = self.runtime.take() else {
            return;
        };
        let stopped =
            tokio::task::spawn_blocking(move || runtime.shutdown_timeout(SHUTDOWN_TIMEOUT)).await;
        if let Err(error) = stopped {
            tracing::warn!(%error, "the raft runtime did not stop cleanly");
        }
    }
}

impl Drop for RaftRuntime {
    /// A runtime dropped without [`RaftRuntime::shutdown`] (a start-up that failed half-way)
    /// stops in the background: dropping it here could block an async thread.
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// A [`Transport`] whose calls run on the raft runtime, whichever runtime makes them.
pub struct RaftTransport {
    inner: Arc<dyn Transport>,
    runtime: Handle,
}

impl std::fmt::Debug for RaftTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RaftTransport").finish_non_exhaustive()
    }
}

/// Aborts a task when its caller stops waiting for it.
struct AbortOnDrop(AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[async_trait::async_trait]
impl Transport for RaftTransport {
    async fn call(
        &self,
        target: &str,
        rpc: &str,
        body: Bytes,
        deadline: Duration,
    ) -> Result<Bytes, TransportError> {
        // tokio's runtime ids tell this runtime from any other, another replica's included.
        if Handle::try_current().is_ok_and(|current| current.id() == self.runtime.id()) {
            return self.inner.call(target, rpc, body, deadline).await;
        }
        let inner = self.inner.clone();
        let (call_target, call_rpc) = (target.to_owned(), rpc.to_owned());
        let task = self
            .runtime
            .spawn(async move { inner.call(&call_target, &call_rpc, body, deadline).await });
        // openraft gives up on a call by dropping it; the call on the raft runtime stops too.
        let _abort = AbortOnDrop(task.abort_handle());
        task.await.unwrap_or_else(|error| {
            Err(TransportError::Broken {
                target: target.to_owned(),
                rpc: rpc.to_owned(),
                source: Box::new(error),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers with where the call ran: the thread's name and the task's id, `name task`.
    struct Whereabouts;

    #[async_trait::async_trait]
    impl Transport for Whereabouts {
        async fn call(
            &self,
            _target: &str,
            _rpc: &str,
            _body: Bytes,
            _deadline: Duration,
        ) -> Result<Bytes, TransportError> {
            let name = std::thread::current().name().unwrap_or_default().to_owned();
            Ok(Bytes::from(format!("{name} {}", tokio::task::id())))
        }
    }

    /// The task id in a [`Whereabouts`] answer.
    fn task_of(answer: &[u8]) -> String {
        let answer = String::from_utf8_lossy(answer);
        answer.rsplit(' ').next().unwrap_or_default().to_owned()
    }

    #[tokio::test]
    async fn work_and_peer_calls_run_on_the_raft_threads() {
        let raft = RaftRuntime::start().unwrap();
        let ran_on = raft
            .run(async { std::thread::current().name().map(str::to_owned) })
            .await
            .unwrap();
        assert_eq!(ran_on.as_deref(), Some(THREAD_NAME));

        let transport = raft.transport(Arc::new(Whereabouts));
        let answer = transport
            .call("http://peer", "vote", Bytes::new(), Duration::from_secs(1))
            .await
            .unwrap();
        assert!(answer.starts_with(format!("{THREAD_NAME} ").as_bytes()));
        raft.shutdown().await;
    }

    // openraft's own calls, made on the raft runtime, run in the task that makes them; a call
    // from another runtime, or from another replica's raft runtime, moves to a task of this one.
    #[tokio::test]
    async fn calls_made_on_the_raft_runtime_run_where_they_are_made() {
        let raft = RaftRuntime::start().unwrap();
        let other = RaftRuntime::start().unwrap();
        let transport = Arc::new(raft.transport(Arc::new(Whereabouts)));
        let call = |transport: Arc<RaftTransport>| async move {
            let answer = transport
                .call(
                    "http://peer",
                    "append",
                    Bytes::new(),
                    Duration::from_secs(1),
                )
                .await
                .unwrap();
            (tokio::task::id().to_string(), task_of(&answer))
        };
        let (caller, ran_in) = raft.run(call(transport.clone())).await.unwrap();
        assert_eq!(caller, ran_in);
        let (caller, ran_in) = other.run(call(transport.clone())).await.unwrap();
        assert_ne!(caller, ran_in);
        let (caller, ran_in) = tokio::spawn(call(transport)).await.unwrap();
        assert_ne!(caller, ran_in);
        raft.shutdown().await;
        other.shutdown().await;
    }

    #[tokio::test]
    async fn an_adopted_listener_is_served_by_the_raft_runtime() {
        let raft = RaftRuntime::start().unwrap();
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let listener = raft.adopt(listener).unwrap();
        let accepted = raft.spawn(async move {
            listener
                .accept()
                .await
                .map(|_| std::thread::current().name().map(str::to_owned))
        });
        let _client = tokio::net::TcpStream::connect(addr).await.unwrap();
        let ran_on = accepted.await.unwrap().unwrap();
        assert_eq!(ran_on.as_deref(), Some(THREAD_NAME));
        raft.shutdown().await;
    }

    #[tokio::test]
    async fn dropping_a_runtime_on_an_async_thread_does_not_block_or_panic() {
        let raft = RaftRuntime::start().unwrap();
        raft.spawn(std::future::pending::<()>());
        drop(raft);
    }
}
