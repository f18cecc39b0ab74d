//! Opening one HTTP/1 connection to a simulated host: the only place the simulation's clients
//! parse a base URL, connect a turmoil socket and shake hands, so a call and a stream fail the
//! same typed ways.

use http::Uri;
use hyper::body::Body;
use hyper::client::conn::http1::Connection;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use turmoil::net::TcpStream;

use super::CallError;

/// An open connection: the caller must drive `connection` (spawn it) while it sends requests.
pub(super) struct Dialed<B: Body + 'static> {
    /// `host:port`, for the `Host` header and for errors.
    pub authority: String,
    /// Sends requests on the connection.
    pub sender: SendRequest<B>,
    /// The connection itself.
    pub connection: Connection<TokioIo<TcpStream>, B>,
}

/// How a failed HTTP exchange with `authority` is reported.
pub(super) fn http_error(authority: &str) -> impl Fn(hyper::Error) -> CallError + Copy + '_ {
    move |source| CallError::Http {
        authority: authority.to_owned(),
        source,
    }
}

/// Connects to `base_url`, which must be `http://host:port`: the simulation has no TLS and no
/// default ports, and a bare name would otherwise fail later as an unreachable peer.
pub(super) async fn dial<B>(base_url: &str) -> Result<Dialed<B>, CallError>
where
    B: Body + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let invalid = || CallError::InvalidUrl {
        url: base_url.to_owned(),
    };
    let uri: Uri = base_url.parse().map_err(|_| invalid())?;
    let authority = match (uri.scheme_str(), uri.authority()) {
        (Some("http"), Some(authority)) if authority.port().is_some() => authority,
        _ => return Err(invalid()),
    };
    let authority = authority.as_str().to_owned();
    let stream = TcpStream::connect(authority.as_str())
        .await
        .map_err(|source| CallError::Connect {
            authority: authority.clone(),
            source,
        })?;
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(http_error(&authority))?;
    Ok(Dialed {
        authority,
        sender,
        connection,
    })
}
