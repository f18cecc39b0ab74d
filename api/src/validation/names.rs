//! Name rules: RFC 1123 subdomains (most object names) and their `*.` wildcard form, RFC 1123
//! labels (namespace names), RFC 1035 labels (service names) and config keys (ConfigMap and
//! Secret data keys), with Kubernetes' messages.

/// The largest DNS subdomain, in characters.
const DNS1123_SUBDOMAIN_MAX: usize = 253;
/// The largest DNS label, in characters.
const DNS1123_LABEL_MAX: usize = 63;

const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const WILDCARD_MSG: &str = "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const CONFIG_KEY_MSG: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

/// Which rule an object's name follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// An RFC 1123 subdomain (most kinds).
    DnsSubdomain,
    /// An RFC 1123 label (namespaces).
    DnsLabel,
    /// Any name usable as one path segment (RBAC kinds: Kubernetes' `ValidatePathSegmentName`).
    PathSegment,
    /// The strategy's own validation checks the name, whose rule depends on the object
    /// (ClusterTrustBundle's signer prefix); nothing is checked here.
    Strategy,
}

impl NameRule {
    /// The problems of `name` under this rule (empty: valid). With `prefix`, `name` is a
    /// `generateName` prefix, which may end in `-` because a suffix follows it.
    pub fn check(self, name: &str, prefix: bool) -> Vec<String> {
        let masked;
        let name = if prefix && name.ends_with('-') {
            // As Kubernetes' maskTrailingDash: the generated suffix will follow the dash.
            masked = format!("{}a", &name[..name.len() - 1]);
            masked.as_str()
        } else {
            name
        };
        match self {
            Self::DnsSubdomain => validate_dns_subdomain(name),
            Self::DnsLabel => validate_dns_label(name),
            Self::PathSegment => validate_path_segment(name, prefix),
            Self::Strategy => Vec::new(),
        }
    }
}

/// Kubernetes' `IsValidPathSegmentName` (and, for a `generateName` prefix,
/// `IsValidPathSegmentPrefix`, which allows `.` and `..`).
pub fn validate_path_segment(name: &str, prefix: bool) -> Vec<String> {
    let mut errs = Vec::new();
    if !prefix && (name == "." || name == "..") {
        errs.push(format!("may not be '{name}'"));
    }
    for c in ["/", "%"] {
        if name.contains(c) {
            errs.push(format!("may not contain '{c}'"));
        }
    }
    errs
}

fn is_label(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            alnum(first) && alnum(last) && b.iter().all(|c| alnum(c) || *c == b'-')
        }
        _ => false,
    }
}

/// The problems of `name` as an RFC 1123 subdomain (empty: valid).
pub fn validate_dns_subdomain(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if name.len() > DNS1123_SUBDOMAIN_MAX {
        errs.push(format!(
            "must be no more than {DNS1123_SUBDOMAIN_MAX} characters"
        ));
    }
    if !name.split('.').all(is_label) {
        errs.push(SUBDOMAIN_MSG.to_owned());
    }
    errs
}

/// The problems of `name` as an RFC 1123 label (empty: valid).
pub fn validate_dns_label(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if name.len() > DNS1123_LABEL_MAX {
        errs.push(format!(
            "must be no more than {DNS1123_LABEL_MAX} characters"
        ));
    }
    if !is_label(name) {
        errs.push(LABEL_MSG.to_owned());
    }
    errs
}

/// The problems of `name` as an RFC 1035 label (empty: valid): an RFC 1123 label that starts
/// with a letter.
pub fn validate_dns1035_label(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if name.len() > DNS1123_LABEL_MAX {
        errs.push(format!(
            "must be no more than {DNS1123_LABEL_MAX} characters"
        ));
    }
    if !is_label(name) || !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        errs.push(DNS1035_MSG.to_owned());
    }
    errs
}

/// The problems of `name` as a wildcard subdomain, `*.` and an RFC 1123 subdomain (empty:
/// valid).
pub fn validate_wildcard_dns_subdomain(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if name.len() > DNS1123_SUBDOMAIN_MAX {
        errs.push(format!(
            "must be no more than {DNS1123_SUBDOMAIN_MAX} characters"
        ));
    }
    let rest = name.strip_prefix("*.").unwrap_or_default();
    if !rest.split('.').all(is_label) {
        errs.push(WILDCARD_MSG.to_owned());
    }
    errs
}

/// The problems of `key` as a ConfigMap or Secret data key (empty: valid).
pub fn validate_config_key(key: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if key.len() > DNS1123_SUBDOMAIN_MAX {
        errs.push(format!(
            "must be no more than {DNS1123_SUBDOMAIN_MAX} characters"
        ));
    }
    let valid_chars = !key.is_empty()
        && key
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'));
    if !valid_chars {
        errs.push(CONFIG_KEY_MSG.to_owned());
    }
    if key == "." {
        errs.push("must not be '.'".to_owned());
    } else if key == ".." {
        errs.push("must not be '..'".to_owned());
    } else if key.starts_with("..") {
        errs.push("must not start with '..'".to_owned());
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subdomains() {
        for ok in ["a", "example.com", "a-b.c-d", "0", "x".repeat(253).as_str()] {
            assert!(validate_dns_subdomain(ok).is_empty(), "{ok}");
        }
        for bad in [
            "", "Bad_Name", "-a", "a-", "a..b", ".a", "a.", "A", "a/b", "a b",
        ] {
            assert_eq!(
                validate_dns_subdomain(bad),
                vec![SUBDOMAIN_MSG.to_owned()],
                "{bad}"
            );
        }
        let long = "x".repeat(254);
        assert_eq!(
            validate_dns_subdomain(&long),
            vec!["must be no more than 253 characters"]
        );
    }

    #[test]
    fn labels() {
        assert!(validate_dns_label("kube-system").is_empty());
        assert_eq!(validate_dns_label("a.b"), vec![LABEL_MSG.to_owned()]);
        assert_eq!(
            validate_dns_label(&"x".repeat(64)),
            vec!["must be no more than 63 characters"]
        );
    }

    #[test]
    fn generate_name_prefix_may_end_in_dash() {
        assert!(NameRule::DnsSubdomain.check("web-", true).is_empty());
        assert!(!NameRule::DnsSubdomain.check("web-", false).is_empty());
        assert!(!NameRule::DnsLabel.check("Web-", true).is_empty());
    }

    #[test]
    fn dns1035_labels_and_wildcards() {
        assert!(validate_dns1035_label("web-1").is_empty());
        assert_eq!(validate_dns1035_label("1web"), vec![DNS1035_MSG]);
        assert!(validate_wildcard_dns_subdomain("*.example.com").is_empty());
        for bad in ["example.com", "*.", "*.*.a", "a.*.b", "*"] {
            assert_eq!(
                validate_wildcard_dns_subdomain(bad),
                vec![WILDCARD_MSG],
                "{bad}"
            );
        }
        assert!(WILDCARD_MSG.ends_with(r"regex used for validation is '\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"));
    }

    #[test]
    fn config_keys() {
        for ok in ["a", "KEY_NAME", "key.name", "key-name", ".hidden", "a..b"] {
            assert!(validate_config_key(ok).is_empty(), "{ok}");
        }
        assert_eq!(
            validate_config_key("bad key"),
            vec![CONFIG_KEY_MSG.to_owned()]
        );
        assert_eq!(validate_config_key(""), vec![CONFIG_KEY_MSG.to_owned()]);
        assert_eq!(validate_config_key(".."), vec!["must not be '..'"]);
        assert_eq!(validate_config_key("..a"), vec!["must not start with '..'"]);
        assert_eq!(validate_config_key("."), vec!["must not be '.'"]);
    }
}
