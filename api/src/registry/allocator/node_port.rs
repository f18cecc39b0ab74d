//! Service node ports (`--service-node-port-range`): the range, and the set of allocated
//! ports kept as one bitmap object at [`NODE_PORTS_KEY`] (Kubernetes' `RangeAllocation`),
//! changed only by compare-and-swap so concurrent allocations on any replica never hand out
//! the same port.

use std::fmt;
use std::str::FromStr;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use serde_json::json;

use super::AllocError;
use super::RangeError;
use crate::registry::StoredJson;
use crate::storage::ReadConsistency;
use crate::storage::Storage;
use crate::storage::StorageError;

/// Where the allocated node ports are recorded.
pub const NODE_PORTS_KEY: &str = "/registry/core/ranges/servicenodeports";
/// Attempts of a bitmap change that races another writer.
const CAS_ATTEMPTS: usize = 16;

/// An inclusive range of ports, written `30000-32767`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortRange {
    base: u16,
    last: u16,
}

impl PortRange {
    /// `30000-32767`, [`DEFAULT_NODE_PORT_RANGE`](super::DEFAULT_NODE_PORT_RANGE).
    pub const DEFAULT: Self = Self {
        base: 30000,
        last: 32767,
    };

    /// The ports `base..=last`.
    pub fn new(base: u16, last: u16) -> Result<Self, RangeError> {
        if base == 0 || last < base {
            return Err(RangeError::Ports(format!("{base}-{last}")));
        }
        Ok(Self { base, last })
    }

    /// Whether `port` is in the range.
    pub fn contains(self, port: i64) -> bool {
        (i64::from(self.base)..=i64::from(self.last)).contains(&port)
    }

    fn size(self) -> usize {
        usize::from(self.last - self.base) + 1
    }
}

impl fmt::Display for PortRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.base, self.last)
    }
}

impl FromStr for PortRange {
    type Err = RangeError;

    /// `30000-32767`, or `30000+2767` (base and how many more), as Kubernetes' `PortRange`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || RangeError::Ports(s.to_owned());
        let num = |t: &str| t.trim().parse::<u16>().map_err(|_| bad());
        if let Some((a, b)) = s.split_once('-') {
            Self::new(num(a)?, num(b)?)
        } else if let Some((a, n)) = s.split_once('+') {
            let base = num(a)?;
            Self::new(base, base.checked_add(num(n)?).ok_or_else(bad)?)
        } else {
            let port = num(s)?;
            Self::new(port, port)
        }
    }
}

/// The allocated ports of a range, one bit each (bit `i` is port `base + i`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortBitmap {
    range: PortRange,
    bits: Vec<u8>,
}

impl PortBitmap {
    /// Nothing allocated.
    pub fn empty(range: PortRange) -> Self {
        Self {
            range,
            bits: vec![0; range.size().div_ceil(8)],
        }
    }

    fn index(&self, port: u16) -> Option<(usize, u8)> {
        self.range
            .contains(i64::from(port))
            .then(|| usize::from(port - self.range.base))
            .map(|i| (i / 8, 1u8 << (i % 8)))
    }

    /// Whether `port` is allocated.
    pub fn has(&self, port: u16) -> bool {
        self.index(port)
            .is_some_and(|(byte, bit)| self.bits.get(byte).is_some_and(|b| b & bit != 0))
    }

    /// Marks `port` allocated (`false` when it already was, or is outside the range).
    pub fn set(&mut self, port: u16) -> bool {
        match self.index(port) {
            Some((byte, bit)) if !self.has(port) => {
                self.bits[byte] |= bit;
                true
            }
            _ => false,
        }
    }

    /// Marks `port` free.
    pub fn clear(&mut self, port: u16) {
        if let Some((byte, bit)) = self.index(port) {
            self.bits[byte] &= !bit;
        }
    }

    /// The lowest free port.
    pub fn first_free(&self) -> Option<u16> {
        (self.range.base..=self.range.last).find(|p| !self.has(*p))
    }

    /// The stored form: a `RangeAllocation` with the range and the bits in base64.
    pub fn to_object(&self) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "RangeAllocation",
            "metadata": {"name": ""},
            "range": self.range.to_string(),
            "data": STANDARD.encode(&self.bits),
        })
    }

    /// The bitmap of a stored `RangeAllocation`. A range other than `range` (the flag
    /// changed) keeps the ports that fall inside `range`.
    pub fn from_object(obj: &Value, range: PortRange) -> Result<Self, AllocError> {
        let corrupt = |what: &str| AllocError::Encode(format!("node port bitmap: {what}"));
        let stored: PortRange = obj
            .get("range")
            .and_then(Value::as_str)
            .ok_or_else(|| corrupt("no range"))?
            .parse()
            .map_err(|_| corrupt("bad range"))?;
        let data = obj.get("data").and_then(Value::as_str).unwrap_or_default();
        let bits = STANDARD.decode(data).map_err(|_| corrupt("bad data"))?;
        let old = Self {
            range: stored,
            bits,
        };
        if stored == range {
            return Ok(old);
        }
        let mut map = Self::empty(range);
        for port in stored.base..=stored.last {
            if old.has(port) {
                map.set(port);
            }
        }
        Ok(map)
    }
}

/// What one change of the bitmap does: the ports to take and the ports to free.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PortChange {
    /// Specific ports asked for, each with its place in the request (for error paths).
    pub requested: Vec<(usize, u16)>,
    /// How many ports to pick, each with its place in the request.
    pub any: Vec<usize>,
    /// Ports to free.
    pub release: Vec<u16>,
}

/// Node ports recorded in the bitmap key.
#[derive(Debug, Clone, Copy)]
pub struct NodePorts {
    range: PortRange,
}

impl NodePorts {
    /// Allocation from `range`.
    pub fn new(range: PortRange) -> Self {
        Self { range }
    }

    /// The range allocated from.
    pub fn range(&self) -> PortRange {
        self.range
    }

    /// Applies `change` in one compare-and-swap of the bitmap, retried when another writer
    /// got there first: the ports picked for `change.any`, in order. A requested port out of
    /// the range is `PortNotInRange`, a taken one `PortAllocated` (each with its place); a
    /// dry run checks the same and writes nothing.
    pub async fn apply(
        &self,
        storage: &dyn Storage,
        change: &PortChange,
        dry_run: bool,
    ) -> Result<Vec<u16>, AllocError> {
        for (at, port) in &change.requested {
            if !self.range.contains(i64::from(*port)) {
                return Err(AllocError::PortNotInRange {
                    at: *at,
                    port: *port,
                    range: self.range,
                });
            }
        }
        for _ in 0..CAS_ATTEMPTS {
            let current = storage
                .get(NODE_PORTS_KEY, ReadConsistency::Linearizable)
                .await?;
            let mut map = match &current {
                Some(found) => {
                    let obj = StoredJson::from_stored(found.value.clone())
                        .and_then(|s| s.to_value())
                        .map_err(|e| AllocError::Encode(e.to_string()))?;
                    PortBitmap::from_object(&obj, self.range)?
                }
                None => PortBitmap::empty(self.range),
            };
            for port in &change.release {
                map.clear(*port);
            }
            for (at, port) in &change.requested {
                if !map.set(*port) {
                    return Err(AllocError::PortAllocated {
                        at: *at,
                        port: *port,
                    });
                }
            }
            let mut picked = Vec::new();
            for _ in &change.any {
                let port = map.first_free().ok_or(AllocError::Full)?;
                map.set(port);
                picked.push(port);
            }
            if dry_run {
                return Ok(picked);
            }
            let value = StoredJson::to_stored(&map.to_object())
                .map_err(|e| AllocError::Encode(e.to_string()))?;
            let written = match &current {
                Some(found) => {
                    storage
                        .update(NODE_PORTS_KEY, value, found.mod_revision)
                        .await
                }
                None => storage.create(NODE_PORTS_KEY, value).await,
            };
            match written {
                Ok(_) => return Ok(picked),
                Err(StorageError::Conflict { .. } | StorageError::AlreadyExists { .. }) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(AllocError::Contended)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_ranges_parse_as_kubernetes_writes_them() {
        let r: PortRange = "30000-32767".parse().expect("range");
        assert_eq!(r.to_string(), "30000-32767");
        assert_eq!("30000+2767".parse::<PortRange>().expect("range"), r);
        assert!(r.contains(30000) && r.contains(32767));
        assert!(!r.contains(29999) && !r.contains(32768));
        for bad in ["", "x-1", "3-2", "0-5", "1-70000"] {
            assert!(bad.parse::<PortRange>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_default_is_the_flag_default() {
        assert_eq!(
            super::super::DEFAULT_NODE_PORT_RANGE.parse(),
            Ok(PortRange::DEFAULT)
        );
    }

    #[test]
    fn the_bitmap_round_trips_and_follows_a_new_range() {
        let r: PortRange = "30000-30010".parse().expect("range");
        let mut map = PortBitmap::empty(r);
        assert!(map.set(30000) && map.set(30009));
        assert!(!map.set(30000), "taken twice");
        assert!(!map.set(29999), "outside");
        assert_eq!(map.first_free(), Some(30001));
        let back = PortBitmap::from_object(&map.to_object(), r).expect("decodes");
        assert_eq!(back, map);
        let narrower: PortRange = "30005-30010".parse().expect("range");
        let moved = PortBitmap::from_object(&map.to_object(), narrower).expect("decodes");
        assert!(moved.has(30009) && !moved.has(30000));
        map.clear(30000);
        assert!(!map.has(30000));
    }
}
