//! Where a request comes from, as an audit event records it: the source IPs
//! (`X-Forwarded-For`, `X-Real-Ip`, then the connection's peer) and the user agent.

use std::net::IpAddr;
use std::net::SocketAddr;

use http::HeaderMap;

/// The address of the connection a request came on; the node inserts it as a request
/// extension, as it does the client certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddress(pub SocketAddr);

/// The longest user agent recorded; a longer one is cut and marked, as Kubernetes does.
const MAX_USER_AGENT: usize = 1024;

/// `X-Forwarded-For` entries, then `X-Real-Ip`, then the peer, each IP once, in that order.
pub(crate) fn source_ips(headers: &HeaderMap, peer: Option<&PeerAddress>) -> Vec<String> {
    let mut ips: Vec<IpAddr> = Vec::new();
    let header = |name| headers.get(name).and_then(|v| v.to_str().ok());
    let forwarded = header("x-forwarded-for")
        .into_iter()
        .flat_map(|v| v.split(','));
    let real = header("x-real-ip");
    for text in forwarded.chain(real) {
        if let Ok(ip) = text.trim().parse::<IpAddr>()
            && !ips.contains(&ip)
        {
            ips.push(ip);
        }
    }
    if let Some(PeerAddress(peer)) = peer
        && !ips.contains(&peer.ip())
    {
        ips.push(peer.ip());
    }
    ips.iter().map(IpAddr::to_string).collect()
}

/// The `User-Agent` header, cut at [`MAX_USER_AGENT`] bytes.
pub(crate) fn user_agent(headers: &HeaderMap) -> String {
    let agent = headers
        .get(http::header::USER_AGENT)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default();
    if agent.len() <= MAX_USER_AGENT {
        return agent;
    }
    let mut end = MAX_USER_AGENT;
    while !agent.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...TRUNCATED", &agent[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forwarded_addresses_come_first_and_each_ip_once() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "x-forwarded-for",
            "10.0.0.1, 10.0.0.2,junk".parse().unwrap(),
        );
        headers.insert("x-real-ip", "10.0.0.2".parse().unwrap());
        let peer = PeerAddress("192.168.1.9:4000".parse().unwrap());
        assert_eq!(
            source_ips(&headers, Some(&peer)),
            ["10.0.0.1", "10.0.0.2", "192.168.1.9"]
        );
        assert_eq!(source_ips(&HeaderMap::new(), None), Vec::<String>::new());
    }

    #[test]
    fn long_user_agents_are_cut() {
        let mut headers = HeaderMap::new();
        headers.insert("user-agent", "a".repeat(2000).parse().unwrap());
        let agent = user_agent(&headers);
        assert!(agent.ends_with("...TRUNCATED"));
        assert_eq!(agent.len(), MAX_USER_AGENT + "...TRUNCATED".len());
    }
}
