//! The CronJob schedule as upstream parses it (robfig/cron's standard parser): five fields
//! (minute, hour, day of month, month, day of week) of `*`, `?`, numbers, names, ranges,
//! steps and lists, or a descriptor (`@hourly`, `@every 1h30m`, ...), optionally after a
//! `TZ=`/`CRON_TZ=` location. Errors carry the parser's wording.

use chrono_tz::Tz;

/// One field's bounds and names.
struct Bounds {
    min: u32,
    max: u32,
    names: &'static [&'static str],
}

const MONTHS: &[&str] = &[
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const DAYS: &[&str] = &["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
const FIELDS: [Bounds; 5] = [
    Bounds {
        min: 0,
        max: 59,
        names: &[],
    },
    Bounds {
        min: 0,
        max: 23,
        names: &[],
    },
    Bounds {
        min: 1,
        max: 31,
        names: &[],
    },
    Bounds {
        min: 1,
        max: 12,
        names: MONTHS,
    },
    Bounds {
        min: 0,
        max: 6,
        names: DAYS,
    },
];
const DESCRIPTORS: &[&str] = &[
    "@yearly",
    "@annually",
    "@monthly",
    "@weekly",
    "@daily",
    "@midnight",
    "@hourly",
];

/// Whether `name` is a known IANA time zone (what Go's `time.LoadLocation` accepts, besides
/// `Local`, which callers refuse themselves).
pub fn known_time_zone(name: &str) -> bool {
    name.parse::<Tz>().is_ok()
}

/// Parses `spec`; the error is the parser's message.
pub fn parse_schedule(spec: &str) -> Result<(), String> {
    if spec.is_empty() {
        return Err("empty spec string".to_owned());
    }
    let mut spec = spec;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        let space = spec.find(' ').unwrap_or(spec.len());
        let eq = spec.find('=').unwrap_or(0);
        let location = &spec[eq + 1..space];
        if !known_time_zone(location) {
            return Err(format!(
                "provided bad location {location}: unknown time zone {location}"
            ));
        }
        spec = spec[space..].trim();
    }
    if spec.starts_with('@') {
        return parse_descriptor(spec);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != FIELDS.len() {
        return Err(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    for (field, bounds) in fields.iter().zip(&FIELDS) {
        for expr in field.split(',').filter(|e| !e.is_empty()) {
            parse_range(expr, bounds)?;
        }
    }
    Ok(())
}

fn parse_descriptor(spec: &str) -> Result<(), String> {
    if DESCRIPTORS.contains(&spec) {
        return Ok(());
    }
    if let Some(duration) = spec.strip_prefix("@every ") {
        return parse_duration(duration)
            .map_err(|e| format!("failed to parse duration {spec}: {e}"));
    }
    Err(format!("unrecognized descriptor: {spec}"))
}

/// Go's `time.ParseDuration` shape: `[-+]?(<number><unit>)+` with units ns us µs ms s m h.
fn parse_duration(s: &str) -> Result<(), String> {
    let invalid = || format!("time: invalid duration {s:?}");
    let mut rest = s.strip_prefix(['-', '+']).unwrap_or(s);
    if rest == "0" {
        return Ok(());
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err(invalid());
        }
        rest = &rest[digits..];
        let unit = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        if !["ns", "us", "µs", "ms", "s", "m", "h"].contains(&&rest[..unit]) {
            return Err(if unit == 0 {
                format!("time: missing unit in duration {s:?}")
            } else {
                format!("time: unknown unit {:?} in duration {s:?}", &rest[..unit])
            });
        }
        rest = &rest[unit..];
    }
    Ok(())
}

fn parse_range(expr: &str, bounds: &Bounds) -> Result<(), String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let (start, mut end) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
        (bounds.min, bounds.max)
    } else {
        let start = parse_int_or_name(low_and_high[0], bounds.names)?;
        match low_and_high.len() {
            1 => (start, start),
            2 => (start, parse_int_or_name(low_and_high[1], bounds.names)?),
            _ => return Err(format!("too many hyphens: {expr}")),
        }
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = parse_int(range_and_step[1])?;
            if low_and_high.len() == 1 {
                end = bounds.max;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < bounds.min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({}): {expr}",
            bounds.min
        ));
    }
    if end > bounds.max {
        return Err(format!(
            "end of range ({end}) above maximum ({}): {expr}",
            bounds.max
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(())
}

fn parse_int_or_name(expr: &str, names: &[&str]) -> Result<u32, String> {
    let lower = expr.to_lowercase();
    if let Some(i) = names.iter().position(|n| *n == lower) {
        // Months count from 1, days of the week from 0.
        let offset = u32::from(names.len() == MONTHS.len());
        return Ok(u32::try_from(i).unwrap_or(0) + offset);
    }
    parse_int(expr)
}

/// Go's `strconv.Atoi` with robfig's negative check and messages.
fn parse_int(expr: &str) -> Result<u32, String> {
    let n: i64 = expr.parse().map_err(|_| {
        format!("failed to parse int from {expr}: strconv.Atoi: parsing {expr:?}: invalid syntax")
    })?;
    if n < 0 {
        return Err(format!("negative number ({n}) not allowed: {expr}"));
    }
    u32::try_from(n).map_err(|_| {
        format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing {expr:?}: value out of range"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_standard_schedules() {
        for ok in [
            "*/5 * * * *",
            "0 0 * * 0",
            "0 9-17 * * mon-fri",
            "15,45 */2 1 JAN,jul ?",
            "5/15 * * * *",
            "@hourly",
            "@every 1h30m",
            "TZ=Europe/Paris 0 * * * *",
        ] {
            assert_eq!(parse_schedule(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn errors_carry_the_parsers_wording() {
        let cases = [
            ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
            ("60 * * * *", "end of range (60) above maximum (59): 60"),
            ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
            (
                "5-1 * * * *",
                "beginning of range (5) beyond end of range (1): 5-1",
            ),
            (
                "*/0 * * * *",
                "step of range should be a positive number: */0",
            ),
            ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
            ("1/2/3 * * * *", "too many slashes: 1/2/3"),
            (
                "x * * * *",
                r#"failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax"#,
            ),
            ("@fortnightly", "unrecognized descriptor: @fortnightly"),
            (
                "@every 5",
                r#"failed to parse duration @every 5: time: missing unit in duration "5""#,
            ),
            (
                "TZ=Mars/Olympus * * * * *",
                "provided bad location Mars/Olympus: unknown time zone Mars/Olympus",
            ),
        ];
        for (spec, message) in cases {
            assert_eq!(parse_schedule(spec), Err(message.to_owned()), "{spec}");
        }
    }

    #[test]
    fn time_zones_are_iana_names() {
        assert!(known_time_zone("America/New_York"));
        assert!(known_time_zone("UTC"));
        assert!(!known_time_zone("Mars/Olympus"));
    }
}
