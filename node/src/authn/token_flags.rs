//! The flags of anonymous requests, the static token file and the authentication webhook
//! (`--anonymous-auth`, `--token-auth-file`, `--authentication-token-webhook-*`), checked into
//! [`TokenAuthSettings`], which installs them into the API's [`AuthenticationMethods`] at
//! start-up, and passed on by `apiary dev` to every replica.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use apiary_api::Flavor;
use apiary_api::auth::Anonymous;
use apiary_api::auth::AuthenticationMethods;
use apiary_api::auth::jwt::AnonymousSettings;
use clap::ArgAction;
use clap::Args;

use super::token_file::TokenFile;
use super::token_file::TokenFileError;
use super::webhook::ReviewVersion;
use super::webhook::TokenWebhook;
use crate::dev::path_flags;
use crate::duration::format_duration;
use crate::duration::parse_duration;

/// Flags of anonymous requests, the token file and the authentication webhook, shared by
/// `apiary serve` and `apiary dev` (which passes them on).
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct TokenAuthArgs {
    /// Let requests without credentials in as `system:anonymous` (group
    /// `system:unauthenticated`); authorization then decides what they may do. On unless
    /// `--authentication-config` has an `anonymous` block (then not allowed).
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub anonymous_auth: Option<bool>,
    /// CSV file of static bearer tokens: `token,user,uid[,"group1,group2"]`, read once at start.
    #[arg(long)]
    pub token_auth_file: Option<PathBuf>,
    /// Kubeconfig naming the authentication webhook server (its CA, and the client
    /// certificate or token this server presents to it).
    #[arg(long)]
    pub authentication_token_webhook_config_file: Option<PathBuf>,
    /// The TokenReview version sent to the authentication webhook.
    #[arg(long, default_value = "v1beta1", value_parser = ["v1", "v1beta1"])]
    pub authentication_token_webhook_version: String,
    /// How long the authentication webhook's answers are kept (`0s`: not kept).
    #[arg(long, default_value = "2m", value_parser = parse_duration)]
    pub authentication_token_webhook_cache_ttl: Duration,
}

impl Default for TokenAuthArgs {
    /// The flags' defaults.
    fn default() -> Self {
        Self {
            anonymous_auth: None,
            token_auth_file: None,
            authentication_token_webhook_config_file: None,
            authentication_token_webhook_version: "v1beta1".to_owned(),
            authentication_token_webhook_cache_ttl: Duration::from_secs(120),
        }
    }
}

impl TokenAuthArgs {
    /// The flags a dev replica gets for these (paths made absolute).
    pub fn replica_flags(&self) -> Vec<OsString> {
        let mut flags: Vec<OsString> = self
            .anonymous_auth
            .map(|on| format!("--anonymous-auth={on}").into())
            .into_iter()
            .collect();
        flags.extend([
            format!(
                "--authentication-token-webhook-version={}",
                self.authentication_token_webhook_version
            )
            .into(),
            format!(
                "--authentication-token-webhook-cache-ttl={}",
                format_duration(self.authentication_token_webhook_cache_ttl)
            )
            .into(),
        ]);
        flags.extend(path_flags(&[
            ("--token-auth-file", &self.token_auth_file),
            (
                "--authentication-token-webhook-config-file",
                &self.authentication_token_webhook_config_file,
            ),
        ]));
        flags
    }
}

/// Why the token flags cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenAuthError {
    /// The token file is unreadable or malformed.
    #[error(transparent)]
    TokenFile(#[from] TokenFileError),
    /// The webhook's kubeconfig is unusable.
    #[error("--authentication-token-webhook-config-file {}: {problem}", path.display())]
    Webhook {
        /// The kubeconfig.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// `--anonymous-auth` and the authentication configuration's `anonymous` block both say
    /// whether anonymous requests are allowed (R-ACC-147).
    #[error(
        "--anonymous-auth cannot be set when anonymous is configured in the authentication \
         configuration file"
    )]
    AnonymousTwice,
}

/// The checked token flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenAuthSettings {
    anonymous: Option<Anonymous>,
    token_file: Option<PathBuf>,
    webhook: Option<PathBuf>,
    webhook_version: ReviewVersion,
    webhook_cache_ttl: Duration,
}

impl Default for TokenAuthSettings {
    /// The settings of the flags' defaults: anonymous access on, no file, no webhook.
    fn default() -> Self {
        Self {
            anonymous: Some(Anonymous::default()),
            token_file: None,
            webhook: None,
            webhook_version: ReviewVersion::default(),
            webhook_cache_ttl: TokenAuthArgs::default().authentication_token_webhook_cache_ttl,
        }
    }
}

impl TokenAuthSettings {
    /// The settings of `args`, with the authentication configuration file's `anonymous` block
    /// `from_file` if it has one (the two cannot both be given).
    pub fn from_args(
        args: &TokenAuthArgs,
        from_file: Option<AnonymousSettings>,
    ) -> Result<Self, TokenAuthError> {
        let anonymous = match (args.anonymous_auth, from_file) {
            (Some(_), Some(_)) => return Err(TokenAuthError::AnonymousTwice),
            (Some(on), None) => on.then(Anonymous::default),
            (None, Some(file)) => file.enabled.then_some(Anonymous { paths: file.paths }),
            (None, None) => Some(Anonymous::default()),
        };
        Ok(Self {
            anonymous,
            token_file: args.token_auth_file.clone(),
            webhook: args.authentication_token_webhook_config_file.clone(),
            webhook_version: ReviewVersion::parse(&args.authentication_token_webhook_version)
                .unwrap_or_default(),
            webhook_cache_ttl: args.authentication_token_webhook_cache_ttl,
        })
    }

    /// Reads the token file and the webhook's kubeconfig and puts them into `methods` (the
    /// webhook last, kube-apiserver's order), with anonymous access when on.
    pub fn install(
        &self,
        methods: &mut AuthenticationMethods,
        flavor: Flavor,
    ) -> Result<(), TokenAuthError> {
        if let Some(path) = &self.token_file {
            methods.tokens.push(Arc::new(TokenFile::read(path)?));
        }
        if let Some(path) = &self.webhook {
            let webhook = TokenWebhook::from_kubeconfig(
                path,
                flavor,
                self.webhook_version,
                methods.api_audiences.clone(),
                self.webhook_cache_ttl,
            )
            .map_err(|problem| TokenAuthError::Webhook {
                path: path.clone(),
                problem,
            })?;
            methods.webhook = Some(Arc::new(webhook));
        }
        methods.anonymous.clone_from(&self.anonymous);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        tokens: TokenAuthArgs,
    }

    fn parse(args: &[&str]) -> TokenAuthArgs {
        Flags::try_parse_from(std::iter::once("apiary").chain(args.iter().copied()))
            .expect("valid flags")
            .tokens
    }

    fn installed(args: &TokenAuthArgs, from_file: Option<AnonymousSettings>) -> Option<Anonymous> {
        let mut methods = AuthenticationMethods::default();
        TokenAuthSettings::from_args(args, from_file)
            .expect("valid")
            .install(&mut methods, Flavor::Kubernetes)
            .expect("nothing to read");
        methods.anonymous
    }

    // R-ACC-146, R-ACC-094, R-ACC-127: anonymous on by default and switched by
    // `--anonymous-auth`; the webhook's version v1beta1 and cache TTL 2m by default.
    #[test]
    fn defaults_and_switches() {
        let defaults = parse(&[]);
        assert_eq!(defaults, TokenAuthArgs::default());
        assert_eq!(defaults.anonymous_auth, None);
        assert_eq!(defaults.authentication_token_webhook_version, "v1beta1");
        assert_eq!(
            defaults.authentication_token_webhook_cache_ttl,
            Duration::from_secs(120)
        );
        assert_eq!(parse(&["--anonymous-auth"]).anonymous_auth, Some(true));
        assert!(
            Flags::try_parse_from(["apiary", "--authentication-token-webhook-version=v2"]).is_err()
        );
        assert_eq!(installed(&parse(&["--anonymous-auth=false"]), None), None);
        assert_eq!(installed(&defaults, None), Some(Anonymous::default()));
        assert_eq!(
            TokenAuthSettings::default(),
            TokenAuthSettings::from_args(&defaults, None).expect("valid")
        );
    }

    // R-ACC-147, R-ACC-047, R-ACC-048: the configuration file's `anonymous` block decides when
    // `--anonymous-auth` is not given, and both together are refused.
    #[test]
    fn the_file_or_the_flag_decides_anonymous_access() {
        let file = |enabled: bool| AnonymousSettings {
            enabled,
            paths: vec!["/livez".to_owned()],
        };
        assert_eq!(
            installed(&parse(&[]), Some(file(true))),
            Some(Anonymous {
                paths: vec!["/livez".to_owned()]
            })
        );
        assert_eq!(installed(&parse(&[]), Some(file(false))), None);
        for flag in ["--anonymous-auth=true", "--anonymous-auth=false"] {
            assert_eq!(
                TokenAuthSettings::from_args(&parse(&[flag]), Some(file(true))),
                Err(TokenAuthError::AnonymousTwice),
                "{flag}"
            );
        }
    }

    // R-ACC-118: the token file is read at start-up; a missing file stops it.
    #[test]
    fn a_missing_token_file_stops_start_up() {
        let args = parse(&["--token-auth-file=/nonexistent/tokens.csv"]);
        let error = TokenAuthSettings::from_args(&args, None)
            .expect("valid")
            .install(&mut AuthenticationMethods::default(), Flavor::Kubernetes)
            .expect_err("missing");
        assert!(
            error.to_string().contains("/nonexistent/tokens.csv"),
            "{error}"
        );
    }

    #[test]
    fn dev_passes_the_flags_on() {
        let args = parse(&[
            "--anonymous-auth=false",
            "--token-auth-file=/t.csv",
            "--authentication-token-webhook-cache-ttl=5s",
        ]);
        let flags: Vec<String> = args
            .replica_flags()
            .into_iter()
            .map(|f| f.to_string_lossy().into_owned())
            .collect();
        let again = parse(&flags.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(again, args);
    }
}
