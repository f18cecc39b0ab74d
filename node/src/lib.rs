//! The `apiary` binary's library: one replica (`apiary serve`) or a local cluster of
//! replicas (`apiary dev`, [`dev::run_dev`]).
//!
//! # Layout
//! - [`cli`] is the command line (clap), [`config`] the validated replica configuration.
//! - [`tls`] holds PEM loading and the rustls configurations of the listeners and the peer client.
//! - [`shutdown`] turns SIGINT and SIGTERM into a future.
//! - [`dev`] holds the certificates, kubeconfig and child processes of `apiary dev`.

pub mod cli;
pub mod config;
pub mod dev;
pub mod error;
pub mod shutdown;
pub mod tls;
