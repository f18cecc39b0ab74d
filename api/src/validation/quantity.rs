//! Resource quantities (`10Gi`, `500m`, `1e3`), parsed with Kubernetes' grammar into an exact
//! value in nano units (saturating at the i128 range), the one parser every quantity
//! comparison uses (request vs. limit, QoS class, volume sizes).

/// Upstream's `ErrFormatWrong`, the whole message for a malformed quantity.
pub const QUANTITY_FORMAT_MSG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/// The multiplier of a suffix: (power of 2, power of 10).
fn suffix(s: &str) -> Option<(u32, i32)> {
    let binary = |k: u32| Some((10 * k, 0));
    match s {
        "" => Some((0, 0)),
        "Ki" => binary(1),
        "Mi" => binary(2),
        "Gi" => binary(3),
        "Ti" => binary(4),
        "Pi" => binary(5),
        "Ei" => binary(6),
        "n" => Some((0, -9)),
        "u" => Some((0, -6)),
        "m" => Some((0, -3)),
        "k" => Some((0, 3)),
        "M" => Some((0, 6)),
        "G" => Some((0, 9)),
        "T" => Some((0, 12)),
        "P" => Some((0, 15)),
        "E" => Some((0, 18)),
        _ => {
            let exp = s.strip_prefix(['e', 'E'])?;
            let digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Some((0, exp.parse().ok()?))
        }
    }
}

/// The value of `quantity` in nano units (`1` is 1_000_000_000), or `None` when it does not
/// follow the quantity grammar. A value finer than one nano unit is rounded away from zero,
/// as Kubernetes' `ParseQuantity` rounds it, so a tiny non-zero amount stays non-zero.
pub fn parse_quantity_nanos(quantity: &str) -> Option<i128> {
    let (negative, rest) = match quantity.as_bytes().first() {
        Some(b'-') => (true, &quantity[1..]),
        Some(b'+') => (false, &quantity[1..]),
        _ => (false, quantity),
    };
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (number, unit) = rest.split_at(end);
    let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
    if int_part.is_empty() && frac_part.is_empty() || frac_part.contains('.') {
        return None;
    }
    let (pow2, pow10) = suffix(unit)?;
    let mut value: i128 = 0;
    for b in int_part.bytes().chain(frac_part.bytes()) {
        value = value
            .saturating_mul(10)
            .saturating_add(i128::from(b - b'0'));
    }
    value = value.saturating_mul(1i128.checked_shl(pow2).unwrap_or(i128::MAX));
    let scale = i64::from(pow10) + 9 - i64::try_from(frac_part.len()).unwrap_or(i64::MAX);
    if scale >= 0 {
        for _ in 0..scale.min(40) {
            value = value.saturating_mul(10);
        }
    } else {
        let mut dropped = false;
        for _ in 0..(-scale).min(40) {
            dropped |= value % 10 != 0;
            value /= 10;
        }
        if dropped {
            value = value.saturating_add(1);
        }
    }
    Some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_quantity_grammar() {
        const GIB: i128 = 1 << 30;
        assert_eq!(parse_quantity_nanos("1Gi"), Some(GIB * 1_000_000_000));
        assert_eq!(
            parse_quantity_nanos("1G"),
            Some(1_000_000_000 * 1_000_000_000)
        );
        assert_eq!(parse_quantity_nanos("500m"), Some(500_000_000));
        assert_eq!(parse_quantity_nanos("1.5"), Some(1_500_000_000));
        assert_eq!(parse_quantity_nanos("1e3"), Some(1_000_000_000_000));
        assert_eq!(parse_quantity_nanos("-1"), Some(-1_000_000_000));
        assert_eq!(parse_quantity_nanos("0"), Some(0));
        assert!(parse_quantity_nanos("1Gi") > parse_quantity_nanos("1G"));
        for bad in ["", "Gi", "1.2.3", "1 Gi", "1X", "abc", "1e", "1Xi"] {
            assert_eq!(parse_quantity_nanos(bad), None, "{bad}");
        }
    }

    #[test]
    fn is_exact_where_floating_point_was_not() {
        // 2^53 + 1 and 2^53 are one float apart only in exact arithmetic.
        assert!(
            parse_quantity_nanos("9007199254740993") > parse_quantity_nanos("9007199254740992")
        );
        assert_eq!(parse_quantity_nanos("1000m"), parse_quantity_nanos("1"));
        assert_eq!(parse_quantity_nanos("0.1"), Some(100_000_000));
        assert!(parse_quantity_nanos("1Mi") > parse_quantity_nanos("1M"));
        assert_eq!(
            parse_quantity_nanos("1Gi"),
            parse_quantity_nanos("1073741824")
        );
    }

    #[test]
    fn rounds_finer_than_a_nano_away_from_zero() {
        assert_eq!(parse_quantity_nanos("1.0000000001"), Some(1_000_000_001));
        assert_eq!(parse_quantity_nanos("-1.0000000001"), Some(-1_000_000_001));
        assert_eq!(parse_quantity_nanos("1e-20"), Some(1));
        assert_eq!(parse_quantity_nanos("1e-99"), Some(1));
        assert_eq!(parse_quantity_nanos("0e-99"), Some(0));
        assert_eq!(parse_quantity_nanos("1.5n"), Some(2));
    }
}
