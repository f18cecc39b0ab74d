//! The operator commands (`apiary member`, `apiary status`, `apiary snapshot save`): clients of
//! the operating API ([`apiary_api::admin`]) that reach the cluster as kubectl does, through a
//! kubeconfig's context, authenticating as its user.

pub mod client;
pub mod member;
pub mod snapshot;
pub mod status;

pub use client::Client;
pub use client::ConnectArgs;
pub use client::CtlError;
