//! A reader that keeps reading the ConfigMaps the writers wrote, through random replicas, in
//! every consistency the API offers: quorum gets ("Most Recent"), gets at `resourceVersion=0`
//! ("Any"), gets at the revision of the client's newest acknowledged write ("NotOlderThan":
//! read-your-writes through any replica) and paged lists whose pages go to different replicas.
//! Every read lands in the client's history; failures promise nothing and are recorded too.

use std::time::Duration;

use rand::Rng;
use rand::rngs::StdRng;

use crate::client::SimClient;
use crate::history::ReadAt;
use crate::scenario::workload::StopSignal;

/// The smallest and largest `limit` of a paged list.
const LIMITS: (u64, u64) = (2, 5);

/// Reads through `hosts` until `stop`, pausing `pause` (a range) between two reads; the seeded
/// `rng` picks each read's kind, key and replica.
pub async fn read_until(
    client: &SimClient,
    hosts: &[String],
    pause: (Duration, Duration),
    stop: StopSignal,
    mut rng: StdRng,
) {
    while !stop.stopped() {
        let host = &hosts[rng.random_range(0..hosts.len())];
        let keys = client.written_keys();
        let roll: f64 = rng.random();
        // Each outcome is in the history; what a read served is judged there.
        if roll < 0.25 {
            client
                .list_paged(hosts, rng.random_range(LIMITS.0..=LIMITS.1), &mut rng)
                .await;
        } else if roll < 0.45 {
            if let Some((key, revision)) = client.last_acked_write() {
                let _ = client
                    .read_at(host, &key, ReadAt::NotOlderThan(revision))
                    .await;
            }
        } else if !keys.is_empty() {
            let key = &keys[rng.random_range(0..keys.len())];
            let at = if roll < 0.7 {
                ReadAt::Any
            } else {
                ReadAt::Quorum
            };
            let _ = client.read_at(host, key, at).await;
        }
        tokio::time::sleep(rng.random_range(pause.0..=pause.1)).await;
    }
}
