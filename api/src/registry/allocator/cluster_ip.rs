//! Service cluster IPs (`--service-cluster-ip-range`): the range and its arithmetic, and the
//! allocation of one IP as a `networking/v1 IPAddress` object named by the IP, as Kubernetes
//! 1.33+ records them. Creating the object is the reservation: storage refuses a second
//! create of the same key, so two replicas can never hand out the same IP.

use std::fmt;
use std::net::Ipv4Addr;
use std::str::FromStr;

use chrono::DateTime;
use chrono::SecondsFormat;
use chrono::Utc;
use serde_json::Value;
use serde_json::json;

use super::AllocError;
use super::RangeError;
use crate::flavor::Flavor;
use crate::random::RandomSource;
use crate::registry::ResourceType;
use crate::registry::StoredJson;
use crate::storage::ReadConsistency;
use crate::storage::Storage;
use crate::storage::StorageError;

/// Fewest addresses a range needs before dynamic allocation prefers its upper part.
const MIN_OFFSET: u32 = 16;
/// Most addresses kept for static allocation at the bottom of a range.
const MAX_OFFSET: u32 = 256;
/// The share of a range (one in this many) kept for static allocation.
const OFFSET_STEP: u32 = 16;

/// An IPv4 CIDR from which service IPs are allocated. Its network and broadcast addresses
/// are never handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusterIpRange {
    network: Ipv4Addr,
    prefix: u8,
}

impl ClusterIpRange {
    /// `10.96.0.0/12`, [`DEFAULT_CLUSTER_IP_RANGE`](super::DEFAULT_CLUSTER_IP_RANGE).
    pub const DEFAULT: Self = Self {
        network: Ipv4Addr::new(10, 96, 0, 0),
        prefix: 12,
    };

    /// The range `network/prefix` (host bits are cleared).
    pub fn new(network: Ipv4Addr, prefix: u8) -> Result<Self, RangeError> {
        if prefix > 30 {
            return Err(RangeError::TooSmall(format!("{network}/{prefix}")));
        }
        let mask = u32::MAX << (32 - u32::from(prefix));
        Ok(Self {
            network: Ipv4Addr::from(u32::from(network) & mask),
            prefix,
        })
    }

    /// The first address handed out (the network address + 1): the `kubernetes` Service's.
    pub fn first(self) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.network) + 1)
    }

    /// The last address handed out (the broadcast address - 1).
    pub fn last(self) -> Ipv4Addr {
        let size = 1u64 << (32 - u32::from(self.prefix));
        Ipv4Addr::from((u64::from(u32::from(self.network)) + size - 2) as u32)
    }

    /// Whether `ip` may be handed out.
    pub fn contains(self, ip: Ipv4Addr) -> bool {
        (u32::from(self.first())..=u32::from(self.last())).contains(&u32::from(ip))
    }

    /// How many of the first addresses are kept for static allocation (Kubernetes' KEP-3070
    /// subrange): dynamic allocation takes them only once the upper part is full.
    fn static_part(self) -> u32 {
        let size = u32::from(self.last()) - u32::from(self.first()) + 1;
        if size < MIN_OFFSET {
            0
        } else {
            (size / OFFSET_STEP).clamp(MIN_OFFSET, MAX_OFFSET)
        }
    }

    /// Every address in the order dynamic allocation tries them: the upper part first, then
    /// the statically preferred bottom.
    pub fn dynamic_order(self) -> impl Iterator<Item = Ipv4Addr> {
        let first = u32::from(self.first());
        let last = u32::from(self.last());
        let split = first + self.static_part();
        (split..=last).chain(first..split).map(Ipv4Addr::from)
    }
}

impl fmt::Display for ClusterIpRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

impl FromStr for ClusterIpRange {
    type Err = RangeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || RangeError::Cidr(s.to_owned());
        let (ip, prefix) = s.split_once('/').ok_or_else(bad)?;
        let ip: Ipv4Addr = ip.parse().map_err(|_| bad())?;
        let prefix: u8 = prefix.parse().map_err(|_| bad())?;
        if prefix > 32 {
            return Err(bad());
        }
        Self::new(ip, prefix)
    }
}

/// The Service an IPAddress belongs to.
#[derive(Debug, Clone, Copy)]
pub struct Parent<'a> {
    /// The Service's namespace.
    pub namespace: &'a str,
    /// The Service's name.
    pub name: &'a str,
}

/// Cluster IPs recorded as IPAddress objects.
#[derive(Debug, Clone)]
pub struct ClusterIps {
    range: ClusterIpRange,
    ip_addresses: ResourceType,
    flavor: Flavor,
    /// Draws the records' uids.
    random: RandomSource,
}

impl ClusterIps {
    /// Allocation from `range`, recorded as objects of `ip_addresses` (the IPAddress type in
    /// `flavor`).
    pub fn new(range: ClusterIpRange, ip_addresses: ResourceType, flavor: Flavor) -> Self {
        Self {
            range,
            ip_addresses,
            flavor,
            random: RandomSource::from_os_entropy(),
        }
    }

    /// Draws the records' uids from `random`.
    pub(super) fn set_random(&mut self, random: &RandomSource) {
        self.random = random.clone();
    }

    /// The range allocated from.
    pub fn range(&self) -> ClusterIpRange {
        self.range
    }

    /// The IPAddress object recording `ip` for `parent`, created at `now` (`None`: an
    /// allocation during an update, which has no clock; the object has no creation time).
    fn object(&self, ip: Ipv4Addr, parent: Parent<'_>, now: Option<DateTime<Utc>>) -> Value {
        let labels = json!({
            format!("ipaddress.{}/ip-family", self.flavor.label_domain()): "IPv4",
            format!("ipaddress.{}/managed-by", self.flavor.label_domain()):
                format!("ipallocator.{}", self.flavor.group_domain()),
        });
        let mut metadata = json!({
            "name": ip.to_string(),
            "uid": self.random.uuid(),
            "labels": labels,
        });
        if let Some(now) = now {
            metadata["creationTimestamp"] = now.to_rfc3339_opts(SecondsFormat::Secs, true).into();
        }
        json!({
            "apiVersion": self.ip_addresses.api_version(),
            "kind": self.ip_addresses.kind,
            "metadata": metadata,
            "spec": {"parentRef": {
                "group": "",
                "resource": "services",
                "namespace": parent.namespace,
                "name": parent.name,
            }},
        })
    }

    /// Reserves `ip` for `parent`: `NotInRange` outside the range, `Allocated` when another
    /// object holds it. A dry run checks the same and reserves nothing.
    pub async fn allocate(
        &self,
        storage: &dyn Storage,
        ip: Ipv4Addr,
        parent: Parent<'_>,
        now: Option<DateTime<Utc>>,
        dry_run: bool,
    ) -> Result<(), AllocError> {
        if !self.range.contains(ip) {
            return Err(AllocError::IpNotInRange {
                ip,
                range: self.range,
            });
        }
        let key = self.ip_addresses.object_key("", &ip.to_string());
        if dry_run {
            return match storage.get(&key, ReadConsistency::Linearizable).await? {
                Some(_) => Err(AllocError::IpAllocated),
                None => Ok(()),
            };
        }
        let value = StoredJson::to_stored(&self.object(ip, parent, now))
            .map_err(|e| AllocError::Encode(e.to_string()))?;
        match storage.create(&key, value).await {
            Ok(_) => Ok(()),
            Err(StorageError::AlreadyExists { .. }) => Err(AllocError::IpAllocated),
            Err(e) => Err(e.into()),
        }
    }

    /// Reserves the next free IP for `parent`, in [`ClusterIpRange::dynamic_order`]; an IP
    /// taken by another replica between the look and the create is skipped. A dry run
    /// answers the IP a real allocation would take now, and reserves nothing.
    pub async fn allocate_next(
        &self,
        storage: &dyn Storage,
        parent: Parent<'_>,
        now: Option<DateTime<Utc>>,
        dry_run: bool,
    ) -> Result<Ipv4Addr, AllocError> {
        let prefix = self.ip_addresses.collection_key(None);
        let taken = storage
            .list(&prefix, None, 0, ReadConsistency::Linearizable)
            .await?;
        let taken: std::collections::HashSet<Ipv4Addr> = taken
            .items
            .iter()
            .filter_map(|o| o.key.strip_prefix(&prefix)?.parse().ok())
            .collect();
        for ip in self.range.dynamic_order().filter(|ip| !taken.contains(ip)) {
            if dry_run {
                return Ok(ip);
            }
            match self.allocate(storage, ip, parent, now, false).await {
                Ok(()) => return Ok(ip),
                Err(AllocError::IpAllocated) => continue,
                Err(e) => return Err(e),
            }
        }
        Err(AllocError::Full)
    }

    /// Frees `ip`. Releasing an IP that is not allocated is not an error.
    pub async fn release(&self, storage: &dyn Storage, ip: Ipv4Addr) -> Result<(), AllocError> {
        let key = self.ip_addresses.object_key("", &ip.to_string());
        match storage.delete(&key, None).await {
            Ok(_) | Err(StorageError::NotFound { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_hands_out_neither_network_nor_broadcast_address() {
        let r: ClusterIpRange = "10.96.0.0/12".parse().expect("range");
        assert_eq!(r.to_string(), "10.96.0.0/12");
        assert_eq!(r.first(), Ipv4Addr::new(10, 96, 0, 1));
        assert_eq!(r.last(), Ipv4Addr::new(10, 111, 255, 254));
        assert!(r.contains(Ipv4Addr::new(10, 96, 0, 10)));
        assert!(!r.contains(Ipv4Addr::new(10, 96, 0, 0)));
        assert!(!r.contains(Ipv4Addr::new(10, 111, 255, 255)));
        assert!(!r.contains(Ipv4Addr::new(1, 2, 3, 4)));
        let host_bits: ClusterIpRange = "10.0.0.7/24".parse().expect("range");
        assert_eq!(host_bits.to_string(), "10.0.0.0/24");
    }

    #[test]
    fn dynamic_allocation_prefers_the_upper_part() {
        let r: ClusterIpRange = "10.96.0.0/12".parse().expect("range");
        let mut order = r.dynamic_order();
        assert_eq!(order.next(), Some(Ipv4Addr::new(10, 96, 1, 1)));
        let small: ClusterIpRange = "10.0.0.0/29".parse().expect("range");
        let all: Vec<_> = small.dynamic_order().collect();
        assert_eq!(all.len(), 6, "below 16 addresses nothing is kept back");
        assert_eq!(all[0], Ipv4Addr::new(10, 0, 0, 1));
        let mid: ClusterIpRange = "10.0.0.0/24".parse().expect("range");
        let all: Vec<_> = mid.dynamic_order().collect();
        assert_eq!(all.len(), 254);
        assert_eq!(
            all[0],
            Ipv4Addr::new(10, 0, 0, 17),
            "254/16 < 16: 16 kept back"
        );
        assert_eq!(all[253], Ipv4Addr::new(10, 0, 0, 16));
    }

    #[test]
    fn the_default_is_the_flag_default() {
        assert_eq!(
            super::super::DEFAULT_CLUSTER_IP_RANGE.parse(),
            Ok(ClusterIpRange::DEFAULT)
        );
    }

    #[test]
    fn malformed_ranges_are_refused() {
        for bad in ["10.96.0.0", "10.96.0.0/33", "fd00::/108", "x/12"] {
            assert!(bad.parse::<ClusterIpRange>().is_err(), "{bad}");
        }
        assert!(matches!(
            "10.0.0.0/31".parse::<ClusterIpRange>(),
            Err(RangeError::TooSmall(_))
        ));
    }
}
