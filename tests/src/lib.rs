//! Harness for black-box tests of real multi-process Apiary clusters, and the benchmark.
//!
//! # Layout
//!
//! - [`binary`] finds the `apiary` executable the tests start (`APIARY_BIN`, or the one cargo built
//!   beside the test executable).
//! - [`dev_cluster`] runs `apiary dev` in a temporary directory on free loopback ports, waits for
//!   every replica's `/readyz`, kills single replicas with SIGKILL, restarts the whole cluster on
//!   the same directory and stops it with SIGINT when dropped.
//! - [`kubeconfig`] turns one context of the kubeconfig `apiary dev` writes into a server address
//!   and a rustls client configuration (cluster CA, admin client certificate).
//! - [`http_client`] is a small HTTPS (or plain HTTP) client over hyper, dialing through the
//!   replicas' own [`apiary_raft::network::Connector`], sending a kubeconfig user's credentials
//!   ([`exec_credential`] runs credential plugins).
//! - [`raw_connection`] opens TCP and TLS connections to a replica below any HTTP client, for
//!   the connection tests of the hostile-input suite (slow clients, odd transfer encodings).
//! - [`oidc_issuer`] is a local OpenID Connect issuer (discovery, keys, ID tokens).
//! - [`memory`] reads a process's peak resident set (`VmHWM`) from `/proc`.
//! - [`etcd_cluster`] runs a 3-member etcd cluster on loopback, the benchmark's baseline;
//!   [`etcd_native`] connects etcd's native gRPC clients to it.
//! - [`loopback_pki`] makes the CA and certificate the etcd baseline uses for TLS.
//! - [`load`] drives a fixed number of requests at a fixed concurrency and measures them.
//! - [`machine`] describes the machine a benchmark ran on.
//! - [`objects`] builds the JSON bodies the tests and the benchmark send.
//! - [`watch_stream`] reads a watch's JSON events one at a time, each within a deadline.
//! - [`python`] runs the scripts under `tests/python/` with the `kubernetes` client's venv.
//! - [`js`] runs the scripts under `tests/js/` with Node.js and `@kubernetes/client-node`.
//! - [`review_webhook`] is a review webhook server (TLS, records every review it answers);
//!   [`token_webhook`] makes it a TokenReview server (answers per token), [`authz_webhook`] a
//!   SubjectAccessReview server (answers per user), [`conversion_webhook`] a CRD conversion
//!   webhook (Widgets between two versions, without loss), [`admission_webhook`] admission
//!   webhooks (a labelling mutating one, a denying validating one, a silent server).
//! - [`retry`] retries a request, bounded in time, across a replica crash or leader election.
//!
//! Everything the harness starts listens on loopback only, and every wait is bounded in time.

pub mod admission_webhook;
pub mod authz_webhook;
pub mod binary;
pub mod conversion_webhook;
pub mod dev_cluster;
pub mod error;
pub mod etcd_cluster;
pub mod etcd_native;
pub mod exec_credential;
pub mod http_client;
pub mod js;
pub mod kubeconfig;
pub mod load;
pub mod loopback_pki;
pub mod machine;
pub mod memory;
pub mod objects;
pub mod oidc_issuer;
pub mod ports;
pub mod process;
pub mod python;
pub mod raw_connection;
pub mod retry;
pub mod review_webhook;
pub mod token_webhook;
pub mod watch_stream;

pub use dev_cluster::DevCluster;
pub use dev_cluster::DevOptions;
pub use dev_cluster::Flavor;
pub use error::HarnessError;
pub use http_client::HttpClient;
pub use http_client::Reply;
