//! The environment file of one host: the `apiary serve` flags of its replica as the variables
//! `deploy/systemd/apiary.service` reads (`EnvironmentFile=/etc/apiary/apiary.env`).
//!
//! Values are written unquoted, so they must hold no whitespace, quote, backslash or `$`
//! (systemd and shells would read those differently); [`EnvFile::render`] refuses them.

use std::fmt::Write;

/// The variables of one host's environment file, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvFile {
    /// The replica it configures (named in the file's header).
    pub name: String,
    /// `(variable, value)` pairs.
    pub vars: Vec<(&'static str, String)>,
}

/// A value that cannot be written unquoted.
#[derive(Debug, thiserror::Error)]
#[error("{variable}={value:?}: whitespace, quotes, '\\' and '$' are not allowed")]
pub struct UnsafeValue {
    /// The variable.
    pub variable: &'static str,
    /// Its value.
    pub value: String,
}

impl EnvFile {
    /// The file's text.
    pub fn render(&self) -> Result<String, UnsafeValue> {
        let mut text = format!(
            "# `apiary serve` flags of replica {}, written by `apiary certs`.\n\
             # Install as /etc/apiary/apiary.env on its host (deploy/systemd/apiary.service).\n",
            self.name
        );
        for (variable, value) in &self.vars {
            let unsafe_char =
                |c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '\\' | '$' | '`');
            if value.contains(unsafe_char) {
                return Err(UnsafeValue {
                    variable,
                    value: value.clone(),
                });
            }
            // Writing to a String cannot fail.
            let _ = writeln!(text, "{variable}={value}");
        }
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_are_written_in_order_after_a_header() {
        let file = EnvFile {
            name: "node-1".to_owned(),
            vars: vec![
                ("APIARY_NAME", "node-1".to_owned()),
                ("APIARY_EXTRA_ARGS", String::new()),
            ],
        };
        let text = file.render().unwrap();
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(lines, ["APIARY_NAME=node-1", "APIARY_EXTRA_ARGS="]);
        assert!(text.starts_with("# `apiary serve` flags of replica node-1"));
    }

    #[test]
    fn values_that_need_quoting_are_refused() {
        for value in ["/a b", "a\"b", "$HOME", "a\\b", "a'b", "a\nb"] {
            let file = EnvFile {
                name: "n".to_owned(),
                vars: vec![("APIARY_DATA_DIR", value.to_owned())],
            };
            assert!(file.render().is_err(), "{value:?}");
        }
    }
}
