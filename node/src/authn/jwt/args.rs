//! The `--oidc-*` flags and `--authentication-config` (shared by `apiary serve` and `apiary
//! dev`, which passes them on), and their check into a [`JwtConfig`]: the flags become the
//! same `AuthenticationConfiguration` the file would hold, as kube-apiserver converts them.

use std::ffi::OsString;
use std::path::Path;
use std::path::PathBuf;
use std::str::FromStr;

use apiary_api::auth::jwt::AuthenticationConfiguration;
use apiary_api::auth::jwt::SUPPORTED_ALGORITHMS;
use apiary_api::auth::jwt::config::ClaimMappings;
use apiary_api::auth::jwt::config::ClaimValidationRule;
use apiary_api::auth::jwt::config::Issuer;
use apiary_api::auth::jwt::config::JwtAuthenticator;
use apiary_api::auth::jwt::config::PrefixedClaimOrExpression;
use apiary_api::flavor::Flavor;
use clap::Args;
use jsonwebtoken::Algorithm;

use super::JwtConfig;
use super::JwtConfigError;

/// The user name claim when `--oidc-username-claim` is not given.
const DEFAULT_USERNAME_CLAIM: &str = "sub";

/// The signing algorithm when `--oidc-signing-algs` is not given.
const DEFAULT_SIGNING_ALG: &str = "RS256";

/// OpenID Connect flags and the authentication configuration file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Args)]
pub struct JwtArgs {
    /// The URL of the OpenID issuer (https only); tokens must have it as `iss`, and its keys
    /// are found through `<url>/.well-known/openid-configuration`.
    #[arg(long)]
    pub oidc_issuer_url: Option<String>,
    /// The client id tokens must be issued for (their `aud`); required with
    /// `--oidc-issuer-url`.
    #[arg(long)]
    pub oidc_client_id: Option<String>,
    /// The claim that becomes the user name (default `sub`); claims other than `email` get
    /// the prefix `<issuer url>#` unless `--oidc-username-prefix` says otherwise.
    #[arg(long)]
    pub oidc_username_claim: Option<String>,
    /// The prefix of user names (`-`: none).
    #[arg(long)]
    pub oidc_username_prefix: Option<String>,
    /// The claim that lists the user's groups (a string or a list of strings).
    #[arg(long)]
    pub oidc_groups_claim: Option<String>,
    /// The prefix of group names.
    #[arg(long)]
    pub oidc_groups_prefix: Option<String>,
    /// `claim=value` that every token must have, repeatable (or comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub oidc_required_claim: Vec<String>,
    /// PEM CA bundle that verifies the issuer's discovery and key endpoints (the host's roots
    /// without it).
    #[arg(long)]
    pub oidc_ca_file: Option<PathBuf>,
    /// The signing algorithms accepted, comma-separated (default RS256).
    #[arg(long, value_delimiter = ',')]
    pub oidc_signing_algs: Vec<String>,
    /// An `AuthenticationConfiguration` file (YAML or JSON) of JWT authenticators and
    /// anonymous access, re-read when it changes; not with the `--oidc-*` flags.
    #[arg(long)]
    pub authentication_config: Option<PathBuf>,
}

impl JwtArgs {
    /// Whether any `--oidc-*` flag is given.
    fn oidc_flags_given(&self) -> bool {
        self.oidc_issuer_url.is_some()
            || self.oidc_client_id.is_some()
            || self.oidc_username_claim.is_some()
            || self.oidc_username_prefix.is_some()
            || self.oidc_groups_claim.is_some()
            || self.oidc_groups_prefix.is_some()
            || !self.oidc_required_claim.is_empty()
            || self.oidc_ca_file.is_some()
            || !self.oidc_signing_algs.is_empty()
    }

    /// The JWT authentication these flags ask for (`None`: none), checked as kube-apiserver
    /// checks it; `service_account_issuers` may not be claimed by a JWT issuer.
    pub fn config(
        &self,
        service_account_issuers: &[String],
        flavor: Flavor,
    ) -> Result<Option<JwtConfig>, JwtConfigError> {
        let oidc = self.oidc_flags_given();
        if oidc && self.authentication_config.is_some() {
            return Err(JwtConfigError::Flags(
                "authentication-config file and oidc-* flags are mutually exclusive".to_owned(),
            ));
        }
        let (configuration, algorithms, file) = if let Some(path) = &self.authentication_config {
            let configuration = read_file(path, flavor)?;
            let all: Vec<String> = SUPPORTED_ALGORITHMS
                .iter()
                .map(|a| (*a).to_owned())
                .collect();
            (configuration, parse_algorithms(&all)?, Some(path.clone()))
        } else if oidc {
            (
                self.flags_configuration(flavor)?,
                self.flag_algorithms()?,
                None,
            )
        } else {
            return Ok(None);
        };
        let config = JwtConfig {
            configuration,
            algorithms,
            file,
            disallowed_issuers: service_account_issuers.to_vec(),
            flavor,
        };
        config
            .configuration
            .validate(&config.disallowed_issuers, flavor)
            .map_err(|errors| {
                JwtConfigError::Invalid(errors.iter().map(ToString::to_string).collect())
            })?;
        Ok(Some(config))
    }

    fn flag_algorithms(&self) -> Result<Vec<Algorithm>, JwtConfigError> {
        if self.oidc_signing_algs.is_empty() {
            return parse_algorithms(&[DEFAULT_SIGNING_ALG.to_owned()]);
        }
        parse_algorithms(&self.oidc_signing_algs)
    }

    /// The configuration the `--oidc-*` flags stand for.
    fn flags_configuration(
        &self,
        flavor: Flavor,
    ) -> Result<AuthenticationConfiguration, JwtConfigError> {
        let (Some(url), Some(client_id)) = (&self.oidc_issuer_url, &self.oidc_client_id) else {
            return Err(JwtConfigError::Flags(
                "oidc-issuer-url and oidc-client-id must be specified together".to_owned(),
            ));
        };
        let username_claim = self
            .oidc_username_claim
            .clone()
            .unwrap_or_else(|| DEFAULT_USERNAME_CLAIM.to_owned());
        let username_prefix = match self.oidc_username_prefix.as_deref() {
            Some("-") => String::new(),
            Some(prefix) if !prefix.is_empty() => prefix.to_owned(),
            _ if username_claim != "email" => format!("{url}#"),
            _ => String::new(),
        };
        let certificate_authority = match &self.oidc_ca_file {
            Some(path) => std::fs::read_to_string(path).map_err(|e| {
                JwtConfigError::Flags(format!("oidc-ca-file {}: {e}", path.display()))
            })?,
            None => String::new(),
        };
        let claim_validation_rules = self
            .oidc_required_claim
            .iter()
            .map(|pair| match pair.split_once('=') {
                Some((claim, value)) if !claim.is_empty() => Ok(ClaimValidationRule {
                    claim: claim.to_owned(),
                    required_value: value.to_owned(),
                    ..ClaimValidationRule::default()
                }),
                _ => Err(JwtConfigError::Flags(format!(
                    "oidc-required-claim {pair:?} is not claim=value"
                ))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let groups = match &self.oidc_groups_claim {
            Some(claim) => PrefixedClaimOrExpression {
                claim: claim.clone(),
                prefix: Some(self.oidc_groups_prefix.clone().unwrap_or_default()),
                expression: String::new(),
            },
            None => PrefixedClaimOrExpression::default(),
        };
        Ok(AuthenticationConfiguration {
            api_version: format!("{}/v1", apiary_api::auth::jwt::config::group(flavor)),
            kind: apiary_api::auth::jwt::config::KIND.to_owned(),
            jwt: vec![JwtAuthenticator {
                issuer: Issuer {
                    url: url.clone(),
                    audiences: vec![client_id.clone()],
                    certificate_authority,
                    ..Issuer::default()
                },
                claim_validation_rules,
                claim_mappings: ClaimMappings {
                    username: PrefixedClaimOrExpression {
                        claim: username_claim,
                        prefix: Some(username_prefix),
                        expression: String::new(),
                    },
                    groups,
                    ..ClaimMappings::default()
                },
                user_validation_rules: Vec::new(),
            }],
            anonymous: None,
        })
    }

    /// These flags as `apiary serve` takes them (what `apiary dev` passes on), with paths
    /// made absolute.
    pub fn replica_flags(&self) -> Vec<OsString> {
        let mut flags: Vec<OsString> = Vec::new();
        let mut path_flag = |flag: &str, path: &Path| {
            let mut arg = OsString::from(format!("--{flag}="));
            arg.push(std::path::absolute(path).unwrap_or_else(|_| path.to_owned()));
            flags.push(arg);
        };
        if let Some(path) = &self.oidc_ca_file {
            path_flag("oidc-ca-file", path);
        }
        if let Some(path) = &self.authentication_config {
            path_flag("authentication-config", path);
        }
        let values = [
            ("oidc-issuer-url", &self.oidc_issuer_url),
            ("oidc-client-id", &self.oidc_client_id),
            ("oidc-username-claim", &self.oidc_username_claim),
            ("oidc-username-prefix", &self.oidc_username_prefix),
            ("oidc-groups-claim", &self.oidc_groups_claim),
            ("oidc-groups-prefix", &self.oidc_groups_prefix),
        ];
        for (flag, value) in values {
            if let Some(value) = value {
                flags.push(format!("--{flag}={value}").into());
            }
        }
        for claim in &self.oidc_required_claim {
            flags.push(format!("--oidc-required-claim={claim}").into());
        }
        if !self.oidc_signing_algs.is_empty() {
            flags.push(format!("--oidc-signing-algs={}", self.oidc_signing_algs.join(",")).into());
        }
        flags
    }
}

/// Reads and decodes the configuration file at `path`.
fn read_file(path: &Path, flavor: Flavor) -> Result<AuthenticationConfiguration, JwtConfigError> {
    let problem = |problem: String| JwtConfigError::File {
        path: path.display().to_string(),
        problem,
    };
    let text = std::fs::read_to_string(path).map_err(|e| problem(e.to_string()))?;
    AuthenticationConfiguration::parse(&text, flavor).map_err(|e| problem(e.to_string()))
}

/// `names` as algorithms, each one of [`SUPPORTED_ALGORITHMS`].
fn parse_algorithms(names: &[String]) -> Result<Vec<Algorithm>, JwtConfigError> {
    names
        .iter()
        .map(|name| {
            SUPPORTED_ALGORITHMS
                .contains(&name.as_str())
                .then(|| Algorithm::from_str(name).ok())
                .flatten()
                .ok_or_else(|| {
                    JwtConfigError::Flags(format!(
                        "oidc-signing-algs: unsupported signing alg: {name}"
                    ))
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oidc(url: &str) -> JwtArgs {
        JwtArgs {
            oidc_issuer_url: Some(url.to_owned()),
            oidc_client_id: Some("apiary".to_owned()),
            ..JwtArgs::default()
        }
    }

    fn error(args: &JwtArgs) -> String {
        args.config(&["https://sa.example".to_owned()], Flavor::Kubernetes)
            .expect_err("refused")
            .to_string()
    }

    fn username(args: &JwtArgs) -> PrefixedClaimOrExpression {
        let config = args
            .config(&[], Flavor::Kubernetes)
            .expect("valid")
            .expect("configured");
        config.configuration.jwt[0].claim_mappings.username.clone()
    }

    // R-ACC-032, R-ACC-133, R-ACC-134, R-ACC-142: the flags' own rules, and flags with the
    // configuration file.
    #[test]
    fn flags_are_checked_as_kube_apiserver_checks_them() {
        assert_eq!(JwtArgs::default().config(&[], Flavor::Kubernetes), Ok(None));
        let mut both = oidc("https://issuer.example");
        both.authentication_config = Some(PathBuf::from("/nonexistent"));
        assert_eq!(
            error(&both),
            "authentication-config file and oidc-* flags are mutually exclusive"
        );
        let mut alone = oidc("https://issuer.example");
        alone.oidc_client_id = None;
        assert_eq!(
            error(&alone),
            "oidc-issuer-url and oidc-client-id must be specified together"
        );
        let mut algs = oidc("https://issuer.example");
        algs.oidc_signing_algs = vec!["HS256".to_owned()];
        assert_eq!(
            error(&algs),
            "oidc-signing-algs: unsupported signing alg: HS256"
        );
        assert_eq!(
            error(&oidc("http://issuer.example")),
            "invalid authentication configuration: jwt[0].issuer.url: Invalid value: \"http://issuer.example\": URL scheme must be https"
        );
        assert!(error(&oidc("https://sa.example")).contains("disallowed issuers"));
    }

    // R-ACC-135, R-ACC-136: user names from claims other than `email` get the issuer URL
    // prefix unless a prefix is given; `-` turns prefixing off.
    #[test]
    fn username_prefixes_follow_the_legacy_rules() {
        let url = "https://issuer.example";
        assert_eq!(
            username(&oidc(url)).prefix.as_deref(),
            Some("https://issuer.example#")
        );
        let mut email = oidc(url);
        email.oidc_username_claim = Some("email".to_owned());
        assert_eq!(username(&email).prefix.as_deref(), Some(""));
        let mut none = oidc(url);
        none.oidc_username_prefix = Some("-".to_owned());
        assert_eq!(username(&none).prefix.as_deref(), Some(""));
        let mut custom = oidc(url);
        custom.oidc_username_prefix = Some("corp:".to_owned());
        assert_eq!(username(&custom).prefix.as_deref(), Some("corp:"));
    }

    // R-ACC-142: `apiary serve` with both refuses to start.
    #[test]
    fn serve_refuses_flags_with_the_configuration_file() {
        use clap::Parser;

        use crate::cli::Cli;
        use crate::cli::Command;
        use crate::config::ServeConfig;

        let argv = [
            "apiary",
            "serve",
            "--name=n",
            "--data-dir=/d",
            "--initial-cluster=n=https://127.0.0.1:7001",
            "--tls-cert-file=s.crt",
            "--tls-private-key-file=s.key",
            "--peer-cert-file=p.crt",
            "--peer-key-file=p.key",
            "--peer-trusted-ca-file=ca.crt",
            "--oidc-issuer-url=https://issuer.example",
            "--oidc-client-id=apiary",
            "--authentication-config=/nonexistent.yaml",
        ];
        let Command::Serve(args) = Cli::try_parse_from(argv).expect("parses").command else {
            panic!("not serve");
        };
        assert_eq!(
            ServeConfig::from_args(&args)
                .map(|_| ())
                .map_err(|e| e.to_string()),
            Err("authentication-config file and oidc-* flags are mutually exclusive".to_owned())
        );
    }

    #[test]
    fn dev_passes_the_flags_on() {
        let mut args = oidc("https://issuer.example");
        args.oidc_required_claim = vec!["hd=example.org".to_owned()];
        let flags: Vec<String> = args
            .replica_flags()
            .into_iter()
            .map(|f| f.into_string().expect("UTF-8"))
            .collect();
        assert_eq!(
            flags,
            vec![
                "--oidc-issuer-url=https://issuer.example",
                "--oidc-client-id=apiary",
                "--oidc-required-claim=hd=example.org",
            ]
        );
    }
}
