//! Durations on the command line: a whole number with a unit, `500ms`, `2s`, `5m` or `1h`
//! (the forms Kubernetes' duration flags are usually given in).

use std::time::Duration;

/// Parses `<n>ms`, `<n>s`, `<n>m` or `<n>h`; used as a clap value parser.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} does not start with a whole number"))?;
    let seconds_per_unit = match unit {
        "ms" => return Ok(Duration::from_millis(number)),
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        _ => return Err(format!("{text:?} needs a unit: ms, s, m or h")),
    };
    number
        .checked_mul(seconds_per_unit)
        .map(Duration::from_secs)
        .ok_or_else(|| format!("{text:?} is too long"))
}

/// `duration` as a flag value [`parse_duration`] reads back (in milliseconds, the finest unit
/// it takes).
pub fn format_duration(duration: Duration) -> String {
    format!("{}ms", duration.as_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_parses() {
        assert_eq!(parse_duration("300s"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
    }

    #[test]
    fn formatted_durations_parse_back() {
        for duration in [
            Duration::ZERO,
            Duration::from_millis(1500),
            Duration::from_secs(300),
        ] {
            assert_eq!(parse_duration(&format_duration(duration)), Ok(duration));
        }
    }

    #[test]
    fn malformed_durations_are_rejected() {
        for bad in [
            "",
            "5",
            "s",
            "-5s",
            "1.5s",
            "5 m",
            "5min",
            "99999999999999999999h",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
    }
}
