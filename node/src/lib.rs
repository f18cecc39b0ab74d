//! The `apiary` binary's library: one replica (`apiary serve`, [`run`]) or a local cluster of
//! replicas (`apiary dev`, [`dev::run_dev`]).
//!
//! # Layout
//! - [`wiring`] wires one replica and its API from injected parts ([`wiring::run_host`]): the
//!   one wiring of `apiary serve` and of every simulated host (`sim/`).
//! - [`server`] is `apiary serve`: [`run`] injects TLS sockets, the disk, the wall clock and
//!   OS randomness, and takes the sockets and shutdown trigger it is given.
//!   [`raft_runtime`] is the runtime raft and the peer network run on, apart from the API.
//! - [`cli`] is the command line (clap), [`config`] the validated replica configuration,
//!   [`duration`] the parser of its duration flags.
//! - [`authn`] builds the authentication methods of the node's flags (token file, webhook);
//!   [`answer_cache`] is the answer cache of both webhooks.
//! - [`authz`] builds the authorization modes of the flags or the configuration file;
//!   [`config_reload`] re-reads both configuration files while the replica runs.
//! - [`audit`] holds the audit flags, what they start (log, webhook client) and their passing
//!   on by `apiary dev`.
//! - [`compactor`] is the leader's history compaction (`--watch-history`); [`controllers`]
//!   the leader-only controllers and their runner (`--controllers`).
//! - [`webhook_transport`] carries the API's webhook calls (admission, CRD conversion) over
//!   HTTPS, on kept-alive connections of [`tls_client`].
//! - [`tls`] holds PEM loading and the rustls configurations of the listeners and the peer
//!   client; [`https`] the TLS accept loop that serves a router within the connection budgets
//!   of [`https::HttpLimits`].
//! - [`backend`] implements the API's storage over the replica, through [`replicated`];
//!   [`testing`] holds a one-replica store without raft on which tests run that adapter (the
//!   router tests in `tests/router` run the whole HTTP API over it).
//! - [`readiness`] and [`bootstrap`] are the replica's `/readyz` and start-up objects;
//!   [`cluster_gates`] the cluster's feature gate record, [`cluster_version`] the replicas'
//!   version records and the cluster's effective version.
//! - [`metrics`] puts the store's metrics (etcd's names) on the API's `/metrics`,
//!   [`object_counts`] the stored object count of every resource.
//! - [`shutdown`] turns SIGINT and SIGTERM into a future, [`drain`] is the API's graceful
//!   shutdown (delay, 429 while draining); [`logging`] is the binary's log output.
//! - [`periodic_snapshots`] writes backups of the replica every `--snapshot-interval`.
//! - [`dev`] holds the certificates, kubeconfig and child processes of `apiary dev`.
//! - [`certs`] is `apiary certs` (the certificate files and admin kubeconfig both commands
//!   write, and the per-host environment files of `deploy/systemd`).

pub mod admin;
pub mod answer_cache;
pub mod audit;
pub mod authn;
pub mod authz;
pub mod backend;
pub mod bootstrap;
pub mod certs;
pub mod cli;
pub mod cluster_gates;
pub mod cluster_version;
pub mod compactor;
pub mod config;
pub mod config_reload;
pub mod controllers;
pub mod ctl;
pub mod dev;
pub mod drain;
pub mod duration;
pub mod error;
pub mod https;
pub mod kubeconfig;
pub mod logging;
pub mod metrics;
pub mod object_counts;
pub mod periodic_snapshots;
pub mod raft_runtime;
pub mod readiness;
pub mod replicated;
pub mod server;
pub mod service_account_key;
pub mod shutdown;
pub mod testing;
pub mod tls;
pub mod tls_client;
pub mod webhook_transport;
pub mod wiring;

pub use error::NodeError;
pub use error::error_chain;
pub use server::Listeners;
pub use server::dev_main;
pub use server::run;
pub use server::serve;
