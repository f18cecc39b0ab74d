//! The hosts of `apiary certs --hosts name=address,...`: each replica's name (also its file
//! names and its raft member name) and the address its peers and clients dial (an IP address or
//! a DNS name, put in its certificates as a subject alternative name).

use std::collections::BTreeSet;
use std::net::IpAddr;

/// The most hosts one `apiary certs` run takes (raft clusters have 3 or 5 voters).
pub const MAX_HOSTS: usize = 15;

/// The longest host name (a DNS label) and the longest address (a DNS name).
const MAX_NAME: usize = 63;
const MAX_ADDRESS: usize = 253;

/// Names a host cannot take because its files would clash with the shared ones.
const RESERVED: [&str; 5] = ["ca", "peer-ca", "admin", "kubeconfig", "service-account"];

/// One replica's host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    /// The replica's name (`node-1`).
    pub name: String,
    /// Where it is reached: an IP address or a DNS name.
    pub address: Address,
}

/// A host's address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    /// An IP address.
    Ip(IpAddr),
    /// A DNS name.
    Dns(String),
}

impl Address {
    /// The address as a subject alternative name.
    pub fn san(&self) -> String {
        match self {
            Self::Ip(ip) => ip.to_string(),
            Self::Dns(name) => name.clone(),
        }
    }

    /// The address in a URL's authority (IPv6 addresses in brackets), with `port`.
    pub fn with_port(&self, port: u16) -> String {
        match self {
            Self::Ip(IpAddr::V6(ip)) => format!("[{ip}]:{port}"),
            Self::Ip(ip) => format!("{ip}:{port}"),
            Self::Dns(name) => format!("{name}:{port}"),
        }
    }

    /// The wildcard address of the same family, which the replica listens on.
    pub fn unspecified(&self, port: u16) -> String {
        match self {
            Self::Ip(IpAddr::V6(_)) => format!("[::]:{port}"),
            Self::Ip(_) | Self::Dns(_) => format!("0.0.0.0:{port}"),
        }
    }
}

/// Parses one `name=address` entry of `--hosts`.
pub fn parse_host(entry: &str) -> Result<Host, String> {
    let (name, address) = entry
        .split_once('=')
        .ok_or_else(|| format!("{entry:?} is not name=address"))?;
    check_name(name)?;
    Ok(Host {
        name: name.to_owned(),
        address: parse_address(address)?,
    })
}

/// Parses one `name=url` entry of `--kubeconfig-servers`.
pub fn parse_server(entry: &str) -> Result<(String, String), String> {
    let (name, url) = entry
        .split_once('=')
        .ok_or_else(|| format!("{entry:?} is not name=https-url"))?;
    check_name(name)?;
    let rest = url
        .strip_prefix("https://")
        .ok_or_else(|| format!("{url:?} is not an https:// URL"))?;
    if rest.is_empty() || rest.len() > MAX_ADDRESS + 8 || rest.contains(char::is_whitespace) {
        return Err(format!("{url:?} has no usable host"));
    }
    Ok((name.to_owned(), url.to_owned()))
}

/// Fails unless `hosts` holds 1 to [`MAX_HOSTS`] hosts with distinct names.
pub fn check_hosts(hosts: &[Host]) -> Result<(), String> {
    if hosts.is_empty() || hosts.len() > MAX_HOSTS {
        return Err(format!("give 1 to {MAX_HOSTS} hosts, not {}", hosts.len()));
    }
    let mut seen = BTreeSet::new();
    for host in hosts {
        if !seen.insert(host.name.as_str()) {
            return Err(format!("host {} is named twice", host.name));
        }
    }
    Ok(())
}

/// A host name is a lowercase DNS label that does not end in `-peer` (the suffix of peer
/// certificate files) and is not one of the shared files' names.
fn check_name(name: &str) -> Result<(), String> {
    let label = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if !label {
        return Err(format!(
            "host name {name:?} is not a lowercase DNS label (a-z, 0-9, '-', at most {MAX_NAME})"
        ));
    }
    if name.ends_with("-peer") || RESERVED.contains(&name) {
        return Err(format!("host name {name:?} is reserved"));
    }
    Ok(())
}

/// Parses an address: an IP address or a DNS name (lowercased).
pub fn parse_address(address: &str) -> Result<Address, String> {
    if let Ok(ip) = address.parse::<IpAddr>() {
        return Ok(Address::Ip(ip));
    }
    let dns = !address.is_empty()
        && address.len() <= MAX_ADDRESS
        && address.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= MAX_NAME
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        });
    if dns {
        Ok(Address::Dns(address.to_ascii_lowercase()))
    } else {
        Err(format!(
            "{address:?} is neither an IP address nor a DNS name"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_take_ip_addresses_and_dns_names() {
        let ip = parse_host("node-1=10.0.0.1").unwrap();
        assert_eq!(ip.name, "node-1");
        assert_eq!(ip.address.with_port(7443), "10.0.0.1:7443");
        assert_eq!(ip.address.unspecified(6443), "0.0.0.0:6443");
        let v6 = parse_host("node-2=fd00::2").unwrap();
        assert_eq!(v6.address.with_port(7443), "[fd00::2]:7443");
        assert_eq!(v6.address.unspecified(6443), "[::]:6443");
        let dns = parse_host("node-3=Host3.Example").unwrap();
        assert_eq!(dns.address.san(), "host3.example");
        assert_eq!(dns.address.with_port(1), "host3.example:1");
    }

    #[test]
    fn bad_hosts_are_refused() {
        for entry in [
            "node-1",
            "=10.0.0.1",
            "Node=10.0.0.1",
            "node_1=10.0.0.1",
            "-a=10.0.0.1",
            "a-peer=10.0.0.1",
            "ca=10.0.0.1",
            "node-1=",
            "node-1=bad host",
            "node-1=a..b",
            "node-1=-a.b",
            "node-1=a/b",
        ] {
            assert!(parse_host(entry).is_err(), "{entry}");
        }
        let long = format!("{}=10.0.0.1", "a".repeat(64));
        assert!(parse_host(&long).is_err());
    }

    #[test]
    fn a_host_list_is_bounded_and_has_unique_names() {
        let host = |name: &str| parse_host(&format!("{name}=10.0.0.1")).unwrap();
        assert!(check_hosts(&[host("a"), host("b")]).is_ok());
        assert!(check_hosts(&[host("a"), host("a")]).is_err());
        assert!(check_hosts(&[]).is_err());
        let many: Vec<Host> = (0..=MAX_HOSTS).map(|i| host(&format!("n{i}"))).collect();
        assert!(check_hosts(&many).is_err());
    }

    #[test]
    fn kubeconfig_servers_are_https_urls() {
        assert_eq!(
            parse_server("node-1=https://127.0.0.1:6443").unwrap(),
            ("node-1".to_owned(), "https://127.0.0.1:6443".to_owned())
        );
        assert!(parse_server("node-1=http://127.0.0.1:6443").is_err());
        assert!(parse_server("node-1=https://").is_err());
        assert!(parse_server("https://127.0.0.1:6443").is_err());
    }
}
