//! Every [`Identity`](super::Identity) pairing in the table is sound: both versions compile to
//! the same property tree, so rewriting `apiVersion` loses nothing (R-VER-070). Rows that
//! share storage without a conversion differ from their home, and enabling one by name is
//! refused at start-up.

use std::collections::HashSet;

use super::Conversion;
use crate::flavor::Flavor;
use crate::registry::RuntimeConfig;
use crate::registry::RuntimeConfigError;
use crate::registry::builtin::StorageHome;
use crate::registry::builtin::rows;
use crate::schema::Node;
use crate::schema::NodeId;
use crate::schema::Object;
use crate::schema::Schema;

/// Whether the trees below `a` in `x` and `b` in `y` have the same shape: the same property
/// names at every level, and the same kind of node everywhere. Recursive schemas end where a
/// pair repeats.
fn same_shape(
    x: &Schema,
    a: NodeId,
    y: &Schema,
    b: NodeId,
    seen: &mut HashSet<(NodeId, NodeId)>,
) -> Result<(), String> {
    if !seen.insert((a, b)) {
        return Ok(());
    }
    match (x.node(a), y.node(b)) {
        (Node::Object(oa), Node::Object(ob)) => {
            let names = |o: &Object| {
                let mut n: Vec<String> = o.properties.iter().map(|(k, _)| k.clone()).collect();
                n.sort();
                n
            };
            let (ka, kb) = (names(oa), names(ob));
            if ka != kb {
                return Err(format!("properties {ka:?} vs {kb:?}"));
            }
            for (name, ia) in &oa.properties {
                let (_, ib) = ob.property(name).ok_or_else(|| format!("{name} missing"))?;
                same_shape(x, *ia, y, ib, seen).map_err(|e| format!("{name}.{e}"))?;
            }
            Ok(())
        }
        (Node::Map(ia), Node::Map(ib)) | (Node::Array(ia), Node::Array(ib)) => {
            same_shape(x, *ia, y, *ib, seen)
        }
        (Node::Scalar(sa), Node::Scalar(sb)) if sa == sb => Ok(()),
        (Node::Any, Node::Any) => Ok(()),
        (na, nb) => Err(format!("{na:?} vs {nb:?}")),
    }
}

fn compare(x: &Schema, y: &Schema) -> Result<(), String> {
    same_shape(x, x.root(), y, y.root(), &mut HashSet::new())
}

/// Whether `c` is the identity. Asked of the conversion, not by address: the conversions
/// are zero-sized statics, which may share one address.
fn is_identity(c: &'static dyn Conversion) -> bool {
    c.is_identity()
}

// R-VER-070
#[test]
fn identity_pairs_have_the_same_schema_and_the_others_differ() {
    let mut identities = 0;
    let mut wrong = Vec::new();
    for row in rows() {
        let StorageHome::Shared(home) = row.storage else {
            continue;
        };
        let name = format!("{:?}/{}/{}", row.group, row.version, row.plural);
        let ours = (row.schema())().expect("compiles");
        let theirs = (home.schema)().expect("compiles");
        let same = compare(&ours, &theirs);
        match (home.conversion, same) {
            (Some(c), Ok(())) if is_identity(c) => identities += 1,
            (Some(c), Err(e)) if is_identity(c) => wrong.push(format!("{name} differs: {e}")),
            (Some(_), Ok(())) => wrong.push(format!("{name} needs no hand-written conversion")),
            (None, Ok(())) => wrong.push(format!("{name} could be served by Identity")),
            (_, Err(_)) => {}
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert!(identities > 0, "the table has identity pairs");
}

// The comparison fails on a missing or renamed field (it can fail).
#[test]
fn the_shape_comparison_sees_renamed_fields() {
    use k8s_openapi::api::core::v1::Event;
    use k8s_openapi::api::events::v1::Event as EventsEvent;
    let core = crate::schema::of::<Event>().expect("compiles");
    let events = crate::schema::of::<EventsEvent>().expect("compiles");
    assert_eq!(compare(&core, &core), Ok(()));
    let err = compare(&core, &events).expect_err("different");
    assert!(err.contains("involvedObject"), "{err}");
}

// A version that shares storage without a conversion cannot be served: naming it in
// `--runtime-config` stops start-up, naming it; broad levels leave it off.
#[test]
fn enabling_a_shared_row_without_conversion_is_refused() {
    let row = rows()
        .into_iter()
        .find(|r| matches!(r.storage, StorageHome::Shared(h) if h.conversion.is_none()))
        .expect("such a row exists");
    let flavor = Flavor::Kubernetes;
    let gvr = format!("{}/{}/{}", row.group.name(flavor), row.version, row.plural);
    let gv = format!("{}/{}", row.group.name(flavor), row.version);
    for key in [gvr.clone(), gv.clone()] {
        let err = RuntimeConfig::parse([key.as_str()], flavor).expect_err("refused");
        assert_eq!(err, RuntimeConfigError::NoConversion(gvr.clone()));
        assert!(err.to_string().contains(&gvr));
    }
    let off = format!("{gvr}=false");
    assert!(RuntimeConfig::parse([off.as_str()], flavor).is_ok());
    assert!(RuntimeConfig::parse(["api/all=true"], flavor).is_ok());
}
