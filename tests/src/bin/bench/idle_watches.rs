//! `--idle-watches N`: N watches held open on every replica during the create levels, on
//! resource types the creates never touch, so the figures show what watches that no write
//! concerns cost the write path (each watch on its own HTTP/1.1 connection, read as events come).

use std::time::Duration;

use apiary_tests::HarnessError;
use apiary_tests::HttpClient;
use apiary_tests::watch_stream::EventStream;
use tokio::task::JoinSet;

/// Collections the idle watches spread over (none of them ConfigMaps, which the creates write).
const COLLECTIONS: [&str; 6] = [
    "/api/v1/namespaces/default/secrets",
    "/api/v1/namespaces/default/services",
    "/api/v1/namespaces/default/pods",
    "/api/v1/serviceaccounts",
    "/apis/apps/v1/deployments",
    "/apis/batch/v1/jobs",
];

/// How long a watch may stay open; longer than any run.
const WATCH_SECONDS: u64 = 7200;

/// Opens `per_replica` watches on each of `replicas` (spread over [`COLLECTIONS`]) and keeps
/// reading them until the returned set is dropped.
pub async fn open(
    replicas: &[HttpClient],
    per_replica: usize,
) -> Result<JoinSet<()>, HarnessError> {
    let mut watches = JoinSet::new();
    for client in replicas {
        for i in 0..per_replica {
            let path = format!(
                "{}?watch=1&timeoutSeconds={WATCH_SECONDS}",
                COLLECTIONS[i % COLLECTIONS.len()]
            );
            let mut stream = EventStream::open(client, &path).await?;
            watches.spawn(async move {
                while let Ok(Some(_)) = stream.next(Duration::from_secs(WATCH_SECONDS)).await {}
            });
        }
    }
    if per_replica > 0 {
        println!(
            "apiary: {per_replica} idle watches open on each replica ({} collections, no ConfigMaps)",
            COLLECTIONS.len()
        );
    }
    Ok(watches)
}
