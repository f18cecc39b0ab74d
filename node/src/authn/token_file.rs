//! The static token file (`--token-auth-file`, spec 001 "Static token file", R-ACC-116..118):
//! a CSV file of `token,user,uid[,"group1,group2"]` rows read once at start-up, and the
//! [`TokenAuthenticator`] that recognises its tokens. Rows are parsed as kube-apiserver parses
//! them (Go's CSV reader with leading spaces trimmed and any number of columns); a bad row stops
//! start-up with an error that names the file and the line, never the token. Tokens are kept
//! only as SHA-256 digests and compared in constant time.

use std::path::Path;
use std::path::PathBuf;

use apiary_api::auth::AuthContext;
use apiary_api::auth::TokenAuthenticator;
use apiary_api::auth::TokenOutcome;
use apiary_api::auth::TokenUser;
use apiary_api::auth::UserInfo;
use sha2::Digest;
use sha2::Sha256;

/// Why the token file could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenFileError {
    /// The file could not be read.
    #[error("--token-auth-file {}: {problem}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What failed.
        problem: String,
    },
    /// A row is not valid CSV (the problem names no field's content).
    #[error("--token-auth-file {}: parse error on line {line}: {problem}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The 1-based line the problem is on.
        line: usize,
        /// What is wrong.
        problem: &'static str,
    },
    /// A row has fewer than the three required columns.
    #[error(
        "--token-auth-file {}: the record on line {line} must have at least 3 columns (token, user name, user uid), found {found}",
        path.display()
    )]
    Columns {
        /// The file.
        path: PathBuf,
        /// The 1-based line the row starts on.
        line: usize,
        /// How many columns it has.
        found: usize,
    },
}

/// The users of the static token file, by the SHA-256 digest of their token.
#[derive(Debug, Clone)]
pub struct TokenFile {
    entries: Vec<([u8; 32], UserInfo)>,
}

impl TokenFile {
    /// Reads and checks the token file at `path` (once: later changes need a restart,
    /// R-ACC-118).
    pub fn read(path: &Path) -> Result<Self, TokenFileError> {
        let text = std::fs::read_to_string(path).map_err(|e| TokenFileError::Read {
            path: path.to_owned(),
            problem: e.to_string(),
        })?;
        Self::parse(&text).map_err(|problem| problem.at(path))
    }

    /// The token file whose content is `text`.
    fn parse(text: &str) -> Result<Self, RowProblem> {
        let mut entries: Vec<([u8; 32], UserInfo)> = Vec::new();
        for (line, record) in records(text)? {
            if record.len() < 3 {
                return Err(RowProblem::Columns {
                    line,
                    found: record.len(),
                });
            }
            if record[0].is_empty() {
                tracing::warn!(line, "--token-auth-file: a row without a token is skipped");
                continue;
            }
            let user = UserInfo {
                name: record[1].clone(),
                uid: record[2].clone(),
                groups: record.get(3).map_or_else(Vec::new, |groups| {
                    groups
                        .split(',')
                        .filter(|g| !g.is_empty())
                        .map(str::to_owned)
                        .collect()
                }),
                ..UserInfo::default()
            };
            let digest = digest(&record[0]);
            if let Some(entry) = entries.iter_mut().find(|(d, _)| *d == digest) {
                tracing::warn!(
                    line,
                    "--token-auth-file: a duplicate token replaces an earlier row"
                );
                entry.1 = user;
            } else {
                entries.push((digest, user));
            }
        }
        Ok(Self { entries })
    }

    /// The user of `token`, comparing its digest with every row's in constant time.
    fn user(&self, token: &str) -> Option<&UserInfo> {
        let wanted = digest(token);
        let mut found = None;
        for (digest, user) in &self.entries {
            if constant_time_eq(digest, &wanted) {
                found = Some(user);
            }
        }
        found
    }
}

#[async_trait::async_trait]
impl TokenAuthenticator for TokenFile {
    /// A listed token is valid for every audience (R-ACC-117); any other is not this file's.
    async fn authenticate_token(&self, token: &str, _context: &AuthContext<'_>) -> TokenOutcome {
        match self.user(token) {
            Some(user) => TokenOutcome::Authenticated(TokenUser {
                user: user.clone(),
                audiences: Vec::new(),
            }),
            None => TokenOutcome::NotMine,
        }
    }
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Whether `a` and `b` are equal, in a time that does not depend on where they differ.
fn constant_time_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// A problem of the file's text, before its path is known.
#[derive(Debug, PartialEq, Eq)]
enum RowProblem {
    Parse { line: usize, problem: &'static str },
    Columns { line: usize, found: usize },
}

impl RowProblem {
    fn at(self, path: &Path) -> TokenFileError {
        let path = path.to_owned();
        match self {
            Self::Parse { line, problem } => TokenFileError::Parse {
                path,
                line,
                problem,
            },
            Self::Columns { line, found } => TokenFileError::Columns { path, line, found },
        }
    }
}

/// The CSV records of `text` with the line each starts on, as Go's `encoding/csv` reads them
/// with `TrimLeadingSpace`: empty lines skipped, fields separated by commas, a field quoted
/// with `"` may hold commas, newlines and `""` for a quote; a quote inside an unquoted field,
/// or a quoted field not closed or followed by more than a comma, is an error.
fn records(text: &str) -> Result<Vec<(usize, Vec<String>)>, RowProblem> {
    let text = text.replace("\r\n", "\n");
    let mut chars = text.chars().peekable();
    let mut line = 1;
    let mut out = Vec::new();
    while chars.peek().is_some() {
        if chars.peek() == Some(&'\n') {
            chars.next();
            line += 1;
            continue;
        }
        let start = line;
        let mut record = Vec::new();
        loop {
            while chars
                .peek()
                .is_some_and(|c| *c != '\n' && c.is_whitespace())
            {
                chars.next();
            }
            let mut field = String::new();
            if chars.peek() == Some(&'"') {
                chars.next();
                loop {
                    match chars.next() {
                        None => {
                            return Err(RowProblem::Parse {
                                line,
                                problem: "extraneous or missing \" in quoted-field",
                            });
                        }
                        Some('"') if chars.peek() == Some(&'"') => {
                            chars.next();
                            field.push('"');
                        }
                        Some('"') => break,
                        Some(c) => {
                            if c == '\n' {
                                line += 1;
                            }
                            field.push(c);
                        }
                    }
                }
                if !matches!(chars.peek(), None | Some(',' | '\n')) {
                    return Err(RowProblem::Parse {
                        line,
                        problem: "extraneous or missing \" in quoted-field",
                    });
                }
            } else {
                while let Some(c) = chars.peek().copied().filter(|c| !matches!(c, ',' | '\n')) {
                    if c == '"' {
                        return Err(RowProblem::Parse {
                            line,
                            problem: "bare \" in non-quoted-field",
                        });
                    }
                    field.push(c);
                    chars.next();
                }
            }
            record.push(field);
            match chars.next() {
                Some(',') => {}
                Some(_) => {
                    line += 1;
                    break;
                }
                None => break,
            }
        }
        out.push((start, record));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(name: &str, uid: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.to_owned(),
            uid: uid.to_owned(),
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
            ..UserInfo::default()
        }
    }

    // R-ACC-116, R-ACC-117: token, user name, uid, then an optional groups column that may hold
    // several groups in quotes; each token authenticates as its row's user.
    #[test]
    fn rows_give_users_and_groups() {
        let file = TokenFile::parse(
            "t1,alice,1\n\n t2, bob ,2,\"system:masters,dev\"\r\nt3,carol,3,ops,ignored\n\"t,4\",\"d\"\"an\",4\n",
        )
        .expect("valid");
        assert_eq!(file.user("t1"), Some(&user("alice", "1", &[])));
        assert_eq!(
            file.user("t2"),
            Some(&user("bob ", "2", &["system:masters", "dev"]))
        );
        assert_eq!(file.user("t3"), Some(&user("carol", "3", &["ops"])));
        assert_eq!(file.user("t,4"), Some(&user("d\"an", "4", &[])));
        assert_eq!(file.user("t"), None);
        assert_eq!(file.user("t1 "), None);
    }

    // R-ACC-116: a row without a token is skipped; a repeated token takes the later row.
    #[test]
    fn empty_tokens_are_skipped_and_later_rows_win() {
        let file = TokenFile::parse(",nobody,0\nt,first,1\nt,second,2\n").expect("valid");
        assert_eq!(file.user(""), None);
        assert_eq!(file.user("t"), Some(&user("second", "2", &[])));
    }

    // R-ACC-116: bad rows are errors naming the line, never the token.
    #[test]
    fn bad_rows_name_the_line_not_the_token() {
        let cases = [
            ("ok,a,1\nsecret-token,bob\n", 2, "at least 3 columns"),
            ("ok,a,1\nsec\"ret,bob,2\n", 2, "bare \""),
            ("ok,a,1\n\"secret\"x,bob,2\n", 2, "extraneous or missing"),
            ("ok,a,1\n\"secret,bob,2\n", 3, "extraneous or missing"),
        ];
        for (text, line, words) in cases {
            let problem = TokenFile::parse(text).expect_err(text);
            let error = problem.at(Path::new("/etc/tokens.csv")).to_string();
            assert!(error.contains(&format!("line {line}")), "{error}");
            assert!(error.contains(words), "{error}");
            assert!(error.contains("/etc/tokens.csv"), "{error}");
            assert!(
                !error.contains("secret") && !error.contains("sec"),
                "{error}"
            );
        }
    }
}
