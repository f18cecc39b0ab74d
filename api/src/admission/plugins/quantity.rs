//! A resource quantity as the admission plugins add, compare and print it: its exact value
//! (nano units, the validation parser's) and the format its text was written in, printed in
//! Kubernetes' canonical form (`Quantity.String()`: `100m`, `2k`, `1536Mi`, `1e3`), so the
//! plugins' messages name amounts as Kubernetes' do.

use std::fmt;

use crate::validation::parse_quantity_nanos;

/// Nano units in one unit.
const NANOS: i128 = 1_000_000_000;

/// How a quantity is written, as Kubernetes' `resource.Format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// Powers of 1024 (`Ki`, `Mi`, ...).
    BinarySi,
    /// Powers of 1000 (`m`, `k`, `M`, ...) or no suffix.
    DecimalSi,
    /// An exponent (`e3`, `E-3`).
    DecimalExponent,
}

/// One quantity: its value and its format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quantity {
    nanos: i128,
    format: Format,
}

impl Quantity {
    /// `text` parsed, `None` when it is no quantity.
    pub fn parse(text: &str) -> Option<Self> {
        let nanos = parse_quantity_nanos(text)?;
        let unsigned = text.trim_start_matches(['+', '-']);
        let suffix = unsigned.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        let format = if suffix.ends_with('i') {
            Format::BinarySi
        } else if suffix.len() > 1 && suffix.starts_with(['e', 'E']) {
            Format::DecimalExponent
        } else {
            Format::DecimalSi
        };
        Some(Self { nanos, format })
    }

    /// The value in nano units.
    pub fn nanos(self) -> i128 {
        self.nanos
    }

    /// The whole number `count`, written without a suffix (an object count).
    pub fn count(count: i64) -> Self {
        Self {
            nanos: i128::from(count) * NANOS,
            format: Format::DecimalSi,
        }
    }

    /// The difference, in this quantity's format (saturating).
    pub fn minus(self, other: Self) -> Self {
        Self {
            nanos: self.nanos.saturating_sub(other.nanos),
            format: self.format,
        }
    }

    /// Rounded up to a whole unit (`RoundUp(0)`), in this quantity's format.
    pub fn whole(self) -> Self {
        Self {
            nanos: self.value().saturating_mul(NANOS),
            format: self.format,
        }
    }

    /// The sum, in this quantity's format (saturating).
    pub fn plus(self, other: Self) -> Self {
        Self {
            nanos: self.nanos.saturating_add(other.nanos),
            format: self.format,
        }
    }

    /// The value in units, rounded up (`Value()`).
    pub fn value(self) -> i128 {
        ceil_div(self.nanos, NANOS)
    }

    /// The value in thousandths, rounded up (`MilliValue()`).
    pub fn milli_value(self) -> i128 {
        ceil_div(self.nanos, NANOS / 1000)
    }

    /// Whether the milli value fits Kubernetes' int64 (`Value() <= MaxMilliValue`).
    pub fn milli_fits(self) -> bool {
        self.value() <= i128::from(i64::MAX / 1000)
    }

    /// The values the limit checks compare (`requestLimitEnforcedValues`): milli values
    /// when every one of them fits, else units; an absent quantity is 0.
    pub fn comparable<const N: usize>(values: [Option<Self>; N]) -> [i128; N] {
        let fits = values.iter().flatten().all(|q| q.milli_fits());
        values.map(|v| match v {
            Some(q) if fits => q.milli_value(),
            Some(q) => q.value(),
            None => 0,
        })
    }
}

fn ceil_div(nanos: i128, unit: i128) -> i128 {
    let quotient = nanos / unit;
    if nanos % unit > 0 {
        quotient + 1
    } else {
        quotient
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.nanos == 0 {
            return f.write_str("0");
        }
        let sign = if self.nanos < 0 { "-" } else { "" };
        let magnitude = self.nanos.unsigned_abs();
        let binary = self.format == Format::BinarySi
            && magnitude >= 1024 * NANOS.unsigned_abs()
            && magnitude.is_multiple_of(NANOS.unsigned_abs());
        if binary {
            let mut units = magnitude / NANOS.unsigned_abs();
            let mut power = 0;
            while power < 6 && units.is_multiple_of(1024) {
                units /= 1024;
                power += 1;
            }
            let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][power];
            return write!(f, "{sign}{units}{suffix}");
        }
        let (mut mantissa, mut exponent) = (magnitude, -9i32);
        while mantissa.is_multiple_of(1000) {
            mantissa /= 1000;
            exponent += 3;
        }
        let si = match exponent {
            -9 => Some("n"),
            -6 => Some("u"),
            -3 => Some("m"),
            0 => Some(""),
            3 => Some("k"),
            6 => Some("M"),
            9 => Some("G"),
            12 => Some("T"),
            15 => Some("P"),
            18 => Some("E"),
            _ => None,
        };
        match (self.format, si) {
            (Format::DecimalExponent, _) | (_, None) if exponent != 0 => {
                write!(f, "{sign}{mantissa}e{exponent}")
            }
            (_, suffix) => write!(f, "{sign}{mantissa}{}", suffix.unwrap_or("")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(text: &str) -> String {
        Quantity::parse(text)
            .map(|q| q.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn quantities_print_in_kubernetes_canonical_form() {
        assert_eq!(canonical("0.1"), "100m");
        assert_eq!(canonical("100m"), "100m");
        assert_eq!(canonical("1500"), "1500");
        assert_eq!(canonical("2000"), "2k");
        assert_eq!(canonical("1.5Gi"), "1536Mi");
        assert_eq!(canonical("1Gi"), "1Gi");
        assert_eq!(canonical("512"), "512");
        assert_eq!(canonical("100Ki"), "100Ki");
        assert_eq!(
            canonical("0.5Ki"),
            "512",
            "below 1024 a binary amount prints as decimal"
        );
        assert_eq!(canonical("1e3"), "1e3");
        assert_eq!(canonical("1E3"), "1e3");
        assert_eq!(canonical("1E"), "1E", "E alone is exa");
        assert_eq!(canonical("-2k"), "-2k");
        assert_eq!(canonical("0Gi"), "0");
        assert_eq!(canonical("1n"), "1n");
    }

    #[test]
    fn sums_keep_the_first_format() {
        let a = Quantity::parse("1Gi").expect("quantity");
        let b = Quantity::parse("512Mi").expect("quantity");
        assert_eq!(a.plus(b).to_string(), "1536Mi");
        assert_eq!(b.plus(a).to_string(), "1536Mi");
        let milli = Quantity::parse("500m").expect("quantity");
        assert_eq!(
            milli
                .plus(Quantity::parse("1.5").expect("quantity"))
                .to_string(),
            "2"
        );
    }

    #[test]
    fn comparisons_are_in_milli_units_unless_they_would_overflow() {
        let q = |s: &str| Quantity::parse(s);
        assert_eq!(
            Quantity::comparable([q("1"), q("100m"), None]),
            [1000, 100, 0]
        );
        assert_eq!(Quantity::comparable([q("1n")]), [1], "rounded up");
        assert_eq!(
            Quantity::comparable([q("1"), q("10E")]),
            [1, 10i128.pow(19)]
        );
    }
}
