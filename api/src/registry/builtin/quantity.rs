//! Resource quantities (`500m`, `1Gi`, `2e3`) read as numbers, enough to compare a request
//! with its limit the way `resource.Quantity.Cmp` does.

/// The value of a Kubernetes quantity string, or `None` when it is not one.
pub fn parse_quantity(s: &str) -> Option<f64> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(split);
    let n: f64 = number.parse().ok()?;
    let scale = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        e => {
            let exp: i32 = e.strip_prefix(['e', 'E'])?.parse().ok()?;
            10f64.powi(exp)
        }
    };
    Some(n * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_suffix_form() {
        assert_eq!(parse_quantity("500m"), Some(0.5));
        assert_eq!(parse_quantity("2"), Some(2.0));
        assert_eq!(parse_quantity("1Gi"), Some(1_073_741_824.0));
        assert_eq!(parse_quantity("1k"), Some(1000.0));
        assert_eq!(parse_quantity("2e3"), Some(2000.0));
        assert!(parse_quantity("1000m") == parse_quantity("1"));
        assert!(parse_quantity("1Mi") > parse_quantity("1M"));
        assert_eq!(parse_quantity("x"), None);
        assert_eq!(parse_quantity("1Xi"), None);
    }
}
