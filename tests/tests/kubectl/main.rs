//! kubectl against a real `apiary dev --flavor kubernetes` cluster, through the kubeconfig it
//! writes. The tests print a notice and pass when `kubectl` is not on `PATH`.

mod printed;
mod run;
mod t10_configmaps;
mod t12_generators;
mod t14_tables;
mod t16_server_side_apply;
mod t20_watch;
mod t22_watch_tables;
mod t30_dry_run;
mod t40_api_resources;
mod t50_openapi;
mod t60_apply;
mod t62_crds;
mod t64_custom_resources;
mod t66_conversion_webhook;
mod t67_admission_policy;
mod t68_admission_webhooks;
mod t69_pod_security;
mod t70_resource_quota;
mod t70_subresources;
mod t71_mutating_policy;
mod t72_service_accounts;
mod t80_auth;
mod t85_bootstrap_tokens;
mod t85_impersonation;
mod t85_oidc;
mod t85_service_account_tokens;
mod t85_tokens;
mod t86_rbac;
mod t88_cascading_delete;
mod t88_namespace_deletion;
mod t90_audit;
mod t90_metrics;
mod t95_pod_deletion;
mod watching;
