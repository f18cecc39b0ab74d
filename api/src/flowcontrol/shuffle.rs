//! Shuffle sharding: a flow is hashed (FNV-1a of its schema and distinguisher, the same on
//! every run and replica) and the hash deals it a hand of distinct queues out of the level's
//! deck, so two flows rarely share all their queues.

/// The hash of the flow `(schema, distinguisher)`.
pub fn flow_hash(schema: &str, distinguisher: &str) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;
    let bytes = schema.bytes().chain([0]).chain(distinguisher.bytes());
    bytes.fold(OFFSET, |hash, b| (hash ^ u64::from(b)).wrapping_mul(PRIME))
}

/// The `hand_size` distinct queues of `deck` that `hash` deals, as Kubernetes' dealer draws
/// them: each draw takes the hash modulo the cards left and skips the cards already dealt.
pub fn deal(mut hash: u64, deck: usize, hand_size: usize) -> Vec<usize> {
    let hand_size = hand_size.min(deck);
    let mut hand: Vec<usize> = Vec::with_capacity(hand_size);
    for left in (deck - hand_size + 1..=deck).rev() {
        let left_u64 = left as u64;
        let mut card = (hash % left_u64) as usize;
        hash /= left_u64;
        let mut taken: Vec<usize> = hand.clone();
        taken.sort_unstable();
        for t in taken {
            if card >= t {
                card += 1;
            }
        }
        hand.push(card);
    }
    hand
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    // R-RES-239
    #[test]
    fn hands_are_distinct_in_range_and_deterministic() {
        for seed in 0..200u64 {
            let hash = flow_hash("global-default", &format!("user-{seed}"));
            let hand = deal(hash, 16, 4);
            assert_eq!(hand.len(), 4);
            assert!(hand.iter().all(|&q| q < 16));
            assert_eq!(hand.iter().collect::<BTreeSet<_>>().len(), 4);
            assert_eq!(deal(hash, 16, 4), hand);
        }
        assert_eq!(deal(7, 5, 1), vec![2]);
        assert_eq!(deal(0, 3, 3), vec![0, 1, 2]);
        assert_ne!(flow_hash("a", "b"), flow_hash("ab", ""));
    }

    #[test]
    fn different_flows_get_different_hands() {
        let hands: BTreeSet<Vec<usize>> = (0..50)
            .map(|u| deal(flow_hash("s", &format!("u{u}")), 64, 6))
            .collect();
        assert!(hands.len() > 45, "{} distinct hands of 50", hands.len());
    }
}
