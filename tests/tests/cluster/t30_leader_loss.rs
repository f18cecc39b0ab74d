//! A 3-replica cluster keeps accepting writes and serving quorum reads after its leader is
//! killed with SIGKILL, and loses nothing it acknowledged.

use std::cell::Cell;
use std::time::Duration;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::HarnessError;
use apiary_tests::HttpClient;
use apiary_tests::objects;
use apiary_tests::retry::retry;
use http::StatusCode;

use crate::read_configmap;

/// How long one write may take to be accepted across the election that follows the kill.
const WRITE_LIMIT: Duration = Duration::from_secs(30);

/// Creates `name` through `client`, retrying while the cluster elects a new leader. A retry that
/// finds the object already there (409) counts: the earlier attempt was committed.
async fn create_until_acknowledged(client: &HttpClient, name: &str, value: &str) {
    let path = objects::configmaps_path();
    let body = objects::configmap(name, &[("v", value)]);
    let attempts = Cell::new(0u32);
    retry(WRITE_LIMIT, Duration::from_millis(200), || {
        attempts.set(attempts.get() + 1);
        let retried = attempts.get() > 1;
        let (path, body) = (&path, &body);
        async move {
            let reply = client.post(path, body).await?;
            match reply.status {
                StatusCode::CREATED | StatusCode::OK => Ok(()),
                StatusCode::CONFLICT if retried => Ok(()),
                status => Err(HarnessError::UnexpectedStatus {
                    what: format!("create {name}"),
                    status,
                    body: reply.text(),
                }),
            }
        }
    })
    .await
    .unwrap_or_else(|e| panic!("create {name} through {}: {e}", client.base()));
}

// R-HA-011, R-HA-003, R-HA-004
#[tokio::test]
async fn writes_continue_through_the_survivors_after_the_leader_is_killed() {
    let cluster = DevCluster::start(DevOptions::default()).await.unwrap();
    let leader = cluster.wait_leader(Duration::from_secs(10)).await;
    let victim = match leader {
        Some(leader) => {
            eprintln!("killing the leader, node-{leader}");
            leader
        }
        None => {
            eprintln!("NOTICE: the replica logs do not name the leader; killing node-1 instead");
            1
        }
    };
    let survivors: Vec<usize> = (1..=3).filter(|&i| i != victim).collect();
    let mut acknowledged = Vec::new();

    {
        // Before the crash: writes through every replica.
        for i in 0..9usize {
            let name = format!("before-{i}");
            let client = cluster.client(i % 3 + 1).unwrap();
            create_until_acknowledged(client, &name, &name).await;
            acknowledged.push(name);
        }
    }

    {
        cluster.kill_replica(victim).unwrap();
        // After the crash: writes alternate between the two survivors.
        for i in 0..12usize {
            let name = format!("after-{i}");
            let client = cluster.client(survivors[i % 2]).unwrap();
            create_until_acknowledged(client, &name, &name).await;
            acknowledged.push(name);
        }
        if leader.is_some() {
            let successor = cluster.wait_leader(Duration::from_secs(10)).await;
            assert!(
                successor.is_some_and(|s| survivors.contains(&s)),
                "a survivor leads after the crash, not {successor:?}"
            );
        }
    }

    {
        // Every acknowledged write is there, read with a quorum read on each survivor.
        for &replica in &survivors {
            let client = cluster.client(replica).unwrap();
            for name in &acknowledged {
                let read = read_configmap(client, replica, name).await;
                assert_eq!(read["data"]["v"], name.as_str());
            }
            let list = client.get(&objects::configmaps_path()).await.unwrap();
            assert_eq!(list.status, StatusCode::OK);
            // The namespace's `kube-root-ca.crt` is its controller's, not a write.
            let items = (list.json("list").unwrap()["items"]
                .as_array()
                .unwrap()
                .iter())
            .filter(|item| item["metadata"]["name"] != "kube-root-ca.crt")
            .count();
            assert_eq!(
                items,
                acknowledged.len(),
                "node-{replica} lists every write once"
            );
        }
    }
}
