//! HTTP handlers behind the authentication and authorization stages: reading the body within
//! the size limit, dispatching a resource request to its store by verb (or to the handler of
//! its subresource or computed kind), and answering its warnings.

mod body;
mod delete_options;
mod resource;
mod response;
mod review;
mod subresource;
mod warnings;
mod write_options;

#[cfg(test)]
pub(crate) use body::MAX_BODY_BYTES;
pub(crate) use body::read_body;
pub(crate) use resource::ResourceRequest;
pub(crate) use resource::serve_resource;
pub(crate) use response::json_response;
#[cfg(test)]
pub(crate) use warnings::MAX_WARNING_RUNES;
#[cfg(test)]
pub(crate) use warnings::TRUNCATED_WARNING_RUNES;
