//! The YAML side of the decoder: serde-saphyr's options, with its budgets on aliases, nodes
//! and scalar bytes kept and its nesting budget set to the shared [`MAX_NESTING_DEPTH`], and
//! its errors worded as Kubernetes words YAML errors (`yaml: line 3: ...`), without the
//! parser's hints to Rust callers (`use Option<String>`) or its debug output.

use std::borrow::Cow;

use serde_saphyr::Budget;
use serde_saphyr::DuplicateKeyPolicy;
use serde_saphyr::Error;
use serde_saphyr::MessageFormatter;
use serde_saphyr::Options;
use serde_saphyr::UserMessageFormatter;
use serde_saphyr::budget::BudgetBreach;

use super::excerpt::excerpt;
use crate::limits::MAX_NESTING_DEPTH;

/// What go-yaml answers when aliases expand a document too far (`yaml: document contains
/// excessive aliasing`); used for every alias budget.
const EXCESSIVE_ALIASING: &str = "document contains excessive aliasing";

/// The parser's budgets: serde-saphyr's defaults (at most 250,000 nodes, 1,000,000 events,
/// 50,000 aliases and anchors, 1,000,000 events replayed from aliases, 64 MiB of scalars),
/// with nesting allowed as deep as a JSON body may nest.
fn budget() -> Budget {
    let mut budget = Budget::default();
    budget.max_depth = MAX_NESTING_DEPTH;
    budget
}

/// The options the decoder parses YAML with: repeated keys are passed through (the decoder
/// reports them by line), errors carry no source snippet, and [`budget`] applies.
pub(super) fn options() -> Options {
    let mut options = Options::default();
    options.duplicate_keys = DuplicateKeyPolicy::PassThrough;
    options.with_snippet = false;
    options.budget = Some(budget());
    options
}

/// `err` as the text after `yaml: `: `line N: <what>` when the parser knows the line. The
/// text is an excerpt: a parser message quoting the body cannot make the answer grow.
pub(super) fn message(err: &Error) -> String {
    let mut inner = err;
    while let Error::AliasError { error, .. } | Error::WithSnippet { error, .. } = inner {
        inner = error;
    }
    let what = excerpt(&words(inner));
    match err.location().map(|l| l.line()) {
        Some(line) if line > 0 => format!("line {line}: {what}"),
        _ => what,
    }
}

/// What went wrong, in go-yaml's words where it has them.
fn words(err: &Error) -> Cow<'_, str> {
    match err {
        Error::Budget { breach, .. } => Cow::Owned(breached(breach)),
        Error::AliasReplayLimitExceeded { .. }
        | Error::AliasExpansionLimitExceeded { .. }
        | Error::AliasReplayStackDepthExceeded { .. }
        | Error::AliasReplayCounterOverflow { .. } => Cow::Borrowed(EXCESSIVE_ALIASING),
        // The decoder reads every key as a string; only a key can be null.
        Error::NullIntoString { .. } => Cow::Borrowed("unsupported map key: null"),
        Error::MultipleDocuments { .. } => {
            Cow::Borrowed("expected a single document in the stream, found more")
        }
        other => UserMessageFormatter.format_message(other),
    }
}

/// A budget breach worded by the budget it breached.
fn breached(breach: &BudgetBreach) -> String {
    let limits = budget();
    match breach {
        BudgetBreach::Depth { .. } => {
            format!("exceeded the maximum nesting depth of {MAX_NESTING_DEPTH}")
        }
        BudgetBreach::Aliases { .. }
        | BudgetBreach::Anchors { .. }
        | BudgetBreach::AliasAnchorRatio { .. }
        | BudgetBreach::RecordedAnchorEvents { .. }
        | BudgetBreach::RecordedAnchorBytes { .. } => EXCESSIVE_ALIASING.to_owned(),
        BudgetBreach::MergeKeys { .. } => format!(
            "document contains more than the maximum of {} merge keys",
            limits.max_merge_keys
        ),
        BudgetBreach::Nodes { .. } => format!(
            "document contains more than the maximum of {} nodes",
            limits.max_nodes
        ),
        BudgetBreach::Events { .. } => format!(
            "document contains more than the maximum of {} parser events",
            limits.max_events
        ),
        BudgetBreach::ScalarBytes { .. } => format!(
            "document contains more than the maximum of {} bytes of scalars",
            limits.max_total_scalar_bytes
        ),
        BudgetBreach::Documents { .. } => {
            "expected a single document in the stream, found more".to_owned()
        }
        _ => "document is too large or too complex".to_owned(),
    }
}
