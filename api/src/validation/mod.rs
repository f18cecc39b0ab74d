//! Validation shared by every resource type: field errors worded as Kubernetes words them,
//! the name rules (RFC 1123 subdomains and labels, config keys), qualified names and label
//! values, `metav1.LabelSelector` fields, every object's `metadata`, and the small value
//! rules kinds share (int-or-percent, ports, quantities).

mod field_error;
mod int_or_percent;
pub mod label_selector;
mod labels;
mod names;
mod object_meta;
mod ports;
mod quantity;
mod webhook;

pub use field_error::FieldError;
pub use field_error::FieldErrorKind;
pub use field_error::go_float;
pub use field_error::within_budget;
pub use int_or_percent::validate_int_or_percent;
pub use label_selector::validate_label_selector;
pub use labels::validate_label_key;
pub use labels::validate_label_value;
pub use labels::validate_labels;
pub use labels::validate_qualified_name;
pub use names::NameRule;
pub use names::validate_config_key;
pub use names::validate_dns_label;
pub use names::validate_dns_subdomain;
pub use names::validate_dns1035_label;
pub use names::validate_wildcard_dns_subdomain;
pub use object_meta::TOTAL_ANNOTATION_SIZE_LIMIT;
pub use object_meta::validate_finalizer_name;
pub use object_meta::validate_object_meta;
pub use object_meta::validate_object_meta_update;
pub use ports::validate_port_name;
pub use ports::validate_port_number;
pub use quantity::QUANTITY_FORMAT_MSG;
pub use quantity::parse_quantity_nanos;
pub use webhook::validate_webhook_service;
pub use webhook::validate_webhook_url;
