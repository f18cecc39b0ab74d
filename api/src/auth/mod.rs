//! Who is asking and may they: the authentication stage (a chain of [`Authenticator`]s; the
//! first success wins; without credentials [`Anonymous`] access where configured, 401
//! otherwise) and the authorization stage (a chain of
//! [`Authorizer`]s; allow or deny ends it, no opinion passes on, 403 when nobody allows).
//! Bearer tokens go through one [`TokenChain`] (also asked by TokenReview). Later methods are
//! new chain members; the pipeline stays as is.

mod abac;
mod anonymous;
mod attributes;
mod authenticator;
mod authorizer;
mod basic_user;
pub mod bootstrap_token;
mod client_certificate;
mod context;
mod impersonation;
mod in_process;
mod issuer_discovery;
pub mod jwt;
mod methods;
mod modes;
pub mod node;
pub mod rbac;
mod request_header;
mod requester;
mod service_account;
mod system_masters;
mod token;
mod user;
mod x509;

pub use abac::AbacAuthorizer;
pub use abac::AbacError;
pub use anonymous::ANONYMOUS_USER;
pub use anonymous::Anonymous;
pub use anonymous::UNAUTHENTICATED_GROUP;
pub use attributes::Attributes;
pub use authenticator::Authenticator;
pub use authenticator::AuthenticatorChain;
pub use authenticator::AuthnOutcome;
pub use authorizer::Authorizer;
pub use authorizer::AuthorizerChain;
pub use authorizer::Decision;
pub use authorizer::Rules;
pub use basic_user::BasicUserAuthorizer;
pub use bootstrap_token::BootstrapTokenAuthenticator;
pub use bootstrap_token::BootstrapTokenSecret;
pub use client_certificate::ClientCertificate;
pub use context::AuthContext;
pub use impersonation::Impersonation;
pub use in_process::BOOTSTRAP_SIGNER_ACCOUNT;
pub use in_process::CLUSTER_INFO;
pub use in_process::ControllerRolesAuthorizer;
pub use in_process::InProcessAuthenticator;
pub use in_process::InProcessUser;
pub use in_process::LOOPBACK_USER;
pub use in_process::TOKEN_CLEANER_ACCOUNT;
pub use in_process::controller_user;
pub use issuer_discovery::IssuerDiscoveryAuthorizer;
pub use methods::AuthenticationMethods;
pub use modes::AlwaysAllowAuthorizer;
pub use modes::AlwaysDenyAuthorizer;
pub use request_header::RequestHeaderAuthenticator;
pub use request_header::RequestHeaderNames;
pub use requester::Requester;
pub use service_account::SERVICE_ACCOUNTS;
pub use service_account::ServiceAccountTokenAuthenticator;
pub use service_account::legacy_issuer;
pub use system_masters::SYSTEM_MASTERS;
pub use system_masters::SystemMastersAuthorizer;
pub use token::BearerToken;
pub use token::TokenAuthenticator;
pub use token::TokenChain;
pub use token::TokenOutcome;
pub use token::TokenUser;
pub use user::SYSTEM_AUTHENTICATED;
pub use user::UserInfo;
pub use x509::CertificateAuthority;
pub use x509::X509Authenticator;
