//! `deploy/systemd/apiary.service` and its example environment file: the unit's settings, and
//! its `ExecStart` line, with the variables of the environment files `apiary certs` writes (the
//! example's variables, pointed at loopback ports and temporary directories), starting a
//! 3-replica cluster.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use apiary_tests::ports;

use crate::certs_ok;
use crate::read_deploy_file;
use crate::replicas::ReplicaCommand;
use crate::replicas::Replicas;

/// The `[Service]` settings of a unit file: `Key=value` lines after `[Service]`, continuation
/// lines (ending in `\`) joined, comments skipped; a repeated key keeps every value.
fn service_settings(unit: &str) -> BTreeMap<String, Vec<String>> {
    let mut settings: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut section = String::new();
    let mut pending = String::new();
    for line in unit.lines() {
        let line = line.trim();
        if pending.is_empty() && (line.is_empty() || line.starts_with('#')) {
            continue;
        }
        if let Some(continued) = line.strip_suffix('\\') {
            pending.push_str(continued);
            pending.push(' ');
            continue;
        }
        let whole = std::mem::take(&mut pending) + line;
        if whole.starts_with('[') {
            section = whole;
        } else if section == "[Service]" {
            let (key, value) = whole.split_once('=').expect("Key=value");
            settings
                .entry(key.to_owned())
                .or_default()
                .push(value.to_owned());
        }
    }
    settings
}

/// The variables of an environment file (`KEY=value` lines; no quoting is used in ours).
fn env_vars(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (key, value) = line.split_once('=').expect("KEY=value");
            assert!(!value.contains(['"', '\'', '\\']), "{line}: no quoting");
            (key.to_owned(), value.to_owned())
        })
        .collect()
}

/// An `ExecStart` command line after systemd's substitution of `vars`: `${NAME}` is replaced
/// inside a word, a word that is exactly `$NAME` becomes the value's whitespace-separated words
/// (none for an empty value). Every variable used must be defined.
fn exec_argv(exec_start: &str, vars: &BTreeMap<String, String>) -> Vec<String> {
    assert!(
        !exec_start.contains(['"', '\'']),
        "ExecStart uses no quoting"
    );
    let mut argv = Vec::new();
    for word in exec_start.split_whitespace() {
        if let Some(name) = word.strip_prefix('$').filter(|n| !n.starts_with('{')) {
            let value = vars
                .get(name)
                .unwrap_or_else(|| panic!("${name} undefined"));
            argv.extend(value.split_whitespace().map(str::to_owned));
            continue;
        }
        let mut out = String::new();
        let mut rest = word;
        while let Some(start) = rest.find("${") {
            let end = rest[start..].find('}').expect("closing brace") + start;
            let name = &rest[start + 2..end];
            out.push_str(&rest[..start]);
            out.push_str(
                vars.get(name)
                    .unwrap_or_else(|| panic!("${{{name}}} undefined")),
            );
            rest = &rest[end + 1..];
        }
        out.push_str(rest);
        argv.push(out);
    }
    argv
}

/// The variable names an `ExecStart` line uses.
fn used_vars(exec_start: &str) -> BTreeSet<String> {
    exec_start
        .split('$')
        .skip(1)
        .map(|after| {
            after
                .trim_start_matches('{')
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

// The unit restarts a failed replica, stops it with SIGTERM with time for the hand-over, and
// runs it unprivileged and sandboxed.
#[test]
fn the_unit_supervises_and_confines_one_replica() {
    let settings = service_settings(&read_deploy_file("systemd/apiary.service"));
    let one = |key: &str| -> &str {
        let values = settings.get(key).unwrap_or_else(|| panic!("{key} missing"));
        assert_eq!(values.len(), 1, "{key}");
        &values[0]
    };
    assert_eq!(one("EnvironmentFile"), "/etc/apiary/apiary.env");
    assert!(one("ExecStart").starts_with("/usr/local/bin/apiary serve "));
    assert_eq!(one("Restart"), "on-failure");
    assert_eq!(one("KillSignal"), "SIGTERM");
    let stop = one("TimeoutStopSec");
    let seconds: u64 = stop.trim_end_matches('s').parse().expect("seconds");
    assert!(seconds >= 30, "TimeoutStopSec={stop}");
    assert!(one("LimitNOFILE").parse::<u64>().expect("a number") >= 16_384);
    for (key, value) in [
        ("NoNewPrivileges", "yes"),
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
        ("CapabilityBoundingSet", ""),
        ("AmbientCapabilities", ""),
        ("User", "apiary"),
        ("ReadWritePaths", "/var/lib/apiary"),
    ] {
        assert_eq!(one(key), value, "{key}");
    }
    // The example's data directory is the one place the replica may write.
    let example = env_vars(&read_deploy_file("systemd/apiary.env"));
    assert!(example["APIARY_DATA_DIR"].starts_with(one("ReadWritePaths")));
}

// R-HA-012: `apiary certs` writes one environment file per host with exactly the example's
// variables, every one of them used by the unit; the unit's ExecStart line with those files
// (on loopback ports and in temporary directories) starts a working 3-replica cluster.
#[tokio::test]
async fn the_units_exec_start_runs_a_three_replica_cluster() {
    let settings = service_settings(&read_deploy_file("systemd/apiary.service"));
    let exec_start = &settings["ExecStart"][0];
    let example = env_vars(&read_deploy_file("systemd/apiary.env"));
    let example_keys: BTreeSet<String> = example.keys().cloned().collect();
    assert_eq!(used_vars(exec_start), example_keys);

    let dir = tempfile::tempdir().unwrap();
    let pki = dir.path().join("pki");
    let base = ports::free_base_port(&ports::dev_offsets(3)).unwrap();
    let names = ["node-1", "node-2", "node-3"];
    let api = |i: usize| base + u16::try_from(i).unwrap();
    let peer = |i: usize| base + 1000 + u16::try_from(i).unwrap();
    let hosts = names.map(|n| format!("{n}=127.0.0.1")).join(",");
    let servers: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| format!("{n}=https://127.0.0.1:{}", api(i)))
        .collect();
    let pki_str = pki.to_str().unwrap();
    certs_ok(&[
        "--dir",
        pki_str,
        "--host-dir",
        pki_str,
        "--hosts",
        &hosts,
        "--kubeconfig-servers",
        &servers.join(","),
    ]);

    let initial_cluster: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| format!("{n}=https://127.0.0.1:{}", peer(i)))
        .collect();
    let commands = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let mut vars =
                env_vars(&std::fs::read_to_string(pki.join(format!("{name}.env"))).unwrap());
            let keys: BTreeSet<String> = vars.keys().cloned().collect();
            assert_eq!(keys, example_keys, "{name}.env and the example");
            assert_eq!(vars["APIARY_NAME"], *name);
            assert_eq!(vars["APIARY_LISTEN_API"], "0.0.0.0:6443");
            assert_eq!(
                vars["APIARY_INITIAL_CLUSTER"],
                names
                    .map(|n| format!("{n}=https://127.0.0.1:7443"))
                    .join(",")
            );
            // One host per replica in production; here all share loopback and one disk.
            let data_dir = dir.path().join(name);
            vars.insert("APIARY_DATA_DIR".into(), data_dir.display().to_string());
            vars.insert("APIARY_LISTEN_API".into(), format!("127.0.0.1:{}", api(i)));
            vars.insert(
                "APIARY_LISTEN_PEER".into(),
                format!("127.0.0.1:{}", peer(i)),
            );
            vars.insert("APIARY_INITIAL_CLUSTER".into(), initial_cluster.join(","));
            // Two extra flags: `$APIARY_EXTRA_ARGS` splits into separate arguments.
            vars.insert(
                "APIARY_EXTRA_ARGS".into(),
                "--shutdown-send-retry-after --livez-grace-period=5s".into(),
            );
            let argv = exec_argv(exec_start, &vars);
            assert_eq!(
                argv.last().map(String::as_str),
                Some("--livez-grace-period=5s")
            );
            ReplicaCommand {
                name: (*name).to_owned(),
                argv,
            }
        })
        .collect();
    let replicas = Replicas::start(commands, dir.path());
    replicas.smoke(&pki.join("kubeconfig")).await;
    kubectl_lists_namespaces(&pki.join("kubeconfig")).await;
}

/// The README's last step ("Three machines"): kubectl, with the kubeconfig `apiary certs`
/// wrote, lists the namespaces through the second replica. Skipped without kubectl.
async fn kubectl_lists_namespaces(kubeconfig: &Path) {
    let found = std::process::Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("NOTICE: kubectl is not on PATH; skipping its part of the test");
        return;
    }
    let run = tokio::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["--context", "node-2", "--request-timeout=20s"])
        .args(["get", "namespaces", "-o", "name"])
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("kubectl ends within 30 s")
        .expect("kubectl runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.lines().any(|l| l == "namespace/default"),
        "kubectl get namespaces: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

// The ExecStart substitution the tests apply is systemd's: `${X}` inside a word, `$X` split
// into words, an empty `$X` dropped.
#[test]
fn exec_start_substitution_follows_systemd() {
    let vars: BTreeMap<String, String> = [
        ("A".to_owned(), "one".to_owned()),
        ("B".to_owned(), "x y".to_owned()),
        ("E".to_owned(), String::new()),
    ]
    .into();
    assert_eq!(
        exec_argv("/bin/p --a=${A} $B $E --c=${A}${A}", &vars),
        ["/bin/p", "--a=one", "x", "y", "--c=oneone"]
    );
    assert_eq!(
        used_vars("/bin/p --a=${A} $B"),
        BTreeSet::from(["A".to_owned(), "B".to_owned()])
    );
}
