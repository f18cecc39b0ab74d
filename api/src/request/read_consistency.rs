//! `resourceVersion` on a get -> the read consistency the store must give
//! (spec 000 "Resource version semantics", R-RES-138..140). The list and watch tables come
//! with pagination and watch.

use crate::error::ApiError;
use crate::storage::ReadConsistency;

/// The consistency of a get (or, for now, a list) with `resourceVersion`: unset or empty is
/// Most Recent, `0` is Any, any other version is Not older than it. A value that is not a
/// decimal revision is a 400.
pub fn get_consistency(resource_version: Option<&str>) -> Result<ReadConsistency, ApiError> {
    match resource_version {
        None | Some("") => Ok(ReadConsistency::Linearizable),
        Some("0") => Ok(ReadConsistency::Any),
        Some(rv) => rv
            .parse()
            .map(ReadConsistency::NotOlderThan)
            .map_err(|_| ApiError::BadRequest(format!("invalid resource version: {rv:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // R-RES-138, R-RES-139, R-RES-140
    #[test]
    fn resource_version_selects_consistency() {
        assert_eq!(get_consistency(None), Ok(ReadConsistency::Linearizable));
        assert_eq!(get_consistency(Some("")), Ok(ReadConsistency::Linearizable));
        assert_eq!(get_consistency(Some("0")), Ok(ReadConsistency::Any));
        assert_eq!(
            get_consistency(Some("42")),
            Ok(ReadConsistency::NotOlderThan(42))
        );
        assert!(matches!(
            get_consistency(Some("x")),
            Err(ApiError::BadRequest(_))
        ));
        assert!(matches!(
            get_consistency(Some("-1")),
            Err(ApiError::BadRequest(_))
        ));
    }
}
