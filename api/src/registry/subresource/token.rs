//! `serviceaccounts/<name>/token`: POST of an `authentication.<d>/v1` TokenRequest answers
//! it with a signed JWT for the service account (upstream's `TokenREST`): `sub`
//! `system:serviceaccount:<ns>:<name>`, the audiences asked for (default: the API server's),
//! `iat`/`nbf` the request time, `exp` `expirationSeconds` later (default one hour, at least
//! ten minutes, capped at `--service-account-max-token-expiration`), a fresh `jti`, and the
//! `<label domain>` claim naming the namespace, the service account and the object the token
//! is bound to (`spec.boundObjectRef`: a Pod, with the node it runs on, a Secret or a Node,
//! which must exist). A pod-bound token asking for the node agent's default lifetime gets a
//! year and a `warnafter` claim while `--service-account-extend-token-expiration` is on. The
//! request time is the caller's; the key is the configured signer's; the claims are built and
//! bounded in [`crate::serviceaccount`].

use chrono::DateTime;
use chrono::Duration;
use chrono::SecondsFormat;
use chrono::Utc;
use k8s_openapi::api::authentication::v1::BoundObjectReference;
use k8s_openapi::api::authentication::v1::TokenRequest;
use serde_json::Value;
use serde_json::json;

use super::Parent;
use crate::admission::ObjectKind;
use crate::admission::Operation;
use crate::error::ApiError;
use crate::error::excerpt;
use crate::flavor::Flavor;
use crate::group::GroupKind;
use crate::group::GroupResource;
use crate::random::RandomSource;
use crate::registry::Written;
use crate::serviceaccount::Binding;
use crate::serviceaccount::DEFAULT_EXPIRATION_SECONDS;
use crate::serviceaccount::EXTENDED_EXPIRATION_SECONDS;
use crate::serviceaccount::Grant;
use crate::serviceaccount::ObjectRef;
use crate::serviceaccount::TokenSigner;
use crate::serviceaccount::WARN_ONLY_EXPIRATION_SECONDS;
use crate::serviceaccount::claims;
use crate::serviceaccount::validate_expiration;
use crate::storage::ReadConsistency;
use crate::validation::FieldError;

/// 422 on `TokenRequest` for `causes`.
fn invalid(flavor: Flavor, causes: Vec<FieldError>) -> ApiError {
    ApiError::Invalid {
        kind: GroupKind {
            group: format!("authentication.{}", flavor.group_domain()),
            kind: "TokenRequest".to_owned(),
        },
        name: String::new(),
        causes,
    }
}

/// Issues a token for the service account `parent` as the TokenRequest `request` asks, signed
/// by `signer` at `now`, its `jti` drawn from `random`: 400 for a request naming another
/// service account or binding to an object of another kind (or a pod of another service
/// account), 409 for a bound object whose uid differs, 422 for a lifetime out of range, 404
/// for a missing service account or bound object, 500 without a signer. Answers the
/// TokenRequest with its defaults filled in and `status.token` and
/// `status.expirationTimestamp` set, once admitted (`dry_run`: the request's), with
/// admission's warnings.
pub(crate) async fn issue(
    parent: &Parent<'_>,
    request: TokenRequest,
    signer: Option<&dyn TokenSigner>,
    (now, dry_run): (DateTime<Utc>, bool),
    flavor: Flavor,
    random: &RandomSource,
) -> Result<Written, ApiError> {
    let api_version = format!("authentication.{}/v1", flavor.group_domain());
    let group = format!("authentication.{}", flavor.group_domain());
    let kind = ObjectKind {
        group: &group,
        version: "v1",
        kind: "TokenRequest",
    };
    let create = (Operation::Create, "token");
    let (request, warnings) = parent.admit(create, kind, &request, None, dry_run).await?;
    let spec = request.spec.unwrap_or_default();
    for (field, given, want) in [
        ("name", &request.metadata.name, parent.name),
        ("namespace", &request.metadata.namespace, parent.namespace),
    ] {
        if let Some(given) = given.as_deref().filter(|g| !g.is_empty())
            && given != want
        {
            return Err(ApiError::BadRequest(format!(
                "the {field} of the TokenRequest ({}) does not match the service account's ({want})",
                excerpt(given)
            )));
        }
    }
    let requested = spec
        .expiration_seconds
        .unwrap_or(DEFAULT_EXPIRATION_SECONDS);
    let errs = validate_expiration(requested);
    if !errs.is_empty() {
        return Err(invalid(flavor, errs));
    }
    let account = parent.read().await?;
    let (binding, bound) = match &spec.bound_object_ref {
        Some(reference) => {
            let (binding, uid) = bind(parent, reference).await?;
            (binding, Some((reference, uid)))
        }
        None => (Binding::default(), None),
    };
    let signer = signer.ok_or_else(|| {
        ApiError::Internal("no service account signing key is configured".to_owned())
    })?;
    let audiences = match spec.audiences {
        Some(audiences) if !audiences.is_empty() => audiences,
        _ => signer.default_audiences().to_vec(),
    };
    let limits = signer.limits();
    let expiration_seconds = limits
        .max_expiration_seconds
        .map_or(requested, |max| requested.min(max));
    let extended = limits.extend_expiration
        && binding.pod.is_some()
        && expiration_seconds == WARN_ONLY_EXPIRATION_SECONDS
        && audiences
            .iter()
            .all(|a| signer.default_audiences().contains(a));
    let grant = Grant {
        namespace: parent.namespace,
        name: parent.name,
        uid: account
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or_default(),
        audiences,
        issued: now,
        expiration_seconds: if extended {
            EXTENDED_EXPIRATION_SECONDS
        } else {
            expiration_seconds
        },
        binding,
        warn_after_seconds: extended.then_some(expiration_seconds),
    };
    let jti = random.uuid();
    let token = signer
        .sign(&claims(&grant, signer.issuer(), &jti, flavor))
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    let expires = now + Duration::seconds(expiration_seconds);
    let mut response = json!({
        "kind": "TokenRequest",
        "apiVersion": api_version,
        "metadata": {"name": parent.name, "namespace": parent.namespace},
        "spec": {"audiences": grant.audiences, "expirationSeconds": expiration_seconds},
        "status": {
            "token": token,
            "expirationTimestamp": expires.to_rfc3339_opts(SecondsFormat::Secs, true),
        },
    });
    if let Some((reference, uid)) = bound {
        response["spec"]["boundObjectRef"] = json!({
            "kind": reference.kind,
            "apiVersion": reference.api_version,
            "name": reference.name,
            "uid": uid,
        });
    }
    Ok(Written {
        body: response.to_string().into_bytes(),
        warnings,
    })
}

/// What `reference` binds a token of the service account `parent` to, and the bound object's
/// uid (upstream's `TokenREST.Create`).
async fn bind(
    parent: &Parent<'_>,
    reference: &BoundObjectReference,
) -> Result<(Binding, String), ApiError> {
    let kind = reference.kind.as_deref().unwrap_or_default();
    let api_version = reference.api_version.as_deref().unwrap_or_default();
    let name = reference.name.as_deref().unwrap_or_default();
    let (resource, namespace) = match (api_version, kind) {
        ("v1", "Pod") => ("pods", parent.namespace),
        ("v1", "Secret") => ("secrets", parent.namespace),
        ("v1", "Node") => ("nodes", ""),
        _ => {
            return Err(ApiError::BadRequest(format!(
                "cannot bind token to object of type {}, Kind={}",
                excerpt(api_version),
                excerpt(kind)
            )));
        }
    };
    let object = read(parent, resource, namespace, name).await?;
    let uid = text(&object, "/metadata/uid");
    if let Some(wanted) = reference.uid.as_deref().filter(|u| !u.is_empty())
        && wanted != uid
    {
        // Upstream names the kind where the resource goes (`Pod "p"`).
        return Err(ApiError::Conflict {
            resource: GroupResource::new("", kind),
            name: name.to_owned(),
            reason: format!(
                "the UID in the bound object reference ({}) does not match the UID in record. The object might have been deleted and then recreated",
                excerpt(wanted)
            ),
        });
    }
    let this = Some(ObjectRef {
        name: name.to_owned(),
        uid: uid.clone(),
    });
    let binding = match resource {
        "pods" => {
            if text(&object, "/spec/serviceAccountName") != parent.name {
                return Err(ApiError::BadRequest(format!(
                    "cannot bind token for serviceaccount \"{}\" to pod running with different serviceaccount name.",
                    parent.name
                )));
            }
            let node_name = text(&object, "/spec/nodeName");
            let node = if node_name.is_empty() {
                None
            } else {
                // The node is optional: a pod on a node that is gone still gets its name.
                let node = read(parent, "nodes", "", &node_name).await.ok();
                Some(ObjectRef {
                    uid: node.map(|n| text(&n, "/metadata/uid")).unwrap_or_default(),
                    name: node_name,
                })
            };
            Binding {
                pod: this,
                node,
                ..Binding::default()
            }
        }
        "secrets" => Binding {
            secret: this,
            ..Binding::default()
        },
        _ => Binding {
            node: this,
            ..Binding::default()
        },
    };
    Ok((binding, uid))
}

/// The core `resource` `namespace/name` as it is now; 404 when absent.
async fn read(
    parent: &Parent<'_>,
    resource: &str,
    namespace: &str,
    name: &str,
) -> Result<Value, ApiError> {
    let store = parent
        .registry
        .builtin_store("", "v1", resource)
        .ok_or_else(|| ApiError::Internal(format!("{resource} are not served")))?;
    let body = store
        .get(
            parent.storage,
            namespace,
            name,
            ReadConsistency::Linearizable,
        )
        .await?;
    super::parent::stored(&body)
}

/// The text at `pointer` in `object`, empty when absent.
fn text(object: &Value, pointer: &str) -> String {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}
