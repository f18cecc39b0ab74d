//! The script of scenario `rolling_upgrade_three_replicas` (R-HA-015), run by
//! [`crate::scenario::mixed_faults`] under its full workload: every replica starts speaking
//! only peer protocol 1 (an older build, as configuration of the same code); all but the last
//! are crashed and restarted speaking the current protocol, one at a time; then, with the
//! versions mixed, the seeded fault mix of [`faults_script`] runs; then the last replica is
//! upgraded too. While any voter speaks 1 every replica must hold the effective version at 1;
//! once all are upgraded it must rise to the current protocol.

use std::time::Duration;

use apiary_raft::version::PROTOCOL_VERSION;
use apiary_raft::version::UNANNOUNCED_PROTOCOL_VERSION;
use rand::rngs::StdRng;

use crate::client::SimClient;
use crate::client::now;
use crate::fault::Faults;
use crate::fault::HostFault;
use crate::scenario::ScenarioError;
use crate::scenario::fault_script::faults_script;
use crate::scenario::phases::agreed_leader;
use crate::scenario::phases::stuck;
use crate::scenario::verdict::Isolation;

/// The protocol every replica speaks before its upgrade.
pub const OLD_PROTOCOL: u32 = UNANNOUNCED_PROTOCOL_VERSION;
/// How long the agreement on a leader after a restart may take.
const ELECTION_BOUND: Duration = Duration::from_secs(10);
/// How long a replica stays down while its software is replaced.
const DOWN: Duration = Duration::from_millis(800);
/// Longer than the leader takes to ask every voter what it speaks (two of its periods).
const SETTLE: Duration = Duration::from_secs(5);
/// How long the effective version may take to rise once every voter is upgraded.
const RISE_BOUND: Duration = Duration::from_secs(20);
const POLL: Duration = Duration::from_millis(200);

/// Upgrades `hosts` one by one around the seeded fault mix, checking the effective version;
/// returns the fault mix's isolations.
pub(crate) async fn upgrade_script(
    client: &SimClient,
    hosts: &[String],
    faults: &Faults,
    normal_latency: Duration,
    rng: StdRng,
    notes: &mut Vec<String>,
) -> Result<Vec<Isolation>, ScenarioError> {
    let Some((last, first)) = hosts.split_last() else {
        return Ok(Vec::new());
    };
    for host in first {
        upgrade(client, hosts, faults, host).await?;
    }
    tokio::time::sleep(SETTLE).await;
    effective_everywhere(
        client,
        hosts,
        OLD_PROTOCOL,
        "while a voter speaks the old protocol",
    )
    .await?;
    notes.push(format!(
        "{} of {} replicas upgraded: effective version {OLD_PROTOCOL} on every replica",
        first.len(),
        hosts.len()
    ));
    let isolations = faults_script(client, hosts, faults, normal_latency, rng, notes).await?;
    effective_everywhere(
        client,
        hosts,
        OLD_PROTOCOL,
        "after faults with mixed versions",
    )
    .await?;
    upgrade(client, hosts, faults, last).await?;
    let start = now();
    loop {
        match effective_everywhere(client, hosts, PROTOCOL_VERSION, "after the upgrade").await {
            Ok(()) => break,
            Err(error) if now().saturating_sub(start) > RISE_BOUND => {
                return Err(stuck(
                    "raising the effective version",
                    RISE_BOUND,
                    error.to_string(),
                ));
            }
            Err(_) => tokio::time::sleep(POLL).await,
        }
    }
    notes.push(format!(
        "every replica upgraded: effective version {PROTOCOL_VERSION} after {:?}",
        now().saturating_sub(start)
    ));
    Ok(isolations)
}

/// Replaces `host`'s software by the current build: crash, then restart speaking the current
/// protocol, then wait for an agreed leader.
async fn upgrade(
    client: &SimClient,
    hosts: &[String],
    faults: &Faults,
    host: &str,
) -> Result<(), ScenarioError> {
    tracing::info!(%host, "upgrading");
    faults.inject(HostFault::Crash(host.to_owned())).await;
    let newest = PROTOCOL_VERSION;
    let protocol = HostFault::Protocol {
        host: host.to_owned(),
        newest,
    };
    faults.inject(protocol).await;
    tokio::time::sleep(DOWN).await;
    faults.inject(HostFault::Restart(host.to_owned())).await;
    agreed_leader(client, hosts, None, ELECTION_BOUND).await?;
    Ok(())
}

/// Fails unless every replica that answers holds `expected` as the effective version.
async fn effective_everywhere(
    client: &SimClient,
    hosts: &[String],
    expected: u32,
    when: &str,
) -> Result<(), ScenarioError> {
    for host in hosts {
        if let Ok(status) = client.status(host).await
            && status.effective_version != expected
        {
            return Err(ScenarioError::EffectiveVersion(format!(
                "{when}: {host} holds {} instead of {expected}",
                status.effective_version
            )));
        }
    }
    Ok(())
}
