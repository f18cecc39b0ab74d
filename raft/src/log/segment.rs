//! Segment files and the in-memory record of where each entry lives in them.
//!
//! A segment file holds consecutive entries as framed records (see `record`) and is named by the
//! index of its first entry, zero-padded so that names sort in log order.

use crate::typ::LogId;

/// File-name suffix of segment files.
const SUFFIX: &str = ".wal";

/// The file name of the segment whose first entry has index `first`.
pub(crate) fn file_name(first: u64) -> String {
    format!("{first:020}{SUFFIX}")
}

/// The first index of the segment with this file name; `None` for other files.
pub(crate) fn parse_file_name(name: &str) -> Option<u64> {
    let digits = name.strip_suffix(SUFFIX)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Where one entry's record is, and which write put it there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    /// The entry's log id, so that log ids are answered without reading the disk.
    pub(crate) log_id: LogId,
    /// The segment holding the record (its first index).
    pub(crate) segment: u64,
    /// Where the record starts in the segment.
    pub(crate) offset: u64,
    /// The record's length, header included.
    pub(crate) len: u64,
    /// The writer operation that writes the record; the record is in the file once the writer
    /// has finished this operation. Entries found on disk when opening have 0.
    pub(crate) seq: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_sort_in_log_order_and_parse_back() {
        let names: Vec<String> = [9, 10, 1_000_000].into_iter().map(file_name).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        for (name, first) in names.iter().zip([9, 10, 1_000_000]) {
            assert_eq!(Some(first), parse_file_name(name));
        }
        assert_eq!(None, parse_file_name("log-state"));
        assert_eq!(None, parse_file_name(".wal"));
        assert_eq!(None, parse_file_name("-1.wal"));
        assert_eq!(None, parse_file_name("99999999999999999999999.wal"));
    }
}
