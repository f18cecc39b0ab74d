//! Picks free loopback ports for the clusters the harness starts.
//!
//! `apiary dev --base-port N` takes `N .. N+nodes` for the API and `N+1000 ..` for the peers, and
//! the etcd members take a similar pattern. Tests run in parallel processes (nextest), so each
//! probes bases that start at a pseudo-random offset (from its process id and the clock) below
//! the kernel's ephemeral range, where outgoing connections do not take ports, and keeps the first
//! base whose ports can all be bound.

use std::net::Ipv4Addr;
use std::net::TcpListener;
use std::process;
use std::time::SystemTime;
use std::time::UNIX_EPOCH;

use crate::error::HarnessError;
use crate::error::Result;

/// The lowest port handed out.
const LOW: u32 = 12_000;
/// One past the highest port handed out; Linux's ephemeral range starts at 32768.
const HIGH: u32 = 32_000;
/// How many bases are probed before giving up.
const ATTEMPTS: u32 = 64;

/// A base port `b` such that every `b + offset` (for `offset` in `offsets`) was free just now.
///
/// Another process may still take one of them before the cluster binds it; the bases are spread
/// so that this is rare, and a cluster that then fails to start says so in its logs.
pub fn free_base_port(offsets: &[u16]) -> Result<u16> {
    let highest = offsets.iter().copied().max().unwrap_or(0);
    // Bases are multiples of a stride wider than the lowest group of offsets, so that two
    // processes that pick neighbouring slots do not share ports in the common layouts.
    let stride: u32 = 16;
    let slots = (HIGH - LOW - u32::from(highest)) / stride;
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mut slot = (process::id().wrapping_mul(2_654_435_761) ^ nanos) % slots.max(1);
    for _ in 0..ATTEMPTS {
        let base = LOW + slot * stride;
        if let Ok(base) = u16::try_from(base)
            && all_free(base, offsets)
        {
            return Ok(base);
        }
        slot = (slot + 7919) % slots.max(1);
    }
    Err(HarnessError::NoFreePorts {
        ports: offsets.len(),
        attempts: ATTEMPTS,
    })
}

/// The offsets `apiary dev --nodes nodes` uses from its base port: API ports, then peer ports
/// 1000 above them.
pub fn dev_offsets(nodes: u16) -> Vec<u16> {
    (0..nodes).chain((0..nodes).map(|i| 1000 + i)).collect()
}

/// Whether every `base + offset` can be bound on loopback right now.
fn all_free(base: u16, offsets: &[u16]) -> bool {
    offsets.iter().all(|offset| {
        base.checked_add(*offset)
            .is_some_and(|port| TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_leaves_every_offset_bindable_below_the_ephemeral_range() {
        let offsets = dev_offsets(3);
        assert_eq!(offsets, vec![0, 1, 2, 1000, 1001, 1002]);
        let base = free_base_port(&offsets).unwrap();
        assert!(u32::from(base) >= LOW && u32::from(base) + 1002 < HIGH);
        for offset in offsets {
            drop(TcpListener::bind((Ipv4Addr::LOCALHOST, base + offset)).unwrap());
        }
    }
}
