//! `resourceVersion` (with `resourceVersionMatch`, `limit` and `continue`) -> the read
//! consistency the store must give a get or a list (spec 000 "Resource version semantics",
//! R-RES-138..161; DESIGN.md §3 "Read consistency").

use super::ContinueToken;
use super::ListOptions;
use super::ResourceVersionMatch;
use crate::error::ApiError;
use crate::error::excerpt;
use crate::storage::ReadConsistency;
use crate::storage::Revision;

/// How a list is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListRead {
    /// The consistency of the first storage read.
    pub consistency: ReadConsistency,
    /// For a continued list, the key the previous page ended at (absolute).
    pub after_key: Option<String>,
}

/// A `resourceVersion` as a revision (Kubernetes' `ParseResourceVersion`: an unsigned 64-bit
/// decimal); anything else, or a larger number, is a 400.
fn parse_revision(rv: &str) -> Result<Revision, ApiError> {
    rv.parse()
        .map_err(|_| ApiError::BadRequest(format!("invalid resource version: {:?}", excerpt(rv))))
}

/// The consistency of a get with `resourceVersion`: unset or empty is Most Recent, `0` is
/// Any, any other version is Not older than it. A value that is not a decimal revision is a
/// 400.
pub fn get_consistency(resource_version: Option<&str>) -> Result<ReadConsistency, ApiError> {
    match resource_version {
        None | Some("") => Ok(ReadConsistency::Linearizable),
        Some("0") => Ok(ReadConsistency::Any),
        Some(rv) => parse_revision(rv).map(ReadConsistency::NotOlderThan),
    }
}

impl ListRead {
    /// How to read the list `options` ask for, of the collection under `prefix` (the
    /// validated options; the 422 combinations were refused when they were decoded):
    ///
    /// | `resourceVersionMatch` | `limit`/`continue` | unset | `0` | R |
    /// |---|---|---|---|---|
    /// | unset | no limit | Most Recent | Any | Not older than R |
    /// | unset | `limit`, no `continue` | Most Recent | Any | Exact R |
    /// | unset | `continue` | Exact (token) | Exact (token) | 400 |
    /// | `Exact` | any | - | - | Exact R |
    /// | `NotOlderThan` | any | - | Any | Not older than R |
    ///
    /// As Kubernetes does, the token is checked before the `resourceVersion` beside it; the
    /// "continue at the newest revision" token of an expired list reads Most Recent.
    /// Not older than R with a `limit` is served as Kubernetes' etcd storage serves it: at the
    /// newest revision once it is at least R, and the pages after it Exact at that revision.
    pub fn resolve(options: &ListOptions, prefix: &str) -> Result<Self, ApiError> {
        let rv = options.resource_version.as_deref();
        if let Some(token) = &options.continue_token {
            let token = ContinueToken::decode(token, prefix)?;
            if rv.is_some_and(|rv| rv != "0") {
                return Err(ApiError::BadRequest(
                    "specifying resource version is not allowed when using continue".into(),
                ));
            }
            return Ok(Self {
                consistency: token
                    .revision
                    .map_or(ReadConsistency::Linearizable, ReadConsistency::Exact),
                after_key: Some(token.after_key),
            });
        }
        let consistency = match (rv, options.resource_version_match) {
            (None, _) => ReadConsistency::Linearizable,
            (Some("0"), _) => ReadConsistency::Any,
            (Some(rv), Some(ResourceVersionMatch::Exact)) => {
                ReadConsistency::Exact(parse_revision(rv)?)
            }
            (Some(rv), Some(ResourceVersionMatch::NotOlderThan)) => {
                ReadConsistency::NotOlderThan(parse_revision(rv)?)
            }
            (Some(rv), None) if options.limit.is_some() => {
                ReadConsistency::Exact(parse_revision(rv)?)
            }
            (Some(rv), None) => ReadConsistency::NotOlderThan(parse_revision(rv)?),
        };
        Ok(Self {
            consistency,
            after_key: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flavor::Flavor;
    use crate::request::QueryParams;

    const PREFIX: &str = "/registry/core/configmaps/";

    fn read(query: &str) -> Result<ListRead, ApiError> {
        let options =
            ListOptions::from_query(&QueryParams::parse(Some(query)), false, Flavor::Kubernetes)?;
        ListRead::resolve(&options, PREFIX)
    }

    fn consistency(query: &str) -> ReadConsistency {
        read(query)
            .unwrap_or_else(|e| panic!("{query}: {e}"))
            .consistency
    }

    // R-RES-138, R-RES-139, R-RES-140
    #[test]
    fn get_resource_version_selects_consistency() {
        assert_eq!(get_consistency(None), Ok(ReadConsistency::Linearizable));
        assert_eq!(get_consistency(Some("")), Ok(ReadConsistency::Linearizable));
        assert_eq!(get_consistency(Some("0")), Ok(ReadConsistency::Any));
        assert_eq!(
            get_consistency(Some("42")),
            Ok(ReadConsistency::NotOlderThan(42))
        );
        for bad in ["x", "-1"] {
            assert!(matches!(
                get_consistency(Some(bad)),
                Err(ApiError::BadRequest(_))
            ));
        }
    }

    // R-RES-141..146, R-RES-152, R-RES-155, R-RES-157, R-RES-158, R-RES-160, R-RES-161
    #[test]
    fn list_table_without_continue() {
        use ReadConsistency::*;
        let cells = [
            ("", Linearizable),
            ("resourceVersion=0", Any),
            ("resourceVersion=7", NotOlderThan(7)),
            ("limit=2", Linearizable),
            ("limit=2&resourceVersion=0", Any),
            ("limit=2&resourceVersion=7", Exact(7)),
            ("resourceVersionMatch=Exact&resourceVersion=7", Exact(7)),
            (
                "resourceVersionMatch=Exact&resourceVersion=7&limit=2",
                Exact(7),
            ),
            ("resourceVersionMatch=NotOlderThan&resourceVersion=0", Any),
            (
                "resourceVersionMatch=NotOlderThan&resourceVersion=7",
                NotOlderThan(7),
            ),
            (
                "resourceVersionMatch=NotOlderThan&resourceVersion=0&limit=2",
                Any,
            ),
            (
                "resourceVersionMatch=NotOlderThan&resourceVersion=7&limit=2",
                NotOlderThan(7),
            ),
        ];
        for (query, want) in cells {
            assert_eq!(consistency(query), want, "{query}");
        }
        assert!(matches!(
            read("resourceVersion=x"),
            Err(ApiError::BadRequest(_))
        ));
    }

    // R-RES-147, R-RES-148, R-RES-149
    #[test]
    fn list_table_with_continue() {
        let token = ContinueToken::encode(&format!("{PREFIX}ns/b"), PREFIX, Some(9));
        let want = ListRead {
            consistency: ReadConsistency::Exact(9),
            after_key: Some(format!("{PREFIX}ns/b")),
        };
        assert_eq!(read(&format!("limit=2&continue={token}")), Ok(want.clone()));
        assert_eq!(
            read(&format!("limit=2&continue={token}&resourceVersion=0")),
            Ok(want)
        );
        assert_eq!(
            read(&format!("limit=2&continue={token}&resourceVersion=9")),
            Err(ApiError::BadRequest(
                "specifying resource version is not allowed when using continue".into()
            ))
        );
        let newest = ContinueToken::encode(&format!("{PREFIX}ns/b"), PREFIX, None);
        assert_eq!(
            consistency(&format!("limit=2&continue={newest}")),
            ReadConsistency::Linearizable
        );
    }
}
