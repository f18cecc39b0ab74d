//! The string formats kube-openapi's `strfmt` registry checks in custom resources (`uuid`,
//! `date-time`, `ipv4`, `byte`, ...), each as its Go parser accepts values.

use std::net::IpAddr;
use std::net::Ipv4Addr;
use std::net::Ipv6Addr;
use std::sync::OnceLock;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chrono::DateTime;
use chrono::NaiveDate;
use chrono::NaiveDateTime;
use regex::Regex;

use crate::validation::validate_dns_label;
use crate::validation::validate_dns_subdomain;

/// Whether `$s` matches `$pattern`, compiled once (a pattern that does not compile matches
/// nothing).
macro_rules! matches_rx {
    ($pattern:expr, $s:expr) => {{
        static CELL: OnceLock<Option<Regex>> = OnceLock::new();
        CELL.get_or_init(|| Regex::new($pattern).ok())
            .as_ref()
            .is_some_and(|r| r.is_match($s))
    }};
}

/// The formats kube-openapi checks strings against, with `-` removed as go-openapi
/// normalizes names (those of Kubernetes 1.34: `k8s-short-name` and `k8s-long-name` too).
const STRING_FORMATS: &[&str] = &[
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "duration",
    "datetime",
    "k8sshortname",
    "k8slongname",
];

/// Whether `format` (normalized: without `-`) is one kube-openapi checks.
pub(super) fn known(format: &str) -> bool {
    STRING_FORMATS.contains(&format)
}

/// Whether `s` is a valid `format` (a normalized name, without `-`).
pub(super) fn valid(format: &str, s: &str) -> bool {
    match format {
        "bsonobjectid" => s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit()),
        "uri" => uri(s),
        "email" => matches_rx!(r"^[^@\s<>]+@[^@\s<>]+$", s),
        "hostname" => hostname(s),
        "ipv4" => s.parse::<Ipv4Addr>().is_ok(),
        "ipv6" => s.contains(':') && s.parse::<Ipv6Addr>().is_ok(),
        "cidr" => cidr(s),
        "mac" => mac(s),
        "uuid" => matches_rx!(
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
            s
        ),
        "uuid3" => matches_rx!(
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
            s
        ),
        "uuid4" => matches_rx!(
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
            s
        ),
        "uuid5" => matches_rx!(
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
            s
        ),
        "isbn" => isbn10(s) || isbn13(s),
        "isbn10" => isbn10(s),
        "isbn13" => isbn13(s),
        "creditcard" => {
            let digits: String = s.chars().filter(char::is_ascii_digit).collect();
            matches_rx!(
                r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$",
                &digits
            )
        }
        "ssn" => matches_rx!(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$", s),
        "hexcolor" => matches_rx!(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$", s),
        "rgbcolor" => matches_rx!(
            r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$",
            s
        ),
        "byte" => STANDARD.decode(s).is_ok(),
        "date" => NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok(),
        "duration" => duration(s),
        "datetime" => date_time(s),
        "k8sshortname" => validate_dns_label(s).is_empty(),
        "k8slongname" => validate_dns_subdomain(s).is_empty(),
        _ => true,
    }
}

/// Go's `url.ParseRequestURI`: an absolute URI or an absolute path, without spaces.
fn uri(s: &str) -> bool {
    if s.is_empty() || s.contains(char::is_whitespace) {
        return false;
    }
    if s.starts_with('/') {
        return true;
    }
    matches_rx!(r"^[A-Za-z][A-Za-z0-9+.\-]*:.+", s)
}

/// RFC 1034 host names: dot-separated labels of letters, digits and `-`, at most 255 bytes.
fn hostname(s: &str) -> bool {
    s.len() <= 255
        && matches_rx!(
            r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
            s
        )
}

/// Go's `net.ParseCIDR`.
fn cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let Ok(ip) = ip.parse::<IpAddr>() else {
        return false;
    };
    let max = if ip.is_ipv4() { 32 } else { 128 };
    !bits.is_empty()
        && bits.len() <= 3
        && bits.bytes().all(|b| b.is_ascii_digit())
        && bits.parse::<u32>().is_ok_and(|b| b <= max)
}

/// Go's `net.ParseMAC`: 6, 8 or 20 octets, `:`- or `-`-separated pairs or `.`-separated
/// groups of four.
fn mac(s: &str) -> bool {
    let pairs = |sep: char| {
        let parts: Vec<&str> = s.split(sep).collect();
        matches!(parts.len(), 6 | 8 | 20)
            && parts
                .iter()
                .all(|p| p.len() == 2 && p.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    let quads = || {
        let parts: Vec<&str> = s.split('.').collect();
        matches!(parts.len(), 3 | 4 | 10)
            && parts
                .iter()
                .all(|p| p.len() == 4 && p.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    pairs(':') || pairs('-') || quads()
}

fn isbn_digits(s: &str) -> Vec<char> {
    s.chars().filter(|c| *c != '-' && *c != ' ').collect()
}

fn isbn10(s: &str) -> bool {
    let d = isbn_digits(s);
    if d.len() != 10 {
        return false;
    }
    let mut sum = 0;
    for (i, c) in d.iter().enumerate() {
        let v = match (i, c) {
            (9, 'X' | 'x') => 10,
            (_, c) => match c.to_digit(10) {
                Some(v) => v,
                None => return false,
            },
        };
        sum += (10 - i as u32) * v;
    }
    sum % 11 == 0
}

fn isbn13(s: &str) -> bool {
    let d = isbn_digits(s);
    if d.len() != 13 {
        return false;
    }
    let mut sum = 0;
    for (i, c) in d.iter().enumerate() {
        let Some(v) = c.to_digit(10) else {
            return false;
        };
        sum += if i % 2 == 0 { v } else { 3 * v };
    }
    sum % 10 == 0
}

/// kube-openapi's `ParseDuration`: Go's `time.ParseDuration` syntax, or a number and a unit
/// word (`3 days`, `1w`).
fn duration(s: &str) -> bool {
    matches_rx!(r"^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$", s)
        || s == "0"
        || matches_rx!(
            r"^(\d+)\s*(ns|us|ms|s|m|h|d|w|nanoseconds?|microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?)$",
            s
        )
}

/// kube-openapi's `ParseDateTime`: RFC 3339 (with or without fractions), also without a
/// zone or with a `+hhmm` zone.
fn date_time(s: &str) -> bool {
    DateTime::parse_from_rfc3339(s).is_ok()
        || DateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f%z").is_ok()
        || NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f").is_ok()
}
