//! The built-in kinds: the table of every group/version/resource ([`rows`]), the row builder
//! over k8s-openapi's constants, the generic strategy, and the strategies of the kinds with
//! rules of their own. Types and schemas come from `k8s-openapi`; the rules are Kubernetes'.

mod config_map;
mod data_keys;
mod event;
mod generic;
mod namespace;
mod row;
mod secret;
mod service;
mod service_account;
mod table;
#[cfg(test)]
mod table_tests;

pub use config_map::ConfigMapStrategy;
pub use event::EventStrategy;
pub use generic::GenericStrategy;
pub use namespace::NamespaceStrategy;
pub use row::GroupName;
pub use row::Row;
pub use row::ScopeOf;
pub use row::Stage;
pub use row::StorageHome;
pub use row::StrategyFn;
pub use row::TypedDecode;
pub use row::Verbs;
pub use row::kind;
pub use row::virtual_kind;
pub use secret::SecretStrategy;
pub use service::ServiceStrategy;
pub use service_account::ServiceAccountStrategy;
pub use table::rows;

use super::ResourceType;
use crate::flavor::Flavor;

/// `v1` Namespace (core: the same in both flavors).
pub fn namespace_type() -> ResourceType {
    table::namespace_row().resource_type(Flavor::Platform)
}
