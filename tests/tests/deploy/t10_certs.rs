//! `apiary certs`: the files it writes for named hosts, their subject alternative names and
//! trust domains, private modes, the kubeconfig's contexts, the environment files, a second run
//! that adds a host without re-keying the others, and refused host lists.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use apiary_tests::binary::apiary_binary;
use apiary_tests::kubeconfig;
use rustls::RootCertStore;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::ServerCertVerifier;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::ServerName;
use rustls::pki_types::UnixTime;
use rustls::pki_types::pem::PemObject;
use rustls::server::WebPkiClientVerifier;
use x509_parser::prelude::FromDer;
use x509_parser::prelude::X509Certificate;

use crate::certs;
use crate::certs_ok;

const HOSTS: &str = "node-1=10.0.0.1,node-2=host2.example,node-3=fd00::3";

fn der(dir: &Path, file: &str) -> CertificateDer<'static> {
    CertificateDer::from_pem_file(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn roots(dir: &Path, ca: &str) -> Arc<RootCertStore> {
    let mut roots = RootCertStore::empty();
    roots.add(der(dir, ca)).expect("a CA certificate");
    Arc::new(roots)
}

/// Whether `leaf` is a valid server certificate for `name` under the CA `ca`.
fn serves(dir: &Path, ca: &str, leaf: &str, name: &str) -> bool {
    kubeconfig::install_crypto_provider();
    let verifier = WebPkiServerVerifier::builder(roots(dir, ca))
        .build()
        .expect("a verifier");
    verifier
        .verify_server_cert(
            &der(dir, leaf),
            &[],
            &ServerName::try_from(name.to_owned()).expect("a server name"),
            &[],
            UnixTime::now(),
        )
        .is_ok()
}

/// Whether `leaf` is a valid client certificate under the CA `ca`.
fn authenticates(dir: &Path, ca: &str, leaf: &str) -> bool {
    kubeconfig::install_crypto_provider();
    let verifier = WebPkiClientVerifier::builder(roots(dir, ca))
        .build()
        .expect("a verifier");
    verifier
        .verify_client_cert(&der(dir, leaf), &[], UnixTime::now())
        .is_ok()
}

fn env_file(dir: &Path, host: &str) -> BTreeMap<String, String> {
    fs::read_to_string(dir.join(format!("{host}.env")))
        .expect("the environment file")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

fn file_names(dir: &Path) -> BTreeSet<String> {
    fs::read_dir(dir)
        .expect("the directory")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

/// The contents of every certificate and key file in `dir`.
fn key_material(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    file_names(dir)
        .into_iter()
        .filter(|name| name.ends_with(".crt") || name.ends_with(".key"))
        .map(|name| {
            let bytes = fs::read(dir.join(&name)).expect("the file");
            (name, bytes)
        })
        .collect()
}

#[tokio::test]
async fn certs_for_named_hosts_chain_name_and_protect_as_a_cluster_needs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("pki");
    let dir_arg = dir.to_str().unwrap();
    certs_ok(&[
        "--dir",
        dir_arg,
        "--hosts",
        HOSTS,
        "--extra-sans",
        "lb.example",
    ]);

    let mut expected: BTreeSet<String> = [
        "ca.crt",
        "ca.key",
        "peer-ca.crt",
        "peer-ca.key",
        "admin.crt",
        "admin.key",
        "service-account.key",
        "kubeconfig",
    ]
    .map(str::to_owned)
    .into();
    for host in ["node-1", "node-2", "node-3"] {
        for suffix in [".crt", ".key", "-peer.crt", "-peer.key", ".env"] {
            expected.insert(format!("{host}{suffix}"));
        }
    }
    assert_eq!(file_names(&dir), expected);
    let mode = |name: &str| fs::metadata(dir.join(name)).unwrap().permissions().mode();
    assert_eq!(
        fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    for name in expected
        .iter()
        .filter(|n| n.ends_with(".key") || *n == "kubeconfig")
    {
        assert_eq!(mode(name) & 0o077, 0, "{name} is private");
    }

    // Serving certificates: the host's address, the extra names and loopback, under `ca` only.
    for name in ["host2.example", "lb.example", "localhost", "127.0.0.1"] {
        assert!(serves(&dir, "ca.crt", "node-2.crt", name), "{name}");
    }
    assert!(serves(&dir, "ca.crt", "node-1.crt", "10.0.0.1"));
    assert!(serves(&dir, "ca.crt", "node-3.crt", "fd00::3"));
    assert!(!serves(&dir, "ca.crt", "node-2.crt", "10.0.0.1"));
    assert!(!serves(&dir, "peer-ca.crt", "node-2.crt", "host2.example"));
    // Peer certificates: server and client under `peer-ca`, never an API client.
    assert!(serves(&dir, "peer-ca.crt", "node-1-peer.crt", "10.0.0.1"));
    assert!(!serves(
        &dir,
        "peer-ca.crt",
        "node-1-peer.crt",
        "lb.example"
    ));
    assert!(authenticates(&dir, "peer-ca.crt", "node-1-peer.crt"));
    assert!(!authenticates(&dir, "ca.crt", "node-1-peer.crt"));
    // The admin certificate: user admin in system:masters, an API client only.
    assert!(authenticates(&dir, "ca.crt", "admin.crt"));
    assert!(!authenticates(&dir, "peer-ca.crt", "admin.crt"));
    let admin = der(&dir, "admin.crt");
    let (_, admin) = X509Certificate::from_der(&admin).unwrap();
    let subject = |values: Vec<&str>| values.join(",");
    let cn = admin
        .subject()
        .iter_common_name()
        .map(|a| a.as_str().unwrap());
    let org = admin
        .subject()
        .iter_organization()
        .map(|a| a.as_str().unwrap());
    assert_eq!(subject(cn.collect()), "admin");
    assert_eq!(subject(org.collect()), "system:masters");

    // The kubeconfig, read the way kube-rs clients read it: one context per host.
    let path = dir.join("kubeconfig");
    for (context, server) in [
        ("node-1", "https://10.0.0.1:6443/"),
        ("node-2", "https://host2.example:6443/"),
        ("node-3", "https://[fd00::3]:6443/"),
    ] {
        let config = kubeconfig::kube_config(&path, context).await.unwrap();
        assert_eq!(config.cluster_url.to_string(), server);
    }
    let document: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    assert_eq!(document["current-context"], "node-1");

    // The environment files: one replica's flags each, the same cluster in all.
    let node3 = env_file(&dir, "node-3");
    assert_eq!(node3["APIARY_NAME"], "node-3");
    assert_eq!(node3["APIARY_LISTEN_API"], "[::]:6443");
    assert_eq!(node3["APIARY_TLS_CERT_FILE"], "/etc/apiary/pki/node-3.crt");
    let cluster = "node-1=https://10.0.0.1:7443,node-2=https://host2.example:7443,\
                   node-3=https://[fd00::3]:7443";
    assert_eq!(node3["APIARY_INITIAL_CLUSTER"], cluster);
    assert_eq!(
        env_file(&dir, "node-1")["APIARY_LISTEN_PEER"],
        "0.0.0.0:7443"
    );

    // Again with a fourth host: nothing is re-keyed, the new host joins the same trust.
    let before = key_material(&dir);
    certs_ok(&[
        "--dir",
        dir_arg,
        "--hosts",
        &format!("{HOSTS},node-4=10.0.0.4"),
        "--initial-cluster-state",
        "existing",
    ]);
    let after = key_material(&dir);
    for (name, bytes) in &before {
        assert_eq!(&after[name], bytes, "{name} kept");
    }
    assert_eq!(after.len(), before.len() + 4);
    assert!(serves(&dir, "ca.crt", "node-4.crt", "10.0.0.4"));
    assert!(authenticates(&dir, "peer-ca.crt", "node-4-peer.crt"));
    let node4 = env_file(&dir, "node-4");
    assert_eq!(node4["APIARY_INITIAL_CLUSTER_STATE"], "existing");
    assert!(node4["APIARY_INITIAL_CLUSTER"].ends_with(",node-4=https://10.0.0.4:7443"));
    let config = kubeconfig::kube_config(&path, "node-4").await.unwrap();
    assert_eq!(config.cluster_url.to_string(), "https://10.0.0.4:6443/");
}

#[test]
fn host_lists_that_describe_no_cluster_are_refused_before_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("pki");
    let dir_arg = dir.to_str().unwrap();
    for (hosts, extra, message) in [
        ("node-1=10.0.0.1,node-1=10.0.0.2", None, "named twice"),
        (
            "node-1=10.0.0.1",
            Some(["--host-dir", "/etc/my apiary"]),
            "are not allowed",
        ),
        ("Node-1=10.0.0.1", None, "DNS label"),
        (
            "node-1=bad host",
            None,
            "neither an IP address nor a DNS name",
        ),
        ("admin=10.0.0.1", None, "reserved"),
        (
            "node-1=10.0.0.1",
            Some(["--kubeconfig-servers", "node-2=https://127.0.0.1:1"]),
            "not in --hosts",
        ),
    ] {
        let mut args = vec!["--dir", dir_arg, "--hosts", hosts];
        if let Some(extra) = extra {
            args.extend(extra);
        }
        let output = certs(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{hosts}");
        assert!(stderr.contains(message), "{hosts}: {stderr}");
        assert!(!dir.exists(), "{hosts}: nothing written");
    }
}

#[test]
fn another_commands_ca_is_not_issued_under() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap();
    let binary = apiary_binary().unwrap();
    let dev = Command::new(binary)
        .args(["dev", "--init-only", "--nodes", "1", "--dir", dir])
        .output()
        .unwrap();
    assert!(dev.status.success(), "{dev:?}");
    let before = key_material(tmp.path());
    let output = certs(&["--dir", dir, "--hosts", "node-2=10.0.0.2"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("is not this command's CA"), "{stderr}");
    assert_eq!(key_material(tmp.path()), before, "nothing issued");
}
