//! Access and admission: role bindings, certificate signing requests and trust bundles,
//! admission webhooks and policies, and the API Priority and Fairness kinds. Roles and
//! cluster roles have no printer in Kubernetes: they get the default columns.

use std::cmp::Ordering;

use k8s_openapi::api::certificates::v1 as certificates;
use k8s_openapi::api::flowcontrol::v1 as flowcontrol;
use k8s_openapi::api::rbac::v1 as rbac;
use serde_json::Value;

use super::columns::AGE;
use super::columns::Column;
use super::columns::Doc;
use super::columns::NAME;
use super::columns::schema_of;
use super::format;
use super::format::int;
use super::format::text;
use super::printer::Group;
use super::printer::PrintContext;
use super::printer::Printer;
use super::printer::Row;

const WEBHOOK_COLUMNS: &[Column] = &[
    NAME,
    Column::integer(
        "Webhooks",
        Doc::Text("Webhooks indicates the number of webhooks registered in this configuration"),
    ),
    AGE,
];

const POLICY_BINDING_COLUMNS: &[Column] = &[
    NAME,
    Column::string(
        "PolicyName",
        Doc::Text("PolicyName indicates the policy definition which the policy binding binded to"),
    ),
    Column::string(
        "ParamRef",
        Doc::Text("ParamRef indicates the param resource which sets the configration param"),
    ),
    AGE,
];

const PARAM_KIND: Column = Column::string(
    "ParamKind",
    Doc::Text("ParamKind specifies the kind of resources used to parameterize this policy"),
);

/// The printers of this family.
pub(super) const PRINTERS: &[Printer] = &[
    Printer {
        group: Group::Domain("rbac.authorization"),
        resources: &["rolebindings"],
        columns: &[
            NAME,
            Column::string(
                "Role",
                Doc::Field(schema_of::<rbac::RoleBinding>, "roleRef"),
            ),
            AGE,
            Column::string("Users", Doc::Text("Users in the roleBinding")).wide(),
            Column::string("Groups", Doc::Text("Groups in the roleBinding")).wide(),
            Column::string(
                "ServiceAccounts",
                Doc::Text("ServiceAccounts in the roleBinding"),
            )
            .wide(),
        ],
        row: binding_row,
        order: None,
    },
    Printer {
        group: Group::Domain("rbac.authorization"),
        resources: &["clusterrolebindings"],
        columns: &[
            NAME,
            Column::string(
                "Role",
                Doc::Field(schema_of::<rbac::ClusterRoleBinding>, "roleRef"),
            ),
            AGE,
            Column::string("Users", Doc::Text("Users in the clusterRoleBinding")).wide(),
            Column::string("Groups", Doc::Text("Groups in the clusterRoleBinding")).wide(),
            Column::string(
                "ServiceAccounts",
                Doc::Text("ServiceAccounts in the clusterRoleBinding"),
            )
            .wide(),
        ],
        row: binding_row,
        order: None,
    },
    Printer {
        group: Group::Domain("certificates"),
        resources: &["certificatesigningrequests"],
        columns: &[
            NAME,
            AGE,
            Column::string(
                "SignerName",
                Doc::Field(
                    schema_of::<certificates::CertificateSigningRequestSpec>,
                    "signerName",
                ),
            ),
            Column::string(
                "Requestor",
                Doc::Field(
                    schema_of::<certificates::CertificateSigningRequestSpec>,
                    "request",
                ),
            ),
            Column::string(
                "RequestedDuration",
                Doc::Field(
                    schema_of::<certificates::CertificateSigningRequestSpec>,
                    "expirationSeconds",
                ),
            ),
            Column::string(
                "Condition",
                Doc::Field(
                    schema_of::<certificates::CertificateSigningRequestStatus>,
                    "conditions",
                ),
            ),
        ],
        row: csr_row,
        order: None,
    },
    Printer {
        group: Group::Domain("certificates"),
        resources: &["clustertrustbundles"],
        columns: &[
            NAME,
            Column::string(
                "SignerName",
                Doc::Field(
                    schema_of::<certificates::ClusterTrustBundleSpec>,
                    "signerName",
                ),
            ),
        ],
        row: trust_bundle_row,
        order: None,
    },
    Printer {
        group: Group::Domain("admissionregistration"),
        resources: &[
            "mutatingwebhookconfigurations",
            "validatingwebhookconfigurations",
        ],
        columns: WEBHOOK_COLUMNS,
        row: webhook_row,
        order: None,
    },
    Printer {
        group: Group::Domain("admissionregistration"),
        resources: &["validatingadmissionpolicies"],
        columns: &[
            NAME,
            Column::integer(
                "Validations",
                Doc::Text(
                    "Validations indicates the number of validation rules defined in this \
                     configuration",
                ),
            ),
            PARAM_KIND,
            AGE,
        ],
        row: validating_policy_row,
        order: None,
    },
    Printer {
        group: Group::Domain("admissionregistration"),
        resources: &["mutatingadmissionpolicies"],
        columns: &[
            NAME,
            Column::integer(
                "Mutations",
                Doc::Text(
                    "Mutation indicates the number of mutations rules defined in this \
                     configuration",
                ),
            ),
            PARAM_KIND,
            AGE,
        ],
        row: mutating_policy_row,
        order: None,
    },
    Printer {
        group: Group::Domain("admissionregistration"),
        resources: &[
            "validatingadmissionpolicybindings",
            "mutatingadmissionpolicybindings",
        ],
        columns: POLICY_BINDING_COLUMNS,
        row: policy_binding_row,
        order: None,
    },
    Printer {
        group: Group::Domain("flowcontrol.apiserver"),
        resources: &["flowschemas"],
        columns: &[
            NAME,
            Column::string(
                "PriorityLevel",
                Doc::Field(
                    schema_of::<flowcontrol::PriorityLevelConfigurationReference>,
                    "name",
                ),
            ),
            Column::string(
                "MatchingPrecedence",
                Doc::Field(
                    schema_of::<flowcontrol::FlowSchemaSpec>,
                    "matchingPrecedence",
                ),
            ),
            Column::string(
                "DistinguisherMethod",
                Doc::Field(
                    schema_of::<flowcontrol::FlowSchemaSpec>,
                    "distinguisherMethod",
                ),
            ),
            AGE,
            Column::string(
                "MissingPL",
                Doc::Text("references a broken or non-existent PriorityLevelConfiguration"),
            ),
        ],
        row: flow_schema_row,
        order: Some(flow_schema_order),
    },
    Printer {
        group: Group::Domain("flowcontrol.apiserver"),
        resources: &["prioritylevelconfigurations"],
        columns: &[
            NAME,
            Column::string(
                "Type",
                Doc::Field(
                    schema_of::<flowcontrol::PriorityLevelConfigurationSpec>,
                    "type",
                ),
            ),
            Column::string(
                "NominalConcurrencyShares",
                Doc::Field(
                    schema_of::<flowcontrol::LimitedPriorityLevelConfiguration>,
                    "nominalConcurrencyShares",
                ),
            ),
            Column::string(
                "Queues",
                Doc::Field(schema_of::<flowcontrol::QueuingConfiguration>, "queues"),
            ),
            Column::string(
                "HandSize",
                Doc::Field(schema_of::<flowcontrol::QueuingConfiguration>, "handSize"),
            ),
            Column::string(
                "QueueLengthLimit",
                Doc::Field(
                    schema_of::<flowcontrol::QueuingConfiguration>,
                    "queueLengthLimit",
                ),
            ),
            AGE,
        ],
        row: priority_level_row,
        order: None,
    },
];

fn name(v: &Value) -> Value {
    text(v, "/metadata/name").into()
}

fn binding_row(binding: &Value, ctx: &PrintContext) -> Row {
    let role = format!(
        "{}/{}",
        text(binding, "/roleRef/kind"),
        text(binding, "/roleRef/name")
    );
    let (users, groups, accounts) = format::subjects(binding);
    vec![
        name(binding),
        role.into(),
        format::age(binding, ctx.now).into(),
        users.join(", ").into(),
        groups.join(", ").into(),
        accounts.join(", ").into(),
    ]
    .into()
}

/// `Denied` or `Approved` or `Pending`, then `,Failed` and `,Issued` when they apply.
fn csr_condition(csr: &Value) -> String {
    let has = |kind: &str| {
        format::items(csr, "/status/conditions")
            .iter()
            .any(|c| text(c, "/type") == kind)
    };
    let mut status = if has("Denied") {
        "Denied"
    } else if has("Approved") {
        "Approved"
    } else {
        "Pending"
    }
    .to_owned();
    if has("Failed") {
        status.push_str(",Failed");
    }
    if !text(csr, "/status/certificate").is_empty() {
        status.push_str(",Issued");
    }
    status
}

fn csr_row(csr: &Value, ctx: &PrintContext) -> Row {
    let duration = csr
        .pointer("/spec/expirationSeconds")
        .and_then(Value::as_i64)
        .map_or_else(
            || "<none>".to_owned(),
            |s| format::human_duration(chrono::Duration::seconds(s)),
        );
    vec![
        name(csr),
        format::age(csr, ctx.now).into(),
        format::or(text(csr, "/spec/signerName"), "<none>").into(),
        text(csr, "/spec/username").into(),
        duration.into(),
        csr_condition(csr).into(),
    ]
    .into()
}

fn trust_bundle_row(bundle: &Value, _: &PrintContext) -> Row {
    vec![
        name(bundle),
        format::or(text(bundle, "/spec/signerName"), "<none>").into(),
    ]
    .into()
}

fn webhook_row(config: &Value, ctx: &PrintContext) -> Row {
    vec![
        name(config),
        format::count(config, "/webhooks").into(),
        format::age(config, ctx.now).into(),
    ]
    .into()
}

/// `apiVersion/kind` of the policy's parameters, `<unset>` without them.
fn param_kind(policy: &Value) -> String {
    match policy.pointer("/spec/paramKind") {
        Some(p) if p.is_object() => format!("{}/{}", text(p, "/apiVersion"), text(p, "/kind")),
        _ => "<unset>".to_owned(),
    }
}

fn validating_policy_row(policy: &Value, ctx: &PrintContext) -> Row {
    vec![
        name(policy),
        format::count(policy, "/spec/validations").into(),
        param_kind(policy).into(),
        format::age(policy, ctx.now).into(),
    ]
    .into()
}

fn mutating_policy_row(policy: &Value, ctx: &PrintContext) -> Row {
    vec![
        name(policy),
        format::count(policy, "/spec/mutations").into(),
        param_kind(policy).into(),
        format::age(policy, ctx.now).into(),
    ]
    .into()
}

fn policy_binding_row(binding: &Value, ctx: &PrintContext) -> Row {
    let param = match binding.pointer("/spec/paramRef") {
        Some(p) if p.is_object() => match (text(p, "/name"), text(p, "/namespace")) {
            ("", _) => match p.get("selector") {
                Some(sel) if !sel.is_null() => format::selector_cell(Some(sel)),
                _ => "<unset>".to_owned(),
            },
            (name, "") => format!("*/{name}"),
            (name, ns) => format!("{ns}/{name}"),
        },
        _ => "<unset>".to_owned(),
    };
    vec![
        name(binding),
        text(binding, "/spec/policyName").into(),
        param.into(),
        format::age(binding, ctx.now).into(),
    ]
    .into()
}

fn flow_schema_row(schema: &Value, ctx: &PrintContext) -> Row {
    let missing = format::items(schema, "/status/conditions")
        .iter()
        .find(|c| text(c, "/type") == "Dangling")
        .map_or("?", |c| text(c, "/status"));
    vec![
        name(schema),
        text(schema, "/spec/priorityLevelConfiguration/name").into(),
        int(schema, "/spec/matchingPrecedence").into(),
        format::or(text(schema, "/spec/distinguisherMethod/type"), "<none>").into(),
        format::age(schema, ctx.now).into(),
        missing.into(),
    ]
    .into()
}

/// Flow schemas are listed by matching precedence, then name, as they are matched.
fn flow_schema_order(a: &Value, b: &Value) -> Ordering {
    int(a, "/spec/matchingPrecedence")
        .cmp(&int(b, "/spec/matchingPrecedence"))
        .then_with(|| text(a, "/metadata/name").cmp(text(b, "/metadata/name")))
}

fn priority_level_row(level: &Value, ctx: &PrintContext) -> Row {
    let none = || Value::from("<none>");
    let (shares, queues, hand, limit) = match level.pointer("/spec/limited") {
        Some(limited) if limited.is_object() => {
            let shares = Value::from(int(limited, "/nominalConcurrencyShares"));
            match limited.pointer("/limitResponse/queuing") {
                Some(q) if q.is_object() => (
                    shares,
                    int(q, "/queues").into(),
                    int(q, "/handSize").into(),
                    int(q, "/queueLengthLimit").into(),
                ),
                _ => (shares, none(), none(), none()),
            }
        }
        _ => (none(), none(), none(), none()),
    };
    vec![
        name(level),
        text(level, "/spec/type").into(),
        shares,
        queues,
        hand,
        limit,
        format::age(level, ctx.now).into(),
    ]
    .into()
}
