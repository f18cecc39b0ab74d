//! The default ClusterRoleBindings of the user-facing and system roles (R-ACC-187..191):
//! `cluster-admin` to `system:masters`, the discovery roles to every (authenticated) user, the
//! control-plane roles to their components' users; `system:node` is kept with no subjects
//! (R-ACC-193), and `admin`, `edit`, `view` have no binding (R-ACC-188).

use serde_json::Value;

use super::Subject;
use super::cluster_role_binding;
use super::component;
use crate::auth::SERVICE_ACCOUNTS;
use crate::auth::SYSTEM_AUTHENTICATED;
use crate::auth::SYSTEM_MASTERS;
use crate::auth::UNAUTHENTICATED_GROUP;
use crate::flavor::Flavor;
use crate::metrics::SYSTEM_MONITORING;

/// The default ClusterRoleBindings of `flavor` other than the controllers'.
pub(super) fn cluster_role_bindings(flavor: Flavor) -> Vec<Value> {
    let system = |rest: &str| format!("system:{}", component(flavor, rest));
    let same = |name: &str, who: &[Subject]| cluster_role_binding(flavor, name, name, who);
    let controller_manager = system("controller-manager");
    let scheduler = system("scheduler");
    vec![
        same("cluster-admin", &[Subject::Group(SYSTEM_MASTERS)]),
        same("system:basic-user", &[Subject::Group(SYSTEM_AUTHENTICATED)]),
        same("system:discovery", &[Subject::Group(SYSTEM_AUTHENTICATED)]),
        same(
            &controller_manager,
            &[Subject::User(controller_manager.clone())],
        ),
        same(
            &system("dns"),
            &[Subject::ServiceAccount(component(flavor, "dns"))],
        ),
        same(&scheduler, &[Subject::User(scheduler.clone())]),
        same("system:monitoring", &[Subject::Group(SYSTEM_MONITORING)]),
        same("system:node", &[]),
        same("system:node-proxier", &[Subject::User(system("proxy"))]),
        same(
            "system:public-info-viewer",
            &[
                Subject::Group(SYSTEM_AUTHENTICATED),
                Subject::Group(UNAUTHENTICATED_GROUP),
            ],
        ),
        same(
            "system:service-account-issuer-discovery",
            &[Subject::Group(SERVICE_ACCOUNTS)],
        ),
        same(
            "system:volume-scheduler",
            &[Subject::User(scheduler.clone())],
        ),
    ]
}
