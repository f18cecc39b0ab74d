//! Memory of a running process as Linux reports it in `/proc/PID/status`: the peak of its
//! resident set since it started (`VmHWM`, the "high water mark"), which the hostile-input tests
//! bound for every replica, and its current resident set (`VmRSS`), which the read benchmark
//! reports.

use std::fs;
use std::path::PathBuf;

use crate::error::HarnessError;
use crate::error::Result;

/// The field of `/proc/PID/status` that holds the peak resident set size.
const PEAK_RESIDENT: &str = "VmHWM";
/// The field of `/proc/PID/status` that holds the current resident set size.
const RESIDENT: &str = "VmRSS";

/// The peak resident set size of process `pid`, in bytes (`VmHWM`).
pub fn peak_resident_bytes(pid: u32) -> Result<u64> {
    status_kib(pid, PEAK_RESIDENT).map(|kib| kib.saturating_mul(1024))
}

/// The current resident set size of process `pid`, in bytes (`VmRSS`).
pub fn resident_bytes(pid: u32) -> Result<u64> {
    status_kib(pid, RESIDENT).map(|kib| kib.saturating_mul(1024))
}

/// The value of `field` (a line `field:   1234 kB`) in `/proc/<pid>/status`, in KiB.
fn status_kib(pid: u32, field: &'static str) -> Result<u64> {
    let path = PathBuf::from(format!("/proc/{pid}/status"));
    let text = fs::read_to_string(&path).map_err(|source| HarnessError::Io {
        path: path.clone(),
        source,
    })?;
    parse_kib(&text, field).ok_or(HarnessError::ProcStatus { pid, field })
}

/// The number of KiB `field` holds in the text of a `/proc/PID/status` file.
fn parse_kib(status: &str, field: &str) -> Option<u64> {
    status.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        if name != field {
            return None;
        }
        value.trim().strip_suffix("kB")?.trim().parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fields_are_read_in_kib() {
        let status = "Name:\tapiary\nVmPeak:\t  900 kB\nVmHWM:\t   56368 kB\nVmRSS:\t   1024 kB\n";
        assert_eq!(parse_kib(status, PEAK_RESIDENT), Some(56_368));
        assert_eq!(parse_kib(status, RESIDENT), Some(1_024));
        assert_eq!(parse_kib(status, "VmSwap"), None);
    }

    #[test]
    fn this_process_has_a_peak() {
        let now = resident_bytes(std::process::id()).unwrap();
        let peak = peak_resident_bytes(std::process::id()).unwrap();
        assert!(peak > 0, "VmHWM {peak}");
        assert!(now > 0 && now <= peak, "VmRSS {now}, VmHWM {peak}");
    }
}
