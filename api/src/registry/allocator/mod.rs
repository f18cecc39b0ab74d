//! Service allocations: cluster IPs ([`cluster_ip`]) and node ports ([`node_port`]), and
//! which of them a Service's create, update and delete take or free (Kubernetes'
//! `pkg/registry/core/service/storage/alloc.go`, single-stack IPv4). Reservations are
//! durable and atomic in storage, so replicas never hand out the same IP or port; a dry run
//! makes the same checks and reserves nothing.

pub mod cluster_ip;
pub mod node_port;

use std::net::Ipv4Addr;

use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;

pub use self::cluster_ip::ClusterIpRange;
pub use self::cluster_ip::ClusterIps;
pub use self::cluster_ip::Parent;
pub use self::node_port::NODE_PORTS_KEY;
pub use self::node_port::NodePorts;
pub use self::node_port::PortChange;
pub use self::node_port::PortRange;
use crate::flavor::Flavor;
use crate::random::RandomSource;
use crate::registry::ResourceType;
use crate::storage::StorageError;

/// The service cluster IP range when none is configured, as written in the flag (kubeadm's
/// default, which clusters use; kube-apiserver's own is `10.0.0.0/24`).
pub const DEFAULT_CLUSTER_IP_RANGE: &str = "10.96.0.0/12";
/// The node port range when none is configured, as written in the flag (Kubernetes' default).
pub const DEFAULT_NODE_PORT_RANGE: &str = "30000-32767";

/// A malformed range setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RangeError {
    /// Not an IPv4 CIDR (`10.96.0.0/12`); IPv6 ranges are not served.
    #[error("invalid service cluster IP range {0:?}: want an IPv4 CIDR such as 10.96.0.0/12")]
    Cidr(String),
    /// A CIDR with no address to hand out.
    #[error("service cluster IP range {0} is too small")]
    TooSmall(String),
    /// Not a port range (`30000-32767`).
    #[error("invalid service node port range {0:?}: want FIRST-LAST such as 30000-32767")]
    Ports(String),
}

/// Why an allocation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllocError {
    /// A requested IP outside the range.
    #[error("the provided IP ({ip}) is not in the valid range. The range of valid IPs is {range}")]
    IpNotInRange {
        /// The IP.
        ip: Ipv4Addr,
        /// The range.
        range: ClusterIpRange,
    },
    /// A requested IP another Service holds.
    #[error("provided IP is already allocated")]
    IpAllocated,
    /// A requested node port outside the range.
    #[error("provided port is not in the valid range. The range of valid ports is {range}")]
    PortNotInRange {
        /// Its index in `spec.ports`.
        at: usize,
        /// The port.
        port: u16,
        /// The range.
        range: PortRange,
    },
    /// A requested node port another Service holds.
    #[error("provided port is already allocated")]
    PortAllocated {
        /// Its index in `spec.ports`.
        at: usize,
        /// The port.
        port: u16,
    },
    /// Nothing left to hand out.
    #[error("range is full")]
    Full,
    /// The node port bitmap kept changing under every attempt.
    #[error("the node port range changed under every attempt")]
    Contended,
    /// A stored allocation record cannot be read or written.
    #[error("allocation record: {0}")]
    Encode(String),
    /// Storage failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// The ranges Services allocate from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServiceRanges {
    /// `--service-cluster-ip-range`.
    pub cluster_ips: ClusterIpRange,
    /// `--service-node-port-range`.
    pub node_ports: PortRange,
}

impl ServiceRanges {
    /// The ranges of the two settings.
    pub fn parse(cluster_ips: &str, node_ports: &str) -> Result<Self, RangeError> {
        Ok(Self {
            cluster_ips: cluster_ips.parse()?,
            node_ports: node_ports.parse()?,
        })
    }
}

impl Default for ServiceRanges {
    fn default() -> Self {
        Self {
            cluster_ips: ClusterIpRange::DEFAULT,
            node_ports: PortRange::DEFAULT,
        }
    }
}

/// What an allocation reserved (freed again when the write fails) or what a write frees once
/// it has succeeded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allocated {
    /// Cluster IPs.
    pub ips: Vec<Ipv4Addr>,
    /// Node ports.
    pub ports: Vec<u16>,
}

impl Allocated {
    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.ips.is_empty() && self.ports.is_empty()
    }
}

fn spec_str<'a>(svc: &'a Value, field: &str) -> &'a str {
    svc.pointer(&format!("/spec/{field}"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The Service's type (`ClusterIP` when unset).
pub fn service_type(svc: &Value) -> &str {
    match spec_str(svc, "type") {
        "" => "ClusterIP",
        t => t,
    }
}

/// Whether a Service of this shape holds a cluster IP: not ExternalName, not headless.
pub fn wants_cluster_ip(svc: &Value) -> bool {
    service_type(svc) != "ExternalName" && spec_str(svc, "clusterIP") != "None"
}

/// Whether the Service's type exposes node ports.
pub fn wants_node_ports(svc: &Value) -> bool {
    matches!(service_type(svc), "NodePort" | "LoadBalancer")
}

/// The cluster IPs the Service holds (none when headless).
pub fn held_ips(svc: &Value) -> Vec<Ipv4Addr> {
    svc.pointer("/spec/clusterIPs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|ip| ip.as_str()?.parse().ok())
        .collect()
}

/// The node ports set on the Service's ports.
pub fn held_ports(svc: &Value) -> Vec<u16> {
    ports(svc)
        .iter()
        .filter_map(|p| p.get("nodePort")?.as_u64())
        .filter_map(|p| u16::try_from(p).ok())
        .filter(|p| *p != 0)
        .collect()
}

fn ports(svc: &Value) -> Vec<Value> {
    svc.pointer("/spec/ports")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Allocation for the Services of one server.
#[derive(Debug, Clone)]
pub struct ServiceAllocator {
    ips: ClusterIps,
    ports: NodePorts,
}

impl ServiceAllocator {
    /// Allocation from `ranges`, recording IPs as `ip_addresses` objects (the IPAddress type
    /// in `flavor`).
    pub fn new(ranges: ServiceRanges, ip_addresses: ResourceType, flavor: Flavor) -> Self {
        Self {
            ips: ClusterIps::new(ranges.cluster_ips, ip_addresses, flavor),
            ports: NodePorts::new(ranges.node_ports),
        }
    }

    /// Draws the uids of IPAddress records from `random`.
    pub(crate) fn set_random(&mut self, random: &RandomSource) {
        self.ips.set_random(random);
    }

    /// Reserves what `svc` (a Service to be created, or updated from `old`) needs and writes
    /// the chosen values into it: a cluster IP (the requested one, or the next free one) when
    /// it has none yet, and a node port for each port without one when its type exposes
    /// them. Answers what was reserved and what the write frees once it succeeds (values
    /// `old` held that `svc` no longer does). On failure nothing stays reserved. `now` stamps
    /// the IPAddress objects (`None`: left without a creation time). A dry run checks the
    /// same, answers the values it would take, and reserves nothing.
    pub async fn allocate(
        &self,
        storage: &dyn crate::storage::Storage,
        svc: &mut Value,
        old: Option<&Value>,
        now: Option<DateTime<Utc>>,
        dry_run: bool,
    ) -> Result<(Allocated, Allocated), AllocError> {
        let mut reserved = Allocated::default();
        let mut frees = Allocated::default();
        let old_ips = old.map(held_ips).unwrap_or_default();
        if wants_cluster_ip(svc) && old_ips.is_empty() {
            let ip = self.allocate_ip(storage, svc, now, dry_run).await?;
            if !dry_run {
                reserved.ips.push(ip);
            }
        } else if service_type(svc) == "ExternalName" {
            frees.ips = old_ips;
        }
        let old_ports = old
            .filter(|o| wants_node_ports(o))
            .map(held_ports)
            .unwrap_or_default();
        match self.change_ports(storage, svc, &old_ports, dry_run).await {
            Ok((taken, freed)) => {
                reserved.ports = taken;
                frees.ports = freed;
                Ok((reserved, frees))
            }
            Err(e) => {
                self.release(storage, &reserved).await;
                Err(e)
            }
        }
    }

    async fn allocate_ip(
        &self,
        storage: &dyn crate::storage::Storage,
        svc: &mut Value,
        now: Option<DateTime<Utc>>,
        dry_run: bool,
    ) -> Result<Ipv4Addr, AllocError> {
        let namespace = svc
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let name = svc
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let parent = Parent {
            namespace: &namespace,
            name: &name,
        };
        let ip = match spec_str(svc, "clusterIP") {
            "" => {
                self.ips
                    .allocate_next(storage, parent, now, dry_run)
                    .await?
            }
            requested => {
                let ip: Ipv4Addr = requested
                    .parse()
                    .map_err(|_| AllocError::Encode(format!("cluster IP {requested:?}")))?;
                self.ips.allocate(storage, ip, parent, now, dry_run).await?;
                ip
            }
        };
        if let Some(spec) = svc.get_mut("spec").and_then(Value::as_object_mut) {
            spec.insert("clusterIP".to_owned(), ip.to_string().into());
            spec.insert("clusterIPs".to_owned(), vec![ip.to_string()].into());
        }
        Ok(ip)
    }

    /// The node port change from `old_ports` to what `svc` asks: ports it keeps stay, new
    /// requests are taken, ports without one get a free one (written into `svc`), and the
    /// old ports it dropped are freed after the write. Answers (taken, freed).
    async fn change_ports(
        &self,
        storage: &dyn crate::storage::Storage,
        svc: &mut Value,
        old_ports: &[u16],
        dry_run: bool,
    ) -> Result<(Vec<u16>, Vec<u16>), AllocError> {
        let allocate_new = wants_node_ports(svc)
            && !(service_type(svc) == "LoadBalancer"
                && svc.pointer("/spec/allocateLoadBalancerNodePorts") == Some(&Value::Bool(false)));
        let mut change = PortChange::default();
        let list = ports(svc);
        let mut kept = Vec::new();
        for (i, port) in list.iter().enumerate() {
            match port.get("nodePort").and_then(Value::as_i64).unwrap_or(0) {
                0 if allocate_new => change.any.push(i),
                0 => {}
                p if !self.ports.range().contains(p) => {
                    return Err(AllocError::PortNotInRange {
                        at: i,
                        port: u16::try_from(p).unwrap_or(0),
                        range: self.ports.range(),
                    });
                }
                p => {
                    let p = u16::try_from(p).unwrap_or(0);
                    if old_ports.contains(&p) {
                        kept.push(p);
                    } else if !change.requested.iter().any(|(_, q)| *q == p) {
                        change.requested.push((i, p));
                    }
                }
            }
        }
        let freed: Vec<u16> = old_ports
            .iter()
            .copied()
            .filter(|p| !kept.contains(p))
            .collect();
        if change.requested.is_empty() && change.any.is_empty() {
            return Ok((Vec::new(), freed));
        }
        let picked = self.ports.apply(storage, &change, dry_run).await?;
        if let Some(items) = svc.pointer_mut("/spec/ports").and_then(Value::as_array_mut) {
            for (i, port) in change.any.iter().zip(&picked) {
                if let Some(p) = items.get_mut(*i).and_then(Value::as_object_mut) {
                    p.insert("nodePort".to_owned(), (*port).into());
                }
            }
        }
        if dry_run {
            return Ok((Vec::new(), freed));
        }
        let mut taken: Vec<u16> = change.requested.iter().map(|(_, p)| *p).collect();
        taken.extend(picked);
        Ok((taken, freed))
    }

    /// Frees `held`, best effort: a failure leaves the value reserved (it is logged), which
    /// wastes it but never hands it out twice.
    pub async fn release(&self, storage: &dyn crate::storage::Storage, held: &Allocated) {
        for ip in &held.ips {
            if let Err(error) = self.ips.release(storage, *ip).await {
                tracing::warn!(%ip, %error, "releasing a cluster IP failed");
            }
        }
        if !held.ports.is_empty() {
            let change = PortChange {
                release: held.ports.clone(),
                ..PortChange::default()
            };
            if let Err(error) = self.ports.apply(storage, &change, false).await {
                tracing::warn!(ports = ?held.ports, %error, "releasing node ports failed");
            }
        }
    }
}
