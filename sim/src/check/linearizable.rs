//! Guarantee `linearizable` (R-HA-004, R-HA-014): per key, the writes and quorum reads the
//! clients saw fit one order in which each takes effect atomically between its sending and its
//! answer, and in which a register explains every answer: a create succeeds only on an absent
//! key, an update replaces a present value (a conditional one only when the value's revision is
//! the one it expects), a delete removes one, and a read returns the current
//! value (with its revision) or nothing. A write of unknown outcome may take effect at any time
//! after it was sent, or never; a rejected write and a failed read took no effect and promise
//! nothing, so they are left out.
//!
//! The search is the Wing & Gong / Lowe one porcupine uses: depth first over which pending
//! operation takes effect next, remembering (set of operations placed, register state) pairs
//! already explored. Keys are independent registers, so each key is searched alone. A search
//! that needs more than its budget of steps gives up: the key is counted as undecided, which is
//! not a violation.

use std::collections::HashSet;
use std::fmt;
use std::time::Duration;

use bytes::Bytes;

use crate::check::Violation;
use crate::history::History;
use crate::history::ReadOutcome;
use crate::history::ReadRecord;
use crate::history::ReadValue;
use crate::history::WriteOp;
use crate::history::WriteOutcome;
use crate::history::WriteRecord;

const GUARANTEE: &str = "linearizable";

/// Steps (operations tried at some point of a partial order) one key's search may take: ample for
/// the scenarios' few dozen operations a key, bounded for a pathological history.
const SEARCH_BUDGET: u64 = 200_000;

/// What the `linearizable` checker found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Linearizability {
    /// Keys checked (those with at least one operation that took or may have taken effect).
    pub keys: usize,
    /// Keys whose search exceeded its budget: neither proven nor refuted.
    pub undecided: Vec<String>,
    /// Keys whose history no order explains.
    pub violations: Vec<Violation>,
}

impl Linearizability {
    /// One line for a run's notes.
    pub fn note(&self) -> String {
        let mut note = format!(
            "linearizable: {} keys checked, {} violating",
            self.keys,
            self.violations.len()
        );
        if !self.undecided.is_empty() {
            note.push_str(&format!(
                ", {} undecided (search budget exceeded): {}",
                self.undecided.len(),
                self.undecided.join(", ")
            ));
        }
        note
    }
}

/// Checks every key of `history` with [`SEARCH_BUDGET`] steps each.
pub fn linearizable(history: &History) -> Linearizability {
    linearizable_within(history, SEARCH_BUDGET)
}

/// Checks every key of `history` with `budget` steps each.
fn linearizable_within(history: &History, budget: u64) -> Linearizability {
    let mut found = Linearizability::default();
    for key in history.keys() {
        let ops = operations(history, &key);
        if ops.is_empty() {
            continue;
        }
        found.keys += 1;
        match search(&ops, budget) {
            Verdict::Linearizable => {}
            Verdict::Undecided => found.undecided.push(key),
            Verdict::Violated(stuck) => found.violations.push(Violation {
                guarantee: GUARANTEE,
                detail: describe(&key, &ops, &stuck),
            }),
        }
    }
    found
}

/// What a register's value is: the bytes, and the revision when some answer told it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Value {
    bytes: Bytes,
    revision: Option<u64>,
}

/// The register: `None` while the key is absent.
type State = Option<Value>;

/// One operation on a key, as the search sees it.
#[derive(Debug)]
struct Op<'a> {
    sent_at: Duration,
    /// `None`: unknown outcome, so no deadline for taking effect.
    done_at: Option<Duration>,
    kind: Kind<'a>,
}

#[derive(Debug)]
enum Kind<'a> {
    Write(&'a WriteRecord),
    Read(&'a ReadRecord, Option<&'a ReadValue>),
}

impl Op<'_> {
    /// The register after this operation took effect on `state`, or `None` when it cannot take
    /// effect there with the answer the client saw.
    fn apply(&self, state: &State) -> Option<State> {
        match self.kind {
            Kind::Read(_, served) => read(state, served),
            Kind::Write(write) => {
                let written = Value {
                    bytes: write.value.clone(),
                    revision: write.acked_revision(),
                };
                let effect = match (write.op, state) {
                    (WriteOp::Create, None) => Some(Some(written)),
                    (WriteOp::Update, Some(_)) => Some(Some(written)),
                    // A value of unknown revision was written by a write of unknown outcome,
                    // whose revision the writer cannot have expected unless a read told it:
                    // allowed, so that no correct history is refused.
                    (WriteOp::UpdateIf { expected }, Some(current))
                        if current.revision.is_none_or(|r| r == expected) =>
                    {
                        Some(Some(written))
                    }
                    (WriteOp::Delete, Some(_)) => Some(None),
                    (WriteOp::Create, Some(_))
                    | (WriteOp::UpdateIf { .. }, _)
                    | (WriteOp::Update | WriteOp::Delete, None) => None,
                };
                // An unknown write whose precondition fails was refused: no effect, no answer
                // to contradict.
                match (effect, &write.outcome) {
                    (Some(next), _) => Some(next),
                    (None, WriteOutcome::Unknown { .. }) => Some(state.clone()),
                    (None, _) => None,
                }
            }
        }
    }
}

impl fmt::Display for Op<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            Kind::Write(write) => write!(f, "{write}"),
            Kind::Read(read, served) => write!(
                f,
                "read via {} at {:?}..{:?}: served {}",
                read.replica,
                read.sent_at,
                read.done_at,
                show_read(served)
            ),
        }
    }
}

fn show_read(served: Option<&ReadValue>) -> String {
    match served {
        Some(value) => format!(
            "{:?} at revision {}",
            String::from_utf8_lossy(&value.value),
            value.mod_revision
        ),
        None => "nothing (404)".to_owned(),
    }
}

fn show_state(state: &State) -> String {
    match state {
        Some(value) => match value.revision {
            Some(revision) => format!(
                "{:?} at revision {revision}",
                String::from_utf8_lossy(&value.bytes)
            ),
            None => format!(
                "{:?} at an unknown revision",
                String::from_utf8_lossy(&value.bytes)
            ),
        },
        None => "absent".to_owned(),
    }
}

/// A read of `state` that served `served`: the register afterwards (a served revision pins an
/// unknown one), or `None` if `state` could not have been served so.
fn read(state: &State, served: Option<&ReadValue>) -> Option<State> {
    match (state, served) {
        (None, None) => Some(None),
        (Some(value), Some(served))
            if value.bytes == served.value
                && value.revision.is_none_or(|r| r == served.mod_revision) =>
        {
            Some(Some(Value {
                bytes: value.bytes.clone(),
                revision: Some(served.mod_revision),
            }))
        }
        _ => None,
    }
}

/// The operations on `key` that took or may have taken effect, in sending order.
fn operations<'a>(history: &'a History, key: &str) -> Vec<Op<'a>> {
    let writes = history
        .writes
        .iter()
        .filter(|w| w.key == key)
        .filter_map(|write| {
            let done_at = match write.outcome {
                WriteOutcome::Acked { .. } => Some(write.done_at),
                WriteOutcome::Unknown { .. } => None,
                WriteOutcome::Rejected { .. } => return None,
            };
            Some(Op {
                sent_at: write.sent_at,
                done_at,
                kind: Kind::Write(write),
            })
        });
    let reads = history
        .quorum_reads()
        .filter(|r| r.key == key)
        .filter_map(|read| match &read.outcome {
            ReadOutcome::Served(served) => Some(Op {
                sent_at: read.sent_at,
                done_at: Some(read.done_at),
                kind: Kind::Read(read, served.as_ref()),
            }),
            ReadOutcome::Failed { .. } => None,
        });
    let mut ops: Vec<Op<'a>> = writes.chain(reads).collect();
    ops.sort_by_key(|op| op.sent_at);
    ops
}

/// The deepest point a failed search reached: the operations placed, in order, the register
/// then, and the operations that could have come next but did not fit.
#[derive(Debug, Default)]
struct Stuck {
    placed: Vec<usize>,
    state: State,
    candidates: Vec<usize>,
}

enum Verdict {
    Linearizable,
    Undecided,
    Violated(Stuck),
}

/// One point of the depth-first search: the operations placed so far (in order), the register,
/// the candidates for the next place and how many of them were tried.
struct Frame {
    placed: Vec<usize>,
    done: Vec<bool>,
    state: State,
    candidates: Vec<usize>,
    tried: usize,
}

impl Frame {
    fn new(ops: &[Op<'_>], placed: Vec<usize>, done: Vec<bool>, state: State) -> Self {
        let candidates = candidates(ops, &done);
        Self {
            placed,
            done,
            state,
            candidates,
            tried: 0,
        }
    }
}

/// The pending operations that may take effect next: those sent before every pending one was
/// answered (one answered before another was sent must take effect first). Ties in virtual time
/// count as concurrent.
fn candidates(ops: &[Op<'_>], done: &[bool]) -> Vec<usize> {
    let pending = || (0..ops.len()).filter(|&i| !done[i]);
    let deadline = pending().filter_map(|i| ops[i].done_at).min();
    pending()
        .filter(|&i| deadline.is_none_or(|d| ops[i].sent_at <= d))
        .collect()
}

/// Whether everything still pending is a write of unknown outcome: those can all take effect
/// after the last answer (or be refused), which nothing observed contradicts.
fn only_unknown_left(ops: &[Op<'_>], done: &[bool]) -> bool {
    (0..ops.len()).all(|i| done[i] || ops[i].done_at.is_none())
}

fn search(ops: &[Op<'_>], budget: u64) -> Verdict {
    let mut seen: HashSet<(Vec<bool>, State)> = HashSet::new();
    let mut deepest: Option<Stuck> = None;
    let mut stack = vec![Frame::new(ops, Vec::new(), vec![false; ops.len()], None)];
    let mut steps = 0u64;
    while let Some(frame) = stack.last_mut() {
        if only_unknown_left(ops, &frame.done) {
            return Verdict::Linearizable;
        }
        let Some(&next) = frame.candidates.get(frame.tried) else {
            if deepest
                .as_ref()
                .is_none_or(|d| frame.placed.len() > d.placed.len())
            {
                deepest = Some(Stuck {
                    placed: frame.placed.clone(),
                    state: frame.state.clone(),
                    candidates: frame.candidates.clone(),
                });
            }
            stack.pop();
            continue;
        };
        frame.tried += 1;
        steps += 1;
        if steps > budget {
            return Verdict::Undecided;
        }
        let Some(state) = ops[next].apply(&frame.state) else {
            continue;
        };
        let mut done = frame.done.clone();
        done[next] = true;
        if !seen.insert((done.clone(), state.clone())) {
            continue;
        }
        let mut placed = frame.placed.clone();
        placed.push(next);
        stack.push(Frame::new(ops, placed, done, state));
    }
    Verdict::Violated(deepest.unwrap_or_default())
}

/// How many of the placed operations a violation shows: the ones leading to where it got stuck.
const SHOWN_PLACED: usize = 4;

fn describe(key: &str, ops: &[Op<'_>], stuck: &Stuck) -> String {
    let shown = stuck.placed.len().saturating_sub(SHOWN_PLACED);
    let placed: Vec<String> = stuck.placed[shown..]
        .iter()
        .map(|&i| ops[i].to_string())
        .collect();
    let blocked: Vec<String> = stuck
        .candidates
        .iter()
        .map(|&i| ops[i].to_string())
        .collect();
    format!(
        "no order of the {} operations on {key} fits a register; the longest consistent \
         prefix places {} of them, ending [{}], with the key {}; none of the operations that \
         could come next fits: [{}]",
        ops.len(),
        stuck.placed.len(),
        placed.join("; "),
        show_state(&stuck.state),
        blocked.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::ReadAt;

    fn at(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    fn write(op: WriteOp, value: &str, span: (u64, u64), outcome: WriteOutcome) -> WriteRecord {
        WriteRecord {
            op,
            key: "k".to_owned(),
            value: Bytes::copy_from_slice(value.as_bytes()),
            replica: "replica-1".to_owned(),
            sent_at: at(span.0),
            done_at: at(span.1),
            outcome,
        }
    }

    fn acked(revision: Option<u64>) -> WriteOutcome {
        WriteOutcome::Acked { revision }
    }

    fn unknown() -> WriteOutcome {
        WriteOutcome::Unknown {
            reason: "timed out".to_owned(),
        }
    }

    fn read(served: Option<(&str, u64)>, span: (u64, u64)) -> ReadRecord {
        ReadRecord {
            key: "k".to_owned(),
            at: ReadAt::Quorum,
            replica: "replica-2".to_owned(),
            sent_at: at(span.0),
            done_at: at(span.1),
            outcome: ReadOutcome::Served(served.map(|(value, mod_revision)| ReadValue {
                value: Bytes::copy_from_slice(value.as_bytes()),
                mod_revision,
            })),
        }
    }

    fn history(writes: Vec<WriteRecord>, reads: Vec<ReadRecord>) -> History {
        History {
            writes,
            reads,
            ..History::default()
        }
    }

    fn violations(h: &History) -> Vec<Violation> {
        let found = linearizable(h);
        assert_eq!(found.undecided, Vec::<String>::new());
        found.violations
    }

    // R-HA-004, R-HA-014: a sequential create, update, delete with reads after each passes.
    #[test]
    fn holds_for_a_sequential_history() {
        let h = history(
            vec![
                write(WriteOp::Create, "a", (0, 10), acked(Some(5))),
                write(WriteOp::Update, "b", (20, 30), acked(Some(7))),
                write(WriteOp::Delete, "", (40, 50), acked(None)),
            ],
            vec![
                read(Some(("a", 5)), (11, 12)),
                read(Some(("b", 7)), (31, 32)),
                read(None, (51, 52)),
            ],
        );
        assert_eq!(violations(&h), vec![]);
        assert_eq!(linearizable(&h).keys, 1);
    }

    // R-HA-004: a read overlapping an update may see the value before it or after it.
    #[test]
    fn holds_for_a_read_concurrent_with_a_write_either_way() {
        let create = || write(WriteOp::Create, "a", (0, 10), acked(Some(5)));
        let update = || write(WriteOp::Update, "b", (20, 40), acked(Some(7)));
        let old = history(
            vec![create(), update()],
            vec![read(Some(("a", 5)), (25, 35))],
        );
        assert_eq!(violations(&old), vec![]);
        let new = history(
            vec![create(), update()],
            vec![read(Some(("b", 7)), (25, 35))],
        );
        assert_eq!(violations(&new), vec![]);
    }

    // R-HA-004, R-HA-005: a read sent after an update was acknowledged that returns the value
    // before it is stale.
    #[test]
    fn reports_a_stale_read() {
        let h = history(
            vec![
                write(WriteOp::Create, "a", (0, 10), acked(Some(5))),
                write(WriteOp::Update, "b", (20, 30), acked(Some(7))),
            ],
            vec![read(Some(("a", 5)), (40, 45))],
        );
        let found = violations(&h);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].detail.contains("on k fits"), "{}", found[0].detail);
        assert!(found[0].detail.contains("\"a\" at revision 5"));
    }

    // R-HA-014: an acknowledged create that later reads miss, with no delete, was lost.
    #[test]
    fn reports_a_lost_write() {
        let h = history(
            vec![write(WriteOp::Create, "a", (0, 10), acked(Some(5)))],
            vec![read(Some(("a", 5)), (15, 20)), read(None, (30, 35))],
        );
        let found = violations(&h);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].detail.contains("nothing (404)"),
            "{}",
            found[0].detail
        );
    }

    // R-HA-014: a read of a value no write wrote, or of a written value at another revision.
    #[test]
    fn reports_a_read_of_a_value_never_written() {
        let create = || write(WriteOp::Create, "a", (0, 10), acked(Some(5)));
        let ghost = history(vec![create()], vec![read(Some(("z", 5)), (15, 20))]);
        assert_eq!(violations(&ghost).len(), 1);
        let moved = history(vec![create()], vec![read(Some(("a", 6)), (15, 20))]);
        assert_eq!(violations(&moved).len(), 1);
    }

    // R-HA-014: a write of unknown outcome may take effect late or never: reads before and
    // after it may both miss it, or a later one may see it; but once seen, it cannot vanish.
    #[test]
    fn unknown_writes_take_effect_late_or_never_but_not_twice() {
        let create = || write(WriteOp::Create, "a", (0, 10), unknown());
        let never = history(
            vec![create()],
            vec![read(None, (15, 20)), read(None, (30, 35))],
        );
        assert_eq!(violations(&never), vec![]);
        let late = history(
            vec![create()],
            vec![read(None, (15, 20)), read(Some(("a", 5)), (30, 35))],
        );
        assert_eq!(violations(&late), vec![]);
        let vanished = history(
            vec![create()],
            vec![read(Some(("a", 5)), (15, 20)), read(None, (30, 35))],
        );
        assert_eq!(violations(&vanished).len(), 1);
    }

    // R-HA-014: an acknowledged create on a key that another acknowledged create made
    // present, with no delete between, cannot be ordered.
    #[test]
    fn reports_an_acknowledged_create_of_a_present_key() {
        let h = history(
            vec![
                write(WriteOp::Create, "a", (0, 10), acked(Some(5))),
                write(WriteOp::Create, "b", (20, 30), acked(Some(7))),
            ],
            vec![],
        );
        assert_eq!(violations(&h).len(), 1);
    }

    // R-HA-004, R-HA-014: a conditional update succeeds only on the revision it expects; a
    // rejected one (409) is left out.
    #[test]
    fn conditional_updates_need_the_expected_revision() {
        let create = || write(WriteOp::Create, "a", (0, 10), acked(Some(5)));
        let update_if =
            |expected, outcome| write(WriteOp::UpdateIf { expected }, "b", (20, 30), outcome);
        let fits = history(
            vec![create(), update_if(5, acked(Some(7)))],
            vec![read(Some(("b", 7)), (40, 45))],
        );
        assert_eq!(violations(&fits), vec![]);
        let refused = history(
            vec![
                create(),
                update_if(
                    4,
                    WriteOutcome::Rejected {
                        status: 409,
                        reason: "Conflict".to_owned(),
                    },
                ),
            ],
            vec![read(Some(("a", 5)), (40, 45))],
        );
        assert_eq!(violations(&refused), vec![]);
        let stale = history(vec![create(), update_if(4, acked(Some(7)))], vec![]);
        assert_eq!(violations(&stale).len(), 1);
    }

    // A search past its budget is counted as undecided, not reported as a violation.
    #[test]
    fn a_search_past_its_budget_is_undecided() {
        let h = history(
            vec![write(WriteOp::Create, "a", (0, 10), acked(Some(5)))],
            vec![read(Some(("a", 5)), (15, 20))],
        );
        let found = linearizable_within(&h, 1);
        assert_eq!(found.violations, vec![]);
        assert_eq!(found.undecided, vec!["k".to_owned()]);
        assert!(
            found
                .note()
                .contains("1 undecided (search budget exceeded): k")
        );
    }
}
