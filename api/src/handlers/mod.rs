//! HTTP handlers behind the authentication and authorization stages: reading the body within
//! the size limit, dispatching a resource request to its store by verb (or to the handler of
//! its subresource or computed kind), and answering its warnings.

mod body;
mod delete_options;
mod resource;
mod response;
mod review;
mod subresource;
mod unsafe_delete;
mod warnings;
mod write_options;

pub(crate) use body::read_body;
pub(crate) use resource::ResourceRequest;
pub(crate) use resource::serve_resource;
pub(crate) use response::json_response;
