//! Who the voters are and where they listen, for the node's cluster version controller, which
//! asks each voter what it speaks.

use std::collections::BTreeMap;

use openraft::async_runtime::watch::WatchReceiver;

use super::Replica;
use crate::typ::NodeId;

impl Replica {
    /// The voters of the effective membership and their peer URLs.
    pub fn voter_urls(&self) -> BTreeMap<NodeId, String> {
        let metrics = self.raft.metrics();
        let m = metrics.borrow_watched();
        let membership = m.membership_config.membership();
        membership
            .voter_ids()
            .filter_map(|id| membership.get_node(&id).map(|node| (id, node.addr.clone())))
            .collect()
    }
}
