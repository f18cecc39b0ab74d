//! The options of a list or watch (`ListOptions`: `resourceVersion`, `resourceVersionMatch`,
//! `limit`, `continue`, selectors, `allowWatchBookmarks`, `sendInitialEvents`,
//! `timeoutSeconds`), decoded from the query and checked together as the Kubernetes API server
//! checks them (spec 000 "Resource version semantics"; R-RES-099..104, R-RES-238).
//!
//! A value that cannot be decoded is a 400; a combination the tables call invalid is a 422
//! `Invalid` whose details name the kind `ListOptions`.

use super::QueryParams;
use super::Selectors;
use crate::error::ApiError;
use crate::error::excerpt;
use crate::flavor::Flavor;
use crate::group::GroupKind;
use crate::validation::FieldError;

/// `resourceVersionMatch`: how a list's `resourceVersion` is matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceVersionMatch {
    /// Exactly the given version.
    Exact,
    /// The given version or newer.
    NotOlderThan,
}

/// The decoded options of a list, watch or deletecollection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListOptions {
    /// Whether the request is a watch.
    pub watch: bool,
    /// `resourceVersion`, as sent (`None`: absent or empty).
    pub resource_version: Option<String>,
    /// `resourceVersionMatch`.
    pub resource_version_match: Option<ResourceVersionMatch>,
    /// `limit`: the page size (`None`: absent, zero or negative, which all mean "no limit").
    pub limit: Option<usize>,
    /// `continue`: the token of the previous page (`None`: absent or empty).
    pub continue_token: Option<String>,
    /// `labelSelector` and `fieldSelector`.
    pub selectors: Selectors,
    /// `allowWatchBookmarks`.
    pub allow_watch_bookmarks: bool,
    /// `sendInitialEvents` (`None`: absent).
    pub send_initial_events: Option<bool>,
    /// `timeoutSeconds` (`None`: absent), any 64-bit integer as Kubernetes takes it: zero
    /// or absent means the server's default, a negative value a watch that ends at once.
    pub timeout_seconds: Option<i64>,
}

const RV_MATCH: &str = "resourceVersionMatch";

impl ListOptions {
    /// The options in `query` of a list (`watch`: of a watch), validated. 400 for a value that
    /// does not decode, 422 for an invalid combination.
    pub fn from_query(query: &QueryParams, watch: bool, flavor: Flavor) -> Result<Self, ApiError> {
        let non_empty = |name| query.get(name).filter(|v| !v.is_empty()).map(str::to_owned);
        let mut causes = Vec::new();
        let resource_version_match = non_empty(RV_MATCH).and_then(|m| {
            let parsed = parse_match(&m);
            if parsed.is_none() {
                causes.push(FieldError::not_supported(
                    RV_MATCH,
                    m,
                    &["Exact", "NotOlderThan", ""],
                ));
            }
            parsed
        });
        let options = Self {
            watch,
            resource_version: non_empty("resourceVersion"),
            resource_version_match,
            limit: non_empty("limit")
                .map(|l| parse_int("limit", &l))
                .transpose()?
                .and_then(|l| usize::try_from(l).ok())
                .filter(|l| *l > 0),
            continue_token: non_empty("continue"),
            selectors: Selectors::from_query(query)?,
            allow_watch_bookmarks: query.flag("allowWatchBookmarks"),
            send_initial_events: non_empty("sendInitialEvents")
                .map(|v| parse_bool("sendInitialEvents", &v))
                .transpose()?,
            timeout_seconds: non_empty("timeoutSeconds")
                .map(|t| parse_int("timeoutSeconds", &t))
                .transpose()?,
        };
        causes.extend(options.check());
        if causes.is_empty() {
            Ok(options)
        } else {
            Err(ApiError::Invalid {
                kind: GroupKind {
                    group: flavor.meta_group(),
                    kind: "ListOptions".into(),
                },
                name: String::new(),
                causes,
            })
        }
    }

    /// The combinations Kubernetes rejects (its `ValidateListOptions`).
    fn check(&self) -> Vec<FieldError> {
        let mut causes = Vec::new();
        if self.watch {
            if self.send_initial_events.is_some()
                && self.resource_version_match != Some(ResourceVersionMatch::NotOlderThan)
            {
                causes.push(FieldError::forbidden(
                    RV_MATCH,
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                ));
            }
            if let Some(m) = self.resource_version_match {
                if self.send_initial_events.is_none() {
                    causes.push(FieldError::forbidden(
                        RV_MATCH,
                        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                    ));
                }
                if m != ResourceVersionMatch::NotOlderThan {
                    causes.push(FieldError::not_supported(
                        RV_MATCH,
                        match_name(m),
                        &["NotOlderThan"],
                    ));
                }
                if self.continue_token.is_some() {
                    causes.push(FieldError::forbidden(
                        RV_MATCH,
                        "resourceVersionMatch is forbidden when continue is provided",
                    ));
                }
            }
            return causes;
        }
        if let Some(m) = self.resource_version_match {
            if self.resource_version.is_none() {
                causes.push(FieldError::forbidden(
                    RV_MATCH,
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                ));
            }
            if self.continue_token.is_some() {
                causes.push(FieldError::forbidden(
                    RV_MATCH,
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
            if m == ResourceVersionMatch::Exact && self.resource_version.as_deref() == Some("0") {
                causes.push(FieldError::forbidden(
                    RV_MATCH,
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                ));
            }
        }
        if self.send_initial_events.is_some() {
            causes.push(FieldError::forbidden(
                "sendInitialEvents",
                "sendInitialEvents is forbidden for list",
            ));
        }
        causes
    }
}

fn match_name(m: ResourceVersionMatch) -> &'static str {
    match m {
        ResourceVersionMatch::Exact => "Exact",
        ResourceVersionMatch::NotOlderThan => "NotOlderThan",
    }
}

/// `resourceVersionMatch`: Kubernetes accepts exactly `Exact` and `NotOlderThan`; anything
/// else is an unsupported value (422, like the invalid combinations).
fn parse_match(value: &str) -> Option<ResourceVersionMatch> {
    match value {
        "Exact" => Some(ResourceVersionMatch::Exact),
        "NotOlderThan" => Some(ResourceVersionMatch::NotOlderThan),
        _ => None,
    }
}

/// A 64-bit integer parameter (Go's `strconv.ParseInt`): a value that is not one, or does not
/// fit, is a 400 naming the parameter.
fn parse_int(name: &str, value: &str) -> Result<i64, ApiError> {
    value.parse().map_err(|_| {
        ApiError::BadRequest(format!(
            "invalid value {:?} for query parameter {name}: not a 64-bit integer",
            excerpt(value)
        ))
    })
}

fn parse_bool(name: &str, value: &str) -> Result<bool, ApiError> {
    super::query::parse_bool(value).ok_or_else(|| {
        ApiError::BadRequest(format!(
            "invalid value {:?} for query parameter {name}: not a boolean",
            excerpt(value)
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(query: &str, watch: bool) -> Result<ListOptions, ApiError> {
        ListOptions::from_query(&QueryParams::parse(Some(query)), watch, Flavor::Kubernetes)
    }

    fn invalid_fields(query: &str, watch: bool) -> Vec<String> {
        match options(query, watch) {
            Err(ApiError::Invalid { kind, causes, .. }) => {
                assert_eq!(kind.kind, "ListOptions");
                assert_eq!(kind.group, "meta.k8s.io");
                causes.into_iter().map(|c| c.field).collect()
            }
            other => panic!("{query}: expected 422, got {other:?}"),
        }
    }

    #[test]
    fn decodes_every_option() {
        let o = options(
            "resourceVersion=5&resourceVersionMatch=NotOlderThan&limit=3&labelSelector=a%3Db\
             &allowWatchBookmarks=true&sendInitialEvents=true&timeoutSeconds=7",
            true,
        )
        .unwrap();
        assert_eq!(o.resource_version.as_deref(), Some("5"));
        assert_eq!(
            o.resource_version_match,
            Some(ResourceVersionMatch::NotOlderThan)
        );
        assert_eq!(o.limit, Some(3));
        assert!(!o.selectors.is_empty());
        assert!(o.allow_watch_bookmarks);
        assert_eq!(o.send_initial_events, Some(true));
        assert_eq!(o.timeout_seconds, Some(7));
        let empty = options("resourceVersion=&continue=&limit=0", false).unwrap();
        assert_eq!(empty, ListOptions::default());
        assert_eq!(options("limit=-4", false).unwrap().limit, None);
        // Any 64-bit integer is a timeout, as Kubernetes decodes it.
        for (query, want) in [
            ("timeoutSeconds=-1", -1),
            ("timeoutSeconds=-0", 0),
            ("timeoutSeconds=9223372036854775807", i64::MAX),
            ("timeoutSeconds=-9223372036854775808", i64::MIN),
        ] {
            assert_eq!(options(query, true).unwrap().timeout_seconds, Some(want));
        }
        assert_eq!(
            options("limit=9223372036854775807", false).unwrap().limit,
            usize::try_from(i64::MAX).ok()
        );
    }

    // R-RES-100, R-RES-150, R-RES-151, R-RES-153, R-RES-154, R-RES-156, R-RES-159, R-RES-238
    #[test]
    fn invalid_list_combinations_are_422_listoptions() {
        for query in [
            "resourceVersionMatch=Exact",
            "resourceVersionMatch=Exact&limit=5",
            "resourceVersionMatch=NotOlderThan",
            "resourceVersionMatch=NotOlderThan&limit=5",
            "resourceVersionMatch=Exact&resourceVersion=0",
            "resourceVersionMatch=Exact&resourceVersion=0&limit=5",
        ] {
            assert_eq!(
                invalid_fields(query, false),
                ["resourceVersionMatch"],
                "{query}"
            );
        }
        assert_eq!(
            invalid_fields("resourceVersionMatch=Newest&resourceVersion=3", false),
            ["resourceVersionMatch"]
        );
        assert_eq!(
            invalid_fields("sendInitialEvents=true", false),
            ["sendInitialEvents"]
        );
        assert!(options("resourceVersionMatch=Exact&resourceVersion=4", false).is_ok());
        assert!(options("resourceVersionMatch=NotOlderThan&resourceVersion=0", false).is_ok());
    }

    // R-RES-099, R-RES-104
    #[test]
    fn watch_takes_resource_version_match_only_with_send_initial_events() {
        assert!(
            options(
                "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=1",
                true
            )
            .is_ok()
        );
        assert_eq!(
            invalid_fields("sendInitialEvents=true", true),
            ["resourceVersionMatch"]
        );
        assert_eq!(
            invalid_fields("resourceVersionMatch=NotOlderThan&resourceVersion=1", true),
            ["resourceVersionMatch"]
        );
        assert_eq!(
            invalid_fields(
                "sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=1",
                true
            ),
            ["resourceVersionMatch", "resourceVersionMatch"]
        );
    }

    #[test]
    fn undecodable_values_are_400() {
        for query in [
            "limit=x",
            "limit=9223372036854775808",
            "timeoutSeconds=9223372036854775808",
            "timeoutSeconds=-9223372036854775809",
            "timeoutSeconds=1.5",
            "sendInitialEvents=maybe",
        ] {
            assert!(
                matches!(options(query, true), Err(ApiError::BadRequest(_))),
                "{query}"
            );
        }
        assert!(matches!(
            options("labelSelector=a%20in%20(", false),
            Err(ApiError::BadRequest(_))
        ));
    }
}
