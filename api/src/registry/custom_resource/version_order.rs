//! Kubernetes' version priority: versions that look like Kubernetes versions (`v1`,
//! `v2beta1`, `v1alpha2`) first, GA before beta before alpha, each from the highest major and
//! minor down; any other name after them, in alphabetical order. Discovery lists a group's
//! versions in this order, and the first is the preferred one.

use std::cmp::Ordering;

/// A version that looks like Kubernetes': its major, its stability (GA 2, beta 1, alpha 0)
/// and its minor (0 for GA).
fn parse(version: &str) -> Option<(u64, u8, u64)> {
    let rest = version.strip_prefix('v')?;
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (major, rest) = rest.split_at(digits);
    if major.is_empty() || major.starts_with('0') {
        return None;
    }
    let major = major.parse().ok()?;
    if rest.is_empty() {
        return Some((major, 2, 0));
    }
    let (stability, minor) = if let Some(minor) = rest.strip_prefix("beta") {
        (1, minor)
    } else {
        (0, rest.strip_prefix("alpha")?)
    };
    if minor.is_empty() || minor.starts_with('0') || !minor.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((major, stability, minor.parse().ok()?))
}

/// The order of two version names by priority: `Less` when `a` comes first.
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    match (parse(a), parse(b)) {
        (Some((ma, sa, na)), Some((mb, sb, nb))) => {
            (sb.cmp(&sa)).then(mb.cmp(&ma)).then(nb.cmp(&na))
        }
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The order Kubernetes documents for CRD versions: GA, then beta, then alpha, each from
    // the highest major and minor; other names last, alphabetically.
    #[test]
    fn versions_sort_as_kubernetes_documents() {
        let mut versions = vec![
            "foo1",
            "v1alpha1",
            "v11alpha2",
            "v12alpha1",
            "v10beta3",
            "v3beta1",
            "v2",
            "v10",
            "foo10",
            "v1",
            "v11beta2",
            "v1beta1",
        ];
        versions.sort_by(|a, b| compare_versions(a, b));
        assert_eq!(
            versions,
            [
                "v10",
                "v2",
                "v1",
                "v11beta2",
                "v10beta3",
                "v3beta1",
                "v1beta1",
                "v12alpha1",
                "v11alpha2",
                "v1alpha1",
                "foo1",
                "foo10"
            ]
        );
    }
}
