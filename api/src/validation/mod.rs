//! Validation shared by every resource type: field errors worded as Kubernetes words them, and
//! the name rules (RFC 1123 subdomains and labels, config keys).

mod field_error;
mod names;

pub use field_error::FieldError;
pub use field_error::FieldErrorKind;
pub use names::NameRule;
pub use names::validate_config_key;
pub use names::validate_dns_label;
pub use names::validate_dns_subdomain;
