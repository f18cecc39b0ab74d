//! What a request asks for, before any handler runs: the path parsed into a
//! [`RequestInfo`] (verb, group, version, resource, subresource, namespace, name), the query
//! parameters, list and watch options, and the read consistency a `resourceVersion` asks for.

// Request input is parsed here: every step of arithmetic on it is checked or saturating
// (tests are exempt).
#![cfg_attr(
    not(test),
    warn(
        clippy::arithmetic_side_effects,
        clippy::cast_possible_truncation,
        clippy::cast_possible_wrap,
        clippy::cast_sign_loss
    )
)]

mod continue_token;
mod field_selector;
mod info;
mod list_options;
mod query;
mod read_consistency;
mod selector;

pub use continue_token::ContinueToken;
pub use field_selector::FieldLabels;
pub use field_selector::FieldSelector;
pub use field_selector::METADATA_NAME;
pub use field_selector::METADATA_NAMESPACE;
pub use field_selector::SelectableField;
pub use info::RequestInfo;
pub use info::Verb;
pub use list_options::ListOptions;
pub use list_options::ResourceVersionMatch;
pub use query::QueryParams;
pub(crate) use query::parse_bool;
pub use read_consistency::ListRead;
pub use read_consistency::get_consistency;
pub use selector::Selectors;
