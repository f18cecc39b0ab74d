//! Errors of the harness: starting clusters, talking to replicas, measuring.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

/// What went wrong in the harness.
///
/// [`HarnessError::is_retryable`] separates failures a caller may retry (a replica that is down or
/// slow to answer) from failures of the harness or its environment, which retrying cannot fix.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The `apiary` executable is not where the harness looked.
    #[error(
        "the apiary binary is not at {path}; build it with \
         `cargo build -p apiary-node --bin apiary` (add --release for the benchmark) \
         or point APIARY_BIN at it"
    )]
    BinaryMissing {
        /// Where the harness looked.
        path: PathBuf,
    },
    /// The Python of the venv with the `kubernetes` client is not where the harness looked.
    #[error(
        "no Python with the kubernetes client at {path}; `.ci/run` prepares it \
         (python3 -m venv + pip install kubernetes), or point APIARY_PYTHON at one"
    )]
    PythonMissing {
        /// Where the harness looked.
        path: PathBuf,
    },
    /// The JavaScript client is not installed under `tests/js/node_modules`, or the Node.js to
    /// run it is missing or too old.
    #[error(
        "cannot run the JavaScript client: {reason}; `scripts/setup` installs Node.js and          `npm ci` in tests/js, or point APIARY_NODE at a node of version 20 or later"
    )]
    JsClientMissing {
        /// What is missing.
        reason: String,
    },
    /// A child process could not be started.
    #[error("failed to start {program}")]
    Spawn {
        /// The program that did not start.
        program: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A file or directory operation failed.
    #[error("i/o on {path}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// No block of free loopback ports was found.
    #[error("no base port with {ports} free loopback ports after {attempts} attempts")]
    NoFreePorts {
        /// How many ports were needed.
        ports: usize,
        /// How many blocks were probed.
        attempts: u32,
    },
    /// The kubeconfig could not be read or lacks what the harness needs.
    #[error("kubeconfig {path}, context {context}: {reason}")]
    Kubeconfig {
        /// The kubeconfig file.
        path: PathBuf,
        /// The context that was asked for.
        context: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A header value a test asked the client to send is not a valid header value.
    #[error("header {name} cannot carry the given value")]
    BadHeader {
        /// The header.
        name: String,
    },
    /// A kubeconfig user's credential plugin failed or answered something unusable; never
    /// holds the credential.
    #[error("credential plugin {command}: {reason}")]
    ExecPlugin {
        /// The plugin's command.
        command: String,
        /// What went wrong.
        reason: String,
    },
    /// Test certificates could not be generated or loaded.
    #[error("test certificates: {reason}")]
    Certificates {
        /// What failed.
        reason: String,
    },
    /// A pid file is missing or does not hold a process id.
    #[error("pid file {path} does not hold a process id")]
    BadPidFile {
        /// The pid file.
        path: PathBuf,
    },
    /// `/proc/PID/status` lacks a memory field the harness reads.
    #[error("/proc/{pid}/status has no {field} line in kB")]
    ProcStatus {
        /// The process id.
        pid: u32,
        /// The field that was looked for (`VmHWM`).
        field: &'static str,
    },
    /// The harness refused to signal a process that does not belong to the cluster it started.
    #[error("process {pid} is not one of this cluster's replicas")]
    ForeignProcess {
        /// The process id read from the pid file.
        pid: u32,
    },
    /// A process did not exit in time after it was signalled.
    #[error("process {pid} still runs {waited:?} after {signal}")]
    StillRunning {
        /// The process id.
        pid: u32,
        /// The signal that was sent.
        signal: &'static str,
        /// How long the harness waited.
        waited: Duration,
    },
    /// Something did not become ready in time.
    #[error("{what} not ready after {waited:?}; last observation: {last}")]
    NotReady {
        /// What was waited for.
        what: String,
        /// How long the harness waited.
        waited: Duration,
        /// The last answer or error seen while waiting.
        last: String,
    },
    /// A replica index outside `1..=nodes`.
    #[error("there is no replica {index}; the cluster has {nodes}")]
    NoSuchReplica {
        /// The index asked for (1-based).
        index: usize,
        /// How many replicas the cluster has.
        nodes: usize,
    },
    /// A request could not be sent or its answer not received (connection refused or reset).
    #[error("{method} {uri} failed")]
    Request {
        /// The request method.
        method: http::Method,
        /// The request URI.
        uri: String,
        /// Why.
        #[source]
        source: hyper_util::client::legacy::Error,
    },
    /// A raw connection (below the HTTP client) could not be opened or written.
    #[error("raw connection to {server}")]
    Connection {
        /// The server's address.
        server: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A response body could not be read.
    #[error("reading the body of {method} {uri} failed")]
    Body {
        /// The request method.
        method: http::Method,
        /// The request URI.
        uri: String,
        /// Why.
        #[source]
        source: hyper::Error,
    },
    /// A request got no complete answer in time.
    #[error("{method} {uri} got no answer within {after:?}")]
    Timeout {
        /// The request method.
        method: http::Method,
        /// The request URI.
        uri: String,
        /// The deadline that passed.
        after: Duration,
    },
    /// A request could not be built (a bad path or header).
    #[error("invalid request {uri}")]
    BadRequest {
        /// The request URI.
        uri: String,
        /// Why.
        #[source]
        source: http::Error,
    },
    /// A response that should be JSON is not.
    #[error("the body of {uri} (status {status}) is not JSON")]
    NotJson {
        /// The request URI.
        uri: String,
        /// The response status.
        status: http::StatusCode,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// A response had a status the caller did not expect.
    #[error("{what}: unexpected status {status}: {body}")]
    UnexpectedStatus {
        /// What the request was for.
        what: String,
        /// The status received.
        status: http::StatusCode,
        /// The response body, as text.
        body: String,
    },
}

impl HarnessError {
    /// Whether retrying the same request later may succeed: the replica was unreachable, slow, or
    /// answered with a server-side status (5xx) that a leader change explains.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Request { .. }
            | Self::Connection { .. }
            | Self::Body { .. }
            | Self::Timeout { .. } => true,
            Self::UnexpectedStatus { status, .. } => status.is_server_error(),
            _ => false,
        }
    }
}

/// The harness's result type.
pub type Result<T> = std::result::Result<T, HarnessError>;
