//! The authenticating proxy's flags (`--requestheader-*`, kube-apiserver's names), shared by
//! `apiary serve` and `apiary dev` (which passes them on to every replica), and their checked
//! form.

use std::ffi::OsString;
use std::path::PathBuf;

use apiary_api::auth::RequestHeaderNames;
use clap::Args;

/// The authenticating proxy flags.
#[derive(Debug, Clone, Default, PartialEq, Eq, Args)]
pub struct RequestHeaderArgs {
    /// PEM CA bundle that must have signed an authenticating proxy's client certificate before
    /// its `--requestheader-username-headers` are believed; reloaded when it changes.
    #[arg(long)]
    pub requestheader_client_ca_file: Option<PathBuf>,
    /// Request headers naming the user, checked in order (case-insensitive); the first
    /// non-empty one wins (`X-Remote-User`). Required with the CA file.
    #[arg(long, value_delimiter = ',')]
    pub requestheader_username_headers: Vec<String>,
    /// Request headers naming the user's uid, checked in order (`X-Remote-Uid`).
    #[arg(long, value_delimiter = ',')]
    pub requestheader_uid_headers: Vec<String>,
    /// Request headers whose every value is a group (`X-Remote-Group`).
    #[arg(long, value_delimiter = ',')]
    pub requestheader_group_headers: Vec<String>,
    /// Prefixes of request headers whose suffix (lower-cased, percent-decoded) is an extra
    /// attribute of the user (`X-Remote-Extra-`).
    #[arg(long, value_delimiter = ',')]
    pub requestheader_extra_headers_prefix: Vec<String>,
    /// Common names an authenticating proxy's certificate may have; empty: any the CA signed.
    #[arg(long, value_delimiter = ',')]
    pub requestheader_allowed_names: Vec<String>,
}

/// The authenticating proxy as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestHeaderSettings {
    /// The CA bundle of the proxies' certificates.
    pub client_ca: PathBuf,
    /// The headers read and the common names allowed.
    pub names: RequestHeaderNames,
}

/// Why the proxy flags cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestHeaderError {
    /// The CA file is given without username headers.
    #[error("--requestheader-client-ca-file needs --requestheader-username-headers")]
    NoUsernameHeaders,
    /// Header flags are given without the CA file that makes them safe to read.
    #[error("--requestheader-* flags need --requestheader-client-ca-file")]
    NoClientCa,
}

impl RequestHeaderArgs {
    /// The checked settings; `None` when no proxy is configured.
    pub fn settings(&self) -> Result<Option<RequestHeaderSettings>, RequestHeaderError> {
        let Some(client_ca) = &self.requestheader_client_ca_file else {
            let any_header = [
                &self.requestheader_username_headers,
                &self.requestheader_uid_headers,
                &self.requestheader_group_headers,
                &self.requestheader_extra_headers_prefix,
                &self.requestheader_allowed_names,
            ]
            .iter()
            .any(|list| !list.is_empty());
            return if any_header {
                Err(RequestHeaderError::NoClientCa)
            } else {
                Ok(None)
            };
        };
        if self.requestheader_username_headers.is_empty() {
            return Err(RequestHeaderError::NoUsernameHeaders);
        }
        Ok(Some(RequestHeaderSettings {
            client_ca: client_ca.clone(),
            names: RequestHeaderNames {
                username: self.requestheader_username_headers.clone(),
                uid: self.requestheader_uid_headers.clone(),
                group: self.requestheader_group_headers.clone(),
                extra_prefixes: self.requestheader_extra_headers_prefix.clone(),
                allowed_names: self.requestheader_allowed_names.clone(),
            },
        }))
    }

    /// The same flags for a replica's `apiary serve` command line (the CA file made absolute).
    pub fn replica_flags(&self) -> Vec<OsString> {
        let mut flags = Vec::new();
        if let Some(ca) = &self.requestheader_client_ca_file {
            let mut flag = OsString::from("--requestheader-client-ca-file=");
            flag.push(std::path::absolute(ca).unwrap_or_else(|_| ca.clone()));
            flags.push(flag);
        }
        let lists = [
            ("username-headers", &self.requestheader_username_headers),
            ("uid-headers", &self.requestheader_uid_headers),
            ("group-headers", &self.requestheader_group_headers),
            (
                "extra-headers-prefix",
                &self.requestheader_extra_headers_prefix,
            ),
            ("allowed-names", &self.requestheader_allowed_names),
        ];
        for (name, values) in lists {
            if !values.is_empty() {
                flags.push(format!("--requestheader-{name}={}", values.join(",")).into());
            }
        }
        flags
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(ca: Option<&str>, users: &[&str], groups: &[&str]) -> RequestHeaderArgs {
        RequestHeaderArgs {
            requestheader_client_ca_file: ca.map(PathBuf::from),
            requestheader_username_headers: users.iter().map(|s| (*s).to_owned()).collect(),
            requestheader_group_headers: groups.iter().map(|s| (*s).to_owned()).collect(),
            ..RequestHeaderArgs::default()
        }
    }

    // R-ACC-128, R-ACC-131: the proxy needs both its CA file and its username headers.
    #[test]
    fn ca_file_and_username_headers_go_together() {
        assert_eq!(args(None, &[], &[]).settings(), Ok(None));
        assert_eq!(
            args(Some("/ca.crt"), &[], &[]).settings(),
            Err(RequestHeaderError::NoUsernameHeaders)
        );
        assert_eq!(
            args(None, &["X-Remote-User"], &[]).settings(),
            Err(RequestHeaderError::NoClientCa)
        );
        let settings = args(Some("/ca.crt"), &["X-Remote-User"], &["X-Remote-Group"])
            .settings()
            .expect("valid")
            .expect("configured");
        assert_eq!(settings.names.username, vec!["X-Remote-User"]);
        assert_eq!(settings.names.group, vec!["X-Remote-Group"]);
    }

    // The flags `apiary dev` passes on parse back to the same flags.
    #[test]
    fn replica_flags_round_trip() {
        let original = args(
            Some("/ca.crt"),
            &["X-Remote-User", "X-User"],
            &["X-Remote-Group"],
        );
        let flags = original.replica_flags();
        #[derive(clap::Parser)]
        struct Probe {
            #[command(flatten)]
            proxy: RequestHeaderArgs,
        }
        let parsed = <Probe as clap::Parser>::try_parse_from(
            std::iter::once(OsString::from("probe")).chain(flags),
        )
        .expect("parses");
        assert_eq!(parsed.proxy, original);
    }
}
