//! The hand-written protobuf of [`Command`] is byte for byte the one prost derived before the
//! transaction moved behind an `Arc`: logs, snapshots and peers of older replicas stay readable.

use std::sync::Arc;

use bytes::Bytes;
use prost::Message;

use super::*;

/// [`Command`] as it was declared before: prost's derive, the transaction held by value.
#[derive(Clone, PartialEq, prost::Message)]
struct DerivedCommand {
    #[prost(oneof = "DerivedKind", tags = "1, 2")]
    kind: Option<DerivedKind>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum DerivedKind {
    #[prost(message, tag = "1")]
    Txn(Txn),
    #[prost(message, tag = "2")]
    Compact(Compact),
}

/// A create's shape: compares, a put, reads on failure.
fn txn() -> Txn {
    Txn {
        compares: vec![
            Compare::mod_revision("/registry/namespaces/default", 7),
            Compare::exists("/registry/configmaps/default/a", false),
        ],
        success: vec![Op::put(
            "/registry/configmaps/default/a",
            Bytes::from(vec![b'x'; 1024]),
        )],
        failure: vec![
            Op::get("/registry/namespaces/default"),
            Op::get("/registry/configmaps/default/a"),
            Op::delete("/registry/configmaps/default/b"),
        ],
    }
}

fn derived(kind: Option<DerivedKind>) -> DerivedCommand {
    DerivedCommand { kind }
}

#[test]
fn a_command_encodes_as_the_derived_message_did() {
    let cases = [
        (Command::txn(txn()), derived(Some(DerivedKind::Txn(txn())))),
        (
            Command::txn(Txn::default()),
            derived(Some(DerivedKind::Txn(Txn::default()))),
        ),
        (
            Command::compact(5),
            derived(Some(DerivedKind::Compact(Compact { revision: 5 }))),
        ),
        (Command::default(), derived(None)),
    ];
    for (command, before) in cases {
        let bytes = command.encode_to_vec();
        assert_eq!(bytes, before.encode_to_vec(), "{command}");
        assert_eq!(command.encoded_len(), bytes.len(), "{command}");
    }
    // One fixed encoding, independent of either declaration: compact(5) is field 2, length 2,
    // holding field 1 = 5.
    assert_eq!(
        Command::compact(5).encode_to_vec(),
        [0x12, 0x02, 0x08, 0x05]
    );
}

#[test]
fn a_command_decodes_what_the_derived_message_encoded() {
    for before in [
        derived(Some(DerivedKind::Txn(txn()))),
        derived(Some(DerivedKind::Compact(Compact { revision: 9 }))),
        derived(None),
    ] {
        let command = Command::decode(before.encode_to_vec().as_slice()).expect("decodes");
        assert_eq!(
            DerivedCommand::decode(command.encode_to_vec().as_slice()).expect("decodes"),
            before
        );
    }
    let command = Command::decode(
        derived(Some(DerivedKind::Txn(txn())))
            .encode_to_vec()
            .as_slice(),
    )
    .expect("decodes");
    assert_eq!(command, Command::txn(txn()));
}

#[test]
fn decoding_merges_and_replaces_the_kind_as_the_derived_message_did() {
    let mut first = Txn::default();
    first.compares.push(Compare::exists("a", true));
    let mut second = Txn::default();
    second.success.push(Op::delete("b"));
    let streams = [
        // Two transactions in one stream merge into one.
        [
            derived(Some(DerivedKind::Txn(first.clone()))),
            derived(Some(DerivedKind::Txn(second.clone()))),
        ],
        // The last kind wins.
        [
            derived(Some(DerivedKind::Txn(first.clone()))),
            derived(Some(DerivedKind::Compact(Compact { revision: 3 }))),
        ],
        [
            derived(Some(DerivedKind::Compact(Compact { revision: 3 }))),
            derived(Some(DerivedKind::Txn(second.clone()))),
        ],
    ];
    for parts in streams {
        let mut bytes = parts[0].encode_to_vec();
        bytes.extend(parts[1].encode_to_vec());
        let expected = DerivedCommand::decode(bytes.as_slice()).expect("decodes");
        let command = Command::decode(bytes.as_slice()).expect("decodes");
        assert_eq!(command.encode_to_vec(), expected.encode_to_vec());
    }
    // An unknown field is skipped.
    let mut bytes = vec![0x18, 0x01];
    bytes.extend(Command::compact(4).encode_to_vec());
    assert_eq!(
        Command::decode(bytes.as_slice()).expect("decodes"),
        Command::compact(4)
    );
}

#[test]
fn a_clone_shares_the_transaction() {
    let command = Command::txn(txn());
    let copy = command.clone();
    match (&command.kind, &copy.kind) {
        (Some(command::Kind::Txn(a)), Some(command::Kind::Txn(b))) => {
            assert!(Arc::ptr_eq(a, b));
        }
        other => panic!("not transactions: {other:?}"),
    }
}
