//! Authentication methods against a real `apiary dev --flavor kubernetes` cluster: the
//! authenticating proxy, the client CA file followed as it changes, and kubeconfig users
//! whose credentials come from an exec plugin.

mod t10_request_header;
mod t20_client_ca_reload;
mod t30_exec_plugin;
