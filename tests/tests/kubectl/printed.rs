//! kubectl's human-readable tables read back: the header line split into column names and each
//! row into the cells under them. kubectl aligns columns with a tab writer (three spaces of
//! padding at least), so a column starts where its header does, column names hold single
//! spaces only, and an empty cell is blank space under its header.

/// A table kubectl printed.
#[derive(Debug)]
pub(crate) struct Printed {
    /// The column names, as printed (upper case).
    pub(crate) header: Vec<String>,
    /// The cells of each row, one per column.
    rows: Vec<Vec<String>>,
}

/// Where each column of `header` starts: the first character, and every non-space one after
/// two spaces.
fn column_starts(header: &str) -> Vec<usize> {
    let bytes = header.as_bytes();
    (0..bytes.len())
        .filter(|&i| {
            bytes[i] != b' ' && (i == 0 || (i >= 2 && bytes[i - 1] == b' ' && bytes[i - 2] == b' '))
        })
        .collect()
}

/// The text of `line` between `start` and `end` (or its end), trimmed.
fn slice(line: &str, start: usize, end: Option<usize>) -> String {
    let end = end.unwrap_or(line.len()).min(line.len());
    line.get(start.min(end)..end)
        .unwrap_or("")
        .trim()
        .to_owned()
}

impl Printed {
    /// Reads the table in `out`: its first non-empty line is the header.
    pub(crate) fn parse(out: &str) -> Self {
        let mut lines = out.lines().filter(|l| !l.trim().is_empty());
        let header_line = lines
            .next()
            .unwrap_or_else(|| panic!("no table in {out:?}"));
        let starts = column_starts(header_line);
        let split = |line: &str| -> Vec<String> {
            (0..starts.len())
                .map(|i| slice(line, starts[i], starts.get(i + 1).copied()))
                .collect()
        };
        Printed {
            header: split(header_line),
            rows: lines.map(split).collect(),
        }
    }

    /// The index of `column`; fails the test when it is not printed.
    fn index(&self, column: &str) -> usize {
        self.header
            .iter()
            .position(|c| c == column)
            .unwrap_or_else(|| panic!("no column {column:?} in {:?}", self.header))
    }

    /// The row whose `column` cell is `value`; fails the test when there is none.
    pub(crate) fn row_where(&self, column: &str, value: &str) -> Vec<(String, String)> {
        let index = self.index(column);
        let row = self
            .rows
            .iter()
            .find(|row| row[index] == value)
            .unwrap_or_else(|| panic!("no row with {column} {value:?} in {self:?}"));
        self.header
            .iter()
            .cloned()
            .zip(row.iter().cloned())
            .collect()
    }

    /// Asserts the cells of the row whose `NAME` is `name` (or whose `column` is `name`, for
    /// tables without a `NAME` column first): each `(column, value)` of `expected`.
    pub(crate) fn assert_row(&self, column: &str, name: &str, expected: &[(&str, &str)]) {
        let row = self.row_where(column, name);
        for (wanted, value) in expected {
            let cell = row
                .iter()
                .find(|(c, _)| c == wanted)
                .unwrap_or_else(|| panic!("no column {wanted:?} in {:?}", self.header));
            assert_eq!(cell.1, *value, "{wanted} of {name} in {self:?}");
        }
    }

    /// How many rows there are.
    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }
}

mod tests {
    use super::Printed;

    #[test]
    fn cells_line_up_under_headers_with_blanks_and_spaces() {
        let out = "NAME   STATUS   VOLUME   LAST SEEN   MESSAGE\n\
                   a      Pending           5m          Started container web\n\
                   bb     Bound    pv-1     <unknown>   x\n";
        let printed = Printed::parse(out);
        assert_eq!(
            printed.header,
            ["NAME", "STATUS", "VOLUME", "LAST SEEN", "MESSAGE"]
        );
        printed.assert_row(
            "NAME",
            "a",
            &[
                ("VOLUME", ""),
                ("LAST SEEN", "5m"),
                ("MESSAGE", "Started container web"),
            ],
        );
        printed.assert_row("NAME", "bb", &[("VOLUME", "pv-1"), ("STATUS", "Bound")]);
        assert_eq!(printed.len(), 2);
    }
}
