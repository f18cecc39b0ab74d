//! Port names and numbers, with Kubernetes' `IsValidPortName` / `IsValidPortNum` messages.

/// The longest port name (an IANA service name), in characters.
const PORT_NAME_MAX: usize = 15;

/// The problems of `name` as a port name (empty: valid).
pub fn validate_port_name(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if name.len() > PORT_NAME_MAX {
        errs.push(format!("must be no more than {PORT_NAME_MAX} characters"));
    }
    let charset = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !charset {
        errs.push(
            "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_owned(),
        );
    } else if !name.bytes().any(|b| b.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".to_owned());
    }
    if name.contains("--") {
        errs.push("must not contain consecutive hyphens".to_owned());
    }
    if name.starts_with('-') || name.ends_with('-') {
        errs.push("must not begin or end with a hyphen".to_owned());
    }
    errs
}

/// The problems of `port` as a port number (empty: valid).
pub fn validate_port_number(port: i64) -> Vec<String> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec!["must be between 1 and 65535, inclusive".to_owned()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers() {
        assert!(validate_port_name("http").is_empty());
        assert!(validate_port_name("h-2").is_empty());
        assert_eq!(
            validate_port_name("80"),
            vec!["must contain at least one letter (a-z)"]
        );
        assert_eq!(
            validate_port_name("-Web--"),
            vec![
                "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
                "must not contain consecutive hyphens",
                "must not begin or end with a hyphen",
            ]
        );
        assert_eq!(
            validate_port_name("abcdefghijklmnop"),
            vec!["must be no more than 15 characters"]
        );
        assert!(validate_port_number(443).is_empty());
        assert_eq!(
            validate_port_number(0),
            vec!["must be between 1 and 65535, inclusive"]
        );
    }
}
