//! Where a watch starts, from its options (spec 000 "Resource version semantics", watch rows;
//! R-RES-169..171, R-RES-178..181):
//!
//! | `sendInitialEvents` | `resourceVersion` unset | `0` | R |
//! |---|---|---|---|
//! | absent | ADDED for a most-recent list, then changes | ADDED for a list at any state, then changes | changes after R |
//! | `true` | as absent, plus the initial-events-end BOOKMARK | as absent, plus the BOOKMARK | ADDED for a list not older than R, BOOKMARK, changes |
//! | `false` | changes after the most recent revision | changes after the replica's revision | changes after R |
//!
//! The BOOKMARK after the initial events is sent only with `allowWatchBookmarks`.

use crate::error::ApiError;
use crate::request::ListOptions;
use crate::request::get_consistency;
use crate::storage::ReadConsistency;
use crate::storage::Revision;

/// How a watch begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Start {
    /// List at `consistency`, send an ADDED event per object, then the changes after the
    /// list's revision; with `end_bookmark`, a BOOKMARK at the list's revision between the two.
    Initial {
        /// How fresh the list must be.
        consistency: ReadConsistency,
        /// Whether the initial events end with an initial-events-end BOOKMARK.
        end_bookmark: bool,
    },
    /// The changes after the revision a read at this consistency is served at.
    Current(ReadConsistency),
    /// The changes after this revision (Start at Exact).
    After(Revision),
}

impl Start {
    /// The start `options` ask for. A `resourceVersion` that is not a revision is a 400.
    pub(crate) fn from_options(options: &ListOptions) -> Result<Self, ApiError> {
        let consistency = get_consistency(options.resource_version.as_deref())?;
        Ok(match (options.send_initial_events, consistency) {
            (Some(true), consistency) => Self::Initial {
                consistency,
                end_bookmark: options.allow_watch_bookmarks,
            },
            (_, ReadConsistency::NotOlderThan(r) | ReadConsistency::Exact(r)) => Self::After(r),
            (Some(false), consistency) => Self::Current(consistency),
            (None, consistency) => Self::Initial {
                consistency,
                end_bookmark: false,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flavor::Flavor;
    use crate::request::QueryParams;

    fn start(query: &str) -> Result<Start, ApiError> {
        let options =
            ListOptions::from_query(&QueryParams::parse(Some(query)), true, Flavor::Kubernetes)?;
        Start::from_options(&options)
    }

    fn initial(consistency: ReadConsistency, end_bookmark: bool) -> Start {
        Start::Initial {
            consistency,
            end_bookmark,
        }
    }

    // R-RES-169, R-RES-170, R-RES-171
    #[test]
    fn resource_version_picks_the_start() {
        assert_eq!(start(""), Ok(initial(ReadConsistency::Linearizable, false)));
        assert_eq!(
            start("resourceVersion="),
            Ok(initial(ReadConsistency::Linearizable, false))
        );
        assert_eq!(
            start("resourceVersion=0&allowWatchBookmarks=1"),
            Ok(initial(ReadConsistency::Any, false))
        );
        assert_eq!(start("resourceVersion=12"), Ok(Start::After(12)));
        assert!(matches!(
            start("resourceVersion=x"),
            Err(ApiError::BadRequest(_))
        ));
    }

    // R-RES-178, R-RES-179, R-RES-180, R-RES-181
    #[test]
    fn streaming_lists_list_then_bookmark() {
        let sie = "sendInitialEvents=true&resourceVersionMatch=NotOlderThan";
        assert_eq!(
            start(&format!("{sie}&allowWatchBookmarks=true")),
            Ok(initial(ReadConsistency::Linearizable, true))
        );
        assert_eq!(
            start(&format!("{sie}&resourceVersion=0&allowWatchBookmarks=true")),
            Ok(initial(ReadConsistency::Any, true))
        );
        assert_eq!(
            start(&format!("{sie}&resourceVersion=7&allowWatchBookmarks=true")),
            Ok(initial(ReadConsistency::NotOlderThan(7), true))
        );
        assert_eq!(
            start(sie),
            Ok(initial(ReadConsistency::Linearizable, false))
        );
        let no = "sendInitialEvents=false&resourceVersionMatch=NotOlderThan";
        assert_eq!(start(no), Ok(Start::Current(ReadConsistency::Linearizable)));
        assert_eq!(
            start(&format!("{no}&resourceVersion=0")),
            Ok(Start::Current(ReadConsistency::Any))
        );
        assert_eq!(
            start(&format!("{no}&resourceVersion=7")),
            Ok(Start::After(7))
        );
    }
}
