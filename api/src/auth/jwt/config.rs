//! The `AuthenticationConfiguration` file (`--authentication-config`) as written: its
//! `jwt[]` authenticators and `anonymous` block in the field names of
//! `apiserver.config.<d>/v1` and `v1beta1`, read from YAML or JSON, unknown fields refused.

use serde::Deserialize;

use crate::flavor::Flavor;

/// The kind of the configuration file.
pub const KIND: &str = "AuthenticationConfiguration";

/// The versions of the configuration file that are read.
pub const VERSIONS: [&str; 2] = ["v1", "v1beta1"];

/// The whole configuration file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuthenticationConfiguration {
    /// `apiserver.config.<d>/v1` or `.../v1beta1`.
    #[serde(default)]
    pub api_version: String,
    /// [`KIND`].
    #[serde(default)]
    pub kind: String,
    /// The JWT authenticators, one per issuer.
    #[serde(default)]
    pub jwt: Vec<JwtAuthenticator>,
    /// Anonymous access, when configured here rather than by `--anonymous-auth`.
    #[serde(default)]
    pub anonymous: Option<AnonymousConfig>,
}

/// One JWT authenticator.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JwtAuthenticator {
    /// Who issues the tokens and for whom.
    #[serde(default)]
    pub issuer: Issuer,
    /// Rules every token's claims must meet.
    #[serde(default)]
    pub claim_validation_rules: Vec<ClaimValidationRule>,
    /// How claims become the user.
    #[serde(default)]
    pub claim_mappings: ClaimMappings,
    /// Rules the mapped user must meet.
    #[serde(default)]
    pub user_validation_rules: Vec<UserValidationRule>,
}

/// The issuer of the tokens.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Issuer {
    /// The issuer URL: the `iss` claim, and where discovery is unless `discoveryURL` says.
    #[serde(default)]
    pub url: String,
    /// Where the discovery document is, when not under `url`.
    #[serde(default, rename = "discoveryURL")]
    pub discovery_url: String,
    /// PEM CA bundle that verifies the discovery and key endpoints (the host roots if empty).
    #[serde(default)]
    pub certificate_authority: String,
    /// The audiences a token must be for.
    #[serde(default)]
    pub audiences: Vec<String>,
    /// `MatchAny` (or empty with one audience).
    #[serde(default)]
    pub audience_match_policy: String,
    /// Accepted and ignored: there is no egress selector.
    #[serde(default)]
    pub egress_selector_type: String,
}

/// A rule on the token's claims.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClaimValidationRule {
    /// A claim that must hold `requiredValue`.
    #[serde(default)]
    pub claim: String,
    /// The value `claim` must hold.
    #[serde(default)]
    pub required_value: String,
    /// A CEL expression over `claims` that must be true.
    #[serde(default)]
    pub expression: String,
    /// What a false `expression` is reported with.
    #[serde(default)]
    pub message: String,
}

/// How the claims become the user.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClaimMappings {
    /// The user name (required).
    #[serde(default)]
    pub username: PrefixedClaimOrExpression,
    /// The groups (optional).
    #[serde(default)]
    pub groups: PrefixedClaimOrExpression,
    /// The uid (optional).
    #[serde(default)]
    pub uid: ClaimOrExpression,
    /// Further attributes.
    #[serde(default)]
    pub extra: Vec<ExtraMapping>,
}

/// A claim with a prefix, or a CEL expression.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PrefixedClaimOrExpression {
    /// The claim.
    #[serde(default)]
    pub claim: String,
    /// What the claim's values are prefixed with (required with `claim`; may be empty).
    #[serde(default)]
    pub prefix: Option<String>,
    /// A CEL expression over `claims`.
    #[serde(default)]
    pub expression: String,
}

/// A claim, or a CEL expression.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClaimOrExpression {
    /// The claim.
    #[serde(default)]
    pub claim: String,
    /// A CEL expression over `claims`.
    #[serde(default)]
    pub expression: String,
}

/// One key of the user's extra attributes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExtraMapping {
    /// The key (domain-prefixed, lowercase).
    #[serde(default)]
    pub key: String,
    /// A CEL expression over `claims` giving a string or a list of strings.
    #[serde(default)]
    pub value_expression: String,
}

/// A rule on the mapped user.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UserValidationRule {
    /// A CEL expression over `user` that must be true.
    #[serde(default)]
    pub expression: String,
    /// What a false `expression` is reported with.
    #[serde(default)]
    pub message: String,
}

/// The `anonymous` block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnonymousConfig {
    /// Whether requests without credentials are let in as `system:anonymous`.
    #[serde(default)]
    pub enabled: bool,
    /// The paths anonymous access is limited to (none: every path).
    #[serde(default)]
    pub conditions: Vec<AnonymousCondition>,
}

/// One path anonymous requests may reach.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnonymousCondition {
    /// The path.
    #[serde(default)]
    pub path: String,
}

/// Why a configuration file cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Neither valid YAML nor valid JSON of this shape.
    #[error("failed to decode authentication configuration: {0}")]
    Decode(String),
    /// Another kind or version.
    #[error(
        "no kind \"{kind}\" is registered for version \"{api_version}\" (expected kind \"{KIND}\" in {group}/v1 or {group}/v1beta1)"
    )]
    Kind {
        /// The file's `kind`.
        kind: String,
        /// The file's `apiVersion`.
        api_version: String,
        /// The group expected.
        group: String,
    },
}

/// The group of the configuration file: `apiserver.config.<d>`.
pub fn group(flavor: Flavor) -> String {
    format!("apiserver.config.{}", flavor.group_domain())
}

impl AuthenticationConfiguration {
    /// Reads `text` (YAML or JSON) and checks its kind and version.
    pub fn parse(text: &str, flavor: Flavor) -> Result<Self, ParseError> {
        let config: Self =
            serde_saphyr::from_str(text).map_err(|e| ParseError::Decode(e.to_string()))?;
        let group = group(flavor);
        let version_ok = config
            .api_version
            .split_once('/')
            .is_some_and(|(g, v)| g == group && VERSIONS.contains(&v));
        if config.kind != KIND || !version_ok {
            return Err(ParseError::Kind {
                kind: config.kind,
                api_version: config.api_version,
                group,
            });
        }
        Ok(config)
    }
}
